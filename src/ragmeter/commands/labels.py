"""The labels' line beside the numbers: ``evaluate``, ``compare``, ``report``, ``check`` and
``diagnose`` print on stderr what :func:`ragmeter.analysis.calibration.describe_labels` says
of the qrels (their provenance when a judge made any label; a calibration's figures with
``--calibration`` or ``<qrels>.calibration.json``), so that stdout keeps the results and the
tables stay as they are; :func:`label_description` gives the same, whole, for their JSON and
the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.analysis.calibration import LabelsDescription

CalibrationFile = Annotated[
    Path | None,
    typer.Option(
        "--calibration",
        help="The LLM judge's calibration (agreement --save-calibration): its figures "
        "are printed beside the numbers (default: QRELS.calibration.json if present).",
    ),
]


def label_lines(qrels: Path | None, calibration: Path | None) -> list[str]:
    """The line(s) to print for the labels of ``qrels``; a bad calibration is an error
    (status 2) before any work."""
    if qrels is None:
        if calibration is not None:
            fail(RagmeterError("--calibration describes the labels of --qrels: give --qrels"))
        return []
    from ragmeter.analysis.calibration import describe_labels

    try:
        return describe_labels(qrels, calibration=calibration)
    except RagmeterError as exc:
        fail(exc)


def label_description(
    qrels: Path | None,
    calibration: Path | None,
    qrels_format: str | None = None,
    spans: Path | None = None,
) -> LabelsDescription | None:
    """What the JSON outputs and the store record of the labels of ``qrels`` (its ``lines``
    are :func:`label_lines`'; ``qrels_format``: its format when its extension says
    otherwise); a bad calibration is an error (status 2) before any work. Without
    ``qrels``, the span labels ``spans`` of the span measures, when given."""
    if qrels is None:
        label_lines(qrels, calibration)
        if spans is None:
            return None
        from ragmeter.analysis.calibration import span_label_description

        try:
            return span_label_description(spans)
        except RagmeterError as exc:
            fail(exc)
    from ragmeter.analysis.calibration import label_description as describe

    try:
        return describe(qrels, calibration=calibration, format=qrels_format)
    except RagmeterError as exc:
        fail(exc)


def lines_of(described: LabelsDescription | None) -> list[str]:
    return [] if described is None else list(described.lines)


def tell(lines: list[str]) -> None:
    """Each line on stderr, after the numbers."""
    for line in lines:
        typer.echo(f"labels: {line}", err=True)
