"""Operator Lifecycle Manager: which proxy environment it gives an operator it installs.

OLM (operator-framework/operator-lifecycle-manager, read at commit 992bb097) writes into
every container of an operator's Deployments the ``env`` of the owning Subscription's
``spec.config`` (``pkg/controller/operators/olm/overrides/config.go``,
``GetConfigOverrides``), and then, unless that env already overrides the proxy, the cluster
Proxy's values (``overrides/initializer.go``, ``initialize``):

* the cluster values are ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``NO_PROXY`` taken from the
  ``config.openshift.io`` Proxy's **status** (``pkg/lib/proxy/envvar.go``, ``ToEnvVar``),
  each only when non-empty (``dropEmptyProxyEnv``);
* the Subscription overrides them when its ``spec.config.env`` names **any** of those three
  names, compared case-sensitively (``pkg/lib/proxy/overridden.go``, ``IsOverridden``): then
  none of the three cluster values is given, so a Subscription that sets ``HTTP_PROXY`` and
  ``HTTPS_PROXY`` but no ``NO_PROXY`` leaves the operator without the cluster's noProxy. A
  lower-case ``http_proxy`` alone overrides nothing;
* the injected variables replace a container's own variables of the same name
  (``overrides/inject/inject.go``, ``mergeEnvVars``), and ``envFrom`` is added apart
  (it never counts as an override).
"""

from __future__ import annotations

from collections.abc import Iterable

OLM_GROUP = "operators.coreos.com"
SUBSCRIPTION_KIND = "Subscription"
# The variables OLM injects, and the Proxy status field each is taken from.
INJECTED = (("HTTP_PROXY", "httpProxy"), ("HTTPS_PROXY", "httpsProxy"), ("NO_PROXY", "noProxy"))


def overriding(env_names: Iterable[str]) -> list[str]:
    """The names among a Subscription's ``spec.config.env`` names that make OLM give none of
    the cluster Proxy's values ([] = it gives them)."""
    names = set(env_names)
    return [name for name, _ in INJECTED if name in names]
