"""``ragmeter sample RUN --qrels LLM --n 40 --strategy random|stratified|active --out QUEUE``:
which queries people should label, written as a labelling queue that ``ragmeter serve
--queue`` opens. The logic is :mod:`ragmeter.analysis.label_sampling`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import Seed, fail
from ragmeter.errors import RagmeterError


class Strategy(StrEnum):
    random = "random"
    stratified = "stratified"
    active = "active"


def register(app: typer.Typer) -> None:
    app.command("sample")(sample)


def sample(
    run: Annotated[Path, typer.Argument(help="The run whose queries are drawn.")],
    qrels: Annotated[Path, typer.Option("--qrels", help="The LLM labels (qrels).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Queries to draw.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The queue (JSONL) to write.")],
    strategy: Annotated[
        Strategy, typer.Option("--strategy", help="random, stratified or active.")
    ] = Strategy.random,
    seed: Seed = 0,
    measure: Annotated[
        str,
        typer.Option("--measure", "-m", help="Stratified: strata by this measure's quantiles."),
    ] = "ndcg@10",
    depth: Annotated[int, typer.Option("--depth", min=1, help="Passages to label per query.")] = 10,
    strata: Annotated[
        int, typer.Option("--strata", min=1, help="Stratified: the number of strata.")
    ] = 4,
    mix: Annotated[
        float,
        typer.Option(
            "--mix",
            help="Active: the uniform share tau; every probability is at least tau*n/N.",
        ),
    ] = 0.2,
    threshold: Annotated[
        int | None,
        typer.Option(
            "--threshold",
            help="Active: relevant <=> grade >= T (default: the middle of the scale).",
        ),
    ] = None,
    judge_labels: Annotated[
        list[Path] | None,
        typer.Option(
            "--judge-labels",
            help="Active: each judge's (or sample's) own qrels, repeatable; with two or "
            "more, uncertainty is their disagreement.",
        ),
    ] = None,
) -> None:
    """Draw queries to label → a labelling queue.

    Writes one JSON line per drawn query: its passages (the run's top --depth) and its
    inclusion probability, for 'ragmeter serve --queue' and for weighting the labels."""
    from ragmeter.analysis.label_sampling import sample_queries, several_labels_note
    from ragmeter.io.label_queue import write_label_queue
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.readers import read_qrels, read_run

    try:
        llm = read_qrels(qrels)
        drawn = sample_queries(
            read_run(run),
            llm,
            n=n,
            strategy=strategy.value,
            seed=seed,
            measure=measure,
            depth=depth,
            strata=strata,
            mix=mix,
            threshold=threshold,
            label_sets=[read_qrels(p).to_dict() for p in judge_labels or []],
        )
        provenance = read_provenance(qrels)
    except (RagmeterError, ValueError) as exc:
        fail(exc)
    write_label_queue(drawn.entries, out)
    typer.echo(drawn.line(), err=True)
    labels = provenance.describe() if provenance is not None else "labels of unknown origin"
    typer.echo(f"{qrels.name}: {labels}", err=True)
    note = several_labels_note(provenance, len(judge_labels or []))
    if note is not None and strategy is Strategy.active:
        typer.echo(f"note: {note}", err=True)
    typer.echo(f"wrote {out}", err=True)
