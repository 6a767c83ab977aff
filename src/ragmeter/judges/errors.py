"""Errors of the judge harness."""

from __future__ import annotations

from ragmeter.errors import RagmeterError


class JudgeConfigError(RagmeterError, ValueError):
    """A missing or invalid judge setting (no server, no model, bad config file)."""


class FatalJudgeError(RagmeterError):
    """An error no retry can fix (401, 403, 404, an unknown model): the run stops."""


class RequestFailed(RagmeterError):
    """A request that failed after every retry (the judgment is not cached)."""

    def __init__(self, message: str, *, retries: int) -> None:
        super().__init__(message)
        self.retries = retries
