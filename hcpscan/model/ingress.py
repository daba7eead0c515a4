"""The management cluster's routers as OpenShift's ingress operator declares them.

One home for the names: IngressControllers live in ``openshift-ingress-operator``; the one
named ``default`` serves every Route its selectors do not leave out.
"""

from __future__ import annotations

INGRESS_CONTROLLER = "IngressController"
INGRESS_OPERATOR_NAMESPACE, DEFAULT_ROUTER = "openshift-ingress-operator", "default"
