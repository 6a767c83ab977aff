"""``ragmeter judge erag``: eRAG labels (see :mod:`ragmeter.judges.erag`), with the options,
cache, dry run and exit statuses of every ``ragmeter judge`` subcommand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.judge import (
    Corpus,
    MaxTokens,
    Out,
    Queries,
    Runs,
    Settings,
    _execute,
    _read_runs,
    _read_texts,
    judge_command,
)
from ragmeter.commands.judge_nuggets import _judge_app

GoldAnswersIn = Annotated[
    Path,
    typer.Option("--gold-answers", help="Gold answers JSONL {query_id, answers: [...]}."),
]
Metric = Annotated[
    str,
    typer.Option(
        "--metric",
        help="Score of the answer against the gold answers (max over them): em, f1 "
        "(token F1) or rougeL.",
    ),
]
Binarize = Annotated[
    float | None,
    typer.Option(
        "--binarize",
        help="Label 1 when the score is ≥ T, else 0 (written as qrels). Without it f1 and "
        "rougeL scores are written as a utilities file.",
    ),
]
EragDepth = Annotated[int, typer.Option("--depth", help="Label the top N of each run.")]


def register(app: typer.Typer) -> None:
    judge_command(_judge_app(app), "erag")(erag)


def erag(
    settings: Settings,
    run: Runs,
    queries: Queries,
    corpus: Corpus,
    gold_answers: GoldAnswersIn,
    out: Out,
    depth: EragDepth = 10,
    metric: Metric = "em",
    binarize: Binarize = None,
    max_tokens: MaxTokens = None,
) -> None:
    """eRAG: the answer from each passage alone, scored vs gold → labels.

    Each of a query's top --depth passages is given alone, with the query, to the model
    (the generator); its answer is scored against the query's gold answers with --metric,
    and the score is the pair's label. 0/1 labels (em, or --binarize T) are written as
    TREC qrels; f1 and rougeL scores as utilities 'qid docid score' ('.jsonl': rows).
    Queries without gold answers are left unlabelled and counted (NA, never 0). The
    answers are cached: another --metric or --binarize asks nothing again."""
    from ragmeter.io.gold_answers import read_gold_answers
    from ragmeter.judges.erag import erag_job, write_erag

    def build() -> Any:
        return erag_job(
            _read_runs(run),
            _read_texts(queries, "queries"),
            _read_texts(corpus),
            read_gold_answers(gold_answers),
            depth=depth,
            metric=metric,
            binarize=binarize,
            max_tokens=max_tokens,
        )

    _execute(settings, build, out, write_erag)
