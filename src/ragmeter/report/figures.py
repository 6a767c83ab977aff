"""The charts of the HTML report, drawn by matplotlib as SVG text (the ``report`` extra:
``pip install -e ".[report]"`` in a clone).

Every function returns one ``<svg>`` element ready to inline in a page: no XML prolog, every
``id`` prefixed with the figure's key (several figures share one HTML document), text kept as
text (``svg.fonttype = none``: small files, selectable labels) and a fixed hash salt and no
date, so the same inputs give the same bytes. Figures are built on
:class:`matplotlib.figure.Figure` directly, never through pyplot: the library leaves the
user's backend and global figure list alone.

Large inputs stay small: per-query point clouds above :data:`MAX_VECTOR_POINTS` points are
rasterized (one embedded image instead of one SVG element per point), and the strip of points
over a box plot shows at most :data:`MAX_STRIP_POINTS` dots per run (evenly spaced quantiles
beyond that).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import MissingExtraError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ragmeter.analysis.diagnosis import Diagnosis
    from ragmeter.analysis.leaderboard import LeaderboardAgreement

#: Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), one per run
RUN_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
RUN_LINESTYLES = ("-", "--", ":", "-.")
RUN_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
#: colour and marker of each diagnosis category (shape as well as colour tells them apart)
CATEGORY_STYLE = {
    "fine": ("#009E73", "o"),
    "selection-limited": ("#E69F00", "s"),
    "retrieval-limited": ("#D55E00", "^"),
}
#: region shading of the quadrant chart
_REGION_FILL = {"fine": "#e6f4ef", "selection-limited": "#fdf1dc", "retrieval-limited": "#fbe6dc"}
MAX_VECTOR_POINTS = 500
MAX_STRIP_POINTS = 300
_COLUMNS = 3
_PANEL_WIDTH = 3.4  # inches
_PANEL_HEIGHT = 2.7
_RASTER_DPI = 110
_FONT_SIZE = 9.0  # points: tick labels too
_RC = {
    "svg.fonttype": "none",
    "font.size": _FONT_SIZE,
    "axes.titlesize": 10.0,
    "axes.titleweight": "bold",
    "axes.labelsize": 9.0,
    "axes.edgecolor": "#555555",
    "axes.labelcolor": "#222222",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "legend.frameon": False,
    "legend.fontsize": 8.0,
    "path.simplify": True,
}
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(xlink:href="#|href="#|url\(#)([^")]+)')


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise MissingExtraError("the HTML report", package="matplotlib", extra="report") from None
    return matplotlib


def run_colour(i: int) -> str:
    return RUN_COLOURS[i % len(RUN_COLOURS)]


def _run_style(i: int) -> dict[str, Any]:
    return {
        "color": run_colour(i),
        "linestyle": RUN_LINESTYLES[(i // len(RUN_COLOURS)) % len(RUN_LINESTYLES)],
        "marker": RUN_MARKERS[i % len(RUN_MARKERS)],
    }


@dataclass(frozen=True)
class Margins:
    """The margins of one panel in inches, around its axes: tick labels and axis label on
    the left and at the bottom, the title on top."""

    left: float = 0.5
    right: float = 0.15
    top: float = 0.32
    bottom: float = 0.5


#: inches per row of a legend under the panels
_LEGEND_ROW = 0.28
#: runs per row of a legend
_LEGEND_COLUMNS = 4


def _panels(
    panels: int,
    *,
    height: float = _PANEL_HEIGHT,
    margins: Margins = Margins(),
    legend: int = 0,
    columns: int = _COLUMNS,
) -> tuple[Figure, list[Axes]]:
    """A figure of ``panels`` axes, ``columns`` a row, each in a panel of
    :data:`_PANEL_WIDTH` × ``height`` inches less ``margins``, and a band under them for a
    legend of ``legend`` entries.

    The layout is fixed rather than matplotlib's constrained layout, which measures every
    tick label of every panel at each draw: half of the report's drawing time.
    """
    from matplotlib.figure import Figure

    cols = max(1, min(columns, panels))
    rows = max(1, math.ceil(panels / cols))
    band = _LEGEND_ROW * math.ceil(legend / _LEGEND_COLUMNS) + (0.08 if legend else 0.0)
    width, tall = _PANEL_WIDTH * cols, height * rows + band
    fig = Figure(figsize=(width, tall))
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(panels)]
    inner_width = _PANEL_WIDTH - margins.left - margins.right
    inner_height = height - margins.top - margins.bottom
    fig.subplots_adjust(
        left=margins.left / width,
        right=1 - margins.right / width,
        top=1 - margins.top / tall,
        bottom=(margins.bottom + band) / tall,
        wspace=(margins.left + margins.right) / inner_width,
        hspace=(margins.top + margins.bottom) / inner_height,
    )
    return fig, axes


def _text_inches(labels: Sequence[str], size: float) -> float:
    """Width of the widest of ``labels`` in inches, at ``size`` points in the default font."""
    from matplotlib.textpath import TextPath

    widths = [TextPath((0, 0), label, size=size).get_extents().width for label in labels]
    return max(widths, default=0.0) / 72


def to_svg(fig: Figure, key: str, label: str) -> str:
    """The figure as an inline ``<svg>`` element whose ids all start with ``key``, titled
    ``label`` (what a screen reader announces)."""
    from html import escape

    matplotlib = _matplotlib()
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": f"ragmeter-{key}", "svg.fonttype": "none"}):
        fig.savefig(
            buffer,
            format="svg",
            dpi=_RASTER_DPI,
            metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
        )
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = _ID.sub(lambda m: f'id="{key}-{m.group(1)}"', text)
    text = _REF.sub(lambda m: f"{m.group(1)}{key}-{m.group(2)}", text)
    # shrink with the page, never grow past the natural size (points → CSS pixels)
    size = re.search(r'<svg([^>]*?) width="([0-9.]+)pt" height="[^"]*"', text)
    natural = ""
    if size is not None:
        natural = f' style="max-width:{round(float(size.group(2)) * 4 / 3)}px"'
        text = text[: size.start()] + "<svg" + size.group(1) + text[size.end() :]
    head, _, body = text.partition(">")
    return f'{head} role="img" class="chart"{natural}><title>{escape(label)}</title>{body}'


def _style() -> Any:
    return _matplotlib().rc_context(_RC)


def sweep_figure(
    curves: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]],
    measures: Sequence[str],
    *,
    mark_k: int | None = None,
    key: str = "sweep",
) -> str:
    """One panel per measure: the mean at each K, one line per run.

    ``curves`` is :meth:`ragmeter.sweep.Sweep.curves` (``{run: {measure: [{"k", "mean"}]}}``);
    a K where no query is defined leaves a gap.
    """
    from matplotlib.ticker import MaxNLocator

    with _style():
        fig, axes = _panels(len(measures), legend=len(curves))
        for ax, measure in zip(axes, measures, strict=True):
            for i, (run, per_measure) in enumerate(curves.items()):
                points = per_measure[measure]
                ks = [p["k"] for p in points]
                means = [math.nan if p["mean"] is None else p["mean"] for p in points]
                style = _run_style(i)
                ax.plot(
                    ks,
                    means,
                    label=run,
                    linewidth=1.6,
                    markersize=3.5 if len(ks) <= 30 else 0,
                    **style,
                )
            if mark_k is not None:
                ax.axvline(mark_k, color="#888888", linewidth=0.8, linestyle=":")
            ax.set_title(measure)
            ax.set_xlabel("K")
            ax.set_ylim(bottom=0)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        _legend_below(fig, axes[0], len(curves))
        return to_svg(fig, key, "Mean of each measure at each cutoff K, one line per run")


def _legend_below(fig: Figure, ax: Axes, entries: int, *, markerscale: float = 1.0) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(
            handles,
            labels,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            borderaxespad=0.2,
            ncols=min(entries, _LEGEND_COLUMNS),
            markerscale=markerscale,
        )


def quadrant_figure(
    diagnoses: Sequence[Diagnosis],
    *,
    key: str = "quadrant",
) -> str:
    """PROC@K (x) against %PROC@K (y), one point per query, one panel per run.

    The thresholds split each panel into the diagnosis regions: retrieval-limited (left),
    selection-limited (bottom right) and fine (top right). A query whose PROC is 0 has no
    %PROC and sits on the x axis as a hollow marker; undefined queries are not drawn.
    """
    with _style():
        fig, axes = _panels(len(diagnoses), height=3.1, margins=Margins(left=0.68), legend=3)
        for ax, d in zip(axes, diagnoses, strict=True):
            _quadrant_panel(ax, d)
        _legend_below(fig, axes[0], 3, markerscale=1.8)
        return to_svg(fig, key, "PROC against %PROC, one point per query, one panel per run")


def _quadrant_panel(ax: Axes, d: Diagnosis) -> None:
    proc_t, pct_t = d.proc_threshold, d.pct_threshold
    points = [q for q in d.queries if q.proc is not None]
    top = max([1.05] + [q.pct_proc + 0.05 for q in points if q.pct_proc is not None])
    ax.axvspan(0, proc_t, color=_REGION_FILL["retrieval-limited"], zorder=0, linewidth=0)
    ax.axhspan(0, pct_t, xmin=proc_t / 1.05, color=_REGION_FILL["selection-limited"], zorder=0)
    ax.axhspan(pct_t, top, xmin=proc_t / 1.05, color=_REGION_FILL["fine"], zorder=0)
    ax.axvline(proc_t, color="#666666", linewidth=0.8, linestyle="--")
    ax.axhline(pct_t, color="#666666", linewidth=0.8, linestyle="--")
    many = len(points) > MAX_VECTOR_POINTS
    for category, (colour, marker) in CATEGORY_STYLE.items():
        chosen = [q for q in points if q.category == category]
        x = np.array([q.proc for q in chosen], dtype=np.float64)
        y = np.array([0.0 if q.pct_proc is None else q.pct_proc for q in chosen])
        hollow = np.array([q.pct_proc is None for q in chosen], dtype=bool)
        label = category
        ax.scatter(
            x[~hollow],
            y[~hollow],
            s=14 if many else 22,
            c=colour,
            marker=marker,
            alpha=0.55 if many else 0.8,
            linewidths=0,
            label=label,
            rasterized=many,
            zorder=3,
        )
        if hollow.any():
            ax.scatter(
                x[hollow],
                y[hollow],
                s=22,
                facecolors="none",
                edgecolors=colour,
                marker=marker,
                linewidths=0.9,
                rasterized=many,
                zorder=3,
            )
    ax.set_xlim(0, 1.05)
    ax.set_ylim(0, top)
    ax.set_xlabel(f"PROC@{d.k} (what the pool allows)")
    ax.set_ylabel(f"%PROC@{d.k} (share realized)")
    ax.set_title(_short(d.run, 40))  # a panel is 3.4 inches wide


def label_agreement_figure(
    board: LeaderboardAgreement,
    a: str,
    b: str,
    *,
    key: str = "labels",
) -> str:
    """Each run's score under label set ``a`` (x) against ``b`` (y), one panel per measure,
    with the diagonal y = x: points off it are runs the two label sets score differently,
    points that swap order across it are runs they rank differently."""
    measures = board.measures
    with _style():
        fig, axes = _panels(len(measures), height=3.1, margins=Margins(left=0.6))
        for ax, m in zip(axes, measures, strict=True):
            names = list(m.scores_a)  # the evaluation's order: a run keeps its colour
            x = np.array([m.scores_a[n] for n in names])
            y = np.array([m.scores_b[n] for n in names])
            lo = float(min(x.min(), y.min()))
            hi = float(max(x.max(), y.max()))
            pad = max(0.02, 0.05 * (hi - lo))
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="#888888", linewidth=0.8)
            for i, name in enumerate(names):
                ax.scatter([x[i]], [y[i]], s=30, zorder=3, **_point_style(i), label=name)
                ax.annotate(_short(name, 14), (x[i], y[i]), xytext=(4, 3), fontsize=7.5,
                            textcoords="offset points")  # fmt: skip
            ax.set_xlim(lo - pad, hi + pad)
            ax.set_ylim(lo - pad, hi + pad)
            ax.set_xlabel(f"{m.measure} under {_short(a)}")
            ax.set_ylabel(f"under {_short(b)}")
            ax.set_title(m.measure)
        return to_svg(fig, key, f"each run's score under {a} against {b}, per measure")


def _point_style(i: int) -> dict[str, Any]:
    style = _run_style(i)
    return {"color": style["color"], "marker": style["marker"]}


def distribution_figure(
    values: Mapping[str, Mapping[str, np.ndarray]],
    measures: Sequence[str],
    *,
    key: str = "distributions",
) -> str:
    """One panel per measure: a box per run (median, quartiles, 1.5 IQR whiskers, mean as a
    diamond) over the defined per-query values, with the values as a jittered strip (above
    :data:`MAX_STRIP_POINTS` queries, that many evenly spaced quantiles of them).

    ``values``: ``{run: {measure: per-query values (NaN = NA)}}``.
    """
    runs = list(values)
    rng = np.random.default_rng(0)  # jitter only; fixed so the file is reproducible
    with _style():
        labels = [_short(r) for r in runs]
        fig, axes = _panels(
            len(measures),
            height=max(1.4, 0.55 * len(runs) + 1.0),
            # the run names, the tick marks and their padding
            margins=Margins(left=_text_inches(labels, _FONT_SIZE) + 0.3, bottom=0.32),
        )
        for ax, measure in zip(axes, measures, strict=True):
            data = []
            for run in runs:
                column = np.asarray(values[run][measure], dtype=np.float64)
                data.append(column[~np.isnan(column)])
            positions = np.arange(len(runs), 0, -1, dtype=np.float64)
            shown = [i for i, d in enumerate(data) if d.size]
            if shown:
                box = ax.boxplot(
                    [data[i] for i in shown],
                    positions=positions[shown],
                    orientation="horizontal",
                    widths=0.55,
                    showmeans=True,
                    showfliers=False,
                    patch_artist=True,
                    medianprops={"color": "#222222", "linewidth": 1.4},
                    meanprops={
                        "marker": "D",
                        "markerfacecolor": "#ffffff",
                        "markeredgecolor": "#222222",
                        "markersize": 4,
                    },
                    whiskerprops={"color": "#555555"},
                    capprops={"color": "#555555"},
                )
                for patch, i in zip(box["boxes"], shown, strict=True):
                    patch.set_facecolor(run_colour(i))
                    patch.set_alpha(0.35)
                    patch.set_edgecolor(run_colour(i))
            for i, d in enumerate(data):
                if d.size:
                    dots = _strip(d)
                    jitter = rng.uniform(-0.18, 0.18, dots.size)
                    ax.scatter(
                        dots,
                        positions[i] + jitter,
                        rasterized=d.size > MAX_STRIP_POINTS,
                        s=7,
                        c=run_colour(i),
                        alpha=0.6,
                        linewidths=0,
                        zorder=3,
                    )
            ax.set_yticks(positions, labels=labels)
            ax.set_ylim(0.4, len(runs) + 0.6)
            ax.grid(axis="y", visible=False)
            ax.set_title(measure)
        return to_svg(fig, key, "Per-query values of each measure, one box per run")


def _strip(values: np.ndarray) -> np.ndarray:
    """The values drawn as dots: all of them, or above :data:`MAX_STRIP_POINTS` that many
    evenly spaced quantiles (observed values, so the tails stay visible at a bounded size;
    drawn as one embedded image)."""
    if values.size <= MAX_STRIP_POINTS:
        return values
    levels = np.linspace(0.0, 1.0, MAX_STRIP_POINTS)
    out: np.ndarray = np.quantile(values, levels, method="inverted_cdf")
    return out


def _short(name: str, width: int = 18) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1) :]
