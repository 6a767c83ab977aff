"""The rest of trec_eval 10.0's ``all_trec`` measures, computed on the aligned arrays.

Notation as in :mod:`ragmeter.metrics.ranking`: ``r`` is a 1-based rank, ``rel_r ∈ {0, 1}``
(grade ≥ rel_level), ``R`` the number of relevant judgments, ``ret`` the number of retrieved
items, ``a = |Rel ∩ retrieved|``. Three kinds of retrieved item are told apart, as trec_eval
does: *judged* (a grade ≥ 0 in the qrels), *pooled but unjudged* (a negative grade in the
qrels) and *not in the pool* (no qrels entry); the last two are "unjudged".

Gain-based measures (``ndcg`` with a gain map, ``dcg``, ``idcg``, ``ndcg_rel``, ``rndcg``,
``G``, ``rbp``) use trec_eval's gain map: the gain of a judged grade ``g`` is ``g`` unless the
``gains`` parameter (``"1=3,2=9,4=4.5"``, level=gain pairs) overrides it; unjudged items have
gain 0. The *ideal ranking* lists the query's judged items with positive gain, gain descending
(both in :mod:`ragmeter.metrics.gains`, which ``ndcg`` and ``dcg`` with a gain map share).

Every function returns one float per evaluated query and gives 0 for an empty ranking; no
Python loop runs over queries.
"""

from __future__ import annotations

import numpy as np

from ragmeter.core import sums
from ragmeter.core.align import NOT_JUDGED, Aligned
from ragmeter.errors import MeasureError
from ragmeter.measures import FloatArray, Measure, Param, parses, register
from ragmeter.metrics._segments import (
    BoolArray,
    IntArray,
    cutoff_per_query,
    discounted,
    per_query_count,
    per_query_sum,
    running_count,
    safe_divide,
    within,
)
from ragmeter.metrics.gains import (
    gain_of,
    ideal,
    item_gains,
    parse_gains,
    per_query_sum_ideal,
    trec_levels,
)
from ragmeter.metrics.ranking import (
    GAINS,
    JUDGED_ONLY,
    REL_LEVEL,
    bpref,
    honours_judged_only,
    iprec_at_recall,
    rel_level,
)

#: trec_eval's ``INFAP_EPSILON``.
INFAP_EPSILON = 1e-5
#: trec_eval's default recall levels of ``11pt_avg``.
ELEVEN_POINTS = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"


# -- parameters ------------------------------------------------------------------------------


def _check_p(value: float) -> str | None:
    return None if 0.0 < value < 1.0 else "must be in (0, 1)"


PERSISTENCE = Param("p", float, 0.9, "persistence of the RBP user model", _check_p)


def parse_levels(text: str) -> tuple[float, ...]:
    """Parse recall levels ``"0.25,.5,.75"``."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise MeasureError(f"levels: '{text}' is not a list of numbers") from None
    if not values:
        raise MeasureError("levels: empty list")
    return values


# -- shared arrays -----------------------------------------------------------------------------


def segment_cumsum(al: Aligned, values: FloatArray) -> FloatArray:
    """Running sum of per-item ``values`` within each query (inclusive), added in rank order."""
    return sums.segment_cumsum(values, al.offsets)


def _at_rank(al: Aligned, cumulative: FloatArray, k: IntArray) -> FloatArray:
    """``cumulative`` at rank ``min(k, ret)`` of each query; 0 where that rank is 0."""
    kk = np.minimum(k, al.lengths)
    pos = al.offsets[:-1] + kk - 1
    out = np.zeros(len(k), dtype=np.float64)
    ok = kk > 0
    out[ok] = cumulative[pos[ok]]
    return out


def _judged_nonrel(al: Aligned, level: int) -> BoolArray:
    mask: BoolArray = (al.grades >= 0) & (al.grades < level)
    return mask


def _pooled_unjudged(al: Aligned) -> BoolArray:
    mask: BoolArray = (al.grades < 0) & (al.grades != NOT_JUDGED)
    return mask


def _unjudged(al: Aligned) -> BoolArray:
    return al.grades < 0


def _num_rel_ret(al: Aligned, m: Measure) -> FloatArray:
    return per_query_count(al, al.relevant(rel_level(al, m)))


# -- families --------------------------------------------------------------------------------


@register(
    "relstring",
    params=(Param("length", int, 10, "number of leading ranks shown"),),
    summary="Relevance values of the first N retrieved items, as text (value here: NA)",
)
def relstring(al: Aligned, m: Measure) -> FloatArray:
    """relstring = the relevance values of ranks 1..N as a string (trec_eval ``relstring.N``).

    One character per rank: the grade for 0–9, ``>`` above 9, ``-`` not in the pool, ``.``
    pooled but unjudged. The numeric value is NA; :func:`relstring_text` gives the text.
    """
    return np.full(al.n_queries, np.nan)


def relstring_text(al: Aligned, length: int) -> list[str]:
    """The relstring of every query: relevance characters of its first ``length`` items."""
    levels = trec_levels(al.grades)
    chars = np.where(
        levels > 9,
        ord(">"),
        np.where(levels >= 0, ord("0") + levels, np.where(levels == -1, ord("-"), ord("."))),
    ).astype(np.uint8)
    keep = al.ranks <= length
    text = chars[keep].tobytes().decode("ascii")
    n = np.minimum(al.lengths, max(length, 0))
    ends = np.cumsum(n)
    starts = ends - n
    return [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


@register("infap", params=(REL_LEVEL,), aliases=("infAP", "inf_ap"))
def infap(al: Aligned, m: Measure) -> FloatArray:
    """infAP (Yilmaz & Aslam 2006), as trec_eval 10.0; R = 0 → 0.

    ``infAP = (1/R) Σ_{judged relevant retrieved at rank r} t_r`` with ``t_1 = 1`` and, for
    r > 1, ``t_r = 1/r + ((r−1)/r) · ((s + n + u)/(r − 1)) · ((s + ε)/(s + n + 2ε))``, where above
    rank r: ``s`` judged relevant, ``n`` judged non-relevant, ``u`` pooled-but-unjudged items;
    items not in the pool count only through r; ε = 1e-5.
    """
    level = rel_level(al, m)
    rel = al.relevant(level)
    s = (running_count(al, rel) - 1).astype(np.float64)
    n = running_count(al, _judged_nonrel(al, level)).astype(np.float64)
    u = running_count(al, _pooled_unjudged(al)).astype(np.float64)
    j = (al.ranks - 1).astype(np.float64)
    safe_j = np.where(j > 0, j, 1.0)
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((s + n + u) / safe_j) * (
        (s + INFAP_EPSILON) / (s + n + 2.0 * INFAP_EPSILON)
    )
    term = np.where(j == 0, 1.0, term)
    return safe_divide(per_query_sum(al, np.where(rel, term, 0.0)), al.num_relevant(level))


@register("yaap", params=(REL_LEVEL,), summary="Yet Another Average Precision (trec_eval yaap)")
def yaap(al: Aligned, m: Measure) -> FloatArray:
    """yaap = log((1 + S) / (1 + R − S)), S = Σ_{relevant retrieved at rank r} P@r.

    Robertson's smoothed AP ("On Smoothing Average Precision", ECIR 2012), as trec_eval 10.0:
    ``S`` is AP's sum before the division by R, so yaap is monotonic with AP on one query and
    finite at AP = 0 (then ``log(1 / (1 + R))``); R = 0 → log(1) = 0. The natural log is the
    C library's, S is added in rank order.
    """
    level = rel_level(al, m)
    terms = np.where(al.relevant(level), running_count(al, al.relevant(level)) / al.ranks, 0.0)
    s = per_query_sum(al, terms)
    r = al.num_relevant(level).astype(np.float64)
    return sums.libm_log((1.0 + s) / (1.0 + r - s))


@register("gm_bpref", params=(REL_LEVEL,), aggregate="gmean")
def gm_bpref(al: Aligned, m: Measure) -> FloatArray:
    """Per query bpref; aggregated as exp(mean(log(max(bpref, 1e-5)))) (trec_eval gm_bpref)."""
    return bpref(al, m)


@register(
    "rprec_mult",
    cutoff="required",
    cutoff_type=float,
    params=(REL_LEVEL,),
    aliases=("Rprec_mult",),
    summary="Precision at a multiple x of R (trec_eval Rprec_mult_x)",
)
def rprec_mult(al: Aligned, m: Measure) -> FloatArray:
    """Rprec_mult@x = P@c with ``c = ⌊x·R + 0.9⌋`` (empty slots count, c = 0 → 0).

    As trec_eval 10.0; ``x = 1`` is R-precision, ``x = 2`` precision at 2R.
    """
    level = rel_level(al, m)
    x = float(m.k if m.k is not None else 1.0)
    c = np.floor(x * al.num_relevant(level) + 0.9).astype(np.int64)
    rel = al.relevant(level) & (al.ranks <= c[al.query_of_item])
    return safe_divide(per_query_count(al, rel), c)


def _finite(value: float) -> str | None:
    return None if np.isfinite(value) else "must be finite"


@register(
    "utility",
    params=(
        Param("a", float, 1.0, "worth of a relevant retrieved item", _finite),
        Param("b", float, -1.0, "worth of a non-relevant retrieved item", _finite),
        Param("c", float, 0.0, "worth of a relevant item not retrieved", _finite),
        Param("d", float, 0.0, "worth of a non-relevant item not retrieved", _finite),
        Param("n_docs", int, 0, "documents in the collection (trec_eval -N)"),
        REL_LEVEL,
    ),
)
def utility(al: Aligned, m: Measure) -> FloatArray:
    """utility = a·A + b·(ret − A) + c·(R − A) + d·(N + A − ret − R), A = relevant retrieved.

    trec_eval's set utility (``utility.a,b,c,d``; default 1, −1, 0, 0), N = ``n_docs`` (-N).
    """
    hits = _num_rel_ret(al, m)
    ret = al.lengths.astype(np.float64)
    big_r = al.num_relevant(rel_level(al, m)).astype(np.float64)
    n_docs = float(m.param("n_docs"))
    out: FloatArray = (
        m.param("a") * hits
        + m.param("b") * (ret - hits)
        + m.param("c") * (big_r - hits)
        + m.param("d") * (n_docs + hits - ret - big_r)
    )
    return out


@register(
    "avg_iprec",
    params=(
        Param(
            "levels",
            str,
            ELEVEN_POINTS,
            "recall levels, comma separated",
            parses(parse_levels, MeasureError),
        ),
        REL_LEVEL,
    ),
    aliases=("eleven_pt_avg",),
    summary="Interpolated precision averaged over recall levels (trec_eval 11pt_avg)",
)
def avg_iprec(al: Aligned, m: Measure) -> FloatArray:
    """11pt_avg = (1/|X|) Σ_{x ∈ X} iprec_at_recall(x), X = 0.0, 0.1, …, 1.0 by default.

    ``iprec_at_recall(x)`` = max_{j ≥ i_c} P@j with ``c = round(x·R)`` (see ``iprec_at_recall``).
    """
    levels = parse_levels(m.param("levels"))
    total = np.zeros(al.n_queries, dtype=np.float64)
    rl = m.param("rel_level")
    # trec_eval adds the levels from the highest recall down (its walk up the ranking)
    for x in reversed(levels):
        params = {} if rl is None else {"rel_level": rl}
        total += iprec_at_recall(al, Measure("iprec_at_recall", x, tuple(params.items())))
    return total / len(levels)


@register("bing", params=(REL_LEVEL,), aliases=("binG",))
def bing(al: Aligned, m: Measure) -> FloatArray:
    """binG = (1/R) Σ_{relevant retrieved at rank r} 1 / log2(2 + n_r), n_r = non-relevant above r.

    trec_eval's binary G (unjudged items count as non-relevant); R = 0 → 0.
    """
    level = rel_level(al, m)
    rel = al.relevant(level)
    nonrel_above = al.ranks - running_count(al, rel)
    terms = np.where(rel, 1.0 / sums.log2_of_int(2 + nonrel_above), 0.0)
    return safe_divide(per_query_sum(al, terms), al.num_relevant(level))


@register("ngain", params=(GAINS,), aliases=("G",), summary="Normalized gain G (trec_eval G)")
def ngain(al: Aligned, m: Measure) -> FloatArray:
    """G = (1/Σ_j I_j) Σ_{r: g_r ≠ 0} g_r / log2(2 + C_r − S_r)  (trec_eval 10.0 ``G``).

    ``g_r`` the gain at rank r, ``S_r = Σ_{i≤r} g_i``, ``I_j`` the j-th ideal gain (0 past the
    ideal list), ``C_r = Σ_{i≤r} max(I_i, 1)``. Σ I = 0 → 0.
    """
    gains = item_gains(al, m)
    ide = ideal(al, m)
    q = al.query_of_item
    in_ideal = al.ranks <= ide.npos[q]
    pos = np.where(in_ideal, ide.offsets[:-1][q] + al.ranks - 1, 0)
    ideal_here = ide.gains[pos] if len(ide.gains) else np.zeros(len(pos))
    cost = np.where(in_ideal, np.maximum(ideal_here, 1.0), 1.0)
    denom = 2.0 + segment_cumsum(al, cost) - segment_cumsum(al, gains)
    nonzero = gains != 0
    terms = np.zeros(len(gains), dtype=np.float64)
    terms[nonzero] = gains[nonzero] / sums.libm_log2(denom[nonzero])
    return safe_divide(per_query_sum(al, terms), per_query_sum_ideal(al, ide))


@register("idcg", cutoff="optional", params=(GAINS,), aliases=("ideal_dcg",))
def idcg(al: Aligned, m: Measure) -> FloatArray:
    """IDCG@k = Σ_{j ≤ k} I_j / log2(j + 1) over the ideal gains I (trec_eval ``ideal_dcg``)."""
    k = cutoff_per_query(al, m)
    ide = ideal(al, m)
    return ide.total if k is None else ide.dcg_at(k)


@register("ndcg_rel", params=(GAINS,))
def ndcg_rel(al: Aligned, m: Measure) -> FloatArray:
    """ndcg_rel = (1/N⁺) [Σ_{r: g_r > 0} DCG@r / IDCG@r + (N⁺ − A⁺) · DCG / IDCG].

    nDCG averaged over the relevant items (gain > 0): at the rank of each one retrieved, and at
    the end of the ranking for each one missed. ``N⁺`` ideal items, ``A⁺`` retrieved items with
    gain > 0, IDCG@r = IDCG@min(r, N⁺). As trec_eval 10.0; N⁺ = 0 → 0.
    """
    gains = item_gains(al, m)
    ide = ideal(al, m)
    q = al.query_of_item
    cum = segment_cumsum(al, discounted(gains, al.ranks))
    kk = np.minimum(al.ranks, ide.npos[q])
    idcg_r = np.zeros(len(kk), dtype=np.float64)
    has_ideal = kk > 0
    idcg_r[has_ideal] = ide.cum_dcg[(ide.offsets[:-1][q] + kk - 1)[has_ideal]]
    positive = gains > 0
    terms = np.zeros(len(gains), dtype=np.float64)
    ok = positive & (idcg_r > 0)
    terms[ok] = cum[ok] / idcg_r[ok]
    total_dcg = _at_rank(al, cum, al.lengths)
    full = ide.total
    missed = ide.npos - per_query_count(al, positive)
    tail = np.zeros(al.n_queries, dtype=np.float64)
    has = full > 0
    tail[has] = missed[has] * total_dcg[has] / full[has]
    total = per_query_sum(al, terms) + tail
    out = np.zeros(al.n_queries, dtype=np.float64)
    good = (total > 0) & (ide.npos > 0)
    out[good] = total[good] / ide.npos[good]
    return out


@register("rndcg", params=(GAINS, REL_LEVEL), aliases=("Rndcg",))
def rndcg(al: Aligned, m: Measure) -> FloatArray:
    """Rndcg = mean of nDCG@b over the ideal gain boundaries b (trec_eval 10.0 ``Rndcg``).

    Boundaries: every rank b ∈ [1, N⁺) where the ideal gain changes (I_{b+1} ≠ I_b), and
    b = N⁺; the value there is DCG@min(b, ret) / IDCG@b. One more point, DCG@ret / IDCG, is
    added when ``ret > N⁺ + 1``. R = 0 (relevant by rel_level) → 0.
    """
    gains = item_gains(al, m)
    ide = ideal(al, m)
    cum = segment_cumsum(al, discounted(gains, al.ranks))
    # boundaries inside the ideal list: label positions p (1-based) < npos with a change next
    nq = al.n_queries
    lq = np.repeat(np.arange(nq, dtype=np.int64), ide.npos)
    lpos = np.arange(len(ide.gains), dtype=np.int64) - np.repeat(ide.offsets[:-1], ide.npos) + 1
    change = np.zeros(len(ide.gains), dtype=bool)
    if len(ide.gains) > 1:
        change[:-1] = (ide.gains[1:] != ide.gains[:-1]) & (lq[1:] == lq[:-1])
    b_q = lq[change]
    b = lpos[change]
    dcg_b = _at_rank_for(al, cum, b_q, b)
    idcg_b = ide.cum_dcg[change]
    inner = np.bincount(b_q, weights=dcg_b / idcg_b, minlength=nq).astype(np.float64)
    count = np.bincount(b_q, minlength=nq).astype(np.float64)
    # the last boundary, at npos
    has = ide.npos > 0
    final_dcg = _at_rank(al, cum, ide.npos)
    full = ide.total
    inner[has] += final_dcg[has] / full[has]
    count[has] += 1
    # the implied boundary at the end of a longer ranking
    extra = has & (al.lengths > ide.npos + 1)
    total_dcg = _at_rank(al, cum, al.lengths)
    inner[extra] += total_dcg[extra] / full[extra]
    count[extra] += 1
    out = safe_divide(inner, count)
    out[al.num_relevant(rel_level(al, m)) == 0] = 0.0
    return out


def _at_rank_for(al: Aligned, cumulative: FloatArray, q: IntArray, k: IntArray) -> FloatArray:
    """``cumulative`` of query ``q[i]`` at rank ``min(k[i], ret)``; 0 where that is 0."""
    kk = np.minimum(k, al.lengths[q])
    out = np.zeros(len(q), dtype=np.float64)
    ok = kk > 0
    out[ok] = cumulative[(al.offsets[:-1][q] + kk - 1)[ok]]
    return out


@register(
    "relative_precision",
    cutoff="required",
    params=(REL_LEVEL,),
    aliases=("relative_P", "rel_p"),
)
def relative_precision(al: Aligned, m: Measure) -> FloatArray:
    """relative_P@k = |D_k ∩ Rel| / min(k, R); R = 0 → 0 (trec_eval ``relative_P``)."""
    level = rel_level(al, m)
    k = cutoff_per_query(al, m)
    assert k is not None
    hits = per_query_count(al, al.relevant(level) & within(al, k))
    return safe_divide(hits, np.minimum(k, al.num_relevant(level)))


@register("set_precision", params=(REL_LEVEL, JUDGED_ONLY), aliases=("set_P",))
@honours_judged_only
def set_precision(al: Aligned, m: Measure) -> FloatArray:
    """set_P = A / ret over the whole retrieved set; ret = 0 → 0."""
    return safe_divide(_num_rel_ret(al, m), al.lengths)


@register("set_relative_precision", params=(REL_LEVEL, JUDGED_ONLY), aliases=("set_relative_P",))
@honours_judged_only
def set_relative_precision(al: Aligned, m: Measure) -> FloatArray:
    """set_relative_P = A / min(ret, R); 0 when ret = 0 or R = 0."""
    den = np.minimum(al.lengths, al.num_relevant(rel_level(al, m)))
    return safe_divide(_num_rel_ret(al, m), den)


@register("set_recall", params=(REL_LEVEL,))
def set_recall(al: Aligned, m: Measure) -> FloatArray:
    """set_recall = A / R; R = 0 → 0."""
    return safe_divide(_num_rel_ret(al, m), al.num_relevant(rel_level(al, m)))


@register("set_map", params=(REL_LEVEL, JUDGED_ONLY))
@honours_judged_only
def set_map(al: Aligned, m: Measure) -> FloatArray:
    """set_map = A² / (ret · R) (set precision × set recall); 0 when ret = 0 or R = 0."""
    hits = _num_rel_ret(al, m)
    den = al.lengths.astype(np.float64) * al.num_relevant(rel_level(al, m))
    return safe_divide(hits * hits, den)


@register(
    "set_f",
    params=(
        Param("beta", float, 1.0, "relative importance x of recall to precision", _finite),
        REL_LEVEL,
        JUDGED_ONLY,
    ),
    aliases=("set_F",),
)
@honours_judged_only
def set_f(al: Aligned, m: Measure) -> FloatArray:
    """set_F = (x + 1)·P·R / (x·P + R) with set precision P and set recall R; A = 0 → 0."""
    hits = _num_rel_ret(al, m)
    p = safe_divide(hits, al.lengths)
    r = safe_divide(hits, al.num_relevant(rel_level(al, m)))
    x = float(m.param("beta"))
    return safe_divide((x + 1.0) * p * r, x * p + r)


@register("num_nonrel_judged_ret", params=(REL_LEVEL,), aggregate="sum")
def num_nonrel_judged_ret(al: Aligned, m: Measure) -> FloatArray:
    """Number of retrieved items judged non-relevant (0 ≤ grade < rel_level)."""
    return per_query_count(al, _judged_nonrel(al, rel_level(al, m)))


@register("num_unjudged_ret", aggregate="sum")
def num_unjudged_ret(al: Aligned, m: Measure) -> FloatArray:
    """Number of retrieved items without a judgment (not in the pool, or pooled unjudged)."""
    return per_query_count(al, _unjudged(al))


def _rbp_gains(al: Aligned, m: Measure) -> FloatArray:
    """Item gains for RBP, rescaled per query to [0, 1] when some gain lies outside it.

    The gain list of a query holds its judged levels 0..L (L its highest judged grade) and the
    levels of the gain map; if its minimum is < 0 or its maximum > 1, every gain becomes
    (g − min) / (max − min).
    """
    pairs = parse_gains(m.param("gains"))
    mapping = dict(pairs)
    levels = al.label_grades.astype(np.int64)
    top = np.full(al.n_queries, -1, dtype=np.int64)
    judged = levels >= 0
    np.maximum.at(top, al.query_of_label[judged], levels[judged])
    lo = np.full(al.n_queries, np.inf)
    hi = np.full(al.n_queries, -np.inf)
    max_level = int(top.max()) if len(top) else -1
    for level in range(max_level + 1):
        present = top >= level
        g = mapping.get(level, float(level))
        lo = np.where(present, np.minimum(lo, g), lo)
        hi = np.where(present, np.maximum(hi, g), hi)
    for _, g in pairs:
        lo = np.minimum(lo, g)
        hi = np.maximum(hi, g)
    rescale = ((lo < 0) | (hi > 1)) & (hi > lo)
    item_levels = trec_levels(al.grades)
    gains = gain_of(item_levels, pairs)
    q = al.query_of_item
    known = (item_levels >= 0) | np.isin(item_levels, list(mapping))
    scaled = np.where(
        rescale[q] & known,
        (gains - lo[q]) / np.where(rescale, hi - lo, 1.0)[q],
        gains,
    )
    return np.where(known, scaled, 0.0)


BINARY_REL_LEVEL = Param(
    "rel_level",
    int,
    None,
    "binary gains: 1 for grade ≥ rel_level, else 0 (ir_measures' RBP(rel=…)); default graded",
)


@register(
    "rbp",
    params=(PERSISTENCE, GAINS, BINARY_REL_LEVEL),
    summary="Rank-biased precision (trec_eval rbp)",
)
def rbp(al: Aligned, m: Measure) -> FloatArray:
    """RBP = (1 − p) Σ_r g_r · p^(r−1) (Moffat & Zobel 2008), p = 0.9 by default.

    Gains from the gain map (grade by default), rescaled to [0, 1] per query as trec_eval 10.0
    does when they fall outside it; unjudged items gain 0. With ``rel_level=r`` the gains are
    binary, g = [grade ≥ r] (ir_measures' ``RBP(rel=r)``, cwl_eval's, which normalises its
    weights over 1000 ranks: a factor 1/(1 − p^1000), below 1e-9 away for p ≤ 0.97).
    """
    p = float(m.param("p"))
    weights = _rbp_weights(al, p)[al.ranks - 1]
    level = m.param("rel_level")
    if level is not None:
        if m.param("gains"):
            raise MeasureError(f"{m}: give either a gain map or rel_level, not both")
        gains = al.relevant(int(level)).astype(np.float64)
    else:
        gains = _rbp_gains(al, m)
    return (1.0 - p) * per_query_sum(al, gains * weights)


def _rbp_weights(al: Aligned, p: float) -> FloatArray:
    """``p^i`` for i = 0…longest ranking, each by one more multiplication (as trec_eval)."""
    longest = int(al.lengths.max()) if al.n_queries else 0
    return sums.power_table(p, longest)


@register("rbp_resid", params=(PERSISTENCE,))
def rbp_resid(al: Aligned, m: Measure) -> FloatArray:
    """RBP residual = p^ret + (1 − p) Σ_{unjudged r} p^(r−1), and 0 if no item is unjudged.

    The most RBP could still grow if every unjudged item and every item past the ranking were
    relevant (trec_eval 10.0 ``rbp_resid``, p = 0.9).
    """
    p = float(m.param("p"))
    unj = _unjudged(al)
    table = _rbp_weights(al, p)
    weights = table[al.ranks - 1]
    tail = table[al.lengths]
    value = tail + (1.0 - p) * per_query_sum(al, np.where(unj, weights, 0.0))
    return np.where(per_query_count(al, unj) > 0, value, 0.0)


@register("unjudged", cutoff="required", aliases=("unj",))
def unjudged(al: Aligned, m: Measure) -> FloatArray:
    """unj@k = |{d ∈ D_k : d unjudged}| / k (trec_eval 10.0 ``unj_k``; empty slots are judged).

    A "red flag" measure: high values at small k mean the qrels do not cover the run.
    """
    k = cutoff_per_query(al, m)
    assert k is not None
    return safe_divide(per_query_count(al, _unjudged(al) & within(al, k)), k)
