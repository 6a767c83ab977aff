"""``ragmeter spans to-qrels``: chunk qrels of one chunking from span labels; ``ragmeter
chunk``: a chunking of a corpus, its table and its texts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError

spans_app = typer.Typer(
    name="spans",
    help="Span labels (character offsets of the evidence): chunk qrels for any chunking.",
    no_args_is_help=True,
)


@spans_app.command("to-qrels")
def to_qrels(
    spans: Annotated[
        Path, typer.Option("--spans", help="Span labels (JSONL/CSV/Parquet, questions_df.csv).")
    ],
    chunks: Annotated[
        Path, typer.Option("--chunks", help="Chunk table of the chunking (chunk_id, doc_id, …).")
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Qrels to write (TREC, or by extension).")
    ],
    rule: Annotated[
        str,
        typer.Option(
            "--rule",
            help="Relevant chunk: any (shares a character with a span), span=F (holds F of "
            "a span), chunk=F (F of it is evidence).",
        ),
    ] = "any",
    grade: Annotated[
        str,
        typer.Option(
            "--grade",
            help="max (largest grade of the spans that make it relevant by --rule) or "
            "overlap (1-3 by evidence share).",
        ),
    ] = "max",
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="Documents JSONL {id, text}: check offsets and texts."),
    ] = None,
) -> None:
    """Write chunk qrels from span labels, so that every measure runs on any chunking.

    The rule is recorded in the qrels' provenance sidecar and printed."""
    from ragmeter.workflows.spans import write_chunk_qrels

    try:
        done = write_chunk_qrels(spans, chunks, output, rule=rule, grade=grade, corpus=corpus)
    except (RagmeterError, OSError) as exc:
        fail(exc)
    pairs = sum(len(docs) for docs in done.qrels.to_dict().values())
    typer.echo(
        f"wrote {done.path}: {pairs} relevant chunk(s) of {done.qrels.n_queries} "
        f"queries (rule {done.rule}); provenance {done.sidecar or 'not written (not a file)'}",
        err=True,
    )


def chunk_command(
    corpus: Annotated[Path, typer.Argument(help="Documents, JSONL {id, text} per line.")],
    size: Annotated[int, typer.Option("--size", min=1, help="Chunk size (characters).")],
    table: Annotated[
        Path, typer.Option("--table", help="Chunk table to write (JSONL, CSV or Parquet).")
    ],
    texts: Annotated[Path, typer.Option("--texts", help="Chunk texts to write, JSONL {id, text}.")],
    overlap: Annotated[int, typer.Option("--overlap", min=0, help="Overlap of chunks.")] = 0,
    tokens: Annotated[
        bool, typer.Option("--tokens", help="Count MiniLM word pieces, not characters.")
    ] = False,
    recursive: Annotated[
        bool,
        typer.Option("--recursive", help="Split at paragraphs, lines, sentences, words."),
    ] = False,
) -> None:
    """Cut documents into chunks: a chunk table for --chunks and the chunk texts for
    'ragmeter retrieve --corpus'."""
    from ragmeter.workflows.spans import write_chunking

    try:
        done = write_chunking(
            corpus, table, texts, size=size, overlap=overlap, tokens=tokens, recursive=recursive
        )
    except (RagmeterError, OSError) as exc:
        fail(exc)
    from ragmeter.io.spans import chunking_sidecar

    typer.echo(
        f"wrote {table} and {texts}: {len(done.table)} chunks of chunking "
        f"{done.table.chunking_id} (its record: {chunking_sidecar(table)})",
        err=True,
    )


def register(app: typer.Typer) -> None:
    """Add ``ragmeter spans`` to the command line."""
    app.add_typer(spans_app, name="spans")
    app.command("chunk")(chunk_command)
