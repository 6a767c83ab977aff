"""The ``ragmeter`` command line: thin commands that parse options, call the library and hand
the result to ``report``."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.options import (
    DefaultK,
    Depth,
    GradeMap,
    Measures,
    Missing,
    MissingPolicy,
    Output,
    Pool,
    PoolDepth,
    RelLevel,
    Save,
    SaveName,
    StoreUrl,
    evaluation_options,
    fail,
)
from ragmeter.errors import RagmeterError

app = typer.Typer(
    name="ragmeter",
    help="Measure the retrieval side of RAG systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    trec = "trec"


@app.command()
def evaluate(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Run files: TREC, samples JSON/JSONL/YAML, CSV, TSV, Parquet."),
    ],
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            "-q",
            help="Relevance judgments. Without it, each run must be a samples file whose "
            "expected_output gives its judgments.",
        ),
    ] = None,
    measure: Measures = None,
    per_query: Annotated[
        bool, typer.Option("--per-query", help="Include per-query values.")
    ] = False,
    missing: Missing = MissingPolicy.zero,
    rel_level: RelLevel = 1,
    depth: Depth = None,
    default_k: DefaultK = 5,
    pool: Pool = None,
    pool_depth: PoolDepth = None,
    grade_map: GradeMap = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    output: Output = None,
    judgments: Annotated[
        Path | None,
        typer.Option(
            "--judgments",
            help="Sub-question judgments for coverage, alpha_ndcg@K, density (JSONL, long TSV "
            "or diversity qrels). Without --qrels, the judged queries are evaluated.",
        ),
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option("--questions", help="Sub-questions JSONL {query_id, questions}."),
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="Passage texts JSONL {id, text} (for density); for token budgets "
            "(ra_nwg@512t) also {id, length} rows, TSV/CSV/Parquet with id + text/length.",
        ),
    ] = None,
    answers: Annotated[
        list[Path] | None,
        typer.Option(
            "--answers",
            help="Rated answers JSONL {query_id, ratings, text} for answer_coverage and "
            "answer_density: one file, or one per run (repeatable).",
        ),
    ] = None,
    context_k: Annotated[
        str,
        typer.Option(
            "--k",
            help="With --judgments, N: the coverage measures given without @K (coverage, "
            "density, alpha_ndcg) are read at the top N and named so (coverage@N); 'oracle': "
            "their defaults (|P*| per query; 20 for alpha_ndcg). Without --judgments, or as a "
            "range/list (1:50, 1,5,10, 1:50:5): a cutoff sweep of the -m measures (given "
            "without @K), every K in one pass; a swept m at K is m@K.",
        ),
    ] = "oracle",
    tau: Annotated[
        int, typer.Option("--tau", help="Answerable ⇔ rating ≥ tau (coverage measures).")
    ] = 3,
    tokenizer: Annotated[
        str | None,
        typer.Option(
            "--tokenizer",
            help="Token counter of --corpus texts for token budgets (ra_nwg@512t): "
            "whitespace (default), tiktoken:<encoding>, hf:<tokenizer path>.",
        ),
    ] = None,
    utilities: Annotated[
        Path | None,
        typer.Option(
            "--utilities",
            help="Per-passage utilities for udcg@K: 'qid docid utility' lines, JSON/JSONL "
            "rows, or the UDCG reference data (with --udcg-model).",
        ),
    ] = None,
    udcg_model: Annotated[
        str | None,
        typer.Option("--udcg-model", help="Model whose no_res_prob the reference data give."),
    ] = None,
    curves: Annotated[
        Path | None,
        typer.Option("--curves", help="With a --k sweep: write the curves here (.json or .csv)."),
    ] = None,
    save: Save = False,
    store: StoreUrl = None,
    name: SaveName = None,
) -> None:
    """Evaluate runs against qrels and print one row per run."""
    from ragmeter.evaluation import evaluate as run_evaluation
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.readers import read_qrels, read_run

    names = measure or ["ndcg@10", "map", "recall@100", "mrr", "P@10"]
    if judgments is not None and measure is None:
        names = ["coverage", "alpha_ndcg@20"] + (["density"] if corpus is not None else [])
    requested = list(names)
    sweep_ks: list[int] | None = None
    base_measures: list[Any] = []
    if context_k != "oracle" and (judgments is None or any(c in context_k for c in ":,")):
        from ragmeter.measures import parse_measures
        from ragmeter.sweep import expand, parse_ks

        try:
            sweep_ks = parse_ks(context_k)
            base_measures = list(parse_measures(names))
            names = [str(m) for m in expand(base_measures, sweep_ks)]
        except RagmeterError as exc:
            fail(exc)
            return
        context_k = "oracle"
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
        _set_measure_inputs(options, names, corpus, tokenizer, utilities, udcg_model)
        if judgments is not None:
            from ragmeter.commands.crux import coverage_options

            options.update(
                coverage_options(judgments, questions, corpus, answers, context_k, tau, len(runs))
            )
        if qrels is None and judgments is not None:
            # the judged queries are evaluated; classical measures use the CRUX graded qrels
            result = run_evaluation([read_run(p) for p in runs], None, names, **options)
        elif qrels is not None:
            qrels_obj = read_qrels(qrels)
            result = run_evaluation([read_run(p) for p in runs], qrels_obj, names, **options)
        else:
            # Samples files carry their own judgments (expected_output).
            result = Evaluation.concat(
                [run_evaluation(read_run(p), read_qrels(p), names, **options) for p in runs]
            )
    except RagmeterError as exc:
        fail(exc)
        return
    if sweep_ks is not None:
        _emit_sweep(result, base_measures, sweep_ks, fmt, per_query, output, curves)
    else:
        if curves is not None:
            fail(ValueError("--curves needs a --k sweep (e.g. --k 1:50)"))
        _emit(result, fmt, per_query=per_query, output=output)
    if save or store is not None or name is not None:
        from ragmeter.commands.history import input_files, save_from_command

        parameters = {
            "measures": requested,
            "cutoffs": sweep_ks,
            **{k: v for k, v in options.items() if k in _SAVED_OPTIONS},
            "context_k": context_k if judgments is not None else None,
            "tau": tau if judgments is not None else None,
            "tokenizer": tokenizer,
            "udcg_model": udcg_model,
            "inputs": input_files(
                qrels=qrels,
                runs=runs,
                pool=pool,
                judgments=judgments,
                questions=questions,
                corpus=corpus,
                answers=answers,
                utilities=utilities,
            ),
        }
        save_from_command(
            result,
            store=store,
            name=name,
            command="evaluate",
            parameters=parameters,
            qrels=qrels,
            runs=runs if len(runs) == len(result.runs) else None,
        )


#: evaluation options recorded with a saved evaluation (the others are inputs, hashed)
_SAVED_OPTIONS = ("missing", "rel_level", "depth", "default_k", "pool_depth", "grade_map")


def _set_measure_inputs(
    options: dict[str, Any],
    names: list[str],
    corpus: Path | None,
    tokenizer: str | None,
    utilities: Path | None,
    udcg_model: str | None,
) -> None:
    """Passage lengths (token budgets) and utilities (udcg), read only when a measure needs
    them; a missing one is left for the measure to report."""
    from ragmeter.measures import parse_measures

    measures = parse_measures(names)
    if corpus is not None and any(m.budget is not None for m in measures):
        from ragmeter.io.lengths import read_passage_lengths

        options["passage_lengths"] = read_passage_lengths(corpus, counter=tokenizer)
    if utilities is not None:
        from ragmeter.io.utilities import read_utilities

        options["utilities"] = read_utilities(utilities, model=udcg_model)


def _emit_sweep(
    result: Any,
    base: list[Any],
    ks: list[int],
    fmt: OutputFormat,
    per_query: bool,
    output: Path | None,
    curves: Path | None,
) -> None:
    """A sweep: the curves table (table format) or the m@K evaluation; curves to a file."""
    from ragmeter.io._common import atomic_write_text
    from ragmeter.sweep import Sweep

    done = Sweep(result, tuple(base), tuple(ks))
    if curves is not None:
        text = done.to_csv() if curves.suffix.lower() == ".csv" else done.to_json()
        atomic_write_text(curves, text)
    if fmt is OutputFormat.table and not per_query:
        if output is None:
            done.print_table()
            return
        import io

        buffer = io.StringIO()
        done.print_table(file=buffer)
        atomic_write_text(output, buffer.getvalue())
        return
    _emit(result, fmt, per_query=per_query, output=output)


def _emit(result: Any, fmt: OutputFormat, *, per_query: bool, output: Path | None) -> None:
    """Print or write (atomically) an evaluation in the chosen format; warnings to stderr."""
    import io

    from ragmeter.io._common import atomic_write_text
    from ragmeter.report import render

    if fmt is OutputFormat.table:
        if output is None:
            render.print_table(result, per_query=per_query)
            return
        buffer = io.StringIO()
        render.print_table(result, per_query=per_query, file=buffer)
        atomic_write_text(output, buffer.getvalue())
        return
    text = render.render(result, fmt.value, per_query=per_query)  # type: ignore[arg-type]
    if output is not None:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)
    for w in result.warnings:
        typer.echo(f"warning: {w}", err=True)


@app.command()
def measures() -> None:
    """List every measure family with its cutoff, parameters and summary."""
    from rich.console import Console
    from rich.table import Table

    from ragmeter.measures import REGISTRY

    table = Table(title="ragmeter measures", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("cutoff", no_wrap=True)
    table.add_column("parameters", max_width=32)
    table.add_column("aliases", max_width=24)
    table.add_column("summary", ratio=1)
    for fam in sorted(REGISTRY.families(), key=lambda f: f.name):
        table.add_row(
            fam.name,
            {"none": "", "optional": "@k optional", "required": "@k"}[fam.cutoff],
            ", ".join(p.name for p in fam.params),
            ", ".join(fam.aliases),
            fam.summary,
        )
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    console.print(table)


@app.command(
    "trec-eval",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def trec_eval(ctx: typer.Context) -> None:
    """A drop-in for trec_eval 10.0: ragmeter trec-eval [-q] [-c] [-M N] [-l N] [-m M] QRELS RUN."""
    from ragmeter.report.trec_eval import main as trec_main

    raise typer.Exit(code=trec_main(list(ctx.args)))


#: modules adding commands to ``app`` (see :mod:`ragmeter.commands`)
COMMAND_MODULES: tuple[str, ...] = (
    "ragmeter.commands.crux",
    "ragmeter.commands.compare",
    "ragmeter.commands.diagnose",
    "ragmeter.commands.answers",
    "ragmeter.commands.serve",
    "ragmeter.commands.retrieve",
    "ragmeter.commands.history",
    "ragmeter.commands.demo",
    "ragmeter.commands.judge",
    "ragmeter.commands.agreement",
    "ragmeter.commands.report",
)


def _register_commands() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


_register_commands()


def _tune_allocator() -> None:
    """Let glibc reuse freed large buffers instead of returning them to the kernel.

    An evaluation allocates many short-lived arrays of tens of megabytes. By default glibc
    serves each from a fresh ``mmap`` and the kernel zero-fills every page on first touch,
    which costs more than the arithmetic (measured: 6.2 s → 4.3 s for 10 M run lines). The
    command line owns its process, so it raises the mmap threshold to 256 MB (larger arrays
    still go back to the kernel at once, which keeps 100 M-line runs under 8 GiB) and the
    trim threshold; the library itself never touches the allocator. A no-op without glibc.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 256 << 20)
        libc.mallopt(m_trim_threshold, (1 << 31) - 1)
    except (OSError, AttributeError):
        return


def main() -> None:
    """Entry point of the ``ragmeter`` script and ``python -m ragmeter``."""
    _tune_allocator()
    # trec_eval's getopt syntax (-M100, -mndcg.1=3) is parsed by its own parser.
    if len(sys.argv) > 1 and sys.argv[1] == "trec-eval":
        from ragmeter.report.trec_eval import main as trec_main

        sys.exit(trec_main(sys.argv[2:]))
    app()
