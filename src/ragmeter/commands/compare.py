"""``ragmeter compare``: did it get better? Paired tests of runs against a baseline (SPEC §6).

``ragmeter compare RUN_A RUN_B [RUN_C ...] --qrels Q -m ndcg@10 [--baseline RUN_A]
[--all-pairs] [--group NAME=RUN,RUN,...] [--tie-tolerance T]
[--test randomization|t|wilcoxon] [--correction holm|bonferroni|bh|none|tukey]
[--permutations N] [--bootstrap N] [--seed N] [--alpha A]
[--format table|json|csv|markdown|latex|html] [-o FILE]``

The runs are evaluated as by ``ragmeter evaluate`` (same options), then compared by
:func:`ragmeter.workflows.compare.compare_files` and printed by
:mod:`ragmeter.report.comparison` (against the baseline) or :mod:`ragmeter.report.allpairs`
(all pairs, seed summaries).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.labels import CalibrationFile, label_description, lines_of, tell
from ragmeter.commands.options import (
    Alpha,
    AssignmentFiles,
    Baseline,
    ChunkFiles,
    CitationSupportFile,
    ComparePairedTests,
    Confidence,
    EngineOptions,
    EvaluationOptions,
    Measures,
    NuggetsFile,
    Output,
    SpansFile,
    compare_settings,
    evaluation_settings,
    fail,
    input_files,
    option_groups,
)
from ragmeter.commands.output import CompareFormat, SaveOptions
from ragmeter.commands.ppi import HumanQrels, LabelledQueries, PPIEstimator, PPIFlag, PPILambda
from ragmeter.errors import RagmeterError

AllPairsOption = Annotated[
    bool,
    typer.Option(
        "--all-pairs",
        help="Compare every run with every other: a table of means with the letters of the "
        "runs each is significantly better than (correction over the pairs of each measure).",
    ),
]
GroupOption = Annotated[
    list[str] | None,
    typer.Option(
        "--group",
        "-g",
        help="NAME=RUN,RUN,...: seeds or folds of one system, shown as mean ± t-interval "
        "across seeds and compared as one system (per-query mean over its seeds); repeatable.",
    ),
]
GroupBy = Annotated[
    str | None,
    typer.Option(
        "--group-by",
        help="A regular expression on the run names: the runs it matches form groups (as "
        "--group) named by its first capture group, e.g. '(.*)_seed\\d+'.",
    ),
]
TieTolerance = Annotated[
    float,
    typer.Option(
        "--tie-tolerance",
        min=0.0,
        help="A query where |run − baseline| ≤ this is a tie in the W/T/L counts (default 0: "
        "equal values).",
    ),
]


def parse_groups(specs: list[str] | None) -> dict[str, list[str]] | None:
    """``["dense=a.txt,b.txt"]`` → ``{"dense": ["a.txt", "b.txt"]}`` (a clear error else)."""
    if not specs:
        return None
    groups: dict[str, list[str]] = {}
    for spec in specs:
        name, eq, members = spec.partition("=")
        runs = [m.strip() for m in members.split(",") if m.strip()]
        if not eq or not name.strip() or not runs:
            raise RagmeterError(f"--group {spec!r}: expected NAME=RUN,RUN,...")
        if name.strip() in groups:
            raise RagmeterError(f"--group {name.strip()!r} is given twice")
        groups[name.strip()] = runs
    return groups


CompareQrels = Annotated[
    Path | None,
    typer.Option(
        "--qrels",
        help="Relevance judgments. Without it, each run must be a samples file with "
        "its own judgments.",
    ),
]


def compare_command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Two or more run files (any format `ragmeter evaluate` reads)."),
    ],
    *,
    qrels: CompareQrels = None,
    measure: Measures = None,
    baseline: Baseline = None,
    all_pairs: AllPairsOption = False,
    group: GroupOption = None,
    group_by: GroupBy = None,
    tie_tolerance: TieTolerance = 0.0,
    tests: ComparePairedTests,
    alpha: Alpha = 0.05,
    confidence: Confidence = 0.95,
    scoring: EvaluationOptions,
    fmt: Annotated[CompareFormat, typer.Option("--format", "-f")] = CompareFormat.table,
    output: Output = None,
    saving: SaveOptions,
    engine: EngineOptions,
    nuggets: NuggetsFile = None,
    assignments: AssignmentFiles = None,
    citation_support: CitationSupportFile = None,
    calibration: CalibrationFile = None,
    ppi: PPIFlag = False,
    human_qrels: HumanQrels = None,
    ppi_lambda: PPILambda = None,
    ppi_estimator: PPIEstimator = None,
    labelled_queries: LabelledQueries = None,
    spans: SpansFile = None,
    chunks: ChunkFiles = None,
) -> None:
    """Compare runs with a baseline: means with bootstrap CIs, paired differences, paired tests
    corrected for many comparisons, effect sizes, per-query wins/ties/losses; or every run
    with every other (--all-pairs); with --ppi, human-label estimates of the differences."""
    from ragmeter.commands.output import emit_all_pairs, emit_comparison
    from ragmeter.workflows.compare import CompareRequest, compare_files

    try:
        groups = parse_groups(group)
    except RagmeterError as exc:
        fail(exc)
    settings = evaluation_settings(scoring, engine)
    inputs = input_files(
        nuggets=nuggets, assignments=assignments, citation_support=citation_support,
        spans=spans, chunks=chunks,
    )  # fmt: skip
    others = {
        "--save": saving.save or bool(saving.store or saving.name),
        "--group": group or group_by,
    }
    ppi_args = (
        ppi, human_qrels, alpha if ppi else None, ppi_lambda, labelled_queries, others, None,
        None, ppi_estimator,
    )  # fmt: skip
    evaluated = (runs, qrels, measure, settings, inputs)
    if _compare_ppi(ppi_args, evaluated, fmt, output, (baseline, all_pairs, tests.correction)):
        return
    described = label_description(qrels, calibration)
    request = CompareRequest(
        runs=runs,
        qrels=qrels,
        measures=measure,
        baseline=baseline,
        settings=settings,
        compare=compare_settings(
            tests, alpha=alpha, confidence=confidence, tie_tolerance=tie_tolerance
        ),
        all_pairs=all_pairs,
        groups=groups,
        group_by=group_by,
        inputs=inputs,
        described_labels=described,
    )
    try:
        outcome = compare_files(request)
    except (RagmeterError, ValueError, KeyError) as exc:
        fail(exc)
    if outcome.all_pairs is not None:
        emit_all_pairs(outcome.all_pairs, fmt, output, outcome.seeds)
    elif outcome.comparison is not None:
        emit_comparison(outcome.comparison, fmt, output, outcome.seeds, asked=measure)
    tell(lines_of(described))
    if others["--save"]:
        saving.save_and_tell(outcome, "compare", qrels, runs)


def _compare_ppi(
    ppi_args: tuple[Any, ...],
    inputs: tuple[Any, ...],
    fmt: CompareFormat,
    output: Path | None,
    pairs: tuple[Any, ...],
) -> bool:
    """``compare --ppi`` when asked (``False`` else): the PPI options ``(ppi, human_qrels,
    alpha, lambda, labelled, other options)``, the evaluation inputs ``(runs, qrels, measures,
    settings, side inputs)`` and the pairs ``(baseline, all_pairs, correction)``."""
    from ragmeter.commands.ppi import emit_compare_ppi, ppi_request
    from ragmeter.workflows.evaluate import EvaluateRequest

    ppi = ppi_request(*ppi_args)
    if ppi is None:
        return False
    baseline, all_pairs, correction = pairs
    if correction.value == "tukey":
        fail(RagmeterError("--ppi corrects over the pairs with holm, bonferroni, bh or none"))
    runs, qrels, measures, settings, side = inputs
    # as before the side inputs were one value: the estimate reads the nugget inputs, not
    # the spans (evaluate_files scores spans on their own chunk qrels, not the merged labels)
    side = replace(side, spans=None, chunks=())
    request = EvaluateRequest(
        runs=runs, qrels=qrels, measures=measures, settings=settings, inputs=side
    )
    emit_compare_ppi(
        request,
        ppi,
        fmt,
        output,
        baseline=baseline,
        all_pairs=all_pairs,
        correction=correction.value,
    )
    return True


def register(app: typer.Typer) -> None:
    """Add ``ragmeter compare`` to the command line."""
    app.command("compare")(option_groups(compare_command))
