"""Every command's help reads a screen at a time: at 80 columns each panel of
``ragmeter COMMAND --help`` (Inputs, Measures, Statistics…) is at most a screen long, and a
screen is 24 lines (the classic terminal's height; ``SCREEN_LINES``), borders included.
A command with many options puts each in a named panel (the plain "Options" box keeps only
--help), the panels come in one order in every command, and ``ragmeter --help`` says where
to start. (Help lines wrap only where the line is full: tests/test_first_hour.py.)"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.commands.panels import PANEL_ORDER, SCREEN_LINES

#: an 80-column terminal: rich reads COLUMNS, typer's rich help TERMINAL_WIDTH
WIDTH = {"COLUMNS": "80", "TERMINAL_WIDTH": "80"}


@functools.cache
def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env=WIDTH)
    assert result.exit_code == 0, result.output
    return str(result.output)


def _commands() -> list[tuple[list[str], Any]]:
    """Every command and subcommand with its click command: ["evaluate"], ["judge",
    "relevance"], ["monitor", "check"]… (trec-eval prints trec_eval's own help: its lines
    are checked by tests/test_first_hour.py)."""
    root: Any = typer.main.get_command(app)
    out: list[tuple[list[str], Any]] = []

    def walk(group: Any, path: list[str]) -> None:
        for name in group.list_commands(None):
            command = group.get_command(None, name)
            if name == "trec-eval" or getattr(command, "hidden", False):
                continue
            out.append(([*path, name], command))
            if getattr(command, "commands", None):
                walk(command, [*path, name])

    walk(root, [])
    return out


def _panels(text: str) -> list[tuple[str, list[str]]]:
    """(title, lines from top border to bottom border) of each panel of a rich help."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("╭"):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("╰"))
            title = re.sub(r"^╭─ (.*?) ─+╮$", r"\1", line)
            out.append((title, lines[i : end + 1]))
    return out


COMMANDS = _commands()


def test_a_screen_is_24_lines() -> None:
    assert SCREEN_LINES == 24


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_panel_fits_a_screen_at_80_columns(path: list[str], command: Any) -> None:
    text = _help(*path)
    assert all(len(line) <= 80 for line in text.splitlines()), max(text.splitlines(), key=len)
    panels = _panels(text)
    assert panels
    for title, lines in panels:
        assert len(lines) <= SCREEN_LINES, (
            f"ragmeter {' '.join(path)} --help: panel {title!r} is {len(lines)} lines"
        )


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_long_helps_put_every_option_in_a_named_panel_in_one_order(
    path: list[str], command: Any
) -> None:
    options = [p for p in command.params if p.param_type_name == "option" and not p.hidden]
    if len(options) < 8:  # a few options stay in one box (panels.place_options)
        return
    panels = _panels(_help(*path))
    plain = dict(panels).get("Options", [])
    assert [line for line in plain[1:-1] if re.match(r"│ +-", line)] == [
        next(line for line in plain if "--help" in line)
    ], f"ragmeter {' '.join(path)}: options outside a named panel"
    titles = [t for t, _ in panels if t not in ("Arguments", "Options")]
    assert all(t in PANEL_ORDER for t in titles), titles
    assert titles == sorted(titles, key=PANEL_ORDER.index), titles


def test_the_root_help_says_where_to_start() -> None:
    text = _help()
    assert "New here? Run 'ragmeter demo', then 'ragmeter evaluate" in text
    panels = _panels(text)
    assert [t for t, _ in panels][:2] == ["Options", "Start here"]
    start = "\n".join(dict(panels)["Start here"])
    for first in ("demo", "evaluate", "compare"):
        assert f"│ {first} " in start, first
    # every command is in one group, in the order the groups give
    production = "\n".join(dict(panels)["Production"])
    assert "│ monitor " in production and "│ traces " in production
    gates = "\n".join(dict(panels)["Gates and history"])
    assert gates.index("│ check ") < gates.index("│ history ") < gates.index("│ correlate ")


def test_the_panels_of_evaluate_split_its_inputs() -> None:
    titles = [t for t, _ in _panels(_help("evaluate"))]
    assert titles[:7] == [
        "Arguments",
        "Options",
        "Inputs",
        "Inputs: sub-questions and utilities",
        "Inputs: answers and nuggets",
        "Inputs: spans",
        "Inputs: traces",
    ]
    for panel in ("Measures", "Labels and their provenance", "Output", "Store", "Scale"):
        assert panel in titles, panel
