"""Compressed inputs: gzip, bzip2, xz and zstd files are read as the files they contain.

Each reader is checked against the uncompressed file it was made from (the expected value
is what the same reader reads from the plain file), the CLI's output against the plain
file's output, and the errors name the compressed file and the line of its content.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import lzma
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.io._common import compression_of, decompress, format_suffix, read_bytes
from ragmeter.io.judgments import detect_judgments_format, read_judgments, read_questions
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.io.trec_blocks import TrecRunBlocks

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return bytes(sink.getvalue().to_pybytes())


CODECS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": (".gz", gzip.compress),
    "bz2": (".bz2", bz2.compress),
    "xz": (".xz", lzma.compress),
    "zstd": (".zst", _zstd),
}


def compressed_copy(src: Path, folder: Path, codec: str) -> Path:
    suffix, compress = CODECS[codec]
    target = folder / (src.name + suffix)
    target.write_bytes(compress(src.read_bytes()))
    return target


def same_run(a: Any, b: Any) -> None:
    assert list(a.query_ids) == list(b.query_ids)
    assert np.array_equal(a.offsets, b.offsets)
    assert a.doc_ids.to_pylist() == b.doc_ids.to_pylist()
    assert np.array_equal(a.scores, b.scores)


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_signatures_and_round_trip(codec: str) -> None:
    payload = b"q1 Q0 d1 1 2.5 tag\n" * 100
    data = CODECS[codec][1](payload)
    assert compression_of(data[:10]) == codec
    assert decompress(data, "x") == payload


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_trec_run_and_qrels(codec: str, tmp_path: Path) -> None:
    run = compressed_copy(EXAMPLES / "run_bm25.txt", tmp_path, codec)
    qrels = compressed_copy(EXAMPLES / "qrels.txt", tmp_path, codec)
    same_run(read_run(run), read_run(EXAMPLES / "run_bm25.txt"))
    got, want = read_qrels(qrels), read_qrels(EXAMPLES / "qrels.txt")
    assert list(got.query_ids) == list(want.query_ids)
    assert got.doc_ids.to_pylist() == want.doc_ids.to_pylist()
    assert np.array_equal(got.grades, want.grades)


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_run_blocks_stream_the_compressed_file(codec: str, tmp_path: Path) -> None:
    run = compressed_copy(EXAMPLES / "run_bm25.txt", tmp_path, codec)
    plain = list(TrecRunBlocks(EXAMPLES / "run_bm25.txt", block_bytes=256))
    blocks = list(TrecRunBlocks(run, block_bytes=256))
    assert len(blocks) == len(plain) > 1
    for got, want in zip(blocks, plain, strict=True):
        same_run(got, want)


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_jsonl_judgments_and_questions(codec: str, tmp_path: Path) -> None:
    crux = EXAMPLES / "crux"
    judgments = compressed_copy(crux / "judgments.jsonl", tmp_path, codec)
    questions = compressed_copy(crux / "questions.jsonl", tmp_path, codec)
    assert detect_judgments_format(judgments) == "jsonl"
    assert read_questions(questions) == read_questions(crux / "questions.jsonl")
    got = read_judgments(judgments)
    want = read_judgments(crux / "judgments.jsonl")
    assert list(got.query_ids) == list(want.query_ids)
    assert got.doc_ids.to_pylist() == want.doc_ids.to_pylist()
    for name in ("offsets", "widths", "ratings", "rating_offsets"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert got.questions == want.questions


def test_parquet_and_csv_runs(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    want = read_run(EXAMPLES / "run_bm25.txt")
    rows = [
        (str(q), d, float(s))
        for i, q in enumerate(want.query_ids)
        for d, s in zip(
            want.doc_ids.to_pylist()[want.offsets[i] : want.offsets[i + 1]],
            want.scores[want.offsets[i] : want.offsets[i + 1]],
            strict=True,
        )
    ]
    table = pa.table(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[1] for r in rows],
            "score": [r[2] for r in rows],
        }
    )
    pq.write_table(table, tmp_path / "run.parquet")
    csv = "query_id,doc_id,score\n" + "".join(f"{q},{d},{s!r}\n" for q, d, s in rows)
    (tmp_path / "run.csv").write_text(csv)
    for plain in (tmp_path / "run.parquet", tmp_path / "run.csv"):
        packed = compressed_copy(plain, tmp_path, "gzip")
        same_run(read_run(packed), read_run(plain))


def test_format_comes_from_the_name_beneath_the_compression() -> None:
    assert format_suffix("judgments.jsonl.gz") == ".jsonl"
    assert format_suffix("RUN.TXT.ZST") == ".txt"
    assert format_suffix("run.v2.parquet.xz") == ".parquet"
    assert format_suffix("run.gz") == ""
    assert format_suffix("run") == ""
    assert format_suffix("run.txt") == ".txt"


def test_a_bad_line_is_named_in_the_compressed_file(tmp_path: Path) -> None:
    bad = tmp_path / "run.txt.gz"
    bad.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 oops t\n"))
    with pytest.raises(InputError) as err:
        read_run(bad)
    assert err.value.source == str(bad)
    assert err.value.line == 2


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_a_truncated_file_is_a_clear_error(codec: str, tmp_path: Path) -> None:
    data = CODECS[codec][1](b"q1 Q0 d1 1 2.0 t\n" * 5000)
    cut = tmp_path / ("run.txt" + CODECS[codec][0])
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=f"corrupt or truncated {codec} data") as err:
        read_run(cut)
    assert err.value.source == str(cut)
    with pytest.raises(InputError, match=f"corrupt or truncated {codec} data"):
        list(TrecRunBlocks(cut, block_bytes=1024))


def test_a_query_id_like_a_bzip2_signature_is_text(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_bytes(b"BZh91 Q0 d1 1 2.0 t\n")
    assert compression_of(run.read_bytes()[:10]) is None
    assert list(read_run(run).query_ids) == ["BZh91"]


@given(st.text(max_size=60))
def test_text_is_never_taken_for_a_compressed_stream(text: str) -> None:
    data = text.encode("utf-8")
    assert compression_of(data[:10]) is None
    assert decompress(data, "x") == data


def test_read_bytes_of_a_missing_compressed_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_bytes(tmp_path / "nothing.txt.gz")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args], capture_output=True, text=True, check=False
    )


def test_evaluate_and_trec_eval_read_compressed_files(tmp_path: Path) -> None:
    run = compressed_copy(EXAMPLES / "run_bm25.txt", tmp_path, "gzip")
    qrels = compressed_copy(EXAMPLES / "qrels.txt", tmp_path, "xz")
    plain_run, plain_qrels = str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "qrels.txt")
    measures = ["-m", "ndcg@10", "-m", "map", "-f", "json"]
    got = _cli("evaluate", str(run), "--qrels", str(qrels), *measures)
    want = _cli("evaluate", plain_run, "--qrels", plain_qrels, *measures)
    assert got.returncode == want.returncode == 0, got.stderr
    # the file names differ, nothing else (the labels' description names the qrels file)
    got_text = got.stdout.replace(run.name, "RUN").replace(qrels.name, "QRELS")
    assert got_text == want.stdout.replace("run_bm25.txt", "RUN").replace("qrels.txt", "QRELS")
    got = _cli("trec-eval", str(qrels), str(run))
    want = _cli("trec-eval", plain_qrels, plain_run)
    assert got.returncode == want.returncode == 0, got.stderr
    assert got.stdout == want.stdout


# -- decompression bombs: streamed, lines capped ---------------------------------------------


@functools.cache
def _endless(codec: str, size: int) -> bytes:
    """``size`` bytes of ``d`` and a newline (one line), compressed by ``codec`` without
    holding the uncompressed bytes."""
    block = b"d" * (1 << 20)
    if codec == "zstd":
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as out:
            for _ in range(size >> 20):
                out.write(block)
            out.write(b"\n")
        return bytes(sink.getvalue().to_pybytes())
    import zlib

    packer: Any = {
        "gzip": lambda: zlib.compressobj(9, zlib.DEFLATED, 31),
        "bz2": lambda: bz2.BZ2Compressor(9),
        "xz": lzma.LZMACompressor,
    }[codec]()
    parts = [packer.compress(block) for _ in range(size >> 20)]
    return b"".join([*parts, packer.compress(b"\n"), packer.flush()])


def _bomb(codec: str, head: bytes, size: int) -> bytes:
    """``head``, then one line of ``size`` bytes: two streams (members, frames) of ``codec``
    one after the other, which every codec's reader reads as one."""
    return CODECS[codec][1](head) + _endless(codec, size)


#: the readers and a first line of theirs that is valid, before the endless line 2
BOMB_READERS: dict[str, tuple[str, Callable[[Path], Any], bytes]] = {
    "run": (".trec", read_run, b"q Q0 a 1 2.0 t\n"),
    "qrels": (".qrels", read_qrels, b"q 0 a 1\n"),
    "jsonl": (".jsonl", read_judgments, b'{"query_id": "q", "doc_id": "a", "ratings": [1]}\n'),
    "csv": (".csv", read_run, b"qid,docid,score\n"),
}


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("reader", list(BOMB_READERS))
def test_a_compressed_endless_line_is_refused_while_streaming(
    codec: str, reader: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small file expanding to one endless line (``gzip.decompress`` of the whole, then a
    MemoryError): the decompression is streamed and stops at the line limit, an error
    naming the file and the line; the memory held stays near the limit."""
    import tracemalloc

    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "4MiB")
    suffix, read, first = BOMB_READERS[reader]
    path = tmp_path / f"bomb{suffix}{CODECS[codec][0]}"
    path.write_bytes(_bomb(codec, first, 64 << 20))
    assert path.stat().st_size < (64 << 20) // 100
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    error = caught.value
    assert error.source == str(path) and error.line == 2, str(error)
    assert "longer than 4 MiB" in str(error) and "RAGMETER_MAX_LINE_BYTES" in str(error)
    assert peak < 32 << 20  # not the 64 MiB the file expands to (xz's own: 8 MiB)


def test_the_line_limit_holds_for_plain_files_and_streamed_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragmeter

    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "1000")
    long_line = b"q Q0 " + b"d" * 1000 + b" 2 1.0 t\n"
    plain = tmp_path / "run.trec"
    plain.write_bytes(b"q Q0 a 1 2.0 t\nq Q0 b 1 2.0 t\nq Q0 c 1 2.0 t\n" + long_line)
    with pytest.raises(InputError, match="longer than 1000 bytes") as caught:
        read_run(plain)
    assert caught.value.line == 4
    monkeypatch.setattr("ragmeter.io.trec.MAP_THRESHOLD", 1)  # memory-mapped, as large files
    with pytest.raises(InputError, match="longer than 1000 bytes") as caught:
        read_run(plain)
    assert caught.value.line == 4
    monkeypatch.undo()
    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "1000")
    jsonl = tmp_path / "j.jsonl"
    jsonl.write_bytes(b'{"query_id": "q", "doc_id": "a", "ratings": [1]}\n' + b" " * 1001 + b"\n")
    with pytest.raises(InputError, match="longer than 1000 bytes") as caught:
        read_judgments(jsonl)
    assert caught.value.line == 2
    # a compressed TREC run is streamed in blocks by the evaluation: the same limit
    packed = tmp_path / "run.trec.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    qrels = ragmeter.Qrels.from_dict({"q": {"a": 1}})
    with pytest.raises(InputError, match="longer than 1000 bytes") as caught:
        ragmeter.evaluate(packed, qrels, ["map"])
    assert (caught.value.source, caught.value.line) == (str(packed), 4)
    blocks = TrecRunBlocks(packed, block_bytes=64)
    with pytest.raises(InputError, match="longer than 1000 bytes") as caught:
        list(blocks)
    assert caught.value.line == 4
    # lines up to the limit are read
    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", str(len(long_line) - 1))
    assert len(read_run(plain)) == 4 and len(read_run(packed)) == 4
    assert sum(len(r) for r in TrecRunBlocks(packed, block_bytes=64)) == 4


@pytest.mark.parametrize("value", ["0", "-5", "lots", "1.5MiB", "64 TB"])
def test_a_bad_line_limit_is_named(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", value)
    path = tmp_path / "run.trec"
    path.write_bytes(b"q Q0 a 1 2.0 t\n")
    with pytest.raises(InputError, match="RAGMETER_MAX_LINE_BYTES") as caught:
        read_run(path)
    assert repr(value) in str(caught.value)


def test_the_default_line_limit_is_64_mib(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.io._common import max_line_bytes

    monkeypatch.delenv("RAGMETER_MAX_LINE_BYTES", raising=False)
    assert max_line_bytes() == 64 << 20
    for text, value in [("128MiB", 128 << 20), ("2 GiB", 2 << 30), ("512k", 512 << 10)]:
        monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", text)
        assert max_line_bytes() == value


def test_memory_exhaustion_is_one_line_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    path = tmp_path / "qrels.txt.gz"
    path.write_bytes(gzip.compress(b"q 0 a 1\n" * 1000))

    def no_memory(self: io.BytesIO, data: Any) -> int:
        raise MemoryError

    monkeypatch.setattr("ragmeter.io._common._Buffer.write", no_memory)
    with pytest.raises(InputError, match="not enough memory") as caught:
        read_qrels(path)
    assert caught.value.source == str(path)


def test_a_long_line_in_a_plain_streamed_run_is_refused_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain TREC run with a line of many MiB: cutting the file into ranges copied the
    line once per 64 KiB read (quadratic: minutes for 200 MB); the line limit holds."""
    import time

    import ragmeter
    from ragmeter.evaluation import stream

    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "1MiB")
    monkeypatch.setattr(stream, "BLOCK_BYTES", 1 << 20)
    path = tmp_path / "run.trec"
    with path.open("wb") as fh:
        fh.write(b"q0 Q0 a 1 1.0 t\n" * 10 + b"q1 Q0 ")
        fh.write(b"d" * (24 << 20))
        fh.write(b" 1 1.0 t\nq2 Q0 a 1 1.0 t\n")
    qrels = ragmeter.Qrels.from_dict({"q0": {"a": 1}})
    started = time.perf_counter()
    with pytest.raises(InputError, match="longer than 1 MiB") as caught:
        ragmeter.evaluate(path, qrels, ["map"])
    assert (caught.value.source, caught.value.line) == (str(path), 11)
    assert time.perf_counter() - started < 10


def test_parquet_is_not_held_to_the_line_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parquet is binary: a stretch of bytes without a newline byte is no line."""
    import pyarrow.parquet as pq

    from ragmeter.io.lengths import read_passage_lengths

    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "1KiB")
    path = tmp_path / "run.parquet"
    docs = [f"d{i:05d}" for i in range(3000)]
    table = pa.table({"qid": ["q"] * 3000, "docid": docs, "score": [1.0] * 3000})
    pq.write_table(table, path, compression="none")
    assert len(read_run(path)) == 3000
    lengths = tmp_path / "lengths.parquet"
    pq.write_table(pa.table({"id": docs, "length": [7] * 3000}), lengths, compression="none")
    assert len(read_passage_lengths(lengths).lengths) == 3000


def test_a_json_document_on_one_line_is_not_held_to_the_line_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``json.dump`` writes a whole document on one line: JSON and YAML documents are read
    whole, not by lines (JSON Lines are)."""
    import json

    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "1KiB")
    run = {f"q{i}": {f"d{j}": float(j) for j in range(20)} for i in range(20)}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    assert path.stat().st_size > 1024
    assert len(read_run(path)) == 400
    packed = tmp_path / "run.json.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert len(read_run(packed)) == 400
    rows = tmp_path / "run.jsonl"
    rows.write_text(json.dumps({"qid": "q", "docid": "d", "score": 1, "pad": "x" * 2000}) + "\n")
    with pytest.raises(InputError, match="longer than 1 KiB"):
        read_run(rows)
