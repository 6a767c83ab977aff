"""User-model measures of the C/W/L framework (Moffat et al.; Azzopardi, Thomas & Moffat
2019), with cwl_eval's definitions (ir_measures' ``SDCG@k``, ``INST``, ``INSQ``).

A C/W/L measure is the expected rate of gain, Σ_i W_i · g_i, where a user goes on from rank i
to i + 1 with probability ``C_i``, and ``W_i = Π_{j<i} C_j / Σ_{n≤N} Π_{j<n} C_j`` is the
share of attention rank i gets. As cwl_eval, the ranking is read to depth N = 1000 (padded
with gain 0, cut there), and each grade becomes a gain in [0, 1]:
``g = (clip(grade, min_rel, max_rel) − min_rel) / (max_rel − min_rel)``, negative grades and
unjudged items counting as 0 first.

* ``sdcg@k``: ``C_i = log2(i+1)/log2(i+2)`` for i < k, else 0 → scaled DCG,
  Σ_{i≤k} g_i / log2(i+1) ÷ Σ_{i≤k} 1 / log2(i+1).
* ``inst(T)``: ``C_i = ((i + T + T_i − 1) / (i + T + T_i))²``, ``T_i = T − Σ_{j≤i} g_j``
  (Moffat et al. 2015: the user stops sooner once the T units of gain they wanted arrive).
* ``insq(T)``: ``C_i = ((i + 2T − 1) / (i + 2T))²`` (Moffat et al. 2012).
* ``bpm(T)@K``: ``C_i = 1`` while ``Σ_{j≤i} g_j < T`` and ``i < K``, else 0 (the static
  Bejewelled Player Model, Zhang et al. 2017: the user stops at the T-th unit of gain or the
  K-th item, whichever comes first).
* ``nerr8@K``: ``C_i = 1 − g_i`` for i < K, else 0; ``nerr9@K``: ``C_i = i/(i+1) · (1 − g_i)``
  for i < K, else 0; ``nerr10(p)``: ``C_i = p · (1 − g_i)``; ``nerr11(T)``: ``C_i = ((i + 2T −
  1) / (i + 2T))² · (1 − g_i)`` — the four "not (but nearly) ERR" measures of Azzopardi, Mackenzie
  & Moffat (ICTIR 2021, equations 8–11): ERR's stop-when-satisfied as a C/W/L continuation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragmeter.core.align import NOT_JUDGED, Aligned
from ragmeter.errors import MeasureError
from ragmeter.measures import FloatArray, Measure, Param, register

#: cwl_eval's depth: rankings are padded or cut to this many items
DEPTH = 1000


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be > 0"


MIN_REL = Param("min_rel", int, 0, "the grade that gains 0 (lower grades too)")
MAX_REL = Param(
    "max_rel",
    int,
    None,
    "the grade that gains 1, higher grades too (default: the highest grade of the qrels)",
)
TARGET = Param("T", float, 1.0, "the gain T the user wants (INST, INSQ)", _positive)

Continue = Callable[[FloatArray], FloatArray]


def _scaled_gains(al: Aligned, m: Measure) -> FloatArray:
    low, high = int(m.param("min_rel")), m.param("max_rel")
    if high is None:
        high = int(al.label_grades.max()) if len(al.label_grades) else low + 1
        high = max(high, low + 1)  # no grade above min_rel: every gain is 0 anyway
    if not low < int(high):
        raise MeasureError(f"{m}: min_rel must be below max_rel")
    grades = np.where(al.grades == NOT_JUDGED, 0, np.maximum(al.grades, 0)).astype(np.float64)
    out: FloatArray = (np.clip(grades, low, int(high)) - low) / (int(high) - low)
    return out


def _expected_rate(al: Aligned, m: Measure, cont: Continue) -> FloatArray:
    """Per query Σ_i W_i g_i over the first DEPTH ranks, ``cont(gains)`` giving C_1..C_N."""
    gains = _scaled_gains(al, m)
    out = np.zeros(al.n_queries, dtype=np.float64)
    for q in range(al.n_queries):
        g = np.zeros(DEPTH)
        top = gains[al.offsets[q] : al.offsets[q + 1]][:DEPTH]
        g[: len(top)] = top
        c = cont(g)
        reach = np.concatenate(([1.0], np.cumprod(c[:-1])))
        out[q] = float(np.dot(reach / reach.sum(), g))
    return out


@register("sdcg", cutoff="required", params=(MIN_REL, MAX_REL))
def sdcg(al: Aligned, m: Measure) -> FloatArray:
    """SDCG@k = Σ_{i≤k} g_i / log2(i+1) ÷ Σ_{i≤k} 1 / log2(i+1), g scaled to [0, 1].

    Scaled DCG (cwl_eval's NDCG): normalised by a ranking of k items of gain 1, not by the
    ideal of the judgments. Example: max_rel = 2, grades [2, 0, 1] → (1 + 0.5/2) / (1 + 1/log2 3
    + 1/2) = 0.5866.
    """
    k = int(m.k if m.k is not None else 0)
    if k > DEPTH:
        raise MeasureError(f"{m}: cutoff above cwl_eval's depth {DEPTH}")
    ranks = np.arange(1, DEPTH + 1, dtype=np.float64)
    cont = np.where(ranks < k, np.log2(ranks + 1.0) / np.log2(ranks + 2.0), 0.0)
    return _expected_rate(al, m, lambda g: cont)


@register("inst", params=(TARGET, MIN_REL, MAX_REL))
def inst(al: Aligned, m: Measure) -> FloatArray:
    """INST = Σ_i W_i g_i with C_i = ((i + T + T_i − 1) / (i + T + T_i))², T_i = T − Σ_{j≤i} g_j."""
    t = float(m.param("T"))
    ranks = np.arange(1, DEPTH + 1, dtype=np.float64)

    def cont(g: FloatArray) -> FloatArray:
        left = t - np.cumsum(g)
        out: FloatArray = ((ranks + t + left - 1.0) / (ranks + t + left)) ** 2
        return out

    return _expected_rate(al, m, cont)


@register("insq", params=(TARGET, MIN_REL, MAX_REL))
def insq(al: Aligned, m: Measure) -> FloatArray:
    """INSQ = Σ_i W_i g_i with C_i = ((i + 2T − 1) / (i + 2T))²."""
    t = float(m.param("T"))
    ranks = np.arange(1, DEPTH + 1, dtype=np.float64)
    cont = ((ranks + 2.0 * t - 1.0) / (ranks + 2.0 * t)) ** 2
    return _expected_rate(al, m, lambda g: cont)


def _persistence(value: float) -> str | None:
    return None if 0.0 < value < 1.0 else "must be in (0, 1)"


NERR_P = Param("p", float, 0.9, "the persistence p of NERR10 (cwl_eval's 0.9)", _persistence)
#: ranks 1..DEPTH
_RANKS = np.arange(1, DEPTH + 1, dtype=np.float64)


def _cwl_cutoff(m: Measure) -> int:
    k = int(m.k if m.k is not None else 0)
    if k > DEPTH:
        raise MeasureError(f"{m}: cutoff above cwl_eval's depth {DEPTH}")
    return k


@register("bpm", cutoff="required", params=(TARGET, MIN_REL, MAX_REL))
def bpm(al: Aligned, m: Measure) -> FloatArray:
    """BPM(T)@K = Σ_i W_i g_i with C_i = [Σ_{j≤i} g_j < T and i < K] (static BPM).

    Example: T = 1, K = 10, gains [0, 1, 1]: C = (1, 0, …), W = (1/2, 1/2) → BPM = 0.5.
    """
    t, k = float(m.param("T")), _cwl_cutoff(m)

    def cont(g: FloatArray) -> FloatArray:
        out: FloatArray = ((np.cumsum(g) < t) & (k > _RANKS)).astype(np.float64)
        return out

    return _expected_rate(al, m, cont)


@register("nerr8", cutoff="required", params=(MIN_REL, MAX_REL))
def nerr8(al: Aligned, m: Measure) -> FloatArray:
    """NERR8@K = Σ_i W_i g_i with C_i = 1 − g_i for i < K, else 0 (NERR eq. 8).

    Example: K = 10, gains [0.5, 1]: C = (0.5, 0), W = (1/1.5, 0.5/1.5) → 2/3 · 0.5 + 1/3 = 2/3.
    """
    k = _cwl_cutoff(m)
    return _expected_rate(al, m, lambda g: np.where(k > _RANKS, 1.0 - g, 0.0))


@register("nerr9", cutoff="required", params=(MIN_REL, MAX_REL))
def nerr9(al: Aligned, m: Measure) -> FloatArray:
    """NERR9@K = Σ_i W_i g_i with C_i = i/(i+1) · (1 − g_i) for i < K, else 0 (NERR eq. 9)."""
    k = _cwl_cutoff(m)
    scale = _RANKS / (_RANKS + 1.0)
    return _expected_rate(al, m, lambda g: np.where(k > _RANKS, scale * (1.0 - g), 0.0))


@register("nerr10", params=(NERR_P, MIN_REL, MAX_REL))
def nerr10(al: Aligned, m: Measure) -> FloatArray:
    """NERR10(p) = Σ_i W_i g_i with C_i = p · (1 − g_i) over the whole ranking (NERR eq. 10)."""
    p = float(m.param("p"))
    return _expected_rate(al, m, lambda g: p * (1.0 - g))


@register("nerr11", params=(TARGET, MIN_REL, MAX_REL))
def nerr11(al: Aligned, m: Measure) -> FloatArray:
    """NERR11(T) = Σ_i W_i g_i with C_i = ((i + 2T − 1) / (i + 2T))² · (1 − g_i) (NERR eq. 11)."""
    t = float(m.param("T"))
    insq_cont = ((_RANKS + 2.0 * t - 1.0) / (_RANKS + 2.0 * t)) ** 2
    return _expected_rate(al, m, lambda g: insq_cont * (1.0 - g))
