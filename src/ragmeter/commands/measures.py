"""``ragmeter measures``: every measure family of the registry, in one table."""

from __future__ import annotations

import typer


def measures() -> None:
    """List every measure family with its cutoff, parameters and summary."""
    from rich.console import Console
    from rich.table import Table

    from ragmeter.measures import REGISTRY

    table = Table(title="ragmeter measures", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("cutoff", no_wrap=True)
    table.add_column("without @k", max_width=28)
    table.add_column("parameters", max_width=32)
    table.add_column("aliases", max_width=24)
    table.add_column("summary", ratio=1)
    for fam in sorted(REGISTRY.families(), key=lambda f: f.name):
        table.add_row(
            fam.name,
            {"none": "", "optional": "@k optional", "required": "@k"}[fam.cutoff],
            fam.default_context if fam.cutoff == "optional" else "",
            ", ".join(p.name for p in fam.params),
            ", ".join(fam.aliases),
            fam.summary + (f" (from {fam.origin})" if fam.origin else ""),
        )
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(measures)
