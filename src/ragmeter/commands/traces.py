"""``ragmeter traces``: what a trace file holds (``show``), and its run as a TREC file
(``to-run``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import DocIdFrom, QueryIdFrom, TraceStage, fail
from ragmeter.errors import RagmeterError

traces_app = typer.Typer(
    name="traces",
    help="Trace files (OTLP JSON, Phoenix exports): their stages, and their runs as TREC files.",
    no_args_is_help=True,
)

TracesFile = Annotated[Path, typer.Argument(help="A trace file (OTLP JSON lines, Phoenix spans).")]


@traces_app.command("show")
def show(
    traces: TracesFile,
    query_id_from: QueryIdFrom = None,
    doc_id_from: DocIdFrom = None,
) -> None:
    """List what a trace file holds: spans, traces, queries, and the stages and retrieval
    steps its rankings can be read at (--stage)."""
    from ragmeter.io.traces import trace_contents

    try:
        held = trace_contents(traces, query_id_from, doc_id_from=doc_id_from)
    except (RagmeterError, OSError) as exc:
        fail(exc)
    typer.echo(f"{traces}: {held.spans} span(s), {held.traces} trace(s), {held.queries} quer(ies)")
    for stage in held.stages:
        typer.echo(f"  --stage {stage:<10} {held.traces_with[stage]} trace(s)")
    for note in held.notes:
        typer.echo(f"note: {note}", err=True)


@traces_app.command("to-run")
def to_run(
    traces: TracesFile,
    output: Annotated[Path, typer.Option("--output", "-o", help="The TREC run to write.")],
    stage: TraceStage = None,
    query_id_from: QueryIdFrom = None,
    doc_id_from: DocIdFrom = None,
) -> None:
    """Write a trace file's run as a TREC run that trec_eval orders as the trace did.

    Scores are the retriever's where they strictly decrease down each ranking, else
    n, n-1, …, 1: tied scores would otherwise be ordered by doc id. Without --stage, the
    ranking that reached the LLM (the reranker's output, else the retriever's)."""
    from ragmeter.io.traces import write_traces_run

    try:
        run = write_traces_run(traces, output, query_id_from, doc_id_from=doc_id_from, stage=stage)
    except (RagmeterError, OSError) as exc:
        fail(exc)
    typer.echo(f"wrote {output}: {len(run.doc_ids)} line(s), {run.n_queries} quer(ies)")
    for note in run.warnings:
        typer.echo(f"note: {note}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(traces_app)
