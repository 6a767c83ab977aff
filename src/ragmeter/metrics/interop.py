"""Measures with ir_measures' definitions that trec_eval lacks: ERR, nERR, Compat, Judged,
NumQ, Accuracy (SPEC §2 notation: ``g_i`` the grade at rank ``i``, unjudged and negative
grades 0).

Each family gives the number ir_measures' provider gives for the spelling it is read from
(:mod:`ragmeter.measures.irm`), with one convention of ragmeter's: tied scores are ordered
as trec_eval orders them (doc id descending), where some providers order them otherwise.
"""

from __future__ import annotations

import numpy as np

from ragmeter.core.align import NOT_JUDGED, Aligned
from ragmeter.errors import MeasureError
from ragmeter.measures import FloatArray, Measure, Param, register
from ragmeter.metrics._segments import count_within, cutoff_per_query, safe_divide
from ragmeter.metrics.ranking import REL_LEVEL, rel_level


def _positive_int(value: int) -> str | None:
    return None if value >= 1 else "must be ≥ 1"


def _persistence(value: float) -> str | None:
    return None if 0.0 < value < 1.0 else "must be in (0, 1)"


MAX_GRADE = Param(
    "max_grade",
    int,
    4,
    "the top grade g_max of the stopping probability (2^g − 1) / 2^g_max (gdeval's 4)",
    _positive_int,
)


@register("judged_rate", cutoff="optional")
def judged_rate(al: Aligned, m: Measure) -> FloatArray:
    """Judged@k as ir_measures: |{d ∈ D_k : d has a judgment}| / min(k, |run|).

    Any judgment counts, a negative grade too; the denominator is the number of items
    actually in the top k (``judged@k`` divides by k and counts grades ≥ 0). An empty
    ranking → 0.
    """
    k = cutoff_per_query(al, m)
    has_label = al.grades != NOT_JUDGED
    count = count_within(al, "any_label", has_label, k)
    shown = al.lengths if k is None else np.minimum(al.lengths, k)
    return safe_divide(count, shown)


@register("num_queries", aggregate="sum", summary="Number of evaluated queries (ir_measures NumQ)")
def num_queries(al: Aligned, m: Measure) -> FloatArray:
    """NumQ = 1 per evaluated query; summed over queries it is their number."""
    return np.ones(al.n_queries, dtype=np.float64)


@register(
    "accuracy",
    cutoff="optional",
    params=(REL_LEVEL,),
    summary="Share of (relevant, non-relevant) retrieved pairs ranked right (ir_measures)",
)
def accuracy(al: Aligned, m: Measure) -> FloatArray:
    """Accuracy as ir_measures: the share of (relevant, non-relevant) pairs of retrieved items
    in which the relevant item ranks above, over the top k (the whole ranking without @k).

    With R' the relevant items retrieved (g ≥ rel_level, an unjudged item grade 0), N the
    non-relevant ones and n_r the non-relevant items above relevant item r:
    Accuracy = 1 − Σ_r n_r / (N · R'). NA when R' = 0 or N = 0 (no pair; ir_measures leaves
    such a query out, or divides by zero). Example: [n, r, n, r, n] → n_r = 1, 2; N = 3,
    R' = 2 → 1 − 3/6 = 0.5.
    """
    k = cutoff_per_query(al, m)
    grades = np.where(al.grades == NOT_JUDGED, 0, al.grades)
    relevant = grades >= rel_level(al, m)
    out = np.full(al.n_queries, np.nan)
    for q in range(al.n_queries):
        start, end = int(al.offsets[q]), int(al.offsets[q + 1])
        if k is not None:
            end = min(end, start + int(k[q]))
        flags = relevant[start:end]
        n_rel, n_nonrel = int(flags.sum()), int((~flags).sum())
        if n_rel and n_nonrel:
            above = np.cumsum(~flags)[flags]  # non-relevant items above each relevant one
            out[q] = 1.0 - float(above.sum()) / (n_nonrel * n_rel)
    return out


def _stop_probability(grades: np.ndarray, max_grade: int, where: str) -> FloatArray:
    """R(g) = (2^g − 1) / 2^g_max for g > 0, else 0; a grade above g_max is an error."""
    positive = np.where(grades == NOT_JUDGED, 0, np.maximum(grades, 0)).astype(np.float64)
    if len(positive) and positive.max() > max_grade:
        raise MeasureError(
            f"ERR: grade {int(positive.max())} in the {where} is above max_grade={max_grade};"
            f" give err(max_grade={int(positive.max())})"
        )
    out: FloatArray = (np.exp2(positive) - 1.0) / 2.0**max_grade
    return out


def _err_segments(
    stop: FloatArray, offsets: np.ndarray, lengths: np.ndarray, k: np.ndarray | None
) -> FloatArray:
    """Per segment Σ_{i ≤ k} R_i / i · Π_{j < i} (1 − R_j), added in rank order."""
    out = np.zeros(len(offsets) - 1, dtype=np.float64)
    for q in range(len(out)):
        n = int(lengths[q]) if k is None else min(int(lengths[q]), int(k[q]))
        r = stop[offsets[q] : offsets[q] + n]
        if not n or not r.any():
            continue
        reach = np.concatenate(([1.0], np.cumprod(1.0 - r[:-1])))
        out[q] = float(np.sum(r * reach / np.arange(1, n + 1)))
    return out


@register("err", cutoff="optional", params=(MAX_GRADE,))
def err(al: Aligned, m: Measure) -> FloatArray:
    """ERR@k = Σ_{i ≤ k} (R_i / i) · Π_{j < i} (1 − R_j), R_i = (2^{g_i} − 1) / 2^{g_max}.

    Expected reciprocal rank (Chapelle et al. 2009): the user stops at rank i with
    probability R_i. ``g_max`` = 4 as gdeval (ir_measures' ``ERR@k``); a grade above it is
    an error. Example: grades [4, 0, 2] → ERR@3 = 15/16 + (1/16)·(3/16)/3 = 0.94140625.
    """
    stop = _stop_probability(al.grades, int(m.param("max_grade")), "run")
    return _err_segments(stop, al.offsets, al.lengths, cutoff_per_query(al, m))


@register("nerr", cutoff="optional", params=(MAX_GRADE,))
def nerr(al: Aligned, m: Measure) -> FloatArray:
    """nERR@k = ERR@k / ideal ERR@k, the ideal ranking holding every judged item by grade,
    descending; 0 when no item is relevant (ideal ERR = 0).

    Example: grades [0, 4] with judged {4} → ERR@2 = 15/32, ideal 15/16, nERR@2 = 0.5.
    """
    max_grade = int(m.param("max_grade"))
    k = cutoff_per_query(al, m)
    run = _err_segments(_stop_probability(al.grades, max_grade, "run"), al.offsets, al.lengths, k)
    ideal_stop = _stop_probability(al.label_grades, max_grade, "qrels")
    ideal = _err_segments(ideal_stop, al.label_offsets, al.label_lengths, k)
    return safe_divide(run, ideal)


@register(
    "compat",
    params=(
        Param("p", float, 0.95, "persistence of the rank-biased overlap", _persistence),
        Param("normalize", bool, True, "divide by the ideal ranking's overlap with itself"),
    ),
    summary="Compatibility: rank-biased overlap with an ideal ranking (ir_measures Compat)",
)
def compat(al: Aligned, m: Measure) -> FloatArray:
    """Compat = RBO(run, ideal) (Clarke, Vtyurina & Smucker 2021), normalised by RBO(ideal, ideal).

    RBO(A, B) = Σ_{d<D} p^d · |A_{d+1} ∩ B_{d+1}| / (d + 1) / Σ_{d<D} p^d over the depth
    D = max(|run|, |ideal|), ``A_n`` the top n. The ideal ranking holds the items of grade > 0
    by grade descending; equal grades in the run's order, then those not retrieved. An empty
    run and empty ideal → 0. Example: p = 0.5, run [a, b], ideal [b] → RBO = (0 + 0.5·½) / 1.5
    = 1/6, RBO(ideal, ideal) = (1 + 0.5·½) / 1.5 = 5/6, Compat = 0.2.
    """
    p = float(m.param("p"))
    out = np.zeros(al.n_queries, dtype=np.float64)
    for q in range(al.n_queries):
        out[q] = _compat_query(al, q, p, bool(m.param("normalize")))
    return out


def _compat_query(al: Aligned, q: int, p: float, normalize: bool) -> float:
    start, n = int(al.offsets[q]), int(al.lengths[q])
    grades = al.grades[start : start + n]
    labels = al.label_grades[al.label_offsets[q] : al.label_offsets[q + 1]]
    n_ideal = int((labels > 0).sum())
    depth = max(n, n_ideal)
    if depth == 0:
        return 0.0
    # the ideal position of each retrieved relevant item: items of a higher grade first, then
    # those of its grade ranked above it in the run
    relevant = np.flatnonzero((grades > 0) & (grades != NOT_JUDGED))
    g = grades[relevant]
    above = np.array([(labels > x).sum() for x in g], dtype=np.int64)
    same_before = np.array([(g[:i] == x).sum() for i, x in enumerate(g)], dtype=np.int64)
    ideal_pos = above + same_before
    # an item joins both prefixes at depth max(run position, ideal position)
    joins = np.bincount(np.maximum(relevant, ideal_pos), minlength=depth)[:depth]
    overlap = np.cumsum(joins)
    weights = np.cumprod(np.concatenate(([1.0], np.full(depth - 1, p))))
    sizes = np.arange(1, depth + 1, dtype=np.float64)
    score = float(np.sum(weights * overlap / sizes) / np.sum(weights))
    if not normalize:
        return score
    best = float(np.sum(weights * np.minimum(sizes, n_ideal) / sizes) / np.sum(weights))
    return score / best if best > 0.0 else score
