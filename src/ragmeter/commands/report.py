"""``ragmeter report``: one self-contained HTML file with tables and charts.

``ragmeter report RUN... --qrels Q [-m M ...] [--grade-map G] [--judgments J --questions S]
[--baseline NAME] [--k 10] [--sweep 1:20] -o report.html``

The runs are evaluated as by ``ragmeter evaluate``, compared as by ``ragmeter compare``, and
drawn by :func:`ragmeter.report.html.write_html_report` (matplotlib is imported only here,
so the other commands start as fast as before).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.options import (
    Bootstrap,
    Correction,
    CorrectionChoice,
    GradeMap,
    Measures,
    Missing,
    MissingPolicy,
    PairedTest,
    Permutations,
    Pool,
    PoolDepth,
    RelLevel,
    Seed,
    TestChoice,
    fail,
)
from ragmeter.errors import RagmeterError


def report_command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="One or more run files (any format `ragmeter evaluate` reads)."),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")],
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            "-q",
            help="Relevance judgments (optional with --judgments: their graded qrels are used).",
        ),
    ] = None,
    measure: Measures = None,
    grade_map: GradeMap = None,
    judgments: Annotated[
        Path | None,
        typer.Option(
            "--judgments",
            help="Sub-question judgments (CRUX): coverage measures and coverage per sub-question.",
        ),
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            "--subquestions",
            help="Sub-question texts JSONL {query_id, questions}.",
        ),
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="Passage texts JSONL {id, text} (for density)."),
    ] = None,
    context_k: Annotated[
        str,
        typer.Option(
            "--context-k",
            help="@K of the coverage measures given without one (coverage → coverage@N, "
            "under that name) or 'oracle' (|P*| per query).",
        ),
    ] = "oracle",
    tau: Annotated[
        int, typer.Option("--tau", help="Answerable ⇔ rating ≥ tau (coverage measures).")
    ] = 3,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            "-b",
            help="The baseline run (path, file name or run name); default: the first.",
        ),
    ] = None,
    k: Annotated[
        int,
        typer.Option(
            "--k", min=1, help="Prompt size K: set-based measures, PROC quadrant, worst queries."
        ),
    ] = 10,
    sweep_ks: Annotated[
        str, typer.Option("--sweep", help="Cutoffs of the K-sweep curves: 1:20, 1,5,10, 1:50:5.")
    ] = "1:20",
    worst: Annotated[
        int, typer.Option("--worst", min=0, help="Worst queries listed per run (0: none).")
    ] = 10,
    pool: Pool = None,
    pool_depth: PoolDepth = None,
    missing: Missing = MissingPolicy.zero,
    rel_level: RelLevel = 1,
    test: PairedTest = TestChoice.randomization,
    correction: Correction = CorrectionChoice.holm,
    permutations: Permutations = 10_000,
    bootstrap: Bootstrap = 10_000,
    seed: Seed = 0,
    title: Annotated[str, typer.Option("--title", help="Title of the page.")] = "ragmeter report",
) -> None:
    """Write an HTML report: summary table with CIs and significance, K-sweep curves,
    PROC/%PROC quadrant, per-query distributions, sub-question coverage, worst queries."""
    from ragmeter.commands.compare import _baseline_index, _distinct_names
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels, read_run
    from ragmeter.report.html import default_measures, write_html_report

    if qrels is None and judgments is None:
        fail(RagmeterError("report needs --qrels or --judgments"))
    for given, name in ((questions, "--questions"), (corpus, "--corpus")):
        if given is not None and judgments is None:
            # both only serve the coverage sections, which need the sub-question judgments
            fail(RagmeterError(f"{name} is used with --judgments; give the judgments too"))
    try:
        qrels_obj = read_qrels(qrels) if qrels is not None else None
        coverage: dict[str, Any] = {}
        if judgments is not None:
            from ragmeter.commands.crux import coverage_options

            coverage = coverage_options(
                judgments, questions, corpus, None, context_k, tau, len(runs)
            )
        names = measure or default_measures(
            qrels_obj, grade_map=grade_map, judgments=coverage.get("judgments"), k=k
        )
        if corpus is not None and judgments is not None and measure is None:
            names.append("density")
        run_objs = _distinct_names([read_run(p) for p in runs], runs)
        base = _baseline_index(baseline, run_objs, runs)
        pool_run = read_run(pool) if pool is not None else None
        evaluation = evaluate(
            run_objs,
            qrels_obj,
            names,
            missing=missing.value,
            rel_level=rel_level,
            pool=pool_run,
            pool_depth=pool_depth,
            grade_map=grade_map,
            **coverage,
        )
        comparison = None
        if len(run_objs) > 1:
            from ragmeter.stats.comparison import compare

            comparison = compare(
                evaluation,
                baseline=base,
                test=test.value,  # type: ignore[arg-type]
                correction=correction.value,  # type: ignore[arg-type]
                permutations=permutations,
                bootstrap=bootstrap,
                seed=seed,
            )
        inputs = [("qrels", str(qrels))] if qrels is not None else []
        if judgments is not None:
            inputs.append(("judgments", str(judgments)))
        if grade_map:
            inputs.append(("grade map", grade_map))
        if pool is not None:
            inputs.append(("pool", f"{pool}" + (f" (top {pool_depth})" if pool_depth else "")))
        write_html_report(
            output,
            evaluation,
            runs=run_objs,
            qrels=qrels_obj,
            judgments=coverage.get("judgments"),
            comparison=comparison,
            baseline=base,
            grade_map=grade_map,
            k=k,
            sweep_ks=sweep_ks,
            pool=pool_run,
            pool_depth=pool_depth,
            rel_level=rel_level,
            context_k=coverage.get("context_k", "oracle"),
            tau=tau,
            worst=worst,
            seed=seed,
            bootstrap=bootstrap,
            permutations=permutations,
            title=title,
            inputs=inputs,
        )
    except (RagmeterError, ValueError, KeyError) as exc:
        fail(exc)
    except OSError as exc:
        fail(RagmeterError(f"cannot write {output}: {exc.strerror or exc}"))
    for w in evaluation.warnings:
        typer.echo(f"warning: {w}", err=True)
    typer.echo(f"wrote {output}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``ragmeter report`` to the command line."""
    app.command("report")(report_command)
