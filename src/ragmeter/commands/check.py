"""``ragmeter check``: a regression gate for CI pipelines.

``ragmeter check RUN --qrels Q --baseline RUN_OR_STORED --fail-if RULE [--fail-if RULE ...]
[--test randomization|t|wilcoxon] [--alpha A] [--store URL] [--format table|json|markdown]``

A rule reads ``MEASURE drop|rise >|>= AMOUNT[%] [significant]`` (see
:mod:`ragmeter.analysis.gate`); the status is 0 when no rule is broken and 3 when one is
(2 for bad input, as every command). The work is :func:`ragmeter.workflows.check.check_files`;
the table is :mod:`ragmeter.report.gate`.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import (
    DefaultK,
    Depth,
    Missing,
    MissingPolicy,
    Output,
    PairedTest,
    Permutations,
    RelLevel,
    Seed,
    StoreUrl,
    TestChoice,
    evaluation_settings,
    fail,
)
from ragmeter.errors import RagmeterError

#: the exit status of a gate with a broken rule (docs/errors.md)
BROKEN = 3


class GateFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


def check_command(
    run: Annotated[Path, typer.Argument(help="The run to gate (any format `evaluate` reads).")],
    qrels: Annotated[Path, typer.Option("--qrels", "-q", help="Relevance judgments.")],
    baseline: Annotated[
        str,
        typer.Option(
            "--baseline",
            "-b",
            help="A run file, or a saved evaluation of the store: an id, #id, a name, or REF:RUN.",
        ),
    ],
    fail_if: Annotated[
        list[str],
        typer.Option(
            "--fail-if",
            help='A rule, "MEASURE drop|rise >|>= AMOUNT[%] \\[significant]" (repeatable), '
            'e.g. "ndcg@10 drop > 0.01 significant" or "recall@100 drop >= 5%".',
        ),
    ],
    test: PairedTest = TestChoice.randomization,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")
    ] = 0.05,
    permutations: Permutations = 10_000,
    seed: Seed = 0,
    missing: Missing = MissingPolicy.zero,
    rel_level: RelLevel = 1,
    depth: Depth = None,
    default_k: DefaultK = 5,
    store: StoreUrl = None,
    fmt: Annotated[GateFormat, typer.Option("--format", "-f")] = GateFormat.table,
    output: Output = None,
) -> None:
    """Fail (status 3) when a run regressed against a baseline by a --fail-if rule: a CI gate
    on retrieval measures, with a paired test and Holm's correction for significant rules."""
    from ragmeter.commands.output import emit_gate
    from ragmeter.workflows.check import CheckRequest, check_files

    request = CheckRequest(
        run=run,
        qrels=qrels,
        baseline=baseline,
        rules=fail_if,
        settings=evaluation_settings(
            missing=missing,
            rel_level=rel_level,
            depth=depth,
            default_k=default_k,
            pool=None,
            pool_depth=None,
            grade_map=None,
        ),
        store=store,
        test=test.value,  # type: ignore[arg-type]
        alpha=alpha,
        permutations=permutations,
        seed=seed,
    )
    try:
        result = check_files(request)
    except (RagmeterError, KeyError) as exc:
        fail(exc)
    emit_gate(result, fmt.value, output)
    if result.failed:
        raise typer.Exit(code=BROKEN)


def register(app: typer.Typer) -> None:
    """Add ``ragmeter check`` to the command line."""
    app.command("check")(check_command)
