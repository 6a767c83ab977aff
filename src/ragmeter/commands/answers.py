"""``ragmeter answers``: answer correctness against human labels, context coverage, latency
(SPEC §5, seed 001).

The formulas live in :mod:`ragmeter.metrics.answers`; this module reads, computes and prints.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError


class AnswersFormat(StrEnum):
    table = "table"
    json = "json"


class Denominator(StrEnum):
    generated = "generated"
    reference = "reference"


def evaluate_answers(
    samples: list[Any],
    *,
    threshold: float = 0.7,
    default_label: int | None = None,
    denominator: str = "generated",
    k: int | None = None,
) -> dict[str, Any]:
    """The ``answers`` report as a JSON-ready dict (``None`` for NA).

    ``y_true`` is each sample's label (``default_label`` where it has none; samples without
    either stay out of the confusion matrix), ``y_pred`` is :func:`answer_correct`.
    """
    from ragmeter.metrics import answers as am

    per_sample: list[dict[str, Any]] = []
    y_true: list[int] = []
    y_pred: list[bool] = []
    coverages: list[float | None] = []
    contained: list[float | None] = []
    for s in samples:
        overlap = am.keyword_overlap(s.reference_answer, s.generated_answer)
        correct = overlap is not None and overlap > threshold
        label = s.label if s.label is not None else default_label
        if label is not None:
            y_true.append(label)
            y_pred.append(correct)
        coverage = am.context_coverage(
            s.context,
            s.generated_answer,
            denominator=denominator,  # type: ignore[arg-type]
            reference=s.reference_answer,
        )
        coverages.append(coverage)
        hit: int | None = None
        if s.retrieved is not None:
            hit = am.containment(s.reference_answer, s.retrieved, k=k)
        contained.append(None if hit is None else float(hit))
        per_sample.append(
            {
                "id": s.id,
                "keyword_overlap": overlap,
                "correct": correct,
                "label": label,
                "context_coverage": coverage,
                "containment": hit,
                "latency": am.sample_total(s.timings),
            }
        )
    c = am.confusion(y_true, y_pred)
    metrics: dict[str, Any] = {
        "accuracy": am.accuracy(c),
        "precision": am.precision(c),
        "recall": am.recall(c),
        "f1": am.f1(c),
        "context_coverage": am.mean_defined(coverages),
        "containment": am.mean_defined(contained),
        "n": len(samples),
        "n_labeled": c.n,
    }
    latency = {
        name: summary.to_dict()
        for name, summary in am.latency([s.timings for s in samples]).items()
    }
    return {
        "metrics": metrics,
        "confusion": c.to_dict(),
        "latency": latency,
        "per_sample": per_sample,
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "NA"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def register(app: typer.Typer) -> None:
    @app.command()
    def answers(
        samples: Annotated[
            Path,
            typer.Argument(
                help="JSON list of {query, context, generated_answer, reference_answer} "
                "with optional label (0/1), id, retrieved, timings."
            ),
        ],
        label: Annotated[
            int | None,
            typer.Option(
                "--label",
                min=0,
                max=1,
                help="Human label (1 correct, 0 incorrect) of samples that carry none.",
            ),
        ] = None,
        threshold: Annotated[
            float,
            typer.Option("--threshold", help="Correct ⇔ keyword overlap > this (strict)."),
        ] = 0.7,
        denominator: Annotated[
            Denominator,
            typer.Option(
                "--coverage-denominator",
                help="context_coverage over the generated answer's keywords (the seed's "
                "text) or the reference's (the seed's code).",
            ),
        ] = Denominator.generated,
        k: Annotated[
            int | None,
            typer.Option("--k", min=1, help="containment@k over the top k retrieved texts."),
        ] = None,
        fmt: Annotated[AnswersFormat, typer.Option("--format", "-f")] = AnswersFormat.table,
    ) -> None:
        """Answer accuracy, precision, recall and F1 against human labels (keyword overlap >
        threshold), context coverage, containment and latency percentiles."""
        from ragmeter.io.answers import read_answer_samples

        try:
            report = evaluate_answers(
                read_answer_samples(samples),
                threshold=threshold,
                default_label=label,
                denominator=denominator.value,
                k=k,
            )
        except (RagmeterError, ValueError) as exc:
            fail(exc)
        if fmt is AnswersFormat.json:
            sys.stdout.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
            return
        _print(report)


def _print(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="answers", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in report["metrics"].items():
        table.add_row(name, _fmt(value))
    console.print(table)
    c = report["confusion"]
    console.print(f"confusion: TP {c['tp']}, FP {c['fp']}, TN {c['tn']}, FN {c['fn']}")
    lat = Table(title="latency (s)", title_justify="left")
    for col in ("stage", "n", "mean", "p50", "p95", "p99"):
        lat.add_column(col, justify="right" if col != "stage" else "left")
    for stage, s in report["latency"].items():
        lat.add_row(
            stage,
            f"{s['n_defined']}/{s['n']}",
            *(_fmt(s[x]) for x in ("mean", "p50", "p95", "p99")),
        )
    console.print(lat)
