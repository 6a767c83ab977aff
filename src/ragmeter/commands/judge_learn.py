"""``ragmeter judge learn``: fit a judge on human labels and print its held-out agreement
(the work is :mod:`ragmeter.judges.learning`'s; this module parses and prints)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.judge import Corpus, Queries, SummaryJson, _read_texts, _write_json
from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError
from ragmeter.judges.learned_defaults import (
    DEFAULT_ADAPTER_ALPHA,
    DEFAULT_ALPHA,
    DEFAULT_FOLDS,
    DEFAULT_MIN_LABELS,
    DEFAULT_RESAMPLES,
)


def learn(
    qrels: Annotated[
        Path, typer.Option("--qrels", help="Human labels to learn from (TREC qrels).")
    ],
    queries: Queries,
    corpus: Corpus,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Model directory to write (created if missing)."),
    ],
    per_topic: Annotated[
        bool,
        typer.Option(
            "--per-topic/--pooled",
            help="Give each topic with at least --min-labels labels its own adapter on top "
            "of the pooled model (--pooled: one model for all).",
        ),
    ] = True,
    min_labels: Annotated[
        int,
        typer.Option("--min-labels", min=1, help="Labels a topic needs for its own adapter."),
    ] = DEFAULT_MIN_LABELS,
    folds: Annotated[
        int,
        typer.Option(
            "--folds",
            min=0,
            help="Cross-validation folds within each topic for the held-out agreement (0: none).",
        ),
    ] = DEFAULT_FOLDS,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the folds and of the bootstrap.")
    ] = 0,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0, help="Ridge penalty of the pooled model.")
    ] = DEFAULT_ALPHA,
    adapter_alpha: Annotated[
        float, typer.Option("--adapter-alpha", min=0.0, help="Ridge penalty of each adapter.")
    ] = DEFAULT_ADAPTER_ALPHA,
    resamples: Annotated[
        int,
        typer.Option("--resamples", min=1, help="Bootstrap draws of topics for the intervals."),
    ] = DEFAULT_RESAMPLES,
    held_out: Annotated[
        Path | None,
        typer.Option(
            "--held-out",
            help="Also write the held-out grades as qrels (with their provenance): compare "
            "them with --qrels by 'ragmeter agreement' (--runs for the leaderboard τ, "
            "--save-calibration for 'check --calibration').",
        ),
    ] = None,
    summary_json: SummaryJson = None,
) -> None:
    """Fit a relevance judge on human labels → model directory.

    Features of each (query, passage): MiniLM cosine, the embeddings' element-wise product
    and the query-term overlap; learner: ordinal ridge regression (grades rounded and
    clipped to the labels' scale), pooled, plus a per-topic adapter for each topic with
    --min-labels labels. Prints κ (quadratic and unweighted), Krippendorff's ordinal α and
    exact agreement of held-out grades (--folds-fold cross-validation within topics) with
    95% intervals over topics (with the model summary, as JSON with --summary-json). Use the
    model with 'ragmeter judge relevance --learned DIR'.
    Needs the 'learn' extra (scikit-learn) and the 'models' extra."""
    from ragmeter.io.readers import read_qrels
    from ragmeter.judges.learned import save_model
    from ragmeter.judges.learning import learn as fit
    from ragmeter.judges.learning import read_training_set, write_held_out

    if folds == 1:
        fail(ValueError("--folds must be 0 (no validation) or at least 2"))
    if held_out is not None and folds == 0:
        fail(ValueError("--held-out needs the cross-validation: --folds ≥ 2"))
    try:
        data = read_training_set(
            read_qrels(qrels).to_dict(),
            _read_texts(queries, "queries"),
            _read_texts(corpus),
            source=str(qrels),
        )
        result = fit(
            data,
            per_topic=per_topic,
            min_labels=min_labels,
            alpha=alpha,
            adapter_alpha=adapter_alpha,
            folds=folds,
            seed=seed,
            resamples=resamples,
        )
        save_model(result.model, out)
        if held_out is not None:
            write_held_out(result, held_out)
    except RagmeterError as exc:
        fail(exc)
    for line in result.lines():
        typer.echo(line)
    if summary_json is not None:
        _write_json(summary_json, result.to_dict())
    typer.echo(f"wrote {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``learn`` to the ``judge`` group (registered before this module)."""
    from ragmeter.commands.judge_nuggets import _judge_app

    _judge_app(app).command("learn")(learn)
