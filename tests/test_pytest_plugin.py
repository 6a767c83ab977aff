"""The ``ragmeter.pytest`` plugin, run by pytester in a throwaway project: the fixture and the
assertion helper pass on no change and fail a test, naming the rule, on the example
regression (BM25 → dense: nDCG@10 falls by 0.16 on 12 queries, exact randomization p =
0.0195)."""

from __future__ import annotations

from pathlib import Path

import pytest

# pytester runs pytest in this process and forgets the modules each run imported; numpy's
# extension cannot be imported twice, so what the gate imports is imported here, once
import ragmeter.evaluation
import ragmeter.io.readers
import ragmeter.pytest
import ragmeter.stats.comparison  # noqa: F401

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FILES = {
    "BM25": str(EXAMPLES / "run_bm25.txt"),
    "DENSE": str(EXAMPLES / "run_dense.txt"),
    "QRELS": str(EXAMPLES / "qrels.txt"),
}
HEADER = "\n".join(f"{k} = {v!r}" for k, v in FILES.items()) + "\n"


def test_fixture_and_helper(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["ragmeter.pytest"]\n')
    pytester.makepyfile(
        HEADER
        + """
from ragmeter.pytest import assert_no_regression

RULES = ["ndcg@10 drop > 0.01 significant", "map drop > 5%"]

def test_same_run_passes(ragmeter_gate):
    result = ragmeter_gate.check(BM25, baseline=BM25, qrels=QRELS, rules=RULES)
    assert not result.failed

def test_regression_fails(ragmeter_gate):
    ragmeter_gate.check(DENSE, baseline=BM25, qrels=QRELS, rules=RULES)

def test_helper_fails():
    assert_no_regression(DENSE, BM25, QRELS, ["ndcg@10 drop > 0.01 significant"])

def test_result_does_not_assert(ragmeter_gate):
    result = ragmeter_gate.result(DENSE, baseline=BM25, qrels=QRELS, rules=RULES)
    assert result.failed and [o.broken for o in result.outcomes] == [True, True]
"""
    )
    out = pytester.runpytest("-p", "no:cacheprovider")
    out.assert_outcomes(passed=2, failed=2)
    out.stdout.fnmatch_lines(
        [
            "*AssertionError: run_dense.txt against run_bm25.txt: 2 rule(s) broken",
            "*ndcg@10 drop > 0.01 significant: ndcg@10 0.6277 → 0.4651 (drop 0.1626, p (Holm)*",
            "*ragmeter gates*",
        ]
    )


def test_ini_alpha_reaches_the_fixture(pytester: pytest.Pytester) -> None:
    # at α = 0.01 the exact p = 0.0195 of the example regression is not significant
    pytester.makeconftest('pytest_plugins = ["ragmeter.pytest"]\n')
    pytester.makeini("[pytest]\nragmeter_alpha = 0.01\n")
    pytester.makepyfile(
        HEADER
        + """
def test_not_significant_at_001(ragmeter_gate):
    ragmeter_gate.check(DENSE, baseline=BM25, qrels=QRELS,
                        rules=["ndcg@10 drop > 0.01 significant"])
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_bad_rule_is_an_error_in_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        HEADER
        + """
import pytest
from ragmeter.analysis.gate import RuleError
from ragmeter.pytest import assert_no_regression

def test_bad_rule():
    with pytest.raises(RuleError, match="'falls' is not a direction"):
        assert_no_regression(BM25, BM25, QRELS, ["ndcg@10 falls > 0.1"])
"""
    )
    pytester.runpytest("-p", "ragmeter.pytest", "-p", "no:cacheprovider").assert_outcomes(passed=1)
