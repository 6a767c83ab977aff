"""``ragmeter measures``: every measure family of the registry, in one table."""

from __future__ import annotations

from typing import Any

import typer


def measures() -> None:
    """List every measure family with its cutoff, parameters and summary."""
    from rich.table import Table

    from ragmeter.measures import REGISTRY
    from ragmeter.report.tables import fit, table_console

    table = Table(title="ragmeter measures", title_justify="left", show_lines=True)
    table.add_column("name", no_wrap=True)
    table.add_column("cutoff", no_wrap=True)
    # one column of text: a family's details are lines under its summary, so that the
    # table reads at 80 columns as at 160
    table.add_column("summary")
    for fam in sorted(REGISTRY.families(), key=lambda f: f.name):
        table.add_row(
            fam.name,
            {"none": "", "optional": "@k optional", "required": "@k"}[fam.cutoff],
            "\n".join(_details(fam)),
        )
    table_console(wide=160).print(fit(table))


def _details(fam: Any) -> list[str]:
    """The summary of a family, then what it computes without @k, its parameters and aliases
    (one line each, when it has them)."""
    lines = [fam.summary + (f" (from {fam.origin})" if fam.origin else "")]
    if fam.cutoff == "optional":
        lines.append(f"without @k: {fam.default_context}")
    if fam.params:
        lines.append("parameters: " + ", ".join(p.name for p in fam.params))
    if fam.aliases:
        lines.append("aliases: " + ", ".join(fam.aliases))
    return lines


def register(app: typer.Typer) -> None:
    app.command()(measures)
