"""``evaluate``: read → align → compute → aggregate, for one or many runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np

from ragmeter.core.align import Aligned, Missing, align, pool_membership
from ragmeter.core.data import Qrels, Run
from ragmeter.core.results import Evaluation, RunResult
from ragmeter.core.side import side_options, with_side_inputs
from ragmeter.errors import MissingInputError
from ragmeter.measures import Measure, parse_measures

if TYPE_CHECKING:
    from ragmeter.core.judgments import Answers, Corpus, Judgments, TokenCounter
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


def resolve_measures(measures: Iterable[str | Measure] | str, *, default_k: int) -> list[Measure]:
    """Parse measures; a family that needs a cutoff and got none uses ``default_k``."""
    out = []
    for m in parse_measures(measures):
        if m.k is None and m.spec.cutoff == "required" and m.budget is None:
            m = Measure(m.family, default_k, m.params)
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
        context_k: context size of the coverage measures without ``@k``: a number, or
            ``"oracle"``/``None`` for ``|P*|`` per query (the paper's setting).
        tau: answerability threshold of the coverage measures (rating ≥ tau).
        token_counter: tokenizer of ``density`` (text → token count); whitespace tokens
            by default.
        passage_lengths: token length of each passage, for token budgets (``ra_nwg@512t``);
            see :func:`ragmeter.io.lengths.read_passage_lengths`.
        utilities: per-passage utilities for ``udcg@K``; see :mod:`ragmeter.metrics.udcg`.

    Example:
        >>> from ragmeter import Run, Qrels, evaluate
        >>> run = Run.from_lists({"q1": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]})
        >>> qrels = Qrels.from_dict({"q1": ["doc-3", "doc-9"]})
        >>> round(evaluate(run, qrels, ["ndcg@5"]).run.means()["ndcg@5"], 10)
        0.6509209298
    """
    run_list = _as_runs(runs)
    if qrels is None and judgments is not None:
        coverage_only = all(
            "judgments" in m.spec.needs for m in resolve_measures(measures, default_k=default_k)
        )
        qrels = judgments.query_qrels() if coverage_only else judgments.graded_qrels(tau)
    if qrels is None:
        raise MissingInputError("these measures need qrels")
    qrels_obj = qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
    measure_list = resolve_measures(measures, default_k=default_k)
    options = _evaluation_options(grade_map)
    options.update(side_options(measure_list))
    pool_cutoffs = [m.k for m in measure_list if m.spec.uses_pool]
    needs_pool = bool(pool_cutoffs)
    selection = max((int(k) for k in pool_cutoffs if k is not None), default=None)
    warnings: list[str] = list(qrels_obj.warnings)
    if judgments is not None:
        warnings.extend(judgments.warnings)
    answers_of = _answers_per_run(answers, len(run_list))
    if pool is not None:
        warnings.extend(pool.warnings)
    results: list[RunResult] = []
    for run in run_list:
        warnings.extend(run.warnings)
        aligned = align(run, qrels_obj, missing=missing, depth=depth, rel_level=rel_level)
        aligned = replace(aligned, options=options)
        warnings.extend(_alignment_warnings(run.name, aligned))
        if needs_pool:
            in_pool, outside = pool_membership(
                aligned,
                pool if pool is not None else run,
                qrels_obj,
                depth=pool_depth,
                selection=selection,
            )
            aligned = replace(aligned, label_in_pool=in_pool, _cache={})
            if outside:
                warnings.append(
                    f"run '{run.name}': {outside} judged item(s) of the top {selection} are not "
                    "in the pool; RA-nWG can then exceed PROC (%PROC > 1)"
                )
        if judgments is not None:
            aligned = _with_coverage(
                aligned,
                run,
                judgments,
                corpus=corpus,
                answers=answers_of[len(results)],
                context_k=context_k,
                tau=tau,
                token_counter=token_counter,
            )
        aligned = with_side_inputs(
            aligned, run, qrels_obj, measure_list, lengths=passage_lengths, utilities=utilities
        )
        results.append(
            RunResult(
                name=run.name,
                query_ids=aligned.query_ids,
                measures=tuple(measure_list),
                values=compute(aligned, measure_list),
                n_missing=aligned.n_missing,
                n_skipped=aligned.n_skipped,
                n_unjudged_queries=aligned.n_unjudged_queries,
            )
        )
    return Evaluation(tuple(results), tuple(measure_list), tuple(warnings))


def _answers_per_run(
    answers: Answers | Sequence[Answers | None] | None, n_runs: int
) -> list[Answers | None]:
    if answers is None or not isinstance(answers, Sequence):
        return [answers] * n_runs
    if len(answers) != n_runs:
        raise ValueError(f"{len(answers)} answer sets for {n_runs} runs; expected one per run")
    return list(answers)


def _with_coverage(
    aligned: Aligned,
    run: Run,
    judgments: Judgments,
    *,
    context_k: int | Literal["oracle"] | None,
    **options: Any,
) -> Aligned:
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
        context_k=None if context_k in (None, "oracle") else int(context_k),
        **options,
    )
    return replace(aligned, coverage=view)


def _evaluation_options(grade_map: str | None) -> dict[str, Any]:
    """Evaluation-wide defaults of measure parameters, validated like the parameters."""
    options: dict[str, Any] = {}
    if grade_map:
        from ragmeter.metrics.setwise import GRADE_MAP

        options["grade_map"] = GRADE_MAP.coerce("--grade-map", grade_map)
    return options


def _alignment_warnings(name: str, al: Aligned) -> list[str]:
    out = []
    if al.n_missing:
        out.append(
            f"run '{name}': {al.n_missing} judged quer{'y' if al.n_missing == 1 else 'ies'} "
            "absent from the run, scored as empty runs"
        )
    if al.n_skipped:
        out.append(
            f"run '{name}': {al.n_skipped} judged quer{'y' if al.n_skipped == 1 else 'ies'} "
            "absent from the run, skipped (missing='skip')"
        )
    if al.n_unjudged_queries:
        n = al.n_unjudged_queries
        out.append(
            f"run '{name}': {n} quer{'y' if n == 1 else 'ies'} without judgments, not evaluated"
        )
    return out


def sweep(
    runs: RunLike | Sequence[RunLike] | Mapping[str, RunLike],
    qrels: QrelsLike,
    measures: Iterable[str | Measure] | str,
    ks: Sequence[int] | str,
    **options: Any,
) -> Any:
    """Every measure at every cutoff of ``ks`` (``"1:50"``, ``"1,5,10"``) in one pass per
    run; see :func:`ragmeter.sweep.sweep` (returns a :class:`ragmeter.sweep.Sweep`)."""
    from ragmeter.sweep import sweep as run_sweep

    return run_sweep(runs, qrels, measures, ks, **options)
