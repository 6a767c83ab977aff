"""``ragmeter fuse``: fuse runs (CombSUM, CombMNZ, weighted sum, RRF) and write the fused run.

``ragmeter fuse RUN RUN... --method combsum|combmnz|wsum|rrf --norm min-max|z-score|sum|none
[--weights 0.3,0.7] [--rrf-k 60] [--depth N] -o fused.txt``

The definitions are in :mod:`ragmeter.pipeline.fusion`; the run is written atomically in the
format its extension names (TREC by default).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import RunFiles, fail
from ragmeter.errors import RagmeterError


class FuseMethod(StrEnum):
    combsum = "combsum"
    combmnz = "combmnz"
    wsum = "wsum"
    rrf = "rrf"


class FuseNorm(StrEnum):
    min_max = "min-max"
    z_score = "z-score"
    sum = "sum"
    none = "none"


def fuse_command(
    runs: RunFiles,
    out: Annotated[Path, typer.Option("--out", "-o", help="The fused run to write.")],
    method: Annotated[
        FuseMethod, typer.Option("--method", help="combsum, combmnz, wsum or rrf.")
    ] = FuseMethod.combsum,
    norm: Annotated[
        FuseNorm,
        typer.Option("--norm", help="Per-query score normalisation: min-max, z-score, sum, none."),
    ] = FuseNorm.min_max,
    weights: Annotated[
        str | None,
        typer.Option("--weights", help="wsum: one weight per run, comma-separated (0.3,0.7)."),
    ] = None,
    rrf_k: Annotated[int, typer.Option("--rrf-k", min=0, help="RRF constant k.")] = 60,
    depth: Annotated[
        int | None, typer.Option("--depth", min=1, help="Keep the top N of each query.")
    ] = None,
    tag: Annotated[str, typer.Option("--tag", help="Run tag of the fused run.")] = "fused",
) -> None:
    """Fuse two runs or more (CombSUM, CombMNZ, weighted sum, RRF) into one run."""
    from ragmeter.io.readers import read_run, write_run
    from ragmeter.pipeline.fusion import fuse

    try:
        parsed = _weights(weights)
        fused = fuse(
            [read_run(p) for p in runs],
            method=method.value,  # type: ignore[arg-type]
            norm=norm.value,  # type: ignore[arg-type]
            weights=parsed,
            k=rrf_k,
            depth=depth,
            name=tag,
        )
        write_run(fused, out)
    except RagmeterError as exc:
        fail(exc)
    typer.echo(f"{fused.name}: {len(fused)} lines for {fused.n_queries} queries -> {out}", err=True)


def _weights(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        raise RagmeterError(f"--weights {text!r}: expected numbers separated by commas") from None


def register(app: typer.Typer) -> None:
    """Add ``ragmeter fuse`` to the command line."""
    app.command("fuse")(fuse_command)
