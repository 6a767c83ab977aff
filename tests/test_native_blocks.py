"""The one-pass C path of a run file's block (:mod:`ragmeter.evaluation.native_blocks`) gives
what parsing the block and evaluating its run give, bit for bit.

Random TREC runs and qrels (ties, repeated docs, unjudged and missing queries, negative
grades, comments) as one block, with and without a depth cut; the general path itself is
checked against trec_eval (tests/test_conformance_trec_eval.py, the differential test).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import _accel
from ragmeter.core.align import NOT_JUDGED
from ragmeter.evaluation import EvalInputs
from ragmeter.evaluation.blocks import evaluate_block
from ragmeter.evaluation.engine import resolve_measures
from ragmeter.evaluation.native_blocks import evaluate_block_bytes, join_arguments, supports
from ragmeter.evaluation.stream import evaluate_run_files
from ragmeter.io.trec import parse_trec_run, read_trec_qrels, read_trec_run
from random_trec import random_trec_files

pytestmark = pytest.mark.skipif(_accel.native is None, reason="C accelerator not built")

#: measures that read only the alignment (the one-pass path serves them)
MEASURES = [
    "ndcg@10",
    "ndcg",
    "map",
    "map@5",
    "recall@5",
    "mrr@10",
    "P@3",
    "num_rel_ret",
    "num_ret",
    "bpref",
    "rprec",
    "err@5",
    "infap",
    "judged@5",
    "success@3",
]

#: measures whose families read no query id (``reads_query_ids=False``): the block's ids'
#: strings are made only for its unjudged queries
CLASSICAL = ["ndcg@10", "ndcg_exp@5", "map", "recall@5", "mrr@10", "P@3", "bpref", "rprec"]


def _compare(data: bytes, inputs: EvalInputs, names: list[str]) -> None:
    measures = resolve_measures(names, default_k=inputs.default_k)
    fast = evaluate_block_bytes(data, inputs, measures, source="run.txt")
    assert fast is not None
    slow = evaluate_block(parse_trec_run(data, source="run.txt", name="r"), inputs, measures)
    # the one-pass path keeps the block's order of queries: compared by position
    here, there = np.argsort(fast.query_index), np.argsort(slow.query_index)
    assert fast.query_index[here].tolist() == slow.query_index[there].tolist()
    assert len(set(fast.query_index.tolist())) == len(fast.query_index)
    assert fast.values.shape == slow.values.shape
    # bit for bit: the same doubles, NaN where NaN
    assert np.array_equal(fast.values[here], slow.values[there], equal_nan=True)
    assert (np.nan_to_num(fast.values[here]) == np.nan_to_num(slow.values[there])).all()
    assert sorted(fast.unjudged) == sorted(slow.unjudged)
    assert fast.warnings == slow.warnings
    assert (fast.retrieved, fast.judged) == (slow.retrieved, slow.judged)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    depth=st.sampled_from([None, 1, 3, 7]),
    missing=st.sampled_from(["zero", "skip"]),
    comments=st.booleans(),
    rel_level=st.sampled_from([1, 2]),
)
def test_one_pass_equals_parse_and_evaluate(
    tmp_path: Path, seed: int, depth: int | None, missing: str, comments: bool, rel_level: int
) -> None:
    run_path, qrels_path = random_trec_files(seed, tmp_path, comments=comments)
    data = run_path.read_bytes()
    if not data.strip():
        return  # an empty run is an error either way
    inputs = EvalInputs(
        qrels=read_trec_qrels(qrels_path),
        depth=depth,
        missing=missing,  # type: ignore[arg-type]
        rel_level=rel_level,
    )
    _compare(data, inputs, MEASURES)
    _compare(data, inputs, CLASSICAL)


def test_repeated_docs_warned_as_the_reader_does(tmp_path: Path) -> None:
    """Repeated (query, doc) lines of judged and unjudged queries: each doc keeps its
    best-ranked line, and the count is the reader's."""
    (tmp_path / "q.txt").write_text("a 0 d1 1\na 0 d2 2\nb 0 d9 1\n")
    data = (
        b"a Q0 d1 1 1.0 t\na Q0 d2 2 3.0 t\na Q0 d1 3 5.0 t\na Q0 d3 4 3.0 t\n"
        b"z Q0 d1 1 1.0 t\nz Q0 d1 2 2.0 t\nb Q0 d9 1 0.5 t\n"
    )
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    measures = resolve_measures(["map", "P@2", "ndcg"], default_k=inputs.default_k)
    fast = evaluate_block_bytes(data, inputs, measures, source="run.txt")
    assert fast is not None
    assert fast.warnings == (
        "run.txt: 2 duplicate (query, doc) row(s) dropped; each doc keeps its best-ranked "
        "occurrence",
    )
    assert fast.unjudged == ("z",)
    # a: d1 (5.0, judged 1), d3 and d2 tied at 3.0 (doc descending: d3 first), d2 judged 2
    # AP = (1/1 + 2/3) / 2; P@2 = 1/2
    assert fast.values[0, 0] == pytest.approx((1 + 2 / 3) / 2)
    assert fast.values[0, 1] == 0.5
    _compare(data, inputs, ["map", "P@2", "ndcg"])


def test_declines_what_it_does_not_serve(tmp_path: Path) -> None:
    """Measures reading a pool, irregular lines, no accelerator: None (the general path)."""
    (tmp_path / "q.txt").write_text("a 0 d1 1\n")
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    pooled = resolve_measures(["proc@5"], default_k=10)
    plain = resolve_measures(["map"], default_k=10)
    assert not supports(inputs, pooled)
    assert evaluate_block_bytes(b"a Q0 d1 1 1.0 t\n", inputs, pooled, source="r") is None
    # a CRLF line: the reader warns about it, so the one-pass path leaves it to the reader
    assert evaluate_block_bytes(b"a Q0 d1 1 1.0 t\r\n", inputs, plain, source="r") is None
    assert evaluate_block_bytes(b"a Q0 d1 1 1.0 t\n", inputs, plain, source="r") is not None


def test_streamed_file_equals_in_memory(tmp_path: Path) -> None:
    """Through evaluate_run_files in small blocks (the one-pass path per block)."""
    run_path, qrels_path = random_trec_files(11, tmp_path, max_queries=40)
    inputs = EvalInputs(qrels=read_trec_qrels(qrels_path))
    streamed = evaluate_run_files(run_path, inputs, MEASURES, workers=1, block_bytes=300)
    whole = evaluate_run_files(read_trec_run(run_path), inputs, MEASURES)
    assert np.array_equal(streamed.run.values, whole.run.values, equal_nan=True)
    assert streamed.warnings == whole.warnings


@pytest.mark.parametrize("seed", range(5))
def test_every_trec_eval_measure_served_and_equal(tmp_path: Path, seed: int) -> None:
    """trec_eval's measures all read only the alignment: the one-pass path serves them."""
    run_path, qrels_path = random_trec_files(seed, tmp_path, max_queries=20)
    inputs = EvalInputs(qrels=read_trec_qrels(qrels_path))
    measures = resolve_measures(["all_trec"], default_k=inputs.default_k)
    assert len(measures) > 90
    assert supports(inputs, measures)
    data = run_path.read_bytes()
    if data.strip():
        _compare(data, inputs, ["all_trec"])


def test_query_ids_found_by_their_whole_bytes(tmp_path: Path) -> None:
    """Prefixes, ids longer than any judged one, and a block with no judged query."""
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq10 0 d2 1\nq2 0 d1 2\n")
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    data = (
        b"q1 Q0 d2 1 1.0 t\nq100 Q0 d1 1 1.0 t\nq10 Q0 d2 1 1.0 t\nq Q0 d1 1 1.0 t\n"
        b"q2 Q0 d1 1 1.0 t\n"
    )
    measures = resolve_measures(["P@1", "num_ret"], default_k=inputs.default_k)
    fast = evaluate_block_bytes(data, inputs, measures, source="run.txt")
    assert fast is not None
    # q1, q10, q2 are 0, 1, 2 in byte order; the block's order is q1, q10, q2
    assert fast.query_index.tolist() == [0, 1, 2]
    assert fast.values[:, 0].tolist() == [0.0, 1.0, 1.0]
    assert sorted(fast.unjudged) == ["q", "q100"]
    _compare(data, inputs, ["P@1", "num_ret"])
    none = evaluate_block_bytes(b"x Q0 d1 1 1.0 t\n", inputs, measures, source="run.txt")
    assert none is not None
    assert none.values.shape == (0, 2)
    assert none.unjudged == ("x",)
    _compare(b"x Q0 d1 1 1.0 t\n", inputs, ["P@1", "num_ret"])


def test_qrels_ids_held_in_a_dict_take_the_general_path(tmp_path: Path) -> None:
    """One id far longer than the others: the query index is a dict, not fixed-width keys."""
    ids = [f"q{i}" for i in range(20)] + ["L" * 500]
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 d1 1\n" for q in ids))
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    measures = resolve_measures(["P@1"], default_k=inputs.default_k)
    assert evaluate_block_bytes(b"q1 Q0 d1 1 1.0 t\n", inputs, measures, source="r") is None
    streamed = evaluate_run_files(
        _write(tmp_path / "r.txt", b"q1 Q0 d1 1 1.0 t\n"), inputs, ["P@1"], workers=1
    )
    got = dict(
        zip(streamed.run.query_ids.tolist(), streamed.run.values[:, 0].tolist(), strict=True)
    )
    assert got["q1"] == 1.0  # d1, judged 1, at rank 1
    assert got["q2"] == 0.0  # judged, absent from the run: an empty ranking


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_range_parsed_from_a_map_equals_a_copy(tmp_path: Path) -> None:
    """A worker parses its range of the run file where the page cache holds it (a memory map
    from the page the range starts in): the values equal those of a copy of the range; a file
    now shorter than the range is left to the copy path (which reads what is there)."""
    from ragmeter.evaluation import stream

    rng = np.random.default_rng(4)
    run_lines = [
        f"q{q} Q0 d{d} {r} {rng.random():.4f} t\n"
        for q in range(300)
        for r, d in enumerate(rng.choice(40, 10, replace=False), 1)
    ]
    qrels_lines = [f"q{q} 0 d{d} {d % 3}\n" for q in range(300) for d in range(0, 40, 3)]
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    data = "".join(run_lines).encode()
    run_path.write_bytes(data)
    qrels_path.write_text("".join(qrels_lines))
    inputs = EvalInputs(qrels=read_trec_qrels(qrels_path))
    measures = tuple(resolve_measures(["ndcg@10", "map", "P@3"], default_k=inputs.default_k))
    start = data.index(b"\nq150 ") + 1  # a query's first line, past the first pages
    end = data.index(b"\nq280 ") + 1
    assert start % 4096 and start > 4096
    job = stream._Job(str(run_path), "run.txt", inputs, measures)
    mapped = stream._evaluate_mapped(job, start, end)
    copy = evaluate_block_bytes(data[start:end], inputs, measures, source=str(run_path))
    assert mapped is not None and copy is not None
    assert mapped.query_index.tolist() == copy.query_index.tolist()
    assert np.array_equal(mapped.values, copy.values, equal_nan=True)
    run_path.write_bytes(data[: start + 10])
    assert stream._evaluate_mapped(job, start, end) is None


def _joined(inputs: EvalInputs, depth: int = -1) -> tuple[object, ...]:
    """block_align's and scan_block's qrels arguments, at ``depth`` (-1: none; 0 allowed
    here, which EvalInputs refuses)."""
    joined = join_arguments(inputs)
    assert joined is not None
    return (*joined[:-1], depth)


def _two_passes(data: bytes, inputs: EvalInputs, depth: int) -> list[object] | None:
    """parse_trec + block_align: the judged queries in position order."""
    from ragmeter.evaluation.blocks import qrels_index

    native = _accel.native
    keys = qrels_index(inputs.qrels).keys
    parsed = native.parse_trec(data, 0, False)
    if parsed is None:
        return None
    qo, qd, qcode, doc_off, doc_data, scores, _tag, wide = parsed
    out = native.block_align(
        qcode,
        qo,
        qd,
        scores,
        doc_off,
        doc_data,
        wide,
        keys,
        keys.dtype.itemsize,
        *_joined(inputs, depth),
    )
    return [bytes(qo), bytes(qd), *out]


def _scan(data: bytes, inputs: EvalInputs, depth: int) -> list[object] | None:
    """scan_block, its judged queries put in position order as block_align gives them."""
    from ragmeter.evaluation.blocks import qrels_index

    index = qrels_index(inputs.qrels)
    keys = index.keys
    got = _accel.native.scan_block(
        data, keys, keys.dtype.itemsize, index.slots(), *_joined(inputs, depth)
    )
    if got is None:
        return None
    qo, qd, qpos_b, offs_b, rows_b, grades_b, label_b, loffs_b, lrows_b, lgr_b, dupes = got
    qpos = np.frombuffer(qpos_b, dtype=np.int64)
    offs, loffs = np.frombuffer(offs_b, dtype=np.int64), np.frombuffer(loffs_b, dtype=np.int64)
    rows, grades = np.frombuffer(rows_b, dtype=np.int32), np.frombuffer(grades_b, dtype=np.int32)
    labels = np.frombuffer(label_b, dtype=np.int64)
    lrows, lgr = np.frombuffer(lrows_b, dtype=np.int64), np.frombuffer(lgr_b, dtype=np.int32)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("r", "g", "l", "lr", "lg")}
    new_offs, new_loffs, w, total = [0], [0], 0, 0
    for k in np.argsort(qpos[qpos >= 0], kind="stable"):
        a, b, la, lb = offs[k], offs[k + 1], loffs[k], loffs[k + 1]
        parts["r"].append(rows[a:b])
        parts["g"].append(grades[a:b])
        parts["l"].append(np.where(labels[a:b] < 0, -1, labels[a:b] - la + total))
        parts["lr"].append(lrows[la:lb])
        parts["lg"].append(lgr[la:lb])
        w, total = w + (b - a), total + (lb - la)
        new_offs.append(w)
        new_loffs.append(total)

    def cat(key: str, dtype: type) -> bytes:
        return np.concatenate(parts[key] or [np.empty(0)]).astype(dtype).tobytes()

    return [
        bytes(qo),
        bytes(qd),
        bytes(qpos_b),
        np.array(new_offs, dtype=np.int64).tobytes(),
        cat("r", np.int32),
        cat("g", np.int32),
        cat("l", np.int64),
        np.array(new_loffs, dtype=np.int64).tobytes(),
        cat("lr", np.int64),
        cat("lg", np.int32),
        dupes,
    ]


def _as_bytes(out: list[object] | None) -> list[object] | None:
    return None if out is None else [x if isinstance(x, int) else bytes(x) for x in out]


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    depth=st.sampled_from([-1, 0, 1, 3, 7]),
    comments=st.booleans(),
    shuffled=st.booleans(),
)
def test_scan_equals_parse_and_align(
    tmp_path: Path, seed: int, depth: int, comments: bool, shuffled: bool
) -> None:
    """scan_block gives parse_trec + block_align's arrays (its judged queries in the block's
    order); a block whose queries' lines are not together is declined (None)."""
    run_path, qrels_path = random_trec_files(seed, tmp_path, comments=comments, ragged_end=True)
    lines = run_path.read_bytes().splitlines(keepends=True)
    if shuffled:
        np.random.default_rng(seed).shuffle(lines)
        if lines and not lines[-1].endswith(b"\n"):
            lines[-1] += b"\n"
    data = b"".join(lines)
    inputs = EvalInputs(qrels=read_trec_qrels(qrels_path))
    two, one = _as_bytes(_two_passes(data, inputs, depth)), _as_bytes(_scan(data, inputs, depth))
    first_lines: list[bytes] = []
    for line in data.splitlines():
        if line.strip() and not line.startswith(b"#"):
            q = line.split()[0]
            if not first_lines or first_lines[-1] != q:
                first_lines.append(q)
    together = len(first_lines) == len(set(first_lines))
    if two is None or not together:
        assert one is None
    else:
        assert one == two


def test_scan_orders_long_queries_and_long_ids(tmp_path: Path) -> None:
    """A query of 3,000 lines in reverse order (the merge sort), doc and query ids longer than
    8 bytes (hashed and compared a word at a time), ids that differ only past 8 bytes, scores
    in every form the parsers read (exponents, signs: parse_float's general reading)."""
    rng = np.random.default_rng(7)
    qids = ["topic-000000001", "topic-000000002", "t"]
    run: list[str] = []
    for q in qids:
        n = 3000 if q == qids[0] else 40
        for r in range(n):
            doc = f"document-{rng.integers(0, 5000):06d}"
            score = rng.choice(["1e-3", "-2.5", "+3", "7", f"{rng.random():.3f}", "0.5"])
            run.append(f"{q} Q0 {doc} {r} {score} t\n")
    run_sorted = run[:3000][::-1] + run[3000:]
    qrels = [f"{q} 0 document-{d:06d} {d % 4}\n" for q in qids[:2] for d in range(0, 5000, 7)]
    (tmp_path / "q.txt").write_text("".join(qrels))
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    for depth in (-1, 100):
        data = "".join(run_sorted).encode()
        one = _as_bytes(_scan(data, inputs, depth))
        assert one is not None
        assert one == _as_bytes(_two_passes(data, inputs, depth))
    _compare("".join(run_sorted).encode(), inputs, ["map", "ndcg@10", "P@5", "num_ret"])


def test_scan_tells_apart_ids_sharing_their_first_and_last_words(tmp_path: Path) -> None:
    """Doc and query ids of every length from 1 to 40 bytes, hashed as one or two words loaded
    where they lie (overlapping under 16 bytes) or 16 bytes at a time: ids that differ in one
    middle byte only, in their length only (a run of one byte) or past their first and last
    8 bytes are each found as themselves, and only themselves."""
    docs: list[str] = []
    for n in range(1, 41):
        docs.append("a" * n)  # the same bytes, every length
        if n >= 3:
            middle = n // 2
            docs.append("a" * middle + "b" + "a" * (n - middle - 1))  # one middle byte differs
    qids = ["q" * n for n in range(1, 20)]
    judged = docs[::2]  # every other doc judged: the rest must not be found
    qrels = "".join(f"{q} 0 {d} {1 + len(d) % 3}\n" for q in qids[::2] for d in judged)
    (tmp_path / "q.txt").write_text(qrels)
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    run = "".join(
        f"{q} Q0 {d} {r + 1} {len(docs) - r} t\n" for q in qids for r, d in enumerate(docs)
    )
    data = run.encode()
    one = _as_bytes(_scan(data, inputs, -1))
    assert one is not None
    assert one == _as_bytes(_two_passes(data, inputs, -1))
    grades = np.frombuffer(one[5], dtype=np.int32)  # type: ignore[arg-type]
    judged_grades = {d: 1 + len(d) % 3 for d in judged}
    expected = [judged_grades.get(d, NOT_JUDGED) for _q in qids[::2] for d in docs]
    assert grades.tolist() == expected
    _compare(data, inputs, ["map", "ndcg@10", "P@5", "num_ret"])


def test_scan_declines_a_query_seen_before(tmp_path: Path) -> None:
    """A judged or unjudged query whose lines come back after another query's: the scan
    declines, and the block's values come from the two-pass path (which groups them)."""
    (tmp_path / "q.txt").write_text("a 0 d1 1\nb 0 d2 1\n")
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    judged_back = b"a Q0 d1 1 1.0 t\nb Q0 d2 1 1.0 t\na Q0 d3 2 3.0 t\n"
    unjudged_back = b"z Q0 d1 1 1.0 t\nb Q0 d2 1 1.0 t\nz Q0 d3 2 3.0 t\n"
    for data in (judged_back, unjudged_back):
        assert _scan(data, inputs, -1) is None
        assert _two_passes(data, inputs, -1) is not None
        _compare(data, inputs, ["map", "P@2", "num_ret"])
    together = b"a Q0 d1 1 1.0 t\na Q0 d3 2 3.0 t\nz Q0 d1 1 1.0 t\nb Q0 d2 1 1.0 t\n"
    assert _as_bytes(_scan(together, inputs, -1)) == _as_bytes(_two_passes(together, inputs, -1))


def test_scan_declines_a_judged_query_back_many_times_without_hanging(tmp_path: Path) -> None:
    """A judged query whose lines come back forty times in one block (a shuffled file), each
    time after an unjudged query's: each
    visit's judgments table is its own, so the visits do not fill it for the next (they did,
    and the probe for a free slot never ended); the block is declined as any block whose
    queries are not together. Run in a child process, so that a hang fails the test."""
    import subprocess
    import sys

    (tmp_path / "q.txt").write_text("a 0 d1 1\na 0 d2 2\nb 0 d3 1\n")
    # between the visits an unjudged query (z), which leaves the judgments table as it is
    lines = "".join(f"a Q0 d{i % 3 + 1} 1 1.0 t\nz Q0 d3 1 1.0 t\n" for i in range(40))
    (tmp_path / "run.txt").write_text(lines)
    code = (
        "import sys; sys.path.insert(0, sys.argv[3]);"
        "from pathlib import Path;"
        "from ragmeter.evaluation import EvalInputs;"
        "from ragmeter.io.trec import read_trec_qrels;"
        "from test_native_blocks import _scan;"
        "inputs = EvalInputs(qrels=read_trec_qrels(Path(sys.argv[1])));"
        "print(_scan(Path(sys.argv[2]).read_bytes(), inputs, -1))"
    )
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "q.txt"), str(tmp_path / "run.txt"), here],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    _compare(lines.encode(), inputs, ["map", "P@2", "num_ret"])


def test_key_slots_find_every_key(tmp_path: Path) -> None:
    """The hash table of the qrels' query ids finds each id at its position, by its whole
    bytes (a prefix or an extension of an id is not it)."""
    ids = sorted({f"q{i}" for i in range(0, 3000, 3)} | {"q", "x" * 12})
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 d1 1\n" for q in ids))
    inputs = EvalInputs(qrels=read_trec_qrels(tmp_path / "q.txt"))
    asked = [*ids, "q1", "q30000", "x" * 11, "x" * 13]
    data = "".join(f"{q} Q0 d1 1 1.0 t\n" for q in asked).encode()
    one = _scan(data, inputs, -1)
    assert one is not None
    qpos = np.frombuffer(one[2], dtype=np.int64).tolist()  # type: ignore[arg-type]
    assert qpos == [*range(len(ids)), -1, -1, -1, -1]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_scan_reads_lines_of_any_length(seed: int) -> None:
    """Lines shorter and longer than the 64 bytes of a mask window (doc ids of 1 to 150 bytes,
    runs of blanks and tabs between fields), across the chunks the masks are computed for and
    at the text's end: the scan gives the two passes' arrays."""
    rng = np.random.default_rng(seed)
    lines: list[str] = []
    qrels: dict[tuple[int, str], str] = {}
    for q in range(int(rng.integers(1, 30))):
        for r in range(int(rng.integers(1, 12))):
            doc = "d" * int(rng.integers(0, 150)) + str(rng.integers(0, 9))
            sep = " " * int(rng.integers(1, 3)) if rng.random() < 0.9 else "\t"
            lines.append(sep.join([f"q{q}", "Q0", doc, str(r), f"{rng.random() * 10:.3f}", "t"]))
            if rng.random() < 0.3:
                qrels.setdefault((q, doc), f"q{q} 0 {doc} {rng.integers(0, 3)}\n")
    qrels[(0, "dX")] = "q0 0 dX 1\n"
    data = ("\n".join(lines) + ("\n" if rng.random() < 0.7 else "")).encode()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "q.txt"
        path.write_text("".join(qrels.values()))
        inputs = EvalInputs(qrels=read_trec_qrels(path))
        one, two = _as_bytes(_scan(data, inputs, -1)), _as_bytes(_two_passes(data, inputs, -1))
    assert one is not None
    assert one == two


def _families_reading_no_ids() -> list[str]:
    from ragmeter.measures import REGISTRY

    return sorted(f.name for f in REGISTRY.families() if not f.reads_query_ids)


@pytest.mark.parametrize("family", _families_reading_no_ids())
def test_families_said_to_read_no_ids_read_none(family: str) -> None:
    """A family that says ``reads_query_ids=False`` gives the same values on an alignment
    whose ids are :class:`UnreadId` (any use of one as text raises)."""
    from dataclasses import replace

    from ragmeter.core.align import align
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation.native_blocks import unread_ids
    from ragmeter.measures import REGISTRY, parse_measure

    spec = REGISTRY.family(family)
    cut = "@0.5" if spec.cutoff_type is float else "@3"
    name = family + ("" if spec.cutoff == "none" else cut)
    run = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 1.0}})
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d3": 2, "d9": 0}, "q2": {"d5": 1}, "q3": {"d6": 2}})
    al = align(run, qrels)
    m = parse_measure(name)
    want = m.spec.compute(al, m)
    got = m.spec.compute(replace(al, query_ids=unread_ids(al.n_queries)), m)
    assert np.array_equal(got, want, equal_nan=True)
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


def test_unread_ids_refuse_to_be_text() -> None:
    from ragmeter.evaluation.native_blocks import unread_ids

    ids = unread_ids(2)
    for use in (str, repr, lambda q: f"{q}"):
        with pytest.raises(RuntimeError, match="reads_query_ids"):
            use(ids[0])
