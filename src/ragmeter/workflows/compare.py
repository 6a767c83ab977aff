"""Comparing run files: what ``ragmeter compare`` does between parsing and printing.

The runs are evaluated as by :func:`ragmeter.workflows.evaluate.evaluate_files` (same
settings), then compared with a baseline by :func:`ragmeter.stats.compare` (SPEC §6), or
every run with every other by :func:`ragmeter.stats.all_pairs`. Groups of runs (seeds or
folds of one system) are summarised across seeds (:func:`ragmeter.stats.seed_summaries`) and
compared as one system (:func:`ragmeter.analysis.seeds.merge_groups`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragmeter.errors import RagmeterError
from ragmeter.metrics.defaults import DEFAULT_MEASURES
from ragmeter.workflows.evaluate import EvaluationSettings, own_qrels, read_runs
from ragmeter.workflows.inputs import InputFiles, distinct_run_names

if TYPE_CHECKING:
    from ragmeter.analysis.calibration import LabelsDescription
    from ragmeter.core.data import Run
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.allpairs import AllPairs
    from ragmeter.stats.comparison import Comparison
    from ragmeter.stats.seeds import SeedSummary


@dataclass(frozen=True)
class CompareSettings:
    """The paired test and its resampling, as :func:`ragmeter.stats.compare` takes them."""

    test: Literal["randomization", "t", "wilcoxon"] = "randomization"
    #: ``tukey`` (Tukey's HSD) only for all pairs
    correction: Literal["holm", "bonferroni", "bh", "none", "tukey"] = "holm"
    alpha: float = 0.05
    confidence: float = 0.95
    permutations: int = 10_000
    bootstrap: int = 10_000
    seed: int = 0
    #: |run − baseline| ≤ this on a query is a tie in the win/tie/loss counts
    tie_tolerance: float = 0.0

    def options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`ragmeter.stats.compare`."""
        return asdict(self)

    def pairs_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`ragmeter.stats.all_pairs`."""
        keep = ("test", "correction", "alpha", "permutations", "seed", "tie_tolerance")
        return {k: v for k, v in asdict(self).items() if k in keep}


@dataclass(frozen=True)
class CompareRequest:
    """What ``ragmeter compare`` was asked: two or more run files, their qrels (``None``:
    samples files with their own judgments), measures and the baseline (path, file name or
    run name; ``None``: the first run). ``all_pairs``: compare every run with every other
    instead; ``groups``: group name → its runs (path, file name or run name), the seeds or
    folds of one system, summarised across seeds and compared as one system; ``group_by``: a
    regular expression that groups the runs whose names it matches by its first capture group
    (``(.*)_seed\\d+`` puts ``dense_seed1.txt`` and ``dense_seed2.txt`` in group ``dense``);
    ``inputs``: the side inputs, one value (without qrels: the queries with nuggets, or with
    span labels, are compared)."""

    runs: Sequence[Path]
    qrels: Path | None = None
    measures: Sequence[str] | None = None
    baseline: str | None = None
    settings: EvaluationSettings = field(default_factory=EvaluationSettings)
    compare: CompareSettings = field(default_factory=CompareSettings)
    all_pairs: bool = False
    groups: Mapping[str, Sequence[str]] | None = None
    group_by: str | None = None
    #: nuggets, citation support, ``--spans`` / ``--chunks`` (runs of different chunkings on
    #: the same span labels)…
    inputs: InputFiles = field(default_factory=InputFiles)
    #: what the qrels' labels are (:func:`ragmeter.analysis.calibration.label_description`),
    #: carried into the JSON outputs and the store
    described_labels: LabelsDescription | None = None


@dataclass(frozen=True)
class CompareOutcome:
    """The evaluation of every run, its comparison (against the baseline, or of all pairs
    with ``all_pairs``), the seed summaries of the groups, and the parameters a save
    records."""

    evaluation: Evaluation
    comparison: Comparison | None
    settings: dict[str, Any]
    all_pairs: AllPairs | None = None
    seeds: tuple[SeedSummary, ...] = ()
    describe_inputs: Callable[[], dict[str, Any]] | None = field(
        default=None, repr=False, compare=False
    )

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The settings, and the input files with their hashes: described when asked for
        (hashing run files of gigabytes takes seconds that only a save needs)."""
        if self.describe_inputs is None:
            return dict(self.settings)
        return {**self.settings, "inputs": self.describe_inputs()}


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


def group_names(
    groups: Mapping[str, Sequence[str]], run_names: list[str], paths: list[Path]
) -> dict[str, list[str]]:
    """Each group's runs by run name (a member may be given by path, file name or run name)."""
    out: dict[str, list[str]] = {}
    for group, members in groups.items():
        names = []
        for member in members:
            for name, path in zip(run_names, paths, strict=True):
                if member in (str(path), path.name, name):
                    names.append(name)
                    break
            else:
                choices = ", ".join(run_names)
                raise RagmeterError(f"--group {group}: {member!r} is none of the runs ({choices})")
        out[group] = names
    return out


def groups_by_pattern(pattern: str, names: Sequence[str]) -> dict[str, list[str]]:
    """The runs whose name ``pattern`` matches (``re.search``), grouped by its first capture
    group (the whole match if it has none), in the runs' order."""
    import re

    try:
        rule = re.compile(pattern)
    except re.error as exc:
        raise RagmeterError(f"--group-by {pattern!r} is not a regular expression: {exc}") from None
    groups: dict[str, list[str]] = {}
    for name in names:
        match = rule.search(name)
        if match is not None:
            key = match.group(1) if rule.groups else match.group(0)
            groups.setdefault(key or name, []).append(name)
    if not groups:
        raise RagmeterError(f"--group-by {pattern!r} matches none of the runs ({', '.join(names)})")
    return groups


def _grouped(
    request: CompareRequest, result: Evaluation, run_names: list[str], paths: list[Path]
) -> tuple[Evaluation, tuple[SeedSummary, ...], str]:
    """The evaluation to compare (groups merged), the seed summaries, the baseline's name."""
    from ragmeter.analysis.seeds import merge_groups
    from ragmeter.stats.seeds import seed_summaries

    groups = group_names(request.groups or {}, run_names, paths)
    if request.group_by is not None:
        for group, members in groups_by_pattern(request.group_by, run_names).items():
            if group in groups:
                raise RagmeterError(f"--group-by makes group {group!r}, also given by --group")
            groups[group] = members
    if request.baseline is not None and request.baseline in groups:
        base = request.baseline
    else:
        base = run_names[baseline_index(request.baseline, run_names, paths)]
        base = next((g for g, members in groups.items() if base in members), base)
    if not groups:
        return result, (), base
    try:
        seeds = seed_summaries(result, groups, confidence=request.compare.confidence)
        merged = merge_groups(result, groups)
    except (KeyError, ValueError) as exc:
        raise RagmeterError(f"--group: {exc}") from exc
    if len(merged.runs) < 2:
        raise RagmeterError("compare needs at least two systems after grouping the runs")
    return merged, seeds, base


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
    side = request.inputs
    own = side.default_measures()
    if side.spans is not None and not own:
        from ragmeter.workflows.spans import SPAN_MEASURES

        own = list(SPAN_MEASURES)
    names = list(request.measures or own or DEFAULT_MEASURES)
    options = request.settings.options()
    if request.compare.correction == "tukey" and not request.all_pairs:
        raise RagmeterError(
            "--correction tukey compares all pairs: add --all-pairs (against one baseline, "
            "use holm, bonferroni, bh or none)"
        )
    if request.qrels is not None or side.spans is not None:
        # the paths go to the library (TREC run files are streamed), named as read_runs names;
        # without qrels, the queries with span labels are compared
        run_names = distinct_run_names([p.name for p in paths], paths)
        runs = dict(zip(run_names, paths, strict=True))
        options.update(side.read(names, paths, run_names))
        qrels = read_qrels(request.qrels) if request.qrels is not None else None
        result = evaluate(runs, qrels, names, **options)
    else:
        options.update(side.read(names, paths))
        run_objs = read_runs(paths)
        run_names = [r.name for r in run_objs]
        if side.own_queries:
            # the queries with nuggets are evaluated (Ragnarök answers read as runs of their
            # references); assignments are matched to the runs by name
            result = evaluate(run_objs, None, names, **options)
        else:
            result = Evaluation.concat(
                [
                    evaluate(r, own_qrels(p), names, **options)
                    for r, p in zip(run_objs, paths, strict=True)
                ]
            )
    labels = request.described_labels.to_json() if request.described_labels else None
    result = result.with_labels(labels)
    compared, seeds, base = _grouped(request, result, run_names, paths)
    parameters: dict[str, Any] = {"measures": names, **request.settings.saved()}
    if request.all_pairs:
        from ragmeter.stats.allpairs import all_pairs

        table = replace(all_pairs(compared, **request.compare.pairs_options()), labels=labels)
        parameters |= {"all_pairs": True, **request.compare.pairs_options()}
        comparison = None
    else:
        comparison = compare(compared, baseline=base, **request.compare.options())
        comparison = replace(comparison, labels=labels)
        table = None
        parameters |= {"baseline": comparison.baseline, **request.compare.options()}
    if seeds:
        parameters["groups"] = {s.group: list(s.seeds) for s in seeds}

    def inputs() -> dict[str, Any]:
        spans = side.span_files()  # the nugget files are not recorded by compare
        return input_files(
            qrels=request.qrels,
            runs=paths,
            pool=request.settings.pool,
            **(spans.files() if spans else {}),
        )

    return CompareOutcome(result, comparison, parameters, table, seeds, inputs)
