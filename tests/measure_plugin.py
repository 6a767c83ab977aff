"""A measure plugin as a user writes one (``ragmeter --plugin tests/measure_plugin.py …``):
importing it defines the measures below through ragmeter's public API. The tests define
them by importing it (``tests/test_custom_measures.py``), and ``tests/test_common.py`` runs
its common checks on every one of them."""

from __future__ import annotations

import numpy as np

import ragmeter
from ragmeter import Param, Rankings


@ragmeter.define_measure("vec_precision", cutoff="required")
def vec_precision(r: Rankings) -> np.ndarray:
    """precision@k = |D_k ∩ Rel| / k, computed on every query at once."""
    return r.count(r.relevant) / r.k


@ragmeter.define_measure_by_query("query_precision", cutoff="required")
def query_precision(ranking: list[str], qrels: dict[str, int], *, k: int, rel_level: int) -> float:
    """precision@k = |D_k ∩ Rel| / k, one query at a time."""
    return sum(d in qrels and qrels[d] >= max(rel_level, 0) for d in ranking) / k


@ragmeter.define_measure(
    "vec_rbp",
    params=(Param("p", float, 0.8, "persistence", low=0.0, high=1.0),),
)
def vec_rbp(r: Rankings, *, p: float) -> np.ndarray:
    """RBP = (1 − p) Σ_i rel_i · p^(i−1), binary relevance."""
    return (1.0 - p) * r.sum(np.where(r.relevant, p ** (r.rank - 1.0), 0.0))


@ragmeter.define_measure_by_query("first_relevant_score", higher_is_better=None)
def first_relevant_score(
    ranking: list[str], qrels: dict[str, int], *, scores: list[float], rel_level: int
) -> float | None:
    """The run's score of its first relevant doc; NA where none is retrieved."""
    for doc, score in zip(ranking, scores, strict=True):
        if qrels.get(doc, 0) >= max(rel_level, 1):
            return score
    return None


@ragmeter.define_measure("judged_retrieved", cutoff="none", aggregate="sum", higher_is_better=None)
def judged_retrieved(r: Rankings) -> np.ndarray:
    """Retrieved docs that have a judgment, summed over queries."""
    return r.count(r.judged)


#: the names this plugin defines
NAMES = ("vec_precision", "query_precision", "vec_rbp", "first_relevant_score", "judged_retrieved")
