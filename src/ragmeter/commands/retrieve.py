"""``ragmeter retrieve``: run a baseline retriever over your corpus and write a TREC run.

``ragmeter retrieve --method bm25|dense|hybrid [--rerank mmr|cross-encoder] --corpus C.jsonl
--queries Q.jsonl --depth 100 --out run.txt``

Corpus and queries are JSONL ``{"id", "text"}`` rows (read by
:func:`ragmeter.io.judgments.read_corpus`). The methods and their parameters are documented
in :mod:`ragmeter.pipeline.baselines`; the run is written atomically.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError


class MethodChoice(StrEnum):
    bm25 = "bm25"
    dense = "dense"
    hybrid = "hybrid"


class RerankChoice(StrEnum):
    none = "none"
    mmr = "mmr"
    cross_encoder = "cross-encoder"


def retrieve_command(
    corpus: Annotated[Path, typer.Option("--corpus", help="Passages, JSONL {id, text} per line.")],
    queries: Annotated[Path, typer.Option("--queries", help="Queries, JSONL {id, text} per line.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The TREC run to write.")],
    method: Annotated[
        MethodChoice,
        typer.Option("--method", help="bm25 (bm25s), dense (all-MiniLM-L6-v2) or hybrid (RRF)."),
    ] = MethodChoice.bm25,
    rerank: Annotated[
        RerankChoice,
        typer.Option("--rerank", help="Rerank the candidates: mmr, cross-encoder, or none."),
    ] = RerankChoice.none,
    depth: Annotated[int, typer.Option("--depth", min=1, help="Documents per query.")] = 100,
    candidates: Annotated[
        int | None,
        typer.Option("--candidates", min=1, help="Rerank the top N retrieved (default: depth)."),
    ] = None,
    k1: Annotated[float, typer.Option("--k1", min=0.0, help="BM25 k1.")] = 1.5,
    b: Annotated[float, typer.Option("--b", min=0.0, max=1.0, help="BM25 b.")] = 0.75,
    stopwords: Annotated[
        str,
        typer.Option("--stopwords", help="BM25 stopwords: en (bm25s's English list) or none."),
    ] = "en",
    rrf_k: Annotated[int, typer.Option("--rrf-k", min=0, help="RRF constant k (hybrid).")] = 60,
    mmr_lambda: Annotated[
        float,
        typer.Option(
            "--mmr-lambda", min=0.0, max=1.0, help="MMR trade-off: 1 relevance, 0 novelty."
        ),
    ] = 0.5,
    cross_encoder: Annotated[
        Path | None,
        typer.Option(
            "--cross-encoder", help="Local cross-encoder model directory (--rerank cross-encoder)."
        ),
    ] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Run tag (default: the method).")] = None,
) -> None:
    """Retrieve with a baseline (BM25, dense, hybrid; optional MMR or cross-encoder rerank)
    and write the run in TREC format."""
    from ragmeter.io.judgments import read_corpus
    from ragmeter.io.trec import write_trec_run
    from ragmeter.pipeline.baselines import Texts, retrieve

    try:
        if stopwords not in ("en", "none"):
            raise RagmeterError(f"--stopwords {stopwords!r}: expected en or none")
        run = retrieve(
            Texts.from_corpus(read_corpus(corpus)),
            Texts.from_corpus(read_corpus(queries)),
            method=method.value,  # type: ignore[arg-type]
            depth=depth,
            rerank=None if rerank is RerankChoice.none else rerank.value,  # type: ignore[arg-type]
            candidates=candidates,
            k1=k1,
            b=b,
            stopwords=None if stopwords == "none" else stopwords,
            rrf_k=rrf_k,
            mmr_lambda=mmr_lambda,
            cross_encoder=cross_encoder,
            name=tag,
        )
        write_trec_run(run, out)
    except RagmeterError as exc:
        fail(exc)
    typer.echo(f"{run.name}: {len(run)} lines for {run.n_queries} queries -> {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``ragmeter retrieve`` to the command line."""
    app.command("retrieve")(retrieve_command)
