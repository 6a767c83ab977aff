"""``ragmeter report``: one self-contained HTML file with tables and charts.

``ragmeter report RUN... --qrels Q [-m M ...] [--grade-map G] [--judgments J --questions S]
[--baseline NAME] [--k 10] [--sweep 1:20] -o report.html``

The work is :func:`ragmeter.workflows.report.write_report_files`: the runs evaluated as by
``ragmeter evaluate``, compared as by ``ragmeter compare``, and drawn by
:func:`ragmeter.report.html.write_html_report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragmeter.commands.labels import CalibrationFile, label_lines, tell
from ragmeter.commands.options import (
    AssignmentFiles,
    Baseline,
    ChunkFiles,
    CitationSupportFile,
    EvaluationOptions,
    GradeMap,
    HtmlOutput,
    Measures,
    Missing,
    MissingPolicy,
    NuggetsFile,
    PairedTests,
    PassageTexts,
    Pool,
    PoolDepth,
    RelLevel,
    SpansFile,
    Tau,
    Worst,
    compare_settings,
    evaluation_settings,
    fail,
    input_files,
    option_groups,
)
from ragmeter.commands.output import warn
from ragmeter.commands.ppi import (
    HumanQrels,
    LabelledQueries,
    PPIAlpha,
    PPIEstimator,
    PPIFlag,
    PPILambda,
)
from ragmeter.errors import RagmeterError

Title = Annotated[str, typer.Option("--title", help="Title of the page.")]
CompareQrels = Annotated[
    Path | None,
    typer.Option(
        "--compare-qrels",
        help="Other labels of the same pairs (e.g. an LLM judge's): adds each run's "
        "score under --qrels against these, with τ, ρ and τ_AP.",
    ),
]

if TYPE_CHECKING:
    from ragmeter.workflows.report import ReportRequest


ReportQrels = Annotated[
    Path | None,
    typer.Option(
        "--qrels",
        help="Relevance judgments (optional with --judgments: their graded qrels are used).",
    ),
]


def report_command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="One or more run files (any format `ragmeter evaluate` reads)."),
    ],
    *,
    output: HtmlOutput,
    qrels: ReportQrels = None,
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
    corpus: PassageTexts = None,
    context_k: Annotated[
        str,
        typer.Option(
            "--context-k",
            help="@K of the coverage measures given without one (coverage → coverage@N, "
            "under that name) or 'oracle' (|P*| per query).",
        ),
    ] = "oracle",
    tau: Tau = 3,
    baseline: Baseline = None,
    k: Annotated[
        int,
        typer.Option(
            "--k", min=1, help="Prompt size K: set-based measures, PROC quadrant, worst queries."
        ),
    ] = 10,
    sweep_ks: Annotated[
        str, typer.Option("--sweep", help="Cutoffs of the K-sweep curves: 1:20, 1,5,10, 1:50:5.")
    ] = "1:20",
    worst: Worst = 10,
    pool: Pool = None,
    pool_depth: PoolDepth = None,
    missing: Missing = MissingPolicy.zero,
    rel_level: RelLevel = 1,
    tests: PairedTests,
    title: Title = "ragmeter report",
    nuggets: NuggetsFile = None,
    assignments: AssignmentFiles = None,
    citation_support: CitationSupportFile = None,
    compare_qrels: CompareQrels = None,
    calibration: CalibrationFile = None,
    ppi: PPIFlag = False,
    human_qrels: HumanQrels = None,
    alpha: PPIAlpha = None,
    ppi_lambda: PPILambda = None,
    how: PPIEstimator = None,
    labelled_queries: LabelledQueries = None,
    spans: SpansFile = None,
    chunks: ChunkFiles = None,
) -> None:
    """Write an HTML report: summary table with CIs and significance, K-sweep curves,
    PROC/%PROC quadrant, per-query distributions, sub-question coverage, worst queries."""
    from ragmeter.commands.ppi import ppi_request
    from ragmeter.workflows.report import ReportRequest, ReportView

    inputs = input_files(
        judgments=judgments, questions=questions, corpus=corpus, context_k=context_k, tau=tau,
        nuggets=nuggets, assignments=assignments, citation_support=citation_support,
        spans=spans, chunks=chunks,
    )  # fmt: skip
    request = ReportRequest(
        runs=runs,
        output=output,
        qrels=qrels,
        measures=measure,
        inputs=inputs,
        baseline=baseline,
        settings=evaluation_settings(
            EvaluationOptions(
                missing, rel_level, pool=pool, pool_depth=pool_depth, grade_map=grade_map
            )
        ),
        compare=compare_settings(tests),
        view=ReportView(k=k, sweep_ks=sweep_ks, worst=worst, title=title),
        compare_qrels=compare_qrels,
        calibration=calibration,
        ppi=ppi_request(ppi, human_qrels, alpha, ppi_lambda, labelled_queries, estimator=how),
    )
    _write(request)


def _write(request: ReportRequest) -> None:
    """Write the report; errors as one line, warnings on stderr."""
    from ragmeter.workflows.report import write_report_files

    try:
        evaluation = write_report_files(request)
    except (RagmeterError, ValueError, KeyError) as exc:
        fail(exc)
    warn(evaluation.warnings)
    tell(label_lines(request.qrels, request.calibration))
    typer.echo(f"wrote {request.output}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``ragmeter report`` to the command line."""
    app.command("report")(option_groups(report_command))
