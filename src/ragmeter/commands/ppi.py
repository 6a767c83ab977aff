"""The ``--ppi`` options of ``evaluate`` and ``compare``: human labels on a few queries
correct the LLM labels' means (prediction-powered inference). The options are parsed here;
the estimates are :mod:`ragmeter.workflows.ppi`, printed by :mod:`ragmeter.report.ppi`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.commands.output import CompareFormat, OutputFormat
    from ragmeter.stats.correction import Correction
    from ragmeter.stats.ppi import Estimator
    from ragmeter.workflows.evaluate import EvaluateRequest
    from ragmeter.workflows.ppi import PPIRequest

HumanQrels = Annotated[
    Path | None,
    typer.Option(
        "--human-qrels",
        help="Human relevance labels of some queries (with --ppi; --qrels then holds the "
        "LLM labels of every query). A pair the human did not label keeps its LLM grade.",
    ),
]
HumanJudgments = Annotated[
    Path | None,
    typer.Option(
        "--human-judgments",
        help="Human sub-question ratings of some queries (with --ppi; --judgments then "
        "holds the LLM ratings): corrects the coverage measures.",
    ),
]
HumanAssignments = Annotated[
    Path | None,
    typer.Option(
        "--human-assignments",
        help="Human nugget assignments of some queries (with --ppi; --assignments then "
        "holds the LLM's): corrects the nugget measures.",
    ),
]
PPIFlag = Annotated[
    bool,
    typer.Option(
        "--ppi",
        help="Estimate each measure's mean under human labels by prediction-powered "
        "inference (PPI++), beside the LLM-only and human-only means.",
    ),
]
PPIAlpha = Annotated[
    float | None,
    typer.Option(
        "--alpha",
        help="With --ppi: error level of the intervals (default 0.1: 90 % intervals).",
    ),
]
PPILambda = Annotated[
    float | None,
    typer.Option(
        "--ppi-lambda",
        help="With --ppi: fixed λ in [0, 1] (1: classic PPI; default: power-tuned).",
    ),
]
PPIEstimator = Annotated[
    str | None,
    typer.Option(
        "--ppi-estimator",
        help="With --ppi: how λ is chosen: crossfit (default: λ of each of 10 folds fitted "
        "on the others, Student's t interval), plusplus (power-tuned on all the labels, "
        "PPI++) or classic (λ = 1).",
    ),
]
LabelledQueries = Annotated[
    Path | None,
    typer.Option(
        "--labelled-queries",
        help="With --ppi: the human-labelled queries, one per line, each optionally with "
        "its inclusion probability (stratified or active sampling). Default: every query "
        "of the human labels.",
    ),
]


def ppi_request(
    ppi: bool,
    human_qrels: Path | None,
    alpha: float | None,
    lam: float | None,
    labelled_queries: Path | None,
    others: Mapping[str, object] | None = None,
    human_judgments: Path | None = None,
    human_assignments: Path | None = None,
    estimator: str | None = None,
) -> PPIRequest | None:
    """The PPI options as a request, ``None`` without ``--ppi`` (the PPI-only options are
    then an error rather than silently ignored)."""
    if not ppi:
        given = [
            name
            for name, value in (
                ("--human-qrels", human_qrels),
                ("--human-judgments", human_judgments),
                ("--human-assignments", human_assignments),
                ("--alpha", alpha),
                ("--ppi-lambda", lam),
                ("--ppi-estimator", estimator),
                ("--labelled-queries", labelled_queries),
            )
            if value is not None
        ]
        if given:
            fail(RagmeterError(f"{', '.join(given)} needs --ppi"))
        return None
    if human_qrels is None and human_judgments is None and human_assignments is None:
        fail(
            RagmeterError(
                "--ppi needs the human labels: give them with --human-qrels FILE "
                "(--human-judgments or --human-assignments for coverage or nuggets)"
            )
        )
    given = [option for option, value in (others or {}).items() if value]
    if given:
        # printed estimates only: saving them, curves and groups are not (yet) views of PPI
        fail(RagmeterError(f"--ppi does not take {', '.join(given)}"))
    from ragmeter.workflows.ppi import PPIRequest

    level = 0.1 if alpha is None else alpha
    return PPIRequest(
        human_qrels,
        labelled_queries,
        level,
        lam,
        human_judgments,
        human_assignments,
        _estimator(estimator),
    )


def _estimator(value: str | None) -> Estimator | None:
    """``--ppi-estimator``, checked against :data:`ragmeter.stats.ppi.ESTIMATORS`."""
    from ragmeter.stats.ppi import ESTIMATORS

    if value is None:
        return None
    if value not in ESTIMATORS:
        fail(RagmeterError(f"--ppi-estimator {value!r}: expected one of {', '.join(ESTIMATORS)}"))
    return value  # type: ignore[return-value]


def emit_evaluate_ppi(
    request: EvaluateRequest,
    ppi: PPIRequest,
    fmt: OutputFormat,
    output: Path | None,
    *,
    per_query: bool = False,
) -> None:
    """``evaluate --ppi``: the three intervals per measure (table), or the evaluation's
    JSON with a ``ppi`` object per measure (and the per-query values under the LLM labels
    with ``per_query``)."""
    from ragmeter.commands.output import _table, emit_text, warn
    from ragmeter.report import ppi as render
    from ragmeter.workflows.ppi import evaluate_ppi

    if fmt.value not in ("table", "json"):
        fail(RagmeterError(f"--ppi prints a table or json, not {fmt.value}"))
    if per_query and fmt.value == "table":
        fail(RagmeterError("--ppi prints per-query values with -f json"))
    try:
        outcome = evaluate_ppi(request, ppi)
    except RagmeterError as exc:
        fail(exc)
    if fmt.value == "table":
        _table(lambda **kw: render.print_table(outcome.estimates, **kw), output)
        return
    emit_text(render.to_json(outcome.evaluation, outcome.estimates, per_query=per_query), output)
    warn(outcome.evaluation.warnings)


def emit_compare_ppi(
    request: EvaluateRequest,
    ppi: PPIRequest,
    fmt: CompareFormat,
    output: Path | None,
    *,
    baseline: str | None,
    all_pairs: bool,
    correction: Correction,
) -> None:
    """``compare --ppi``: the PPI estimate of each paired difference (table or json)."""
    from ragmeter.commands.output import _table, emit_text
    from ragmeter.report import ppi as render
    from ragmeter.workflows.ppi import compare_ppi

    if fmt.value not in ("table", "json"):
        fail(RagmeterError(f"--ppi prints a table or json, not {fmt.value}"))
    try:
        result = compare_ppi(
            request, ppi, baseline=baseline, all_pairs=all_pairs, correction=correction
        )
    except RagmeterError as exc:
        fail(exc)
    if fmt.value == "table":
        _table(lambda **kw: render.print_comparison(result, **kw), output)
        return
    emit_text(render.comparison_json(result), output)
