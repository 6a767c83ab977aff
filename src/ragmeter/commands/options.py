"""Options shared by the ragmeter commands, defined once so that they read the same everywhere.

Each alias is an ``Annotated`` type that typer reads as the option's declaration; a command
writes ``rel_level: RelLevel = 1``.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer


class MissingPolicy(StrEnum):
    """What to do with a judged query that a run does not rank."""

    zero = "zero"
    skip = "skip"


class TestChoice(StrEnum):
    """The paired significance test."""

    randomization = "randomization"
    t = "t"
    wilcoxon = "wilcoxon"


class CorrectionChoice(StrEnum):
    """The correction for multiple comparisons."""

    holm = "holm"
    bonferroni = "bonferroni"
    none = "none"


PairedTest = Annotated[TestChoice, typer.Option("--test", help="Paired test.")]
Correction = Annotated[
    CorrectionChoice,
    typer.Option("--correction", help="Correction across all comparisons of the report."),
]
Permutations = Annotated[
    int,
    typer.Option("--permutations", min=1, help="Random sign flips of the randomization test."),
]
Bootstrap = Annotated[
    int, typer.Option("--bootstrap", min=1, help="Bootstrap resamples of the CIs.")
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the random draws.")]

Measures = Annotated[
    list[str] | None,
    typer.Option("--measure", "-m", help="Measure, e.g. ndcg@10, P_10, map (repeatable)."),
]
Missing = Annotated[
    MissingPolicy,
    typer.Option(help="Judged queries absent from a run: score as empty, or skip."),
]
RelLevel = Annotated[int, typer.Option("--rel-level", help="Relevant ⇔ grade ≥ N.")]
Depth = Annotated[
    int | None, typer.Option("--depth", help="Evaluate only the top N of each ranking.")
]
DefaultK = Annotated[int, typer.Option("--default-k", help="Cutoff for measures given without @k.")]
Pool = Annotated[
    Path | None,
    typer.Option(
        "--pool",
        help="The retriever's candidate run, for pool-based measures (proc@K, pct_proc@K); "
        "by default each run is its own pool.",
    ),
]
PoolDepth = Annotated[
    int | None, typer.Option("--pool-depth", help="Use only the top N of the pool.")
]
GradeMap = Annotated[
    str | None,
    typer.Option(
        "--grade-map",
        help="Map grades onto the 1..5 utility scale of the set-based measures, "
        "e.g. 0:1,1:3,2:4,3:5 for TREC 0..3.",
    ),
]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write here.")]
StoreUrl = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Evaluation store: sqlite:///file.db, postgresql://user@host/db or a file path "
        "(default: $RAGMETER_STORE, else ~/.local/share/ragmeter/store.db).",
    ),
]
Save = Annotated[
    bool,
    typer.Option("--save", help="Save the evaluation in the store (see ragmeter history)."),
]
SaveName = Annotated[
    str | None,
    typer.Option("--name", help="Label of the saved evaluation, e.g. 'hybrid wk47' (saves)."),
]


def evaluation_options(
    *,
    missing: MissingPolicy,
    rel_level: int,
    depth: int | None,
    default_k: int,
    pool: Path | None,
    pool_depth: int | None,
    grade_map: str | None,
) -> dict[str, Any]:
    """The keyword options of :func:`ragmeter.evaluate` that ``evaluate`` and ``compare``
    take from the same command-line options (the pool run is read here)."""
    from ragmeter.io.readers import read_run

    return {
        "missing": missing.value,
        "rel_level": rel_level,
        "depth": depth,
        "default_k": default_k,
        "pool": read_run(pool) if pool is not None else None,
        "pool_depth": pool_depth,
        "grade_map": grade_map,
    }


def fail(exc: Exception) -> NoReturn:
    """Report an input or usage error on stderr and exit with status 2."""
    typer.echo(f"ragmeter: error: {exc}", err=True)
    raise typer.Exit(code=2)
