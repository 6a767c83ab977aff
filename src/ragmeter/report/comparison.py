"""Render a :class:`~ragmeter.stats.comparison.Comparison`: terminal table, JSON, CSV, Markdown,
LaTeX (booktabs). Formatting only — every number comes from the Comparison."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ragmeter.report.render import format_value
from ragmeter.stats.comparison import Comparison, Difference, MetricSummary

if TYPE_CHECKING:
    from rich.text import Text

ComparisonFormat = Literal["table", "json", "csv", "markdown", "latex"]

#: marker of each verdict: ▲/▼ significant better/worse; △/▽ significant change of a measure
#: without a better direction; · not significant; blank when untestable
MARKERS = {"better": "▲", "worse": "▼", "up": "△", "down": "▽", "ns": "·", "na": ""}
_STYLES = {"better": "bold green", "worse": "bold red", "up": "yellow", "down": "yellow"}
_TEST_NAMES = {"randomization": "randomization test", "t": "paired t-test", "wilcoxon": "Wilcoxon"}
_CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini–Hochberg",
    "none": "no correction",
}
#: beside a p-value that no data on its n pairs could bring to α (see Comparison.notes)
TOO_SMALL = "†"
#: in place of an interval computed from too few values
NO_INTERVAL = "[n too small]"


def _num(value: float | None, digits: int = 4, *, count: bool = False) -> str:
    return format_value(value, digits, count=count)


def _signed(value: float, digits: int = 4, *, count: bool = False) -> str:
    return format_value(value, digits, count=count, signed=True)


def _p(value: float) -> str:
    if math.isnan(value):
        return "NA"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _defined(s: MetricSummary) -> str:
    """ " (n=45/50)" when the mean covers fewer queries than the run was evaluated on."""
    return f" (n={s.n_defined}/{s.n})" if s.n_defined != s.n else ""


def _mean_ci(s: MetricSummary, count: bool = False) -> str:
    """Mean (a count measure's sum: an integer, as ``evaluate`` prints it) and interval."""
    mean = _num(s.mean, count=count)
    if math.isnan(s.mean):
        return "NA" + _defined(s)
    if math.isnan(s.ci_low):
        return f"{mean}{_defined(s)} {NO_INTERVAL}"
    low, high = _num(s.ci_low, count=count), _num(s.ci_high, count=count)
    return f"{mean}{_defined(s)} [{low}, {high}]"


def _diff_ci(d: Difference, count: bool = False) -> str:
    if math.isnan(d.difference):
        return "NA"
    diff = _signed(d.difference, count=count)
    if math.isnan(d.ci_low):
        return f"{diff} {NO_INTERVAL}"
    return f"{diff} [{_signed(d.ci_low, count=count)}, {_signed(d.ci_high, count=count)}]"


def _p_cell(d: Difference) -> str:
    small = not math.isnan(d.p_adjusted) and not d.can_be_significant
    return _p(d.p_adjusted) + (TOO_SMALL if small else "")


def _effect(c: Comparison, d: Difference) -> str:
    value = d.rank_biserial if c.test == "wilcoxon" else d.cohens_d
    return _signed(value, 2)


@dataclass(frozen=True)
class _Row:
    measure: str
    baseline: str  # mean [CI] of the baseline, on the first row of a measure only
    run: str
    mean: str
    diff: str
    p: str
    marker: str
    verdict: str
    effect: str
    n: str
    dropped: str
    wtl: str


def _rows(c: Comparison) -> list[_Row]:
    rows = []
    for j, measure in enumerate(c.measures):
        count = bool(c.counts) and c.counts[j]
        base = _mean_ci(c.summary(c.baseline, measure), count)
        for i, run in enumerate(c.runs[1:]):
            d = c.difference(run, measure)
            rows.append(
                _Row(
                    measure=measure if i == 0 else "",
                    baseline=base if i == 0 else "",
                    run=run,
                    mean=_mean_ci(c.summary(run, measure), count),
                    diff=_diff_ci(d, count),
                    p=_p_cell(d),
                    marker=MARKERS[d.verdict],
                    verdict=d.verdict,
                    effect=_effect(c, d),
                    n=str(d.n),
                    dropped=str(d.n_dropped),
                    wtl=f"{d.wins}/{d.ties}/{d.losses}",
                )
            )
    return rows


def _headers(c: Comparison) -> list[str]:
    pct = f"{c.confidence * 100:g}%"
    p_name = "p" if c.correction == "none" else f"p ({_CORRECTION_NAMES[c.correction]})"
    effect = "r_rb" if c.test == "wilcoxon" else "d"
    return [
        "measure",
        f"{c.baseline} (baseline) [{pct} CI]",
        "run",
        f"mean [{pct} CI]",
        f"Δ [{pct} CI]",
        p_name,
        "",
        effect,
        "n",
        "dropped",
        "W/T/L",
    ]


def _cells(r: _Row) -> list[str]:
    return [
        r.measure,
        r.baseline,
        r.run,
        r.mean,
        r.diff,
        r.p,
        r.marker,
        r.effect,
        r.n,
        r.dropped,
        r.wtl,
    ]


def describe(c: Comparison) -> str:
    """One line saying how the numbers were obtained."""
    test = _TEST_NAMES[c.test]
    if c.test == "randomization":
        test += f" ({c.permutations:,} sign flips, or all when fewer)"
    if c.test == "wilcoxon":  # which null distribution each p came from
        used = sorted({d.method.partition(":")[2] for d in c.differences} - {"none", ""})
        names = {"exact": "exact null distribution", "asymptotic": "normal approximation"}
        if used:
            test += f" ({', '.join(names.get(u, u) for u in used)})"
    return (
        f"{test}, {_CORRECTION_NAMES[c.correction]} over {len(c.differences)} comparison"
        f"{'s' if len(c.differences) != 1 else ''}, α = {c.alpha:g}; "
        f"{c.confidence * 100:g}% percentile bootstrap CI ({c.bootstrap:,} resamples, "
        f"seed {c.seed})"
    )


def legend(c: Comparison) -> str:
    effect = (
        "r_rb: matched-pairs rank-biserial"
        if c.test == "wilcoxon"
        else "d: paired Cohen's d (mean Δ / sd Δ)"
    )
    text = (
        f"▲ better, ▼ worse (adjusted p ≤ {c.alpha:g}; △ ▽ a significant change of a measure "
        "with no better direction), · not significant. Δ = run − baseline over the n queries "
        f"both define; dropped: queries of either run left out (NA). {effect}. W/T/L: queries "
        f"where the run wins, ties ({_tie(c)}) or loses against the baseline."
    )
    if any(s.n_defined != s.n for s in c.summaries):
        text += " (n=k/N): the mean covers k of the run's N queries (the others are NA)."
    if any(not d.can_be_significant and not math.isnan(d.p_value) for d in c.differences):
        text += f" {TOO_SMALL}: n too small for this p to reach α, whatever the data."
    return text


def _tie(c: Comparison) -> str:
    if c.tie_tolerance == 0:
        return "equal values"
    return f"|Δ| ≤ {c.tie_tolerance:g}"


def _stacked(value: str, interval: str, style: str = "") -> Text:
    """A value over its interval (dim), for narrow terminal columns."""
    from rich.text import Text

    text = Text(value, style=style)
    if interval:
        text.append("\n" + interval, style="dim")
    return text


def _split(cell: str) -> tuple[str, str]:
    head, _, tail = cell.partition(" [")
    return head, ("[" + tail) if tail else ""


def print_table(c: Comparison, *, file: object = None) -> None:
    """The comparison as a rich table (colours in a terminal), then the legend and warnings.

    Means and differences show their interval on a second line, so the table fits about
    100 columns.
    """
    from rich.text import Text

    from ragmeter.report.tables import fit, table_console, titled_table

    console = table_console(file, wide=160)
    table = titled_table(
        f"ragmeter compare: baseline {c.baseline}", caption=f"{describe(c)}.\n{legend(c)}"
    )
    headers = _headers(c)
    headers[1] = "baseline"
    headers[3] = "mean"
    headers[4] = "Δ"
    justify = ["left", "right", "left", "right", "right", "right", "center", "right", "right"]
    for i, header in enumerate(headers):
        table.add_column(
            header,
            justify=justify[i] if i < len(justify) else "right",  # type: ignore[arg-type]
            no_wrap=True,
            style="bold" if i == 0 else ("dim" if i >= 8 else None),
        )
    several = len(c.runs) > 2
    for k, row in enumerate(_rows(c)):
        if several and row.measure and k:
            table.add_section()
        style = _STYLES.get(row.verdict, "")
        cells: list[str | Text] = [*_cells(row)]
        cells[1] = _stacked(*_split(row.baseline))
        cells[3] = _stacked(*_split(row.mean))
        cells[4] = _stacked(*_split(row.diff), style=style)
        cells[5] = Text(row.p, style=style)
        cells[6] = Text(row.marker, style=style or "dim")
        table.add_row(*cells)
    console.print(fit(table, keep=(0, 2)))  # each block names the measure and the run
    for note in c.notes:
        console.print(f"[yellow]note:[/yellow] {note}", highlight=False)
    for w in c.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)


def to_json(c: Comparison) -> str:
    """``Comparison.to_dict()`` as JSON; NA is ``null``, never NaN."""
    return json.dumps(c.to_dict(), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


CSV_COLUMNS = (
    "run",
    "baseline",
    "measure",
    "mean",
    "ci_low",
    "ci_high",
    "sd",
    "n",
    "n_defined",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
    "statistic",
    "p_value",
    "p_adjusted",
    "significant",
    "verdict",
    "cohens_d",
    "rank_biserial",
    "n_paired",
    "n_dropped",
    "method",
    "min_p",
    "can_be_significant",
    "wins",
    "ties",
    "losses",
)


def _csv_value(value: object) -> object:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The CSV text of ``header`` and ``rows``: NA (None, NaN) empty, booleans ``true`` and
    ``false``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_csv_value(v) for v in row] for row in rows)
    return buf.getvalue()


def to_csv(c: Comparison) -> str:
    """One row per run and measure (the baseline's rows have no difference); NA is empty."""
    rows = []
    for run in c.runs:
        for measure in c.measures:
            s = c.summary(run, measure)
            row: list[float | int | str | bool | None] = [
                run,
                c.baseline,
                measure,
                s.mean,
                s.ci_low,
                s.ci_high,
                s.sd,
                s.n,
                s.n_defined,
            ]
            if run == c.baseline:
                row += [None] * (len(CSV_COLUMNS) - len(row))
            else:
                d = c.difference(run, measure)
                row += [
                    d.difference,
                    d.ci_low,
                    d.ci_high,
                    d.statistic,
                    d.p_value,
                    d.p_adjusted,
                    d.significant,
                    d.verdict,
                    d.cohens_d,
                    d.rank_biserial,
                    d.n,
                    d.n_dropped,
                    d.method,
                    d.min_p,
                    d.can_be_significant,
                    d.wins,
                    d.ties,
                    d.losses,
                ]
            rows.append(row)
    return csv_text(CSV_COLUMNS, rows)


def md_escape(text: str) -> str:
    """``text`` in a Markdown table cell: its pipes escaped."""
    return text.replace("|", "\\|")


def to_markdown(c: Comparison) -> str:
    """A GitHub-flavoured Markdown table with the description and legend."""
    headers = _headers(c)
    align = ["---", "---:", "---", "---:", "---:", "---:", ":---:", "---:", "---:", "---:", "---:"]
    lines = [
        f"**ragmeter compare** — {describe(c)}",
        "",
        "| " + " | ".join(md_escape(h) for h in headers) + " |",
        "|" + "|".join(align) + "|",
    ]
    for row in _rows(c):
        cells = _cells(row)
        if row.verdict in ("better", "worse", "up", "down"):
            cells[4] = f"**{cells[4]}**"
        lines.append("| " + " | ".join(md_escape(x) for x in cells) + " |")
    lines += ["", legend(c)]
    lines += [f"\n> note: {n}" for n in c.notes]
    lines += [f"\n> warning: {w}" for w in c.warnings]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_MARKERS = {
    "▲": r"$\blacktriangle$",
    "▼": r"$\blacktriangledown$",
    "△": r"$\vartriangle$",
    "▽": r"$\triangledown$",
    "·": r"$\cdot$",
}


def latex_escape(text: str) -> str:
    """``text`` in LaTeX: its special characters escaped; α, — and − spelled as LaTeX."""
    out = "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)
    return out.replace("α", r"$\alpha$").replace("—", "---").replace("−", "-")


def _tex(text: str) -> str:
    return latex_escape(text).replace("Δ", r"$\Delta$")


def to_latex(c: Comparison) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs,amssymb}``)."""
    headers = _headers(c)
    lines = [
        "% ragmeter compare: " + describe(c).replace("%", r"\%"),
        r"% needs \usepackage{booktabs,amssymb}",
        r"\begin{tabular}{llllllcrrrr}",
        r"\toprule",
        " & ".join(_tex(h) for h in headers) + r" \\",
        r"\midrule",
    ]
    first = True
    for row in _rows(c):
        if row.measure and not first:
            lines.append(r"\addlinespace")
        first = False
        cells = [_tex(x) for x in _cells(row)]
        cells[6] = _LATEX_MARKERS.get(row.marker, "")
        if row.verdict in ("better", "worse", "up", "down"):
            cells[4] = r"\textbf{" + cells[4] + "}"
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", "% " + legend(c).replace("%", r"\%")]
    lines += ["% note: " + n.replace("%", r"\%") for n in c.notes]
    return "\n".join(lines) + "\n"


#: the text formats of a comparison (every format but the terminal table)
_FORMATS: dict[str, Callable[[Comparison], str]] = {
    "json": to_json,
    "csv": to_csv,
    "markdown": to_markdown,
    "latex": to_latex,
}


def render(c: Comparison, fmt: ComparisonFormat) -> str:
    """Text of a format other than the terminal table."""
    if fmt not in _FORMATS:
        raise ValueError(f"no text rendering for format {fmt!r}")
    return _FORMATS[fmt](c)
