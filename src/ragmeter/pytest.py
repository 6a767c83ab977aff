"""A pytest plugin: gate retrieval quality in a test suite, with the rules of ``ragmeter check``.

Name it in the root ``conftest.py`` (or pass ``-p ragmeter.pytest`` to pytest)::

    pytest_plugins = ["ragmeter.pytest"]

It is not a ``pytest11`` entry point on purpose: pytest would then import ragmeter (with
numpy and pyarrow, a second on a busy machine) at the start of every test session of every
project installed beside it, gate or none.

It gives a fixture and an assertion helper::

    from ragmeter.pytest import assert_no_regression

    def test_retrieval_did_not_regress(ragmeter_gate):
        ragmeter_gate.check(
            "runs/candidate.trec",
            baseline="runs/main.trec",
            qrels="qrels.txt",
            rules=["ndcg@10 drop > 0.01 significant", "recall@100 drop > 2%"],
        )

    def test_same_without_the_fixture():
        assert_no_regression("runs/candidate.trec", "runs/main.trec", "qrels.txt",
                             ["ndcg@10 drop > 0.01 significant"])

A broken rule fails the test with one line per rule (the means, the change and the adjusted
p-value); every gate the fixture checked is listed in pytest's terminal summary. The rules and
the decision are :mod:`ragmeter.analysis.gate`'s (see ``docs/check.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragmeter.analysis.gate import GateResult, Rule, check_runs

if TYPE_CHECKING:
    from typing import TypeAlias

    from ragmeter.core.data import Qrels, Run

    #: a run, or the path of a run file
    RunLike: TypeAlias = Run | str | Path
    #: qrels, ``{qid: {doc_id: grade}}``, or the path of a qrels file
    QrelsLike: TypeAlias = Qrels | Mapping[str, Mapping[str, int]] | str | Path
    #: the rules, as written (``"ndcg@10 drop > 0.01"``) or as :class:`Rule` objects
    Rules: TypeAlias = Sequence[str | Rule]

_RESULTS = pytest.StashKey[list[GateResult]]()


def assert_no_regression(
    run: RunLike,
    baseline: RunLike,
    qrels: QrelsLike,
    rules: Rules,
    **options: Any,
) -> GateResult:
    """Check ``rules`` (:func:`ragmeter.analysis.gate.check_runs`, which takes ``options``:
    ``test``, ``alpha``, ``permutations``, ``seed`` and :func:`ragmeter.evaluate`'s options);
    raise ``AssertionError`` naming every broken rule, else return the result."""
    result = check_runs(run, baseline, qrels, rules, **options)
    if result.failed:
        raise AssertionError(result.describe())
    return result


class Gate:
    """What the ``ragmeter_gate`` fixture gives: :meth:`check` asserts like
    :func:`assert_no_regression` and keeps each result for the terminal summary."""

    def __init__(self, results: list[GateResult], **defaults: Any) -> None:
        self.results = results
        self.defaults = defaults

    def check(
        self, run: RunLike, *, baseline: RunLike, qrels: QrelsLike, rules: Rules, **options: Any
    ) -> GateResult:
        """Check the rules; a broken one fails the test."""
        result = self.result(run, baseline=baseline, qrels=qrels, rules=rules, **options)
        if result.failed:
            raise AssertionError(result.describe())
        return result

    def result(
        self, run: RunLike, *, baseline: RunLike, qrels: QrelsLike, rules: Rules, **options: Any
    ) -> GateResult:
        """The result without asserting (to inspect ``outcomes`` yourself)."""
        result = check_runs(run, baseline, qrels, rules, **{**self.defaults, **options})
        self.results.append(result)
        return result


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("ragmeter_alpha", "significance level of ragmeter_gate's rules", default="0.05")
    parser.addini(
        "ragmeter_test", "paired test of ragmeter_gate's significant rules", default="randomization"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RESULTS] = []


@pytest.fixture
def ragmeter_gate(request: pytest.FixtureRequest) -> Gate:
    """A :class:`Gate` with the ``ragmeter_alpha`` and ``ragmeter_test`` ini settings."""
    config = request.config
    alpha = float(str(config.getini("ragmeter_alpha")))
    test = str(config.getini("ragmeter_test"))
    return Gate(config.stash[_RESULTS], alpha=alpha, test=test)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, [])
    if not results:
        return
    terminalreporter.section("ragmeter gates")
    for result in results:
        terminalreporter.write_line(result.describe().splitlines()[0])
        for line in result.label_lines:  # numbers on LLM labels say so
            terminalreporter.write_line(f"  labels: {line}")
