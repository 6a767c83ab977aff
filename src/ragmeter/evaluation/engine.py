"""The evaluation engine: align once (:func:`prepare`), compute, aggregate.

:func:`evaluate` is the public entry; :func:`evaluate_inputs` the seam that sweeps, reports,
comparisons and diagnoses call with one :class:`~ragmeter.evaluation.inputs.EvalInputs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np

from ragmeter.core.align import Aligned, Missing, align, pool_membership
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import MissingInputError
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.evaluation.side import side_options, with_side_inputs
from ragmeter.measures import Measure, parse_measures

if TYPE_CHECKING:
    from ragmeter.core.judgments import Answers, Corpus, Judgments, TokenCounter
    from ragmeter.core.nuggets import CitationSupport, NuggetAssignments, Nuggets
    from ragmeter.io.lengths import PassageLengths
    from ragmeter.io.utilities import Utilities

RunLike: TypeAlias = Run | Mapping[str, Mapping[str, float]]
QrelsLike: TypeAlias = Qrels | Mapping[str, Any]


def _as_runs(runs: RunLike | Sequence[RunLike] | Mapping[str, RunLike]) -> list[Run]:
    if isinstance(runs, Run):
        return [runs]
    if isinstance(runs, Mapping):
        named = {str(k): v for k, v in runs.items() if isinstance(v, Run)}
        if named and len(named) == len(runs):
            return [replace(v, name=k) for k, v in named.items()]
        return [Run.from_dict(runs)]  # type: ignore[arg-type]
    out = []
    for i, r in enumerate(runs):
        out.append(r if isinstance(r, Run) else Run.from_dict(r, name=f"run{i + 1}"))
    return out


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


def evaluate(
    runs: RunLike | Sequence[RunLike] | Mapping[str, RunLike],
    qrels: QrelsLike | None,
    measures: Iterable[str | Measure] | str,
    *,
    missing: Missing = "zero",
    rel_level: int = 1,
    depth: int | None = None,
    default_k: int = 5,
    pool: Run | None = None,
    pool_depth: int | None = None,
    grade_map: str | None = None,
    judgments: Judgments | None = None,
    corpus: Corpus | None = None,
    answers: Answers | Sequence[Answers | None] | None = None,
    context_k: int | Literal["oracle"] | None = None,
    tau: int = 3,
    token_counter: TokenCounter | None = None,
    passage_lengths: PassageLengths | None = None,
    utilities: Utilities | None = None,
    nuggets: Nuggets | None = None,
    nugget_assignments: NuggetAssignments | None = None,
    citation_support: CitationSupport | None = None,
) -> Evaluation:
    """Evaluate one or more runs against ``qrels``.

    Args:
        runs: a :class:`Run`, a ``{qid: {doc: score}}`` dict, a list of them, or
            ``{name: Run}``.
        qrels: :class:`Qrels` or ``{qid: {doc: grade}}`` / ``{qid: [relevant docs]}``.
        measures: names such as ``"ndcg@10"``, ``"P_10"``, ``"map"``, or measure objects.
        missing: qrels queries absent from a run are scored as empty runs (``"zero"``) or
            dropped (``"skip"``, trec_eval without ``-c``). Either way they are counted.
        rel_level: default relevance threshold (relevant ⇔ grade ≥ rel_level).
        depth: evaluate only the first ``depth`` items of each ranking.
        default_k: cutoff for measures that need one and were given none.
        pool: the retriever's candidate list for pool-based measures (``proc@K``…); by default
            each run is its own pool.
        pool_depth: use only the first ``pool_depth`` candidates of each query as the pool.
        grade_map: default grade mapping onto the 1..5 utility scale for the set-based
            measures, e.g. ``"0:1,1:3,2:4,3:5"`` for TREC 0..3 grades.
        judgments: sub-question judgments for the coverage measures (``coverage``,
            ``alpha_ndcg@K``, ``density``, ``answer_*``). Without ``qrels``, the evaluated
            queries are the judged ones and the classical measures use the CRUX graded qrels
            derived from them (required 3, partially redundant 2, fully redundant 1).
        corpus: passage texts (for ``density``).
        answers: rated generated answers (for ``answer_*``): one for every run, or one per run.
        context_k: ``@K`` written into the context measures (coverage, density, alpha_ndcg)
            given without one: ``coverage`` is then ``coverage@context_k``, under that
            name. ``"oracle"``/``None``: each family's default (``|P*|`` per query for
            coverage and density, the paper's setting; 20 for alpha_ndcg). It never changes
            a measure whose name does not say so.
        tau: answerability threshold of the coverage measures (rating ≥ tau).
        token_counter: tokenizer of ``density`` (text → token count); whitespace tokens
            by default.
        passage_lengths: token length of each passage, for token budgets (``ra_nwg@512t``);
            see :func:`ragmeter.io.lengths.read_passage_lengths`.
        utilities: per-passage utilities for ``udcg@K``; see :mod:`ragmeter.metrics.udcg`.
        nuggets: the nuggets of each query, for the nugget measures (``nugget_vital``…);
            without ``qrels`` (and judgments) the evaluated queries are those with nuggets
            (else, with ``citation_support`` alone, those with judged answers).
        nugget_assignments: assignments of the nuggets to each run's answers (matched by the
            run's name) and to retrieved passages (``nugget_coverage@K``); see
            :mod:`ragmeter.metrics.nuggets`.
        citation_support: support of each answer sentence by its citations
            (``citation_precision``, ``citation_recall``).

    Example:
        >>> from ragmeter import Run, Qrels, evaluate
        >>> run = Run.from_lists({"q1": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]})
        >>> qrels = Qrels.from_dict({"q1": ["doc-3", "doc-9"]})
        >>> round(evaluate(run, qrels, ["ndcg@5"]).run.means()["ndcg@5"], 10)
        0.6509209298
    """
    run_list = _as_runs(runs)
    if qrels is None and judgments is not None:
        # judged queries only; the classical measures use the CRUX graded qrels
        coverage_only = all(
            "judgments" in m.spec.needs for m in resolve_measures(measures, default_k=default_k)
        )
        qrels = judgments.query_qrels() if coverage_only else judgments.graded_qrels(tau)
    if qrels is None and nuggets is not None:
        qrels = nuggets.query_qrels()
    elif qrels is None and citation_support is not None:
        qrels = citation_support.query_qrels()
    if qrels is None:
        raise MissingInputError("these measures need qrels")
    inputs = EvalInputs(
        qrels=qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels),
        missing=missing,
        rel_level=rel_level,
        depth=depth,
        default_k=default_k,
        pool=pool,
        pool_depth=pool_depth,
        grade_map=grade_map,
        judgments=judgments,
        corpus=corpus,
        answers=answers,
        context_k=context_k,
        tau=tau,
        token_counter=token_counter,
        passage_lengths=passage_lengths,
        utilities=utilities,
        nuggets=nuggets,
        nugget_assignments=nugget_assignments,
        citation_support=citation_support,
    )
    return evaluate_inputs(run_list, inputs, measures)


def evaluate_inputs(
    runs: Sequence[Run], inputs: EvalInputs, measures: Iterable[str | Measure] | str
) -> Evaluation:
    """Evaluate ``runs`` with ``inputs`` (the seam every view goes through): one
    :func:`prepare` and one :func:`compute` per run. Each :class:`RunResult` keeps its run and
    inputs, so a later view (a sweep, a report panel) evaluates with the same ones."""
    measure_list = resolve_measures(
        measures, default_k=inputs.default_k, context_k=inputs.context_cutoff
    )
    warnings: list[str] = list(inputs.qrels.warnings)
    if inputs.judgments is not None:
        warnings.extend(inputs.judgments.warnings)
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
            inputs.pool if inputs.pool is not None else run,
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
    )
    return Prepared(aligned, tuple(warnings), outside, selection)


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
