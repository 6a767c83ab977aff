"""Prediction-powered estimates for people and machines: per measure, the three intervals
side by side (LLM labels only, human labels only, PPI), as a terminal table, JSON or an HTML
section; and the PPI paired differences of ``compare --ppi``.

Every view says that the numbers are computed on LLM labels, corrected by human labels.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragmeter.analysis.ppi import MeasurePPI, PPIComparison, PPIEvaluation
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.ppi import PPIEstimate


def interval_text(centre: float | None, ci: tuple[float, float] | None) -> str:
    """``0.6120 [0.5710, 0.6550]``; the centre alone without an interval."""
    if centre is None:
        return "NA"
    if ci is None:
        return f"{centre:.4f} (no interval)"
    return f"{centre:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]"


def headline(measure: str, estimate: PPIEstimate, method: str) -> str:
    """``ndcg@10 0.612 [0.571, 0.655] (PPI++, 8 human-labelled queries, 22 LLM-labelled)``."""
    return (
        f"{measure} {interval_text(estimate.estimate, estimate.ci)} ({method}, "
        f"{estimate.n_labelled} human-labelled queries, {estimate.n_unlabelled} LLM-labelled)"
    )


def to_json(evaluation: Evaluation, estimates: PPIEvaluation, *, per_query: bool = False) -> str:
    """The evaluation's JSON (under the LLM labels) with, per run and measure, a ``"ppi"``
    object beside the mean, and the method and labels at the top level."""
    out = evaluation.to_dict(per_query=per_query)
    for run in out["runs"]:
        for name, metric in run["metrics"].items():
            metric["ppi"] = estimates[run["name"]][name].to_dict()
    top = estimates.to_dict()
    out["ppi"] = {k: v for k, v in top.items() if k not in ("runs", "warnings")}
    return json.dumps(out, indent=2, allow_nan=False) + "\n"


def _gained(m: MeasurePPI) -> str:
    """``12.6 (+4.6)``: the effective number of labels and the labels gained."""
    e = m.estimate
    if e is None or e.effective_n is None or e.gained is None:
        return "–"
    return f"{e.effective_n:.1f} ({e.gained:+.1f})"


def print_table(estimates: PPIEvaluation, *, file: object = None) -> None:
    """One row per run and measure: LLM only, human only, PPI (each with its interval), λ
    and the effective number of human labels; a caption naming the labels."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file) if file is not None else Console()  # type: ignore[arg-type]
    if not console.is_terminal:
        console.width = max(console.width, 200)
    level = f"{1 - estimates.alpha:.0%}"
    table = Table(
        title=f"ragmeter evaluate --ppi ({estimates.method}, {level} intervals)",
        title_justify="left",
    )
    for column in ("run", "measure"):
        table.add_column(column, style="bold" if column == "run" else None, no_wrap=True)
    for column in ("LLM only", "human only", "PPI estimate"):
        table.add_column(column, justify="right", no_wrap=True)
    for column in ("λ", "labelled", "effective n"):
        table.add_column(column, justify="right", style="dim", no_wrap=True)
    notes: list[str] = []
    for run in estimates.runs:
        for m in run.measures:
            table.add_row(run.name, m.measure, *_cells(m))
            e = m.estimate
            if e is None:
                notes.append(f"{run.name} {m.measure}: no estimate ({m.reason})")
            elif e.note is not None:
                notes.append(f"{run.name} {m.measure}: {e.note}")
            if m.n_na:
                notes.append(f"{run.name} {m.measure}: {m.n_na} queries left out (NA)")
    console.print(table)
    console.print(f"Numbers {estimates.labels}.", style="dim", highlight=False)
    for note in dict.fromkeys(notes):
        console.print(note, style="dim", highlight=False)
    for w in estimates.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)


def _cells(m: MeasurePPI) -> list[str]:
    e = m.estimate
    if e is None:
        return ["–", "–", "–", "–", "–", "–"]
    return [
        interval_text(e.llm_mean, e.llm_ci),
        interval_text(e.human_mean, e.human_ci),
        interval_text(e.estimate, e.ci),
        f"{e.lam:.3f}",
        f"{e.n_labelled}/{e.n_labelled + e.n_unlabelled}",
        _gained(m),
    ]


def print_comparison(comparison: PPIComparison, *, file: object = None) -> None:
    """One row per pair and measure: the PPI estimate of the difference with its interval,
    its p-value and the corrected one."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file) if file is not None else Console()  # type: ignore[arg-type]
    if not console.is_terminal:
        console.width = max(console.width, 200)
    level = f"{1 - comparison.alpha:.0%}"
    table = Table(
        title=f"ragmeter compare --ppi ({comparison.method}, {level} intervals)",
        title_justify="left",
    )
    table.add_column("measure", no_wrap=True)
    table.add_column("run − baseline", style="bold", no_wrap=True)
    table.add_column("LLM only", justify="right", no_wrap=True)
    table.add_column("PPI difference", justify="right", no_wrap=True)
    table.add_column("p", justify="right", no_wrap=True)
    table.add_column(f"p ({comparison.correction})", justify="right", no_wrap=True)
    notes = []
    for d in comparison.differences:
        e = d.estimate
        pair = f"{d.run} − {d.baseline}"
        if e is None:
            table.add_row(d.measure, pair, "–", "–", "–", "–")
            notes.append(f"{pair} {d.measure}: no estimate ({d.reason})")
            continue
        table.add_row(
            d.measure,
            pair,
            interval_text(e.llm_mean, e.llm_ci),
            interval_text(e.estimate, e.ci),
            _p(e.pvalue),
            _p(d.pvalue_adjusted),
        )
        if e.note is not None:
            notes.append(f"{pair} {d.measure}: {e.note}")
    console.print(table)
    console.print(f"Numbers {comparison.labels}.", style="dim", highlight=False)
    for note in notes:
        console.print(note, style="dim", highlight=False)


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def comparison_json(comparison: PPIComparison) -> str:
    """``compare --ppi -f json``: the method, labels and every difference."""
    return json.dumps(comparison.to_dict(), indent=2, allow_nan=False) + "\n"


def html_section(estimates: PPIEvaluation) -> str:
    """The body of the report's PPI section: per run and measure the three intervals side by
    side, with a lead naming the method and the labels (for ``ragmeter report --ppi``)."""
    level = f"{1 - estimates.alpha:.0%}"
    head = "".join(
        f'<th scope="col">{html.escape(h)}</th>'
        for h in (
            "run",
            "measure",
            "LLM only",
            "human only",
            "PPI estimate",
            "λ",
            "labelled",
            "effective n",
        )
    )
    rows = []
    notes = []
    for run in estimates.runs:
        for m in run.measures:
            cells = "".join(f"<td>{html.escape(c)}</td>" for c in _cells(m))
            rows.append(
                f"<tr><td>{html.escape(run.name)}</td><td>{html.escape(m.measure)}</td>{cells}</tr>"
            )
            if m.estimate is None:
                notes.append(f"{run.name} {m.measure}: no estimate ({m.reason})")
            elif m.estimate.note is not None:
                notes.append(f"{run.name} {m.measure}: {m.estimate.note}")
    note_html = "".join(f'<p class="note">{html.escape(n)}.</p>' for n in dict.fromkeys(notes))
    return (
        f'<p class="lead">The mean each measure would have under human labels, estimated by '
        f"{html.escape(estimates.method)} ({level} intervals), beside the LLM labels alone and "
        f"the human labels alone. Numbers {html.escape(estimates.labels)}.</p>"
        f'<div class="scroll"><table class="compact"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{note_html}"
    )
