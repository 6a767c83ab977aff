"""Set-based metrics for the prompt set (SPEC §3; seed 000, RA-nWG, arXiv 2511.09545).

The LLM reads an unordered set of K passages, so order inside the top K does not matter. Per
query, over the labelled pool ``U(q)`` (all graded passages of the query, grades on the 1..5
utility scale):

* base utilities ``b5 = 1, b4 = 0.5, b3 = 0.1, b2 = b1 = 0``; ``n_g`` = count of grade g in U,
  ``p_g = n_g / |U|``; rarity ``r_g = b_g / p_g^α`` (``r_g = 0`` where ``p_g = 0``);
* weights ``w5 = 1, w4 = min(r4/r5, cap4), w3 = min(r3/r5, cap3), w2 = w1 = 0``
  (``cap4 = 1, cap3 = 0.25``); with no grade 5: ``w5 = 1, w4 = 1, w3 = 0.2`` (fallback);
* ``G_obs(K) = Σ_{d ∈ S_K} w(d)`` (unlabelled items weigh 0); ``G_ideal(K)`` = sum of the K
  largest weights in U; ``G_pool(K)`` the same over ``U ∩ P`` (P = the retriever's pool).

Grades on another scale are mapped with ``grade_map`` (``0:1,1:3,2:4,3:5`` for TREC 0..3); a
grade outside the scale is an error naming the query, doc and grade, never a silent zero.

Reference (pool grades [5,4,4,3,3,3,2,1], α = 1): w4 = 0.25, w3 = 1/30, G_ideal(4) = 1.5333…;
top-4 grades [4,3,3,3] → ra_nwg@4 = 0.35 / 1.5333… = 0.22826086956521735.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned
from ragmeter.errors import InputError, MissingInputError
from ragmeter.measures import BUDGET, FloatArray, Measure, Param, parses, register
from ragmeter.metrics._segments import (
    BoolArray,
    IntArray,
    cutoff_denominator,
    cutoff_per_query,
    safe_divide,
)

SCALE_MIN, SCALE_MAX = 1, 5


def _non_negative(value: float) -> str | None:
    return None if value >= 0 else "must be ≥ 0"


def _harm_grade(value: int) -> str | None:
    return None if value in (1, 2) else "must be 1 or 2"


def parse_grade_map(text: str) -> dict[int, int]:
    """Parse ``"0:1,1:3,2:4,3:5"`` into ``{0: 1, 1: 3, 2: 4, 3: 5}`` (targets on 1..5)."""
    mapping: dict[int, int] = {}
    for part in (p for p in text.replace(";", ",").split(",") if p.strip()):
        src, sep, dst = part.partition(":")
        if not sep:
            raise ValueError(f"must look like '0:1,1:3,2:4,3:5' (bad item '{part}')")
        try:
            a, b = int(src), int(dst)
        except ValueError:
            raise ValueError(f"must map integers to integers (bad item '{part}')") from None
        if not SCALE_MIN <= b <= SCALE_MAX:
            raise ValueError(f"maps {a} to {b}, outside the 1..5 scale")
        if a in mapping:
            raise ValueError(f"maps {a} twice")
        mapping[a] = b
    return mapping


GRADE_MAP = Param(
    "grade_map",
    str,
    "",
    "map qrels grades onto the 1..5 scale, e.g. '0:1,1:3,2:4,3:5' for TREC 0..3 "
    "(default: the evaluation's --grade-map, else grades are already 1..5)",
    parses(parse_grade_map),
)
WEIGHT_PARAMS: tuple[Param, ...] = (
    Param("alpha", float, 1.0, "rarity exponent α (0: no rarity adjustment)", _non_negative),
    Param("cap4", float, 1.0, "cap on w4", _non_negative),
    Param("cap3", float, 0.25, "cap on w3", _non_negative),
    Param("b5", float, 1.0, "base utility of grade 5", _non_negative),
    Param("b4", float, 0.5, "base utility of grade 4", _non_negative),
    Param("b3", float, 0.1, "base utility of grade 3", _non_negative),
    Param("fallback_w4", float, 1.0, "w4 when the pool has no grade 5", _non_negative),
    Param("fallback_w3", float, 0.2, "w3 when the pool has no grade 5", _non_negative),
    GRADE_MAP,
)
BUDGET_PARAM = Param(
    BUDGET,
    int,
    0,
    "token budget B, spelled name@Bt (ra_nwg@512t): the selection is the longest prefix of "
    "the run within B tokens, the ideal the best subset of the labels within B (needs "
    "passage lengths, --corpus)",
    lambda v: None if v >= 1 else "must be ≥ 1",
)
BUDGET_PARAMS: tuple[Param, ...] = (*WEIGHT_PARAMS, BUDGET_PARAM)
HARM_MAX_GRADE = Param(
    "harm_max_grade", int, 1, "labelled grades ≤ this are harmful (1 or 2)", _harm_grade
)


# -- grades on the utility scale -----------------------------------------------------------


def _grade_map(al: Aligned, m: Measure) -> str:
    return str(m.param("grade_map") or al.options.get("grade_map", "") or "")


def label_scale(al: Aligned, m: Measure) -> IntArray:
    """Utility-scale grade (1..5) of every judgment of ``al``.

    Raises :class:`InputError` naming the query, doc and grade of the first judgment outside
    the scale (after the grade map, if any).
    """
    text = _grade_map(al, m)

    def compute() -> IntArray:
        grades = al.label_grades.astype(np.int64)
        mapping = parse_grade_map(text)
        if mapping:
            keys = np.array(sorted(mapping), dtype=np.int64)
            values = np.array([mapping[k] for k in sorted(mapping)], dtype=np.int64)
            pos = np.clip(np.searchsorted(keys, grades), 0, len(keys) - 1)
            known = keys[pos] == grades
            mapped = np.where(known, values[pos], 0)
        else:
            known = (grades >= SCALE_MIN) & (grades <= SCALE_MAX)
            mapped = grades
        if not known.all():
            _scale_error(al, int(np.flatnonzero(~known)[0]), text)
        return mapped

    return al._cached(("label_scale", text), compute)


def _scale_error(al: Aligned, i: int, grade_map: str) -> None:
    query = al.query_ids[al.query_of_label[i]]
    doc = al.label_doc_id(i)
    grade = int(al.label_grades[i])
    if grade_map:
        reason = f"grade {grade} is not in the grade map '{grade_map}'"
    else:
        reason = (
            f"grade {grade} is outside the 1..5 utility scale; map the scale with "
            "--grade-map (e.g. 0:1,1:3,2:4,3:5 for TREC 0..3)"
        )
    raise InputError(f"query '{query}', doc '{doc}': {reason}", field="grade")


def item_scale(al: Aligned, m: Measure) -> IntArray:
    """Utility-scale grade of each retrieved item; 0 for an item without a judgment."""
    scale = label_scale(al, m)
    return np.where(al.item_label >= 0, scale[np.maximum(al.item_label, 0)], 0)


# -- weights ---------------------------------------------------------------------------------


def _weight_key(m: Measure, al: Aligned) -> tuple[object, ...]:
    names = ("alpha", "cap4", "cap3", "b5", "b4", "b3", "fallback_w4", "fallback_w3")
    return (*(m.param(n) for n in names), _grade_map(al, m))


def weight_table(al: Aligned, m: Measure) -> FloatArray:
    """Per-query weights indexed by utility grade: shape (n_queries, 6), column g = w_g."""

    def compute() -> FloatArray:
        scale = label_scale(al, m)
        counts = np.zeros((al.n_queries, SCALE_MAX + 1), dtype=np.float64)
        np.add.at(counts, (al.query_of_label, scale), 1.0)
        size = counts[:, SCALE_MIN:].sum(axis=1, keepdims=True)
        share = np.divide(counts, size, out=np.zeros_like(counts), where=size > 0)
        base = np.zeros(SCALE_MAX + 1)
        base[5], base[4], base[3] = m.param("b5"), m.param("b4"), m.param("b3")
        rarity = np.divide(
            np.broadcast_to(base, counts.shape),
            share ** float(m.param("alpha")),
            out=np.zeros_like(counts),
            where=share > 0,
        )
        has5 = counts[:, 5] > 0
        r5 = np.where(rarity[:, 5] > 0, rarity[:, 5], 1.0)
        weights = np.zeros_like(counts)
        weights[:, 5] = 1.0
        weights[:, 4] = np.where(
            has5, np.minimum(rarity[:, 4] / r5, m.param("cap4")), m.param("fallback_w4")
        )
        weights[:, 3] = np.where(
            has5, np.minimum(rarity[:, 3] / r5, m.param("cap3")), m.param("fallback_w3")
        )
        return weights

    return al._cached(("weight_table", _weight_key(m, al)), compute)


def label_weights(al: Aligned, m: Measure) -> FloatArray:
    """w(d) of every judgment."""
    return al._cached(
        ("label_weights", _weight_key(m, al)),
        lambda: weight_table(al, m)[al.query_of_label, label_scale(al, m)],
    )


def item_weights(al: Aligned, m: Measure) -> FloatArray:
    """w(d) of every retrieved item (0 without a judgment)."""

    def compute() -> FloatArray:
        w = label_weights(al, m)
        return np.where(al.item_label >= 0, w[np.maximum(al.item_label, 0)], 0.0)

    return al._cached(("item_weights", _weight_key(m, al)), compute)


def _sorted_label_weights(al: Aligned, m: Measure, *, pool_only: bool) -> FloatArray:
    """Label weights sorted descending within each query (pool-outside labels weigh 0)."""

    def compute() -> FloatArray:
        w = label_weights(al, m)
        if pool_only:
            w = np.where(pool_labels(al), w, 0.0)
        order = np.lexsort((-w, al.query_of_label))
        return w[order]

    return al._cached(("sorted_label_weights", pool_only, _weight_key(m, al)), compute)


def pool_labels(al: Aligned) -> BoolArray:
    """Judgments whose doc is in the candidate pool (the run itself when none was given)."""
    if al.label_in_pool is not None:
        return al.label_in_pool

    def compute() -> BoolArray:
        mask = np.zeros(len(al.label_grades), dtype=bool)
        mask[al.item_label[al.item_label >= 0]] = True
        return mask

    return al._cached("pool_labels_from_run", compute)


# -- running sums over the head of each query ----------------------------------------------
#
# A set measure at cutoff K reads only the first K items (or K best labels) of each query.
# They are gathered once into a (width × queries) matrix, zero-padded past the end of a short
# query, and summed with ``np.cumsum(axis=0)``: K vector additions of one row of O(queries),
# a sequential sum in rank order for every query, so row K-1 holds the value at K. The
# evaluation sets ``options["head_width"]`` to its largest set cutoff, so every cutoff (a
# sweep of K = 1..50 included) reads one row of one matrix, and every value equals the
# single-K value bit for bit (the first K rows of a cumsum do not depend on the width).

HEAD_WIDTH = "head_width"


def _width(al: Aligned, k: IntArray | None, lengths: IntArray) -> int:
    """Columns needed for cutoffs ``k`` over segments of ``lengths`` (a sweep may ask more)."""
    longest = int(lengths.max(initial=0))
    need = longest if k is None else int(k.max(initial=0))
    return max(0, min(max(need, int(al.options.get(HEAD_WIDTH, 0) or 0)), longest))


def _head(al: Aligned, side: str, width: int) -> IntArray:
    """Flat index of the first ``width`` items (``side="items"``) or labels of each query,
    shape (width, queries); -1 past the end of a query's segment."""

    def compute() -> IntArray:
        if side == "items":
            offsets, lengths = al.offsets, al.lengths
        else:
            offsets, lengths = al.label_offsets, al.label_lengths
        rows = np.arange(width, dtype=np.int64)[:, None]
        index: IntArray = np.where(rows < lengths[None, :], offsets[None, :-1] + rows, -1)
        return index

    return al._cached(("head", side, width), compute)


def _gather(values: npt.NDArray[Any], index: IntArray, fill: Any) -> npt.NDArray[Any]:
    """``values[index]`` with ``fill`` where ``index`` is -1."""
    padded = np.append(values, np.asarray([fill], dtype=values.dtype))
    return padded[index]


def _running(matrix: npt.NDArray[Any], dtype: type = np.float64) -> npt.NDArray[Any]:
    """Running sums down the rows: ``out[r] = out[r − 1] + matrix[r]`` (one vector addition
    per rank; ``np.cumsum(axis=0)`` gives the same values, three times slower)."""
    out: npt.NDArray[Any] = np.empty(matrix.shape, dtype=dtype)
    if len(matrix):
        out[0] = matrix[0]
        for r in range(1, len(matrix)):
            np.add(out[r - 1], matrix[r], out=out[r])
    return out


def _head_labels(al: Aligned, width: int) -> IntArray:
    """Judgment index of each head item (-1: no judgment or past the end)."""
    return al._cached(
        ("head_labels", width),
        lambda: _gather(al.item_label, _head(al, "items", width), -1),
    )


def _head_scale(al: Aligned, m: Measure, width: int) -> IntArray:
    """Utility grade of each head item (0: unlabelled or past the end)."""
    return al._cached(
        ("head_scale", width, _grade_map(al, m)),
        lambda: _gather(label_scale(al, m), _head_labels(al, width), 0),
    )


def _at(running: npt.NDArray[Any], k: IntArray | None) -> FloatArray:
    """Per query, the running sum at cutoff ``k`` (all rows when ``k`` is None)."""
    width, n = running.shape
    if width == 0 or n == 0:
        return np.zeros(n, dtype=np.float64)
    if k is None:
        last: FloatArray = running[width - 1].astype(np.float64)
        return last
    row = np.minimum(k, width)
    first = int(row[0])
    if first > 0 and bool((row == first).all()):  # one cutoff for all: one row
        same: FloatArray = running[first - 1].astype(np.float64)
        return same
    out: FloatArray = np.where(row > 0, running[np.maximum(row, 1) - 1, np.arange(n)], 0).astype(
        np.float64
    )
    return out


def _observed_gain(al: Aligned, m: Measure, k: IntArray | None) -> FloatArray:
    """``G_obs``: the weights of each query's top ``k`` items, summed in rank order."""
    width = _width(al, k, al.lengths)
    running = al._cached(
        ("observed_running", width, _weight_key(m, al)),
        lambda: _running(_gather(label_weights(al, m), _head_labels(al, width), 0.0)),
    )
    return _at(running, k)


def _ideal_gain(al: Aligned, m: Measure, k: IntArray | None, *, pool_only: bool) -> FloatArray:
    """``G_ideal`` (or ``G_pool``): the ``k`` largest label weights, summed largest first."""
    width = _width(al, k, al.label_lengths)

    def compute() -> FloatArray:
        values = _sorted_label_weights(al, m, pool_only=pool_only)
        return _running(_gather(values, _head(al, "labels", width), 0.0))

    running = al._cached(("ideal_running", pool_only, width, _weight_key(m, al)), compute)
    return _at(running, k)


def _count_head(al: Aligned, m: Measure, k: IntArray | None, low: int, high: int) -> FloatArray:
    """Per query, the top-``k`` items whose utility grade lies in ``low..high``."""
    width = _width(al, k, al.lengths)

    def compute() -> IntArray:
        scale = _head_scale(al, m, width)
        return _running((scale >= low) & (scale <= high), np.int32)

    running = al._cached(("count_running", low, high, width, _grade_map(al, m)), compute)
    return _at(running, k)


# -- token budgets --------------------------------------------------------------------------


def _tokens(al: Aligned, key: str, what: str) -> IntArray:
    tokens = al.side.get(key)
    if tokens is None:
        raise MissingInputError(
            f"{what}: a token budget needs passage lengths; pass --corpus "
            "(evaluate(..., passage_lengths=...))"
        )
    out: IntArray = tokens
    return out


def budget_cutoff(al: Aligned, budget: int, what: str = "budget") -> IntArray:
    """Per query, the length of the longest prefix of the run whose token lengths fit in B.

    ``n(q) = max{n : Σ_{i ≤ n} len(d_i) ≤ B}`` (lengths are ≥ 0, so the prefix sums rise).
    """

    def compute() -> IntArray:
        tokens = _tokens(al, "item_tokens", what)
        cs = np.cumsum(tokens, dtype=np.int64)
        before = np.concatenate([np.zeros(1, np.int64), cs])[al.offsets[:-1]]
        fits = (cs - np.repeat(before, al.lengths)) <= budget
        return np.bincount(al.query_of_item, weights=fits, minlength=al.n_queries).astype(np.int64)

    return al._cached(("budget_cutoff", budget), compute)


def knapsack_gain(al: Aligned, m: Measure, budget: int, *, pool_only: bool) -> FloatArray:
    """The best gain of a subset of each query's labels within ``budget`` tokens.

    ``max_{S ⊆ U, Σ_{d∈S} len(d) ≤ B} Σ_{d∈S} w(d)`` (over ``U ∩ P`` with ``pool_only``): an
    exact 0/1 knapsack by dynamic programming over token counts, ``best[c]`` = the best gain
    within ``c`` tokens, updated once per label, ``best[c] = max(best[c], best[c − len] + w)``.
    Labels of weight 0 or longer than B cannot help and are left out. Vectorized over queries:
    one (queries × (B+1)) table per chunk of queries, one step per label rank.
    """

    def compute() -> FloatArray:
        weights = label_weights(al, m)
        if pool_only:
            weights = np.where(pool_labels(al), weights, 0.0)
        tokens = _tokens(al, "label_tokens", str(m))
        use = (weights > 0) & (tokens <= budget)
        query = al.query_of_label[use]
        best = np.zeros(al.n_queries, dtype=np.float64)
        if not len(query):
            return best
        counts = np.bincount(query, minlength=al.n_queries)
        active = np.flatnonzero(counts)
        row_of = np.full(al.n_queries, -1, dtype=np.int64)
        row_of[active] = np.arange(len(active))
        starts = np.concatenate([[0], np.cumsum(counts)])[:-1]
        col = np.arange(len(query), dtype=np.int64) - starts[query]
        width = int(counts.max())
        gain = np.zeros((len(active), width), dtype=np.float64)
        size = np.full((len(active), width), budget + 1, dtype=np.int64)  # pads never fit
        gain[row_of[query], col] = weights[use]
        size[row_of[query], col] = tokens[use]
        capacity = np.arange(budget + 1, dtype=np.int64)
        chunk = max(1, (1 << 21) // (budget + 1))
        for lo in range(0, len(active), chunk):
            g, z = gain[lo : lo + chunk], size[lo : lo + chunk]
            table = np.zeros((len(g), budget + 1), dtype=np.float64)
            for j in range(width):
                source = capacity[None, :] - z[:, j, None]
                fits = source >= 0
                taken = np.take_along_axis(table, np.maximum(source, 0), axis=1) + g[:, j, None]
                table = np.where(fits & (taken > table), taken, table)
            best[active[lo : lo + chunk]] = table[:, budget]
        return best

    return al._cached(("knapsack", budget, pool_only, _weight_key(m, al)), compute)


# -- the measures --------------------------------------------------------------------------

#: every set-based measure takes a cutoff K and labels on the 1..5 utility scale
set_measure = partial(
    register, cutoff="required", grade_scale=(SCALE_MIN, SCALE_MAX), shared_head=True
)


@set_measure("ra_nwg", params=BUDGET_PARAMS, summary="Rarity-aware nWG@K (or @Bt tokens)")
def ra_nwg(al: Aligned, m: Measure) -> FloatArray:
    """RA-nWG@K = G_obs(K) / G_ideal(K); NA if G_ideal = 0.

    ``G_obs`` sums the weights of the top K retrieved items (order inside K does not matter);
    ``G_ideal`` is the sum of the K largest weights of the labelled pool. Reference: pool
    [5,4,4,3,3,3,2,1], top-4 grades [4,3,3,3] → (0.25 + 3/30) / (1 + 0.25 + 0.25 + 1/30)
    = 0.22826086956521735.

    With a token budget (``ra_nwg@512t``): ``G_obs`` sums the longest prefix of the run whose
    lengths fit in B, ``G_ideal`` is the best subset of the labelled pool within B (0/1
    knapsack, see :func:`knapsack_gain`); NA if ``G_ideal = 0``.
    """
    budget = m.budget
    if budget is not None:
        observed = _observed_gain(al, m, budget_cutoff(al, budget, str(m)))
        ideal = knapsack_gain(al, m, budget, pool_only=False)
        return safe_divide(observed, ideal, empty=np.nan)
    k = cutoff_per_query(al, m)
    observed = _observed_gain(al, m, k)
    return safe_divide(observed, _ideal_gain(al, m, k, pool_only=False), empty=np.nan)


#: PROC and %PROC, read at a K or a token budget, compare with what the retriever's pool holds
_pool_measure = partial(set_measure, params=BUDGET_PARAMS, uses_pool=True)


@_pool_measure("proc", summary="Pool-restricted oracle of RA-nWG@K")
def proc(al: Aligned, m: Measure) -> FloatArray:
    """PROC@K = G_pool(K) / G_ideal(K): the best any choice of K pool passages could score.

    ``G_pool`` sums the K largest weights among the labelled passages the retriever's pool
    holds. Low PROC means the retriever never found the evidence. NA if G_ideal = 0.
    With a token budget (``proc@512t``) both are knapsack optima within B tokens, ``G_pool``
    over the pool's labels only.
    """
    budget = m.budget
    if budget is not None:
        return safe_divide(
            knapsack_gain(al, m, budget, pool_only=True),
            knapsack_gain(al, m, budget, pool_only=False),
            empty=np.nan,
        )
    k = cutoff_per_query(al, m)
    return safe_divide(
        _ideal_gain(al, m, k, pool_only=True),
        _ideal_gain(al, m, k, pool_only=False),
        empty=np.nan,
    )


@_pool_measure("pct_proc", summary="RA-nWG@K as a share of PROC@K")
def pct_proc(al: Aligned, m: Measure) -> FloatArray:
    """%PROC@K = RA-nWG@K / PROC@K: the share of what the pool allowed that the selection got.

    Low %PROC with high PROC means the reranker (selection) failed. NA if PROC = 0 or
    undefined. Exceeds 1 only when the selection holds labelled items the pool lacks.
    """
    return safe_divide(ra_nwg(al, m), proc(al, m), empty=np.nan)


def _labels_at_least(al: Aligned, m: Measure, grade: int, *, pool_only: bool) -> FloatArray:
    def compute() -> FloatArray:
        mask = label_scale(al, m) >= grade
        if pool_only:
            mask = mask & pool_labels(al)
        return np.bincount(al.query_of_label, weights=mask, minlength=al.n_queries).astype(
            np.float64
        )

    return al._cached(("labels_at_least", grade, pool_only, _grade_map(al, m)), compute)


def _found_at_least(al: Aligned, m: Measure, grade: int) -> tuple[FloatArray, IntArray | None]:
    k = cutoff_per_query(al, m)
    return _count_head(al, m, k, grade, SCALE_MAX), k


def _normalized_recall(al: Aligned, m: Measure, grade: int) -> FloatArray:
    found, k = _found_at_least(al, m, grade)
    total = _labels_at_least(al, m, grade, pool_only=False)
    return safe_divide(found, np.minimum(cutoff_denominator(al, k), total), empty=np.nan)


@set_measure("n_recall4p", params=(GRADE_MAP,))
def n_recall4p(al: Aligned, m: Measure) -> FloatArray:
    """N-Recall4+@K = #{d ∈ S_K : g ≥ 4} / min(K, R4+), R4+ = n4 + n5; NA if R4+ = 0."""
    return _normalized_recall(al, m, 4)


@set_measure("n_recall5", params=(GRADE_MAP,))
def n_recall5(al: Aligned, m: Measure) -> FloatArray:
    """N-Recall5@K = #{d ∈ S_K : g = 5} / min(K, R5), R5 = n5; NA if R5 = 0."""
    return _normalized_recall(al, m, 5)


@set_measure("proc_n_recall4p", params=(GRADE_MAP,), uses_pool=True)
def proc_n_recall4p(al: Aligned, m: Measure) -> FloatArray:
    """Pool oracle of N-Recall4+: min(K, #{d ∈ U ∩ P : g ≥ 4}) / min(K, R4+); NA if R4+ = 0."""
    kk = cutoff_denominator(al, cutoff_per_query(al, m))
    in_pool = _labels_at_least(al, m, 4, pool_only=True)
    total = _labels_at_least(al, m, 4, pool_only=False)
    return safe_divide(np.minimum(kk, in_pool), np.minimum(kk, total), empty=np.nan)


@set_measure("precision4p", params=(GRADE_MAP,))
def precision4p(al: Aligned, m: Measure) -> FloatArray:
    """Precision4+@K = #{d ∈ S_K : g ≥ 4} / K (empty slots count in K)."""
    found, k = _found_at_least(al, m, 4)
    return safe_divide(found, cutoff_denominator(al, k))


@set_measure("harm", params=(HARM_MAX_GRADE, GRADE_MAP))
def harm(al: Aligned, m: Measure) -> FloatArray:
    """Harm@K = #{labelled d ∈ S_K : g ≤ h} / K, h = harm_max_grade (1 or 2).

    Unlabelled items and empty slots (a run shorter than K) are not harmful.
    """
    h = int(m.param("harm_max_grade"))
    k = cutoff_per_query(al, m)
    count = _count_head(al, m, k, SCALE_MIN, h)
    return safe_divide(count, cutoff_denominator(al, k))
