"""Secret values: base64 decoding, and must-gather's redaction recognised as such."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from hcpscan.inventory.objects import K8sObject

# must-gather / oc adm inspect replace secret values with "<n> bytes long".
_REDACTED = re.compile(r"^\s*\d+ bytes long\s*$")


@dataclass(frozen=True, slots=True)
class SecretValue:
    key: str
    raw: bytes | None  # None when redacted or undecodable
    redacted: bool = False
    error: str = ""

    @property
    def text(self) -> str | None:
        if self.raw is None:
            return None
        try:
            return self.raw.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def known(self) -> bool:
        return self.raw is not None


def is_redacted(value: str) -> bool:
    return bool(_REDACTED.match(value))


def _decode(key: str, value: object) -> SecretValue:
    if not isinstance(value, str):
        return SecretValue(key, None, error="value is not a string")
    if is_redacted(value):
        return SecretValue(key, None, redacted=True)
    try:
        raw = base64.b64decode(value.strip(), validate=True)
    except (binascii.Error, ValueError):
        return SecretValue(key, None, error="value is not valid base64")
    try:
        if is_redacted(raw.decode("utf-8")):
            return SecretValue(key, None, redacted=True)
    except UnicodeDecodeError:
        pass
    return SecretValue(key, raw)


def secret_values(secret: K8sObject) -> dict[str, SecretValue]:
    """All values of a Secret, ``data`` decoded and ``stringData`` as given (cached)."""
    cached = secret._cache.get("secret_values")
    if cached is not None:
        return cached
    out: dict[str, SecretValue] = {}
    data = secret.body.get("data")
    if isinstance(data, dict):
        for key, value in data.items():
            out[str(key)] = _decode(str(key), value)
    string_data = secret.body.get("stringData")
    if isinstance(string_data, dict):
        for key, value in string_data.items():
            if isinstance(value, str):
                redacted = is_redacted(value)
                out[str(key)] = SecretValue(str(key), None if redacted else value.encode(), redacted)
    secret._cache["secret_values"] = out
    return out
