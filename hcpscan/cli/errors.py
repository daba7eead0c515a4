"""The error a command raises for a problem with what the user asked for (kept apart from
the input loading in ``inputs`` so the entry point can catch it without importing that)."""

from __future__ import annotations


class UsageError(Exception):
    """A problem with what the user asked for: message plus what to do next."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
