"""Chunkers that keep offsets (``ragmeter chunk``): fixed windows by hand, the recursive
splitter's invariants, word-piece windows against the tokenizer's own offsets."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.core.judgments import Corpus
from ragmeter.errors import InputError
from ragmeter.io.spans import read_chunks
from ragmeter.pipeline.chunking import chunk_corpus

TEXT = "First paragraph here. It has two sentences.\n\nSecond one is longer. Really.\nEnd."


def _extents(corpus: Corpus, **options: object) -> list[tuple[int, int]]:
    table = chunk_corpus(corpus, **options).table  # type: ignore[arg-type]
    return list(zip(table.starts.tolist(), table.ends.tolist(), strict=True))


def test_fixed_windows_by_hand() -> None:
    corpus = Corpus.from_dict({"d": "abcdefghij", "empty": ""})
    assert _extents(corpus, size=4) == [(0, 4), (4, 8), (8, 10)]
    assert _extents(corpus, size=4, overlap=1) == [(0, 4), (3, 7), (6, 10)]
    assert _extents(corpus, size=10) == [(0, 10)]
    chunking = chunk_corpus(corpus, size=4, overlap=2)
    tag = chunking.table.chunking_id  # the chunking's identity ends every chunk id
    assert chunking.table.chunk_ids.tolist() == [f"d#{n}@{tag}" for n in range(4)]
    assert list(chunking.texts) == ["abcd", "cdef", "efgh", "ghij"]


def test_bad_sizes() -> None:
    corpus = Corpus.from_dict({"d": "abc"})
    with pytest.raises(InputError, match="--overlap"):
        chunk_corpus(corpus, size=4, overlap=4)
    with pytest.raises(InputError, match="--size"):
        chunk_corpus(corpus, size=0)


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet="ab .\n", min_size=0, max_size=300),
    st.integers(1, 40),
    st.integers(0, 39),
)
def test_recursive_chunks_fit_and_cover(text: str, size: int, overlap: int) -> None:
    overlap = min(overlap, size - 1)
    extents = _extents(Corpus.from_dict({"d": text}), size=size, overlap=overlap, recursive=True)
    assert all(0 < e - s <= size for s, e in extents)
    covered = {x for s, e in extents for x in range(s, e)}
    assert covered == set(range(len(text)))  # every character in some chunk
    assert [s for s, _ in extents] == sorted(s for s, _ in extents)


def test_recursive_splits_at_paragraphs_first() -> None:
    extents = _extents(Corpus.from_dict({"d": TEXT}), size=50, recursive=True)
    assert [TEXT[s:e] for s, e in extents] == [
        "First paragraph here. It has two sentences.\n\n",
        "Second one is longer. Really.\nEnd.",
    ]


@pytest.mark.skipif(importlib.util.find_spec("tokenizers") is None, reason="needs tokenizers")
def test_token_windows_follow_the_tokenizer_offsets() -> None:
    import tokenizers

    from ragmeter.pipeline.embeddings import TOKENIZER_PATH

    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_truncation()
    tokenizer.no_padding()  # tokenizer.json pads to 128
    offsets = tokenizer.encode(TEXT, add_special_tokens=False).offsets
    extents = _extents(Corpus.from_dict({"d": TEXT}), size=5, overlap=2, tokens=True)
    firsts = list(range(0, len(offsets), 3))
    want = []
    for first in firsts:
        after = first + 5  # the first word piece after the window
        # from the window's first piece (the document's start for the first) to the next
        # piece's first character (the document's end for the last): no gap between chunks
        start = 0 if first == 0 else offsets[first][0]
        end = offsets[after][0] if after < len(offsets) else len(TEXT)
        want.append((start, end))
        if after >= len(offsets):
            break
    assert extents == want


def test_chunk_command_writes_table_and_texts(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(json.dumps({"id": "d", "text": "abcdefghij"}) + "\n", encoding="utf-8")
    table, texts = tmp_path / "t.csv", tmp_path / "x.jsonl"
    args = ["chunk", str(corpus), "--size", "4", "--overlap", "1"]
    result = CliRunner().invoke(app, [*args, "--table", str(table), "--texts", str(texts)])
    assert result.exit_code == 0, result.stderr
    read = read_chunks(table)
    tag = read.chunking_id
    assert tag is not None and len(tag) == 8
    assert read.chunk_ids.tolist() == [f"d#{n}@{tag}" for n in range(3)]
    assert read.ends.tolist() == [4, 7, 10]
    rows = [json.loads(line) for line in texts.read_text().splitlines()]
    assert rows == [
        {"id": f"d#0@{tag}", "text": "abcd"},
        {"id": f"d#1@{tag}", "text": "defg"},
        {"id": f"d#2@{tag}", "text": "ghij"},
    ]


_HAS_TOKENIZERS = importlib.util.find_spec("tokenizers") is not None
#: letters, spaces of several kinds, punctuation, a combining mark and a control character
#: (which the word-piece tokenizer skips), so that gaps between word pieces occur everywhere
_ALPHABET = st.sampled_from([*"ab Zü.\n\t,\u00a0\u0301\x07-", "  ", "\n\n", ". "])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(_ALPHABET, max_size=120).map("".join),
    st.integers(1, 12),
    st.integers(0, 11),
    st.booleans(),
    st.booleans() if _HAS_TOKENIZERS else st.just(False),
)
def test_chunks_cover_every_character(
    text: str, size: int, overlap: int, recursive: bool, tokens: bool
) -> None:
    """Issue #39 (T12): whatever the chunker, the chunks of a document cover [0, len): no
    character (leading or trailing space, the gap between two word pieces) is in no chunk;
    without overlap each character is in exactly one."""
    overlap = min(overlap, size - 1)
    options = {"size": size, "overlap": overlap, "recursive": recursive, "tokens": tokens}
    extents = _extents(Corpus.from_dict({"d": text}), **options)
    assert all(0 <= s <= e <= len(text) for s, e in extents)
    depth = [0] * len(text)
    for s, e in extents:
        for x in range(s, e):
            depth[x] += 1
    assert all(d >= 1 for d in depth), (text, extents)
    if overlap == 0:
        assert all(d == 1 for d in depth), (text, extents)


@pytest.mark.skipif(not _HAS_TOKENIZERS, reason="needs tokenizers")
def test_token_chunks_of_a_document_that_is_all_evidence_recall_1(tmp_path: Path) -> None:
    """The repro of T12: every chunk of a document retrieved, the whole document evidence:
    span_recall is 1 (it was 0.9972 with 19 characters between chunks in none)."""
    from ragmeter import Run, evaluate
    from ragmeter.core.spans import SpanInputs, SpanLabels

    text = "Trams run  every ten minutes.\n\nFerries, twice an hour.  "
    chunking = chunk_corpus(Corpus.from_dict({"d": text}), size=3, tokens=True)
    spans = SpanLabels.from_rows([("q1", "d", 0, len(text))])
    run = Run.from_lists({"q1": chunking.table.chunk_ids.tolist()})
    result = evaluate(run, None, ["span_recall"], spans=SpanInputs(spans, chunking.table))
    assert result.means()[run.name]["span_recall"] == 1.0


# -- the chunking's record (issue #39, item 12) -----------------------------------------------


def _record_id(corpus: dict[str, str], **options: object) -> str | None:
    return chunk_corpus(Corpus.from_dict(corpus), **options).table.chunking_id  # type: ignore[arg-type]


def test_the_chunking_id_is_its_parameters_and_documents() -> None:
    """The same documents cut the same way have one id; another size, overlap, splitter,
    unit or document text another."""
    import hashlib

    docs = {"d": "abcdefghij", "e": "klmno"}
    same = _record_id(docs, size=4)
    assert same == _record_id(dict(docs), size=4)
    others = [
        _record_id(docs, size=5),
        _record_id(docs, size=4, overlap=1),
        _record_id(docs, size=4, recursive=True),
        _record_id({"d": "abcdefghiJ", "e": "klmno"}, size=4),
    ]
    assert len({same, *others}) == 5
    # the id is the SHA-256 of the record's other fields (sorted JSON), written out here
    table = chunk_corpus(Corpus.from_dict(docs), size=4).table
    assert table.chunking is not None
    record = {k: v for k, v in table.chunking.items() if k not in ("id", "rows")}
    documents = hashlib.sha256(
        b"".join(json.dumps([d, t]).encode() + b"\n" for d, t in docs.items())
    ).hexdigest()
    assert record == {
        "chunker": "ragmeter chunk",
        "version": 2,
        "unit": "characters",
        "size": 4,
        "overlap": 0,
        "recursive": False,
        "documents": f"sha256:{documents}",
    }
    text = json.dumps(record, sort_keys=True).encode()
    assert table.chunking["id"] == hashlib.sha256(text).hexdigest()[:8]


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_the_record_travels_with_the_table(tmp_path: Path, suffix: str) -> None:
    """The record lies beside the table (FILE.chunking.json), whose rows stay rows only;
    read back, the rows are checked against the record's digest."""
    from ragmeter.io.spans import chunking_sidecar, write_chunks

    table = chunk_corpus(Corpus.from_dict({"d": "abcdefghij"}), size=4).table
    path = tmp_path / f"chunks.{suffix}"
    write_chunks(table, path)
    assert json.loads(chunking_sidecar(path).read_text()) == {
        "chunking": dict(table.chunking or {})
    }
    if suffix == "jsonl":  # every line a chunk, for any tool that reads the table
        assert all("chunk_id" in json.loads(line) for line in path.read_text().splitlines())
    read = read_chunks(path)
    assert read.chunking == table.chunking and read.chunk_ids.tolist() == table.chunk_ids.tolist()


def test_an_edited_table_and_an_old_table(tmp_path: Path) -> None:
    from ragmeter.io.spans import chunking_sidecar, write_chunks

    table = chunk_corpus(Corpus.from_dict({"d": "abcdefghij"}), size=4).table
    path = tmp_path / "chunks.jsonl"
    write_chunks(table, path)
    lines = path.read_text().splitlines()
    # an edited extent no longer matches the record's digest: an error, not a silent score
    edited = [lines[0], lines[1].replace('"end": 8', '"end": 9'), *lines[2:]]
    path.write_text("\n".join(edited) + "\n")
    with pytest.raises(InputError, match="rows differ") as caught:
        read_chunks(path)
    assert caught.value.field == "chunking"
    # a record that is not one
    chunking_sidecar(path).write_text('{"chunking": 5}\n')
    with pytest.raises(InputError, match="field 'chunking'"):
        read_chunks(path)
    # a table without a record (written before it existed, or by hand) reads as before; a
    # table written without one removes a record left beside it
    chunking_sidecar(path).unlink()
    old = read_chunks(path)
    assert old.chunking is None and len(old) == 3
    write_chunks(table, path)
    write_chunks(old, path)
    assert not chunking_sidecar(path).exists() and read_chunks(path).chunking is None
