"""The ``ragmeter`` command line: thin commands that parse options, call the library and hand
the result to ``report``.

``app`` has every command: its first use registers the command modules
(:mod:`ragmeter.commands`); :func:`main` registers only the command it runs."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ragmeter.commands import ppi as ppi_options
from ragmeter.commands import register_commands
from ragmeter.commands.labels import CalibrationFile, label_description, lines_of, tell
from ragmeter.commands.options import (
    AnswerFiles,
    AssignmentFiles,
    ChunkFiles,
    CitationSupportFile,
    ContextOrSweep,
    CorpusFile,
    CurvesFile,
    DocIdFrom,
    EngineOptions,
    EvaluationOptions,
    GoldAnswersFile,
    JudgmentsFile,
    Measures,
    NuggetsFile,
    Output,
    PerQuery,
    QrelsFile,
    QrelsFormat,
    QueryIdFrom,
    Questions,
    RunFiles,
    SpansFile,
    Tau,
    Tokenizer,
    TraceStage,
    UdcgModel,
    UtilitiesFile,
    VersionFlag,
    evaluation_settings,
    fail,
    input_files,
    option_groups,
)
from ragmeter.commands.output import OutputFormat, SaveOptions
from ragmeter.commands.process import GuardedGroup
from ragmeter.errors import RagmeterError

#: ``evaluate`` and ``trec-eval``; the other commands join on first use of ``app``
_app = typer.Typer(
    name="ragmeter",
    help="Measure the retrieval side of RAG systems.\n\nNew here? Run 'ragmeter demo', then "
    "'ragmeter evaluate RUN --qrels QRELS'. 'ragmeter COMMAND --help' shows a command's "
    "options, grouped.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=GuardedGroup,
)


@_app.callback()
def _root(version: VersionFlag = False) -> None:
    """Measure the retrieval side of RAG systems."""


@_app.command()
@option_groups
def evaluate(
    runs: RunFiles,
    *,
    qrels: QrelsFile = None,
    qrels_format: QrelsFormat = None,
    measure: Measures = None,
    per_query: PerQuery = False,
    scoring: EvaluationOptions,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    output: Output = None,
    judgments: JudgmentsFile = None,
    questions: Questions = None,
    corpus: CorpusFile = None,
    answers: AnswerFiles = None,
    context_k: ContextOrSweep = "oracle",
    tau: Tau = 3,
    tokenizer: Tokenizer = None,
    utilities: UtilitiesFile = None,
    udcg_model: UdcgModel = None,
    gold_answers: GoldAnswersFile = None,
    nuggets: NuggetsFile = None,
    assignments: AssignmentFiles = None,
    citation_support: CitationSupportFile = None,
    curves: CurvesFile = None,
    spans: SpansFile = None,
    chunks: ChunkFiles = None,
    saving: SaveOptions,
    engine: EngineOptions,
    calibration: CalibrationFile = None,
    ppi: ppi_options.PPIFlag = False,
    human_qrels: ppi_options.HumanQrels = None,
    human_judgments: ppi_options.HumanJudgments = None,
    human_assignments: ppi_options.HumanAssignments = None,
    alpha: ppi_options.PPIAlpha = None,
    ppi_lambda: ppi_options.PPILambda = None,
    ppi_estimator: ppi_options.PPIEstimator = None,
    labelled_queries: ppi_options.LabelledQueries = None,
    query_id_from: QueryIdFrom = None,
    doc_id_from: DocIdFrom = None,
    stage: TraceStage = None,
) -> None:
    """Evaluate runs against qrels and print one row per run."""
    from ragmeter.commands.output import emit_evaluation, emit_sweep
    from ragmeter.commands.ppi import emit_evaluate_ppi, ppi_request
    from ragmeter.workflows import evaluate as flow

    settings = evaluation_settings(scoring, engine)
    described = label_description(qrels, calibration, qrels_format, spans)
    labels = lines_of(described)
    request = flow.EvaluateRequest(
        runs=runs,
        qrels=qrels,
        measures=measure,
        settings=settings,
        inputs=input_files(
            judgments=judgments, questions=questions, corpus=corpus, answers=answers,
            context_k=context_k, tau=tau, tokenizer=tokenizer, utilities=utilities,
            udcg_model=udcg_model, gold_answers=gold_answers, nuggets=nuggets,
            assignments=assignments, citation_support=citation_support, spans=spans,
            chunks=chunks,
        ),
        k=context_k,
        described_labels=described,
        query_id_from=query_id_from, qrels_format=qrels_format,
        doc_id_from=doc_id_from, stage=stage,
    )  # fmt: skip
    others = {
        "--save": saving.save,
        "--store": saving.store,
        "--name": saving.name,
        "--curves": curves,
    }
    estimate = ppi_request(
        ppi, human_qrels, alpha, ppi_lambda, labelled_queries, others, human_judgments,
        human_assignments, ppi_estimator,
    )  # fmt: skip
    if estimate is not None:
        return emit_evaluate_ppi(request, estimate, fmt, output, per_query=per_query)
    try:
        if curves is not None and request.sweep_ks() is None:
            raise RagmeterError("--curves needs a --k sweep (e.g. --k 1:50)")
        outcome = flow.evaluate_files(request)
    except RagmeterError as exc:
        fail(exc)
    if outcome.sweep is not None:
        if curves is not None:
            flow.write_curves(outcome.sweep, curves)
        emit_sweep(outcome.sweep, fmt, per_query=per_query, output=output)
    else:
        emit_evaluation(outcome.evaluation, fmt, per_query=per_query, output=output, asked=measure)
    tell(labels)
    if saving.save or saving.store is not None or saving.name is not None:
        saving.save_and_tell(outcome, "evaluate", qrels, runs)


@_app.command(
    "trec-eval",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def trec_eval(ctx: typer.Context) -> None:
    """A drop-in for trec_eval 10.0: ragmeter trec-eval [-q] [-c] [-M N] [-l N] [-m M] QRELS RUN."""
    from ragmeter.report.trec_eval import main as trec_main

    raise typer.Exit(code=trec_main(list(ctx.args)))


def __getattr__(name: str) -> typer.Typer:
    """``app``: every command, the modules of the others registered on first use."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return register_commands(_app)


def main() -> None:
    """Entry point of the ``ragmeter`` script and ``python -m ragmeter``."""
    from ragmeter.commands.process import (
        lean_app,
        no_cycle_collector,
        one_blas_thread,
        os_failures,
        plain_warnings,
        quick_exit,
        tune_allocator,
        uniform_broken_pipe,
    )

    quick_exit()
    tune_allocator()
    no_cycle_collector(sys.argv[1:])
    one_blas_thread(sys.argv[1:])  # imports numpy: after the allocator is tuned
    plain_warnings()
    uniform_broken_pipe()
    # trec_eval's getopt syntax (-M100, -mndcg.1=3) is parsed by its own parser.
    if len(sys.argv) > 1 and sys.argv[1] == "trec-eval":
        from ragmeter.report.trec_eval import main as trec_main

        with os_failures():
            code = trec_main(sys.argv[2:])
        sys.exit(code)
    lean_app(_app, sys.argv[1:])()
