"""Helpers shared by the readers and writers: reading files, decoding, atomic writes."""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import mmap
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Self

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


#: characters that make a path a glob (when no file has that name)
GLOB_CHARS = ("*", "?", "[")


def is_partitioned(path: PathLike) -> bool:
    """Whether ``path`` names partitions (:mod:`ragmeter.io.partitions`): a folder, or a glob
    that is not an existing file. Here, not there: every reader asks, few read partitions."""
    p = Path(path)
    if p.is_dir():
        return True
    return not p.exists() and any(c in str(path) for c in GLOB_CHARS)


def format_suffix(path: PathLike) -> str:
    """The lower-case extension naming a file's format, beneath a compression extension:
    ``.jsonl`` for ``judgments.jsonl.gz``, ``.txt`` for ``run.txt``, ``""`` for ``run``."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSION_SUFFIXES:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


#: the longest line a reader takes by default (``$RAGMETER_MAX_LINE_BYTES`` sets another)
DEFAULT_MAX_LINE_BYTES = 64 << 20
#: the environment variable setting the longest line, in bytes (``128MiB``, ``1GiB`` too)
MAX_LINE_ENV = "RAGMETER_MAX_LINE_BYTES"
_SIZE = re.compile(r"([0-9]+)\s*(?:([KMG])(?:I?B)?|B)?", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
#: how much decompressed text is read at a time
READ_CHUNK = 1 << 20


def max_line_bytes() -> int:
    """The longest line a text reader takes, in bytes: ``$RAGMETER_MAX_LINE_BYTES`` (a number
    of bytes, or with a unit: ``128MiB``, ``1GiB``), else 64 MiB.

    Every line of a text input is held in memory at once, and a small compressed file can
    expand to one endless line (a "decompression bomb"): beyond the limit, reading stops with
    an error naming the file and the line, before the memory is exhausted."""
    text = os.environ.get(MAX_LINE_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_LINE_BYTES
    match = _SIZE.fullmatch(text)
    value = int(match[1]) * _UNITS[(match[2] or "").upper()] if match else 0
    if value < 1:
        raise InputError(
            f"expected a number of bytes ≥ 1 (e.g. 134217728, 128MiB, 1GiB), got {text!r}",
            source=f"${MAX_LINE_ENV}",
        )
    return value


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def long_line(
    data: bytes | bytearray | mmap.mmap, partial: int, cap: int
) -> tuple[int | None, int]:
    """Where a line longer than ``cap`` bytes starts in ``data`` (negative: in the data
    before it, ``partial`` bytes of whose last line precede ``data``), or ``None``; and the
    bytes of ``data``'s last, unfinished line.

    One search per ``cap`` bytes, not per line: within each window of ``cap + 1`` bytes from
    a line's start, the last newline ends that line and all up to it."""
    first = data.find(b"\n")
    if first == -1:
        return (-partial if partial + len(data) > cap else None), partial + len(data)
    if partial + first > cap:
        return -partial, 0
    start = first + 1
    while True:
        last = data.rfind(b"\n", start, start + cap + 1)
        if last == -1:
            rest = len(data) - start
            return (start if rest > cap else None), rest
        start = last + 1


def line_too_long(source: str, line: int, cap: int) -> InputError:
    """The error of a line longer than ``cap`` bytes."""
    return InputError(
        f"line longer than {_size_text(cap)} (${MAX_LINE_ENV} sets the limit); a file "
        "compressed from one endless line?",
        source=source,
        line=line,
    )


def check_line_lengths(data: bytes | mmap.mmap, source: str, cap: int | None = None) -> None:
    """Refuse a line longer than :func:`max_line_bytes` (or ``cap``), naming its line."""
    cap = max_line_bytes() if cap is None else cap
    if len(data) <= cap:
        return
    bad, _ = long_line(data, 0, cap)
    if bad is not None:
        raise line_too_long(source, _newlines(data, bad) + 1, cap)


def _newlines(data: bytes | mmap.mmap, end: int) -> int:
    """The newlines in ``data[:end]`` (a memory map counted a slice at a time)."""
    if isinstance(data, bytes):
        return data.count(b"\n", 0, end)
    step = 64 << 20
    return sum(data[a : min(a + step, end)].count(b"\n") for a in range(0, end, step))


@contextmanager
def csv_cells(source: str, line: Callable[[], int | None]) -> Iterator[None]:
    """Python's ``csv`` module reading ``source`` with cells up to :func:`max_line_bytes`
    characters (its default limit, 131,072, refuses valid cells: 33 retrieved passages of a
    RAGAS row), set back afterwards; a ``csv.Error`` is an :class:`InputError` naming the
    file and ``line()`` (the reader's line)."""
    import csv

    cap = max_line_bytes()
    old = csv.field_size_limit(cap)
    try:
        yield
    except csv.Error as exc:
        reason = str(exc)
        if "field larger than field limit" in reason:
            reason = f"a cell longer than {_size_text(cap)} (${MAX_LINE_ENV} sets the limit)"
        raise InputError(f"malformed CSV: {reason}", source=source, line=line()) from None
    finally:
        csv.field_size_limit(old)


class _Buffer(io.BytesIO):
    """The decompressed text (``getvalue`` hands over its bytes without a copy)."""


def read_stream(stream: Any, source: str, *, lines: bool = True) -> bytes:
    """All of a (decompressing) ``stream``, read a chunk at a time: in a file of lines
    (``lines``), a line longer than :func:`max_line_bytes` stops the reading with an error
    naming the line; exhausted memory is an error naming ``source``."""
    cap = max_line_bytes() if lines else 0
    out = _Buffer()
    partial = 0
    try:
        while chunk := stream.read(READ_CHUNK):
            bad, partial = long_line(chunk, partial, cap) if lines else (None, 0)
            if bad is not None:
                at = out.tell() + bad
                raise line_too_long(source, out.getbuffer()[:at].tobytes().count(b"\n") + 1, cap)
            out.write(chunk)
        return out.getvalue()
    except MemoryError:
        size = out.tell()
        out = _Buffer()  # what was read is let go before the error is made
        raise InputError(
            f"not enough memory to read it ({size:,} bytes read); free memory, or give a "
            "smaller file",
            source=source,
        ) from None


def decompress(data: bytes, source: str) -> bytes:
    """``data`` decompressed if it starts with a gzip, bzip2, xz or zstd signature, else as
    it is; streamed (:func:`read_stream`: lines capped, exhausted memory named). A corrupt or
    truncated stream is an :class:`InputError` naming ``source``."""
    codec = compression_of(data[:10])
    if codec is None:
        return data
    with _codec_stream(io.BytesIO(data), codec, source) as stream:
        return read_stream(stream, source)


class Closing:
    """What a ``with`` block closes on the way out (by the subclass's :meth:`close`)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _CheckedStream(Closing):
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


@contextmanager
def read_errors(source: str) -> Iterator[None]:
    """A file that cannot be opened or read (missing, unreadable, too large for memory) as an
    :class:`InputError` naming it."""
    try:
        yield
    except FileNotFoundError:
        raise InputError("no such file", source=source) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=source) from None
    except MemoryError:
        raise InputError("not enough memory to read it", source=source) from None


def open_binary(path: PathLike) -> IO[bytes] | _CheckedStream:
    """``path`` opened for reading bytes, decompressed on the fly (gzip, bzip2, xz, zstd;
    recognised by their first bytes) without a temporary copy. A directory, a missing or
    unreadable file is an :class:`InputError`."""
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory; expected a file", source=str(p))
    with read_errors(str(p)):
        fh = p.open("rb")
        head = fh.peek(10)[:10] if hasattr(fh, "peek") else b""
    codec = compression_of(head)
    if codec is None:
        return fh
    return _codec_stream(fh, codec, str(p))


def _codec_stream(fh: IO[bytes], codec: str, source: str) -> _CheckedStream:
    """``fh`` decompressed on the fly by ``codec`` (closed with the returned stream)."""
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
    return _CheckedStream(stream, fh, codec, source)


def read_bytes(path: PathLike, *, lines: bool = True) -> bytes:
    """The bytes of ``path``, decompressed if it is a gzip, bzip2, xz or zstd file (whatever
    its name; streamed, see :func:`read_stream`); a directory, a missing or unreadable file,
    in a file read by lines (``lines``; ``False`` for Parquet and for whole documents, JSON
    and YAML, which ``json.dump`` writes on one line) a line longer than
    :func:`max_line_bytes` is an :class:`InputError`.

    A UTF-8 byte-order mark is refused for every text format (as in TREC files): it would
    otherwise become part of the first id or column name without anyone noticing.
    """
    p = Path(path)
    stream = open_binary(p)
    with stream:
        if isinstance(stream, _CheckedStream):  # decompressed a chunk at a time
            return read_stream(stream, str(p), lines=lines)
        with read_errors(str(p)):
            data = stream.read()
    if lines:
        check_line_lengths(data, str(p))
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


def is_special_file(path: PathLike) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory: a device such as
    ``/dev/null``, or a FIFO. Writers write into it in place (renaming a file over it would
    replace the device) and write no sidecar beside it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def atomic_write(path: PathLike, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place
    (a device or FIFO such as ``/dev/null`` is written in place: :func:`is_special_file`).

    Either the complete new file replaces ``path`` or, if anything fails, ``path`` is left as it
    was and the temporary file is removed: nothing is ever half-written. A failure of the
    system (missing or read-only directory, full disk, file size limit) is an
    :class:`~ragmeter.errors.OutputError` naming ``path``, not the temporary file.
    """
    import secrets  # here: hashlib's OpenSSL costs 4 ms at every start

    target = Path(path)
    if is_special_file(target):  # /dev/null, /dev/stdout, a FIFO: never replaced by a file
        try:
            write(target)
        except OSError as exc:
            raise OutputError(str(target), exc.errno, _reason(exc)) from exc
        return
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


def writable_folder(path: PathLike) -> None:
    """Make the folder ``path`` (and its parents) and check a file can be written in it,
    before any work whose results go there: an :class:`~ragmeter.errors.OutputError` naming
    the folder when it cannot be made (a file in the way, no permission) or written to."""
    import secrets

    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".ragmeter-write-test.{os.getpid()}.{secrets.token_hex(4)}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise OutputError(str(folder), exc.errno, _reason(exc)) from exc


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


def describe(value: Any) -> str:
    """A short description of a value's type for error messages (``"a string"``…)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def json_kind(value: Any) -> str:
    """A JSON value's kind as messages name it (``null``, ``str``, ``list`` ...)."""
    return "null" if value is None else type(value).__name__


def json_id(value: Any, *, source: str, line: int | None, field: str, where: str = "") -> str:
    """An id read from JSON: a string or an integer (a boolean is neither), as text."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(
            f"{where}id is {json_kind(value)} ({value!r}); expected a string or an integer",
            source=source,
            line=line,
            field=field,
        )
    return str(value)
