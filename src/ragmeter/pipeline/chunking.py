"""Chunkers that keep offsets: a corpus of documents cut into chunks whose extents (character
offsets, end exclusive) go into a :class:`~ragmeter.core.spans.ChunkTable`, so that span labels
score the chunking (:mod:`ragmeter.metrics.spans`).

* fixed size (the default): windows of ``size`` characters (or, with ``tokens=True``, word
  pieces of the shipped all-MiniLM-L6-v2 tokenizer) every ``size − overlap``;
* ``recursive=True``: LangChain's recursive character splitting, offsets kept: a piece longer
  than ``size`` is split at the first of ``"\\n\\n"``, ``"\\n"``, ``". "``, ``" "`` it holds
  (each separator stays with the piece before it), down to fixed windows; consecutive pieces
  are then merged while they fit in ``size``, and each chunk begins with the trailing pieces
  of the one before that fit in ``overlap``.

A chunk's text is ``document[start:end]``; chunk ids are ``DOC#N@ID`` (N from 0 in each
document, ID the chunking's identity: :func:`chunking_record`), so that a run over one
chunking never finds its ids in the table of another. Every character of a document is in a
chunk: the chunks cover ``[0, len)`` (without overlap, each character is in exactly one).
With ``tokens=True`` a chunk runs from its first word piece's first character to the next
word piece's first character: the white space after a piece (and anything the tokenizer
skips) belongs to the chunk before it, the text before the first piece to the first chunk,
the text after the last piece to the last.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.core.judgments import Corpus
from ragmeter.core.spans import ChunkTable
from ragmeter.errors import InputError, MissingExtraError

SEPARATORS = ("\n\n", "\n", ". ", " ")
Measure = Callable[[int, int], int]


@dataclass(frozen=True)
class Chunking:
    """A chunk table and each chunk's text (``{"id", "text"}`` rows for ``ragmeter
    retrieve``)."""

    table: ChunkTable
    texts: tuple[str, ...]

    def rows(self) -> list[dict[str, str]]:
        return [
            {"id": str(c), "text": t} for c, t in zip(self.table.chunk_ids, self.texts, strict=True)
        ]


#: the version of the chunkers' rules, in the chunking's identity (2: the gaps between word
#: pieces belong to a chunk)
CHUNKER_VERSION = 2


def chunking_record(
    corpus: Corpus,
    *,
    size: int,
    overlap: int,
    tokens: bool,
    recursive: bool,
    tokenizer_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """What a chunking is made of: the chunker's parameters, the tokenizer's and the
    documents' SHA-256, and ``id``, the first 8 hex digits of the SHA-256 of all of them (the
    chunking's identity: the same documents cut the same way have the same id, and any other
    chunking another)."""
    from ragmeter.pipeline.embeddings import TOKENIZER_PATH

    documents = hashlib.sha256()
    for doc, text in zip(corpus.doc_ids.to_pylist(), corpus.texts.to_pylist(), strict=True):
        documents.update(json.dumps([doc, text], ensure_ascii=False).encode("utf-8") + b"\n")
    record: dict[str, Any] = {
        "chunker": "ragmeter chunk",
        "version": CHUNKER_VERSION,
        "unit": "tokens" if tokens else "characters",
        "size": size,
        "overlap": overlap,
        "recursive": recursive,
    }
    if tokens:
        path = Path(tokenizer_path) if tokenizer_path else TOKENIZER_PATH
        record["tokenizer"] = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    record["documents"] = "sha256:" + documents.hexdigest()
    canonical = json.dumps(record, sort_keys=True).encode("utf-8")
    record["id"] = hashlib.sha256(canonical).hexdigest()[:8]
    return record


def chunk_corpus(
    corpus: Corpus,
    *,
    size: int,
    overlap: int = 0,
    tokens: bool = False,
    recursive: bool = False,
    tokenizer_path: str | os.PathLike[str] | None = None,
) -> Chunking:
    """Cut every document of ``corpus`` (see the module docstring); the table carries the
    chunking's record (:func:`chunking_record`), and its chunk ids the chunking's id."""
    if size < 1:
        raise InputError(f"must be ≥ 1, got {size}", field="--size")
    if not 0 <= overlap < size:
        raise InputError(f"must be ≥ 0 and < the size {size}, got {overlap}", field="--overlap")
    tokenizer = _tokenizer(tokenizer_path) if tokens else None
    record = chunking_record(
        corpus,
        size=size,
        overlap=overlap,
        tokens=tokens,
        recursive=recursive,
        tokenizer_path=tokenizer_path,
    )
    rows: list[tuple[str, str, int, int]] = []
    texts: list[str] = []
    for doc, text in zip(corpus.doc_ids.to_pylist(), corpus.texts.to_pylist(), strict=True):
        if tokenizer is not None:
            offsets = tokenizer.encode(text, add_special_tokens=False).offsets
            extents = _token_chunks(text, offsets, size, overlap, recursive)
        else:
            extents = _char_chunks(text, size, overlap, recursive)
        for i, (start, end) in enumerate(extents):
            rows.append((f"{doc}#{i}@{record['id']}", str(doc), start, end))
            texts.append(text[start:end])
    table = ChunkTable.from_rows(rows, source=f"{corpus.name} chunks")
    return Chunking(table.with_chunking(record), tuple(texts))


def _char_chunks(text: str, size: int, overlap: int, recursive: bool) -> list[tuple[int, int]]:
    def length(start: int, end: int) -> int:
        return end - start

    if recursive:
        return _recursive(text, length, size, overlap)
    return _windows(len(text), size, overlap)


def _windows(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """``[start, start + size)`` every ``size − overlap`` until the end is reached."""
    out = []
    start = 0
    while start < n:
        out.append((start, min(start + size, n)))
        if start + size >= n:
            break
        start += size - overlap
    return out


def _token_chunks(
    text: str, offsets: list[tuple[int, int]], size: int, overlap: int, recursive: bool
) -> list[tuple[int, int]]:
    starts = np.array([s for s, _ in offsets], dtype=np.int64)

    def to_chars(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
        # a window of word pieces [a, b) runs from its first piece's first character (the
        # document's start for the first window) to the next piece's first character (the
        # document's end for the last): the spaces after a piece, and characters the
        # tokenizer skips, belong to the chunk before them, so every character is in one
        bound = [*starts.tolist(), len(text)]
        return [(0 if a == 0 else bound[a], bound[b]) for a, b in windows if b > a]

    if not recursive:
        if not len(offsets):  # no word piece (white space only): one chunk, if any text
            return [(0, len(text))] if text else []
        return to_chars(_windows(len(offsets), size, overlap))

    def length(start: int, end: int) -> int:  # word pieces beginning in [start, end)
        return int(np.searchsorted(starts, end) - np.searchsorted(starts, start))

    def hard(begin: int, end: int) -> list[tuple[int, int]]:
        first = int(np.searchsorted(starts, begin))
        last = int(np.searchsorted(starts, end))
        pieces = [(first + a, first + b) for a, b in _windows(last - first, size, 0)]
        bounds = [int(starts[a]) for a, _ in pieces] + [end]
        bounds[0] = begin
        return [(bounds[i], bounds[i + 1]) for i in range(len(pieces))]

    return _recursive(text, length, size, overlap, hard=hard)


def _recursive(
    text: str,
    length: Measure,
    size: int,
    overlap: int,
    *,
    hard: Callable[[int, int], list[tuple[int, int]]] | None = None,
) -> list[tuple[int, int]]:
    def fixed(begin: int, end: int) -> list[tuple[int, int]]:
        if hard is not None:
            return hard(begin, end)
        return [(begin + a, begin + b) for a, b in _windows(end - begin, size, 0)]

    pieces = _split(text, 0, len(text), SEPARATORS, length, size, fixed)
    return _merge(pieces, length, size, overlap)


def _split(
    text: str,
    begin: int,
    end: int,
    separators: tuple[str, ...],
    length: Measure,
    size: int,
    fixed: Callable[[int, int], list[tuple[int, int]]],
) -> list[tuple[int, int]]:
    """``[begin, end)`` as pieces of at most ``size`` (each separator kept with the piece
    before it)."""
    if length(begin, end) <= size:
        return [(begin, end)] if end > begin else []
    for k, sep in enumerate(separators):
        cuts = []
        at = text.find(sep, begin, end)
        while at != -1 and at + len(sep) < end:
            cuts.append(at + len(sep))
            at = text.find(sep, at + len(sep), end)
        if not cuts:
            continue
        bounds = [begin, *cuts, end]
        out: list[tuple[int, int]] = []
        for a, b in itertools.pairwise(bounds):
            out.extend(_split(text, a, b, separators[k + 1 :], length, size, fixed))
        return out
    return fixed(begin, end)


def _merge(
    pieces: list[tuple[int, int]], length: Measure, size: int, overlap: int
) -> list[tuple[int, int]]:
    """Consecutive pieces merged while they fit in ``size``; each chunk after the first
    starts with the trailing pieces of the one before that fit in ``overlap``."""
    chunks: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    for piece in pieces:
        if current and length(current[0][0], piece[1]) > size:
            chunks.append((current[0][0], current[-1][1]))
            # without overlap nothing is carried over, not even a piece of length 0 (white
            # space between word pieces), so that each character is in one chunk
            while current and (
                overlap == 0
                or length(current[0][0], current[-1][1]) > overlap
                or length(current[0][0], piece[1]) > size
            ):
                current.pop(0)
        current.append(piece)
    if current:
        chunks.append((current[0][0], current[-1][1]))
    return chunks


def _tokenizer(path: str | os.PathLike[str] | None) -> Any:
    """The shipped all-MiniLM-L6-v2 tokenizer (or ``path``), without truncation or padding."""
    from ragmeter.pipeline.embeddings import TOKENIZER_PATH

    try:
        import tokenizers
    except ImportError as exc:
        raise MissingExtraError("token chunking", package="tokenizers", extra="models") from exc
    tokenizer = tokenizers.Tokenizer.from_file(str(Path(path) if path else TOKENIZER_PATH))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer
