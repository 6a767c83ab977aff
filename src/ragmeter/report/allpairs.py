"""Render an :class:`~ragmeter.stats.allpairs.AllPairs` (and seed summaries): terminal table,
JSON, CSV, Markdown, LaTeX (booktabs) and HTML. Formatting only — every number comes from the
objects rendered.

The table is ranx's: one row per run with its letter, one column per measure; a mean carries
as superscripts the letters of the runs it is significantly better than, and the best mean of
each measure is bold.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ragmeter.report.comparison import csv_text, latex_escape, md_escape
from ragmeter.stats.allpairs import AllPairs
from ragmeter.stats.seeds import SeedSummary

if TYPE_CHECKING:
    from ragmeter.stats.comparison import Comparison

AllPairsFormat = Literal["table", "json", "csv", "markdown", "latex", "html"]

_TEST_NAMES = {
    "randomization": "randomization test",
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
}
_CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini–Hochberg",
    "none": "no correction",
}
_SUPERSCRIPTS = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ", strict=True))


def _num(value: float, digits: int = 4) -> str:
    return "NA" if math.isnan(value) else f"{value:.{digits}f}"


def describe(t: AllPairs) -> str:
    """One line saying how the letters were obtained."""
    pairs = len(t.runs) * (len(t.runs) - 1) // 2
    family = f"the {pairs} pair{'s' if pairs != 1 else ''} of each measure"
    if t.correction == "tukey":
        how = (
            f"Tukey's HSD (repeated measures: queries as blocks, two-way ANOVA error) over "
            f"{family}, on the queries every run defines"
        )
    else:
        how = _TEST_NAMES[t.test]
        if t.test == "randomization":
            how += f" ({t.permutations:,} sign flips, or all when fewer; seed {t.seed})"
        how += f", {_CORRECTION_NAMES[t.correction]} over {family}"
    return f"{how}, α = {t.alpha:g}"


def legend(t: AllPairs) -> str:
    lower = [m for m, sense in zip(t.measures, t.directions or (), strict=False) if sense < 0]
    where = f"; lower is better for {', '.join(lower)}" if lower else ""
    return (
        "Superscripts: the letters of the runs this run is significantly better than "
        f"(adjusted p ≤ {t.alpha:g}{where}); bold: the best mean of each measure."
    )


def _best(t: AllPairs, measure: str) -> set[str]:
    """The runs with the best mean on ``measure`` (by its direction; none if it has none)."""
    sense = t.directions[t.measures.index(measure)] if t.directions else 1
    means = {r: t.mean(r, measure).mean for r in t.runs}
    defined = [v for v in means.values() if not math.isnan(v)]
    if not sense or not defined:
        return set()
    top = max(defined) if sense > 0 else min(defined)
    return {r for r, v in means.items() if v == top}


def _note(t: AllPairs, run: str, measure: str) -> str:
    m = t.mean(run, measure)
    return f" (n={m.n_defined}/{m.n})" if m.n_defined != m.n else ""


def _terminal_sup(letters: str) -> str:
    return "".join(_SUPERSCRIPTS.get(ch, "^" + ch) for ch in letters)


def print_table(t: AllPairs, *, seeds: Sequence[SeedSummary] = (), file: object = None) -> None:
    """The all-pairs table as a rich table, then the seed summaries, legend and warnings."""
    from rich.text import Text

    from ragmeter.report.tables import fit, table_console, titled_table

    console = table_console(file, wide=160)
    table = titled_table("ragmeter compare: all pairs")
    table.add_column("", style="bold")
    table.add_column("run")
    for m in t.measures:
        table.add_column(m, justify="right", no_wrap=True)
    for run, letter in zip(t.runs, t.letters, strict=True):
        cells: list[str | Text] = [letter, run]
        for m in t.measures:
            best = run in _best(t, m)
            text = Text(_num(t.mean(run, m).mean), style="bold green" if best else "")
            text.append(_terminal_sup(t.superscript(run, m)))
            text.append(_note(t, run, m), style="dim")
            cells.append(text)
        table.add_row(*cells)
    console.print(fit(table, keep=(0, 1)))
    console.print(f"{describe(t)}.\n{legend(t)}", highlight=False)
    if seeds:
        console.print()
        print_seeds(seeds, console=console)
    for w in t.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)


# -- seeds ----------------------------------------------------------------------------------


def _seed_cell(s: SeedSummary) -> str:
    if math.isnan(s.mean):
        return "NA"
    if math.isnan(s.ci_low):
        return f"{_num(s.mean)} (1 seed)"
    return f"{_num(s.mean)} ± {_num((s.ci_high - s.ci_low) / 2)}"


def _seed_grid(
    seeds: Sequence[SeedSummary],
) -> tuple[list[str], list[str], dict[tuple[str, str], SeedSummary]]:
    groups = list(dict.fromkeys(s.group for s in seeds))
    measures = list(dict.fromkeys(s.measure for s in seeds))
    return groups, measures, {(s.group, s.measure): s for s in seeds}


def seeds_legend(seeds: Sequence[SeedSummary]) -> str:
    c = seeds[0].confidence if seeds else 0.95
    return (
        f"mean ± half-width of the {c * 100:g}% Student's t-interval over the seed means "
        "(each seed's mean over the queries; t on s − 1 degrees of freedom)."
    )


def print_seeds(seeds: Sequence[SeedSummary], *, console: Any = None, file: object = None) -> None:
    """The seed summaries as a rich table (one row per group, one column per measure)."""
    from ragmeter.report.tables import fit, table_console, titled_table

    if console is None:
        console = table_console(file, wide=160)
    groups, measures, cell = _seed_grid(seeds)
    table = titled_table("across seeds")
    table.add_column("group", style="bold")
    table.add_column("seeds", justify="right")
    for m in measures:
        table.add_column(m, justify="right", no_wrap=True)
    for g in groups:
        first = cell[(g, measures[0])]
        table.add_row(g, str(len(first.seeds)), *[_seed_cell(cell[(g, m)]) for m in measures])
    console.print(fit(table))
    console.print(seeds_legend(seeds), highlight=False)


def seeds_markdown(seeds: Sequence[SeedSummary]) -> str:
    groups, measures, cell = _seed_grid(seeds)
    lines = [
        "| group | seeds | " + " | ".join(measures) + " |",
        "|---|---:|" + "---:|" * len(measures),
    ]
    for g in groups:
        n = len(cell[(g, measures[0])].seeds)
        lines.append(
            f"| {g} | {n} | " + " | ".join(_seed_cell(cell[(g, m)]) for m in measures) + " |"
        )
    return "\n".join(["**across seeds**", "", *lines, "", seeds_legend(seeds)]) + "\n"


def seeds_latex(seeds: Sequence[SeedSummary]) -> str:
    groups, measures, cell = _seed_grid(seeds)
    lines = [
        r"\begin{tabular}{lr" + "r" * len(measures) + "}",
        r"\toprule",
        "group & seeds & " + " & ".join(latex_escape(m) for m in measures) + r" \\",
        r"\midrule",
    ]
    for g in groups:
        n = len(cell[(g, measures[0])].seeds)
        cells = [_seed_cell(cell[(g, m)]).replace("±", r"$\pm$") for m in measures]
        lines.append(f"{latex_escape(g)} & {n} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", "% " + seeds_legend(seeds).replace("%", r"\%")]
    return "\n".join(lines) + "\n"


def seeds_html(seeds: Sequence[SeedSummary]) -> str:
    groups, measures, cell = _seed_grid(seeds)
    head = "".join(f"<th>{html.escape(m)}</th>" for m in measures)
    rows = []
    for g in groups:
        n = len(cell[(g, measures[0])].seeds)
        tds = "".join(
            f'<td class="num">{html.escape(_seed_cell(cell[(g, m)]))}</td>' for m in measures
        )
        rows.append(f'<tr><th>{html.escape(g)}</th><td class="num">{n}</td>{tds}</tr>')
    return (
        '<table class="seeds"><caption>across seeds</caption>'
        f"<thead><tr><th>group</th><th>seeds</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>\n"
        f'<p class="note">{html.escape(seeds_legend(seeds))}</p>\n'
    )


# -- text formats ---------------------------------------------------------------------------


def to_dict(t: AllPairs, seeds: Sequence[SeedSummary] = ()) -> dict[str, Any]:
    out = t.to_dict()
    if seeds:
        out["groups"] = [s.to_dict() for s in seeds]
    return out


def to_json(t: AllPairs, seeds: Sequence[SeedSummary] = ()) -> str:
    """``AllPairs.to_dict()`` (and ``groups``: the seed summaries) as JSON; NA is ``null``."""
    return json.dumps(to_dict(t, seeds), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


CSV_COLUMNS = (
    "measure",
    "run",
    "other",
    "run_letter",
    "other_letter",
    "run_mean",
    "other_mean",
    "difference",
    "statistic",
    "p_value",
    "p_adjusted",
    "method",
    "n",
    "significant",
    "better",
    "wins",
    "ties",
    "losses",
)


def to_csv(t: AllPairs) -> str:
    """One row per pair of runs and measure; NA is empty."""
    rows = [
        [
            p.measure,
            p.run,
            p.other,
            t.letter(p.run),
            t.letter(p.other),
            t.mean(p.run, p.measure).mean,
            t.mean(p.other, p.measure).mean,
            p.difference,
            p.statistic,
            p.p_value,
            p.p_adjusted,
            p.method,
            p.n,
            p.significant,
            p.better or "",
            p.wins,
            p.ties,
            p.losses,
        ]
        for p in t.pairs
    ]
    return csv_text(CSV_COLUMNS, rows)


def to_markdown(t: AllPairs, seeds: Sequence[SeedSummary] = ()) -> str:
    """A GitHub-flavoured Markdown table (superscripts as ``<sup>``), description, legend."""
    lines = [
        f"**ragmeter compare, all pairs** — {describe(t)}",
        "",
        "| | run | " + " | ".join(md_escape(m) for m in t.measures) + " |",
        "|---|---|" + "---:|" * len(t.measures),
    ]
    for run, letter in zip(t.runs, t.letters, strict=True):
        cells = []
        for m in t.measures:
            value = _num(t.mean(run, m).mean)
            if run in _best(t, m):
                value = f"**{value}**"
            sup = t.superscript(run, m)
            cells.append(value + (f"<sup>{sup}</sup>" if sup else "") + _note(t, run, m))
        lines.append(f"| {letter} | {md_escape(run)} | " + " | ".join(cells) + " |")
    lines += ["", legend(t)]
    if seeds:
        lines += ["", seeds_markdown(seeds).rstrip("\n")]
    lines += [f"\n> warning: {w}" for w in t.warnings]
    return "\n".join(lines) + "\n"


def to_latex(t: AllPairs, seeds: Sequence[SeedSummary] = ()) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``); superscripts ``$^{bc}$``."""
    lines = [
        "% ragmeter compare, all pairs: " + describe(t).replace("%", r"\%"),
        r"% needs \usepackage{booktabs}",
        r"\begin{tabular}{ll" + "r" * len(t.measures) + "}",
        r"\toprule",
        " & run & " + " & ".join(latex_escape(m) for m in t.measures) + r" \\",
        r"\midrule",
    ]
    for run, letter in zip(t.runs, t.letters, strict=True):
        cells = []
        for m in t.measures:
            value = _num(t.mean(run, m).mean)
            if run in _best(t, m):
                value = r"\textbf{" + value + "}"
            sup = t.superscript(run, m)
            cells.append(value + (f"$^{{{sup}}}$" if sup else "") + latex_escape(_note(t, run, m)))
        lines.append(f"{letter} & {latex_escape(run)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", "% " + latex_escape(legend(t))]
    if seeds:
        lines += ["", seeds_latex(seeds).rstrip("\n")]
    return "\n".join(lines) + "\n"


def html_table(t: AllPairs) -> str:
    """The table as an HTML fragment (``<table class="allpairs">`` and its legend)."""
    head = "".join(f"<th>{html.escape(m)}</th>" for m in t.measures)
    rows = []
    for run, letter in zip(t.runs, t.letters, strict=True):
        tds = []
        for m in t.measures:
            value = html.escape(_num(t.mean(run, m).mean))
            if run in _best(t, m):
                value = f"<strong>{value}</strong>"
            sup = t.superscript(run, m)
            tds.append(
                f'<td class="num">{value}'
                + (f"<sup>{html.escape(sup)}</sup>" if sup else "")
                + html.escape(_note(t, run, m))
                + "</td>"
            )
        rows.append(f"<tr><td>{letter}</td><th>{html.escape(run)}</th>{''.join(tds)}</tr>")
    return (
        '<table class="allpairs">'
        f"<thead><tr><th></th><th>run</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>\n"
        f'<p class="note">{html.escape(describe(t))}. {html.escape(legend(t))}</p>\n'
    )


def to_html(t: AllPairs, seeds: Sequence[SeedSummary] = ()) -> str:
    """A standalone HTML page with the table (and the seed summaries)."""
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left}"
        "td.num{text-align:right;font-variant-numeric:tabular-nums}.note{color:#555}"
    )
    body = html_table(t) + (seeds_html(seeds) if seeds else "")
    # the labels' line(s) under the title, as every view of numbers on LLM labels prints them
    lines = (t.labels or {}).get("lines") or []
    caption = "".join(f'<p class="labels">labels: {html.escape(str(line))}</p>\n' for line in lines)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>ragmeter compare: all pairs</title><style>{style}</style></head>\n"
        f"<body><h1>ragmeter compare: all pairs</h1>\n{caption}{body}</body></html>\n"
    )


def render(t: AllPairs, fmt: AllPairsFormat, seeds: Sequence[SeedSummary] = ()) -> str:
    """Text of a format other than the terminal table."""
    if fmt == "json":
        return to_json(t, seeds)
    if fmt == "csv":
        return to_csv(t)
    if fmt == "markdown":
        return to_markdown(t, seeds)
    if fmt == "latex":
        return to_latex(t, seeds)
    if fmt == "html":
        return to_html(t, seeds)
    raise ValueError(f"no text rendering for format {fmt!r}")


def seeds_csv(seeds: Sequence[SeedSummary]) -> str:
    """The seed summaries as CSV, one row per group and measure; NA is empty."""
    header = ("group", "measure", "seeds", "mean", "sd", "ci_low", "ci_high", "confidence")
    rows = [
        (s.group, s.measure, len(s.seeds), s.mean, s.sd, s.ci_low, s.ci_high, s.confidence)
        for s in seeds
    ]
    return csv_text(header, rows)


#: the text formats of the seed summaries alone
_SEEDS_FORMATS: dict[str, Callable[[Sequence[SeedSummary]], str]] = {
    "markdown": seeds_markdown,
    "latex": seeds_latex,
    "html": seeds_html,
    "csv": seeds_csv,
}


def render_seeds(seeds: Sequence[SeedSummary], fmt: str) -> str:
    """The seed summaries alone in a text format (markdown, latex, html, csv)."""
    if fmt not in _SEEDS_FORMATS:
        raise ValueError(f"no text rendering of seeds for format {fmt!r}")
    return _SEEDS_FORMATS[fmt](seeds)


def seeds_left_out(fmt: str, seeds: Sequence[SeedSummary]) -> list[str]:
    """What a comparison written in ``fmt`` leaves out of ``seeds`` (said on stderr): a CSV
    holds one table, the comparison's, so the across-seeds summaries are not in it."""
    if fmt != "csv" or not seeds:
        return []
    groups = len({s.group for s in seeds})
    return [
        f"the across-seeds summaries of {groups} group(s) are not in the CSV (one table per "
        "file); --format json, markdown or latex holds them too"
    ]


def comparison_text(c: Comparison, fmt: str, seeds: Sequence[SeedSummary] = ()) -> str:
    """A baseline comparison in a text format, with the seed summaries of its groups
    (JSON: under ``groups``; Markdown and LaTeX: a second table; CSV: the comparison only,
    and :func:`seeds_left_out` says so)."""
    from ragmeter.report import comparison as render_comparison

    if fmt == "json" and seeds:
        out = c.to_dict()
        out["groups"] = [s.to_dict() for s in seeds]
        return json.dumps(out, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    text = render_comparison.render(c, fmt)  # type: ignore[arg-type]
    if seeds and fmt in ("markdown", "latex"):
        text += "\n" + render_seeds(seeds, fmt)
    return text
