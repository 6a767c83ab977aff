"""Intent-aware diversity measures over sub-questions, with ndeval's definitions.

ndeval (the TREC Web track's diversity evaluation, version 4.5, inside pyndeval and so
ir_measures) treats each sub-question ``i`` as a subtopic: ``J(d, i) = [r(d, i) ≥ τ]`` (a
passage answers it), ``S = |Q_ans|`` the sub-questions some judged passage answers (ndeval's
"actual subtopics"). In a ranking ``d_1, d_2, …`` the novelty gain at rank ``j`` is

    g_j = Σ_i J(d_j, i) · (1 − α)^{c_{i,j}},  c_{i,j} = passages above rank j answering i,

and the ideal ranking is ndeval's greedy one over every judged passage of the query (largest
gain first, ties to the larger doc id) — the ranking ``alpha_ndcg`` normalises by. Every
measure here is NA for a query without answerable sub-question (``S = 0``; ndeval writes 0),
as the other sub-question measures; a cutoff reads the top K of the run.

* ``err_ia@K``   = Σ_{j≤K} g_j / j  ÷  Σ_{j≤K} S (1 − α)^{j−1} / j   (ERR-IA)
* ``nerr_ia@K``  = Σ_{j≤K} g_j / j of the run ÷ the same of the ideal ranking   (nERR-IA)
* ``alpha_dcg@K``= Σ_{j≤K} g_j / log2(j+1)  ÷  Σ_{j≤K} S (1 − α)^{j−1} / log2(j+1)
* ``nrbp``       = (1 − (1 − α) β) / S · Σ_j β^{j−1} g_j over the whole ranking   (NRBP)
* ``nnrbp``      = NRBP of the run ÷ NRBP of the ideal ranking
* ``p_ia@K``     = Σ_{j≤K} Σ_i J(d_j, i) / (K · S)   (P-IA)
* ``strecall@K`` = |{i : ∃ j ≤ K, J(d_j, i)}| / S   (subtopic recall)
* ``ap_ia``      = (1/S) Σ_{i ∈ Q_ans} Σ_{j : J(d_j,i)} (|{j' ≤ j : J(d_j', i)}| / j) / R_i,
  ``R_i`` = judged passages answering i   (MAP-IA)

The denominators with S are ndeval's "collection-independent" normalisation: the gain an
ideal ranking would have if every passage answered every sub-question once more.

Two differences from ndeval, both where it cannot be right: ndeval's normalising loop starts
at rank 2, so its ERR-IA@1 and α-DCG@1 are the raw gain g_1 (up to S, above 1); ragmeter
normalises at every K. And ndeval stops at depth 20 (pyndeval refuses larger cutoffs);
ragmeter takes any K.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned
from ragmeter.core.judgments import CoverageView
from ragmeter.errors import MissingInputError
from ragmeter.measures import FloatArray, Measure, Param, register
from ragmeter.metrics._segments import cutoff_per_query

BoolMatrix = npt.NDArray[np.bool_]


def _unit_interval(value: float) -> str | None:
    return None if 0.0 <= value < 1.0 else "must be in [0, 1)"


def _tau_check(value: int) -> str | None:
    return None if 0 <= value <= 5 else "must be 1..5 (0 = the evaluation's --tau)"


TAU = Param("tau", int, 0, "answerability threshold r ≥ τ (0: the evaluation's --tau)", _tau_check)
ALPHA = Param("alpha", float, 0.5, "redundancy penalty α (ndeval's)", _unit_interval)
BETA = Param("beta", float, 0.5, "patience β of NRBP (ndeval's)", _unit_interval)


@dataclass(frozen=True)
class _Query:
    """One query's passages as answer matrices: the run's (rank order) and the ideal's."""

    run: BoolMatrix
    ideal: BoolMatrix
    n_answerable: int


def _view(al: Aligned, m: Measure) -> CoverageView:
    if al.coverage is None:
        raise MissingInputError(f"{m} needs sub-question judgments (--judgments)")
    return al.coverage


def _matrices(al: Aligned, m: Measure, alpha: float) -> list[_Query | None]:
    """Per evaluated query its answer matrices (``None`` where no sub-question is answerable)."""
    view = _view(al, m)
    tau = int(m.param("tau")) or view.tau
    return view.cached(("diversity", tau, alpha), lambda: _build(al, view, tau, alpha))


def _build(al: Aligned, view: CoverageView, tau: int, alpha: float) -> list[_Query | None]:
    jud = view.judgments
    out: list[_Query | None] = []
    for q in range(al.n_queries):
        jq = int(view.query[q])
        if jq < 0:
            out.append(None)
            continue
        width = int(jud.widths[jq])
        rows = np.arange(int(jud.offsets[jq]), int(jud.offsets[jq + 1]))
        judged = _answers(jud.ratings, jud.rating_offsets, rows, width, tau)
        n_answerable = int(judged.any(axis=0).sum())
        if n_answerable == 0:
            out.append(None)
            continue
        items = view.item_row[al.offsets[q] : al.offsets[q + 1]]
        run = np.zeros((len(items), width), dtype=bool)
        known = items >= 0
        run[known] = _answers(jud.ratings, jud.rating_offsets, items[known], width, tau)
        doc_ids = [str(d) for d in jud.doc_ids.slice(int(rows[0]), len(rows)).to_pylist()]
        ideal = judged[_greedy_order(judged, doc_ids, alpha)]
        out.append(_Query(run, ideal, n_answerable))
    return out


def _answers(
    ratings: np.ndarray, offsets: np.ndarray, rows: np.ndarray, width: int, tau: int
) -> BoolMatrix:
    if not len(rows):
        return np.zeros((0, width), dtype=bool)
    cells = offsets[rows][:, None] + np.arange(width)[None, :]
    out: BoolMatrix = ratings[cells] >= tau
    return out


def _greedy_order(judged: BoolMatrix, doc_ids: list[str], alpha: float) -> list[int]:
    """ndeval's ideal: repeatedly the passage of largest novelty gain, ties to the larger doc
    id (byte order); passages answering nothing add no gain and are left out."""
    weight = np.ones(judged.shape[1])
    left = [i for i in range(len(doc_ids)) if judged[i].any()]
    order: list[int] = []
    while left:
        best = max(left, key=lambda i: (float(weight[judged[i]].sum()), doc_ids[i].encode()))
        order.append(best)
        left.remove(best)
        weight[judged[best]] *= 1.0 - alpha
    return order


def _gains(matrix: BoolMatrix, alpha: float) -> FloatArray:
    """g_j = Σ_i J(d_j, i)(1 − α)^{c_{i,j}} in rank order."""
    if not len(matrix):
        return np.zeros(0)
    seen: npt.NDArray[np.int64] = np.cumsum(matrix, axis=0, dtype=np.int64) - matrix
    out: FloatArray = np.where(matrix, (1.0 - alpha) ** seen, 0.0).sum(axis=1)
    return out


def _per_query(
    al: Aligned, m: Measure, alpha: float, score: Callable[[_Query, int | None], float]
) -> FloatArray:
    cut = cutoff_per_query(al, m)
    out = np.full(al.n_queries, np.nan)
    for q, data in enumerate(_matrices(al, m, alpha)):
        if data is not None:
            out[q] = score(data, None if cut is None else int(cut[q]))
    return out


def _discounted(
    gains: FloatArray, k: int | None, discount: Callable[[FloatArray], FloatArray]
) -> float:
    top = gains if k is None else gains[:k]
    return float(np.sum(top * discount(np.arange(1, len(top) + 1, dtype=np.float64))))


def _reciprocal(ranks: FloatArray) -> FloatArray:
    out: FloatArray = 1.0 / ranks
    return out


def _log_discount(ranks: FloatArray) -> FloatArray:
    out: FloatArray = 1.0 / np.log2(ranks + 1.0)
    return out


def _ideal_ideal(
    s: int, alpha: float, k: int, discount: Callable[[FloatArray], FloatArray]
) -> float:
    ranks = np.arange(1, k + 1, dtype=np.float64)
    return float(np.sum(s * (1.0 - alpha) ** (ranks - 1.0) * discount(ranks)))


def _depth(data: _Query, k: int | None) -> int:
    return len(data.run) if k is None else k


def _over_ideal_ideal(
    al: Aligned, m: Measure, discount: Callable[[FloatArray], FloatArray]
) -> FloatArray:
    """The run's discounted novelty gain ÷ the collection-independent ideal
    :func:`_ideal_ideal` (ndeval's normalisation of ERR-IA and α-DCG; 0 at depth 0)."""
    alpha = float(m.param("alpha"))

    def score(data: _Query, k: int | None) -> float:
        depth = _depth(data, k)
        if depth == 0:
            return 0.0
        num = _discounted(_gains(data.run, alpha), k, discount)
        return float(num / _ideal_ideal(data.n_answerable, alpha, depth, discount))

    return _per_query(al, m, alpha, score)


@register("err_ia", cutoff="optional", params=(ALPHA, TAU), needs=("judgments",))
def err_ia(al: Aligned, m: Measure) -> FloatArray:
    """ERR-IA@K = Σ_{j≤K} g_j / j ÷ Σ_{j≤K} S(1 − α)^{j−1} / j (ndeval's ERR-IA).

    Example (α = 0.5, S = 2): run [d answering both, d answering the first] →
    g = [2, 0.5], ERR-IA@2 = (2 + 0.25) / (2 + 0.5) = 0.9.
    """
    return _over_ideal_ideal(al, m, _reciprocal)


@register("nerr_ia", cutoff="optional", params=(ALPHA, TAU), needs=("judgments",))
def nerr_ia(al: Aligned, m: Measure) -> FloatArray:
    """nERR-IA@K = Σ_{j≤K} g_j / j of the run ÷ the same of the greedy ideal (ndeval's)."""
    alpha = float(m.param("alpha"))

    def score(data: _Query, k: int | None) -> float:
        ideal = _discounted(_gains(data.ideal, alpha), k, _reciprocal)
        run = _discounted(_gains(data.run, alpha), k, _reciprocal)
        return run / ideal if ideal > 0 else 0.0

    return _per_query(al, m, alpha, score)


@register("alpha_dcg", cutoff="optional", params=(ALPHA, TAU), needs=("judgments",))
def alpha_dcg(al: Aligned, m: Measure) -> FloatArray:
    """α-DCG@K = Σ_{j≤K} g_j / log2(j+1) ÷ Σ_{j≤K} S(1 − α)^{j−1} / log2(j+1) (ndeval's
    collection-independent normalisation; ``alpha_ndcg`` divides by the greedy ideal)."""
    return _over_ideal_ideal(al, m, _log_discount)


def _nrbp_sum(matrix: BoolMatrix, alpha: float, beta: float) -> float:
    gains = _gains(matrix, alpha)
    return float(np.sum(gains * beta ** np.arange(len(gains), dtype=np.float64)))


@register("nrbp", params=(ALPHA, BETA, TAU), needs=("judgments",))
def nrbp(al: Aligned, m: Measure) -> FloatArray:
    """NRBP = (1 − (1 − α)β) / S · Σ_j β^{j−1} g_j over the whole ranking (Clarke et al. 2009).

    Example (α = β = 0.5, S = 2): g = [2, 0.5] → 0.75/2 · (2 + 0.25) = 0.84375.
    """
    alpha, beta = float(m.param("alpha")), float(m.param("beta"))

    def score(data: _Query, k: int | None) -> float:
        scale = (1.0 - (1.0 - alpha) * beta) / data.n_answerable
        return scale * _nrbp_sum(data.run, alpha, beta)

    return _per_query(al, m, alpha, score)


@register("nnrbp", params=(ALPHA, BETA, TAU), needs=("judgments",))
def nnrbp(al: Aligned, m: Measure) -> FloatArray:
    """nNRBP = NRBP of the run ÷ NRBP of the greedy ideal ranking."""
    alpha, beta = float(m.param("alpha")), float(m.param("beta"))

    def score(data: _Query, k: int | None) -> float:
        ideal = _nrbp_sum(data.ideal, alpha, beta)
        return _nrbp_sum(data.run, alpha, beta) / ideal if ideal > 0 else 0.0

    return _per_query(al, m, alpha, score)


@register("p_ia", cutoff="required", params=(TAU,), needs=("judgments",))
def p_ia(al: Aligned, m: Measure) -> FloatArray:
    """P-IA@K = Σ_{j≤K} Σ_i J(d_j, i) / (K · S): precision averaged over sub-questions."""

    def score(data: _Query, k: int | None) -> float:
        assert k is not None
        return float(data.run[:k].sum()) / (k * data.n_answerable)

    return _per_query(al, m, 0.5, score)


@register("strecall", cutoff="optional", params=(TAU,), needs=("judgments",))
def strecall(al: Aligned, m: Measure) -> FloatArray:
    """StRecall@K = |{i : some passage of the top K answers i}| / S (subtopic recall)."""

    def score(data: _Query, k: int | None) -> float:
        top = data.run if k is None else data.run[:k]
        return float(top.any(axis=0).sum()) / data.n_answerable

    return _per_query(al, m, 0.5, score)


@register("ap_ia", params=(TAU,), needs=("judgments",))
def ap_ia(al: Aligned, m: Measure) -> FloatArray:
    """AP-IA = (1/S) Σ_i AP_i, AP_i = Σ_{j : J(d_j,i)} (hits of i in the top j / j) / R_i over
    the whole ranking, R_i = judged passages answering i (ndeval's MAP-IA per query)."""

    def score(data: _Query, k: int | None) -> float:
        run = data.run
        per_question = data.ideal.sum(axis=0)  # R_i: the ideal holds every answering passage
        if not len(run):
            return 0.0
        hits = np.cumsum(run, axis=0)
        ranks = np.arange(1, len(run) + 1, dtype=np.float64)[:, None]
        terms = np.where(run, hits / ranks, 0.0).sum(axis=0)
        answered = per_question > 0
        return float(np.sum(terms[answered] / per_question[answered])) / data.n_answerable

    return _per_query(al, m, 0.5, score)
