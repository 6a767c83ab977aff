"""A monitored measure's trend as an inline SVG chart: the windows' means joined by a line
over their interval band, the baseline drawn across, alarms marked. Server-side text, no
script and nothing fetched (the trend page of ``ragmeter serve`` and ``monitor report``).

Formatting only: every number is given (the stored window figures and the changes of
:class:`ragmeter.workflows.monitor.Trend`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

#: the chart's size in SVG units (it scales to the page's width, keeping its proportions)
WIDTH, HEIGHT = 760, 220
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 44, 16, 40


@dataclass(frozen=True)
class Point:
    """One window of the chart: its label, mean and interval (NaN: none), its sample size
    and its alarm (``"worse"``, ``"better"`` or ``""``), with the text of its tooltip."""

    label: str
    mean: float
    low: float
    high: float
    n: int
    alarm: str = ""
    note: str = ""


def _nice_step(span: float) -> float:
    """A round step (1, 2 or 5 × 10^k) giving about four gridlines over ``span``."""
    raw = span / 4
    power = 10.0 ** math.floor(math.log10(raw))
    return next(float(m * power) for m in (1, 2, 5, 10) if m * power >= raw)


def _y_range(points: Sequence[Point], baseline: float) -> tuple[float, float]:
    values = [v for p in points for v in (p.mean, p.low, p.high) if not math.isnan(v)]
    if not math.isnan(baseline):
        values.append(baseline)
    low, high = min(values), max(values)
    pad = (high - low) * 0.08 or max(abs(high) * 0.05, 0.05)
    return low - pad, high + pad


def _runs(indices: Sequence[int]) -> list[list[int]]:
    """Consecutive runs of ``indices`` (a line breaks where a window has no value)."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def trend_svg(points: Sequence[Point], *, baseline: float, baseline_label: str, title: str) -> str:
    """The chart of ``points`` (one per window, in time order); ``baseline`` (NaN: none) is
    drawn as a dashed line named ``baseline_label``. Empty when no window has a mean."""
    defined = [i for i, p in enumerate(points) if not math.isnan(p.mean)]
    if not defined:
        return ""
    y0, y1 = _y_range(points, baseline)
    inner_w, inner_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
    step_x = inner_w / max(len(points) - 1, 1)

    def x(i: int) -> float:
        return _LEFT + (i * step_x if len(points) > 1 else inner_w / 2)

    def y(v: float) -> float:
        return _TOP + inner_h * (1 - (v - y0) / (y1 - y0))

    parts = [
        f'<svg class="trend" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        *_grid(y0, y1, y, inner_w),
        *_x_labels(points, x),
    ]
    with_band = [i for i in defined if not math.isnan(points[i].low)]
    for run in _runs(with_band):
        upper = " ".join(f"{x(i):.1f},{y(points[i].high):.1f}" for i in run)
        lower = " ".join(f"{x(i):.1f},{y(points[i].low):.1f}" for i in reversed(run))
        parts.append(f'<polygon class="band" points="{upper} {lower}"/>')
    if not math.isnan(baseline):
        yb = y(baseline)
        parts.append(
            f'<line class="baseline" x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{yb:.1f}" '
            f'y2="{yb:.1f}"/><text class="baseline-label" x="{WIDTH - _RIGHT - 4}" '
            f'y="{yb - 5:.1f}" text-anchor="end">{escape(baseline_label)}</text>'
        )
    for run in _runs(defined):
        line = " ".join(f"{x(i):.1f},{y(points[i].mean):.1f}" for i in run)
        parts.append(f'<polyline class="mean" points="{line}"/>')
    for i in defined:
        parts.append(_dot(points[i], x(i), y(points[i].mean)))
    parts.append("</svg>")
    return "".join(parts)


def _grid(y0: float, y1: float, y: Callable[[float], float], inner_w: float) -> list[str]:
    step = _nice_step(y1 - y0)
    digits = max(0, -math.floor(math.log10(step)))
    first = math.ceil(y0 / step)
    out = []
    for k in range(first, math.floor(y1 / step) + 1):
        v = k * step
        yy = y(v)
        out.append(
            f'<line class="grid" x1="{_LEFT}" x2="{_LEFT + inner_w}" y1="{yy:.1f}" '
            f'y2="{yy:.1f}"/><text class="tick" x="{_LEFT - 6}" y="{yy + 4:.1f}" '
            f'text-anchor="end">{v:.{digits}f}</text>'
        )
    return out


def _x_labels(points: Sequence[Point], x: Callable[[int], float]) -> list[str]:
    """Window labels under the axis, thinned to about eight so that they never overlap."""
    every = max(1, math.ceil(len(points) / 8))
    out = []
    for i, p in enumerate(points):
        if i % every and i != len(points) - 1:
            continue
        xx = x(i)
        out.append(
            f'<text class="tick" x="{xx:.1f}" y="{HEIGHT - _BOTTOM + 18}" '
            f'text-anchor="middle">{escape(p.label)}</text>'
        )
    return out


def _dot(p: Point, cx: float, cy: float) -> str:
    tip = f"{p.label}: mean {p.mean:.4f}"
    if not math.isnan(p.low):
        tip += f" [{p.low:.4f}, {p.high:.4f}]"
    tip += f", n={p.n}" + (f"; {p.note}" if p.note else "")
    if not p.alarm:
        return (
            f'<circle class="dot" cx="{cx:.1f}" cy="{cy:.1f}" r="3.5">'
            f"<title>{escape(tip)}</title></circle>"
        )
    arrow = "▼" if p.alarm == "worse" else "▲"
    return (
        f'<g class="alarm {p.alarm}"><circle cx="{cx:.1f}" cy="{cy:.1f}" r="6"/>'
        f'<text x="{cx:.1f}" y="{cy - 11:.1f}" text-anchor="middle">{arrow}</text>'
        f"<title>{escape(tip)}</title></g>"
    )


#: the chart's look, for the pages that embed it
TREND_CSS = """
svg.trend { width: 100%; max-width: 980px; height: auto; display: block; margin: .3rem 0 .2rem; }
svg.trend .grid { stroke: #e3e6ec; stroke-width: 1; }
svg.trend .tick { fill: #6b7385; font: 11px system-ui, sans-serif; }
svg.trend .band { fill: #2f5fd0; fill-opacity: .14; stroke: none; }
svg.trend .mean { fill: none; stroke: #2f5fd0; stroke-width: 2; }
svg.trend .dot { fill: #2f5fd0; }
svg.trend .baseline { stroke: #6b7385; stroke-width: 1.2; stroke-dasharray: 5 4; }
svg.trend .baseline-label { fill: #6b7385; font: 11px system-ui, sans-serif; }
svg.trend .alarm circle { stroke: #fff; stroke-width: 1.5; }
svg.trend .alarm.worse circle, svg.trend .alarm.worse text { fill: #b42318; }
svg.trend .alarm.better circle, svg.trend .alarm.better text { fill: #1f7a4d; }
svg.trend .alarm text { font: bold 12px system-ui, sans-serif; }
.stages { display: flex; flex-wrap: wrap; gap: 0 2rem; }
nav.measures a { margin-right: 1rem; }
.legend { color: #6b7385; font-size: .85em; margin: 0 0 .6rem; }
.legend .swatch { display: inline-block; width: 1.4em; height: .7em; vertical-align: middle;
  margin-right: .25em; }
.legend .swatch.band { background: rgba(47, 95, 208, .14); border-top: 2px solid #2f5fd0; }
.legend .swatch.baseline { border-top: 2px dashed #6b7385; height: 0; }
.legend .worse { color: #b42318; font-weight: bold; }
.legend .better { color: #1f7a4d; font-weight: bold; }
"""
