"""``PathGraph.add_egress`` answers the connection it records: read off its own hops when
they are the connection's only ones, else asked of ``answer``. Either way the answer is
``answer``'s, whatever was recorded before for the same origin, protocol and port (other
destinations, the same hop again, hops of other shapes), with or without a Service hop,
allowing or blocking on either leg."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.analysis.reachability.answers import Evidence, Place
from hcpscan.analysis.reachability.paths import Hop, PathGraph

NODES = ["ns/a[Deployment]", "ns/b[Deployment]", "dns", "kas", "svc dns", "svc kas"]
EVIDENCE = st.lists(st.builds(Evidence, st.sampled_from(["network-policy", "egress-firewall"]),
                              st.booleans(), st.sampled_from(["allowed by x", "isolated by y"]),
                              st.sampled_from([Place(), Place("np.yaml", 4)])), max_size=2)
THROUGH = st.none() | st.builds(lambda target, allows: Hop("", target, "service", allows,
                                                              f"Service {target}", "s.yaml", 2),
                                st.sampled_from(NODES), st.booleans())
EGRESS = st.tuples(st.just("egress"), st.sampled_from(NODES), st.sampled_from(NODES),
                   st.sampled_from(["UDP", "TCP"]), st.sampled_from([53, 5353]), st.booleans(),
                   EVIDENCE, st.sampled_from(["", "egress isolated by ns/p"]), THROUGH)
RECORD = st.tuples(st.just("record"), st.sampled_from(NODES), st.sampled_from(NODES),
                   st.sampled_from(NODES), st.sampled_from(["UDP", "TCP"]),
                   st.sampled_from([53, 5353]), st.booleans())


@settings(max_examples=800, deadline=None)
@given(st.lists(st.one_of(EGRESS, RECORD), min_size=1, max_size=8))
def test_add_egress_answers_as_answer_does(steps) -> None:
    paths = PathGraph()
    for step in steps:
        if step[0] == "record":
            _, origin, source, target, protocol, port, allows = step
            paths.record(origin, protocol, port, Hop(source, target, "network-policy", allows,
                                                     f"{source} to {target}"))
            continue
        _, origin, destination, protocol, port, allows, evidence, summary, through = step
        got = paths.add_egress(origin, destination, protocol, port, allows, evidence,
                               summary or f"egress of {origin}", explicit=bool(summary),
                               through=through)
        assert got == paths.answer(origin, destination, protocol, port), step


def test_each_shape_of_a_first_egress_is_answered() -> None:
    service = Hop("", "svc dns", "service", True, "Service openshift-dns/dns-default", "s.yaml", 2)
    shut = Hop("", "svc dns", "service", False, "no endpoints", "s.yaml", 2)
    cases = [(None, True, True), (None, False, False), (service, True, True),
             (service, False, False), (shut, True, False)]
    for n, (through, allows, opened) in enumerate(cases):
        paths = PathGraph()
        origin = f"ns/w{n}[Deployment]"
        got = paths.add_egress(origin, "dns", "UDP", 5353, allows, (), "egress of w",
                               through=through)
        assert got == paths.answer(origin, "dns", "UDP", 5353)
        assert got.open is opened
        assert len(got.hops) == (1 if through is None or not through.allows else 2)
