"""Which release of a client a consumer runs: told by configuration, or read from
an image tag where the image is the client itself (``curlimages/curl:8.5.0``).

Rules ask ``consumer_runtime(name, image=..., configured=...)`` and pass the
``RuntimeRef`` it returns to ``bypasses``/``evaluate_env``; without either source
the newest modelled release applies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from hcpscan.analysis.proxy.noproxy import RuntimeRef, UnknownRuntime, runtime_ref
from hcpscan.model.readers import IMAGE_CLIENTS, image_program

# Image programs whose tag is the client's own release (curlimages/curl, the language images):
# hcpscan.model.readers, the one home of which program an image runs.
IMAGE_RUNTIMES = IMAGE_CLIENTS
_TAG_VERSION = re.compile(r"^v?(\d+(?:\.\d+){0,2})(?:[-_].*)?$")


def configured_versions(mapping: Mapping[str, object]) -> dict[str, RuntimeRef]:
    """Read ``{runtime: "version"}`` (the ``runtime_versions`` input); raises
    ``UnknownRuntime`` naming the key for an unknown runtime or version."""
    out: dict[str, RuntimeRef] = {}
    for name, version in mapping.items():
        out[name] = runtime_ref(f"{name}@{version}")
    return out


def infer_from_image(image: str) -> RuntimeRef | None:
    """The client release an image tag states, when the image is that client and the
    tag is a version hcpscan models; None otherwise (no tag, a digest, ``latest``)."""
    runtime = IMAGE_RUNTIMES.get(image_program(image))
    tag = image.partition("@")[0].rsplit("/", 1)[-1].partition(":")[2]
    if runtime is None or not tag:
        return None
    m = _TAG_VERSION.match(tag)
    if m is None:
        return None
    try:
        return runtime_ref(f"{runtime}@{m.group(1)}")
    except UnknownRuntime:
        return None


def consumer_runtime(name: str, image: str | None = None,
                     configured: Mapping[str, RuntimeRef] | None = None) -> RuntimeRef:
    """The release to model for a consumer running ``name``: configured, else the
    image's tag, else the newest modelled."""
    if configured and name in configured:
        return configured[name]
    inferred = infer_from_image(image) if image else None
    if inferred is not None and inferred.name == name:
        return inferred
    return runtime_ref(name)
