"""``ragmeter monitor``: production traces sampled per time window, judged, stored as trends
and checked for drift. The logic is :mod:`ragmeter.workflows.monitor`."""

from __future__ import annotations

import typer

monitor_app = typer.Typer(
    name="monitor",
    help="Watch a RAG system in production: judged samples of its traces per time window.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(monitor_app, name="monitor")
