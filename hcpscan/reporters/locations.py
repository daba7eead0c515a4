"""Where a SARIF result points: a relative URI for every finding, never none.

GitHub rejects a SARIF file if any result lacks a location, and shows a
result on the file its ``artifactLocation.uri`` names relative to the
repository root. The rules, decided here:

* **Files on disk** are made relative to ``sarif_root`` (default: the current
  directory), with ``/`` separators. A file outside the root keeps its
  ``../`` prefix rather than becoming absolute.
* **Archive members** (``dump.tar.gz!ns/x.yaml``, nested
  ``a.zip!b.tar!c.yaml``) are treated as folders named after the archive:
  ``dump.tar.gz/ns/x.yaml``. That path is stable from run to run, names the
  archive the user can find in the repository, keeps members apart, and the
  line number still means the line inside the member. ``.`` and ``..`` parts
  of member names are dropped so a member can never point outside its archive.
* **No file** (a live cluster, standard input, an object hcpscan built itself)
  gets the virtual path ``cluster/<cluster>/<namespace>/<kind>/<name>.yaml``
  at line 1; cluster-scoped objects use the namespace ``_cluster`` (never a
  valid namespace name). A location the engine already marked ``virtual`` keeps
  its path.

URIs are percent-encoded (RFC 3986) so spaces and ``#`` in file names stay valid.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from urllib.parse import quote

from hcpscan.findings.model import Finding, ObjectRef

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".zip")
CLUSTER_SCOPED = "_cluster"
_URI_SAFE = "/-._~!$&'()*+,;=@"  # ':' is encoded: 'a:b.yaml' would read as a scheme


@dataclass(frozen=True, slots=True)
class ArtifactPath:
    path: str  # relative, "/"-separated, not encoded
    virtual: bool
    archive: str | None = None  # the outermost archive, relative like ``path``

    @property
    def uri(self) -> str:
        return quote(self.path, safe=_URI_SAFE)


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def split_archive_path(path: str) -> list[str]:
    """``a.tar.gz!x/b.zip!c.yaml`` -> ``[a.tar.gz, x/b.zip, c.yaml]``. A ``!`` only
    separates members when what comes before it is an archive name."""
    parts: list[str] = []
    rest = path
    start = 0
    while True:
        bang = rest.find("!", start)
        if bang < 0:
            parts.append(rest)
            return parts
        if is_archive(rest[:bang]):
            parts.append(rest[:bang])
            rest, start = rest[bang + 1:], 0
        else:
            start = bang + 1


def _safe_segments(path: str) -> list[str]:
    segments: list[str] = []
    for segment in path.replace("\\", "/").split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    return segments


def relative_to_root(path: str, root: str) -> str:
    """A file path as seen from ``root``; relative input is relative to the cwd."""
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:  # another drive on Windows: no relative form exists
        rel = os.path.splitdrive(absolute)[1].lstrip("\\/")
    rel = rel.replace(os.sep, "/")
    return posixpath.normpath(rel) if rel else "."


def virtual_path(obj: ObjectRef) -> str:
    segments = [obj.cluster or "unknown", obj.namespace or CLUSTER_SCOPED, obj.kind or "Object",
                f"{obj.name or 'unnamed'}.yaml"]
    return "cluster/" + "/".join(seg.replace("/", "_") for seg in segments)


def _has_no_file(path: str) -> bool:
    return not path or path == "-" or (path.startswith("<") and path.endswith(">"))


def artifact_path(finding: Finding, root: str) -> ArtifactPath:
    loc = finding.location
    if loc.virtual:
        segments = _safe_segments(loc.path)
        return ArtifactPath("/".join(segments) if segments else virtual_path(finding.object), True)
    if _has_no_file(loc.path):
        return ArtifactPath(virtual_path(finding.object), True)
    outer, *members = split_archive_path(loc.path)
    base = relative_to_root(outer, root)
    if not members:
        return ArtifactPath(base, False)
    inner = [seg for member in members for seg in _safe_segments(member)]
    return ArtifactPath("/".join([base, *inner]), False, archive=base)


def path_uri(path: str, root: str) -> str:
    """The URI of a path that is not a finding's (e.g. a diagnostic's)."""
    outer, *members = split_archive_path(path)
    if _has_no_file(outer):
        return ""
    inner = [seg for member in members for seg in _safe_segments(member)]
    return quote("/".join([relative_to_root(outer, root), *inner]), safe=_URI_SAFE)
