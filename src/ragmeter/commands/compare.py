"""``ragmeter compare``: did it get better? Paired tests of runs against a baseline (SPEC §6).

``ragmeter compare RUN_A RUN_B [RUN_C ...] --qrels Q -m ndcg@10 [--baseline RUN_A]
[--test randomization|t|wilcoxon] [--correction holm|bonferroni|none] [--permutations N]
[--bootstrap N] [--seed N] [--alpha A] [--format table|json|csv|markdown|latex] [-o FILE]``

The runs are evaluated as by ``ragmeter evaluate`` (same options), then compared by
:func:`ragmeter.stats.compare` and printed by :mod:`ragmeter.report.comparison`.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.commands.options import (
    Bootstrap,
    Correction,
    CorrectionChoice,
    DefaultK,
    Depth,
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
    evaluation_options,
    fail,
)
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.core.data import Run


class CompareFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    latex = "latex"


def _distinct_names(runs: list[Run], paths: list[Path]) -> list[Run]:
    """Runs renamed by their path where names collide (two files called run.txt)."""
    from dataclasses import replace

    names = [r.name for r in runs]
    out = []
    for i, (run, path) in enumerate(zip(runs, paths, strict=True)):
        name = run.name
        if names.count(name) > 1:
            name = str(path)
            if [str(p) for p in paths].count(name) > 1:
                name = f"{name}#{i + 1}"
        out.append(run if name == run.name else replace(run, name=name))
    return out


def _baseline_index(baseline: str | None, runs: list[Run], paths: list[Path]) -> int:
    """The run named by ``--baseline``: its path as given, its file name or its run name."""
    if baseline is None:
        return 0
    for i, (run, path) in enumerate(zip(runs, paths, strict=True)):
        if baseline in (str(path), path.name, run.name):
            return i
    choices = ", ".join(r.name for r in runs)
    raise RagmeterError(f"--baseline {baseline!r} is none of the runs ({choices})")


def compare_command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Two or more run files (any format `ragmeter evaluate` reads)."),
    ],
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            "-q",
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
) -> None:
    """Compare runs with a baseline: means with bootstrap CIs, paired differences, paired tests
    corrected for many comparisons, effect sizes."""
    from ragmeter.evaluation import evaluate
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.readers import read_qrels, read_run
    from ragmeter.stats.comparison import compare

    if len(runs) < 2:
        fail(RagmeterError("compare needs at least two runs"))
    names = measure or ["ndcg@10", "map", "recall@100", "mrr", "P@10"]
    try:
        options: dict[str, Any] = evaluation_options(
            missing=missing,
            rel_level=rel_level,
            depth=depth,
            default_k=default_k,
            pool=pool,
            pool_depth=pool_depth,
            grade_map=grade_map,
        )
        run_objs = _distinct_names([read_run(p) for p in runs], runs)
        base = _baseline_index(baseline, run_objs, runs)
        if qrels is not None:
            result = evaluate(run_objs, read_qrels(qrels), names, **options)
        else:
            result = Evaluation.concat(
                [
                    evaluate(r, read_qrels(p), names, **options)
                    for r, p in zip(run_objs, runs, strict=True)
                ]
            )
        comparison = compare(
            result,
            baseline=base,
            test=test.value,  # type: ignore[arg-type]
            correction=correction.value,  # type: ignore[arg-type]
            alpha=alpha,
            confidence=confidence,
            permutations=permutations,
            bootstrap=bootstrap,
            seed=seed,
        )
    except (RagmeterError, ValueError, KeyError) as exc:
        fail(exc)
        return
    _emit(comparison, fmt, output)
    if save or store is not None or name is not None:
        from ragmeter.commands.history import input_files, save_from_command

        parameters = {
            "measures": names,
            **{k: v for k, v in options.items() if k != "pool"},
            "baseline": comparison.baseline,
            "test": test.value,
            "correction": correction.value,
            "alpha": alpha,
            "confidence": confidence,
            "permutations": permutations,
            "bootstrap": bootstrap,
            "seed": seed,
            "inputs": input_files(qrels=qrels, runs=runs, pool=pool),
        }
        save_from_command(
            result,
            store=store,
            name=name,
            command="compare",
            parameters=parameters,
            qrels=qrels,
            runs=runs,
        )


def _emit(comparison: Any, fmt: CompareFormat, output: Path | None) -> None:
    import io

    from ragmeter.io._common import atomic_write_text
    from ragmeter.report import comparison as render

    if fmt is CompareFormat.table:
        if output is None:
            render.print_table(comparison)
            return
        buffer = io.StringIO()
        render.print_table(comparison, file=buffer)
        atomic_write_text(output, buffer.getvalue())
        return
    text = render.render(comparison, fmt.value)  # type: ignore[arg-type]
    if output is not None:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)
    for w in comparison.warnings:
        typer.echo(f"warning: {w}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``ragmeter compare`` to the command line."""
    app.command("compare")(compare_command)
