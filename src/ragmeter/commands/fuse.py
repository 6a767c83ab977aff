"""``ragmeter fuse``: fuse runs (CombSUM, CombMNZ, weighted sum, RRF) and write the fused run.

``ragmeter fuse RUN RUN... --method combsum|combmnz|wsum|rrf --norm min-max|z-score|sum|none
[--weights 0.3,0.7] [--rrf-k 60] [--depth N] -o fused.txt``

``--qrels Q --tune ndcg@10 [--split 0.5 --seed 0 | --train-queries FILE [--test-queries
FILE]] [--step 0.1] [--rrf-ks 10,20,...] [--show-grid]`` grid-searches the weights (wsum, the
default with ``--tune``) or RRF's k on the training queries, prints the chosen point with its
training and held-out scores, and writes the runs fused with it.

The definitions are in :mod:`ragmeter.pipeline.fusion` and
:mod:`ragmeter.pipeline.fusion_tuning`; the run is written atomically in the format its
extension names (TREC by default).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragmeter.commands.options import RunFiles, Seed, fail
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.core.data import Run
    from ragmeter.pipeline.fusion_tuning import FusionTuning


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
        FuseMethod | None,
        typer.Option("--method", help="combsum (default), combmnz, wsum or rrf; --tune: wsum."),
    ] = None,
    norm: Annotated[
        FuseNorm,
        typer.Option("--norm", help="Per-query score normalisation: min-max, z-score, sum, none."),
    ] = FuseNorm.min_max,
    weights: Annotated[
        str | None,
        typer.Option("--weights", help="wsum: one weight per run, comma-separated (0.3,0.7)."),
    ] = None,
    rrf_k: Annotated[
        int | None, typer.Option("--rrf-k", min=0, help="RRF constant k (default 60).")
    ] = None,
    depth: Annotated[
        int | None, typer.Option("--depth", min=1, help="Keep the top N of each query.")
    ] = None,
    tag: Annotated[str, typer.Option("--tag", help="Run tag of the fused run.")] = "fused",
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="Relevance judgments (for --tune).")
    ] = None,
    tune: Annotated[
        str | None,
        typer.Option("--tune", help="Grid-search wsum weights or RRF's k on this measure."),
    ] = None,
    split: Annotated[
        float | None,
        typer.Option("--split", help="--tune: train on this fraction of the queries, drawn."),
    ] = None,
    seed: Seed = 0,
    train_queries: Annotated[
        Path | None,
        typer.Option("--train-queries", help="--tune: training query ids, one per line."),
    ] = None,
    test_queries: Annotated[
        Path | None,
        typer.Option(
            "--test-queries", help="--tune: held-out query ids (default: the other queries)."
        ),
    ] = None,
    step: Annotated[float, typer.Option("--step", help="--tune: spacing of the weights.")] = 0.1,
    rrf_ks: Annotated[
        str, typer.Option("--rrf-ks", help="--tune rrf: the k grid, comma-separated.")
    ] = "10,20,30,40,50,60,70,80,90,100",
    show_grid: Annotated[
        bool, typer.Option("--show-grid", help="--tune: print every grid point's scores.")
    ] = False,
) -> None:
    """Fuse two runs or more (CombSUM, CombMNZ, weighted sum, RRF) into one run; with
    --tune, choose wsum's weights or RRF's k on training queries first."""
    from ragmeter.io.readers import read_run, write_run
    from ragmeter.pipeline.fusion import RRF_K, fuse

    try:
        read = [read_run(p) for p in runs]
        if tune is not None:
            tuning = _tune(
                read,
                method=method,
                norm=norm,
                metric=tune,
                qrels=qrels,
                weights=weights,
                rrf_k=rrf_k,
                rrf_ks=rrf_ks,
                step=step,
                split=split,
                seed=seed,
                train_queries=train_queries,
                test_queries=test_queries,
                depth=depth,
                name=tag,
            )
            fused = tuning.run
        else:
            if qrels is not None:
                raise RagmeterError("--qrels is for --tune")
            fused = fuse(
                read,
                method=(method or FuseMethod.combsum).value,  # type: ignore[arg-type]
                norm=norm.value,  # type: ignore[arg-type]
                weights=_numbers(weights, "--weights", float),
                k=RRF_K if rrf_k is None else rrf_k,
                depth=depth,
                name=tag,
            )
        write_run(fused, out)
    except RagmeterError as exc:
        fail(exc)
    if tune is not None:
        _print_tuning(tuning, [p.name for p in runs], show_grid)
    typer.echo(f"{fused.name}: {len(fused)} lines for {fused.n_queries} queries -> {out}", err=True)


def _tune(
    runs: list[Run],
    *,
    method: FuseMethod | None,
    norm: FuseNorm,
    metric: str,
    qrels: Path | None,
    weights: str | None,
    rrf_k: int | None,
    rrf_ks: str,
    step: float,
    split: float | None,
    seed: int,
    train_queries: Path | None,
    test_queries: Path | None,
    depth: int | None,
    name: str,
) -> FusionTuning:
    """Check the options of ``--tune`` and tune; the same-queries warning is left to the
    result (printed once)."""
    import warnings

    from ragmeter.io.query_ids import read_query_ids
    from ragmeter.io.readers import read_qrels
    from ragmeter.pipeline.fusion_tuning import FusionTuningWarning, tune_fusion

    chosen = method or FuseMethod.wsum
    if chosen not in (FuseMethod.wsum, FuseMethod.rrf):
        raise RagmeterError(f"--tune chooses wsum's weights or rrf's k, not {chosen.value}'s")
    if qrels is None:
        raise RagmeterError("--tune needs --qrels")
    if weights is not None or rrf_k is not None:
        raise RagmeterError("--tune chooses the weights and k; leave out --weights and --rrf-k")
    labels = read_qrels(qrels)
    train = read_query_ids(train_queries) if train_queries else None
    test = read_query_ids(test_queries) if test_queries else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionTuningWarning)
        return tune_fusion(
            runs,
            labels,
            method=chosen.value,  # type: ignore[arg-type]
            norm=norm.value,  # type: ignore[arg-type]
            metric=metric,
            step=step,
            ks=_numbers(rrf_ks, "--rrf-ks", int) or [],
            split=split,
            seed=seed,
            train_queries=train,
            test_queries=test,
            depth=depth,
            name=name,
        )


def _print_tuning(tuning: FusionTuning, names: list[str], show_grid: bool) -> None:
    for w in tuning.warnings:
        typer.echo(f"warning: {w}", err=True)
    what = "weights" if tuning.weights is not None else "k"
    norm = f" ({tuning.norm})" if tuning.method == "wsum" else ""
    typer.echo(
        f"tuned {tuning.method}{norm} on {tuning.metric} over {len(tuning.trials)} grid points: "
        f"{what} {tuning.label.removeprefix('k=')}"
    )
    if tuning.weights is not None:
        for run_name, weight in zip(names, tuning.weights, strict=True):
            typer.echo(f"  {weight:g}  {run_name}")
    for part, score, queries in (
        ("training", tuning.train_score, tuning.train_queries),
        ("held-out", tuning.test_score, tuning.test_queries),
    ):
        typer.echo(f"{part} {tuning.metric} {_f(score).strip()}  ({len(queries)} queries)")
    if show_grid:
        typer.echo(f"{what:<24} {'training':>9} {'held-out':>9}")
        for row in tuning.table():
            mark = "  <- chosen" if row["chosen"] else ""
            typer.echo(f"{row['params']!s:<24} {_f(row['train'])} {_f(row['test'])}{mark}")


def _f(value: object) -> str:
    return f"{value:9.4f}" if isinstance(value, float) else f"{'NA':>9}"


def _numbers(text: str | None, option: str, kind: type) -> list | None:  # type: ignore[type-arg]
    if text is None:
        return None
    try:
        return [kind(w) for w in text.split(",")]
    except ValueError:
        raise RagmeterError(f"{option} {text!r}: expected numbers separated by commas") from None


def register(app: typer.Typer) -> None:
    """Add ``ragmeter fuse`` to the command line."""
    app.command("fuse")(fuse_command)
