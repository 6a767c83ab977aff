"""How the commands print: evaluations, sweeps and comparisons to stdout or a file (written
atomically), warnings to stderr, and the line saying where ``--save`` put an evaluation."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import typer

from ragmeter.commands.options import Save, SaveName, StoreUrl, fail
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.analysis.gate import GateResult
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.allpairs import AllPairs
    from ragmeter.stats.comparison import Comparison
    from ragmeter.stats.seeds import SeedSummary
    from ragmeter.sweep import Sweep


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    trec = "trec"


class CompareFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    latex = "latex"
    html = "html"


def warn(warnings: Sequence[str]) -> None:
    """Each warning on stderr (stdout keeps the results)."""
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)


def _table(print_table: Callable[..., None], output: Path | None) -> None:
    """A rich table to the terminal, or its text to ``output``."""
    from ragmeter.io._common import atomic_write_text

    if output is None:
        print_table()
        return
    buffer = io.StringIO()
    print_table(file=buffer)
    atomic_write_text(output, buffer.getvalue())


def emit_text(text: str, output: Path | None) -> None:
    """Text to stdout, or written (atomically) to ``output``."""
    from ragmeter.io._common import atomic_write_text

    if output is not None:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)


def emit_evaluation(
    result: Evaluation,
    fmt: OutputFormat,
    *,
    per_query: bool,
    output: Path | None,
    asked: Sequence[str] | None = None,
) -> None:
    """Print or write an evaluation in the chosen format; warnings to stderr. The table says
    which of the measure names ``asked`` it prints under another name."""
    from ragmeter.report import render

    if fmt is OutputFormat.table:
        _table(
            lambda **kw: render.print_table(result, per_query=per_query, asked=asked, **kw),
            output,
        )
        return
    emit_text(render.render(result, fmt.value, per_query=per_query), output)  # type: ignore[arg-type]
    warn(result.warnings)


def emit_sweep(done: Sweep, fmt: OutputFormat, *, per_query: bool, output: Path | None) -> None:
    """A sweep: the curves table (table format), else its m@K evaluation."""
    from ragmeter.report import render

    if fmt is OutputFormat.table and not per_query:
        _table(lambda **kw: render.print_sweep(done, **kw), output)
        return
    emit_evaluation(done.evaluation, fmt, per_query=per_query, output=output)


def emit_comparison(
    comparison: Comparison,
    fmt: CompareFormat,
    output: Path | None,
    seeds: Sequence[SeedSummary] = (),
    asked: Sequence[str] | None = None,
) -> None:
    """Print or write a comparison (and the seed summaries of its groups) in the chosen
    format; warnings to stderr. The table says which of the measure names ``asked`` it
    prints under another name."""
    from ragmeter.report import allpairs
    from ragmeter.report import comparison as render
    from ragmeter.report.render import renamed_note
    from ragmeter.report.tables import table_console

    if fmt is CompareFormat.html:
        fail(RagmeterError("--format html is the all-pairs table: add --all-pairs"))
    if fmt is CompareFormat.table:

        def both(**kw: Any) -> None:
            render.print_table(comparison, **kw)
            note = renamed_note(asked)
            if note is not None:
                table_console(kw.get("file")).print(note, style="dim", highlight=False)
            if seeds:
                allpairs.print_seeds(seeds, **kw)

        _table(both, output)
        return
    emit_text(allpairs.comparison_text(comparison, fmt.value, seeds), output)
    warn([*comparison.warnings, *allpairs.seeds_left_out(fmt.value, seeds)])


def emit_all_pairs(
    table: AllPairs,
    fmt: CompareFormat,
    output: Path | None,
    seeds: Sequence[SeedSummary] = (),
) -> None:
    """Print or write an all-pairs comparison in the chosen format; warnings to stderr."""
    from ragmeter.report import allpairs as render

    if fmt is CompareFormat.table:
        _table(lambda **kw: render.print_table(table, seeds=seeds, **kw), output)
        return
    emit_text(render.render(table, fmt.value, seeds), output)  # type: ignore[arg-type]
    warn([*table.warnings, *render.seeds_left_out(fmt.value, seeds)])


def emit_gate(result: GateResult, fmt: str, output: Path | None) -> None:
    """Print or write a regression gate's result (table, json or markdown); warnings to
    stderr (the table prints them under itself)."""
    from ragmeter.report import gate as render

    if fmt == "table":
        _table(lambda **kw: render.print_table(result, **kw), output)
        return
    emit_text(render.render(result, fmt), output)  # type: ignore[arg-type]
    warn(result.warnings)


class _Saveable(Protocol):
    """A workflow's outcome that can be saved: its evaluation and the parameters recorded."""

    @property
    def evaluation(self) -> Evaluation: ...

    @property
    def parameters(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class SaveOptions:
    """Whether and where ``evaluate`` and ``compare`` save their evaluation: one option group
    (see :func:`~ragmeter.commands.options.option_groups`)."""

    save: Save = False
    store: StoreUrl = None
    name: SaveName = None

    def save_and_tell(
        self, outcome: _Saveable, command: str, qrels: Path | None, runs: Sequence[Path]
    ) -> None:
        """Save the outcome's evaluation and say where on stderr (stdout keeps the results);
        a store that cannot be written exits 2."""
        from ragmeter.workflows.saving import save_files_evaluation

        try:
            saved = save_files_evaluation(
                outcome.evaluation, store=self.store, name=self.name, command=command,
                parameters=outcome.parameters, qrels=qrels, runs=runs,
            )  # fmt: skip
        except (RagmeterError, OSError) as exc:
            fail(exc)
        label = f"#{saved.id} {self.name!r}" if self.name else f"#{saved.id}"
        typer.echo(f"saved evaluation {label} to {saved.url}", err=True)
