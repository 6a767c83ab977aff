"""The evaluation engine: align once (:func:`prepare`), compute, aggregate.

:func:`~ragmeter.evaluation.evaluate` (in :mod:`ragmeter.evaluation.api`) is the public
entry; :func:`evaluate_inputs` the seam that sweeps, reports,
comparisons and diagnoses call with one :class:`~ragmeter.evaluation.inputs.EvalInputs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.core.align import NOT_JUDGED, Aligned, align, pool_membership
from ragmeter.core.data import Run
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.evaluation.side import side_options, with_side_inputs
from ragmeter.measures import Measure, parse_measures

if TYPE_CHECKING:
    from ragmeter.core.judgments import Answers, Judgments


def resolve_measures(
    measures: Iterable[str | Measure] | str, *, default_k: int, context_k: int | None = None
) -> list[Measure]:
    """Parse measures and fill in the cutoffs their names leave open.

    A family that requires a cutoff and got none uses ``default_k``; a context family
    (coverage, density, alpha_ndcg) given without ``@K`` uses ``context_k`` when one is given.
    The filled-in K is part of the measure (and its name): ``coverage`` with ``context_k=10``
    is ``coverage@10``, the same number as ``coverage@10`` anywhere else.
    """
    out: list[Measure] = []
    seen: set[Measure] = set()
    for m in parse_measures(measures):
        if m.k is None and m.budget is None:
            if m.spec.cutoff == "required":
                m = Measure(m.family, default_k, m.params)
            elif m.spec.context and context_k is not None:
                m = Measure(m.family, context_k, m.params)
        if m not in seen:
            seen.add(m)
            out.append(m)
    return out


def compute(aligned: Aligned, measures: Sequence[Measure]) -> np.ndarray:
    """Per-query values (query × measure) of ``measures`` on one alignment."""
    # column-major: each measure writes one contiguous column (a sweep writes hundreds)
    values = np.empty((aligned.n_queries, len(measures)), dtype=np.float64, order="F")
    for j, m in enumerate(measures):
        values[:, j] = m.spec.compute(aligned, m)
    return values


def evaluate_inputs(
    runs: Sequence[Run], inputs: EvalInputs, measures: Iterable[str | Measure] | str
) -> Evaluation:
    """Evaluate ``runs`` with ``inputs`` (the seam every view goes through): one
    :func:`prepare` and one :func:`compute` per run. Each :class:`RunResult` keeps its run and
    inputs, so a later view (a sweep, a report panel) evaluates with the same ones."""
    measure_list = resolve_measures(
        measures, default_k=inputs.default_k, context_k=inputs.context_cutoff
    )
    warnings: list[str] = list(inputs.input_warnings)
    if inputs.pool is not None:
        warnings.extend(inputs.pool.warnings)
    answers_of = _answers_per_run(inputs.answers, len(runs))
    if any({"nuggets", "citations"} & set(m.needs) for m in measure_list):
        from ragmeter.core.nuggets import check_run_names

        check_run_names(len(runs), inputs.nugget_assignments, inputs.citation_support)
    results: list[RunResult] = []
    for run, answers in zip(runs, answers_of, strict=True):
        own = inputs if answers is inputs.answers else replace(inputs, answers=answers)
        prepared = prepare(run, own, measure_list)
        warnings.extend(prepared.warnings)
        if len(inputs.qrels.doc_ids):  # qrels naming queries only judge no document
            warnings.extend(judged_share(run, prepared.judged, prepared.retrieved))
        aligned = prepared.aligned
        results.append(
            RunResult(
                name=run.name,
                query_ids=aligned.query_ids,
                measures=tuple(measure_list),
                values=compute(aligned, measure_list),
                n_missing=aligned.n_missing,
                n_skipped=aligned.n_skipped,
                n_unjudged_queries=aligned.n_unjudged_queries,
                source=run,
                inputs=own,
            )
        )
    return Evaluation(tuple(results), tuple(measure_list), tuple(warnings))


@dataclass(frozen=True)
class Prepared:
    """A run aligned once with every side input its measures need, and what it warned."""

    aligned: Aligned
    warnings: tuple[str, ...] = ()
    #: judged items of the top ``pool_selection`` that the pool lacks (pool-based measures)
    pool_outside: int = 0
    pool_selection: int | None = None
    #: retrieved items of the evaluated queries, and how many of them the qrels judge
    retrieved: int = 0
    judged: int = 0


def prepare(run: Run, inputs: EvalInputs, measures: Sequence[Measure]) -> Prepared:
    """Align ``run`` with ``inputs`` once, joining what the ``measures`` declare they need.

    The families' declarations decide the joins: ``uses_pool`` (the candidate pool, read at
    the largest pool cutoff), ``judgments`` in :attr:`Measure.needs` (the sub-question view,
    with the corpus, answers, τ and token counter), ``utilities`` / ``lengths`` (side arrays,
    see :mod:`ragmeter.evaluation.side`), ``shared_head`` (the set families' head width).
    ``inputs.answers`` must be this run's (one answer set, not one per run).
    """
    qrels = inputs.qrels
    warnings = list(run.warnings)
    aligned = align(
        run, qrels, missing=inputs.missing, depth=inputs.depth, rel_level=inputs.rel_level
    )
    options = evaluation_options(inputs.grade_map)
    options.update(side_options(measures))
    pool_cutoffs = [m.k for m in measures if m.spec.uses_pool]
    selection = max((int(k) for k in pool_cutoffs if k is not None), default=None)
    in_pool = None
    outside = 0
    if pool_cutoffs:
        in_pool, outside = pool_membership(
            aligned,
            _pool_of(run, inputs),
            qrels,
            depth=inputs.pool_depth,
            selection=selection,
        )
        if outside:
            warnings.append(pool_warning(run.name, outside, selection))
    aligned = replace(aligned, options=options, label_in_pool=in_pool)
    warnings[len(run.warnings) : len(run.warnings)] = alignment_warnings(
        run.name, aligned.n_missing, aligned.n_skipped, aligned.n_unjudged_queries
    )
    if inputs.judgments is not None:
        answers = inputs.answers
        if answers is not None and not hasattr(answers, "ratings"):
            raise ValueError("prepare: give this run's answers, not one set per run")
        aligned = with_coverage(
            aligned,
            run,
            inputs.judgments,
            corpus=inputs.corpus,
            answers=answers,
            tau=inputs.tau,
            token_counter=inputs.token_counter,
        )
    aligned = with_side_inputs(
        aligned,
        run,
        qrels,
        measures,
        lengths=inputs.passage_lengths,
        utilities=inputs.utilities,
        nuggets=inputs.nuggets,
        nugget_assignments=inputs.nugget_assignments,
        citation_support=inputs.citation_support,
        spans=inputs.spans,
        gold_answers=inputs.gold_answers,
        corpus=inputs.corpus,
    )
    retrieved = len(aligned.grades)
    judged = retrieved - int(np.count_nonzero(aligned.grades == NOT_JUDGED))
    return Prepared(aligned, tuple(warnings), outside, selection, retrieved, judged)


def _pool_of(run: Run, inputs: EvalInputs) -> Run:
    """The candidate pool of pool-based measures: the given pool, else what the run was
    chosen from (a reranker's candidates, read from traces), else the run itself."""
    if inputs.pool is not None:
        return inputs.pool
    return run.candidates if run.candidates is not None else run


def _answers_per_run(
    answers: Answers | Sequence[Answers | None] | None, n_runs: int
) -> list[Answers | None]:
    if answers is None or not isinstance(answers, Sequence):
        return [answers] * n_runs
    if len(answers) != n_runs:
        raise ValueError(f"{len(answers)} answer sets for {n_runs} runs; expected one per run")
    return list(answers)


def with_coverage(aligned: Aligned, run: Run, judgments: Judgments, **options: Any) -> Aligned:
    """``aligned`` with its items joined to the sub-question judgments (coverage measures)."""
    from ragmeter import _accel
    from ragmeter.core.judgments import coverage_view

    rows = _accel.indices(aligned.run_rows)
    view = coverage_view(
        judgments,
        aligned.query_ids,
        aligned.offsets,
        run.doc_ids.take(rows),
        item_texts=run.texts.take(rows) if run.texts is not None else None,
        **options,
    )
    return replace(aligned, coverage=view)


def evaluation_options(grade_map: str | None) -> dict[str, Any]:
    """Evaluation-wide defaults of measure parameters, validated like the parameters."""
    options: dict[str, Any] = {}
    if grade_map:
        from ragmeter.metrics.setwise import GRADE_MAP

        options["grade_map"] = GRADE_MAP.coerce("--grade-map", grade_map)
    return options


#: below this share of its retrieved documents judged, a run read from traces is warned about:
#: its document ids may not be the qrels' (docs/traces.md)
JUDGED_SHARE_MIN = 0.10


def judged_share(run: Run | str, judged: int, retrieved: int) -> list[str]:
    """What a run's share of judged documents says about its ids (docs/traces.md).

    Over the retrieved documents of the evaluated queries: for a run read from traces,
    none judged is an :class:`~ragmeter.errors.InputError` naming the likely cause (ids that
    are not the qrels': a table of zeros would hide it), and less than
    :data:`JUDGED_SHARE_MIN` judged a warning with the share. Any other run (``run`` a name:
    a TREC run evaluated in blocks) is warned about when none is judged; a small share is
    common there (a deep run against sparse qrels) and says nothing.
    """
    from ragmeter.errors import InputError

    if isinstance(run, str) or run.stage is None:
        name = run if isinstance(run, str) else run.name
        if retrieved and not judged:
            return [
                f"run '{name}': none of its {retrieved} retrieved documents is judged in the "
                "qrels: are its document ids the qrels'?"
            ]
        return []
    if not judged and len(run.doc_ids):
        if not retrieved:
            raise InputError(
                f"run '{run.name}': none of its queries is in the qrels: its query ids are "
                "likely not the qrels' (take them from a span attribute with "
                "--query-id-from, e.g. metadata.query_id)"
            )
        raise InputError(
            f"run '{run.name}': none of its {retrieved} retrieved documents is judged in the "
            "qrels: its document ids are likely not the qrels' (frameworks that record no "
            "document.id: take them from where yours puts them with --doc-id-from "
            "metadata.KEY, or content for ids made from a hash of the text)"
        )
    if retrieved == 0 or judged >= JUDGED_SHARE_MIN * retrieved:
        return []
    return [
        f"run '{run.name}': only {judged} of its {retrieved} retrieved documents "
        f"({judged / retrieved:.1%}) are judged, under {JUDGED_SHARE_MIN:.0%}: check that its "
        "document ids are the qrels' (--doc-id-from)"
    ]


def pool_warning(name: str, outside: int, selection: int | None) -> str:
    """The warning for ``outside`` judged items of the top ``selection`` not in the pool."""
    return (
        f"run '{name}': {outside} judged item(s) of the top {selection} are not "
        "in the pool; RA-nWG can then exceed PROC (%PROC > 1)"
    )


def alignment_warnings(name: str, n_missing: int, n_skipped: int, n_unjudged: int) -> list[str]:
    """The warnings of an alignment's counts: missing, skipped and unjudged queries."""
    out = []
    if n_missing:
        out.append(
            f"run '{name}': {n_missing} judged quer{'y' if n_missing == 1 else 'ies'} "
            "absent from the run, scored as empty runs"
        )
    if n_skipped:
        out.append(
            f"run '{name}': {n_skipped} judged quer{'y' if n_skipped == 1 else 'ies'} "
            "absent from the run, skipped (missing='skip')"
        )
    if n_unjudged:
        n = n_unjudged
        out.append(
            f"run '{name}': {n} quer{'y' if n == 1 else 'ies'} without judgments, not evaluated"
        )
    return out
