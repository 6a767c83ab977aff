"""Helpers shared by the readers and writers: reading files, decoding, atomic writes."""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import numpy as np

from ragmeter.errors import InputError, OutputError

PathLike = str | os.PathLike[str]

BOM = b"\xef\xbb\xbf"

#: a grade that C ``atol``, Python ``int`` and Arrow read alike: ASCII digits only
GRADE_SYNTAX = r"[+-]?[0-9]+"
#: a number that C ``atof``, Python ``float`` and Arrow read alike: decimal notation only (no
#: ``1_0``, hexadecimal, non-ASCII digits, ``inf`` or ``nan``, which C reads differently or not)
SCORE_SYNTAX = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"


def read_bytes(path: PathLike) -> bytes:
    """The bytes of ``path``; a directory, a missing or unreadable file is an :class:`InputError`.

    A UTF-8 byte-order mark is refused for every text format (as in TREC files): it would
    otherwise become part of the first id or column name without anyone noticing.
    """
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory; expected a file", source=str(p))
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", source=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=str(p)) from None
    return data


def check_text(data: bytes, source: str, *, what: str) -> None:
    """Refuse an empty (or all white space) file and a leading byte-order mark."""
    if data.startswith(BOM):
        raise InputError(
            "file starts with a UTF-8 byte-order mark (BOM); expected plain UTF-8 — "
            "save it without the BOM",
            source=source,
            line=1,
        )
    if not data.strip():
        raise InputError(f"file is empty; expected {what}", source=source)


def decode(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text; invalid bytes are an error naming their line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"invalid UTF-8 at byte {exc.start}; expected UTF-8 text", source=source, line=line
        ) from None


def atomic_write(path: PathLike, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place.

    Either the complete new file replaces ``path`` or, if anything fails, ``path`` is left as it
    was and the temporary file is removed: nothing is ever half-written. A failure of the
    system (missing or read-only directory, full disk, file size limit) is an
    :class:`~ragmeter.errors.OutputError` naming ``path``, not the temporary file.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        write(tmp)
        os.replace(tmp, target)
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(str(target), exc.errno, _reason(exc)) from exc
    finally:
        # the directory itself may be gone or unwritable: then there is no temporary file
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


def _reason(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    hints = {
        errno.ENOSPC: "the disk is full",
        errno.EFBIG: "the file size limit (ulimit -f) is reached",
        errno.ENOENT: "the directory does not exist",
        errno.ENOTDIR: "a component of the path is not a directory",
    }
    hint = hints.get(exc.errno or 0)
    return f"{reason} ({hint})" if hint else reason


def atomic_write_text(path: PathLike, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line endings) to ``path`` atomically."""

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

    atomic_write(path, write)


#: deeper JSON goes to the line-by-line readers, which name it; Arrow's JSON parser recurses,
#: and 100,000 nested arrays overflow the C stack (rows nest 2 deep)
MAX_ARROW_JSON_DEPTH = 64
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_nesting_depth(data: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in ``data``, brackets inside strings counted too
    (an overestimate only sends a file to the line-by-line reader)."""
    brackets = data.translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())
