"""A TREC run file read in blocks of whole queries, so that memory is bounded by the block.

:class:`TrecRunBlocks` cuts the file into byte blocks of about ``block_bytes`` that end where a
query's lines begin (the last query of a read is carried over to the next block whole), and
parses each block with the file reader (:func:`ragmeter.io.trec.parse_trec_run`: the same
paths, checks and messages; line numbers are the file's). Each query's lines must be together
(a run grouped by query, as TREC runs and ragmeter's writers are): a block that ends inside a
query's lines cannot be detected here, so the evaluation checks that no judged query comes back
in a later block (:class:`ragmeter.evaluation.blocks.RepeatedQueryError`), and
:meth:`TrecRunBlocks.line_of` gives the line to name in that error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from ragmeter.core.data import Run
from ragmeter.errors import InputError
from ragmeter.io._common import line_too_long, long_line, max_line_bytes, open_binary
from ragmeter.io.trec import parse_trec_run

#: bytes of run file per block: about 0.9 M lines (9,000 queries × 100) of a typical run
BLOCK_BYTES = 32 << 20


def first_field(line: bytes) -> bytes | None:
    """The query id of a run line; ``None`` for a blank or comment line."""
    parts = line.split(None, 1)
    if not parts or parts[0].startswith(b"#"):
        return None
    return parts[0]


def query_starts(fh: BinaryIO, targets: Iterable[int]) -> list[int]:
    """Offsets in the file ``fh`` (opened in binary mode) where a query's lines begin, one at
    or after each of the ascending ``targets`` (fewer when a query runs to the end of the
    file): cut there, the file's pieces hold whole queries, each with a data line."""
    cuts: list[int] = []
    for target in targets:
        if cuts and target <= cuts[-1]:
            continue
        cut = next_query_start(fh, target)
        if cut is None:
            break
        cuts.append(cut)
    return cuts


_BOM = b"\xef\xbb\xbf"
#: the bytes ``bytes.split()`` splits at (after a query id: its end)
_BLANKS = frozenset(b" \t\n\r\x0b\x0c")


def _same_query(buf: bytearray, pos: int, end: int, query: bytes) -> bool:
    """Whether the line ``buf[pos:end]`` begins with ``query`` and a blank: its first field
    is ``query`` (a line of another kind is left to :func:`first_field`)."""
    after = pos + len(query)
    return after < end and buf[after] in _BLANKS and buf.startswith(query, pos)


def next_query_start(fh: BinaryIO, target: int) -> int | None:
    """The offset of the first line starting at or after ``target`` whose query differs from
    that of the first data line from there (``None``: none before the end of the file).

    A line starting with a UTF-8 byte-order mark is not cut at: a block starting with one
    would be refused, where the whole file reads it as part of a query id. A line longer than
    :func:`~ragmeter.io._common.max_line_bytes` is an error naming it.
    """
    base = max(0, target - 1)
    fh.seek(base)
    skip = target > 0  # the bytes up to the first newline belong to a line begun before target
    first: bytes | None = None
    # the unfinished line, then what was read after it: grown in place and searched once, so
    # that a long line costs its length, not its length squared
    buf = bytearray()
    cap = max_line_bytes()
    while True:
        data = fh.read(1 << 16)
        if skip:  # the rest of a line begun before target: not kept
            base += len(buf)
            buf.clear()
        searched = len(buf)  # the unfinished line holds no newline
        buf += data
        pos = 0
        while True:
            nl = buf.find(b"\n", max(pos, searched))
            if nl < 0:
                if data or pos >= len(buf) or skip:
                    break
                nl = len(buf)  # the last line, without a newline
            if first is not None and _same_query(buf, pos, nl, first):
                pos = nl + 1  # the first query's line (most of them): not copied nor split
                continue
            line, start, pos = bytes(buf[pos:nl]), base + pos, nl + 1
            if skip:
                skip = False
                continue
            qid = first_field(line)
            if qid is None:
                continue
            if first is None or line.startswith(_BOM):
                first = qid
            elif qid != first:
                return start
        if not data:
            return None
        if not skip and len(buf) - pos > cap:  # a line without end: stop before memory does
            raise line_too_long(getattr(fh, "name", "<run>"), _line_at(fh, base + pos), cap)
        base += min(pos, len(buf))
        del buf[:pos]


def _line_at(fh: BinaryIO, offset: int) -> int:
    """The line number of the byte ``offset`` of ``fh`` (for an error; reads up to it)."""
    fh.seek(0)
    return newlines_before(fh, offset) + 1


def newlines_before(fh: BinaryIO, offset: int) -> int:
    """Newlines in the next ``offset`` bytes of ``fh`` (read in pieces of 16 MiB; for the
    line number of an error)."""
    count, left = 0, offset
    while left > 0:
        piece = fh.read(min(left, 16 << 20))
        if not piece:
            break
        count += piece.count(b"\n")
        left -= len(piece)
    return count


def _last_query_start(buffer: bytes, end: int) -> int:
    """Where the lines of the last query in ``buffer[:end]`` (whole lines) begin; 0 when
    that query's lines (and comments) fill it."""
    pos = end
    start = end
    last: bytes | None = None
    while pos > 0:
        begin = buffer.rfind(b"\n", 0, pos - 1) + 1
        qid = first_field(buffer[begin:pos])
        if qid is not None:
            if last is None:
                last = qid
            elif qid != last:
                return start
            start = begin
        pos = begin
    return 0


class TrecRunBlocks:
    """The blocks of a TREC run file, each a :class:`Run` of whole queries.

    Iterate for the parsed blocks, or use :meth:`chunks` and :meth:`parse` to parse them
    elsewhere (another process). ``name`` defaults to the file name, as
    :func:`~ragmeter.io.trec.read_trec_run`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        block_bytes: int = BLOCK_BYTES,
    ) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.name = name or self.path.name
        self.block_bytes = max(1, int(block_bytes))
        self._last: tuple[bytes, int] | None = None
        if self.path.is_dir():
            raise InputError("is a directory; expected a file", source=self.source)

    def __iter__(self) -> Iterator[Run]:
        for chunk, first_line in self.chunks():
            yield self.parse(chunk, first_line)

    def chunks(self) -> Iterator[tuple[bytes, int]]:
        """Byte blocks of whole queries, with the file line number of each one's first line."""
        fh = open_binary(self.path)  # decompressed on the fly (gzip, bzip2, xz, zstd)
        first_line = 1
        carry = b""
        cap, partial = max_line_bytes(), 0
        with fh:
            while True:
                data = fh.read(self.block_bytes)
                buffer = carry + data if carry else data
                bad, partial = long_line(data, partial, cap)
                if bad is not None:  # a line without end: stop before memory does
                    line = first_line + buffer.count(b"\n", 0, len(carry) + bad)
                    raise line_too_long(self.source, line, cap)
                if not data:
                    if buffer or first_line == 1:  # an empty file: the reader's error
                        self._last = (buffer, first_line)
                        yield buffer, first_line
                    return
                end = buffer.rfind(b"\n") + 1
                cut = _last_query_start(buffer, end) if end else 0
                if cut == 0:  # one query so far: read on
                    carry = buffer
                    continue
                chunk, carry = buffer[:cut], buffer[cut:]
                self._last = (chunk, first_line)
                yield chunk, first_line
                first_line += chunk.count(b"\n")

    def parse(self, chunk: bytes, first_line: int) -> Run:
        """The run of one block; an error names the file's line."""
        try:
            return parse_trec_run(chunk, source=self.source, name=self.name)
        except InputError as exc:
            if exc.line is None or first_line == 1:
                raise
            raise InputError(
                exc.reason, source=exc.source, line=exc.line + first_line - 1, field=exc.field
            ) from None

    def line_of(self, query_id: str) -> int | None:
        """The file line of ``query_id``'s first line in the last block read, if there."""
        if self._last is None:
            return None
        chunk, first_line = self._last
        key = query_id.encode()
        for number, line in enumerate(chunk.split(b"\n"), start=first_line):
            if first_field(line) == key:
                return number
        return None
