"""Template ``cel``: a CEL boolean expression over the subject and the scan's objects.

For checks no other template expresses. ``object`` is the subject (the
manifest as a map), ``objects`` every object of the kinds the rule names in
``reads`` (so a rule says what it looks at, and the loader keeps exactly
that). true means compliant. The domain engines are functions, so a CEL rule
gets the same exact answers as the built-in templates:

* ``hcp_namespace(hostedcluster)`` — the control-plane namespace of a
  HostedCluster map (a HostedControlPlane's own namespace);
* ``no_proxy_direct(runtime, no_proxy, url)`` — whether ``runtime`` (go, curl,
  python, ...) sends ``url`` direct under that NO_PROXY value;
* ``no_proxy_covers(runtime, no_proxy, destination)`` — whether every address
  of a CIDR, every name under ``.domain``, or one host goes direct;
* ``reachable(cidr, namespace, app, port)`` — whether every address of ``cidr``
  can open TCP ``port`` on the workload labelled ``app`` in ``namespace`` (of
  the subject's cluster) through a way in from outside, through every layer;
* ``addon_configs(object)`` — the AddOnDeploymentConfig references of the subject add-on
  (``namespace``, ``name``, ``from``, ``at``, and ``field``: its path when the subject holds
  it): for a ManagedClusterAddOn the ones the hub
  applies to it (its own ``spec.configs``, else a selecting placement's configs of its
  ClusterManagementAddOn, else that one's default), for a ClusterManagementAddOn every one
  it holds;
* ``addon_hub_proxy(object)`` — for a ManagedClusterAddOn whose agents reach hub services
  other than the kube-apiserver (``model.ocm.HUB_SERVICE_ADDONS``) on a managed cluster
  whose klusterlet reaches the hub through a proxy: ``why`` (the add-on's evidence),
  ``proxy``, ``where`` and ``at`` (the klusterlet's proxy setting); any other add-on is not
  applicable;
* ``kyverno_proxy_env(rule)`` — the proxy variables a Kyverno rule's mutate block
  writes (a Kyverno MutatingPolicy mutation that names some: not evaluable, a CEL program);
  ``kyverno_matches(rule, namespace, name, labels)`` — what of that Deployment
  and its Pods the rule (of the subject policy) matches ([] = none), as Kyverno decides it
  (the Deployment of that name in the input, its pod template and namespace labels,
  else one with ``labels`` in ``namespace``; Kyverno's resourceFilters honoured).

The kinds these functions read are the rule's reads too (``reads_for``), so a rule
run alone on a dump keeps them without naming them in ``params.reads``.

With ``each`` (a JSONPath) the expression is judged once per item it selects
(``item``), and a finding points at that item (plus ``field`` inside it). ``values``
names CEL expressions whose results fill the rule's message and its evidence.

The library is cel-expr-python (Google's CEL-C++ runtime): it agreed with 1,050
of 1,090 cel-spec conformance cases here, type-checks when compiling (so a
broken expression is an error at the rule's line, not on every object) and was
the fastest candidate.
"""

from __future__ import annotations

import contextvars
import functools
import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from hcpscan.analysis.proxy import NoProxyList
from hcpscan.analysis.reachability.scan_graph import REACHABILITY
from hcpscan.inventory.fieldpath import format_path, parse_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.model.hostedcluster import hcp_namespace
from hcpscan.model.ocm import ADDON_CONFIG_READS, applied_addon_configs, declared_addon_configs
from hcpscan.rules.context import Context
from hcpscan.rules.templates import register
from hcpscan.rules.templates.base import NotApplicable, NotEvaluable, Outcome, Template, Violation

try:
    from cel_expr_python import cel
except ImportError:  # not installed: on Linux it is the `cel` extra (musl has no wheel)
    cel = None

CEL_MISSING = ("the cel template needs the cel-expr-python package, which is not installed: "
               "pip install 'hcpscan[cel]' (wheels exist for glibc Linux x86_64/aarch64, macOS "
               "and Windows; none for musl/Alpine)")

# The subject and the rule's evaluation, for the domain functions CEL calls back into.
_CURRENT: contextvars.ContextVar[tuple[Context, K8sObject]] = contextvars.ContextVar("cel_subject")
# The outcome a domain function settled the evaluation with (see _undecided).
_UNDECIDED: contextvars.ContextVar[list[NotEvaluable | NotApplicable] | None] = \
    contextvars.ContextVar("cel_undecided", default=None)
_OBJECTS = re.compile(r"\bobjects\b")
_CALL = re.compile(r"\b([a-z_]+)\s*\(")


@lru_cache(maxsize=1)
def _function_reads() -> dict[str, tuple[str, ...]]:
    """The kinds each domain function reads from the inventory (imported late: those
    modules import the template registry this one registers into)."""
    from hcpscan.analysis.kyverno import MATCH_READS, MUTATING_POLICY_KINDS, POLICY_KINDS
    from hcpscan.analysis.proxy.klusterlet import KLUSTERLET_PROXY_READS
    from hcpscan.analysis.reachability.scan_graph import GRAPH_READS

    return {"reachable": GRAPH_READS, "kyverno_matches": (*POLICY_KINDS, *MATCH_READS),
            "kyverno_proxy_env": (*POLICY_KINDS, *MUTATING_POLICY_KINDS), "addon_configs": ADDON_CONFIG_READS,
            "addon_hub_proxy": KLUSTERLET_PROXY_READS}


def _hcp_namespace(hostedcluster: Any) -> str:
    meta = hostedcluster.get("metadata") if isinstance(hostedcluster, dict) else None
    if not isinstance(meta, dict) or not meta.get("name") or not meta.get("namespace"):
        raise ValueError("hcp_namespace() takes a HostedCluster with metadata.name and namespace")
    if hostedcluster.get("kind") == "HostedControlPlane":
        return str(meta["namespace"])  # the copy lives in its HCP namespace
    return hcp_namespace(str(meta["namespace"]), str(meta["name"]))


def _direct(runtime: str, no_proxy: str, url: str) -> bool:
    return NoProxyList(no_proxy).decide(runtime, url).bypass


def _covers(runtime: str, no_proxy: str, destination: str) -> bool:
    return NoProxyList(no_proxy).covers(runtime, destination).covered


def _kyverno_proxy_env(rule: Any) -> list[str]:
    """The proxy variables a Kyverno rule's mutate block writes; a MutatingPolicy mutation
    (a CEL program) that names some is not evaluable, with the reason."""
    from hcpscan.analysis.kyverno import cel_mutation_problem, injected_variables

    _ctx, subject = _CURRENT.get()
    problem = cel_mutation_problem(subject, rule)
    if problem is not None:
        _undecided(NotEvaluable(problem))
        raise ValueError(problem)
    return injected_variables(rule) if isinstance(rule, dict) else []


def _kyverno_matches(rule: Any, namespace: str, name: str, labels: Any) -> list[str]:
    from hcpscan.analysis.kyverno import matched_resources, namespace_signs, workload_in_input

    ctx, subject = _CURRENT.get()
    found = matched_resources(ctx.inventory, subject, rule, {"namespace": namespace, "name": name,
                                                   "labels": dict(labels or {})})
    if found is None:
        raise ValueError(f"rule {rule.get('name')!r} matches by user, role or preconditions, "
                         "which cannot be decided offline")
    if found and not workload_in_input(ctx.inventory, name):
        # It would match the Deployment as it is usually deployed, which is not in the
        # input: no finding may name it. Whether it is there depends on the installation.
        signs = namespace_signs(ctx.inventory, subject.cluster, namespace)
        what = (f"rule {rule.get('name')!r} would match a Deployment {name} in namespace "
                f"{namespace}, and the input holds no Deployment {name}")
        if signs:
            _undecided(NotEvaluable(
                f"{what} though it holds {', '.join(signs[:3])}"
                f"{' ...' if len(signs) > 3 else ''}: add it to judge the rule (kubectl get "
                f"deployment -n {namespace} {name} -o yaml)"))
        else:
            _undecided(NotApplicable(f"{what} nor anything of namespace {namespace}"))
        raise ValueError(what)
    return [str(res) for res in found]


def _addon_configs(addon: Any) -> list[dict[str, str]]:
    """The AddOnDeploymentConfig references of the subject add-on (``model.ocm``): for a
    ManagedClusterAddOn those the hub applies to it, by precedence; for a
    ClusterManagementAddOn every one it holds. Each: namespace, name, from (how it reaches
    the add-on) and at (file:line of the reference)."""
    ctx, subject = _CURRENT.get()
    if not isinstance(addon, dict) or subject.kind not in ("ManagedClusterAddOn",
                                                           "ClusterManagementAddOn"):
        raise ValueError("addon_configs() takes the subject add-on (object)")
    if subject.kind == "ClusterManagementAddOn":
        refs = declared_addon_configs(subject)
    else:
        refs = applied_addon_configs(ctx.inventory, subject)
    out = []
    for ref in refs:
        loc = ctx.inventory.locate(ref.holder, ref.steps + (ref.name_key,))
        field = format_path(ref.steps + (ref.name_key,)) if ref.holder is subject else ""
        out.append({"namespace": ref.namespace, "name": ref.name, "from": ref.how,
                    "at": f"{loc.path}:{loc.line}", "field": field})
    return out


def _addon_hub_proxy(addon: Any) -> dict[str, str]:
    """The klusterlet proxy an add-on's agents need a proxyConfig for, by the model; any
    other add-on (not one that reaches other hub services, or no klusterlet proxy) is not
    applicable."""
    from hcpscan.analysis.proxy.klusterlet import klusterlet_hub_proxy_of
    from hcpscan.model.ocm import HUB_SERVICE_ADDONS, cluster_management_addon, is_addon_config_ref

    ctx, subject = _CURRENT.get()
    if not isinstance(addon, dict) or subject.kind != "ManagedClusterAddOn":
        raise ValueError("addon_hub_proxy() takes the subject ManagedClusterAddOn (object)")
    why = HUB_SERVICE_ADDONS.get(subject.name)
    if why is None:
        what = (f"add-on {subject.name} is not known to reach hub services other than the "
                "kube-apiserver: its agents follow the klusterlet's proxy in their hub kubeconfig")
        _undecided(NotApplicable(what))
        raise ValueError(what)
    proxy = klusterlet_hub_proxy_of(ctx.inventory, subject.namespace, subject.cluster)
    if proxy is None:
        what = (f"no proxy is known for the klusterlet of managed cluster {subject.namespace} "
                "(no KlusterletConfig bound to it or global with a proxy, no hub kubeconfig "
                "with proxy-url of it)")
        _undecided(NotApplicable(what))
        raise ValueError(what)
    # without configs of its own, its ClusterManagementAddOn (placements, default) decides
    own = any(is_addon_config_ref(r) for r in subject.get("spec.configs") or []) \
        if isinstance(subject.get("spec.configs"), list) else False
    absent = not own and cluster_management_addon(ctx.inventory, subject) is None
    note = (f" (ClusterManagementAddOn {subject.name}, whose placements or default could give "
            "one, is not in the input)") if absent else ""
    return {"why": why, "proxy": proxy.url, "where": proxy.where, "at": proxy.at, "note": note}


def _undecided(outcome: NotEvaluable | NotApplicable) -> None:
    """What a domain function found the subject to be, beyond a value: the expression's
    result is then that outcome (read by ``_evaluate`` once CEL has returned an error)."""
    held = _UNDECIDED.get()
    if held is not None and not held:
        held.append(outcome)


def _reachable(cidr: str, namespace: str, app: str, port: int) -> bool:
    from hcpscan.analysis.reachability.graph import POD_NETWORK

    ipaddress.ip_network(cidr, strict=False)  # a ValueError is the expression's error
    ctx, subject = _CURRENT.get()
    graph = ctx.reachability()
    for workload in graph.select_workloads(subject.cluster, namespace, {"app": app}):
        name = workload.graph_name(subject.cluster)
        reach = graph.can_reach(cidr, name, int(port), "TCP")
        if any(p.allowed for p in reach.paths if p.via != POD_NETWORK):
            return True
    return False


@lru_cache(maxsize=1)
def _environment() -> Any:
    t = cel.Type
    string, boolean = t.STRING, t.BOOL

    def fn(name: str, result: Any, args: list[Any], impl: Any) -> Any:
        return cel.FunctionDecl(name, [cel.Overload(f"hcpscan_{name}", result, args, impl=impl)])

    return cel.NewEnv(
        variables={"object": t.Map(t.STRING, t.DYN), "objects": t.List(t.DYN), "item": t.DYN},
        functions=[fn("hcp_namespace", string, [t.Map(t.STRING, t.DYN)], _hcp_namespace),
                   fn("no_proxy_direct", boolean, [string, string, string], _direct),
                   fn("no_proxy_covers", boolean, [string, string, string], _covers),
                   fn("reachable", boolean, [string, string, string, t.INT], _reachable),
                   fn("kyverno_proxy_env", t.List(string), [t.Map(t.STRING, t.DYN)],
                      _kyverno_proxy_env),
                   fn("addon_configs", t.List(t.Map(t.STRING, t.STRING)),
                      [t.Map(t.STRING, t.DYN)], _addon_configs),
                   fn("addon_hub_proxy", t.Map(t.STRING, t.STRING),
                      [t.Map(t.STRING, t.DYN)], _addon_hub_proxy),
                   fn("kyverno_matches", t.List(string), [t.Map(t.STRING, t.DYN), string, string,
                                                          t.Map(t.STRING, t.DYN)], _kyverno_matches)])


@lru_cache(maxsize=256)
def compile_expression(expression: str, boolean: bool = True) -> Any:
    """The compiled program; ValueError with CEL's position-bearing message when the
    expression does not parse, does not type-check, or (``boolean``) is not boolean."""
    if cel is None:
        raise ValueError(CEL_MISSING)
    too_costly = cost_problem(expression)
    if too_costly is not None:
        raise ValueError(f"the expression is {too_costly}")
    try:
        program = _environment().compile(expression)
    except RuntimeError as exc:
        raise ValueError(str(exc).removeprefix("ERROR: ").strip()) from None
    if boolean and program.return_type() not in (cel.Type.BOOL, cel.Type.DYN):
        raise ValueError(f"the expression gives {program.return_type().name()}, not a bool")
    return program


@register
class Cel(Template):
    name = "cel"
    analyses = frozenset({REACHABILITY})
    description = ("a CEL expression over `object` (the subject) and `objects` (every object "
                   "of the kinds in reads) is true for every compliant subject")
    params_schema = {
        "type": "object", "additionalProperties": False, "required": ["expression"],
        "properties": {
            "expression": {"type": "string", "minLength": 1,
                           "description": "CEL, true = compliant; functions: hcp_namespace, "
                                          "no_proxy_direct, no_proxy_covers, reachable, "
                                          "kyverno_proxy_env, kyverno_matches, addon_configs, "
                                          "addon_hub_proxy"},
            "reads": {"type": "array", "items": {"type": "string"},
                      "description": "the kinds `objects` holds (needed when the expression "
                                     "uses objects); the kinds the domain functions read "
                                     "are kept without naming them"},
            "field": {"type": "string", "description": "the field a finding points at "
                                                       "(default: the object; with each: inside "
                                                       "the item)"},
            "each": {"type": "string", "description": "JSONPath: judge the expression once per "
                                                      "item it selects, as `item`"},
            "values": {"type": "object", "additionalProperties": {"type": "string"},
                       "description": "message field -> CEL expression giving its value"},
            "field_value": {"type": "string",
                            "description": "a name in values whose result, a field path inside "
                                           "the subject (or a list: its first), the finding "
                                           "points at instead of field ('' keeps field)"},
        },
    }
    message_fields = {"expression": "the rule's expression", "<name>": "each name in params.values"}

    def problems(self, params: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
        found = super().problems(params)
        expression = params.get("expression") if isinstance(params, dict) else None
        if not isinstance(expression, str) or found:
            return found
        # without the runtime nothing can be compiled: the rule loads and is not evaluable
        for where, text in [(("expression",), expression), *(
                (("values", k), v) for k, v in (params.get("values") or {}).items()
                if isinstance(v, str))]:
            if cel is None:
                break
            try:
                compile_expression(text, boolean=where == ("expression",))
            except ValueError as exc:
                found.append((where, f"invalid CEL: {exc}"))
        if _OBJECTS.search(expression) and not params.get("reads"):
            found.append((("expression",), "the expression uses objects: name its kinds in "
                                            "params.reads (e.g. [NetworkPolicy])"))
        return found

    def reads_for(self, params: dict[str, Any]) -> tuple[str, ...]:
        """``params.reads`` plus the kinds each domain function the expressions call reads,
        so a rule run alone keeps what those functions look at."""
        texts = [params.get("expression") or "", *(params.get("values") or {}).values()]
        called = {m.group(1) for t in texts if isinstance(t, str) for m in _CALL.finditer(t)}
        functions = _function_reads()
        domain = [kind for name in sorted(called & functions.keys()) for kind in functions[name]]
        return tuple(dict.fromkeys([*params.get("reads", ()), *domain]))

    def reads_whole(self, params: dict[str, Any], subjects: tuple[str, ...]) -> tuple[str, ...]:
        """The subjects (``object`` is the whole body), and ``params.reads`` when an expression
        uses ``objects``; the domain functions read what inventory/kept.py keeps."""
        texts = [params.get("expression") or "", params.get("each") or "",
                 *(params.get("values") or {}).values()]
        uses = any(isinstance(t, str) and _OBJECTS.search(t) for t in texts)
        return (*subjects, *(params.get("reads", ()) if uses else ()))

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        if cel is None:
            yield NotEvaluable(CEL_MISSING)
            return
        objects = [o.body for o in ctx.inventory.of_kind(*params["reads"])] if params.get("reads") else []
        field = params.get("field", "")
        if "each" not in params:
            yield from _judge(ctx, subject, params, {"object": subject.body, "objects": objects},
                              field, subject.ref)
            return
        items = ctx.inventory.jsonpath(subject, params["each"])
        if not items:
            yield NotApplicable(f"nothing at {params['each']}")
        for item, steps in items:
            at = format_path(steps + tuple(parse_path(field))) if field else format_path(steps)
            yield from _judge(ctx, subject, params, {"object": subject.body, "objects": objects,
                                                     "item": item},
                              at, f"{subject.ref} {format_path(steps)}")


# Cost: CEL-C++ offers no evaluation budget, so hcpscan bounds what an expression may
# cost before running it. Its text is at most MAX_EXPRESSION characters with at most
# MAX_NESTING comprehensions (all, exists, exists_one, map, filter) inside each other -
# the one way an expression's work grows as a power of its input; at evaluation, the
# estimated cost, (number of objects, at least LIST_GUESS) to the power of that
# nesting, must stay under MAX_COST, or the subject is not evaluable, saying why.
MAX_EXPRESSION = 10_000
MAX_NESTING = 3
# chained comprehensions (x.map(..).filter(..).exists(..)) add their work: their number
# in one expression is bounded too, and counts in the estimate at evaluation
MAX_COMPREHENSIONS = 12
LIST_GUESS = 100  # items of a list inside one object (containers, rules, peers...)
MAX_COST = 100_000_000
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_TRIPLE_QUOTES = ("'''", '"""')


@functools.lru_cache(maxsize=256)
def comprehension_nesting(expression: str) -> int:
    """How many comprehension macros the expression holds inside each other. String
    literals and ``//`` comments are left out as CEL's lexer reads them (a backslash
    escapes the next character except in a raw string), so neither a literal ending in
    a backslash nor a quote in a comment hides the rest of the expression from the
    count; the macro's name may stand any distance before its parenthesis."""
    code = _code_only(expression)
    stack: list[bool] = []  # per open parenthesis: whether it opens a macro
    deepest = 0
    for i, char in enumerate(code):
        if char == "(":
            stack.append(_macro_before(code, i))
            deepest = max(deepest, sum(stack))
        elif char == ")" and stack:
            stack.pop()
    return deepest


@functools.lru_cache(maxsize=256)
def comprehension_count(expression: str) -> int:
    """How many comprehension macros the expression holds, nested or chained."""
    code = _code_only(expression)
    return sum(1 for i, char in enumerate(code) if char == "(" and _macro_before(code, i))


def _macro_before(code: str, paren: int) -> bool:
    """Whether ``.name`` with name a comprehension macro stands before ``code[paren]``."""
    j = paren - 1
    while j >= 0 and code[j].isspace():
        j -= 1
    end = j + 1
    while j >= 0 and (code[j].isalnum() or code[j] == "_"):
        j -= 1
    name = code[j + 1:end]
    while j >= 0 and code[j].isspace():
        j -= 1
    return j >= 0 and code[j] == "." and name in _MACROS


def _code_only(expression: str) -> str:
    """The expression with each string literal replaced by ``""`` and each comment by a
    newline."""
    out: list[str] = []
    i = start = 0
    while i < len(expression):
        char = expression[i]
        if char in "'\"":
            out.append(expression[start:i] + '""')
            i = start = _after_string(expression, i)
        elif expression.startswith("//", i):
            out.append(expression[start:i] + "\n")
            end = expression.find("\n", i)
            i = start = len(expression) if end < 0 else end + 1
        else:
            i += 1
    out.append(expression[start:])
    return "".join(out)


def _after_string(expression: str, start: int) -> int:
    """Where the string literal whose quote is at ``start`` ends (past its closing quote)."""
    quote = expression[start:start + 3] if expression[start:start + 3] in _TRIPLE_QUOTES \
        else expression[start]
    raw = expression[max(0, start - 2):start].lower() in ("r", "br", "rb") or (
        start >= 1 and expression[start - 1] in "rR")
    i = start + len(quote)
    while i < len(expression):
        if expression.startswith(quote, i):
            return i + len(quote)
        i += 2 if expression[i] == "\\" and not raw else 1
    return len(expression)


def cost_problem(expression: str) -> str | None:
    """Why the expression's text is beyond the cost bound, or None."""
    if len(expression) > MAX_EXPRESSION:
        return f"longer than {MAX_EXPRESSION:,} characters"
    nesting = comprehension_nesting(expression)
    if nesting > MAX_NESTING:
        return (f"{nesting} comprehensions (all/exists/map/filter) inside each other; at most "
                f"{MAX_NESTING}, as its cost grows as the number of objects to that power")
    count = comprehension_count(expression)
    if count > MAX_COMPREHENSIONS:
        return (f"{count} comprehensions (all/exists/map/filter), nested or chained; at most "
                f"{MAX_COMPREHENSIONS}, as each adds a pass over its list")
    return None


def _evaluate(ctx: Context, subject: K8sObject, expression: str, data: dict[str, Any],
              boolean: bool = True) -> Any:
    """The value, or NotEvaluable with CEL's error or the cost bound it would pass."""
    nesting = comprehension_nesting(expression)
    base = max(len(data.get("objects") or ()), LIST_GUESS)
    cost = comprehension_count(expression) * base ** nesting  # nested multiply, chained add
    if nesting > 1 and cost > MAX_COST:
        return NotEvaluable(f"the expression's estimated cost ({base:,} objects, "
                            f"{nesting} comprehensions inside each other, "
                            f"{comprehension_count(expression)} in all: {cost:.1e}) "
                            f"is above {MAX_COST:.0e}; narrow params.reads or the nesting")
    token = _CURRENT.set((ctx, subject))
    undecided: list[NotEvaluable | NotApplicable] = []
    held = _UNDECIDED.set(undecided)
    try:
        value = compile_expression(expression, boolean).eval(data=data)
    finally:
        _UNDECIDED.reset(held)
        _CURRENT.reset(token)
    if value.type() == cel.Type.ERROR:
        if undecided:
            return undecided[0]
        return NotEvaluable(f"the expression could not be evaluated: {value.value()}")
    return value


def _shown(value: Any) -> str:
    plain = value.value() if hasattr(value, "value") else value
    if isinstance(plain, list | tuple):
        return ", ".join(_shown(v) for v in plain)
    return str(plain.value() if hasattr(plain, "value") else plain)


def _pointed(value: Any) -> str:
    """A field path a ``field_value`` gives: the string, or a list's first non-empty one;
    '' when it is none (the finding keeps the rule's field)."""
    plain = value.value() if hasattr(value, "value") else value
    for item in plain if isinstance(plain, list | tuple) else [plain]:
        text = item.value() if hasattr(item, "value") else item
        if isinstance(text, str) and text:
            try:
                parse_path(text)
            except ValueError:
                return ""
            return text
    return ""


def _judge(ctx: Context, subject: K8sObject, params: dict[str, Any], data: dict[str, Any],
           field: str, where: str) -> Iterable[Outcome]:
    value = _evaluate(ctx, subject, params["expression"], data)
    if isinstance(value, NotEvaluable | NotApplicable):
        yield value
        return
    if value.type() != cel.Type.BOOL:
        yield NotEvaluable(f"the expression gave {value.type().name()}, not a bool")
        return
    if value.value():
        return
    values = {"expression": params["expression"]}
    for name, expression in (params.get("values") or {}).items():
        got = _evaluate(ctx, subject, expression, data, boolean=False)
        values[name] = got.reason if isinstance(got, NotEvaluable | NotApplicable) else _shown(got)
        if name == params.get("field_value") and not isinstance(got, NotEvaluable | NotApplicable):
            field = _pointed(got) or field
    yield Violation(field=field, values=values,
                    evidence=[f"false for {where}: {' '.join(params['expression'].split())}"]
                    + [f"{k} = {v}" for k, v in values.items() if k != "expression"])
