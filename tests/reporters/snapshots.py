"""Snapshot files that read as the format they hold (``.sarif``, ``.xml``, ``.md``...)."""

from __future__ import annotations

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


def _text_snapshot(extension: str) -> type[SingleFileSnapshotExtension]:
    return type(f"{extension.title()}Snapshot", (SingleFileSnapshotExtension,),
                {"_write_mode": WriteMode.TEXT, "file_extension": extension})


SNAPSHOT_EXTENSIONS = {name: _text_snapshot(ext) for name, ext in
                       (("table", "txt"), ("json", "json"), ("sarif", "sarif"),
                        ("junit", "xml"), ("markdown", "md"), ("concise", "txt"),
                        ("html", "html"), ("openreports", "yaml"), ("policyreport", "yaml"),
                        ("github", "txt"), ("gitlab", "json"))}
