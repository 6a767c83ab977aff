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
            "Prediction-powered estimate of the mean under human labels.",
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
    """A self-contained page (``ragmeter monitor report``): :func:`trend_body` with its
    style, no script, nothing fetched."""
    from ragmeter import __version__
    from ragmeter.report.html import _CSS
    from ragmeter.report.trend_svg import TREND_CSS

    title = f"ragmeter monitor: {trend.stream}"
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}{TREND_CSS}</style></head>\n<body>"
        f'<header><div class="wrap"><h1>{escape(title)}</h1></div></header>\n'
        f'<main class="wrap">{trend_body(trend, alpha=alpha)}</main>\n'
        f'<footer><div class="wrap">Made by ragmeter {escape(__version__)} on {generated}. '
        "Self-contained: no script, nothing fetched.</div></footer>\n</body></html>\n"
    )


def trend_body(trend: Trend, *, alpha: float = 0.05) -> str:
    """The trend of a stream, read as a picture: what it shows, links to each measure, then
    per judged measure a chart (the windows' means over their 95% interval band, the first
    window's mean drawn as the baseline, each significant change against the previous window
    marked ▲/▼) above its table; the latency quantiles of each stage last."""
    judged = [m for m in trend.measures() if not m.startswith("latency_ms.")]
    stages = _latency_stages(trend)
    links = [f'<a href="#{_anchor(m)}">{escape(m)}</a>' for m in judged]
    if stages:
        links.append('<a href="#latency">latency</a>')
    windows = trend.windows()
    span = (
        f"{len(windows)} window(s) of {_length(trend.window_s)}, "
        f"{_label(windows[0], trend.window_s)} to {_label(windows[-1], trend.window_s)}"
        if windows
        else "no window"
    )
    judge = f"; {escape(trend.labels_line())}" if trend.labels_line() else ""
    lead = (
        f'<p class="lead">{escape(span)}{judge}. Each chart: the mean of every window over its '
        "95% bootstrap interval, the first window's mean dashed (the baseline), a window whose "
        f"change against the previous one is significant (Welch's t, p ≤ {alpha:g}, "
        f"unadjusted) marked ▲ (rise) or ▼ (drop).{_ppi_lead(trend)}</p>"
        f'<nav class="measures">{" ".join(links)}</nav>'
    )
    sections = [_measure_section(trend, m, alpha) for m in judged]
    if stages:
        sections.append(_latency_section(trend, stages))
    return lead + "".join(sections)


def _anchor(measure: str) -> str:
    import re

    return "m-" + re.sub(r"[^A-Za-z0-9_-]", "_", measure)


def _ppi_lead(trend: Trend) -> str:
    line = trend.ppi_line()
    if not line:
        return ""
    return (
        f" {escape(line)}: the PPI columns give, where people labelled some of a window's "
        "sampled spans, the estimate of its mean under human labels."
    )


def _alarm(trend: Trend, measure: str, start: int, alpha: float) -> str:
    change = trend.changes.get((measure, start))
    if change is None or not change.significant(alpha):
        return ""
    return "worse" if change.difference < 0 else "better"


def _measure_chart(trend: Trend, rows: list[Any], alpha: float) -> str:
    from ragmeter.report.trend_svg import Point, trend_svg

    points = []
    for r in rows:
        change = trend.changes.get((r.measure, r.window_start))
        note = "" if change is None else _change_text(change, alpha)
        points.append(
            Point(
                _label(r.window_start, trend.window_s),
                r.mean,
                r.low,
                r.high,
                r.n,
                _alarm(trend, r.measure, r.window_start, alpha),
                note,
            )
        )
    first = next((p for p in points if not math.isnan(p.mean)), None)
    baseline = math.nan if first is None else first.mean
    label = "" if first is None else f"baseline {_num(baseline)} (first window, {first.label})"
    svg = trend_svg(points, baseline=baseline, baseline_label=label, title=rows[0].measure)
    if not svg:
        return '<p class="note">No window has a defined mean: nothing to draw.</p>'
    alarms = sum(1 for p in points if p.alarm)
    legend = (
        '<p class="legend"><span class="swatch band"></span>mean and 95% interval · '
        '<span class="swatch baseline"></span>baseline · '
        f'<span class="worse">▼</span>/<span class="better">▲</span> significant change '
        f"({alarms} window(s))</p>"
    )
    return f"<figure>{svg}{legend}</figure>"


def _measure_section(trend: Trend, measure: str, alpha: float) -> str:
    """The chart and the table of one judged measure; a column no window fills is left out
    (the interval without two values, the change without a previous window)."""
    rows = [r for r in trend.rows if r.measure == measure]
    with_interval = any(not math.isnan(r.low) for r in rows)
    with_change = any((measure, r.window_start) in trend.changes for r in rows)
    with_ppi = any(m == measure for m, _ in trend.ppi)
    head = '<th>window</th><th class="num">n</th><th class="num">mean</th>'
    if with_interval:
        head += '<th class="num">95% interval</th>'
    if with_ppi:
        level = round(100 * (1 - next(iter(trend.ppi.values())).alpha))
        head += (
            '<th class="num">labelled</th><th class="num">PPI</th>'
            f'<th class="num">PPI {level}% interval</th>'
        )
    if with_change:
        head += "<th>change vs previous window (Welch's p)</th>"
    body = "".join(
        _window_row(trend, r, alpha, interval=with_interval, ppi=with_ppi, change=with_change)
        for r in rows
    )
    return (
        f'<section class="measure" id="{_anchor(measure)}"><h2>{escape(measure)}</h2>'
        f"{_measure_chart(trend, rows, alpha)}"
        f'<div class="scroll"><table class="summary"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div></section>"
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


def _change_text(change: Any, alpha: float) -> str:
    sig = change.significant(alpha)
    arrow = ("▲ " if change.difference > 0 else "▼ ") if sig else ""
    p = "NA" if math.isnan(change.p_value) else f"{change.p_value:.4f}"
    return f"{arrow}{change.difference:+.4f} (p {p})"


def _window_row(
    trend: Trend, row: Any, alpha: float, *, interval: bool, ppi: bool, change: bool
) -> str:
    found = trend.changes.get((row.measure, row.window_start))
    alarm = _alarm(trend, row.measure, row.window_start, alpha)
    css = f" {alarm}" if alarm else ""
    cells = (
        f"<tr><th>{escape(_label(row.window_start, trend.window_s))}</th>"
        f'<td class="num">{row.n}</td><td class="num{css}"><span class="mean">'
        f"{_num(row.mean)}</span></td>"
    )
    if interval:
        cells += f'<td class="num">{escape(_interval(row.low, row.high))}</td>'
    if ppi:
        cells += _ppi_cells(trend, row)
    if change:
        text = "first window" if found is None else _change_text(found, alpha)
        cells += f"<td>{escape(text)}</td>"
    return cells + "</tr>"


def _latency_stages(trend: Trend) -> dict[str, list[str]]:
    """The latency measures by stage, quantiles in increasing order."""
    stages: dict[str, list[tuple[float, str]]] = {}
    for measure in trend.measures():
        if measure.startswith("latency_ms."):
            quantile, stage = _latency_parts(measure)
            stages.setdefault(stage, []).append((float(quantile), measure))
    return {stage: [m for _, m in sorted(found)] for stage, found in stages.items()}


def _latency_section(trend: Trend, stages: dict[str, list[str]]) -> str:
    """Per stage, each window's latency quantiles over every span (not the judged sample)."""
    tables = []
    for stage, measures in stages.items():
        values = {(r.measure, r.window_start): r for r in trend.rows if r.measure in measures}
        head = "".join(
            # latency_ms.p95(stage=…) → p95
            f'<th class="num">{m.partition("(")[0].rsplit(".", 1)[1]} (ms)</th>'
            for m in measures
        )
        body = []
        for start in trend.windows():
            cells = [
                _num(values[(m, start)].mean, 1) if (m, start) in values else "" for m in measures
            ]
            if any(cells):
                n = next(values[(m, start)].n for m in measures if (m, start) in values)
                body.append(
                    f"<tr><th>{escape(_label(start, trend.window_s))}</th>"
                    f'<td class="num">{n}</td>'
                    + "".join(f'<td class="num">{c}</td>' for c in cells)
                    + "</tr>"
                )
        tables.append(
            f'<div class="stage"><h3>{escape(stage)}</h3><div class="scroll">'
            '<table class="summary"><thead><tr>'
            f'<th>window</th><th class="num">spans</th>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div></div>"
        )
    return (
        '<section id="latency"><h2>Latency</h2><p class="note">Quantiles of each stage\'s '
        "duration over every span of the window, in milliseconds.</p>"
        f'<div class="stages">{"".join(tables)}</div></section>'
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
        f"The stream's labels ({judge}) corrected by {result.human}: {_ppi_method(result)}; "
        "human: spans whose judged passages people labelled (they should be a uniform sample "
        "of the window's).",
        highlight=False,
    )


def _ppi_method(result: Any) -> str:
    """The estimator and interval of a ``monitor ppi`` result."""
    made = [w.estimate for w in result.windows if w.estimate is not None]
    if not made:
        return "no window has a labelled span"
    from ragmeter.stats.ppi import ppi_method

    return ppi_method(str(made[0].estimator), result.alpha)
