"""trec_eval's gain map and ideal ranking, shared by the classical ``ndcg``/``dcg`` (with a
``gains`` parameter, :mod:`ragmeter.metrics.ranking`) and the gain-based measures of
:mod:`ragmeter.metrics.trec_measures` (``idcg``, ``ndcg_rel``, ``rndcg``, ``G``, ``rbp``).

The gain of a judged grade ``g`` is ``g`` unless the ``gains`` parameter (``"1=3,2=9,4=4.5"``,
level=gain pairs) overrides it; unjudged items have gain 0. The *ideal ranking* lists the
query's judged items with positive gain, gain descending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragmeter.core import sums
from ragmeter.core.align import NOT_JUDGED, Aligned
from ragmeter.errors import MeasureError
from ragmeter.measures import FloatArray, Measure
from ragmeter.metrics._segments import IntArray, cutoff_per_query, discounted, per_query_sum, within

_INT = re.compile(r"[+-]?[0-9]+")  # ASCII digits, as C isdigit


def parse_gains(text: str | None) -> tuple[tuple[int, float], ...]:
    """Parse a gain map ``"1=3,2=9,4=4.5"`` into ``((1, 3.0), (2, 9.0), (4, 4.5))``.

    A pair whose level is not an integer (such as ``p=0.95`` of ``rbp``) is skipped, as
    trec_eval 10.0 does; the first pair for a level wins.
    """
    if not text:
        return ()
    pairs: list[tuple[int, float]] = []
    seen: set[int] = set()
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep:
            raise MeasureError(f"gains: '{part}' is not of the form level=gain")
        try:
            gain = float(value)
        except ValueError:
            raise MeasureError(f"gains: gain '{value}' is not a number") from None
        if not _INT.fullmatch(name.strip()):
            continue
        level = int(name)
        if level not in seen:
            seen.add(level)
            pairs.append((level, gain))
    return tuple(pairs)


def trec_levels(grades: npt.NDArray[np.int32]) -> IntArray:
    """trec_eval's relevance value: the grade if judged, -1 if not in the pool, -2 if unjudged."""
    g = grades.astype(np.int64)
    return np.where(grades == NOT_JUDGED, -1, np.where(g < 0, -2, g))


def gain_of(levels: IntArray, pairs: tuple[tuple[int, float], ...]) -> FloatArray:
    """Gain of each trec relevance value: the mapped gain, else the level itself (≥ 0), else 0."""
    gains = np.where(levels > 0, levels, 0).astype(np.float64)
    for level, gain in pairs:
        gains = np.where(levels == level, gain, gains)
    return gains


def item_gains(al: Aligned, m: Measure) -> FloatArray:
    """Gain of every retrieved item under the measure's gain map."""
    return gain_of(trec_levels(al.grades), parse_gains(m.param("gains")))


@dataclass(frozen=True)
class Ideal:
    """The ideal ranking of every query: its judged items with positive gain, gain descending.

    Attributes:
        gains: flat ideal gains, one CSR segment per query.
        offsets: CSR offsets (length ``n_queries + 1``).
        npos: number of ideal items per query.
        cum_dcg: running ideal DCG within each query, ``Σ_{j≤i} gain_j / log2(j + 1)``.
    """

    gains: FloatArray
    offsets: IntArray
    npos: IntArray
    cum_dcg: FloatArray

    def dcg_at(self, k: IntArray) -> FloatArray:
        """IDCG@k per query (k ≥ npos gives the full ideal DCG; k = 0 gives 0)."""
        kk = np.minimum(k, self.npos)
        out = np.zeros(len(k), dtype=np.float64)
        ok = kk > 0
        out[ok] = self.cum_dcg[(self.offsets[:-1] + kk - 1)[ok]]
        return out

    @property
    def total(self) -> FloatArray:
        return self.dcg_at(self.npos)


def ideal(al: Aligned, m: Measure) -> Ideal:
    """The ideal ranking of every query under the measure's gain map (cached per gain map)."""
    text = m.param("gains")

    def build() -> Ideal:
        levels = al.label_grades.astype(np.int64)
        gains = gain_of(levels, parse_gains(text))
        keep = (levels >= 0) & (gains > 0)
        q = al.query_of_label[keep]
        g = gains[keep]
        order = np.lexsort((-g, q))
        g = g[order]
        q = q[order]
        npos = np.bincount(q, minlength=al.n_queries).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(npos)]).astype(np.int64)
        pos = np.arange(len(g), dtype=np.int64) - np.repeat(offsets[:-1], npos) + 1
        cum = sums.segment_cumsum(discounted(g, pos), offsets)
        return Ideal(g, offsets, npos, cum)

    key = ("trec_ideal", text)
    if key not in al._cache:
        al._cache[key] = build()
    cached = al._cache[key]
    assert isinstance(cached, Ideal)
    return cached


def per_query_sum_ideal(al: Aligned, ide: Ideal) -> FloatArray:
    """Σ of the ideal gains of each query."""
    q = np.repeat(np.arange(al.n_queries, dtype=np.int64), ide.npos)
    return np.bincount(q, weights=ide.gains, minlength=al.n_queries).astype(np.float64)


def gain_dcg(al: Aligned, m: Measure) -> FloatArray:
    """DCG@k under the gain map: Σ_{r ≤ k, g_r ≠ 0} g_r / log2(r + 1) (gains may be negative)."""
    k = cutoff_per_query(al, m)
    terms = discounted(item_gains(al, m), al.ranks)
    return per_query_sum(al, np.where(within(al, k), terms, 0.0))


def gain_ndcg(al: Aligned, m: Measure) -> FloatArray:
    """nDCG@k = DCG@k / IDCG@k under the gain map; IDCG ≤ 0 → 0."""
    k = cutoff_per_query(al, m)
    ide = ideal(al, m)
    idcg = ide.total if k is None else ide.dcg_at(k)
    out = np.zeros(al.n_queries, dtype=np.float64)
    dcg = gain_dcg(al, m)
    ok = idcg > 0
    out[ok] = dcg[ok] / idcg[ok]
    return out
