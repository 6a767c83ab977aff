"""Count measures (NumRet, NumRel, NumRelRet, NumQ and trec_eval's num_*) aggregate by sum,
as trec_eval's "all" line and ir_measures do, and every view prints that one number:
evaluate, compare (its CI and Δ too), and so the reports built on them (the store keeps
evaluate's: test_store.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter import Evaluation, evaluate
from ragmeter.io.trec import read_trec_qrels, read_trec_run
from ragmeter.stats.comparison import compare

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
COUNTS = ("NumRet", "NumRel", "NumRelRet", "NumRelRet(rel=2)", "NumQ", "num_unjudged_ret")


def _evaluation() -> Evaluation:
    runs = [read_trec_run(EXAMPLES / "run_bm25.txt"), read_trec_run(EXAMPLES / "run_dense.txt")]
    return evaluate(runs, read_trec_qrels(EXAMPLES / "qrels.txt"), list(COUNTS))


def test_sums_are_ir_measures_aggregates() -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")
    qrels = list(ir_measures.read_trec_qrels(str(EXAMPLES / "qrels.txt")))
    run = list(ir_measures.read_trec_run(str(EXAMPLES / "run_bm25.txt")))
    result = _evaluation()["run_bm25.txt"]
    for name in ("NumRet", "NumRel", "NumRelRet", "NumRelRet(rel=2)", "NumQ"):
        measure = ir_measures.parse_measure(name)
        theirs = ir_measures.pytrec_eval.calc_aggregate([measure], qrels, run)[measure]
        assert result.aggregate(name).value == theirs, name
    assert result.aggregate("NumRet").value == 600  # 12 queries × 50 retrieved
    assert result.aggregate("NumQ").value == 12


def test_compare_prints_the_sum_and_the_difference_of_sums() -> None:
    evaluation = _evaluation()
    base, other = evaluation["run_bm25.txt"], evaluation["run_dense.txt"]
    comparison = compare(evaluation, bootstrap=200, permutations=200, seed=0)
    for name in COUNTS:
        assert comparison.summary("run_bm25.txt", name).mean == base.aggregate(name).value
        assert comparison.summary("run_dense.txt", name).mean == other.aggregate(name).value
        diff = next(d for d in comparison.differences if d.measure == name)
        assert diff.n_dropped == 0
        expected = other.aggregate(name).value - base.aggregate(name).value  # type: ignore[operator]
        assert diff.difference == pytest.approx(expected, abs=1e-9)
        summary = comparison.summary("run_dense.txt", name)
        assert summary.ci_low <= summary.mean <= summary.ci_high
    # num_rel_ret differs between the runs: its CI of the sum is n × that of the mean
    s = comparison.summary("run_dense.txt", "NumRelRet")
    assert s.ci_high - s.ci_low > 12 * 0.5
