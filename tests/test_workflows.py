"""The workflows the commands call: the same requests give what the library's own calls give."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import RagmeterError
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.workflows.compare import CompareRequest, CompareSettings, compare_files
from ragmeter.workflows.evaluate import EvaluateRequest, EvaluationSettings, evaluate_files

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RUNS = [EXAMPLES / "run_bm25.txt", EXAMPLES / "run_dense.txt"]
QRELS = EXAMPLES / "qrels.txt"


def test_evaluate_files_is_the_library_call_with_the_defaults() -> None:
    outcome = evaluate_files(EvaluateRequest(runs=RUNS, qrels=QRELS))
    direct = ragmeter.evaluate(
        [read_run(p) for p in RUNS],
        read_qrels(QRELS),
        list(("ndcg@10", "map", "recall@100", "mrr", "P@10")),
    )
    assert outcome.sweep is None
    assert [r.means() for r in outcome.evaluation.runs] == [r.means() for r in direct.runs]
    params = outcome.parameters
    assert params["measures"] == ["ndcg@10", "map", "recall@100", "mrr", "P@10"]
    assert params["cutoffs"] is None and params["rel_level"] == 1
    assert [f["path"] for f in params["inputs"]["runs"]] == [str(p) for p in RUNS]


def test_a_k_range_is_a_sweep_with_the_settings_applied() -> None:
    settings = EvaluationSettings(rel_level=2)
    request = EvaluateRequest(
        runs=RUNS[:1], qrels=QRELS, measures=["P"], settings=settings, k="1:3"
    )
    outcome = evaluate_files(request)
    assert outcome.sweep is not None and outcome.sweep.ks == (1, 2, 3)
    direct = ragmeter.evaluate(read_run(RUNS[0]), read_qrels(QRELS), ["P@2"], rel_level=2)
    name = str(ragmeter.parse_measure("P@2"))
    assert outcome.evaluation.run.means()[name] == direct.run.means()[name]
    assert outcome.parameters["cutoffs"] == [1, 2, 3]


def test_compare_files_uses_the_baseline_and_the_test() -> None:
    request = CompareRequest(
        runs=RUNS,
        qrels=QRELS,
        measures=["map"],
        baseline="run_dense.txt",
        compare=CompareSettings(test="t", permutations=100, bootstrap=100),
    )
    outcome = compare_files(request)
    assert outcome.comparison.baseline == read_run(RUNS[1]).name
    assert outcome.parameters["test"] == "t" and outcome.parameters["measures"] == ["map"]
    with pytest.raises(RagmeterError, match="at least two runs"):
        compare_files(CompareRequest(runs=RUNS[:1], qrels=QRELS))
    with pytest.raises(RagmeterError, match="--baseline 'nope' is none of the runs"):
        compare_files(CompareRequest(runs=RUNS, qrels=QRELS, baseline="nope"))
