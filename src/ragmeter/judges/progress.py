"""A rich progress bar for judge runs: done/total, rate, ETA, cache hits, unparsed, errors."""

from __future__ import annotations

from typing import Any

from ragmeter.judges.types import Judgment

#: the widest a progress bar's bar gets; the narrowest worth drawing
BAR_MAX, BAR_MIN = 40, 5


def fit_description(description: str, room: int) -> str:
    """``description`` in at most ``room`` characters (cut with "…")."""
    if len(description) <= room:
        return description
    return description[: max(room - 1, 0)] + "…"


def progress_columns(width: int, total: int, description: str) -> tuple[list[Any], str]:
    """The progress line's columns for a terminal ``width`` columns wide, and the
    description as it fits: every count keeps its full width (rich would otherwise squeeze
    a column to ``3…`` at 80 columns); the elapsed time (under 100 columns) and the cache
    hits (under 120) are left out, the description comes next (cut with "…" where it must
    be), and the bar takes what is left (up to 40 columns; none under 5)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Column

    def fixed(n: int, right: bool = False) -> Column:
        return Column(width=n, no_wrap=True, justify="right" if right else "left")

    digits = len(str(max(total, 1)))
    counts = "unparsed {task.fields[unparsed]} · errors {task.fields[errors]}"
    counts_width = 19 + 2 * digits
    if width >= 120:
        counts = "cached {task.fields[cached]} · " + counts
        counts_width += 9 + digits
    tail: list[Any] = [
        MofNCompleteColumn(table_column=fixed(2 * digits + 1, right=True)),
        TextColumn("{task.fields[rate]}/s", table_column=fixed(6, right=True)),
    ]
    if width >= 100:
        tail.append(TimeElapsedColumn(table_column=fixed(8, right=True)))
    tail += [
        TextColumn("ETA"),
        TimeRemainingColumn(table_column=fixed(7)),
        TextColumn(counts, table_column=fixed(counts_width)),
    ]
    used = sum(c.get_table_column().width or 3 for c in tail) + len(tail)
    room = max(width - used - 1, 8)  # the description, the bar and the space between
    shown = fit_description(description, max(room - 1 - BAR_MIN, 12))
    bar = min(BAR_MAX, room - len(shown) - 1)
    if bar < BAR_MIN:  # no room for a bar: the description takes it
        shown = fit_description(description, room)
    head: list[Any] = [TextColumn("[bold]{task.description}", table_column=fixed(len(shown)))]
    if bar >= BAR_MIN:
        head.append(BarColumn(bar_width=bar))
    return head + tail, shown


class RichProgress:
    """Implements :class:`ragmeter.judges.runner.Progress` on stderr (quiet when stderr is
    not a terminal, apart from the final line rich prints); the line fits the terminal's
    width (:func:`progress_columns`). ``console``: where to draw (default: stderr)."""

    def __init__(self, description: str, *, enabled: bool = True, console: Any = None) -> None:
        self.description = description
        self.enabled = enabled
        self.console = console
        self._progress: Any = None
        self._task: Any = None
        self.unparsed = 0
        self.errors = 0
        self.cached = 0

    def start(self, *, total: int, cached: int) -> None:
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import Progress

        self.cached = cached
        console = self.console if self.console is not None else Console(stderr=True)
        columns, shown = progress_columns(console.width, total, self.description)
        self._progress = Progress(
            *columns,
            console=console,
            transient=False,
            refresh_per_second=4,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            shown,
            total=total,
            completed=cached,
            cached=cached,
            unparsed=0,
            errors=0,
            rate="-",
        )

    def advance(self, judgment: Judgment) -> None:
        if self._progress is None:
            return
        if judgment.status == "unparsed":
            self.unparsed += 1
        elif judgment.failed:
            self.errors += 1
        task = self._progress.tasks[0]
        speed = task.speed
        self._progress.update(
            self._task,
            advance=1,
            unparsed=self.unparsed,
            errors=self.errors,
            rate=format_rate(speed) if speed else "-",
        )

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def format_rate(per_second: float) -> str:
    """A rate readable at every speed in at most four characters: ``122k``, ``1234``,
    ``56``, ``3.2``, ``0.43``."""
    if per_second >= 10_000:
        return f"{per_second / 1000:.0f}k"
    if per_second >= 100:
        return f"{per_second:.0f}"
    if per_second >= 10:
        return f"{per_second:.1f}"
    return f"{per_second:.2g}"
