"""Tables that fit the width they are printed at: the one place every rich table of ragmeter
goes through (``console.print(fit(table))``).

A rich table wider than the terminal shrinks its columns and cuts what no longer fits with
``…``: ``0.3…`` for a mean, a marker or a p-value lost, two headers cut to the same prefix.
:func:`fit` never cuts: short cells (numbers, markers, names, headers: at most
:data:`SHORT` characters) keep their whole width, long text wraps at word boundaries (at
:data:`READABLE` characters or more), and when the columns still do not fit they are dealt
into blocks printed one under the other, each repeating the key columns (the run, the
query…), the later ones titled "(continued)".

:func:`table_console` is the console the tables print on: a terminal's own width, ``COLUMNS``
when it is set, else (files and pipes) a wide page so that one table stays one block.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.table import Table

#: a column whose cells are all at most this wide never wraps (numbers, markers, names)
SHORT = 24
#: a column of longer text wraps, but not narrower than this (or its longest word)
READABLE = 30


class Fitted:
    """A rich renderable: ``table`` in as many blocks of columns as the width needs."""

    def __init__(self, table: Table, keep: Sequence[int] = (0,)) -> None:
        self.table = table
        self.keep = tuple(keep)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from fit_blocks(self.table, console, options, keep=self.keep)


def fit(table: Table, keep: Sequence[int] = (0,)) -> Fitted:
    """``table`` fitted to the width it is printed at; ``keep`` are the positions of the key
    columns that every block repeats (default: the first)."""
    return Fitted(table, keep)


def table_console(file: object = None, *, wide: int = 160) -> Console:
    """A console for tables: the terminal's width; ``COLUMNS`` when set (a width asked for is
    a width kept); files and pipes otherwise get ``wide`` columns."""
    from rich.console import Console

    console = Console(file=file) if file is not None else Console()  # type: ignore[arg-type]
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        console.width = max(console.width, wide)
    return console


def titled_table(title: str, *, caption: str | None = None) -> Table:
    """An empty report table in ragmeter's style: a bold title (and the caption, if any) on the
    left, a rule under the header, no padding at the edges."""
    from rich import box
    from rich.table import Table

    return Table(
        title=title,
        title_justify="left",
        title_style="bold",
        caption=caption,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )


def fit_blocks(
    table: Table, console: Console, options: ConsoleOptions, *, keep: Sequence[int] = (0,)
) -> list[Table]:
    """The blocks of :func:`fit`: copies of ``table`` holding some of its columns each."""
    count = len(table.columns)
    if count == 0:
        return [table]
    needs = [_need(table, i, console, options) for i in range(count)]
    keys = sorted({i for i in keep if 0 <= i < count})
    groups = _deal([i for i in range(count) if i not in keys], keys, needs, table, options)
    blocks = [_block(table, sorted([*keys, *group]), needs) for group in groups]
    for n, block in enumerate(blocks):
        if n and isinstance(table.title, str):
            block.title = f"{table.title} (continued)"
        elif n:
            block.title = None
        if n < len(blocks) - 1:
            block.caption = None
    return blocks


def _deal(
    others: list[int],
    keys: list[int],
    needs: list[tuple[int, bool]],
    table: Table,
    options: ConsoleOptions,
) -> list[list[int]]:
    """``others`` in order, in groups each as wide as fits beside the keys (at least one)."""
    if not others:
        return [[]]
    groups: list[list[int]] = [[]]
    for i in others:
        trial = sorted([*keys, *groups[-1], i])
        if groups[-1] and _width(table, trial, needs) > options.max_width:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def _width(table: Table, columns: Sequence[int], needs: list[tuple[int, bool]]) -> int:
    """Characters of ``table`` holding ``columns`` at their needed widths: cells, padding
    (none at the outer edges without ``pad_edge``) and borders, as rich lays them out."""
    _, right, _, left = table.padding
    last = len(columns) - 1
    width = 0
    for pos, i in enumerate(columns):
        width += needs[i][0]
        width += 0 if (pos == 0 and not table.pad_edge) else left
        width += 0 if (pos == last and not table.pad_edge) else right
    if table.box is not None:
        width += last + (2 if table.show_edge else 0)
    return width


def _need(table: Table, index: int, console: Console, options: ConsoleOptions) -> tuple[int, bool]:
    """``(width, short)`` of a column's content, header included: its widest cell when all its
    cells are short (or it must not wrap), else a readable wrapping width."""
    from rich.measure import Measurement

    alone = copy.copy(table)
    alone.columns = [replace(table.columns[index], _index=0)]
    alone.box = None
    alone.padding = (0, 0, 0, 0)
    alone.title = alone.caption = None
    low, high = Measurement.get(console, options.update_width(1 << 14), alone)
    short = table.columns[index].no_wrap or high <= SHORT
    return (high, True) if short else (max(low, min(high, READABLE)), False)


def _block(table: Table, columns: Iterable[int], needs: list[tuple[int, bool]]) -> Table:
    """A copy of ``table`` with ``columns`` (same rows, styles and sections); short columns
    never wrap, so rich shrinks only the long text when it must."""
    block = copy.copy(table)
    block.columns = [
        replace(
            table.columns[i],
            _index=pos,
            no_wrap=table.columns[i].no_wrap or needs[i][1],
            min_width=table.columns[i].min_width if needs[i][1] else needs[i][0],
        )
        for pos, i in enumerate(columns)
    ]
    return block
