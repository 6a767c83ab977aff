"""``ragmeter diagnose``: retrieval- versus selection-limited queries (PROC × %PROC).

The logic lives in :mod:`ragmeter.analysis.diagnosis`; this module parses options and prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.labels import CalibrationFile, label_description, lines_of, tell
from ragmeter.commands.options import (
    FormatChoice,
    GradeMap,
    Pool,
    PoolDepth,
    TableOrJson,
    Worst,
    fail,
)
from ragmeter.errors import RagmeterError


def _fmt(value: float | None) -> str:
    return "NA" if value is None else f"{value:.4f}"


def register(app: typer.Typer) -> None:
    @app.command()
    def diagnose(
        run: Annotated[Path, typer.Argument(help="The run (the selection: its top K).")],
        qrels: Annotated[Path, typer.Option("--qrels", help="Graded judgments.")],
        pool: Pool = None,
        pool_depth: PoolDepth = None,
        k: Annotated[int, typer.Option("--k", help="Prompt size K.", min=1)] = 10,
        grade_map: GradeMap = None,
        proc_threshold: Annotated[
            float, typer.Option("--proc-threshold", help="PROC below this: retrieval-limited.")
        ] = 0.8,
        pct_threshold: Annotated[
            float,
            typer.Option("--pct-threshold", help="%PROC below this: selection-limited."),
        ] = 0.8,
        worst: Worst = 10,
        fmt: TableOrJson = FormatChoice.table,
        calibration: CalibrationFile = None,
    ) -> None:
        """Classify queries as retrieval-limited (low PROC), selection-limited (high PROC,
        low %PROC) or fine; list the worst queries and the grade-4/5 passages they missed."""
        from ragmeter.analysis.diagnosis import diagnose as run_diagnosis
        from ragmeter.io.readers import read_qrels, read_run

        described = label_description(qrels, calibration)
        try:
            result = run_diagnosis(
                read_run(run),
                read_qrels(qrels),
                k=k,
                pool=read_run(pool) if pool is not None else None,
                pool_depth=pool_depth,
                grade_map=grade_map,
                proc_threshold=proc_threshold,
                pct_threshold=pct_threshold,
                worst=worst,
                labels=described.to_json() if described is not None else None,
            )
        except (RagmeterError, ValueError) as exc:
            fail(exc)
        if fmt is FormatChoice.json:
            sys.stdout.write(json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n")
        else:
            _print(result)
        tell(lines_of(described))


def _print(result: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from ragmeter.analysis.diagnosis import Diagnosis
    from ragmeter.report.tables import fit

    assert isinstance(result, Diagnosis)
    console = Console()
    means = ", ".join(f"{name} {_fmt(v)}" for name, v in result.means.items())
    console.print(f"run {result.run}, K = {result.k}: {means}")
    counts = result.counts()
    console.print(
        f"retrieval-limited {counts['retrieval-limited']}, selection-limited "
        f"{counts['selection-limited']}, fine {counts['fine']}, undefined {counts['undefined']}"
    )
    matrix = result.matrix()
    grid = Table(title="PROC × %PROC (queries)", title_justify="left")
    grid.add_column("")
    grid.add_column(f"%PROC < {result.pct_threshold:g}", justify="right")
    grid.add_column(f"%PROC ≥ {result.pct_threshold:g}", justify="right")
    for row, label in (("proc_low", "<"), ("proc_high", "≥")):
        grid.add_row(
            f"PROC {label} {result.proc_threshold:g}",
            str(matrix[row]["pct_low"]),
            str(matrix[row]["pct_high"]),
        )
    console.print(fit(grid))
    if result.worst:
        table = Table(title=f"worst {len(result.worst)} queries by RA-nWG", title_justify="left")
        for col in ("query", "ra_nwg", "proc", "%proc", "category", "missed grade 5/4 (pool?)"):
            table.add_column(col)
        for q in result.worst:
            missed = ", ".join(
                f"{m.doc_id}:{m.grade}{'' if m.in_pool else ' (not in pool)'}" for m in q.missed
            )
            table.add_row(
                q.query_id, _fmt(q.ra_nwg), _fmt(q.proc), _fmt(q.pct_proc), q.category, missed
            )
        console.print(fit(table))
    for w in result.warnings:
        typer.echo(f"warning: {w}", err=True)
