"""Commands of the ``ragmeter`` CLI beyond ``evaluate``: one module per command family.

Each module defines ``register(app)`` adding its typer commands; :mod:`ragmeter.cli` calls it
at start-up, so modules keep heavy imports inside the command functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

#: modules adding commands to ``app`` (see :mod:`ragmeter.commands`)
COMMAND_MODULES: tuple[str, ...] = (
    "ragmeter.commands.crux",
    "ragmeter.commands.compare",
    "ragmeter.commands.diagnose",
    "ragmeter.commands.answers",
    "ragmeter.commands.serve",
    "ragmeter.commands.retrieve",
    "ragmeter.commands.fuse",
    "ragmeter.commands.history",
    "ragmeter.commands.demo",
    "ragmeter.commands.judge",
    "ragmeter.commands.judge_nuggets",
    "ragmeter.commands.judge_erag",
    "ragmeter.commands.judge_learn",
    "ragmeter.commands.agreement",
    "ragmeter.commands.report",
    "ragmeter.commands.check",
    "ragmeter.commands.measures",
    "ragmeter.commands.sample",
    "ragmeter.commands.spans",
    "ragmeter.commands.monitor",
    "ragmeter.commands.traces",
)


def register_commands(app: typer.Typer) -> None:
    """Add every module's commands to ``app``."""
    import importlib

    from ragmeter.commands.panels import place_commands

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    place_commands(app)
