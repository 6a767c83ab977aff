"""The C accelerator (``ragmeter._native``) and the pure numpy/pyarrow path give identical
Run, Qrels and aligned arrays — on random files with ties, duplicates, comments, blank lines
and odd whitespace, and on Arrow columns (string, large_string, sliced)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from ragmeter import _accel
from ragmeter.core.align import align
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io.trec import read_trec_qrels, read_trec_run

pytestmark = pytest.mark.skipif(_accel.native is None, reason="C accelerator not built")


@pytest.fixture
def both(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], Any]], tuple[Any, Any]]:
    """Run a thunk with the accelerator, then without it."""

    def call(thunk: Callable[[], Any]) -> tuple[Any, Any]:
        native = _accel.native
        fast = _outcome(thunk)
        monkeypatch.setattr(_accel, "native", None)
        try:
            pure = _outcome(thunk)
        finally:
            monkeypatch.setattr(_accel, "native", native)
        return fast, pure

    return call


def _outcome(thunk: Callable[[], Any]) -> Any:
    try:
        return thunk()
    except InputError as exc:
        return ("error", str(exc))


def _run_state(run: Run) -> dict[str, Any]:
    return {
        "query_ids": run.query_ids.tolist(),
        "offsets": run.offsets.tolist(),
        "doc_ids": run.doc_ids.to_pylist(),
        "doc_type": str(run.doc_ids.type),
        "scores": run.scores.tolist(),
        "tag": run.tag,
        "warnings": run.warnings,
        "texts": None if run.texts is None else run.texts.to_pylist(),
    }


def _qrels_state(qrels: Qrels) -> dict[str, Any]:
    return {
        "query_ids": qrels.query_ids.tolist(),
        "offsets": qrels.offsets.tolist(),
        "doc_ids": qrels.doc_ids.to_pylist(),
        "doc_type": str(qrels.doc_ids.type),
        "grades": qrels.grades.tolist(),
        "grade_dtype": str(qrels.grades.dtype),
        "warnings": qrels.warnings,
    }


def _aligned_state(run: Run, qrels: Qrels) -> dict[str, Any]:
    al = align(run, qrels)
    return {
        name: getattr(al, name).tolist()
        for name in (
            "query_ids",
            "offsets",
            "grades",
            "run_rows",
            "label_offsets",
            "label_grades",
            "in_run",
        )
    } | {"n": (al.n_missing, al.n_unjudged_queries)}


def _state(obj: Any) -> Any:
    if isinstance(obj, Run):
        return _run_state(obj)
    if isinstance(obj, Qrels):
        return _qrels_state(obj)
    return obj


def _sep(rng: random.Random) -> str:
    return rng.choice([" ", " ", " ", "\t", "  ", " \t "])


def _random_files(rng: random.Random, tmp: Path) -> tuple[Path, Path]:
    n_q = rng.randint(1, 12)
    qids = [f"q{rng.randint(0, 30)}" for _ in range(n_q)]
    vocab = [f"d{i}" for i in range(rng.randint(3, 40))] + ["D1", "d#1", "d-1.x"]
    odd = rng.random() < 0.5
    lines = []
    for q in qids:
        for rank in range(rng.randint(0, 15)):
            doc = rng.choice(vocab)
            score = rng.choice(["1", "2.5", "2.50", "-0.5", "3e-1", "0.3", "7", "1.25"])
            sep = _sep(rng) if odd else " "
            lead = rng.choice(["", " ", "\t"]) if odd else ""
            lines.append(sep.join([lead + q, "Q0", doc, str(rank + 1), score, "tag1"]))
        if odd and rng.random() < 0.3:
            lines.append(rng.choice(["# comment", "  # indented comment x y", "", "   "]))
    if rng.random() < 0.5:
        rng.shuffle(lines)
    if not any(line.strip() and not line.strip().startswith("#") for line in lines):
        lines.append("q1 Q0 d1 1 1.0 tag1")
    run_path = tmp / "run.txt"
    run_path.write_text("\n".join(lines) + rng.choice(["\n", ""]))

    qlines = []
    judged: dict[tuple[str, str], int] = {}
    for q in [*qids, f"q{rng.randint(0, 30)}"]:
        for doc in rng.sample(vocab, k=min(len(vocab), rng.randint(0, 6))):
            grade = judged.setdefault((q, doc), rng.choice([-1, 0, 1, 1, 2, 3]))
            sep = _sep(rng) if odd else " "
            qlines.append(sep.join([q, "0", doc, str(grade)]))
            if rng.random() < 0.05:  # a repeated identical judgment
                qlines.append(sep.join([q, "0", doc, str(grade)]))
    if odd and rng.random() < 0.5:
        qlines.insert(rng.randint(0, len(qlines)), "# qrels comment")
    if not qlines:
        qlines.append("q1 0 d1 1")
    qrels_path = tmp / "qrels.txt"
    qrels_path.write_text("\n".join(qlines) + "\n")
    return run_path, qrels_path


def _seeds() -> Iterator[int]:
    yield from range(60)


@pytest.mark.parametrize("seed", list(_seeds()))
def test_random_files_identical(seed: int, tmp_path: Path, both: Any) -> None:
    rng = random.Random(seed)
    run_path, qrels_path = _random_files(rng, tmp_path)
    fast, pure = both(lambda: read_trec_run(run_path))
    assert _state(fast) == _state(pure)
    fq, pq = both(lambda: read_trec_qrels(qrels_path))
    assert _state(fq) == _state(pq)
    if isinstance(fast, Run) and isinstance(fq, Qrels):
        fa, pa_ = both(lambda: _aligned_state(fast, fq))
        assert fa == pa_


@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 d1 1 1.0 t\r\nq1 Q0 d2 2 0.5 t\r\n",  # CRLF: warning
        "q1 Q0 dé 1 1.0 t\nq1 Q0 d2 2 0.5 t\n",  # non-ASCII id
        "q1 Q0 d1 1 1.0 t extra\n",  # extra field: warning
        "q1 Q0 d1 1 nan t\n",  # not finite: error
        "q1 Q0 d1 1 1e999 t\n",  # overflow: error
        "q1 Q0 d1 1 1_0 t\n",  # Python float syntax
        "q1 Q0 d1 1 x t\n",  # not a number: error
        "q1 Q0 d1 1\n",  # too few fields: error
        "# only a comment\n",
        "q1 Q0 d1 1 0.1000000000000000055511151231257827 t\nq1 Q0 d2 1 1.7976931348623157e308 t\n",
        "q1 Q0 d1 1 5e-324 t\nq1 Q0 d2 1 -0.0 t\nq1 Q0 d3 1 0 t\nq1 Q0 d1 1 .5 t\n",
    ],
)
def test_odd_run_files_identical(text: str, tmp_path: Path, both: Any) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    fast, pure = both(lambda: read_trec_run(path))
    assert _state(fast) == _state(pure)


@pytest.mark.parametrize(
    "text",
    [
        "q1 0 d1 1\nq1 0 d1 2\n",  # conflicting judgments: error with line numbers
        "# c\nq1 0 d1 1\n\nq1 0 d1 1\n",  # repeated identical judgment: warning
        "q1 0 d1 3000000000\n",  # out of int32 range: error
        "q1 0 d1 +2\nq2 0 d1 -1\n",
        "q1 0 d1 1.0\n",
    ],
)
def test_odd_qrels_files_identical(text: str, tmp_path: Path, both: Any) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(text.encode())
    fast, pure = both(lambda: read_trec_qrels(path))
    assert _state(fast) == _state(pure)


@pytest.mark.parametrize("seed", range(20))
def test_random_columns_identical(seed: int, both: Any) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    qids = [f"q{i}" for i in rng.integers(0, 25, n)]
    docs = [f"d{i}" for i in rng.integers(0, 60, n)]
    scores = rng.integers(0, 6, n).astype(np.float64) / 2
    kind = seed % 3
    if kind == 0:
        q_arr, d_arr = pa.array(qids), pa.array(docs)
    elif kind == 1:
        q_arr, d_arr = pa.array(qids, pa.large_string()), pa.array(docs, pa.large_string())
    else:  # sliced arrays (non-zero offset)
        q_arr = pa.array(["x", *qids]).slice(1)
        d_arr = pa.array(["y", "z", *docs]).slice(2)
    texts = [f"text {i}" for i in range(n)]
    fast, pure = both(lambda: Run.from_columns(q_arr, d_arr, scores, texts=texts))
    assert _state(fast) == _state(pure)
    grades = rng.integers(-1, 4, n)
    pairs = {(q, d): int(g) for q, d, g in zip(qids, docs, grades, strict=True)}
    qq = [q for q, _ in pairs]
    dd = [d for _, d in pairs]
    gg = list(pairs.values())
    fq, pq = both(lambda: Qrels.from_columns(qq, dd, gg))
    assert _state(fq) == _state(pq)
    fa, pa_ = both(lambda: _aligned_state(fast, fq))
    assert fa == pa_


def test_take_strings_matches_arrow_take() -> None:
    import pyarrow as pa

    from ragmeter import _accel

    rng = np.random.default_rng(3)
    words = ["", "a", "bb", "ccc#", "é", "dddd dd"]
    for wide in (False, True):
        arr = pa.array([words[i] for i in rng.integers(0, len(words), 50)])
        if wide:
            arr = arr.cast(pa.large_string())
        sliced = arr.slice(5, 30)
        perm = rng.permutation(30)
        got = _accel.take_strings(sliced, perm)
        assert got.to_pylist() == sliced.take(pa.array(perm)).to_pylist()


@pytest.mark.skipif(_accel.native is None, reason="C accelerator not built")
def test_memory_mapped_run_equals_read_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file past the mapping threshold is parsed from an mmap whose parsed pages are
    released every 64 MB; the result must equal reading it into memory."""
    from ragmeter.io import trec

    rng = np.random.default_rng(11)
    n_queries, depth = 12_000, 100
    lines = []
    for q in range(n_queries):
        docs = rng.integers(0, 10**9, depth)
        scores = np.sort(rng.random(depth))[::-1]
        lines.append(
            "".join(
                f"query-{q:06d} Q0 document-{d:012d} {i + 1} {s:.8f} run-tag-{q % 7}\n"
                for i, (d, s) in enumerate(zip(docs, scores, strict=True))
            )
        )
    path = tmp_path / "big.run"
    path.write_text("".join(lines))
    assert path.stat().st_size > 70 << 20  # past one 64 MB release step
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1 << 62)
    in_memory = trec.read_trec_run(path)
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1)
    mapped = trec.read_trec_run(path)
    assert mapped.query_ids.tolist() == in_memory.query_ids.tolist()
    assert np.array_equal(mapped.offsets, in_memory.offsets)
    assert np.array_equal(mapped.scores, in_memory.scores)
    assert mapped.doc_ids.equals(in_memory.doc_ids)
    assert mapped.tag == in_memory.tag == f"run-tag-{(n_queries - 1) % 7}"


def _interleaved_text(kind: int, n_queries: int, seed: int) -> bytes:
    """Lines of many queries whose rows are not contiguous: each query appears in several
    stretches, so the parser's query table grows (past 512 ids) and finds repeats."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n_queries, 6 * n_queries)
    lines = []
    for i, q in enumerate(rows.tolist()):
        if kind == 0:
            lines.append(f"qid-{q} Q0 doc-{i % 997}-{q} 1 {rng.random():.6f} tag\n")
        else:
            lines.append(f"qid-{q} 0 doc-{i}-{q} {i % 4}\n")
    return "".join(lines).encode()


@pytest.mark.parametrize("kind", [0, 1])
def test_query_table_growth_and_repeats(kind: int) -> None:
    """The C query-id table gives codes in order of first appearance, as a dict would."""
    native = _accel.native
    assert native is not None
    text = _interleaved_text(kind, 3000, kind)
    qid_offsets, qid_data, qcode, *_ = native.parse_trec(text, kind)
    offsets = np.frombuffer(qid_offsets, dtype=np.int64)
    data = bytes(qid_data)
    dictionary = [data[a:b].decode() for a, b in itertools.pairwise(offsets.tolist())]
    expected: dict[str, int] = {}
    codes = [
        expected.setdefault(line.split()[0], len(expected)) for line in text.decode().splitlines()
    ]
    assert dictionary == list(expected)
    assert np.frombuffer(qcode, dtype=np.int32).tolist() == codes


def _ordered_qids(order: str) -> list[str]:
    """Query ids, one per stretch of lines, in the order ``order`` names."""
    ids = [str(i) for i in range(1500)]  # past the table's first 1024 slots
    by_bytes = sorted(ids)
    return {
        "numeric": ids,
        "bytes": by_bytes,
        "prefixed numeric": [f"q{i}" for i in ids],
        # a repeat at the end of each order: the table is built from the ids so far
        "numeric, then a repeat": [*ids, "7"],
        "bytes, then a repeat": [*by_bytes, "1000"],
        # numeric order breaks first, then byte order: a new id, then repeats
        "numeric, then bytes, then neither": ["9", "10", "11", "2", "3", "20", "1", "10", "3"],
        "bytes, then numeric, then neither": ["1", "10", "2", "11", "3", "1", "12", "2"],
        "descending": ids[::-1],
        "shuffled": random.Random(4).sample(ids, len(ids)) + ids[:10],
        "one query": ["q"],
    }[order]


@pytest.mark.parametrize("kind", [0, 1])
@pytest.mark.parametrize(
    "order",
    [
        "numeric",
        "bytes",
        "prefixed numeric",
        "numeric, then a repeat",
        "bytes, then a repeat",
        "numeric, then bytes, then neither",
        "bytes, then numeric, then neither",
        "descending",
        "shuffled",
        "one query",
    ],
)
def test_query_codes_whatever_the_order_of_queries(kind: int, order: str) -> None:
    """While each new query id comes after the one before it in byte order or in numeric
    order, the parser takes it as new without its table; once both orders break, the table
    of the ids so far takes over. The codes are those of a dict in every case."""
    native = _accel.native
    assert native is not None
    qids = _ordered_qids(order)
    lines = []
    for j, q in enumerate(qids):
        for r in range(1 + j % 3):
            lines.append(f"{q} Q0 d{r} {r + 1} 0.5 t\n" if kind == 0 else f"{q} 0 d{j}-{r} {r}\n")
    text = "".join(lines)
    qid_offsets, qid_data, qcode, *_ = native.parse_trec(text.encode(), kind)
    offsets = np.frombuffer(qid_offsets, dtype=np.int64)
    data = bytes(qid_data)
    dictionary = [data[a:b].decode() for a, b in itertools.pairwise(offsets.tolist())]
    expected: dict[str, int] = {}
    codes = [expected.setdefault(line.split()[0], len(expected)) for line in text.splitlines()]
    assert dictionary == list(expected)
    assert np.frombuffer(qcode, dtype=np.int32).tolist() == codes


@pytest.mark.parametrize("kind", [0, 1])
@pytest.mark.parametrize("wide_at", [0, 1, 17, 5000])
def test_doc_offsets_widen_in_place(kind: int, wide_at: int) -> None:
    """Past ``wide_at`` doc bytes (2**31 - 1 in use) the int32 doc offsets become int64 in
    place; the offsets keep their values."""
    native = _accel.native
    assert native is not None
    text = _interleaved_text(kind, 300, 7)
    narrow = native.parse_trec(text, kind)
    wide = native.parse_trec(text, kind, False, wide_at)
    assert narrow[7] is False and wide[7] is True
    assert np.array_equal(
        np.frombuffer(narrow[3], dtype=np.int32), np.frombuffer(wide[3], dtype=np.int64)
    )
    for i in (0, 1, 2, 4, 5):
        assert bytes(narrow[i]) == bytes(wide[i])


def test_order_int32_keys_and_narrow_permutation() -> None:
    """``order`` reads int32 keys as it reads int64 ones, and its int32 permutation equals
    its int64 one."""
    native = _accel.native
    assert native is not None
    rng = np.random.default_rng(5)
    n, nq = 5000, 40
    keys = rng.integers(0, nq, n)
    docs = pa.array([f"d{i}" for i in rng.integers(0, 300, n)])
    buffers = _accel.string_buffers(docs)
    assert buffers is not None
    perm64, offs64, dupes64 = native.order(keys.astype(np.int64), nq, None, *buffers, False)
    perm32, offs32, dupes32 = native.order(keys.astype(np.int32), nq, None, *buffers, False, True)
    assert dupes32 == dupes64 > 0
    assert bytes(offs32) == bytes(offs64)
    assert np.array_equal(np.frombuffer(perm32, np.int32), np.frombuffer(perm64, np.int64))


def test_qrels_of_many_interleaved_queries_identical(tmp_path: Path, both: Any) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(_interleaved_text(1, 3000, 3))
    fast, pure = both(lambda: read_trec_qrels(path))
    assert isinstance(fast, Qrels)
    assert _state(fast) == _state(pure)


@pytest.mark.parametrize("mapped", [False, True])
def test_qrels_docs_sharing_prefixes_identical(
    mapped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, both: Any
) -> None:
    """Each query's judgments are ordered by doc from the docs' first 8 bytes where those
    differ (a query of up to 64 judgments), and the docs read again from the text from bit
    masks of a line within the next 64 bytes: docs equal in their first 8 bytes, docs that are
    prefixes of others, queries of 1 to 200 judgments around the 64, lines shorter and longer
    than 64 bytes, comments and blank lines order and read as the line-by-line reader does."""
    from ragmeter.io import trec

    rng = random.Random(11)
    stems = ["", "abcdefgh", "abcdefg", "abcdefghabcdefgh", "Z" * 70, "a~b"]
    lines = []
    for q in range(120):
        n = rng.choice([1, 2, 7, 63, 64, 65, 200])
        docs = list({rng.choice(stems) + str(rng.randrange(40)) for _ in range(n)})
        rng.shuffle(docs)
        for d in docs:
            lines.append(f"q{q}{_sep(rng)}0{_sep(rng)}{d}{_sep(rng)}{rng.randrange(-1, 4)}\n")
            if rng.random() < 0.05:
                lines.append(rng.choice(["# q1 0 d 1\n", "\n", "  \t \n"]))
    rng.shuffle(lines)
    path = tmp_path / "qrels.txt"
    path.write_text("".join(lines))
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1 if mapped else 1 << 62)
    fast, pure = both(lambda: read_trec_qrels(path))
    assert isinstance(fast, Qrels)
    assert _state(fast) == _state(pure)


def test_qrels_docs_with_nul_bytes_order_as_python(both: Any) -> None:
    """Doc ids given as values (not parsed from text) may hold NUL bytes, which equal the
    zero bytes a short doc's 8-byte prefix is padded with: such ties go to the full
    comparison, so ``a`` < ``a\\0`` < ``a\\0b`` < ``ab`` as Python orders them."""
    docs = ["ab", "a\0b", "a", "a\0", "\0", "", "abcdefgh\0", "abcdefgh", "abcdefg\0\0"]
    fast, pure = both(lambda: Qrels.from_dict({"q": {d: i for i, d in enumerate(docs)}}))
    assert _state(fast) == _state(pure)
    assert fast.doc_ids.to_pylist() == sorted(docs, key=lambda d: d.encode())


_SCORES = [
    "5", "5.", ".5", "0.10", "007.25", "19.9097", "0", "0.0", "123456789012345",
    "1234567890123456", "1.23456789012345", "1.234567890123456", "12345678901234.5",
    "0.000000000000001", "9999999999999.99", "1e3", "-1.5", "+2.25", "-0", ".", "1..2",
    "1.2.3", "-", "0x1", "١", "0.3", "1.13", "0.0029", "0.000043",
]  # fmt: skip


@pytest.mark.parametrize("score", _SCORES)
def test_scores_read_as_the_python_reader_does(score: str, tmp_path: Path, both: Any) -> None:
    """A score of the plain form (digits with at most one point, 15 digits at most) is read in
    one loop; it, the longer forms, signed and exponent forms read to the bit as Python
    reads them (0.3: not 3 times 1 / 10 to the bit), and the malformed ones give the same
    error."""
    path = tmp_path / "run.txt"
    lines = [f"q1 Q0 d{i} {i + 1} {score} t\n" for i in range(3)] + ["q2 Q0 x 1 0.5 t\n"] * 4
    path.write_text("".join(lines))
    fast, pure = both(lambda: read_trec_run(path))
    assert _state(fast) == _state(pure)
    if isinstance(pure, Run):
        assert pure.scores.tolist()[:3] == [float(score)] * 3


def test_permute_offsets_and_scatter_docs_by_hand() -> None:
    """Sorting parsed qrels without holding their doc ids twice: the new offsets from the
    lengths alone, then the docs read again from the text into their places."""
    native = _accel.native
    assert native is not None
    docs = pa.array(["a", "bb", "ccc"])
    _, offsets, _ = docs.buffers()
    perm = np.array([2, 0, 1], dtype=np.int32)  # row k of the result is row perm[k]
    new_offsets, inverse_buf, wide = native.permute_offsets(offsets, False, 0, 3, perm)
    assert wide is False
    assert np.frombuffer(new_offsets, np.int32).tolist() == [0, 3, 4, 6]
    inverse = np.frombuffer(inverse_buf, np.int32)
    assert inverse.tolist() == [1, 2, 0]  # row i goes to inverse[i]
    text = b"q1 0 a 1\n# a comment\n\n  q1\t0 bb 2\nq2 0 ccc 0"
    assert bytes(native.scatter_docs(text, False, inverse, new_offsets, False)) == b"cccabb"
    with pytest.raises(ValueError, match="not the one parsed"):
        other = b"q1 0 ab 1\nq1 0 b 2\nq2 0 ccc 0\n"  # the same rows, other lengths
        native.scatter_docs(other, False, inverse, new_offsets, False)
    with pytest.raises(ValueError, match="fewer rows"):
        native.scatter_docs(b"q1 0 a 1\n", False, inverse, new_offsets, False)
    with pytest.raises(IndexError):
        native.permute_offsets(offsets, False, 0, 3, np.array([0, 1, 3], dtype=np.int32))


def test_memory_mapped_qrels_equal_read_qrels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mapped qrels file has its doc ids read again from the mapping into sorted order
    (``scatter_docs``); the result equals reading the file into memory."""
    from ragmeter.io import trec

    path = tmp_path / "qrels.txt"
    path.write_bytes(_interleaved_text(1, 2000, 9))
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1 << 62)
    in_memory = trec.read_trec_qrels(path)
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1)
    assert _state(trec.read_trec_qrels(path)) == _state(in_memory)


@pytest.mark.parametrize("tail", ["", "q1 Q0 z 3 0.5 t\n" * 5])
@pytest.mark.parametrize("odd", ["\x7f", "é", "\x01", "\v", "\f", "\t", "\r", "#", "\0"])
def test_long_fields_and_odd_bytes_at_every_offset(
    odd: str, tail: str, tmp_path: Path, both: Any
) -> None:
    """The parser splits a line within the next 64 bytes from bit masks, and a longer one, or
    one near the end, finding each field's end 16 bytes at a time (SSE2): ids longer than 16
    bytes, and an odd byte at every offset of one, split and decline exactly as the
    line-by-line reader does (``tail``: the odd line is followed by 64 bytes or not)."""
    assert _accel.native is not None
    long_doc = "".join(chr(ord("a") + i % 26) for i in range(45))
    clean = f"query-{long_doc} Q0 {long_doc} 1 12.5 tag-{long_doc}\n"
    parsed = _accel.native.parse_trec(clean.encode(), 0, False)
    assert parsed is not None
    assert bytes(parsed[4]) == long_doc.encode()
    for at in range(len(long_doc) + 1):
        doc = long_doc[:at] + odd + long_doc[at:]
        text = f"q1 Q0 {long_doc} 1 2.0 t\nq1 Q0 {doc} 2 1.0 t\n{tail}"
        path = tmp_path / "run.txt"
        path.write_bytes(text.encode())
        fast, pure = both(lambda: read_trec_run(path))  # noqa: B023
        assert _state(fast) == _state(pure), (odd, at)
        declined = _accel.native.parse_trec(text.encode(), 0, False) is None
        # a blank inside the id splits it (7 fields: the reader warns), at an end it does not;
        # other odd bytes are declined wherever they are, a '#' inside an id is part of it
        splits = odd in "\v\f\t" and 0 < at < len(long_doc)
        assert declined == (splits or odd not in "\v\f\t#"), (odd, at)
    # lines of every length around the 64 bytes, blank and comment lines among them
    for width in range(50, 70):
        doc = "d" * (width - len("q1 Q0  1 2.0 t"))
        text = f"q1 Q0 {doc} 1 2.0 t\n  \n# note {doc}\n\tq2 Q0 {doc}x\t2 1 t \n{tail}"
        path = tmp_path / "run.txt"
        path.write_bytes(text.encode())
        fast, pure = both(lambda: read_trec_run(path))  # noqa: B023
        assert _state(fast) == _state(pure), width
        assert _accel.native.parse_trec(text.encode(), 0, False) is not None


def _grouped_qrels_lines(order: str, rng: random.Random) -> list[str]:
    """Qrels lines of 300 queries (1 to 70 judgments each: around keyed_sort's 64), listed
    as ``order`` says."""
    ids = [f"q{i}" for i in range(300)]
    queries = {
        "numeric": ids,
        "bytes": sorted(ids),
        "shuffled": rng.sample(ids, len(ids)),
    }[order.split(",")[0]]
    lines = []
    for q in queries:
        docs = [f"d{d}" for d in rng.sample(range(500), rng.choice([1, 2, 9, 64, 65, 70]))]
        if "docs sorted" not in order:
            rng.shuffle(docs)
        else:
            docs.sort()
        lines += [f"{q} 0 {d} {rng.randrange(-1, 4)}\n" for d in docs]
    if "query again" in order:  # a query's judgments in two stretches: not grouped
        lines.append(f"{queries[0]} 0 dlast 1\n")
    if "repeat" in order:  # a judgment repeated on the next line: the Python path warns
        lines.insert(len(lines) // 2, lines[len(lines) // 2])
    if "conflict" in order:  # a repeated judgment with another grade: the Python path raises
        q, _, d, g = lines[7].split()
        lines.append(f"{q} 0 {d} {int(g) + 1}\n")
    return lines


@pytest.mark.parametrize("mapped", [False, True])
@pytest.mark.parametrize(
    "order",
    [
        "numeric",
        "bytes",
        "bytes, docs sorted",  # every row in place
        "numeric, docs sorted",
        "shuffled",
        "numeric, query again",
        "numeric, repeat",
        "bytes, docs sorted, repeat",
        "numeric, conflict",
    ],
)
def test_qrels_listed_query_by_query_identical(
    order: str, mapped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, both: Any
) -> None:
    """Qrels whose queries are each on one stretch of lines are ordered where they are
    (``qrels_stretches``, ``qrels_place``): the same Qrels, warnings and errors as the Python
    path, in whatever order the queries and docs come; a query on two stretches, and
    repeated judgments, take the other paths."""
    from ragmeter.io import trec

    path = tmp_path / "qrels.txt"
    path.write_text("".join(_grouped_qrels_lines(order, random.Random(len(order)))))
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1 if mapped else 1 << 62)
    fast, pure = both(lambda: read_trec_qrels(path))
    assert _state(fast) == _state(pure)
    if "conflict" in order:
        assert fast[0] == "error"
    else:
        assert fast.grades.flags.writeable and pure.grades.flags.writeable


def test_strings_placed_by_hand() -> None:
    native = _accel.native
    assert native is not None
    ids = pa.array(["x", "é", "", "zz", "ü€x"])
    buffers = _accel.string_buffers(ids)
    assert buffers is not None
    places = np.array([3, 1, 2, 0, 4], dtype=np.int64)  # row k goes to places[k]
    assert native.strings_placed(*buffers, places) == ["zz", "é", "", "x", "ü€x"]
    assert native.strings_placed(*buffers, np.array([1, 0], dtype=np.int64)) == ["é", "x"]
    for bad in ([0, 0, 1, 2, 3], [0, 1, 2, 3, 5]):
        with pytest.raises(ValueError, match="permutation"):
            native.strings_placed(*buffers, np.array(bad, dtype=np.int64))


@pytest.mark.parametrize(
    "ids",
    [
        ["q1", "q10", "q2"],
        ["q1", "q10", "q2", "é"],  # not ASCII: the Python lines
        ["a\0b", "c"],  # a NUL
        ["b", "a"],  # out of byte order
        ["a", "a"],  # not strictly ascending
        ["a", "ab", "b"],
        ["a", "b" * 40],  # 2 × 40 ≤ 4 × 41 + 8 × 2
        [*[f"q{i}" for i in range(10)], "z" * 200],  # 2200 > 968
        [],
    ],
)
def test_query_index_keys_as_the_python_lines_make_them(
    ids: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.evaluation.blocks import _fixed_width

    values = np.empty(len(ids), dtype=object)
    values[:] = ids
    fast = _fixed_width(values)
    monkeypatch.setattr(_accel, "native", None)
    pure = _fixed_width(values)
    assert (fast is None) == (pure is None)
    if fast is not None and pure is not None:
        assert fast.dtype == pure.dtype and fast.tobytes() == pure.tobytes()
        assert fast.flags.writeable == pure.flags.writeable


@pytest.mark.parametrize("layout", ["ranks ascending", "ranks ascending, one query", "jumbled"])
@pytest.mark.parametrize("scores", [False, True])
def test_order_of_rows_already_grouped_by_rank(layout: str, scores: bool) -> None:
    """``order`` skips its counting sort's scatter when the ranks never decrease (the rows
    are grouped already); the permutation is the one of a sort by (rank, doc, row), or
    (rank, -score, doc descending, row) with scores, either way."""
    native = _accel.native
    assert native is not None
    rng = random.Random(len(layout))
    n, nq = 400, 1 if "one query" in layout else 30
    keys = sorted(rng.randrange(nq) for _ in range(n))
    if layout == "jumbled":
        rng.shuffle(keys)
    docs = [f"d{rng.randrange(60)}" for _ in range(n)]
    score = [float(rng.randrange(5)) for _ in range(n)]
    buffers = _accel.string_buffers(pa.array(docs))
    assert buffers is not None
    score_arr = np.array(score) if scores else None
    perm, offsets, _ = native.order(np.array(keys, np.int64), nq, score_arr, *buffers, False)
    if scores:
        expected = sorted(range(n), key=lambda i: (keys[i], -score[i], _Desc(docs[i]), i))
    else:
        expected = sorted(range(n), key=lambda i: (keys[i], docs[i].encode(), i))
    assert np.frombuffer(perm, np.int64).tolist() == expected
    assert (
        np.frombuffer(offsets, np.int64).tolist()
        == np.searchsorted(sorted(keys), np.arange(nq + 1)).tolist()
    )


class _Desc:
    """A doc id that sorts in descending byte order."""

    def __init__(self, doc: str) -> None:
        self.key = doc.encode()

    def __lt__(self, other: _Desc) -> bool:
        return self.key > other.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


@pytest.mark.parametrize("seed", range(4))
def test_grouped_qrels_of_docs_sharing_prefixes_identical(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, both: Any
) -> None:
    """Queries listed one by one, of 1 to 200 judgments (around the 16 placed by counting and
    the 64 of the insertion sort), whose docs share their first 8 bytes or are prefixes of
    others: the prefixes no longer decide, the full comparison does, as in the Python path."""
    from ragmeter.io import trec

    rng = random.Random(seed)
    stems = ["", "abcdefgh", "abcdefg", "abcdefghabcdefgh", "Z" * 70, "a~b"]
    lines = []
    for q in rng.sample(range(400), 150):
        n = rng.choice([1, 2, 15, 16, 17, 63, 64, 65, 200])
        docs = list({rng.choice(stems) + str(rng.randrange(40)) for _ in range(n)})
        rng.shuffle(docs)
        lines += [f"{q} 0 {d} {rng.randrange(-1, 4)}\n" for d in docs]
    path = tmp_path / "qrels.txt"
    path.write_text("".join(lines))
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1 if seed % 2 else 1 << 62)
    fast, pure = both(lambda: read_trec_qrels(path))
    assert isinstance(fast, Qrels)
    assert _state(fast) == _state(pure)


def _stretch_lines(order: str, rng: random.Random) -> list[str]:
    """Qrels lines of 40 queries, 1 to 20 judgments each (around the 16 that are placed by
    counting), listed as ``order`` says, with comment and blank lines among them."""
    ids = [f"q{i}" for i in range(40)]
    queries = {"numeric": ids, "bytes": sorted(ids), "shuffled": rng.sample(ids, len(ids))}[
        order.split(",")[0]
    ]
    lines = []
    for q in queries:
        docs = [f"d{d:0{rng.choice([1, 9])}}" for d in rng.sample(range(300), rng.randint(1, 20))]
        if rng.random() < 0.3:  # docs whose first 8 bytes are one prefix
            docs = [f"doc-same-{d}" for d in docs]
        lines += [f"{q} 0 {d} {rng.randrange(-1, 4)}\n" for d in docs]
        if rng.random() < 0.2:
            lines.append(rng.choice(["# a comment\n", "\n", "  \t\n"]))
    if "query again" in order:  # the first query on a second stretch, near the end
        lines.insert(len(lines) - 3, f"{queries[0]} 0 dagain 1\n")
    if "repeat" in order:
        lines.insert(len(lines) // 3, lines[len(lines) // 3])
    if "bad grade" in order:
        lines.insert(len(lines) - 2, f"{queries[-1]} 0 dbad 1.5\n")
    if "CR" in order:
        lines.insert(len(lines) - 2, f"{queries[-1]} 0 dcr 1\r\n")
    return lines


@pytest.mark.parametrize(
    "order",
    [
        "numeric",
        "bytes",
        "shuffled",
        "numeric, query again",
        "shuffled, query again",
        "numeric, repeat",
        "shuffled, bad grade",
        "bytes, CR",
    ],
)
@pytest.mark.parametrize("mapped", [False, True])
def test_qrels_read_in_two_parts_identical(
    order: str, mapped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, both: Any
) -> None:
    """Qrels listed query by query are read in two parts at once (``qrels_stretches``,
    ``qrels_place``): wherever the split falls (at the start, inside a query's stretch, on a
    comment line, at the end), the same Qrels, warnings and errors as the Python path; a
    query on two stretches (in one part or across the two), a repeated judgment, a grade or
    a line the C parser declines take the other paths."""
    from ragmeter.io import trec

    text = "".join(_stretch_lines(order, random.Random(order)))
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    monkeypatch.setattr(trec, "MAP_THRESHOLD", 1 if mapped else 1 << 62)
    _, pure = both(lambda: read_trec_qrels(path))
    native = _accel.native
    assert native is not None
    line_starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
    for split in sorted({0, 1, 5, *line_starts[1:12], len(text) // 2, len(text) - 1, len(text)}):
        monkeypatch.setattr(trec, "LISTED_SPLIT", split)
        fast = _outcome(lambda: read_trec_qrels(path))
        assert _state(fast) == _state(pure), split
        found = native.qrels_stretches(text.encode(), False, split)
        grouped = "again" not in order and "CR" not in order
        assert (found is not None) == grouped, split
        if grouped and "repeat" not in order and "bad" not in order:
            assert fast.grades.flags.writeable


def test_qrels_stretches_by_hand() -> None:
    """Each query's first line (its byte position), judgments and doc bytes, the ids in order
    of first appearance; a split inside a stretch joins its two halves; None for a query on
    two stretches, found within a part or across the two (ids ascending or not)."""
    native = _accel.native
    assert native is not None
    text = b"q2 0 ab 1\nq2 0 c 0\n# note\nq10 0 dddd 2\n\nq1 0 e 1\n"
    for split in range(len(text) + 1):
        offsets, data, stretches = native.qrels_stretches(text, False, split)
        assert np.frombuffer(offsets, np.int64).tolist() == [0, 2, 5, 7], split
        assert bytes(data) == b"q2q10q1"
        assert np.frombuffer(stretches, np.int64).tolist() == [0, 2, 3, 26, 1, 4, 40, 1, 1]
    for again in (b"q2 0 ab 1\nq1 0 c 0\nq2 0 d 1\n", b"q1 0 ab 1\nq2 0 c 0\nq1 0 d 1\n"):
        for split in range(len(again) + 1):
            assert native.qrels_stretches(again, False, split) is None, (again, split)
    assert native.qrels_stretches(b"# only a comment\n\n", False, -1) is None


@pytest.mark.parametrize("wide_at", [0, 1, 17, 5000, 2**31 - 1])
def test_qrels_place_widens_as_parse_trec(wide_at: int) -> None:
    """Past ``wide_at`` doc bytes the placed doc ids are a large string array with int64
    offsets, as ``parse_trec``'s columns ordered by ``order`` and scattered from the text are."""
    from ragmeter.core.data import _string_ranks
    from ragmeter.io.trec import _query_dictionary

    native = _accel.native
    assert native is not None
    text = "".join(_stretch_lines("shuffled", random.Random(3))).encode()
    qid_offsets, qid_data, codes, doc_offsets, doc_data, grades, _, wide = native.parse_trec(
        text, 1, False, wide_at
    )
    docs = pa.Array.from_buffers(
        pa.large_string() if wide else pa.string(),
        len(codes) // 4,
        [None, pa.py_buffer(doc_offsets), pa.py_buffer(doc_data)],
    )
    columns = [
        np.frombuffer(codes, np.int32),
        _query_dictionary(qid_offsets, qid_data),
        docs,
        np.frombuffer(grades, np.int32),
    ]
    old = Qrels._native_from_encoded(columns, name="q", text=text)
    assert old is not None
    for split in (-1, 0, len(text) // 3):
        offsets, data, stretches = native.qrels_stretches(text, False, split)
        dictionary = _query_dictionary(offsets, data)
        ranks = _string_ranks(dictionary)
        q_offsets, new_offsets, new_data, new_grades, new_wide = native.qrels_place(
            text, False, stretches, ranks, wide_at, split
        )
        assert new_wide is wide and wide is (wide_at < len(doc_data))
        width = np.int64 if wide else np.int32
        assert np.frombuffer(q_offsets, np.int64).tolist() == old.offsets.tolist()
        old_offsets = old.doc_ids.buffers()[1]
        assert old_offsets is not None
        assert np.array_equal(np.frombuffer(new_offsets, width), np.frombuffer(old_offsets, width))
        assert bytes(new_data) == bytes(memoryview(old.doc_ids.buffers()[2]))
        assert np.frombuffer(new_grades, np.int32).tolist() == old.grades.tolist()


def test_qrels_place_refuses_stretches_not_of_its_text() -> None:
    """Ranks that are not a permutation, or stretches out of order or past the text, are an
    error (they would make the reader leave the text), and so is a text whose lines are not
    the ones counted."""
    native = _accel.native
    assert native is not None
    text = b"q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
    _, _, stretches = native.qrels_stretches(text, False, -1)
    ranks = np.array([0, 1], np.int64)
    assert native.qrels_place(text, False, stretches, ranks) is not None
    starts = np.frombuffer(stretches, np.int64).copy()
    for bad_ranks in ([0, 0], [0, 2]):
        with pytest.raises(ValueError, match="permutation"):
            native.qrels_place(text, False, stretches, np.array(bad_ranks, np.int64))
    swapped = starts.reshape(2, 3)[::-1].copy()
    past = starts.copy()
    past[3] = len(text)
    for bad in (swapped, past):
        with pytest.raises(ValueError, match="permutation"):
            native.qrels_place(text, False, bad.tobytes(), ranks)
    with pytest.raises(ValueError, match="not the one"):
        native.qrels_place(b"q1 0 a 1\nq1 0 bb 0\nq2 0 c 1\n", False, stretches, ranks)
