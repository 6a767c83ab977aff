"""Render the monitor's figures: the summary of a monitor run (terminal), the trend page
(HTML) and the Prometheus text exposition of the latest window. Formatting only — every
number comes from :mod:`ragmeter.workflows.monitor` (the stored window figures).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.workflows.monitor import MonitorOutcome, Trend


def _num(value: float, digits: int = 4) -> str:
    return "NA" if math.isnan(value) else f"{value:.{digits}f}"


def _interval(low: float, high: float) -> str:
    return "" if math.isnan(low) else f"[{low:.4f}, {high:.4f}]"


def _label(start: int, window_s: int) -> str:
    from ragmeter.analysis.monitor import window_label

    return window_label(start, window_s)


def print_outcome(outcome: MonitorOutcome, *, file: object = None) -> None:
    """What the run read, sampled and judged, then each window's judged figures."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, stderr=file is None)  # type: ignore[arg-type]
    console.print(
        f"{outcome.stream}: {outcome.spans_read} span(s) read, {outcome.new_spans} new; "
        f"{outcome.sampled} retriever span(s) sampled, {outcome.pairs_judged} pair(s) labelled "
        f"({outcome.pairs_unlabelled} without a label)",
        highlight=False,
        soft_wrap=True,
    )
    for line in [*outcome.notes, *outcome.judge_lines]:
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    judged = [f for f in outcome.figures if not f.measure.startswith("latency_ms.")]
    out = Console(file=file) if file is not None else Console()  # type: ignore[arg-type]
    table = Table(
        title=f"ragmeter monitor: {outcome.stream}, windows of {_length(outcome.window_s)}",
        title_justify="left",
        caption=outcome.labels_line() + "; 95% bootstrap intervals",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
    )
    for header in ("window", "measure", "n", "mean", "95% interval"):
        table.add_column(header, justify="left" if header in ("window", "measure") else "right")
    for f in judged:
        table.add_row(
            _label(f.window_start, outcome.window_s),
            f.measure,
            str(f.n),
            _num(f.mean),
            _interval(f.low, f.high),
        )
    out.print(table)


def _length(window_s: int) -> str:
    from ragmeter.analysis.monitor import window_text

    return window_text(window_s)


# -- Prometheus -------------------------------------------------------------------------------


def _escape_label(value: str) -> str:
    """A label value of the text exposition format: backslash, double quote and line feed
    escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    return "{" + ",".join(f'{k}="{_escape_label(v)}"' for k, v in pairs) + "}"


def _value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


def prometheus_text(trends: Trend | Sequence[Trend]) -> str:
    """The latest window's figures of each stream as Prometheus gauges (text exposition
    format 0.0.4), each family's ``# HELP`` and ``# TYPE`` once.

    ``ragmeter_monitor_mean`` (and ``_low``, ``_high``, ``_sample_size``) per judged measure,
    labelled with the stream, the measure and who made the labels (``labelled_by``);
    ``ragmeter_monitor_latency_ms`` per stage and quantile;
    ``ragmeter_monitor_window_start_seconds``; where people's labels corrected the latest
    window (``ragmeter monitor ppi``, stored), ``ragmeter_monitor_ppi_estimate`` (and
    ``_low``, ``_high``, ``_labelled``) per measure, also labelled with who made the human
    labels (``corrected_by``). An undefined mean is NaN."""
    families: dict[str, tuple[str, list[str]]] = {
        "ragmeter_monitor_mean": ("Mean of a judged measure over the latest window's sample.", []),
        "ragmeter_monitor_low": ("Low end of the 95% bootstrap interval of the mean.", []),
        "ragmeter_monitor_high": ("High end of the 95% bootstrap interval of the mean.", []),
        "ragmeter_monitor_sample_size": ("Judged spans with a defined value in the window.", []),
        "ragmeter_monitor_latency_ms": ("Latency quantile of a stage in the window, in ms.", []),
        "ragmeter_monitor_window_start_seconds": ("Start of the latest window (Unix time).", []),
        "ragmeter_monitor_ppi_estimate": (
            "Prediction-powered estimate of the mean under human labels (PPI++).",
            [],
        ),
        "ragmeter_monitor_ppi_low": ("Low end of the PPI estimate's interval.", []),
        "ragmeter_monitor_ppi_high": ("High end of the PPI estimate's interval.", []),
        "ragmeter_monitor_ppi_labelled": ("Sampled spans people labelled in the window.", []),
    }
    for trend in [trends] if not isinstance(trends, Sequence) else trends:
        _trend_samples(trend, families)
    lines: list[str] = []
    for name, (help_text, samples) in families.items():
        if not samples:
            continue
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
        lines += [f"{name}{s}" for s in samples]
    return "\n".join(lines) + "\n"


def _trend_samples(trend: Trend, families: dict[str, tuple[str, list[str]]]) -> None:
    latest = trend.latest()
    judge = trend.judge.describe() if trend.judge is not None else ""
    stream = ("stream", trend.stream)
    for row in latest:
        if row.measure.startswith("latency_ms."):
            quantile, stage = _latency_parts(row.measure)
            labels = _labels([stream, ("stage", stage), ("quantile", quantile)])
            families["ragmeter_monitor_latency_ms"][1].append(f"{labels} {_value(row.mean)}")
            continue
        labels = _labels([stream, ("measure", row.measure), ("labelled_by", judge)])
        for family, value in (
            ("ragmeter_monitor_mean", row.mean),
            ("ragmeter_monitor_low", row.low),
            ("ragmeter_monitor_high", row.high),
            ("ragmeter_monitor_sample_size", float(row.n)),
        ):
            families[family][1].append(f"{labels} {_value(value)}")
    if latest:
        families["ragmeter_monitor_window_start_seconds"][1].append(
            f"{_labels([stream])} {_value(float(latest[0].window_start))}"
        )
    for ppi in trend.latest_ppi():
        labels = _labels(
            [stream, ("measure", ppi.measure), ("labelled_by", judge), ("corrected_by", ppi.human)]
        )
        for family, value in (
            ("ragmeter_monitor_ppi_estimate", ppi.estimate),
            ("ragmeter_monitor_ppi_low", ppi.low),
            ("ragmeter_monitor_ppi_high", ppi.high),
            ("ragmeter_monitor_ppi_labelled", float(ppi.n_labelled)),
        ):
            families[family][1].append(f"{labels} {_value(value)}")


def _latency_parts(measure: str) -> tuple[str, str]:
    """``latency_ms.p95(stage=retriever)`` → (``0.95``, ``retriever``)."""
    head, _, rest = measure.partition("(stage=")
    percent = int(head.rsplit(".p", 1)[1])
    return f"{percent / 100:g}", rest[:-1]


# -- HTML -------------------------------------------------------------------------------------


def trend_html(trend: Trend, *, alpha: float = 0.05) -> str:
    """A self-contained page: per measure, the windows' means with intervals; a window whose
    change against the previous one is significant (Welch's t, p ≤ α, unadjusted) is marked."""
    from ragmeter import __version__
    from ragmeter.report.html import _CSS

    sections = [_measure_table(trend, m, alpha) for m in trend.measures()]
    title = f"ragmeter monitor: {trend.stream}"
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head>\n<body>"
        f'<header><div class="wrap"><h1>{escape(title)}</h1>'
        f'<p class="lead">Windows of {_length(trend.window_s)}; {escape(trend.labels_line())}. '
        "Means with 95% bootstrap intervals over the judged spans of each window; ▲/▼ marks "
        f"a change against the previous window with Welch's p ≤ {alpha:g}. Latencies are "
        f"quantiles over every span.{_ppi_lead(trend)}</p></div></header>\n"
        f'<main class="wrap">{"".join(sections)}</main>\n'
        f'<footer><div class="wrap">Made by ragmeter {escape(__version__)} on {generated}. '
        "Self-contained: no script, nothing fetched.</div></footer>\n</body></html>\n"
    )


def _ppi_lead(trend: Trend) -> str:
    line = trend.ppi_line()
    if not line:
        return ""
    return (
        f" {escape(line)}: the PPI columns give, where people labelled some of a window's "
        "sampled spans, the estimate of its mean under human labels."
    )


def _measure_table(trend: Trend, measure: str, alpha: float) -> str:
    rows = [r for r in trend.rows if r.measure == measure]
    with_ppi = any(m == measure for m, _ in trend.ppi)
    body = "".join(_window_row(trend, r, alpha, with_ppi) for r in rows)
    ppi_head = ""
    if with_ppi:
        level = round(100 * (1 - next(iter(trend.ppi.values())).alpha))
        ppi_head = (
            '<th class="num">labelled</th><th class="num">PPI</th>'
            f'<th class="num">PPI {level}% interval</th>'
        )
    return (
        f'<section><h2>{escape(measure)}</h2><table class="summary"><thead><tr>'
        '<th>window</th><th class="num">n</th><th class="num">mean</th>'
        f'<th class="num">95% interval</th>{ppi_head}<th>change</th></tr></thead>'
        f"<tbody>{body}</tbody></table></section>"
    )


def _ppi_cells(trend: Trend, row: Any) -> str:
    ppi = trend.ppi.get((row.measure, row.window_start))
    if ppi is None:
        return '<td class="num"></td><td class="num"></td><td class="num"></td>'
    estimate = "none" if math.isnan(ppi.estimate) else _num(ppi.estimate)
    # a stored estimate without an interval: too few labelled spans, or no variance estimate
    # (constant human labels); the row keeps no endpoints rather than a [x, x] interval
    missing = "no interval" if not math.isnan(ppi.estimate) and math.isnan(ppi.low) else ""
    return (
        f'<td class="num">{ppi.n_labelled}</td>'
        f'<td class="num"><span class="ppi">{estimate}</span></td>'
        f'<td class="num">{escape(_interval(ppi.low, ppi.high) or missing)}</td>'
    )


def _window_row(trend: Trend, row: Any, alpha: float, with_ppi: bool = False) -> str:
    change = trend.changes.get((row.measure, row.window_start))
    mark, css = "", ""
    if change is not None:
        sig = change.significant(alpha)
        arrow = ("▲" if change.difference > 0 else "▼") if sig else ""
        css = (" worse" if change.difference < 0 else " better") if sig else ""
        p = "NA" if math.isnan(change.p_value) else f"{change.p_value:.4f}"
        mark = f"{arrow} {change.difference:+.4f} (p {p})"
    return (
        f"<tr><th>{escape(_label(row.window_start, trend.window_s))}</th>"
        f'<td class="num">{row.n}</td><td class="num{css}"><span class="mean">'
        f"{_num(row.mean)}</span></td>"
        f'<td class="num">{escape(_interval(row.low, row.high))}</td>'
        f"{_ppi_cells(trend, row) if with_ppi else ''}"
        f"<td>{escape(mark)}</td></tr>"
    )


def print_ppi(result: Any, *, file: object = None) -> None:
    """Per measure, each window's LLM-label mean beside its prediction-powered estimate and
    interval (one table per measure, fitted to the width by
    :func:`ragmeter.report.tables.fit`), then why a window has no interval."""
    from rich import box
    from rich.table import Table

    from ragmeter.report.tables import fit, table_console

    console = table_console(file)
    judge = result.judge.describe() if result.judge is not None else "unknown"
    level = round(100 * (1 - result.alpha))
    notes: list[str] = []
    for measure in dict.fromkeys(w.measure for w in result.windows):
        table = Table(
            title=f"ragmeter monitor ppi: {result.stream}, {measure}",
            title_justify="left",
            box=box.SIMPLE_HEAD,
        )
        for header in ("window", "human", "LLM only", "LLM mean", "PPI", f"{level}% CI", "λ"):
            table.add_column(header, justify="left" if header == "window" else "right")
        for w in (w for w in result.windows if w.measure == measure):
            e = w.estimate
            window = _label(w.window_start, result.window_s)
            table.add_row(
                window,
                str(w.n_labelled),
                str(w.n_unlabelled),
                _num(w.llm_mean),
                "none" if e is None else _num(e.estimate),
                "" if e is None else "no interval" if e.ci is None else _interval(*e.ci),
                "" if e is None else f"{e.lam:.2f}",
            )
            if e is not None and e.note is not None:
                notes.append(f"{window} {measure}: {e.note}")
            if e is not None and e.weak_judge is not None:
                notes.append(f"{window} {measure}: {e.weak_judge}")
        console.print(fit(table))
    for note in notes:
        console.print(note, style="dim", highlight=False)
    console.print(
        f"The stream's labels ({judge}) corrected by {result.human}: PPI++, power-tuned λ, "
        f"{level}% normal intervals; human: spans whose judged passages people labelled "
        "(they should be a uniform sample of the window's).",
        highlight=False,
    )
