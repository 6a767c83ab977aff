"""Comparing run files: what ``ragmeter compare`` does between parsing and printing.

The runs are evaluated as by :func:`ragmeter.workflows.evaluate.evaluate_files` (same
settings), then compared with a baseline by :func:`ragmeter.stats.compare` (SPEC §6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragmeter.errors import RagmeterError
from ragmeter.metrics.defaults import DEFAULT_MEASURES
from ragmeter.workflows.evaluate import (
    EvaluationSettings,
    distinct_run_names,
    own_qrels,
    read_runs,
)

if TYPE_CHECKING:
    from ragmeter.core.data import Run
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.comparison import Comparison


@dataclass(frozen=True)
class CompareSettings:
    """The paired test and its resampling, as :func:`ragmeter.stats.compare` takes them."""

    test: Literal["randomization", "t", "wilcoxon"] = "randomization"
    correction: Literal["holm", "bonferroni", "bh", "none"] = "holm"
    alpha: float = 0.05
    confidence: float = 0.95
    permutations: int = 10_000
    bootstrap: int = 10_000
    seed: int = 0

    def options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`ragmeter.stats.compare`."""
        return asdict(self)


@dataclass(frozen=True)
class CompareRequest:
    """What ``ragmeter compare`` was asked: two or more run files, their qrels (``None``:
    samples files with their own judgments), measures and the baseline (path, file name or
    run name; ``None``: the first run)."""

    runs: Sequence[Path]
    qrels: Path | None = None
    measures: Sequence[str] | None = None
    baseline: str | None = None
    settings: EvaluationSettings = field(default_factory=EvaluationSettings)
    compare: CompareSettings = field(default_factory=CompareSettings)


@dataclass(frozen=True)
class CompareOutcome:
    """The evaluation of every run, its comparison, and the parameters a save records."""

    evaluation: Evaluation
    comparison: Comparison
    parameters: dict[str, Any]


def baseline_index(baseline: str | None, runs: list[Run] | list[str], paths: list[Path]) -> int:
    """The run named by ``--baseline``: its path as given, its file name or its run name
    (``runs``: the runs or their names)."""
    if baseline is None:
        return 0
    names = [r if isinstance(r, str) else r.name for r in runs]
    for i, (name, path) in enumerate(zip(names, paths, strict=True)):
        if baseline in (str(path), path.name, name):
            return i
    choices = ", ".join(names)
    raise RagmeterError(f"--baseline {baseline!r} is none of the runs ({choices})")


def compare_files(request: CompareRequest) -> CompareOutcome:
    """Read, evaluate and compare the runs of ``request``."""
    from ragmeter.evaluation import evaluate
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.readers import read_qrels
    from ragmeter.stats.comparison import compare
    from ragmeter.workflows.saving import input_files

    if len(request.runs) < 2:
        raise RagmeterError("compare needs at least two runs")
    paths = list(request.runs)
    names = list(request.measures or DEFAULT_MEASURES)
    options = request.settings.options()
    if request.qrels is not None:
        # the paths go to the library (TREC run files are streamed), named as read_runs names
        run_names = distinct_run_names([p.name for p in paths], paths)
        base = baseline_index(request.baseline, run_names, paths)
        runs = dict(zip(run_names, paths, strict=True))
        result = evaluate(runs, read_qrels(request.qrels), names, **options)
    else:
        run_objs = read_runs(paths)
        base = baseline_index(request.baseline, run_objs, paths)
        result = Evaluation.concat(
            [
                evaluate(r, own_qrels(p), names, **options)
                for r, p in zip(run_objs, paths, strict=True)
            ]
        )
    comparison = compare(result, baseline=base, **request.compare.options())
    parameters = {
        "measures": names,
        **request.settings.saved(),
        "baseline": comparison.baseline,
        **request.compare.options(),
        "inputs": input_files(qrels=request.qrels, runs=paths, pool=request.settings.pool),
    }
    return CompareOutcome(result, comparison, parameters)
