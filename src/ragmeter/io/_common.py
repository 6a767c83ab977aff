"""Helpers shared by the readers and writers: reading files, decoding, atomic writes."""

from __future__ import annotations

import bz2
import errno
import gzip
import lzma
import os
import re
import zlib
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

import numpy as np

from ragmeter.errors import InputError, OutputError

PathLike = str | os.PathLike[str]

BOM = b"\xef\xbb\xbf"

#: a grade that C ``atol``, Python ``int`` and Arrow read alike: ASCII digits only
GRADE_SYNTAX = r"[+-]?[0-9]+"
#: a number that C ``atof``, Python ``float`` and Arrow read alike: decimal notation only (no
#: ``1_0``, hexadecimal, non-ASCII digits, ``inf`` or ``nan``, which C reads differently or not)
SCORE_SYNTAX = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"


#: the extensions of the compressed files every reader takes, and their codec
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}

# Compressed files are recognised by their first bytes, whatever their name. None of these
# starts valid UTF-8 text except bzip2's "BZh", so bzip2 also needs its block (or empty
# stream) signature: a TREC query id "BZh1" is not taken for a compressed file.
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
_BZIP2 = re.compile(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)")
#: what a corrupt or truncated stream raises in the codecs (Arrow's zstd: OSError)
_CODEC_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError)


def compression_of(head: bytes) -> str | None:
    """The codec (``gzip``, ``bz2``, ``xz``, ``zstd``) whose signature ``head`` starts with."""
    for magic, codec in _MAGIC:
        if head.startswith(magic):
            return codec
    return "bz2" if _BZIP2.match(head) else None


def format_suffix(path: PathLike) -> str:
    """The lower-case extension naming a file's format, beneath a compression extension:
    ``.jsonl`` for ``judgments.jsonl.gz``, ``.txt`` for ``run.txt``, ``""`` for ``run``."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSION_SUFFIXES:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def decompress(data: bytes, source: str) -> bytes:
    """``data`` decompressed if it starts with a gzip, bzip2, xz or zstd signature, else as
    it is. A corrupt or truncated stream is an :class:`InputError` naming ``source``."""
    codec = compression_of(data[:10])
    if codec is None:
        return data
    try:
        if codec == "gzip":
            return gzip.decompress(data)
        if codec == "bz2":
            return bz2.decompress(data)
        if codec == "xz":
            return lzma.decompress(data)
        import pyarrow as pa

        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
            return bytes(stream.read())
    except _CODEC_ERRORS as exc:
        raise InputError(f"corrupt or truncated {codec} data: {exc}", source=source) from None


class _CheckedStream:
    """A decompressing stream whose codec errors are :class:`InputError` naming the file."""

    def __init__(self, stream: Any, raw: IO[bytes], codec: str, source: str) -> None:
        self._stream = stream
        self._raw = raw  # the codecs leave a file object they were given open
        self._codec = codec
        self._source = source

    def read(self, size: int = -1) -> bytes:
        try:
            return bytes(self._stream.read(size) if size >= 0 else self._stream.read())
        except _CODEC_ERRORS as exc:
            message = f"corrupt or truncated {self._codec} data: {exc}"
            raise InputError(message, source=self._source) from None

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            self._raw.close()

    def __enter__(self) -> _CheckedStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_binary(path: PathLike) -> IO[bytes] | _CheckedStream:
    """``path`` opened for reading bytes, decompressed on the fly (gzip, bzip2, xz, zstd;
    recognised by their first bytes) without a temporary copy. A directory, a missing or
    unreadable file is an :class:`InputError`."""
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory; expected a file", source=str(p))
    try:
        fh = p.open("rb")
        head = fh.peek(10)[:10] if hasattr(fh, "peek") else b""
    except FileNotFoundError:
        raise InputError("no such file", source=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=str(p)) from None
    codec = compression_of(head)
    if codec is None:
        return fh
    # the codecs' streams are closed by the caller, through the returned object
    stream: Any
    if codec == "gzip":
        stream = gzip.GzipFile(fileobj=fh)
    elif codec == "bz2":
        stream = bz2.BZ2File(fh)
    elif codec == "xz":
        stream = lzma.LZMAFile(fh)  # noqa: SIM115 (closed by the caller)
    else:
        import pyarrow as pa

        stream = pa.CompressedInputStream(pa.PythonFile(fh, mode="r"), "zstd")
    return _CheckedStream(stream, fh, codec, str(p))


def read_bytes(path: PathLike) -> bytes:
    """The bytes of ``path``, decompressed if it is a gzip, bzip2, xz or zstd file (whatever
    its name); a directory, a missing or unreadable file is an :class:`InputError`.

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
    return decompress(data, str(p))


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
    import secrets  # here: hashlib's OpenSSL costs 4 ms at every start

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
