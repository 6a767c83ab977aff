"""Render a :class:`~ragmeter.analysis.gate.GateResult`: terminal table, JSON, Markdown (for a
CI job's summary). Formatting only — every number comes from the result."""

from __future__ import annotations

import json
import math
from typing import Literal

from ragmeter.analysis.gate import GateResult, RuleOutcome

GateFormat = Literal["table", "json", "markdown"]
HEADERS = ("rule", "baseline", "run", "change", "threshold", "p (Holm)", "result")
#: a sequential check's columns: the change's interval and the look it fired at, not a p
SEQUENTIAL_HEADERS = (*HEADERS[:5], "interval", "fired at", "result")
#: a check re-run against one baseline (``check --sequential``): each look is judged on its own,
#: so the look it fired at is this one (said under the table)
LOOK_HEADERS = (*HEADERS[:5], "interval", "result")


def headers(result: GateResult) -> tuple[str, ...]:
    """The table's columns for this result (a sequential check shows its intervals)."""
    if result.look is not None:
        return LOOK_HEADERS
    return SEQUENTIAL_HEADERS if result.sequential else HEADERS


def _row(o: RuleOutcome, result: GateResult) -> list[str]:
    cells = _cells(o, result.sequential)
    return [*cells[:6], cells[-1]] if result.look is not None else cells


def _num(value: float) -> str:
    if math.isnan(value):
        return "NA"
    return f"{value:.4f}"


def _cells(o: RuleOutcome, sequential: bool = False) -> list[str]:
    unit = "%" if o.rule.relative else ""
    digits = 2 if o.rule.relative else 4
    change = "+∞" if math.isinf(o.change) else f"{o.change:+.{digits}f}{unit}"
    if not o.rule.significant:
        p = "—"
    elif math.isnan(o.p_adjusted):
        p = "NA"
    else:
        p = "<0.0001" if o.p_adjusted < 0.0001 else f"{o.p_adjusted:.4f}"
    head = [
        o.rule.text,
        _num(o.baseline_mean),
        _num(o.run_mean),
        f"{o.rule.direction} {change}",
        o.rule.threshold_text(),
    ]
    verdict = "FAIL" if o.broken else "pass"
    if not sequential:
        return [*head, p, verdict]
    seq = o.sequence
    if seq is None:
        return [*head, "—", "—", verdict]
    interval = f"[{seq.lower:+.{digits}f}, {seq.upper:+.{digits}f}]{unit}"
    return [*head, interval, seq.fired_at or "—", verdict]


def describe(result: GateResult) -> str:
    """The caption: the verdict, the test and what a FAIL means."""
    verdict = (
        f"FAILED: {len(result.broken)} of {len(result.outcomes)} rule(s) broken"
        if result.failed
        else f"passed: none of {len(result.outcomes)} rule(s) broken"
    )
    if result.look is not None:
        return f"{verdict}. {look_text(result)}"
    if result.sequential:
        return (
            f"{verdict}. A significant rule breaks at the first look (window) where its "
            "anytime-valid interval for the change from the baseline — read on the windows "
            "since any look — lies wholly past the threshold; α = "
            f"{result.alpha:g} is shared by the significant rules (Bonferroni), and the chance "
            "of ever a false alarm is at most α however many looks are taken. Other rules "
            "compare the last window's mean."
        )
    return (
        f"{verdict}. A rule breaks when its change passes the threshold; a significant rule "
        f"also needs the {result.test} test's p, Holm-adjusted over the significant rules, "
        f"≤ α = {result.alpha:g} in the rule's direction."
    )


def look_text(result: GateResult) -> str:
    """Where a check re-run against one baseline stands in its history (``check
    --sequential``): the look, the α it spends and what the looks have spent, and how a
    significant rule breaks (:mod:`ragmeter.analysis.sequential_gate`)."""
    look = result.look or {}
    n = look.get("look")
    again = " (a run checked before: its look read again, nothing more spent)"
    before = look.get("failed_before") or []
    failed = f" Looks that failed before: {', '.join(str(x) for x in before)}." if before else ""
    return (
        f"Look {n} of the history {look.get('history')}"
        f"{again if look.get('repeated') else ''}: its significant rules read t intervals "
        f"at α_{n} = α·6/(π²·{n}²) = {look.get('alpha_look', 0.0):.3g} (shared by them), "
        f"and looks 1–{n} have spent {look.get('alpha_spent', 0.0):.3g} of α = "
        f"{result.alpha:g}. A significant rule breaks when its interval for the change lies "
        "wholly past the threshold: the chance that a rule ever breaks at a look whose true "
        f"change is within its threshold is at most α, however many looks are taken.{failed} "
        "Other rules compare the means."
    )


def print_table(result: GateResult, *, file: object = None) -> None:
    """The rules as a rich table (FAIL in red), the verdict under it, then the warnings."""
    from rich.text import Text

    from ragmeter.report.tables import fit, table_console, titled_table

    console = table_console(file, wide=120)
    table = titled_table(
        f"ragmeter check: {result.run} against {result.baseline}", caption=describe(result)
    )
    for i, header in enumerate(headers(result)):
        table.add_column(header, justify="left" if i in (0, 3, 4) else "right", no_wrap=i != 0)
    for o in result.outcomes:
        cells: list[str | Text] = [*_row(o, result)]
        cells[-1] = Text(cells[-1], style="bold red" if o.broken else "green")  # type: ignore[arg-type]
        table.add_row(*cells)
    console.print(fit(table))
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)


def to_markdown(result: GateResult) -> str:
    lines = [
        f"**ragmeter check**: {result.run} against {result.baseline}",
        "",
        "| " + " | ".join(headers(result)) + " |",
        "|" + "---|" * len(headers(result)),
    ]
    for o in result.outcomes:
        cells = [c.replace("|", "\\|") for c in _row(o, result)]
        if o.broken:
            cells[-1] = "**FAIL**"
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", describe(result)]
    lines += [f"\nwarning: {w}" for w in result.warnings]
    return "\n".join(lines) + "\n"


def render(result: GateResult, fmt: GateFormat) -> str:
    """``json`` or ``markdown`` text (the table is printed by :func:`print_table`)."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return to_markdown(result)
    raise ValueError(f"no text rendering {fmt!r}; the table is printed by print_table")
