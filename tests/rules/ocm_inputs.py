"""Inputs several OCM tests share: the management cluster's http proxy and the klusterlet's
kubeconfig Secrets in its agent namespace (open-cluster-management-agent)."""

from __future__ import annotations

import textwrap

# The cluster-wide proxy the klusterlet's hub connection has to go through (the hub is not
# in its noProxy).
MANAGEMENT_PROXY = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata: {name: cluster}
spec:
  httpProxy: http://proxy.corp.example.com:3128
  httpsProxy: http://proxy.corp.example.com:3128
  noProxy: .corp.example.com
"""


def agent_secret(kubeconfig: str, name: str = "bootstrap-hub-kubeconfig") -> str:
    """A Secret of the klusterlet's agent namespace holding ``kubeconfig`` (a kubeconfig's
    text, any common indentation) under the key ``kubeconfig``, as stringData."""
    body = textwrap.indent(textwrap.dedent(kubeconfig), "    ")
    return f"""\
apiVersion: v1
kind: Secret
metadata: {{name: {name}, namespace: open-cluster-management-agent}}
type: Opaque
stringData:
  kubeconfig: |
{body}"""
