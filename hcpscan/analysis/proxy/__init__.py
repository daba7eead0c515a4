"""The proxy model: how clients read NO_PROXY, which proxy each consumer ends up
with (and where each value comes from), and what CA bundles trust.

Entry points for rules:
* ``bypasses(runtime, no_proxy, url) -> Decision`` and ``parse_no_proxy(value)``;
  ``runtime`` is a name (newest behaviour) or ``name@version`` / a ``RuntimeRef``;
* ``runtime_ref("curl@7.88")``, ``consumer_runtime(name, image, configured)``,
  ``ConsumerProxy.client_release``: which release of a client to model;
* ``evaluate_env(runtime, env, url) -> EnvDecision`` (full env precedence);
* ``NoProxyList(value)``: ``.decide(runtime, url) -> Decision`` and
  ``.covers(runtime, cidr | .domain | host) -> Coverage`` - the value type rules use;
* ``covers_cidr(runtime, no_proxy, cidr)`` / ``covers_domain(...) -> Coverage``;
* ``effective_proxies(inventory) -> list[ConsumerProxy]``;
* ``parse_bundle(pem_or_base64) -> CABundle``.
"""

from hcpscan.analysis.proxy.coverage import Coverage, NoProxyList, covers_cidr, covers_domain
from hcpscan.analysis.proxy.decision import Decision
from hcpscan.analysis.proxy.effective import effective_proxies
from hcpscan.analysis.proxy.env import EnvDecision, evaluate_env
from hcpscan.analysis.proxy.noproxy import (
    RUNTIME_NAMES,
    NoProxyEntry,
    RuntimeRef,
    bypasses,
    parse_no_proxy,
    runtime_ref,
)
from hcpscan.analysis.proxy.pem import CABundle, Certificate, parse_bundle
from hcpscan.analysis.proxy.settings import ConsumerProxy, Setting, Source
from hcpscan.analysis.proxy.versions import consumer_runtime

__all__ = [
    "RUNTIME_NAMES", "CABundle", "Certificate", "ConsumerProxy", "Coverage", "Decision",
    "EnvDecision", "NoProxyEntry", "NoProxyList", "RuntimeRef", "Setting", "Source", "bypasses",
    "consumer_runtime", "covers_cidr", "covers_domain", "effective_proxies", "evaluate_env",
    "parse_bundle", "parse_no_proxy", "runtime_ref",
]
