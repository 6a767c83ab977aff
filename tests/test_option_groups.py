"""``option_groups``: a command takes a dataclass of options whole; typer sees its fields in
the parameter's place, in their order, with their declarations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer
from typer.testing import CliRunner

from ragmeter.commands.options import option_groups


@dataclass(frozen=True)
class _Pair:
    left: Annotated[int, typer.Option("--left", help="Left.")] = 1
    right: Annotated[str, typer.Option("--right", help="Right.")] = "r"


def _app(seen: list[object]) -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    @option_groups
    def cmd(
        first: Annotated[str, typer.Argument()],
        *,
        pair: _Pair,
        last: Annotated[bool, typer.Option("--last")] = False,
    ) -> None:
        seen.append((first, pair, last))

    return app


def test_the_group_arrives_whole_with_its_defaults_and_given_values() -> None:
    seen: list[object] = []
    done = CliRunner().invoke(_app(seen), ["x", "--right", "q", "--last"])
    assert done.exit_code == 0, done.output
    assert seen == [("x", _Pair(left=1, right="q"), True)]


def test_the_fields_stand_in_the_group_parameter_s_place() -> None:
    from typer.main import get_command

    names = [p.name for p in get_command(_app([])).params]
    assert names == ["first", "left", "right", "last"]
