"""A rich progress bar for judge runs: done/total, rate, ETA, cache hits, unparsed, errors."""

from __future__ import annotations

from typing import Any

from ragmeter.judges.types import Judgment


class RichProgress:
    """Implements :class:`ragmeter.judges.runner.Progress` on stderr (quiet when stderr is
    not a terminal, apart from the final line rich prints)."""

    def __init__(self, description: str, *, enabled: bool = True) -> None:
        self.description = description
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None
        self.unparsed = 0
        self.errors = 0
        self.cached = 0

    def start(self, *, total: int, cached: int) -> None:
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.cached = cached
        console = Console(stderr=True)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn(
                "cached {task.fields[cached]} · unparsed {task.fields[unparsed]} · "
                "errors {task.fields[errors]}"
            ),
            console=console,
            transient=False,
            refresh_per_second=4,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            self.description,
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
    """A rate readable at every speed: ``1234``, ``56``, ``3.2``, ``0.43``."""
    if per_second >= 100:
        return f"{per_second:.0f}"
    if per_second >= 10:
        return f"{per_second:.1f}"
    return f"{per_second:.2g}"
