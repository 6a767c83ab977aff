"""Segment arithmetic shared by the metric families.

All helpers work on the flat arrays of an :class:`~ragmeter.core.align.Aligned` view: per-item
masks are reduced per query with ``np.bincount`` (no Python loop over queries), and cutoffs
are applied by comparing ranks with a per-query cutoff array. Measures that read only the
relevant items (P, recall, RR, AP, nDCG, bpref…) take them as :class:`Hits`, found in one pass,
and then cost O(relevant items + queries) per cutoff.

Every floating-point sum adds in rank order, one term after the other, as trec_eval does (see
:mod:`ragmeter.core.sums`): ``np.bincount`` with weights accumulates in item order, and
:func:`sum_within` uses :func:`~ragmeter.core.sums.segment_sums`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned
from ragmeter.core.sums import log2_of_int, segment_sums
from ragmeter.measures import FloatArray, Measure

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def cutoff_per_query(al: Aligned, m: Measure) -> IntArray | None:
    """The cutoff of each query: ``metadata.k`` > the measure's ``@k``; ``None`` = no cutoff.

    A per-query override applies only where one was given (``cutoffs[q] >= 0``).
    """
    base = None if m.k is None else int(m.k)

    def compute() -> IntArray | None:
        if al.cutoffs is None or not (al.cutoffs >= 0).any():
            return None if base is None else np.full(al.n_queries, base, dtype=np.int64)
        fallback = np.iinfo(np.int64).max if base is None else base
        out: IntArray = np.where(al.cutoffs >= 0, al.cutoffs, fallback).astype(np.int64)
        return out

    # Sweeps ask for the same cutoff once per measure: build each array once.
    return al._cached(("cutoff_per_query", base), compute)


def within(al: Aligned, k: IntArray | None) -> BoolArray:
    """Mask of items ranked at or above their query's cutoff."""
    if k is None:
        return np.ones(len(al.grades), dtype=bool)
    return al.ranks <= k[al.query_of_item]


def per_query_sum(al: Aligned, values: npt.ArrayLike) -> FloatArray:
    """Sum of per-item ``values`` within each query, added in rank order.

    ``np.bincount`` adds ``weights[i]`` to its bin for ``i = 0, 1, …``: a sequential sum in
    item (rank) order, as trec_eval's per-query loops.
    """
    return np.bincount(al.query_of_item, weights=values, minlength=al.n_queries).astype(np.float64)


def per_query_count(al: Aligned, mask: BoolArray) -> FloatArray:
    """Count of items of ``mask`` within each query."""
    return per_query_sum(al, mask)


def first_rank(al: Aligned, mask: BoolArray) -> IntArray:
    """Rank of the first item of ``mask`` in each query; 0 where none."""
    return first_ranks(al.n_queries, al.query_of_item, al.ranks, mask)


def first_ranks(n_queries: int, query: IntArray, ranks: IntArray, mask: BoolArray) -> IntArray:
    """Of items in query order (``query``: each one's query, ``ranks``: its rank), the rank of
    the first item of ``mask`` in each of the ``n_queries`` queries; 0 where none."""
    out = np.zeros(n_queries, dtype=np.int64)
    idx = np.flatnonzero(mask)
    if len(idx):
        q = query[idx]
        first = np.ones(len(idx), dtype=bool)
        first[1:] = q[1:] != q[:-1]
        out[q[first]] = ranks[idx[first]]
    return out


def running_count(al: Aligned, mask: BoolArray) -> IntArray:
    """For each item, the number of ``mask`` items at or above it in its query."""
    cs = np.cumsum(mask, dtype=np.int64)
    before_segment = np.concatenate([np.zeros(1, dtype=np.int64), cs])[al.offsets[:-1]]
    out: IntArray = cs - np.repeat(before_segment, al.lengths)
    return out


def safe_divide(num: FloatArray, den: npt.ArrayLike, *, empty: float = 0.0) -> FloatArray:
    """``num / den`` with ``empty`` where ``den == 0`` (``np.nan`` for NA)."""
    den_arr = np.asarray(den, dtype=np.float64)
    out = np.full(len(num), empty, dtype=np.float64)
    np.divide(num, den_arr, out=out, where=den_arr != 0)
    return out


def cutoff_denominator(al: Aligned, k: IntArray | None) -> FloatArray:
    """The ``k`` of each query (its retrieved length when there is no cutoff)."""
    if k is None:
        return al.lengths.astype(np.float64)
    return k.astype(np.float64)


def discount(ranks: IntArray) -> FloatArray:
    """``1 / log2(rank + 1)``."""
    return 1.0 / np.log2(ranks.astype(np.float64) + 1.0)


def discounted(gains: FloatArray, ranks: npt.NDArray[np.integer[Any]]) -> FloatArray:
    """``gain / log2(rank + 1)`` of each item, divided as trec_eval's DCG terms.

    ``gain · (1 / log2(r + 1))`` can differ in the last bit; the log is the C library's.
    """
    out: FloatArray = gains / log2_of_int(ranks.astype(np.int64) + 1)
    return out


def _segment_ends(
    offsets: IntArray, lengths: IntArray, k: IntArray | None
) -> tuple[IntArray, IntArray]:
    starts = offsets[:-1]
    if k is None:
        return starts, offsets[1:]
    return starts, starts + np.minimum(k, lengths)


def count_within(al: Aligned, key: object, mask: BoolArray, k: IntArray | None) -> FloatArray:
    """Per query, the number of ``mask`` items among the first ``k`` (all if ``k`` is None).

    One cached integer prefix sum per mask (``key`` names it), then O(queries) index
    arithmetic per cutoff: exact, and ten cutoffs cost one pass over the items.
    """

    def compute() -> IntArray:
        # int32 holds any count below 2^31 items and halves this cached array
        dtype = np.int32 if len(mask) < np.iinfo(np.int32).max else np.int64
        prefix = np.zeros(len(mask) + 1, dtype=dtype)
        np.cumsum(mask, dtype=dtype, out=prefix[1:])
        return prefix  # type: ignore[return-value]

    prefix = al._cached(("prefix", key), compute)
    starts, ends = _segment_ends(al.offsets, al.lengths, k)
    counts: FloatArray = (prefix[ends] - prefix[starts]).astype(np.float64)
    return counts


@dataclass(frozen=True)
class Hits:
    """The elements of CSR segments with a value ≥ a floor, compressed (e.g. the relevant
    items of each query).

    Relevant items are a few in a hundred: a measure that reads only them (a count, the first
    one, a sum of terms that are 0 elsewhere) costs one pass over the values to find them and
    then O(hits + segments), without a per-item array of ranks, counts or zero terms.
    """

    #: flat position of each hit, ascending
    index: IntArray
    #: CSR offsets of each segment's hits in ``index`` (segments + 1 entries)
    bounds: IntArray
    #: 1-based rank of each hit within its segment
    ranks: IntArray
    #: 1-based position of each hit among its segment's hits (its running count)
    counts: IntArray
    #: whether each segment's hits are its first elements (``ranks == counts``)
    leading: bool = False


def hits(values: npt.NDArray[np.integer[Any]], offsets: IntArray, floor: int) -> Hits:
    """The elements ``values[i] >= floor`` of the CSR segments ``offsets``."""
    index = np.flatnonzero(values >= floor)
    depth = _fixed_depth(offsets)
    if depth:  # a run cut at one depth: a hit's segment and rank are a division away
        shifted = index - int(offsets[0])
        per_segment = np.bincount(shifted // depth, minlength=len(offsets) - 1)
        bounds = np.zeros(len(offsets), dtype=np.int64)
        np.cumsum(per_segment, out=bounds[1:])
        ranks = shifted % depth + 1
    else:
        bounds = np.searchsorted(index, offsets)
        per_segment = np.diff(bounds)
        ranks = index - np.repeat(offsets[:-1].astype(np.int64), per_segment) + 1
    counts = np.arange(1, len(index) + 1, dtype=np.int64)
    counts -= np.repeat(bounds[:-1], per_segment)
    return Hits(index, bounds, ranks, counts)


def _fixed_depth(offsets: IntArray) -> int:
    """The length of every CSR segment when they all have one (> 0), else 0."""
    if len(offsets) < 2:
        return 0
    lengths = np.diff(offsets)
    depth = int(lengths[0])
    return depth if depth > 0 and bool((lengths == depth).all()) else 0


def leading_hits(offsets: IntArray, counts: IntArray) -> Hits:
    """The first ``counts[s]`` elements of each CSR segment ``s`` as :class:`Hits` (the
    judgments of a query with grade ≥ a floor, its grades sorted descending)."""
    bounds = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=bounds[1:])
    first = np.repeat(bounds[:-1], counts)
    ranks = np.arange(1, int(bounds[-1]) + 1, dtype=np.int64)
    ranks -= first
    index = ranks - 1
    index += np.repeat(offsets[:-1].astype(np.int64), counts)
    return Hits(index, bounds, ranks, ranks, leading=True)


def hit_window(
    h: Hits, offsets: IntArray, lengths: IntArray, k: IntArray | None
) -> tuple[IntArray, IntArray]:
    """Per segment, the range ``[lo, hi)`` of ``h`` within the first ``k`` elements (all
    if ``k`` is None): ``hi - lo`` hits are ranked at or above the cutoff."""
    lo, hi = h.bounds[:-1], h.bounds[1:]
    if k is None or bool((k >= lengths).all()):
        return lo, hi
    if h.leading:  # the first min(k, hits) of them
        return lo, lo + np.minimum(k, hi - lo)
    # a segment's hits are in rank order: those within its cutoff are the first of them, as
    # many as have a rank ≤ k (a prefix count over the hits; a bisection per segment took
    # three times as long)
    lowest = int(k.min())  # k has an element: not every k is ≥ its length
    cut = lowest if lowest == int(k.max()) else np.repeat(k, hi - lo)
    inside = np.zeros(len(h.ranks) + 1, dtype=np.int64)
    np.cumsum(h.ranks <= cut, out=inside[1:])
    return lo, lo + (inside[hi] - inside[lo])


def hit_sums(terms: FloatArray, lo: IntArray, hi: IntArray) -> FloatArray:
    """Per segment, ``terms[lo] + … + terms[hi - 1]`` added in rank order.

    The same bits as :func:`sum_within` over the uncompressed terms when the terms of the
    elements that are not hits are 0.0: adding 0.0 to a sum leaves it unchanged.
    """
    if len(terms) == 0:
        return np.zeros(len(lo), dtype=np.float64)
    return segment_sums(terms, lo, hi)


def sum_within(
    values: FloatArray, offsets: IntArray, lengths: IntArray, k: IntArray | None
) -> FloatArray:
    """Per segment, the sum of the first ``k`` ``values`` (all if ``k`` is None).

    Added in rank order, one term after the other (:func:`ragmeter.core.sums.segment_sums`),
    as a per-query loop would: no pairwise rounding, no cancellation from differences of a
    global running sum.
    """
    starts, ends = _segment_ends(offsets, lengths, k)
    if len(values) == 0:
        return np.zeros(len(offsets) - 1, dtype=np.float64)
    return segment_sums(values, starts, ends)
