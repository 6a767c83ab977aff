"""``evaluate``: read → align → compute → aggregate, for one or many runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

import numpy as np

from ragmeter.core.align import Aligned, Missing, align
from ragmeter.core.data import Qrels, Run
from ragmeter.core.results import Evaluation, RunResult
from ragmeter.errors import MissingInputError
from ragmeter.metrics.registry import Measure, parse_measures

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
        if m.k is None and m.spec.cutoff == "required":
            m = Measure(m.family, default_k, m.params)
        out.append(m)
    return out


def compute(aligned: Aligned, measures: Sequence[Measure]) -> np.ndarray:
    """Per-query values (query × measure) of ``measures`` on one alignment."""
    values = np.empty((aligned.n_queries, len(measures)), dtype=np.float64)
    for j, m in enumerate(measures):
        values[:, j] = m.spec.compute(aligned, m)
    return values


def evaluate(
    runs: RunLike | Sequence[RunLike] | Mapping[str, RunLike],
    qrels: QrelsLike,
    measures: Iterable[str | Measure] | str,
    *,
    missing: Missing = "zero",
    rel_level: int = 1,
    depth: int | None = None,
    default_k: int = 5,
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

    Example:
        >>> from ragmeter import Run, Qrels, evaluate
        >>> run = Run.from_lists({"q1": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]})
        >>> qrels = Qrels.from_dict({"q1": ["doc-3", "doc-9"]})
        >>> round(evaluate(run, qrels, ["ndcg@5"]).run.means()["ndcg@5"], 10)
        0.6509209298
    """
    run_list = _as_runs(runs)
    if qrels is None:
        raise MissingInputError("these measures need qrels")
    qrels_obj = qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
    measure_list = resolve_measures(measures, default_k=default_k)
    warnings: list[str] = list(qrels_obj.warnings)
    results = []
    for run in run_list:
        warnings.extend(run.warnings)
        aligned = align(run, qrels_obj, missing=missing, depth=depth, rel_level=rel_level)
        warnings.extend(_alignment_warnings(run.name, aligned))
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
