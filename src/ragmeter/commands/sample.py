"""``ragmeter sample RUN --qrels LLM --n 40 --strategy random|stratified|active --out QUEUE``:
which queries people should label, written as a labelling queue that ``ragmeter serve
--queue`` opens; with ``--strategy active --learned MODEL`` (``--queries``, ``--corpus``,
``--qrels HUMAN``), the pairs of each topic the learned judge is least sure of. The logic is
:mod:`ragmeter.analysis.label_sampling`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import PassageTexts, QueryTexts, Seed, fail
from ragmeter.errors import RagmeterError


class Strategy(StrEnum):
    random = "random"
    stratified = "stratified"
    active = "active"


def register(app: typer.Typer) -> None:
    app.command("sample")(sample)


def sample(
    ctx: typer.Context,
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="The run whose queries are drawn (with --learned: one or more runs, whose "
            "top --depth are the candidate pairs)."
        ),
    ],
    qrels: Annotated[
        Path,
        typer.Option(
            "--qrels",
            help="The LLM labels (qrels); with --learned, the human labels so far (their "
            "pairs are not asked again).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The queue (JSONL) to write.")],
    strategy: Annotated[
        Strategy, typer.Option("--strategy", help="random, stratified or active.")
    ] = Strategy.random,
    n: Annotated[
        int | None, typer.Option("--n", min=1, help="Queries to draw (not with --learned).")
    ] = None,
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
    learned: Annotated[
        Path | None,
        typer.Option(
            "--learned",
            help="Active: a learned judge's model directory ('ragmeter judge learn'): ask, "
            "per topic, for the unlabelled pairs it is least sure of.",
        ),
    ] = None,
    per_topic: Annotated[
        int | None,
        typer.Option(
            "--per-topic", min=1, help="With --learned: pairs to ask per topic (default 5)."
        ),
    ] = None,
    queries: QueryTexts = None,
    corpus: PassageTexts = None,
) -> None:
    """Draw queries to label → a labelling queue.

    Writes one JSON line per drawn query: its passages (the run's top --depth) and its
    inclusion probability, for 'ragmeter serve --queue' and for weighting the labels.
    With --strategy active --learned MODEL: per topic, the --per-topic unlabelled pairs
    (of the runs' top --depth, texts from --queries and --corpus) whose grade the learned
    judge is least sure of (its score nearest a cut point: uncertainty sampling), for
    training the judge, not for estimates."""
    if learned is not None or per_topic is not None or queries or corpus:
        _refuse_query_options(ctx)
        _learned(runs, qrels, out, strategy, learned, per_topic, queries, corpus, n, depth, seed)
        return
    if len(runs) != 1:
        fail(ValueError(f"{len(runs)} runs: --strategy {strategy.value} draws queries of one run"))
    if n is None:
        fail(ValueError("missing --n: the number of queries to draw"))
    _queries(
        runs[0], qrels, n, out, strategy, seed, measure, depth, strata, mix, threshold, judge_labels
    )


#: the options of the query designs: given with --learned they would do nothing
QUERY_OPTIONS = {
    "measure": "--measure",
    "strata": "--strata",
    "mix": "--mix",
    "threshold": "--threshold",
    "judge_labels": "--judge-labels",
}


def _refuse_query_options(ctx: typer.Context) -> None:
    """An option of the query designs given with --learned is an error, not ignored."""
    # by the source's name: typer may carry a click of its own, with its own enum
    given = [
        flag
        for name, flag in QUERY_OPTIONS.items()
        if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"
    ]
    if given:
        fail(
            ValueError(
                f"{', '.join(given)}: an option of the query designs; --learned chooses "
                "pairs by the learned judge's uncertainty (its options: --per-topic, "
                "--depth, --seed)"
            )
        )


def _queries(
    run: Path,
    qrels: Path,
    n: int,
    out: Path,
    strategy: Strategy,
    seed: int,
    measure: str,
    depth: int,
    strata: int,
    mix: float,
    threshold: int | None,
    judge_labels: list[Path] | None,
) -> None:
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


def _learned(
    runs: list[Path],
    qrels: Path,
    out: Path,
    strategy: Strategy,
    learned: Path | None,
    per_topic: int | None,
    queries: Path | None,
    corpus: Path | None,
    n: int | None,
    depth: int,
    seed: int,
) -> None:
    """``--strategy active --learned``: the learned judge's least certain pairs."""
    from ragmeter.analysis.label_sampling import least_certain_pairs
    from ragmeter.commands.judge import _read_texts
    from ragmeter.io.label_queue import write_label_queue
    from ragmeter.io.readers import read_qrels, read_run
    from ragmeter.judges.learned import load_model

    if learned is None:
        fail(
            ValueError(
                "--per-topic, --queries and --corpus choose the pairs a learned judge is "
                "least sure of: give its model directory with --learned MODEL_DIR"
            )
        )
    if strategy is not Strategy.active:
        fail(ValueError(f"--learned asks for labels by --strategy active, not {strategy.value}"))
    if n is not None:
        fail(ValueError("--n counts queries to draw; with --learned the budget is --per-topic"))
    if queries is None or corpus is None:
        fail(ValueError("--learned needs the texts: --queries and --corpus"))
    try:
        drawn = least_certain_pairs(
            load_model(learned),
            [read_run(r) for r in runs],
            read_qrels(qrels).to_dict(),
            _read_texts(queries, "queries"),
            _read_texts(corpus),
            per_topic=per_topic or 5,
            depth=depth,
            seed=seed,
            labels_source=str(qrels),
        )
    except (RagmeterError, ValueError) as exc:
        fail(exc)
    write_label_queue(drawn.entries, out)
    typer.echo(drawn.line(), err=True)
    for note in drawn.notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(f"wrote {out}", err=True)
