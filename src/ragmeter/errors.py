"""Exceptions raised by ragmeter.

Every error about user input names where the problem is (file, line, field) and what was
expected, so that a message alone is enough to fix the input.
"""

from __future__ import annotations

from typing import Any


class RagmeterError(Exception):
    """Base class of every error ragmeter raises on purpose."""


class InputError(RagmeterError, ValueError):
    """Malformed or inconsistent input data.

    Attributes:
        source: file name (or a description such as ``"<dict>"``) the input came from.
        line: 1-based line number, when the input is line oriented.
        field: the field (column) at fault, when known.
        reason: what was wrong and what was expected.
    """

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        self.reason = reason
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.source is not None:
            where.append(str(self.source))
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        prefix = ", ".join(where)
        return f"{prefix}: {self.reason}" if prefix else self.reason


class MeasureError(RagmeterError, ValueError):
    """An unknown or malformed measure name, or invalid measure parameters."""


class PluginError(RagmeterError, ImportError):
    """A measure plugin (``--plugin``, ``RAGMETER_PLUGINS``) that cannot be found or fails
    while it is imported; the message names it and where it was given."""


class MissingInputError(RagmeterError, ValueError):
    """A measure needs an input (qrels, pool, judgments, corpus…) that was not given."""


def install_hint(extra: str) -> str:
    """The command that installs an optional extra, as the docs install ragmeter (from a
    clone, editable): every runtime hint is built here, so hints and docs say the same.

    >>> install_hint("judges")
    'pip install -e ".[judges]" in your ragmeter clone'
    """
    return f'pip install -e ".[{extra}]" in your ragmeter clone'


class MissingExtraError(RagmeterError, ImportError):
    """An optional feature whose packages are not installed; the message names the extra.

    >>> str(MissingExtraError("ROUGE-L", package="rouge-score", extra="text"))
    'ROUGE-L needs the package rouge-score: pip install -e ".[text]" in your ragmeter clone'
    """

    def __init__(self, feature: str, *, package: str, extra: str) -> None:
        self.feature = feature
        self.package = package
        self.extra = extra
        super().__init__(f"{feature} needs the package {package}: {install_hint(extra)}")


def import_extra(module: str, *, feature: str, package: str, extra: str) -> Any:
    """``import module`` for an optional feature: :class:`MissingExtraError` naming the extra
    to install when the package is missing (rather than a bare ``No module named``)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] != module.split(".")[0]:
            raise  # the package is there; one of its own dependencies is broken
        raise MissingExtraError(feature, package=package, extra=extra) from None


class StoreError(RagmeterError):
    """The evaluation store cannot be opened, is newer than this ragmeter, or lacks an entry."""


class NoStoreError(StoreError):
    """A command that only reads the store found none (it never creates one)."""


class OutputError(RagmeterError, OSError):
    """A file could not be written (a missing or read-only directory, a full disk, the file
    size limit). Files are written atomically, so a file at ``path`` is as it was before.

    >>> import errno
    >>> str(OutputError("out.json", errno.ENOSPC, "No space left on device"))
    'cannot write out.json: No space left on device; nothing was written'
    """

    def __init__(self, path: str, code: int | None, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(code, f"cannot write {path}: {reason}; nothing was written", path)

    def __str__(self) -> str:
        return str(self.strerror)
