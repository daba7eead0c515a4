"""Kubeconfigs stored in Secrets: parsed, and the cluster entry their current context uses."""

from __future__ import annotations

from typing import Any

from hcpscan.core.gobytes import go_bytes
from hcpscan.core.yamldocs import YamlSyntaxError, node_overrun, parse_documents
from hcpscan.inventory.objects import K8sObject
from hcpscan.inventory.secrets import secret_values

CLUSTER_FIELDS = ("server", "certificate-authority-data", "proxy-url")


def current_cluster(kubeconfig: dict[str, Any]) -> dict[str, Any] | None:
    """The `cluster` entry the current context uses (else the only/first one)."""
    entry = current_cluster_entry(kubeconfig)
    return entry[2] if entry is not None else None


def current_cluster_entry(kubeconfig: dict[str, Any]) -> tuple[int, str, dict[str, Any]] | None:
    """(index in ``clusters``, name, the ``cluster`` block) of the entry the current context
    uses, else of the first one; None when there is none."""
    entries = [(i, str(c.get("name", "")), c.get("cluster") or {})
               for i, c in enumerate(kubeconfig.get("clusters") or []) if isinstance(c, dict)]
    contexts = {c.get("name"): c.get("context") or {} for c in kubeconfig.get("contexts") or []
                if isinstance(c, dict)}
    context = contexts.get(kubeconfig.get("current-context"), {})
    current = context.get("cluster") if isinstance(context, dict) else None
    # client-go refuses a kubeconfig with two entries of one name (``load_error``); a
    # caller that judges one anyway gets the last of that name
    named = {name: (i, name, block) for i, name, block in entries}
    if current in named:
        return named[current]
    return next(iter(named.values()), None)


def kubeconfig_in_secret(secret: K8sObject, key: str) -> dict[str, Any] | str:
    """The parsed kubeconfig, or why it cannot be read."""
    value = secret_values(secret).get(key)
    if value is None:
        return f"{secret.ref} has no key {key!r}"
    if value.redacted:
        return f"{secret.ref} key {key!r} is redacted in this dump"
    if value.text is None:
        return f"{secret.ref} key {key!r} cannot be decoded ({value.error or 'not text'})"
    try:
        overrun = node_overrun(value.text)
        if overrun is not None:
            raise overrun
        docs = list(parse_documents(value.text))
    except YamlSyntaxError as exc:
        return f"{secret.ref} key {key!r} is not valid YAML: {exc.message}"
    if not docs or not isinstance(docs[0].body, dict):
        return f"{secret.ref} key {key!r} is not a kubeconfig"
    unloadable = bytes_field_error(docs[0].body) or duplicate_name_error(docs[0].body)
    if unloadable:
        return f"{secret.ref} key {key!r} fails to load as client-go loads it: {unloadable}"
    return docs[0].body


# The kubeconfig fields client-go keeps as []byte (base64 in the file), per list and block.
BYTES_FIELDS = {"clusters": ("cluster", ("certificate-authority-data",)),
                "users": ("user", ("client-certificate-data", "client-key-data"))}


def bytes_field_error(kubeconfig: dict[str, Any]) -> str:
    """Why client-go refuses to load ``kubeconfig`` for a []byte field that is not base64
    (kubectl: 'illegal base64 data at input byte 0'), '' when none."""
    for listed, (block, fields) in BYTES_FIELDS.items():
        entries = kubeconfig.get(listed)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            inner = entry.get(block) if isinstance(entry, dict) else None
            if not isinstance(inner, dict):
                continue
            for name in fields:
                value = inner.get(name)
                decoded = go_bytes(value) if isinstance(value, str) else b""
                if isinstance(decoded, str):
                    return f"{listed}[{i}].{block}.{name} is not base64 ({decoded})"
    return ""


# The named lists client-go turns into maps (clientcmd/api/v1 conversion), in its order.
NAMED_LISTS = (("clusters", "NamedCluster"), ("users", "NamedAuthInfo"),
               ("contexts", "NamedContext"), ("extensions", "NamedExtension"))


def duplicate_name_error(kubeconfig: dict[str, Any]) -> str:
    """Why client-go refuses to load ``kubeconfig`` for two entries of one name in a named
    list (kubectl: 'duplicate name "hub" in list'), '' when none."""
    for listed, _named in NAMED_LISTS:
        entries = kubeconfig.get(listed)
        seen: set[str] = set()
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str):
                continue
            if name in seen:
                return (f"{listed}[{i}] repeats the name {name!r}: duplicate name {name!r} in "
                        f"list {listed} (client-go refuses the file: give each entry its own name)")
            seen.add(name)
    return ""
