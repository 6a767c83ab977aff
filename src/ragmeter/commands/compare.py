"""``ragmeter compare``: did it get better? Paired tests of runs against a baseline (SPEC §6).

``ragmeter compare RUN_A RUN_B [RUN_C ...] --qrels Q -m ndcg@10 [--baseline RUN_A]
[--test randomization|t|wilcoxon] [--correction holm|bonferroni|bh|none] [--permutations N]
[--bootstrap N] [--seed N] [--alpha A] [--format table|json|csv|markdown|latex] [-o FILE]``

The runs are evaluated as by ``ragmeter evaluate`` (same options), then compared by
:func:`ragmeter.workflows.compare.compare_files` and printed by
:mod:`ragmeter.report.comparison`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import (
    Bootstrap,
    Correction,
    CorrectionChoice,
    DefaultK,
    Depth,
    EngineChoice,
    GradeMap,
    Measures,
    Missing,
    MissingPolicy,
    Output,
    PairedTest,
    Permutations,
    Pool,
    PoolDepth,
    RelLevel,
    Save,
    SaveName,
    Seed,
    StoreUrl,
    TestChoice,
    Workers,
    compare_settings,
    evaluation_settings,
    fail,
)
from ragmeter.commands.output import CompareFormat
from ragmeter.errors import RagmeterError


def compare_command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Two or more run files (any format `ragmeter evaluate` reads)."),
    ],
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            help="Relevance judgments. Without it, each run must be a samples file with "
            "its own judgments.",
        ),
    ] = None,
    measure: Measures = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            "-b",
            help="The baseline run (path, file name or run name); default: the first.",
        ),
    ] = None,
    test: PairedTest = TestChoice.randomization,
    correction: Correction = CorrectionChoice.holm,
    permutations: Permutations = 10_000,
    bootstrap: Bootstrap = 10_000,
    seed: Seed = 0,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")
    ] = 0.05,
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.0, max=1.0, help="CI level.")
    ] = 0.95,
    missing: Missing = MissingPolicy.zero,
    rel_level: RelLevel = 1,
    depth: Depth = None,
    default_k: DefaultK = 5,
    pool: Pool = None,
    pool_depth: PoolDepth = None,
    grade_map: GradeMap = None,
    fmt: Annotated[CompareFormat, typer.Option("--format", "-f")] = CompareFormat.table,
    output: Output = None,
    save: Save = False,
    store: StoreUrl = None,
    name: SaveName = None,
    engine: EngineChoice = "local",
    workers: Workers = None,
) -> None:
    """Compare runs with a baseline: means with bootstrap CIs, paired differences, paired tests
    corrected for many comparisons, effect sizes."""
    from ragmeter.commands.output import emit_comparison, save_and_tell
    from ragmeter.workflows.compare import CompareRequest, compare_files

    request = CompareRequest(
        runs=runs,
        qrels=qrels,
        measures=measure,
        baseline=baseline,
        settings=evaluation_settings(
            missing=missing,
            rel_level=rel_level,
            depth=depth,
            default_k=default_k,
            pool=pool,
            pool_depth=pool_depth,
            grade_map=grade_map,
            engine=engine,
            workers=workers,
        ),
        compare=compare_settings(
            test=test,
            correction=correction,
            permutations=permutations,
            bootstrap=bootstrap,
            seed=seed,
            alpha=alpha,
            confidence=confidence,
        ),
    )
    try:
        outcome = compare_files(request)
    except (RagmeterError, ValueError, KeyError) as exc:
        fail(exc)
    emit_comparison(outcome.comparison, fmt, output)
    if save or store is not None or name is not None:
        save_and_tell(
            outcome.evaluation,
            store=store,
            name=name,
            command="compare",
            parameters=outcome.parameters,
            qrels=qrels,
            runs=runs,
        )


def register(app: typer.Typer) -> None:
    """Add ``ragmeter compare`` to the command line."""
    app.command("compare")(compare_command)
