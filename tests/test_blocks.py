"""Evaluation in blocks of queries gives the whole-run evaluation's values bit for bit.

Random TREC runs and qrels (ties, duplicate rows, unjudged and missing queries, judgments
below the relevance level) are evaluated whole and in blocks of a random size, on the C and
the pure path; values, aggregates and warnings must be identical.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import _accel
from ragmeter.evaluation import EvalInputs, evaluate_inputs
from ragmeter.evaluation.blocks import (
    BlockMerger,
    RepeatedQueryError,
    evaluate_block,
    evaluate_blocks,
    merge_reading_warnings,
)
from ragmeter.evaluation.engine import resolve_measures
from ragmeter.io.trec import read_trec_qrels, read_trec_run
from ragmeter.io.trec_blocks import TrecRunBlocks
from random_trec import random_trec_files

MEASURES = [
    "ndcg@10",
    "ndcg",
    "map",
    "map@5",
    "recall@5",
    "mrr",
    "P@3",
    "num_rel_ret",
    "num_ret",
    "gm_map",
    "bpref",
    "rprec",
    "err@5",
    "infap",
    "ra_nwg@5",
    "proc@5",
    "pct_proc@5",
    "judged@5",
    "num_queries",
]

GRADES = "-1:1,0:1,1:3,2:4,3:5"


def _files(seed: int, tmp: Path, *, comments: bool = False) -> tuple[Path, Path]:
    return random_trec_files(seed, tmp, comments=comments)


def _same(run_path: Path, qrels_path: Path, block_bytes: int, missing: str) -> None:
    qrels = read_trec_qrels(qrels_path)
    inputs = EvalInputs(qrels=qrels, missing=missing, grade_map=GRADES)  # type: ignore[arg-type]
    whole = evaluate_inputs([read_trec_run(run_path)], inputs, MEASURES)
    blocks = evaluate_blocks(TrecRunBlocks(run_path, block_bytes=block_bytes), inputs, MEASURES)
    a, b = whole.run, blocks.run
    assert a.name == b.name
    assert a.query_ids.tolist() == b.query_ids.tolist()
    # bit for bit: NaN where NaN, and every other value the same double
    assert np.array_equal(np.isnan(a.values), np.isnan(b.values))
    assert (np.nan_to_num(a.values) == np.nan_to_num(b.values)).all()
    assert np.array_equal(a.values, b.values, equal_nan=True)
    assert (a.n_missing, a.n_skipped, a.n_unjudged_queries) == (
        b.n_missing,
        b.n_skipped,
        b.n_unjudged_queries,
    )
    assert a.to_dict() == b.to_dict()
    assert whole.warnings == blocks.warnings


@pytest.fixture(params=["native", "pure"])
def path_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "native":
        if _accel.native is None:
            pytest.skip("C accelerator not built")
    else:
        monkeypatch.setattr(_accel, "native", None)
    return str(request.param)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    block_bytes=st.integers(1, 600),
    missing=st.sampled_from(["zero", "skip"]),
    comments=st.booleans(),
)
def test_blocks_equal_whole_run(
    tmp_path: Path, path_kind: str, seed: int, block_bytes: int, missing: str, comments: bool
) -> None:
    run_path, qrels_path = _files(seed, tmp_path, comments=comments)
    if run_path.stat().st_size == 0:
        return  # an empty run file is an error either way (test_empty_run_file)
    _same(run_path, qrels_path, block_bytes, missing)


def test_blocks_in_any_order_and_partition(tmp_path: Path) -> None:
    """Blocks merge in any order (the seam a partitioned engine uses)."""
    run_path, qrels_path = _files(7, tmp_path)
    qrels = read_trec_qrels(qrels_path)
    inputs = EvalInputs(qrels=qrels, grade_map=GRADES)
    measures = resolve_measures(MEASURES, default_k=inputs.default_k)
    whole = evaluate_inputs([read_trec_run(run_path)], inputs, measures)
    parts = [evaluate_block(r, inputs, measures) for r in TrecRunBlocks(run_path, block_bytes=50)]
    assert len(parts) > 2
    merger = BlockMerger(whole.run.name, inputs, measures)
    for part in reversed(parts):
        merger.add(part)
    result, warnings = merger.result()
    assert np.array_equal(result.values, whole.run.values, equal_nan=True)
    assert (*qrels.warnings, *warnings) == whole.warnings


def test_repeated_query_names_file_and_line(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    lines = [f"q{q} Q0 d{d} {d} {10 - d} t" for q in (1, 2) for d in range(5)]
    lines.append("q1 Q0 d9 6 0.5 t")  # q1 again, after q2
    run.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    inputs = EvalInputs(qrels=read_trec_qrels(qrels))
    with pytest.raises(RepeatedQueryError) as info:
        evaluate_blocks(TrecRunBlocks(run, block_bytes=40), inputs, ["map"])
    assert info.value.source == str(run) and info.value.line == 11
    assert "q1" in str(info.value) and "grouped by query" in str(info.value)


def test_error_line_is_the_files(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    lines = [f"q{q} Q0 d{d} {d} {10 - d} t" for q in range(5) for d in range(5)]
    lines[17] = "q3 Q0 d2 3 ten t"
    run.write_text("\n".join(lines) + "\n")
    with pytest.raises(Exception) as info:
        list(TrecRunBlocks(run, block_bytes=30))
    assert getattr(info.value, "line", None) == 18


def test_merge_reading_warnings() -> None:
    got = merge_reading_warnings(
        [
            "r.txt: 2 duplicate (query, doc) row(s) dropped; x",
            "r.txt: CRLF line endings read as LF (as trec_eval does)",
            "r.txt: 3 duplicate (query, doc) row(s) dropped; x",
            "r.txt: CRLF line endings read as LF (as trec_eval does)",
        ]
    )
    assert got == [
        "r.txt: CRLF line endings read as LF (as trec_eval does)",
        "r.txt: 5 duplicate (query, doc) row(s) dropped; x",
    ]


def test_query_index_finds_positions_by_bisection_and_falls_back_to_a_dict():
    import numpy as np

    from ragmeter.evaluation.blocks import QueryIndex

    # byte order: "a" < "ab" < "b\x01" < "q1" < "q10" < "q2" < "zz" < "é" (0xC3 0xA9)
    ids = np.array(["a", "ab", "b\x01", "q1", "q10", "q2", "zz", "é"], dtype=object)
    index = QueryIndex(ids)
    asked = ["q10", "a", "zzz", "", "é", "a\x00", "q1", "nope", "b\x01"]
    assert index.positions(asked).tolist() == [4, 0, -1, -1, 7, -1, 3, -1, 2]
    assert index.get("q2") == 5 and index.get("q3") == -1
    # an id with a NUL: a dict, the same answers
    with_nul = QueryIndex(np.array(["a", "b\x00"], dtype=object))
    assert with_nul.positions(["b\x00", "b", "a"]).tolist() == [1, -1, 0]
    assert QueryIndex(np.array([], dtype=object)).positions(["a"]).tolist() == [-1]


@pytest.mark.parametrize("seed", range(8))
def test_absent_queries_scored_in_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Judged queries the run lacks are scored as empty runs a few at a time (a small run
    against 10 M judged queries must not align them all at once), with the same values."""
    from ragmeter.evaluation import blocks

    monkeypatch.setattr(blocks, "ABSENT_BLOCK", 1 + seed % 3)
    run_path, qrels_path = _files(seed, tmp_path)
    if run_path.stat().st_size == 0:
        return
    _same(run_path, qrels_path, 200, "zero")


def test_a_block_in_any_order_merges_and_names_the_first_repeated_query() -> None:
    """The one-pass path gives a block's queries in the block's order: rows land at their
    positions, and a repeated query is named as with ascending positions (the first in the
    qrels' order)."""
    from ragmeter.core.data import Qrels
    from ragmeter.evaluation.blocks import BlockValues, RepeatedQueryError

    qrels = Qrels.from_dict({"a": {"d": 1}, "b": {"d": 1}, "c": {"d": 1}})
    inputs = EvalInputs(qrels=qrels)
    measures = resolve_measures(["P@1"], default_k=inputs.default_k)
    merger = BlockMerger("r", inputs, measures)
    merger.add(BlockValues(np.array([2, 0]), np.array([[0.25], [0.5]], order="F")))
    merger.add(BlockValues(np.array([1]), np.array([[1.0]], order="F")))
    result, _ = merger.result()
    assert result.values[:, 0].tolist() == [0.5, 1.0, 0.25]
    with pytest.raises(RepeatedQueryError, match="'a'"):
        merger.add(BlockValues(np.array([2, 0]), np.array([[0.0], [0.0]], order="F")))
