"""Prediction-powered estimates for people and machines: per measure, the three intervals
side by side (LLM labels only, human labels only, PPI), as a terminal table, JSON or an HTML
section; and the PPI paired differences of ``compare --ppi``.

Every view says that the numbers are computed on LLM labels, corrected by human labels.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.table import Table
    from rich.text import Text

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


def stacked(centre: float | None, ci: tuple[float, float] | None) -> Text:
    """A terminal cell: the estimate over its interval (dim), or over "no interval"; two
    short lines instead of one long one, so that the tables fit 80 columns."""
    from rich.text import Text

    if centre is None:
        return Text("NA")
    below = "no interval" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"
    text = Text(f"{centre:.4f}")
    text.append("\n" + below, style="dim")
    return text


def _stacked_gained(m: MeasurePPI) -> Text:
    from rich.text import Text

    cell = _gained(m)
    head, _, tail = cell.partition(" ")
    text = Text(head)
    if tail:
        text.append("\n" + tail, style="dim")
    return text


#: the columns of the ``evaluate --ppi`` table after the run and the measure (the keys that
#: every block of a narrow terminal repeats): the answer first, then what it is compared with
EVALUATE_COLUMNS = ("PPI estimate", "LLM only", "human only", "λ", "labelled", "effective n")


def print_table(estimates: PPIEvaluation, *, file: object = None) -> None:
    """One table per measure, one row per run: the PPI estimate, LLM only and human only
    (each over its interval), λ, the labelled queries and the effective number of human
    labels; then the labels the numbers rest on, and why an interval is missing. Fitted to
    the width (:func:`ragmeter.report.tables.fit`): at 80 columns the later columns go to a
    block under the first, each naming the run (the measure is the table's title)."""
    from ragmeter.report.tables import fit, table_console

    console = table_console(file, wide=200)
    level = f"{1 - estimates.alpha:.0%}"
    measures = dict.fromkeys(m.measure for run in estimates.runs for m in run.measures)
    notes: list[str] = []
    for measure in measures:
        title = f"ragmeter evaluate --ppi: {measure} ({estimates.method}, {level} intervals)"
        table = _table(title, "run", EVALUATE_COLUMNS)
        for run in estimates.runs:
            m = run[measure]
            table.add_row(run.name, *_terminal_cells(m))
            notes.extend(f"{run.name} {m.measure}: {note}" for note in _notes(m))
        console.print(fit(table))
    console.print(f"Numbers {estimates.labels}.", style="dim", highlight=False)
    for note in dict.fromkeys(notes):
        console.print(note, style="dim", highlight=False)
    for w in estimates.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)


def _table(title: str, key: str, columns: Sequence[str]) -> Table:
    """A PPI table: the key column (bold), then right-aligned columns that never wrap (a
    cell is cut by nothing: :func:`ragmeter.report.tables.fit` moves whole columns)."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(key, style="bold", no_wrap=True)
    for column in columns:
        dim = column in ("λ", "labelled", "effective n")
        table.add_column(column, justify="right", no_wrap=True, style="dim" if dim else None)
    return table


def _notes(m: MeasurePPI) -> list[str]:
    e = m.estimate
    out = []
    if e is None:
        out.append(f"no estimate ({m.reason})")
    else:
        if e.note is not None:
            out.append(e.note)
        if e.weak_judge is not None:
            out.append(e.weak_judge)
        if e.llm_ci is None:
            out.append("LLM only: the same value on every query, no interval")
    if m.n_na:
        out.append(f"{m.n_na} queries left out (NA)")
    return out


def _terminal_cells(m: MeasurePPI) -> list[str | Text]:
    return _row_cells(m, stacked, _stacked_gained)


def _cells(m: MeasurePPI) -> list[str]:
    """The HTML cells, in :data:`EVALUATE_COLUMNS` order."""
    return _row_cells(m, interval_text, _gained)


_Cell = TypeVar("_Cell")


def _row_cells(
    m: MeasurePPI,
    interval: Callable[[float | None, tuple[float, float] | None], _Cell],
    gained: Callable[[MeasurePPI], _Cell],
) -> list[str | _Cell]:
    """A measure's row, in :data:`EVALUATE_COLUMNS` order: each interval (and the gain) as
    ``interval`` (and ``gained``) write it, the terminal's or the HTML's."""
    e = m.estimate
    if e is None:
        return ["–"] * len(EVALUATE_COLUMNS)
    return [
        interval(e.estimate, e.ci),
        interval(e.llm_mean, e.llm_ci),
        interval(e.human_mean, e.human_ci),
        f"{e.lam:.3f}",
        f"{e.n_labelled}/{e.n_labelled + e.n_unlabelled}",
        gained(m),
    ]


def print_comparison(comparison: PPIComparison, *, file: object = None) -> None:
    """One table per measure, one row per pair: the PPI estimate of the difference over its
    interval, its p-value and the corrected one (``n/a`` where there is no interval, and a
    note says why), then the human-only and the LLM-only differences. Fitted to the width like
    :func:`print_table`; a pair of long run names is printed on two lines."""
    from rich.text import Text

    from ragmeter.report.tables import SHORT, fit, table_console

    console = table_console(file, wide=200)
    level = f"{1 - comparison.alpha:.0%}"
    columns = ("PPI difference", "p", f"p ({comparison.correction})", "human only", "LLM only")
    two_lines = any(len(f"{d.run} − {d.baseline}") > SHORT for d in comparison.differences)
    notes = []
    for measure in dict.fromkeys(d.measure for d in comparison.differences):
        title = f"ragmeter compare --ppi: {measure} ({comparison.method}, {level} intervals)"
        table = _table(title, "run − baseline", columns)
        for d in (d for d in comparison.differences if d.measure == measure):
            pair = f"{d.run} − {d.baseline}"
            key = Text(f"{d.run}\n− {d.baseline}") if two_lines else pair
            e = d.estimate
            if e is None:
                table.add_row(key, *["–"] * len(columns))
                notes.append(f"{pair} {d.measure}: no estimate ({d.reason})")
                continue
            table.add_row(
                key,
                stacked(e.estimate, e.ci),
                p_text(e.pvalue),
                p_text(d.pvalue_adjusted),
                stacked(e.human_mean, e.human_ci),
                stacked(e.llm_mean, e.llm_ci),
            )
            if e.note is not None:
                notes.append(f"{pair} {d.measure}: {e.note} (p: n/a)")
            if e.weak_judge is not None:
                notes.append(f"{pair} {d.measure}: {e.weak_judge}")
        console.print(fit(table))
    console.print(f"Numbers {comparison.labels}.", style="dim", highlight=False)
    for note in notes:
        console.print(note, style="dim", highlight=False)


def p_text(p: float | None) -> str:
    """A p-value as printed: ``<0.0001``, ``0.0312``; ``n/a`` when it is undefined (no
    interval, or NaN): an undefined p is never shown as small."""
    if p is None or math.isnan(p):
        return "n/a"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def comparison_json(comparison: PPIComparison) -> str:
    """``compare --ppi -f json``: the method, labels and every difference."""
    return json.dumps(comparison.to_dict(), indent=2, allow_nan=False) + "\n"


def html_section(estimates: PPIEvaluation) -> str:
    """The body of the report's PPI section: per run and measure the three intervals side by
    side, with a lead naming the method and the labels (for ``ragmeter report --ppi``)."""
    level = f"{1 - estimates.alpha:.0%}"
    head = "".join(
        f'<th scope="col">{html.escape(h)}</th>' for h in ("run", "measure", *EVALUATE_COLUMNS)
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
            else:
                notes.extend(
                    f"{run.name} {m.measure}: {note}"
                    for note in (m.estimate.note, m.estimate.weak_judge)
                    if note is not None
                )
    note_html = "".join(f'<p class="note">{html.escape(n)}.</p>' for n in dict.fromkeys(notes))
    return (
        f'<p class="lead">The mean each measure would have under human labels, estimated by '
        f"{html.escape(estimates.method)} ({level} intervals), beside the LLM labels alone and "
        f"the human labels alone. Numbers {html.escape(estimates.labels)}.</p>"
        f'<div class="scroll"><table class="compact"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{note_html}"
    )
