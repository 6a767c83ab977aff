"""A slow, obviously-correct reference for the classical measures (SPEC §2, trec_eval 10.0).

Written from the formulas in SPEC.md and trec_eval's documented semantics, not from ragmeter's
vectorized code: plain Python loops over dicts and lists, one query at a time. The property
tests compare ``ragmeter.evaluate`` against it.

Conventions (SPEC §1):

* a ranking is a list of doc ids, rank 1 first, without duplicates;
* ``grades`` maps judged doc ids to integer grades; a doc absent from it is unjudged (grade 0
  for every measure, not counted by ``judged@k``); a negative grade means "in the pool but not
  judged": never relevant, gain 0, not counted by ``judged@k`` nor as a judged non-relevant doc
  by ``bpref``;
* relevant ⇔ grade ≥ rel_level;
* a cutoff ``k`` larger than the ranking leaves empty, non-relevant slots; denominators that are
  "k" stay k.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

#: trec_eval's MIN_GEO_MEAN: per-query values are clamped to it before the log of gm_map.
MIN_GEO_MEAN = 1e-5

#: Families whose cutoff is a rank k, so that a per-query ``metadata.k`` overrides it.
#: ``gm_map`` is the geometric mean of the same per-query AP as ``map``, so it follows it.
RANK_CUTOFF_FAMILIES = frozenset(
    {
        "relative_precision",
        "unjudged",
        "hit",
        "success",
        "precision",
        "recall",
        "f1",
        "mrr",
        "map",
        "gm_map",
        "dcg",
        "ndcg",
        "ndcg_exp",
        "judged",
    }
)
#: Families that take a ``rel_level`` parameter (the graded-gain families do not).
REL_LEVEL_FAMILIES = frozenset(
    {
        "gm_bpref",
        "set_precision",
        "set_recall",
        "set_map",
        "set_f",
        "set_relative_precision",
        "relative_precision",
        "num_nonrel_judged_ret",
        "utility",
        "avg_iprec",
        "rprec_mult",
        "hit",
        "success",
        "precision",
        "recall",
        "f1",
        "mrr",
        "map",
        "gm_map",
        "rprec",
        "num_rel",
        "num_rel_ret",
        "bpref",
        "iprec_at_recall",
    }
)
#: How each family is aggregated over queries.
SUM_FAMILIES = frozenset(
    {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_unjudged_ret"}
)
GMEAN_FAMILIES = frozenset({"gm_map", "gm_bpref"})
ALL_FAMILIES = RANK_CUTOFF_FAMILIES | REL_LEVEL_FAMILIES | SUM_FAMILIES


@dataclass(frozen=True)
class RefMeasure:
    """A measure as the reference sees it: family, cutoff (or recall level), rel_level."""

    family: str
    k: int | float | None = None
    rel_level: int | None = None
    #: trec_eval's gain map for dcg/ndcg (``ndcg_1=3,2=9``): grade → gain; other grades
    #: keep gain = grade (negative → 0)
    gains: tuple[tuple[int, float], ...] = ()


# -- run ordering ------------------------------------------------------------------------


def utf8_key(text: str) -> bytes:
    return text.encode("utf-8")


def order_scored(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """trec_eval order: score descending, ties by doc id descending in byte order."""
    out: dict[str, list[str]] = {}
    for qid, docs in run.items():
        items = list(docs.items())
        # Two stable sorts: first by doc id descending, then by score descending.
        items.sort(key=lambda item: utf8_key(item[0]), reverse=True)
        items.sort(key=lambda item: item[1], reverse=True)
        if items:
            out[qid] = [doc for doc, _ in items]
    return out


def order_rows(rows: Iterable[tuple[str, str, float]]) -> dict[str, list[str]]:
    """Order ``(qid, doc, score)`` rows as trec_eval; a repeated doc keeps its best rank."""
    per_query: dict[str, list[tuple[str, float]]] = {}
    for qid, doc, score in rows:
        per_query.setdefault(qid, []).append((doc, score))
    out: dict[str, list[str]] = {}
    for qid, items in per_query.items():
        items = sorted(items, key=lambda item: utf8_key(item[0]), reverse=True)
        items.sort(key=lambda item: item[1], reverse=True)
        out[qid] = dedupe([doc for doc, _ in items])
    return out


def dedupe(ranking: Iterable[str]) -> list[str]:
    """Keep the first (best-ranked) occurrence of each doc id."""
    seen: set[str] = set()
    out: list[str] = []
    for doc in ranking:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


# -- per-query measures ------------------------------------------------------------------


def _is_rel(doc: str, grades: Mapping[str, int], level: int) -> bool:
    return doc in grades and grades[doc] >= level


def _num_rel(grades: Mapping[str, int], level: int) -> int:
    return sum(1 for g in grades.values() if g >= level)


def _top(ranking: Sequence[str], k: int | None) -> Sequence[str]:
    return ranking if k is None else ranking[:k]


def hit(ranking: Sequence[str], grades: Mapping[str, int], k: int, level: int) -> float:
    return 1.0 if any(_is_rel(d, grades, level) for d in _top(ranking, k)) else 0.0


def precision(ranking: Sequence[str], grades: Mapping[str, int], k: int, level: int) -> float:
    found = sum(1 for d in _top(ranking, k) if _is_rel(d, grades, level))
    return found / k


def recall(ranking: Sequence[str], grades: Mapping[str, int], k: int | None, level: int) -> float:
    r = _num_rel(grades, level)
    if r == 0:
        return 0.0
    found = sum(1 for d in _top(ranking, k) if _is_rel(d, grades, level))
    return found / r


def f1(ranking: Sequence[str], grades: Mapping[str, int], k: int, level: int) -> float:
    p = precision(ranking, grades, k, level)
    r = recall(ranking, grades, k, level)
    if p + r == 0:
        return 0.0
    return 2 * p * r / (p + r)


def reciprocal_rank(
    ranking: Sequence[str], grades: Mapping[str, int], k: int | None, level: int
) -> float:
    for i, d in enumerate(_top(ranking, k), start=1):
        if _is_rel(d, grades, level):
            return 1.0 / i
    return 0.0


def average_precision(
    ranking: Sequence[str], grades: Mapping[str, int], k: int | None, level: int
) -> float:
    r = _num_rel(grades, level)
    if r == 0:
        return 0.0
    found = 0
    total = 0.0
    for i, d in enumerate(_top(ranking, k), start=1):
        if _is_rel(d, grades, level):
            found += 1
            total += found / i
    return total / r


def r_precision(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> float:
    r = _num_rel(grades, level)
    if r == 0:
        return 0.0
    return sum(1 for d in ranking[:r] if _is_rel(d, grades, level)) / r


def _linear(g: int) -> float:
    return float(g) if g > 0 else 0.0


def _mapped(gains: Mapping[int, float]) -> Callable[[int], float]:
    def gain(g: int) -> float:
        return float(gains[g]) if g >= 0 and g in gains else _linear(g)

    return gain


def _exponential(g: int) -> float:
    return 2.0**g - 1.0 if g > 0 else 0.0


def dcg(
    ranking: Sequence[str],
    grades: Mapping[str, int],
    k: int | None,
    exp: bool = False,
    gain_map: Mapping[int, float] | None = None,
) -> float:
    gain = _exponential if exp else _mapped(gain_map) if gain_map else _linear
    total = 0.0
    for i, d in enumerate(_top(ranking, k), start=1):
        if d in grades:
            total += gain(grades[d]) / math.log2(i + 1)
    return total


def ndcg(
    ranking: Sequence[str],
    grades: Mapping[str, int],
    k: int | None,
    exp: bool = False,
    gain_map: Mapping[int, float] | None = None,
) -> float:
    gain = _exponential if exp else _mapped(gain_map) if gain_map else _linear
    ideal_gains = sorted((gain(g) for g in grades.values()), reverse=True)
    if k is not None:
        ideal_gains = ideal_gains[:k]
    ideal = sum(g / math.log2(i + 1) for i, g in enumerate(ideal_gains, start=1))
    if ideal == 0:
        return 0.0
    return dcg(ranking, grades, k, exp, gain_map) / ideal


def judged(ranking: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    return sum(1 for d in ranking[:k] if d in grades and grades[d] >= 0) / k


def bpref(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> float:
    """trec_eval 10.0 ``bpref``.

    Walk the ranking skipping unjudged docs (no entry, or a negative grade); for each
    relevant doc add ``1 - min(nonrel_above, R) / min(N, R)`` (1 when no judged non-relevant
    doc is above it), ``N`` = judged non-relevant docs of the query (0 ≤ grade < level);
    divide by R.
    """
    r = _num_rel(grades, level)
    n_nonrel = sum(1 for g in grades.values() if 0 <= g < level)
    nonrel_above = 0
    total = 0.0
    for d in ranking:
        if d not in grades or grades[d] < 0:
            continue
        if grades[d] < level:
            nonrel_above += 1
        elif nonrel_above == 0:
            total += 1.0
        else:
            total += 1.0 - min(nonrel_above, r) / min(n_nonrel, r)
    return total / r if r else 0.0


def recall_rank_count(x: float, r: int) -> int:
    """Number of relevant docs a recall level ``x`` asks for: round half up of ``x·R``.

    Computed in double precision, as trec_eval does in C (for a few (x, R) such as
    (0.7, 45) this differs from rounding the exact decimal product).
    """
    return math.floor(x * r + 0.5)


def iprec_at_recall(
    ranking: Sequence[str], grades: Mapping[str, int], x: float, level: int
) -> float:
    """Interpolated precision at recall ``x``: max precision at ranks ≥ the c-th relevant doc.

    ``c = recall_rank_count(x, R)``; 0 when fewer than c relevant docs were retrieved; with
    c = 0 the maximum runs over every rank (0 for an empty ranking).
    """
    r = _num_rel(grades, level)
    c = recall_rank_count(x, r)
    found = 0
    start = 1 if c == 0 else None
    precisions: list[float] = []
    for i, d in enumerate(ranking, start=1):
        if _is_rel(d, grades, level):
            found += 1
            if found == c:
                start = i
        precisions.append(found / i)
    if start is None:
        return 0.0
    return max(precisions[start - 1 :], default=0.0)


# -- further trec_eval 10.0 measures (checked against its test-suite outputs) -------------


def _num_rel_ret(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> int:
    return sum(1 for d in ranking if _is_rel(d, grades, level))


def set_precision(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> float:
    return _num_rel_ret(ranking, grades, level) / len(ranking) if ranking else 0.0


def set_recall(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> float:
    r = _num_rel(grades, level)
    return _num_rel_ret(ranking, grades, level) / r if r else 0.0


def set_f1(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> float:
    p, r = set_precision(ranking, grades, level), set_recall(ranking, grades, level)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def relative_precision(
    ranking: Sequence[str], grades: Mapping[str, int], k: int | None, level: int
) -> float:
    """Relevant retrieved in the top k over the most there could be, min(k, R)."""
    top = _top(ranking, k)
    best = min(len(ranking) if k is None else k, _num_rel(grades, level))
    return _num_rel_ret(top, grades, level) / best if best else 0.0


def utility(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> float:
    """trec_eval's default utility (a=1, b=-1, c=d=0): relevant minus non-relevant retrieved."""
    found = _num_rel_ret(ranking, grades, level)
    return float(found - (len(ranking) - found))


def eleven_point_average(ranking: Sequence[str], grades: Mapping[str, int], level: int) -> float:
    levels = [i / 10 for i in range(11)]
    return sum(iprec_at_recall(ranking, grades, x, level) for x in levels) / len(levels)


def r_precision_multiple(
    ranking: Sequence[str], grades: Mapping[str, int], x: float, level: int
) -> float:
    """P@c with c = (long)(x·R + 0.9), in double precision as trec_eval; c = 0 → 0."""
    c = int(x * _num_rel(grades, level) + 0.9)
    return _num_rel_ret(ranking[:c], grades, level) / c if c else 0.0


def _unjudged(doc: str, grades: Mapping[str, int]) -> bool:
    return doc not in grades or grades[doc] < 0


def unjudged_at(ranking: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    return sum(1 for d in ranking[:k] if _unjudged(d, grades)) / k


def value(
    measure: RefMeasure,
    ranking: Sequence[str],
    grades: Mapping[str, int],
    *,
    rel_level: int = 1,
    query_k: int | None = None,
) -> float:
    """The reference value of ``measure`` for one query.

    ``rel_level`` is the evaluation's default threshold (the measure's own wins);
    ``query_k`` a per-query ``metadata.k`` that overrides a rank cutoff.
    """
    fam = measure.family
    level = measure.rel_level if measure.rel_level is not None else rel_level
    k = measure.k
    if query_k is not None and fam in RANK_CUTOFF_FAMILIES:
        k = query_k
    ik = None if k is None else int(k)
    if fam in ("hit", "success"):
        assert ik is not None
        return hit(ranking, grades, ik, level)
    if fam == "precision":
        assert ik is not None
        return precision(ranking, grades, ik, level)
    if fam == "recall":
        return recall(ranking, grades, ik, level)
    if fam == "f1":
        assert ik is not None
        return f1(ranking, grades, ik, level)
    if fam == "mrr":
        return reciprocal_rank(ranking, grades, ik, level)
    if fam == "map":
        return average_precision(ranking, grades, ik, level)
    if fam == "gm_map":
        return average_precision(ranking, grades, ik, level)
    if fam == "rprec":
        return r_precision(ranking, grades, level)
    if fam == "dcg":
        return dcg(ranking, grades, ik, gain_map=dict(measure.gains))
    if fam == "ndcg":
        return ndcg(ranking, grades, ik, gain_map=dict(measure.gains))
    if fam == "ndcg_exp":
        return ndcg(ranking, grades, ik, exp=True)
    if fam == "judged":
        assert ik is not None
        return judged(ranking, grades, ik)
    if fam == "num_ret":
        return float(len(ranking))
    if fam == "num_rel":
        return float(_num_rel(grades, level))
    if fam == "num_rel_ret":
        return float(sum(1 for d in ranking if _is_rel(d, grades, level)))
    if fam == "bpref":
        return bpref(ranking, grades, level)
    if fam == "iprec_at_recall":
        assert k is not None
        return iprec_at_recall(ranking, grades, float(k), level)
    if fam == "gm_bpref":
        return bpref(ranking, grades, level)
    if fam == "set_precision":
        return set_precision(ranking, grades, level)
    if fam == "set_recall":
        return set_recall(ranking, grades, level)
    if fam == "set_map":
        return set_precision(ranking, grades, level) * set_recall(ranking, grades, level)
    if fam == "set_f":
        return set_f1(ranking, grades, level)
    if fam == "set_relative_precision":
        return relative_precision(ranking, grades, None, level)
    if fam == "relative_precision":
        return relative_precision(ranking, grades, ik, level)
    if fam == "num_nonrel_judged_ret":
        return float(sum(1 for d in ranking if d in grades and 0 <= grades[d] < level))
    if fam == "num_unjudged_ret":
        return float(sum(1 for d in ranking if _unjudged(d, grades)))
    if fam == "utility":
        return utility(ranking, grades, level)
    if fam == "avg_iprec":
        return eleven_point_average(ranking, grades, level)
    if fam == "rprec_mult":
        assert k is not None
        return r_precision_multiple(ranking, grades, float(k), level)
    if fam == "unjudged":
        assert ik is not None
        return unjudged_at(ranking, grades, ik)
    raise KeyError(f"reference has no family {fam!r}")


# -- a whole evaluation ------------------------------------------------------------------


def evaluate(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    measures: Mapping[str, RefMeasure],
    *,
    missing: str = "zero",
    rel_level: int = 1,
    depth: int | None = None,
    cutoffs: Mapping[str, int] | None = None,
) -> dict[str, dict[str, float]]:
    """``{qid: {name: value}}`` over the evaluated queries.

    ``run`` holds ordered, duplicate-free rankings; a query with an empty ranking is absent
    from the run. Evaluated queries are the qrels queries with at least one judgment; those
    absent from the run are scored on an empty ranking (``missing="zero"``) or dropped
    (``"skip"``). Run queries without judgments are not evaluated.
    """
    out: dict[str, dict[str, float]] = {}
    for qid, grades in qrels.items():
        if not grades:
            continue
        ranking = list(run.get(qid, []))
        if not ranking and missing == "skip":
            continue
        if depth is not None:
            ranking = ranking[:depth]
        query_k = None
        if cutoffs is not None and qid in cutoffs and qid in run:
            query_k = cutoffs[qid]
        out[qid] = {
            name: value(m, ranking, grades, rel_level=rel_level, query_k=query_k)
            for name, m in measures.items()
        }
    return out


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean of the defined (non-NaN) values; None when none is defined."""
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else None


def geometric_mean(values: Sequence[float]) -> float | None:
    """trec_eval's gm: exp(mean(log(max(v, 1e-5)))) over the defined values."""
    defined = [v for v in values if not math.isnan(v)]
    if not defined:
        return None
    return math.exp(sum(math.log(max(v, MIN_GEO_MEAN)) for v in defined) / len(defined))


def total(values: Sequence[float]) -> float:
    return sum(v for v in values if not math.isnan(v))
