"""Classical ranking metrics (SPEC §2), computed on the aligned arrays.

Notation: ``D_k`` the top-k retrieved items of a query, ``Rel`` its relevant set
(grade ≥ ``rel_level``), ``R = |Rel|``, ``rel_i ∈ {0, 1}`` the relevance at rank ``i``.
Unjudged retrieved items count as grade 0. A run shorter than ``k`` leaves empty slots that are
never relevant, and denominators that are "k" stay k. Every function returns one float per
evaluated query.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ragmeter.core import sums
from ragmeter.core.align import Aligned, judged_only
from ragmeter.errors import MeasureError
from ragmeter.measures import FloatArray, Measure, Param, parses, register
from ragmeter.metrics._segments import (
    Hits,
    cutoff_denominator,
    cutoff_per_query,
    discounted,
    hit_sums,
    hit_window,
    hits,
    leading_hits,
    safe_divide,
)
from ragmeter.metrics.gains import gain_dcg, gain_ndcg, parse_gains

#: the classical measures read the queries' number, never their ids
_register = functools.partial(register, reads_query_ids=False)


def _positive(value: int | float) -> str | None:
    return None if value > 0 else "must be > 0"


def _not_negative(value: int) -> str | None:
    # below 0 an unjudged document (grade 0 by convention) would count as relevant while
    # num_rel, which counts judged documents only, would not count it (trec_eval's -l -2)
    return None if value >= 0 else "must be at least 0"


REL_LEVEL = Param(
    "rel_level",
    int,
    None,
    "relevant ⇔ grade ≥ rel_level (default: the evaluation's, 1 unless set)",
    _not_negative,
)


JUDGED_ONLY = Param(
    "judged_only",
    bool,
    False,
    "score only judged items: unjudged and negatively judged ones are dropped and the ranks"
    " close up (trec_eval -J; ir_measures' judged_only=True)",
)

_Compute = Callable[[Aligned, Measure], FloatArray]


def honours_judged_only(fn: _Compute) -> _Compute:
    """A compute function that reads the ranking without its unjudged items when the
    measure says ``judged_only=true`` (the family must list :data:`JUDGED_ONLY`)."""

    @functools.wraps(fn)
    def compute(al: Aligned, m: Measure) -> FloatArray:
        # read from the stored parameters: other families (gm_map) call these functions
        # with their own measures, which have no such parameter
        wanted = dict(m.params).get("judged_only", False)
        return fn(judged_only(al) if wanted else al, m)

    return compute


GAINS = Param(
    "gains",
    str,
    "",
    "gain map 'level=gain,…' (trec_eval's ndcg.1=3,2=9); unlisted judged levels gain their grade",
    parses(parse_gains, MeasureError),
)


def rel_level(al: Aligned, m: Measure) -> int:
    """The measure's relevance threshold, else the evaluation's."""
    value = m.param("rel_level")
    return al.rel_level if value is None else int(value)


def _item_hits(al: Aligned, floor: int) -> Hits:
    """The retrieved items with grade ≥ ``floor`` (≥ 0: never an unjudged or negative one)."""
    return al._cached(("item_hits", floor), lambda: hits(al.grades, al.offsets, floor))


def _item_window(al: Aligned, floor: int, m: Measure) -> tuple[Hits, np.ndarray, np.ndarray]:
    """The items with grade ≥ ``floor`` and, per query, the range ``[lo, hi)`` of them within
    the measure's cutoff (one range per cutoff: P@10, nDCG@10 and RR@10 share it)."""
    h = _item_hits(al, floor)
    base = None if m.k is None else int(m.k)
    lo, hi = al._cached(
        ("item_window", floor, base),
        lambda: hit_window(h, al.offsets, al.lengths, cutoff_per_query(al, m)),
    )
    return h, lo, hi


def _relevant_hits(al: Aligned, m: Measure) -> Hits:
    return _item_hits(al, max(rel_level(al, m), 0))  # the floor of Aligned.relevant


def _relevant_window(al: Aligned, m: Measure) -> tuple[Hits, np.ndarray, np.ndarray]:
    """The relevant items and their range within the cutoff (see :func:`_item_window`)."""
    return _item_window(al, max(rel_level(al, m), 0), m)


def _precision_at_hits(al: Aligned, h: Hits, level: int) -> FloatArray:
    """P@i at each relevant item i (the terms of AP): its running count / its rank."""
    return al._cached(("precision_at_hits", max(level, 0)), lambda: h.counts / h.ranks)


def _relevant_in_cutoff(al: Aligned, m: Measure) -> tuple[FloatArray, np.ndarray | None]:
    _, lo, hi = _relevant_window(al, m)
    return (hi - lo).astype(np.float64), cutoff_per_query(al, m)


@_register("hit", cutoff="required", params=(REL_LEVEL,), aliases=("hit_rate",))
def hit(al: Aligned, m: Measure) -> FloatArray:
    """hit@k = 1 if D_k ∩ Rel ≠ ∅ else 0 (R = 0 → 0).

    Example: Rel = {doc-3, doc-9}, run [doc-7, doc-3, doc-1, doc-9, doc-2] → hit@5 = 1.
    """
    count, _ = _relevant_in_cutoff(al, m)
    return (count > 0).astype(np.float64)


@_register("success", cutoff="required", params=(REL_LEVEL, JUDGED_ONLY))
@honours_judged_only
def success(al: Aligned, m: Measure) -> FloatArray:
    """success@k = 1 if a relevant item is in the top k else 0 (trec_eval ``success_k``)."""
    return hit(al, m)


@_register("precision", cutoff="required", params=(REL_LEVEL, JUDGED_ONLY), aliases=("P", "prec"))
@honours_judged_only
def precision(al: Aligned, m: Measure) -> FloatArray:
    """precision@k = |D_k ∩ Rel| / k (k stays k when fewer than k items were retrieved).

    Example: run [doc6, doc2, doc3, doc4, doc5], Rel = {doc2, doc3, doc7} → P@5 = 0.4.
    """
    count, k = _relevant_in_cutoff(al, m)
    return safe_divide(count, cutoff_denominator(al, k))


@_register("recall", cutoff="optional", params=(REL_LEVEL, JUDGED_ONLY), aliases=("rec",))
@honours_judged_only
def recall(al: Aligned, m: Measure) -> FloatArray:
    """recall@k = |D_k ∩ Rel| / R (R = 0 → 0, as trec_eval).

    Example: run [doc6, doc2, doc3, doc4, doc5], Rel = {doc2, doc3, doc7} → recall@5 = 2/3.
    """
    count, _ = _relevant_in_cutoff(al, m)
    return safe_divide(count, al.num_relevant(rel_level(al, m)))


@_register("f1", cutoff="required", params=(REL_LEVEL,))
def f1(al: Aligned, m: Measure) -> FloatArray:
    """f1@k = 2·P@k·R@k / (P@k + R@k) = 2·|D_k ∩ Rel| / (k + R); 0 when both are 0.

    Example: run [doc6, doc2, doc3, doc4, doc5], Rel = {doc2, doc3, doc7} → F1@5 = 0.5.
    """
    count, k = _relevant_in_cutoff(al, m)
    den = cutoff_denominator(al, k) + al.num_relevant(rel_level(al, m))
    return safe_divide(2.0 * count, den)


@_register("mrr", cutoff="optional", params=(REL_LEVEL, JUDGED_ONLY), aliases=("rr",))
@honours_judged_only
def mrr(al: Aligned, m: Measure) -> FloatArray:
    """RR = 1 / rank of the first relevant item (within k if given), else 0.

    The mean over queries is MRR. Example: first relevant at rank 2 → 0.5.
    """
    h, lo, hi = _relevant_window(al, m)
    found = hi > lo
    first = np.zeros(al.n_queries, dtype=np.int64)
    first[found] = h.ranks[lo[found]]
    return safe_divide(np.ones(al.n_queries), first)


@_register("map", cutoff="optional", params=(REL_LEVEL, JUDGED_ONLY), aliases=("ap",))
@honours_judged_only
def average_precision(al: Aligned, m: Measure) -> FloatArray:
    """AP = Σ_{i≤n} P@i · rel_i / R, n = k or the whole ranking; R = 0 → 0.

    ``map@k`` is trec_eval's ``map_cut_k``. Example: run [doc1..doc5], Rel = {doc2, doc3,
    doc5} → AP = (1/2 + 2/3 + 3/5) / 3 = 0.5888889.
    """
    level = rel_level(al, m)
    h, lo, hi = _relevant_window(al, m)
    # the other items' terms are 0 and add nothing to the sum
    terms = _precision_at_hits(al, h, level)
    return safe_divide(hit_sums(terms, lo, hi), al.num_relevant(level))


@_register("gm_map", params=(REL_LEVEL,), aggregate="gmean")
def gm_map(al: Aligned, m: Measure) -> FloatArray:
    """Per query AP; aggregated as the geometric mean exp(mean(log(max(AP, 1e-5)))).

    As trec_eval's ``gm_map``: values below ``MIN_GEO_MEAN`` = 1e-5 are clamped before the log.
    """
    return average_precision(al, m)


@_register("rprec", params=(REL_LEVEL, JUDGED_ONLY), aliases=("Rprec", "r_precision", "R-prec"))
@honours_judged_only
def r_precision(al: Aligned, m: Measure) -> FloatArray:
    """R-prec = |D_R ∩ Rel| / R, precision at rank R; R = 0 → 0."""
    h = _relevant_hits(al, m)
    r = al.num_relevant(rel_level(al, m))
    lo, hi = hit_window(h, al.offsets, al.lengths, r)
    return safe_divide((hi - lo).astype(np.float64), r)


def _linear_gain(grades: np.ndarray) -> FloatArray:
    return np.where(grades > 0, grades, 0).astype(np.float64)


def _exp_gain(grades: np.ndarray) -> FloatArray:
    return np.where(grades > 0, np.exp2(np.maximum(grades, 0).astype(np.float64)) - 1.0, 0.0)


GainFn = Callable[[np.ndarray], FloatArray]

GRADED_REL_LEVEL = Param(
    "rel_level",
    int,
    None,
    "grades below this gain nothing (default: every positive grade gains; the evaluation's "
    "--rel-level does not apply to graded measures, as in trec_eval)",
)


def _one_gain_rule(m: Measure) -> None:
    if m.param("rel_level") is not None:
        raise MeasureError(f"{m}: give either a gain map or rel_level, not both")


def _dcg(al: Aligned, m: Measure, gain_fn: GainFn) -> FloatArray:
    return _dcg_of(al, m, gain_fn, ideal=False)


def _ideal_dcg(al: Aligned, m: Measure, gain_fn: GainFn) -> FloatArray:
    # label_grades are sorted descending within each query: the ideal ranking (gains zeroed
    # below rel_level stay at the bottom).
    return _dcg_of(al, m, gain_fn, ideal=True)


def _dcg_of(al: Aligned, m: Measure, gain_fn: GainFn, *, ideal: bool) -> FloatArray:
    """DCG of the retrieved items, or (``ideal``) of the judgments in grade order.

    Only the items with a gain add to the sum (a gain is 0 below grade 1 and below
    ``rel_level``): their discounted gains are computed once per evaluation (cached on ``al``).
    """
    level = m.param("rel_level")
    floor = max(1 if level is None else int(level), 1)
    if ideal:
        grades = al.label_grades
        # judgments are sorted by grade: those with a gain are the first R(floor) of each query
        h = al._cached(
            ("label_hits", floor), lambda: leading_hits(al.label_offsets, al.num_relevant(floor))
        )
        lo, hi = hit_window(h, al.label_offsets, al.label_lengths, cutoff_per_query(al, m))
    else:
        grades = al.grades
        h, lo, hi = _item_window(al, floor, m)
    terms = al._cached(
        ("ideal_dcg_terms" if ideal else "dcg_terms", gain_fn.__name__, floor),
        lambda: discounted(gain_fn(grades[h.index]), h.ranks),
    )
    return hit_sums(terms, lo, hi)


@_register("dcg", cutoff="optional", params=(GAINS, GRADED_REL_LEVEL))
def dcg(al: Aligned, m: Measure) -> FloatArray:
    """DCG@k = Σ_{i≤k} gain_i / log2(i + 1), gain = grade (negative → 0), added in rank order.

    With ``gains="1=3,2=9"`` (trec_eval's gain map) a listed grade gains the given value, which
    may be negative. Example: gains [3, 2, 3] → DCG@3 = 3 + 2/log2(3) + 3/2 = 5.7618595071.
    """
    if m.param("gains"):
        _one_gain_rule(m)
        return gain_dcg(al, m)
    return _dcg(al, m, _linear_gain)


@_register(
    "ndcg",
    cutoff="optional",
    params=(GAINS, GRADED_REL_LEVEL, JUDGED_ONLY),
    aliases=("nDCG", "NDCG"),
)
@honours_judged_only
def ndcg(al: Aligned, m: Measure) -> FloatArray:
    """nDCG@k = DCG@k / IDCG@k; the ideal ranks all judged gains descending, cut at k.

    Gain = grade (linear), negative grades → 0; IDCG = 0 → 0 (trec_eval ``ndcg_cut``).
    ``ndcg@10(rel_level=2)`` gives grades below 2 no gain, in the run and in the ideal.
    ``gains="1=3,2=9,4=4.5"`` is trec_eval's gain map (``ndcg.1=3,2=9,4=4.5``): a listed grade
    gains the given value (may be ≤ 0), the ideal ranking holds the positive gains.
    Example: gains [3, 2, 3] with judged gains {3, 3, 2} → nDCG@3 = 0.9777813616.
    """
    if m.param("gains"):
        _one_gain_rule(m)
        return gain_ndcg(al, m)
    return safe_divide(_dcg(al, m, _linear_gain), _ideal_dcg(al, m, _linear_gain))


@_register("ndcg_exp", cutoff="optional", params=(GRADED_REL_LEVEL, JUDGED_ONLY))
@honours_judged_only
def ndcg_exp(al: Aligned, m: Measure) -> FloatArray:
    """nDCG@k with exponential gain 2^g − 1 (Burges et al.); IDCG = 0 → 0."""
    return safe_divide(_dcg(al, m, _exp_gain), _ideal_dcg(al, m, _exp_gain))


@_register("judged", cutoff="required")
def judged(al: Aligned, m: Measure) -> FloatArray:
    """judged@k = |{d ∈ D_k : d has a judgment (grade ≥ 0)}| / k.

    Makes label holes visible: unjudged items silently count as non-relevant elsewhere.
    """
    _, lo, hi = _item_window(al, 0, m)  # grade ≥ 0: judged (NOT_JUDGED is below 0)
    return safe_divide(
        (hi - lo).astype(np.float64), cutoff_denominator(al, cutoff_per_query(al, m))
    )


@_register("num_ret", aggregate="sum")
def num_ret(al: Aligned, m: Measure) -> FloatArray:
    """Number of retrieved items (after any depth limit)."""
    return al.lengths.astype(np.float64)


@_register("num_rel", params=(REL_LEVEL,), aggregate="sum")
def num_rel(al: Aligned, m: Measure) -> FloatArray:
    """R: number of judged relevant items (grade ≥ rel_level)."""
    return al.num_relevant(rel_level(al, m)).astype(np.float64)


@_register("num_rel_ret", params=(REL_LEVEL,), aggregate="sum")
def num_rel_ret(al: Aligned, m: Measure) -> FloatArray:
    """Number of relevant items retrieved."""
    return np.diff(_relevant_hits(al, m).bounds).astype(np.float64)


@_register("bpref", params=(REL_LEVEL,))
def bpref(al: Aligned, m: Measure) -> FloatArray:
    """bpref = (1/R) Σ_{relevant retrieved r} (1 − min(n_r, R) / min(N, R)).

    ``n_r`` = judged non-relevant items ranked above r, ``N`` = judged non-relevant items of
    the query (grade in [0, rel_level)); a term is 1 when ``n_r = 0``. Unjudged items are
    ignored (Buckley & Voorhees 2004, as trec_eval 10.0). R = 0 → 0.
    """
    level = rel_level(al, m)
    rel, judged = _relevant_hits(al, m), _item_hits(al, 0)
    r = al.num_relevant(level)
    n_nonrel = al.num_relevant(0) - r  # judgments with a grade in [0, rel_level)
    # the relevant items are judged ones: the judged items at or above a relevant one that
    # are not relevant are the judged non-relevant ones above it
    nonrel_above = judged.counts[np.searchsorted(judged.index, rel.index)] - rel.counts
    q = np.repeat(np.arange(al.n_queries), np.diff(rel.bounds))
    cap = np.minimum(n_nonrel, r).astype(np.float64)[q]
    penalty = np.divide(np.minimum(nonrel_above, r[q]), cap, out=np.zeros(len(q)), where=cap > 0)
    # the other items' terms are 0 and add nothing to the sum
    return safe_divide(hit_sums(1.0 - penalty, rel.bounds[:-1], rel.bounds[1:]), r)


@_register(
    "iprec_at_recall",
    cutoff="required",
    cutoff_type=float,
    cutoff_max=1.0,
    params=(REL_LEVEL,),
    summary="Interpolated precision at a recall level (trec_eval iprec_at_recall_x)",
)
def iprec_at_recall(al: Aligned, m: Measure) -> FloatArray:
    """Interpolated precision at recall level x: max_{j ≥ i_c} P@j.

    ``c = round(x · R)`` (half away from zero) relevant items must be retrieved, ``i_c`` is the
    rank of the c-th relevant item (rank 1 when c = 0); 0 when fewer than c relevant items
    were retrieved. As trec_eval 10.0 (``lround``).
    """
    x = float(m.k if m.k is not None else 0.0)
    r = al.num_relevant(rel_level(al, m))
    return interpolated_precision(al, m, np.floor(x * r + 0.5).astype(np.int64))


@_register(
    "iprec",
    cutoff="required",
    cutoff_type=float,
    cutoff_max=1.0,
    params=(REL_LEVEL, JUDGED_ONLY),
    summary="Interpolated precision at a recall level as trec_eval 9 (ir_measures' IPrec@x)",
)
@honours_judged_only
def iprec(al: Aligned, m: Measure) -> FloatArray:
    """Interpolated precision at recall level x, trec_eval 9's rule: max_{j ≥ i_c} P@j.

    ``c = ⌊x · R + 0.9⌋`` relevant items must be retrieved (trec_eval 9, inside pytrec_eval
    and so ir_measures' ``IPrec@x``); ``i_c`` is the rank of the c-th relevant item (rank 1
    when c = 0); 0 when fewer than c were retrieved. It differs from ``iprec_at_recall``
    (trec_eval 10.0, ``c = round(x · R)``) where the two roundings differ: R = 2, x = 0.6
    needs c = 2 here and c = 1 there.
    """
    x = float(m.k if m.k is not None else 0.0)
    r = al.num_relevant(rel_level(al, m))
    return interpolated_precision(al, m, np.floor(x * r + 0.9).astype(np.int64))


def interpolated_precision(al: Aligned, m: Measure, c: np.ndarray) -> FloatArray:
    """Per query, max_{j ≥ i_c} P@j, where i_c is the rank of the c-th relevant item (rank 1
    when c = 0), and 0 when fewer than c relevant items were retrieved."""
    level = rel_level(al, m)
    h = _relevant_hits(al, m)
    lo, hi = h.bounds[:-1], h.bounds[1:]
    # Precision peaks only at relevant ranks, so the max over ranks ≥ the c-th relevant item
    # is the max over the relevant items from the c-th on (c = 0: all of them).
    start = lo + np.maximum(c - 1, 0)
    some = start < hi
    out = np.zeros(al.n_queries, dtype=np.float64)
    if some.any():
        # maxima of the ranges [start, hi): the odd entries of a reduceat over both bounds
        values = np.append(_precision_at_hits(al, h, level), 0.0)
        bounds = np.column_stack([start[some], hi[some]]).reshape(-1)
        out[some] = np.maximum.reduceat(values, bounds)[::2]
    return out


def geometric_mean(values: FloatArray) -> float:
    """exp(mean(log(max(v, MIN_GEO_MEAN)))) as trec_eval's gm_* aggregates (sum in order)."""
    return sums.geometric_mean(values)
