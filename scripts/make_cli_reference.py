"""Write docs/cli.md, the command-line reference, from the command line itself: every command
and subcommand of ``ragmeter`` with its help text, usage, arguments and options (their values,
defaults and help), as ``ragmeter COMMAND --help`` knows them, in the panels the help groups
them in (Inputs, Measures, Statistics…). Hidden options (older spellings kept for old
scripts) are left out.

    python scripts/make_cli_reference.py            # rewrite docs/cli.md
    python scripts/make_cli_reference.py --check    # exit 1 when docs/cli.md is out of date

tests/test_cli_reference.py fails when the committed page differs from what this prints.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "cli.md"

HEADER = """# Command-line reference

Every command of `ragmeter`, with its arguments and options, as `ragmeter COMMAND --help`
prints them. This page is generated from the command line by `scripts/make_cli_reference.py`
(do not edit it by hand; a test fails when it is out of date). How to use the commands:
[getting started](getting-started.md) and the guide pages.

`ragmeter --help` lists the commands in groups, *Start here* first (`demo`, `evaluate`,
`compare`, `report`). A command with many options groups them in panels, here as in its
`--help`: inputs, measures, labels and their provenance, comparisons and statistics, output,
store, scale (and a judge's server, prompt and cache). Every panel fits a screen, 24 lines,
in an 80-column terminal.
"""


def _commands(command: Any, ctx: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """``(path, command, context)`` of ``command`` and of every visible subcommand below it,
    depth first, in the order the group lists them."""
    yield path, command, ctx
    if not hasattr(command, "list_commands"):
        return
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is None or getattr(sub, "hidden", False):
            continue
        sub_ctx = type(ctx)(sub, info_name=name, parent=ctx)
        yield from _commands(sub, sub_ctx, f"{path} {name}")


def _md(text: str) -> str:
    """Help text as Markdown prose: what Markdown would read as a link (``[-c]``), emphasis
    (``|P*|``) or an HTML tag (``tiktoken:<encoding>``) stays the text it is."""
    for char in "\\[]*":
        text = text.replace(char, f"\\{char}")
    return text.replace("<", "&lt;")


def _cell(text: str) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _default(param: Any) -> str:
    value = param.default
    if callable(value) or value is None or value is False or value == () or value == []:
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v.value if isinstance(v, enum.Enum) else v) for v in value)
    return f"`{value}`"


def _value(param: Any, ctx: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return "flag"
    metavar = param.make_metavar(ctx)
    return f"`{metavar}`" if metavar else ""


def _row(param: Any, ctx: Any) -> str:
    if param.param_type_name == "argument":
        name = f"`{param.human_readable_name.upper()}`"
        value = "required" if param.required else "optional"
        if param.nargs == -1:
            value += ", several"
    else:
        names = [*param.opts, *param.secondary_opts]
        name = ", ".join(f"`{n}`" for n in names)
        value = _value(param, ctx)
        if param.multiple:
            value += " (repeatable)"
        if param.required:
            value += ", required"
    help_text = getattr(param, "help", None) or ""
    return f"| {name} | {_cell(value)} | {_cell(_default(param))} | {_cell(_md(help_text))} |"


def _panel(param: Any) -> str:
    """The panel ``ragmeter COMMAND --help`` shows ``param`` in."""
    if param.param_type_name == "argument":
        return "Arguments"
    return getattr(param, "rich_help_panel", None) or "Options"


def _tables(command: Any, ctx: Any) -> list[str]:
    """The arguments and options as one table; for a command whose help groups its options
    in panels, one table per panel, in the help's order, each under the panel's name."""
    from ragmeter.commands.panels import panel_rank

    params = [p for p in command.params if not getattr(p, "hidden", False)]
    if not params:
        return []
    head = ["| argument / option | value | default | meaning |", "|---|---|---|---|"]
    panels = {_panel(p) for p in params} - {"Arguments", "Options"}
    if not panels:
        return [*head, *(_row(p, ctx) for p in params), ""]
    out: list[str] = []
    groups: dict[str, list[Any]] = {}
    for param in sorted(params, key=panel_rank):
        groups.setdefault(_panel(param), []).append(param)
    for panel, members in groups.items():
        kind = "argument" if panel == "Arguments" else "option"
        head = [f"| {kind} | value | default | meaning |", "|---|---|---|---|"]
        out += [f"*{panel}*", "", *head, *(_row(p, ctx) for p in members), ""]
    return out


def _command_panels(command: Any, ctx: Any) -> list[str]:
    """A group's commands as ``ragmeter --help`` groups them (Start here, Labels, Tools…), one
    line per panel; nothing for a group whose commands are in one list."""
    if not hasattr(command, "list_commands"):
        return []
    panels: dict[str, list[str]] = {}
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is None or getattr(sub, "hidden", False):
            continue
        panel = getattr(sub, "rich_help_panel", None)
        if not panel:
            return []
        panels.setdefault(panel, []).append(f"[`{name}`](#ragmeter-{name})")
    return [*(f"- *{panel}*: {', '.join(names)}" for panel, names in panels.items()), ""]


def _usage(path: str, command: Any, ctx: Any) -> str:
    """``ragmeter CMD [OPTIONS] ARG...``, with the arguments' names as the tables give them."""
    pieces = [path, "[OPTIONS]"]
    for param in command.params:
        if param.param_type_name != "argument" or getattr(param, "hidden", False):
            continue
        name = param.human_readable_name.upper() + ("..." if param.nargs == -1 else "")
        pieces.append(name if param.required else f"[{name}]")
    if hasattr(command, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    elif command.context_settings.get("allow_extra_args"):
        # trec-eval parses its own arguments, with trec_eval's getopt syntax
        pieces.append("[ARGS]...")
    return " ".join(pieces)


def _section(path: str, command: Any, ctx: Any) -> list[str]:
    level = "#" * min(4, path.count(" ") + 1)
    out = [f"#{level} `{path}`", ""]
    if command.help:
        out += [_md(command.help.replace("\b\n", "").strip()), ""]
    out += ["```text", _usage(path, command, ctx), "```", ""]
    out += _command_panels(command, ctx)
    out += _tables(command, ctx)
    if command.epilog:
        out += [_md(command.epilog.replace("\b\n", "").strip()), ""]
    return out


def render() -> str:
    """The reference page, from the command line of this checkout."""
    import typer.main

    from ragmeter.cli import app

    root = typer.main.get_command(app)
    ctx_type = type(root.make_context("ragmeter", ["--help"], resilient_parsing=True))
    ctx = ctx_type(root, info_name="ragmeter")
    lines = [HEADER]
    for path, command, sub_ctx in _commands(root, ctx, "ragmeter"):
        lines += _section(path, command, sub_ctx)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: python scripts/make_cli_reference.py")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main(sys.argv[1:]))
