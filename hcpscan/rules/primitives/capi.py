"""Primitive: Cluster API bootstrap configs of a cluster behind a proxy must ship containerd's
proxy drop-in (PRX009).

Which cluster a KubeadmConfig(Template) / KubeadmControlPlane(Template) belongs to:
its ``cluster.x-k8s.io/cluster-name`` label, else the longest ``<cluster>`` for
which a ``<cluster>-cluster-values`` Secret exists in the same namespace and the
object is named ``<cluster>`` or ``<cluster>-…`` (Giant Swarm names templates
``<cluster>-<pool>`` and the control plane ``<cluster>``). The cluster "has a
proxy" when that Secret's ``values`` YAML sets ``cluster.proxy`` http or https.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hcpscan.analysis.proxy.containers import PROXY_VARIABLE
from hcpscan.analysis.proxy.effective import KUBEADM_FILES, decode_file_content
from hcpscan.findings.redact import mask_credentials
from hcpscan.inventory.fieldpath import Step, format_path, parse_path
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values
from hcpscan.rules.context import Context
from hcpscan.rules.primitives import register
from hcpscan.rules.primitives.base import NotApplicable, NotEvaluable, Outcome, Primitive, Violation
from hcpscan.sources.systemd import parse_unit
from hcpscan.sources.yamldocs import YamlSyntaxError, load_one

CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
VALUES_SUFFIX = "-cluster-values"
CONTAINERD_DROPIN = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
FILES_PATHS = {kind: format_path(steps) for kind, steps in KUBEADM_FILES.items()}


def cluster_of(ctx: Context, obj: K8sObject) -> tuple[str, str] | None:
    """(cluster name, how it was found) for a bootstrap config, or None."""
    label = obj.labels.get(CLUSTER_NAME_LABEL)
    if label:
        return str(label), f"label {CLUSTER_NAME_LABEL}"
    candidates = [s.name.removesuffix(VALUES_SUFFIX)
                  for s in ctx.inventory.query("Secret", namespace=obj.namespace, cluster=obj.cluster)
                  if s.name.endswith(VALUES_SUFFIX)]
    matching = [c for c in candidates if obj.name == c or obj.name.startswith(c + "-")]
    if not matching:
        return None
    name = max(matching, key=len)
    return name, f"name prefix of Secret {obj.namespace}/{name}{VALUES_SUFFIX}"


def cluster_proxy(ctx: Context, obj: K8sObject, cluster: str) -> dict[str, str] | NotEvaluable:
    """The ``cluster.proxy`` http/https of a cluster's values Secret ({} = no proxy)."""
    name = cluster + VALUES_SUFFIX
    secret = ctx.inventory.get("Secret", obj.namespace, name, obj.cluster)
    if secret is None:
        return NotEvaluable(f"Secret {obj.namespace}/{name} is not in the input: cannot tell "
                            f"whether cluster {cluster} uses a proxy")
    value = secret_values(secret).get("values")
    if value is None:
        return NotEvaluable(f"{secret.ref} has no key 'values'")
    if value.redacted:
        return NotEvaluable(f"{secret.ref} key 'values' is redacted in this dump")
    try:
        values = load_one(value.text or "")
    except YamlSyntaxError as exc:
        return NotEvaluable(f"{secret.ref} key 'values' is not valid YAML: {exc.message}")
    section = values.get("cluster") if isinstance(values, dict) else None
    proxy = section.get("proxy") if isinstance(section, dict) else None
    if not isinstance(proxy, dict):
        return {}
    out = {}
    for keys in (("http", "httpProxy"), ("https", "httpsProxy")):
        for key in keys:
            if str(proxy.get(key) or "").strip():
                out[key] = str(proxy[key]).strip()
                break
    return out


@register
class ContainerdProxyDropIn(Primitive):
    name = "containerd_proxy_dropin"
    description = ("bootstrap configs of a CAPI cluster with a proxy write containerd's "
                   "http-proxy.conf drop-in, from an existing Secret or with proxy variables")
    params_schema = {
        "type": "object", "additionalProperties": False,
        "properties": {
            "path": {"type": "string", "description": "the drop-in's path on the node"},
            "files": {"type": "object", "additionalProperties": {"type": "string"},
                      "description": "where each kind keeps its files[] (dotted path)"},
        },
    }
    reads = ("Secret",)

    def check(self, ctx: Context, subject: K8sObject, params: dict[str, Any]) -> Iterable[Outcome]:
        if any(isinstance(o, dict) and o.get("kind") == "Machine"
               for o in subject.metadata.get("ownerReferences") or []):
            # rendered from a template or control plane, which is checked itself
            yield NotApplicable("owned by a Machine: its template is checked")
            return
        found = cluster_of(ctx, subject)
        if found is None:
            yield NotEvaluable(f"no {CLUSTER_NAME_LABEL} label and no <cluster>{VALUES_SUFFIX} "
                               f"Secret in {subject.namespace} whose name prefixes {subject.name}")
            return
        cluster, how = found
        files_path = parse_path({**FILES_PATHS, **params.get("files", {})}[subject.kind])
        dropin = params.get("path", CONTAINERD_DROPIN)
        proxy = cluster_proxy(ctx, subject, cluster)
        if isinstance(proxy, NotEvaluable):
            # A GitOps tree has no <cluster>-cluster-values Secret; a drop-in written inline
            # with proxy variables says by itself that the cluster uses a proxy.
            inline = _inline_dropin_proxy(subject, files_path, dropin)
            if not inline:
                yield proxy
                return
            proxy, how = inline, f"as the drop-in it writes inline says; {proxy.reason.split(':')[0]}"
        if not proxy:
            yield NotApplicable(f"cluster {cluster} uses no proxy")
            return
        said = [f"cluster {cluster} ({how}) uses proxy "
                + ", ".join(f"{k}={mask_credentials(v)}" for k, v in proxy.items())]
        yield from _check_files(ctx, subject, cluster, files_path, dropin, said)


def _inline_dropin_proxy(subject: K8sObject, files_path: tuple[Step, ...],
                         dropin: str) -> dict[str, str]:
    """The proxy variables an inline (content) drop-in at ``dropin`` sets, by name."""
    files = subject.get(files_path)
    for item in files if isinstance(files, list) else []:
        if not isinstance(item, dict) or str(item.get("path", "")).strip() != dropin:
            continue
        text = decode_file_content(item)
        environment = parse_unit(text).environment if text is not None else {}
        return {name: value for name, (value, _line) in environment.items()
                if name.lower() in ("http_proxy", "https_proxy") and value.strip()}
    return {}


def _check_files(ctx: Context, subject: K8sObject, cluster: str, files_path: tuple[Step, ...],
                 dropin: str, said: list[str]) -> Iterable[Outcome]:
    files = subject.get(files_path)
    items = files if isinstance(files, list) else []
    index = next((i for i, f in enumerate(items) if isinstance(f, dict)
                  and str(f.get("path", "")).strip() == dropin), None)
    values = {"cluster": cluster}
    if index is None:
        written = [str(f.get("path")) for f in items if isinstance(f, dict)]
        yield Violation(field=format_path(files_path),
                        values={**values, "problem": f"writes no {dropin}"},
                        evidence=said + [f"{format_path(files_path)} writes "
                                         + (", ".join(written) if written else "no files")])
        return
    item = items[index]
    base = files_path + (index,)
    secret_ref = (item.get("contentFrom") or {}).get("secret") \
        if isinstance(item.get("contentFrom"), dict) else None
    if isinstance(secret_ref, dict):
        yield from _check_secret(ctx, subject, base, secret_ref, values, said)
        return
    text = decode_file_content(item)
    if text is None:
        if item.get("content") is not None:
            yield NotEvaluable(f"{format_path(base + ('content',))} cannot be decoded "
                               f"(encoding {item.get('encoding')!r})")
        else:
            yield Violation(field=format_path(base), values={**values, "problem":
                            f"declares {dropin} without content or contentFrom"},
                            evidence=said)
        return
    variables = [k for k in parse_unit(text).environment if PROXY_VARIABLE.match(k)]
    if not any(v.lower() in ("http_proxy", "https_proxy") for v in variables):
        yield Violation(field=format_path(base + ("content",)),
                        values={**values, "problem": f"writes {dropin} without HTTP(S)_PROXY"},
                        evidence=said + [f"the drop-in sets {', '.join(variables) or 'no proxy variable'}"])


def _check_secret(ctx: Context, subject: K8sObject, base: tuple[Step, ...], ref: dict[str, Any],
                  values: dict[str, str], said: list[str]) -> Iterable[Outcome]:
    where = base + ("contentFrom", "secret")
    name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
    secret = ctx.inventory.get("Secret", subject.namespace, name, subject.cluster) if name else None
    if secret is None:
        yield Violation(field=format_path(where + ("name",)),
                        values={**values, "problem": f"takes the drop-in from Secret "
                                                     f"{subject.namespace}/{name or '(no name)'}, "
                                                     "which does not exist"},
                        evidence=said + [f"{format_path(where)} names Secret "
                                         f"{subject.namespace}/{name}: not in the input, so "
                                         "Cluster API waits for it and creates no machine"])
        return
    if key not in secret_values(secret):
        yield Violation(field=format_path(where + ("key",)),
                        values={**values, "problem": f"takes the drop-in from key {key!r} of "
                                                     f"{secret.ref}, which has no such key"},
                        evidence=said + [f"{secret.ref} has keys "
                                         + (", ".join(sorted(secret_values(secret))) or "none")])
