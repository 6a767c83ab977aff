"""``ragmeter check``: a regression gate for CI pipelines.

``ragmeter check RUN --qrels Q --baseline RUN_OR_STORED --fail-if RULE [--fail-if RULE ...]
[--test randomization|t|wilcoxon] [--alpha A] [--store URL] [--format table|json|markdown]
[--sequential --history STORE]``

A rule reads ``MEASURE drop|rise >|>= AMOUNT[%] [significant]`` (see
:mod:`ragmeter.analysis.gate`); the status is 0 when no rule is broken and 3 when one is
(2 for bad input, as every command). ``--calibration cal.json [--min-kappa X] [--min-tau Y]``
gates the labels first: status 5 and a one-line reason when the qrels' LLM labels were made
by another judge or prompt than the calibration's, the calibration is below a threshold, or
it cannot be used (edited by hand, from a newer ragmeter). ``--sequential --history STORE``
makes the check one look of a history of checks against one fixed baseline, α spent look by
look (:mod:`ragmeter.analysis.sequential_gate`). The work is
:func:`ragmeter.workflows.check.check_files`; the table is :mod:`ragmeter.report.gate`.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragmeter.commands.labels import label_description, tell
from ragmeter.commands.options import (
    Alpha,
    DefaultK,
    Depth,
    EvaluationOptions,
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

if TYPE_CHECKING:
    from ragmeter.workflows.check import CheckRequest

#: the exit status of a gate with a broken rule (docs/errors.md)
BROKEN = 3
#: the exit status of a calibration gate that refuses the labels (docs/errors.md)
UNCALIBRATED = 5


class GateFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


def check_command(
    run: Annotated[Path, typer.Argument(help="The run to gate (any format `evaluate` reads).")],
    qrels: Annotated[Path, typer.Option("--qrels", "-q", help="Relevance judgments.")],
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            "-b",
            help="A run file, or a saved evaluation of the store: an id, #id, a name, or REF:RUN.",
        ),
    ] = None,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            help='A rule, "MEASURE drop|rise >|>= AMOUNT[%] \\[significant]" (repeatable), '
            'e.g. "ndcg@10 drop > 0.01 significant" or "recall@100 drop >= 5%".',
        ),
    ] = None,
    test: PairedTest = TestChoice.randomization,
    alpha: Alpha = 0.05,
    permutations: Permutations = 10_000,
    seed: Seed = 0,
    missing: Missing = MissingPolicy.zero,
    rel_level: RelLevel = 1,
    depth: Depth = None,
    default_k: DefaultK = 5,
    store: StoreUrl = None,
    fmt: Annotated[GateFormat, typer.Option("--format", "-f")] = GateFormat.table,
    output: Output = None,
    calibration: Annotated[
        Path | None,
        typer.Option(
            "--calibration",
            help="A judge's calibration (agreement --save-calibration); status 5 when it "
            "does not vouch for the qrels' labels.",
        ),
    ] = None,
    min_kappa: Annotated[
        float | None,
        typer.Option("--min-kappa", help="Least unweighted Cohen's κ of the calibration."),
    ] = None,
    min_tau: Annotated[
        float | None,
        typer.Option(
            "--min-tau", help="Least leaderboard Kendall τ-b of the calibration (each measure)."
        ),
    ] = None,
    sequential: Annotated[
        bool,
        typer.Option(
            "--sequential",
            help="Re-checked on every commit against one baseline: each run is the next look "
            "of --history, spending α·6/(π²s²) at look s, so P(ever a false FAIL) ≤ α.",
        ),
    ] = False,
    history: Annotated[
        str | None,
        typer.Option(
            "--history",
            help="The store (sqlite:///file.db, a file path, postgresql://…) that records "
            "the looks of --sequential.",
        ),
    ] = None,
) -> None:
    """Fail (status 3) when a run regressed against a baseline by a --fail-if rule: a CI gate
    on retrieval measures, with a paired test and Holm's correction for significant rules.

    With --calibration, fail (status 5) first when the labels are not vouched for by the
    judge's calibration; --baseline and --fail-if may then be left out."""
    from ragmeter.commands.output import emit_gate
    from ragmeter.workflows.check import CheckRequest, check_files

    if (baseline is None) != (not fail_if) or (baseline is None and calibration is None):
        fail(RagmeterError("give --baseline with --fail-if rules, or --calibration (or all)"))
    _sequential_options(sequential, history, baseline, test)
    request = CheckRequest(
        run=run,
        qrels=qrels,
        baseline=baseline or "",
        rules=fail_if or [],
        settings=evaluation_settings(
            EvaluationOptions(missing, rel_level, depth=depth, default_k=default_k)
        ),
        store=store,
        test=test.value,  # type: ignore[arg-type]
        alpha=alpha,
        permutations=permutations,
        seed=seed,
        calibration=calibration,
        min_kappa=min_kappa,
        min_tau=min_tau,
        history=history if sequential else None,
    )
    _calibration_gate(request)
    if baseline is None:
        return
    described = label_description(qrels, calibration)
    try:
        result = check_files(replace(request, described_labels=described))
    except (RagmeterError, KeyError) as exc:
        fail(exc)
    emit_gate(result, fmt.value, output)
    tell(result.label_lines)
    if result.failed:
        raise typer.Exit(code=BROKEN)


def _sequential_options(
    sequential: bool, history: str | None, baseline: str | None, test: TestChoice
) -> None:
    """--sequential and --history go together, with a baseline, and read t intervals."""
    if sequential and history is None:
        fail(
            RagmeterError(
                "--sequential needs --history STORE: the store that records each look "
                "(sqlite:///gate.db or a file path; it is made at the first look)"
            )
        )
    if history is not None and not sequential:
        fail(RagmeterError("--history records the looks of --sequential: give both"))
    if sequential and baseline is None:
        fail(RagmeterError("--sequential checks rules: give --baseline and --fail-if"))
    if sequential and test != TestChoice.randomization:
        fail(
            RagmeterError(
                f"--test {test.value}: --sequential reads each significant rule on a t "
                "interval at the look's share of α, not a test (leave --test out)"
            )
        )


def _calibration_gate(request: CheckRequest) -> None:
    """The calibration's verdict on stderr; status 5 when it refuses the labels."""
    from ragmeter.analysis.calibration import CalibrationError
    from ragmeter.workflows.check import check_calibration

    try:
        verdict = check_calibration(request)
    except CalibrationError as exc:
        typer.echo(f"ragmeter: calibration refused: {exc}", err=True)
        raise typer.Exit(code=UNCALIBRATED) from None
    except RagmeterError as exc:
        fail(exc)
    if verdict is None:
        return
    if not verdict.passed:
        typer.echo(f"ragmeter: calibration refused: {verdict.reason}", err=True)
        raise typer.Exit(code=UNCALIBRATED)
    typer.echo(verdict.reason, err=True)


def register(app: typer.Typer) -> None:
    """Add ``ragmeter check`` to the command line."""
    app.command("check")(check_command)
