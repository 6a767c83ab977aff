"""``ragmeter judge nuggets create|score|assign`` and ``ragmeter judge citations``: the TREC
RAG judge tasks (see :mod:`ragmeter.judges.nuggets`), with the options, cache, dry run and
exit statuses of every ``ragmeter judge`` subcommand.

A typical run: ``create`` nuggets from the judged passages, ``score`` them vital / okay,
``assign`` them to the answers (a TREC RAG answer file) or to the passages of runs, then
``ragmeter evaluate ANSWERS --nuggets N --assignments A``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.judge import (
    Corpus,
    Depth,
    MaxTokens,
    Out,
    Queries,
    Settings,
    _execute,
    _read_runs,
    _read_texts,
    judge_command,
)
from ragmeter.commands.options import PassageTexts, QueryTexts, fail

NuggetsIn = Annotated[
    Path,
    typer.Option("--nuggets", help="Nuggets JSONL (nuggetizer's format, with importance)."),
]
RagAnswersFile = Annotated[
    Path | None,
    typer.Option(
        "--answers",
        help="TREC RAG answers JSONL (Ragnarök: topic_id, answer sentences with citations, "
        "references).",
    ),
]


def _judge_app(app: typer.Typer) -> typer.Typer:
    for group in app.registered_groups:
        if group.name == "judge" and group.typer_instance is not None:
            return group.typer_instance
    raise RuntimeError("register ragmeter.commands.judge before ragmeter.commands.judge_nuggets")


def register(app: typer.Typer) -> None:
    judge_app = _judge_app(app)
    nuggets_app = typer.Typer(
        name="nuggets",
        help="TREC RAG nuggets: create them from judged passages, score them vital/okay, "
        "assign them to answers or passages.",
        no_args_is_help=True,
    )
    judge_app.add_typer(nuggets_app, name="nuggets")
    judge_command(nuggets_app, "create")(create)
    judge_command(nuggets_app, "score")(score)
    judge_command(nuggets_app, "assign")(assign)
    judge_command(judge_app, "citations")(citations)


def create(
    settings: Settings,
    queries: Queries,
    qrels: Annotated[Path, typer.Option("--qrels", help="Relevance judgments (any format).")],
    corpus: Corpus,
    out: Out,
    n: Annotated[int, typer.Option("--n", help="Nuggets per query, at most.")] = 30,
    rel_level: Annotated[
        int, typer.Option("--rel-level", help="Passages graded at least this are read.")
    ] = 1,
    max_passages: Annotated[
        int, typer.Option("--max-passages", help="Passages per query, best graded first.")
    ] = 20,
    max_tokens: MaxTokens = None,
) -> None:
    """Nuggets from the judged passages of each query → nugget texts JSONL.

    One call per query reads its passages graded ≥ --rel-level and lists at most --n
    nuggets; the output {qid, query, nuggets: [{text}]} is the input of 'nuggets score'.
    Queries whose reply holds no nugget are left out, counted, and make the exit status 1."""
    from ragmeter.io.readers import read_qrels
    from ragmeter.judges.nuggets import nuggets_job, write_nugget_texts

    if n < 1 or max_passages < 1:
        fail(ValueError("--n and --max-passages must be ≥ 1"))
    texts = _read_texts(queries, "queries")

    def build() -> Any:
        return nuggets_job(
            texts,
            read_qrels(qrels),
            _read_texts(corpus),
            n=n,
            rel_level=rel_level,
            max_passages=max_passages,
            max_tokens=max_tokens,
        )

    _execute(settings, build, out, lambda labels, path: write_nugget_texts(labels, path, texts))


def score(
    settings: Settings,
    nuggets: Annotated[
        Path, typer.Option("--nuggets", help="Nugget texts JSONL (from 'nuggets create').")
    ],
    queries: Queries,
    out: Out,
    max_tokens: MaxTokens = None,
) -> None:
    """Importance (vital / okay) of each nugget → nuggets JSONL.

    Writes nuggetizer's nugget file {qid, nuggets: [{text, importance}]}, the --nuggets of
    'ragmeter evaluate'. A nugget whose reply cannot be read is left out, counted, and
    makes the exit status 1."""
    from ragmeter.io.nuggets import read_nugget_texts
    from ragmeter.judges.nuggets import importance_job, write_nuggets

    def build() -> Any:
        return importance_job(
            read_nugget_texts(nuggets), _read_texts(queries, "queries"), max_tokens=max_tokens
        )

    _execute(settings, build, out, write_nuggets)


def assign(
    settings: Settings,
    nuggets: NuggetsIn,
    out: Out,
    answers: RagAnswersFile = None,
    run: Annotated[
        list[Path] | None,
        typer.Option("--run", help="Run file(s): assign to the passages of the top --depth."),
    ] = None,
    corpus: PassageTexts = None,
    queries: QueryTexts = None,
    depth: Depth = 20,
    max_tokens: MaxTokens = None,
) -> None:
    """Nugget assignments (support / partial_support / not_support) → assignments JSONL.

    With --answers: every nugget of a query (its text from --queries, else the answer's
    topic) against each answer to it (one line per answer, with its run_id); with --run,
    --corpus and --queries: against each passage in the top --depth (one line per passage,
    with its docid; nugget coverage of the context). The output is the --assignments of
    'ragmeter evaluate'; an unreadable reply leaves its nugget out of the line and makes the
    exit status 1."""
    from ragmeter.io.nuggets import read_nuggets, read_rag_answers
    from ragmeter.judges.nuggets import assignment_job, write_rows

    if (answers is None) == (not run):
        fail(ValueError("give --answers, or --run with --corpus and --queries"))
    if run and (corpus is None or queries is None):
        fail(ValueError("assigning nuggets to passages needs --corpus and --queries"))

    def build() -> Any:
        return assignment_job(
            read_nuggets(nuggets),
            queries=_read_texts(queries, "queries") if queries is not None else None,
            answers=read_rag_answers(answers) if answers is not None else None,
            runs=_read_runs(run) if run else None,
            corpus=_read_texts(corpus) if corpus is not None else None,
            depth=depth,
            max_tokens=max_tokens,
        )

    _execute(settings, build, out, write_rows)


def citations(
    settings: Settings,
    answers: Annotated[
        Path,
        typer.Option("--answers", help="TREC RAG answers JSONL (sentences with citations)."),
    ],
    corpus: Corpus,
    out: Out,
    queries: QueryTexts = None,
    max_tokens: MaxTokens = None,
) -> None:
    """Citation support of each answer sentence → citation support JSONL.

    Every (sentence, cited segment) of a TREC RAG answer file is labelled support /
    partial_support / not_support (the query's text from --queries, else the answer's
    topic); the output is the --citation-support of 'ragmeter evaluate'
    (citation_precision, citation_recall). An unreadable reply leaves its citation out and
    makes the exit status 1."""
    from ragmeter.io.nuggets import read_rag_answers
    from ragmeter.judges.nuggets import citation_support_job, write_rows

    def build() -> Any:
        return citation_support_job(
            read_rag_answers(answers),
            _read_texts(corpus),
            queries=_read_texts(queries, "queries") if queries is not None else None,
            max_tokens=max_tokens,
        )

    _execute(settings, build, out, write_rows)
