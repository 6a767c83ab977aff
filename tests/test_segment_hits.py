"""The compressed relevant items (:class:`ragmeter.metrics._segments.Hits`) and the classical
ranking measures computed on them, against per-query loops written from the definitions.

The loops add in rank order in Python floats (IEEE doubles, as trec_eval's C loops) with the
C library's ``log2``: every value must have the same bits.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.align import NOT_JUDGED, Aligned
from ragmeter.measures import parse_measure
from ragmeter.metrics._segments import hit_sums, hit_window, hits, leading_hits, sum_within


def _segments(rng: random.Random, n: int) -> list[list[int]]:
    """``n`` segments of grades: empty ones, unjudged and negative grades, ties."""
    choices = [int(NOT_JUDGED), int(NOT_JUDGED), -1, 0, 0, 1, 2, 3]
    return [[rng.choice(choices) for _ in range(rng.choice([0, 1, 3, 8, 20]))] for _ in range(n)]


def _csr(segs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.cumsum([0] + [len(s) for s in segs]).astype(np.int64)
    values = np.array([g for s in segs for g in s], dtype=np.int32)
    return values, offsets


def _expected_hits(
    segs: list[list[int]], offsets: np.ndarray, floor: int
) -> tuple[list[int], list[int], list[int], list[int]]:
    """By a loop over each segment: the hits' flat indices, their 1-based ranks, their running
    counts within the segment, and each segment's number of hits."""
    flat: list[int] = []
    ranks: list[int] = []
    counts: list[int] = []
    per_segment: list[int] = []
    for s, seg in enumerate(segs):
        found = [i for i, g in enumerate(seg) if g >= floor]
        flat += [int(offsets[s]) + i for i in found]
        ranks += [i + 1 for i in found]
        counts += list(range(1, len(found) + 1))
        per_segment.append(len(found))
    return flat, ranks, counts, per_segment


@pytest.mark.parametrize("seed", range(30))
def test_hits_are_the_elements_at_or_above_the_floor(seed: int) -> None:
    rng = random.Random(seed)
    segs = _segments(rng, rng.randint(0, 12))
    values, offsets = _csr(segs)
    floor = rng.choice([0, 1, 2])
    h = hits(values, offsets, floor)
    flat, ranks, counts, per_segment = _expected_hits(segs, offsets, floor)
    assert h.index.tolist() == flat
    assert h.ranks.tolist() == ranks
    assert h.counts.tolist() == counts
    assert np.diff(h.bounds).tolist() == per_segment
    k = np.array([rng.choice([0, 1, 2, 5, 50]) for _ in segs], dtype=np.int64)
    lo, hi = hit_window(h, offsets, np.diff(offsets), k)
    within = [sum(1 for i, g in enumerate(seg[: k[s]]) if g >= floor) for s, seg in enumerate(segs)]
    assert (hi - lo).tolist() == within


@pytest.mark.parametrize("seed", range(30))
def test_leading_hits_are_the_first_elements_of_sorted_segments(seed: int) -> None:
    rng = random.Random(seed)
    segs = [sorted(s, reverse=True) for s in _segments(rng, rng.randint(0, 12))]
    values, offsets = _csr(segs)
    counts = np.array([sum(1 for g in s if g >= 1) for s in segs], dtype=np.int64)
    got, want = leading_hits(offsets, counts), hits(values, offsets, 1)
    for name in ("index", "bounds", "ranks", "counts"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist()
    k = np.array([rng.choice([0, 1, 3, 30]) for _ in segs], dtype=np.int64)
    lengths = np.diff(offsets)
    assert [a.tolist() for a in hit_window(got, offsets, lengths, k)] == [
        a.tolist() for a in hit_window(want, offsets, lengths, k)
    ]


@pytest.mark.parametrize("seed", range(20))
def test_sums_over_hits_are_the_sums_with_zero_terms(seed: int) -> None:
    """Skipping the 0.0 terms keeps every bit (values chosen to round differently when the
    order of additions changes)."""
    rng = random.Random(seed)
    segs = _segments(rng, rng.randint(1, 12))
    grades, offsets = _csr(segs)
    h = hits(grades, offsets, 1)
    full = np.zeros(len(grades))
    full[h.index] = [rng.choice([0.1, 0.2, 0.3, 1e16, 1.0 / 3.0, 2.0 / 7.0]) for _ in h.index]
    lengths = np.diff(offsets)
    for k in (None, np.array([rng.choice([0, 1, 4, 40]) for _ in segs], dtype=np.int64)):
        lo, hi = hit_window(h, offsets, lengths, k)
        got = hit_sums(full[h.index], lo, hi)
        want = sum_within(full, offsets, lengths, k)
        assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


def _aligned(segs: list[list[int]], labels: list[list[int]], rel_level: int = 1) -> Aligned:
    grades, offsets = _csr(segs)
    label_grades, label_offsets = _csr([sorted(x, reverse=True) for x in labels])
    return Aligned(
        query_ids=np.array([f"q{i}" for i in range(len(segs))], dtype=object),
        offsets=offsets,
        grades=grades,
        run_rows=np.arange(len(grades), dtype=np.int64),
        label_offsets=label_offsets,
        label_grades=label_grades,
        in_run=np.ones(len(segs), dtype=bool),
        rel_level=rel_level,
    )


def _reference(name: str, k: int | None, seg: list[int], labels: list[int], level: int) -> float:
    """The measure of one query, from its definition, added in rank order."""
    top = seg if k is None else seg[:k]
    rel = [g >= max(level, 0) for g in top]
    r = sum(1 for g in labels if g >= max(level, 0))
    if name == "P":
        return sum(rel) / k if k else 0.0
    if name == "recall":
        return sum(rel) / r if r else 0.0
    if name == "mrr":
        return 1.0 / (rel.index(True) + 1) if any(rel) else 0.0
    if name == "map":
        total, seen = 0.0, 0
        for i, is_rel in enumerate(rel):
            if is_rel:
                seen += 1
                total += seen / (i + 1)
        return total / r if r else 0.0
    if name == "rprec":
        return sum(g >= max(level, 0) for g in seg[:r]) / r if r else 0.0
    assert name == "ndcg"

    def dcg(gains: list[int]) -> float:
        total = 0.0
        for i, g in enumerate(gains if k is None else gains[:k]):
            if g > 0:
                total += g / math.log2(i + 2)
        return total

    ideal = dcg(sorted((g for g in labels if g > 0), reverse=True))
    return dcg(seg) / ideal if ideal else 0.0


@pytest.mark.parametrize("seed", range(40))
def test_classical_measures_match_per_query_loops(seed: int) -> None:
    rng = random.Random(seed)
    segs = _segments(rng, rng.randint(1, 10))
    labels = [[g for g in s if g != NOT_JUDGED] + [rng.choice([0, 1, 2, 3])] for s in segs]
    level = rng.choice([1, 1, 2, 0])
    al = _aligned(segs, labels, rel_level=level)
    for name, k in [
        ("P", 5),
        ("P", 1),
        ("recall", 3),
        ("recall", None),
        ("mrr", 2),
        ("mrr", None),
        ("map", None),
        ("map", 4),
        ("rprec", None),
        ("ndcg", 3),
        ("ndcg", None),
    ]:
        m = parse_measure(name if k is None else f"{name}@{k}")
        got = m.spec.compute(al, m)
        ndcg_level = 1  # graded measures ignore the evaluation's rel_level, as trec_eval
        want = [
            _reference(name, k, s, lab, ndcg_level if name == "ndcg" else level)
            for s, lab in zip(segs, labels, strict=True)
        ]
        assert got.tolist() == want, (name, k)
        assert got.view(np.int64).tolist() == np.array(want).view(np.int64).tolist()


@st.composite
def _runs(draw: st.DrawFn) -> tuple[list[list[int]], int, np.ndarray | None]:
    """Segments of grades, of one depth or of any lengths, a floor and cutoffs (one for
    all, one per segment, or none)."""
    grade = st.sampled_from([int(NOT_JUDGED), -1, 0, 1, 2, 3])
    n = draw(st.integers(0, 8))
    if draw(st.booleans()):  # a run cut at one depth (hits() reads segments by division)
        depth = draw(st.integers(1, 12))
        segs = [draw(st.lists(grade, min_size=depth, max_size=depth)) for _ in range(n)]
    else:
        segs = [draw(st.lists(grade, max_size=12)) for _ in range(n)]
    floor = draw(st.sampled_from([0, 1, 2, 3]))
    kind = draw(st.sampled_from(["none", "one", "each"]))
    if kind == "none":
        return segs, floor, None
    if kind == "one":
        k = draw(st.integers(0, 14))
        return segs, floor, np.full(n, k, dtype=np.int64)
    return segs, floor, np.array([draw(st.integers(0, 14)) for _ in segs], dtype=np.int64)


@settings(max_examples=300, deadline=None)
@given(_runs())
def test_hits_and_windows_match_per_segment_loops(run: tuple) -> None:
    """hits() (a bisection per segment, or a division when every segment has one depth) and
    hit_window() (a prefix count of the ranks within a cutoff, one cutoff for all or one per
    segment) against loops over each segment."""
    segs, floor, k = run
    values, offsets = _csr(segs)
    h = hits(values, offsets, floor)
    flat, ranks, counts, per_segment = _expected_hits(segs, offsets, floor)
    within = [
        sum(1 for i, g in enumerate(seg) if g >= floor and (k is None or i < k[s]))
        for s, seg in enumerate(segs)
    ]
    for name, want in [("index", flat), ("ranks", ranks), ("counts", counts)]:
        got = getattr(h, name)
        assert got.tolist() == want and got.dtype == np.int64, name
    assert h.bounds.tolist() == np.cumsum([0, *per_segment]).tolist()
    assert h.bounds.dtype == np.int64
    lo, hi = hit_window(h, offsets, np.diff(offsets), k)
    assert lo.tolist() == h.bounds[:-1].tolist()
    assert (hi - lo).tolist() == within
