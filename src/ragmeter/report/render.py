"""Render an :class:`~ragmeter.evaluation.results.Evaluation` as table, JSON, CSV or TREC text."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.evaluation.sweep import Sweep
    from ragmeter.measures import Measure

Format = Literal["table", "json", "csv", "trec"]


def format_value(
    value: float | None, digits: int = 4, *, count: bool = False, signed: bool = False
) -> str:
    """A value for people: NA for undefined, integers for counts (``num_ret`` 1233, not
    1233.0000), 4 decimals otherwise; ``signed``: with its sign (a difference, +0 / +12)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NA"
    sign = "+" if signed else ""
    if count and float(value).is_integer():
        return f"{int(value):{sign}d}"
    return f"{value:{sign}.{digits}f}"


def format_cell(value: object) -> str:
    """A table cell for people: ``NA`` for None or NaN, 4 decimals for a float, else str."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NA"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


#: why a query is NA on a measure, by the input the measure reads (the first that it needs)
_NA_REASONS: tuple[tuple[str, str], ...] = (
    ("gold_answers", "no gold answer"),
    ("spans", "no labelled span"),
    ("nuggets", "no nugget, answer or citation"),
    ("judgments", "no answerable sub-question"),
    ("samples", "no answer or reference to compare"),
)


def na_reason(measure: Measure) -> str:
    """Why a query can be NA on ``measure``: what its input lacks for that query (a measure
    on qrels: no relevant item judged)."""
    needs = measure.needs
    return next((why for need, why in _NA_REASONS if need in needs), "no relevant item judged")


def _is_count(ev: Evaluation, name: str) -> bool:
    return any(str(m) == name and m.spec.aggregate == "sum" for m in ev.measures)


def to_json(ev: Evaluation, *, per_query: bool = False) -> str:
    """``{"runs": [{"name", "metrics": {m: {"mean", "n", "n_defined"}}, "per_query"?}],
    "warnings": [...]}``; an undefined value is ``null``, never NaN."""
    return json.dumps(ev.to_dict(per_query=per_query), indent=2, allow_nan=False) + "\n"


def to_csv(ev: Evaluation, *, per_query: bool = False) -> str:
    """Long CSV: ``run,query,measure,value,n,n_defined`` (query ``all`` for aggregates)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["run", "query", "measure", "value", "n", "n_defined"])
    for run in ev.runs:
        if per_query:
            for qid, row in run.per_query().items():
                for name, value in row.items():
                    writer.writerow([run.name, qid, name, "" if value is None else value, "", ""])
        for name, agg in run.aggregates().items():
            value = agg.value
            writer.writerow(
                [run.name, "all", name, "" if value is None else value, agg.n, agg.n_defined]
            )
    return buf.getvalue()


def to_trec(ev: Evaluation, *, per_query: bool = False) -> str:
    """trec_eval-style lines ``measure<TAB>query<TAB>value``, one block per run."""
    lines = []
    for run in ev.runs:
        if len(ev.runs) > 1:
            lines.append(f"runid\tall\t{run.name}")
        if per_query:
            for qid, row in run.per_query().items():
                for name, value in row.items():
                    lines.append(f"{name}\t{qid}\t{format_value(value, count=_is_count(ev, name))}")
        for name, agg in run.aggregates().items():
            lines.append(f"{name}\tall\t{format_value(agg.value, count=_is_count(ev, name))}")
    return "\n".join(lines) + "\n"


def renamed_note(asked: Sequence[str] | None) -> str | None:
    """The rule of the printed names, stated where it applies: which of the names ``asked``
    are printed under another (ragmeter's own name of a measure, whatever its spelling:
    ``nDCG@10`` is printed ``ndcg@10``, ``P@10`` is ``precision@10``), or ``None`` when
    every name is printed as asked. Another tool's name that ragmeter does not have
    (ir_measures' ``R@50``) keeps its spelling, so it is never in the note."""
    from ragmeter.errors import MeasureError
    from ragmeter.measures import parse_measures

    renamed = []
    for name in asked or ():
        try:
            shown = [str(m) for m in parse_measures([name])]
        except MeasureError:
            continue
        if shown != [name.strip()]:
            renamed.append(f"{name.strip()} as {', '.join(shown)}")
    if not renamed:
        return None
    return "printed under ragmeter's names: " + "; ".join(renamed) + "."


def print_table(
    ev: Evaluation,
    *,
    per_query: bool = False,
    file: object = None,
    asked: Sequence[str] | None = None,
) -> None:
    """A rich table, one row per run and one column per measure (NA shown as NA); under it,
    which of the measure names ``asked`` print under another name (:func:`renamed_note`)."""
    from rich.table import Table

    from ragmeter.report.tables import fit, table_console

    console = table_console(file, wide=240)
    table = Table(title="ragmeter evaluate", title_justify="left")
    table.add_column("run", style="bold", no_wrap=True)
    for m in ev.measures:
        table.add_column(str(m), justify="right", no_wrap=True, min_width=len(str(m)))
    table.add_column("queries", justify="right", style="dim")
    for run in ev.runs:
        aggs = run.aggregates()
        n = next(iter(aggs.values())).n if aggs else len(run.query_ids)
        cells = (
            format_value(a.value, count=_is_count(ev, k)) + a.defined_note for k, a in aggs.items()
        )
        table.add_row(run.name, *cells, str(n))
    console.print(fit(table))
    partial = {k for run in ev.runs for k, a in run.aggregates().items() if a.n_defined != a.n}
    if partial:
        reasons = dict.fromkeys(na_reason(m) for m in ev.measures if str(m) in partial)
        console.print(
            "(n=k/N): the mean covers the k of N queries where the measure is defined "
            f"(the others are NA: {'; '.join(reasons)}).",
            style="dim",
            highlight=False,
        )
    note = renamed_note(asked)
    if note is not None:
        console.print(note, style="dim", highlight=False)
    if per_query:
        for run in ev.runs:
            pq = Table(title=f"{run.name}: per query", title_justify="left")
            pq.add_column("query")
            for m in ev.measures:
                pq.add_column(str(m), justify="right")
            for qid, row in run.per_query().items():
                pq.add_row(qid, *(format_value(v, count=_is_count(ev, k)) for k, v in row.items()))
            console.print(fit(pq))
    for w in ev.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)


def print_sweep(done: Sweep, *, file: object = None) -> None:
    """A K sweep: one table per run, a row per K, a column per measure (means), then the
    warnings."""
    from rich.table import Table

    from ragmeter.report.tables import fit, table_console
    from ragmeter.stats.aggregate import defined_note

    console = table_console(file, wide=240)
    for run, measures in done.curves().items():
        table = Table(title=f"{run}: sweep", title_justify="left")
        table.add_column("K", justify="right")
        for name in measures:
            table.add_column(name, justify="right")
        for i, k in enumerate(done.ks):
            cells = []
            for points in measures.values():
                mean = points[i]["mean"]
                note = defined_note(points[i]["n_defined"], points[i]["n"])
                cells.append(("NA" if mean is None else f"{mean:.4f}") + note)
            table.add_row(str(k), *cells)
        console.print(fit(table))
    for w in done.evaluation.warnings:
        console.print(f"warning: {w}", style="yellow")


def render(ev: Evaluation, fmt: Format, *, per_query: bool = False) -> str:
    """Text of a machine format (json, csv, trec)."""
    if fmt == "json":
        return to_json(ev, per_query=per_query)
    if fmt == "csv":
        return to_csv(ev, per_query=per_query)
    if fmt == "trec":
        return to_trec(ev, per_query=per_query)
    raise ValueError(f"no text rendering for format {fmt!r}")
