"""Commands of the ``ragmeter`` CLI beyond ``evaluate``: one module per command family.

Each module defines ``register(app)`` adding its typer commands. ``ragmeter.cli.app`` has
them all (:func:`register_commands`, on first use); a command line registers only the
modules of the command it runs (:func:`register_command`, through
:func:`ragmeter.commands.process.lean_app`), so modules keep heavy imports inside the command
functions and the others are not even imported.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

#: each module adding commands to ``app``, in the order they register (a module adding to
#: another's group comes after it), and the commands it adds or adds to: a static table, so
#: that a command line imports only its command's modules (tests/test_startup.py checks it
#: against what the modules register)
COMMANDS_OF_MODULE: dict[str, tuple[str, ...]] = {
    "ragmeter.commands.crux": ("crux", "correlate"),
    "ragmeter.commands.compare": ("compare",),
    "ragmeter.commands.diagnose": ("diagnose",),
    "ragmeter.commands.answers": ("answers",),
    "ragmeter.commands.serve": ("serve",),
    "ragmeter.commands.retrieve": ("retrieve",),
    "ragmeter.commands.fuse": ("fuse",),
    "ragmeter.commands.history": ("history",),
    "ragmeter.commands.demo": ("demo",),
    "ragmeter.commands.judge": ("judge",),
    "ragmeter.commands.judge_nuggets": ("judge",),
    "ragmeter.commands.judge_erag": ("judge",),
    "ragmeter.commands.judge_learn": ("judge",),
    "ragmeter.commands.agreement": ("agreement",),
    "ragmeter.commands.report": ("report",),
    "ragmeter.commands.check": ("check",),
    "ragmeter.commands.measures": ("measures",),
    "ragmeter.commands.sample": ("sample",),
    "ragmeter.commands.spans": ("spans", "chunk"),
    "ragmeter.commands.monitor": ("monitor",),
    "ragmeter.commands.traces": ("traces",),
}

#: modules adding commands to ``app`` (see :mod:`ragmeter.commands`)
COMMAND_MODULES: tuple[str, ...] = tuple(COMMANDS_OF_MODULE)

#: the apps :func:`register_commands` completed (a second call leaves them as they are)
_COMPLETE: weakref.WeakSet[typer.Typer] = weakref.WeakSet()


def register_commands(app: typer.Typer) -> typer.Typer:
    """Add every module's commands to ``app``, once, and place them in their panels;
    returns ``app``."""
    import importlib

    from ragmeter.commands.panels import place_commands

    if app not in _COMPLETE:
        for name in COMMAND_MODULES:
            importlib.import_module(name).register(app)
        place_commands(app)
        _COMPLETE.add(app)
    return app


def register_command(app: typer.Typer, name: str) -> bool:
    """Add command ``name`` alone to ``app``, importing only the modules that register it
    (:data:`COMMANDS_OF_MODULE`); ``False`` when no module adds a command of that name."""
    import importlib

    from ragmeter.commands.panels import registered_name

    modules = [m for m, names in COMMANDS_OF_MODULE.items() if name in names]
    for module in modules:
        importlib.import_module(module).register(app)
    # a module may add others beside it (crux adds correlate): the command line runs one
    app.registered_commands = [c for c in app.registered_commands if registered_name(c) == name]
    app.registered_groups = [g for g in app.registered_groups if registered_name(g) == name]
    return bool(modules)
