"""Set-based metrics for the prompt set (SPEC §3): reference values, hand-computed cases,
a plain reference implementation and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import InputError, MeasureError, Qrels, Run, evaluate

# SPEC §3 global pool: grades [5, 4, 4, 3, 3, 3, 2, 1]
POOL = {"a5": 5, "b4": 4, "c4": 4, "d3": 3, "e3": 3, "f3": 3, "g2": 2, "h1": 1}


def _values(ranked: list[str], measures: list[str], judged: dict[str, int] = POOL, **kw: object):
    result = evaluate(Run.from_lists({"q": ranked}), Qrels.from_dict({"q": judged}), measures, **kw)
    return result.run.values[0].tolist()


def test_spec_reference_values() -> None:
    # p5 = 1/8, p4 = 2/8, p3 = 3/8 → r5 = 8, r4 = 2, r3 = 4/15; w4 = 2/8, w3 = (4/15)/8 = 1/30
    # G_ideal(4) = 1 + 1/4 + 1/4 + 1/30; top-4 [4,3,3,3] → G_obs = 1/4 + 3/30
    ra, nr4, nr5, p4, harm = _values(
        ["b4", "d3", "e3", "f3"],
        ["ra_nwg@4", "n_recall4p@4", "n_recall5@4", "precision4p@4", "harm@4"],
    )
    assert ra == pytest.approx(0.22826086956521735, abs=1e-15)
    assert pytest.approx(0.22826086956521735, abs=1e-15) == (0.25 + 0.1) / (1.5 + 1 / 30)
    assert nr4 == pytest.approx(1 / 3)  # 1 of min(4, R4+ = 3)
    assert nr5 == 0.0
    assert p4 == 0.25
    assert harm == 0.0
    assert _values(["a5", "b4", "c4", "d3"], ["ra_nwg@4"]) == [1.0]


def test_order_inside_the_top_k_does_not_matter() -> None:
    a = _values(["b4", "d3", "e3", "f3", "a5"], ["ra_nwg@4", "precision4p@4", "harm@4"])
    b = _values(["f3", "e3", "b4", "d3", "a5"], ["ra_nwg@4", "precision4p@4", "harm@4"])
    assert a == b


def test_alpha_zero_uses_base_utilities() -> None:
    # α = 0: r_g = b_g, w4 = min(0.5/1, 1) = 0.5, w3 = min(0.1/1, 0.25) = 0.1
    # top-2 [b4, d3]: G_obs = 0.6; G_ideal(2) = 1 + 0.5 → 0.4
    (v,) = _values(["b4", "d3"], ["ra_nwg@2(alpha=0)"])
    assert v == pytest.approx(0.6 / 1.5)


def test_caps_bound_the_weights() -> None:
    # α = 1, cap4 = 0.1 → w4 = min(0.25, 0.1) = 0.1; cap3 = 0.01 → w3 = min(1/30, 0.01)
    # top-2 [b4, d3]: (0.1 + 0.01) / (1 + 0.1)
    (v,) = _values(["b4", "d3"], ["ra_nwg@2(cap4=0.1,cap3=0.01)"])
    assert v == pytest.approx(0.11 / 1.1)


def test_base_utilities_are_parameters() -> None:
    # b4 = 1 → r4 = 1 / (2/8) = 4, w4 = min(4/8, 1) = 0.5; top-2 [b4, c4] → 1 / 1.5
    (v,) = _values(["b4", "c4"], ["ra_nwg@2(b4=1.0)"])
    assert v == pytest.approx(1.0 / 1.5)


def test_fallback_weights_without_grade_5() -> None:
    judged = {"b4": 4, "c4": 4, "d3": 3, "g2": 2}
    # no grade 5: w4 = 1, w3 = 0.2; top-2 [d3, g2] → 0.2 / (1 + 1)
    assert _values(["d3", "g2"], ["ra_nwg@2"], judged) == [pytest.approx(0.1)]
    # custom fallback: w3 = 0.5 → 0.5 / 2
    (v,) = _values(["d3", "g2"], ["ra_nwg@2(fallback_w3=0.5)"], judged)
    assert v == pytest.approx(0.25)
    # w4 fallback 0.5: top-1 [b4] → 0.5 / 0.5
    assert _values(["b4"], ["ra_nwg@1(fallback_w4=0.5)"], judged) == [1.0]


def test_no_useful_label_is_na() -> None:
    judged = {"g2": 2, "h1": 1}  # only zero weights: G_ideal = 0 → NA
    ra, proc, pct = _values(["g2"], ["ra_nwg@3", "proc@3", "pct_proc@3"], judged)
    assert math.isnan(ra) and math.isnan(proc) and math.isnan(pct)
    result = evaluate(Run.from_lists({"q": ["g2"]}), Qrels.from_dict({"q": judged}), ["ra_nwg@3"])
    assert result.run.aggregate("ra_nwg@3").n_defined == 0
    assert result.to_dict()["runs"][0]["metrics"]["ra_nwg@3"]["mean"] is None


def test_runs_shorter_than_k() -> None:
    # K = 5 with two retrieved items: empty slots are neither relevant nor harmful, K stays 5
    nr4, p4, harm = _values(["b4", "h1"], ["n_recall4p@5", "precision4p@5", "harm@5"])
    assert nr4 == pytest.approx(1 / 3)  # 1 / min(5, 3)
    assert p4 == pytest.approx(1 / 5)
    assert harm == pytest.approx(1 / 5)  # h1 only


def test_harm_max_grade_two() -> None:
    assert _values(["g2", "h1", "a5"], ["harm@3(harm_max_grade=2)"]) == [pytest.approx(2 / 3)]
    assert _values(["g2", "h1", "a5"], ["harm@3"]) == [pytest.approx(1 / 3)]
    with pytest.raises(MeasureError, match="harm_max_grade"):
        _values(["g2"], ["harm@3(harm_max_grade=3)"])


def test_unlabelled_items_weigh_nothing_and_are_not_harmful() -> None:
    ra, harm = _values(["zz", "a5"], ["ra_nwg@2", "harm@2"])
    assert ra == pytest.approx(1 / 1.25)  # G_obs = 1, G_ideal(2) = 1 + 0.25
    assert harm == 0.0


def test_n_recall_na_without_relevant_labels() -> None:
    judged = {"d3": 3, "g2": 2}
    nr4, nr5, proc_nr4 = _values(
        ["d3"], ["n_recall4p@2", "n_recall5@2", "proc_n_recall4p@2"], judged
    )
    assert math.isnan(nr4) and math.isnan(nr5) and math.isnan(proc_nr4)


def test_pool_splits_retrieval_from_selection_failures() -> None:
    # The pool found a5 and b4 but not c4; the selection (top 2) took b4 and d3.
    qrels = Qrels.from_dict({"q": POOL})
    pool = Run.from_lists({"q": ["d3", "b4", "a5", "e3", "f3"]})
    selection = Run.from_lists({"q": ["b4", "d3"]})
    ra, proc, pct, nr4, proc_nr4 = (
        evaluate(
            selection,
            qrels,
            ["ra_nwg@2", "proc@2", "pct_proc@2", "n_recall4p@2", "proc_n_recall4p@2"],
            pool=pool,
        )
        .run.values[0]
        .tolist()
    )
    # G_ideal(2) = 1 + 0.25; pool's best 2: a5 + b4 = 1.25 → PROC = 1
    assert proc == 1.0
    assert ra == pytest.approx((0.25 + 1 / 30) / 1.25)
    assert pct == pytest.approx(ra / proc)
    assert nr4 == pytest.approx(1 / 2)  # b4 of min(2, 3)
    assert proc_nr4 == 1.0  # the pool holds 2 of the 3 grade-4+ docs: min(2, 2) / min(2, 3)
    # a pool without the grade-5 doc caps PROC: best 2 = b4 + d3 → (0.25 + 1/30) / 1.25
    weak_pool = Run.from_lists({"q": ["d3", "b4"]})
    (proc2,) = evaluate(selection, qrels, ["proc@2"], pool=weak_pool).run.values[0].tolist()
    assert proc2 == pytest.approx((0.25 + 1 / 30) / 1.25)


def test_pool_depth_and_selection_outside_pool_warns() -> None:
    qrels = Qrels.from_dict({"q": POOL})
    run = Run.from_lists({"q": ["b4", "d3", "a5"]})
    # Without --pool the run is its own pool; with pool_depth=2 a5 is outside it.
    (proc,) = evaluate(run, qrels, ["proc@2"], pool_depth=2).run.values[0].tolist()
    assert proc == pytest.approx((0.25 + 1 / 30) / 1.25)
    pool = Run.from_lists({"q": ["d3", "e3"]})
    ev = evaluate(run, qrels, ["ra_nwg@2", "proc@2", "pct_proc@2"], pool=pool)
    ra, proc, pct = ev.run.values[0].tolist()
    assert ra > proc and pct > 1  # flagged, not hidden:
    assert any("not in the pool" in w for w in ev.warnings)


def test_zero_proc_makes_pct_proc_na() -> None:
    qrels = Qrels.from_dict({"q": POOL})
    pool = Run.from_lists({"q": ["g2", "h1"]})
    proc, pct = (
        evaluate(Run.from_lists({"q": ["a5"]}), qrels, ["proc@2", "pct_proc@2"], pool=pool)
        .run.values[0]
        .tolist()
    )
    assert proc == 0.0 and math.isnan(pct)


def test_grade_map_and_out_of_scale_grades() -> None:
    trec = {"a": 3, "b": 2, "c": 0, "d": 1}  # TREC 0..3 → 5, 4, 1, 3
    mapped = evaluate(
        Run.from_lists({"q": ["b", "a"]}),
        Qrels.from_dict({"q": trec}),
        ["ra_nwg@2"],
        grade_map="0:1,1:3,2:4,3:5",
    ).run.values[0][0]
    same = _values(["b4", "a5"], ["ra_nwg@2"], {"a5": 5, "b4": 4, "c1": 1, "d3": 3})[0]
    assert mapped == pytest.approx(same)
    # the measure's own parameter wins over the evaluation's
    own = evaluate(
        Run.from_lists({"q": ["b", "a"]}),
        Qrels.from_dict({"q": trec}),
        ["ra_nwg@2(grade_map='0:1,1:3,2:4,3:5')"],
    ).run.values[0][0]
    assert own == pytest.approx(same)
    with pytest.raises(InputError, match=r"query 'q', doc 'c': grade 0 is outside the 1\.\.5"):
        evaluate(Run.from_lists({"q": ["a"]}), Qrels.from_dict({"q": trec}), ["ra_nwg@2"])
    with pytest.raises(InputError, match="not in the grade map"):
        evaluate(
            Run.from_lists({"q": ["a"]}),
            Qrels.from_dict({"q": trec}),
            ["ra_nwg@2"],
            grade_map="1:3,2:4,3:5",
        )
    with pytest.raises(MeasureError, match=r"outside the 1\.\.5 scale"):
        evaluate(
            Run.from_lists({"q": ["a"]}),
            Qrels.from_dict({"q": trec}),
            ["ra_nwg@2"],
            grade_map="0:9",
        )


# -- a plain reference, from SPEC §3, and properties --------------------------------------

BASE = {5: 1.0, 4: 0.5, 3: 0.1, 2: 0.0, 1: 0.0}


def reference_weights(grades: list[int], alpha: float = 1.0) -> dict[int, float]:
    n = len(grades)
    count = {g: grades.count(g) for g in range(1, 6)}
    if count[5] == 0:
        return {5: 1.0, 4: 1.0, 3: 0.2, 2: 0.0, 1: 0.0}
    rarity = {g: (BASE[g] / (count[g] / n) ** alpha if count[g] else 0.0) for g in range(1, 6)}
    return {
        5: 1.0,
        4: min(rarity[4] / rarity[5], 1.0),
        3: min(rarity[3] / rarity[5], 0.25),
        2: 0.0,
        1: 0.0,
    }


def reference_ra_nwg(ranked: list[str], judged: dict[str, int], k: int) -> float:
    w = reference_weights(list(judged.values()))
    observed = sum(w[judged[d]] for d in ranked[:k] if d in judged)
    ideal = sum(sorted((w[g] for g in judged.values()), reverse=True)[:k])
    return observed / ideal if ideal else math.nan


def reference_proc(pool: list[str], judged: dict[str, int], k: int) -> float:
    w = reference_weights(list(judged.values()))
    ideal = sum(sorted((w[g] for g in judged.values()), reverse=True)[:k])
    in_pool = sorted((w[g] for d, g in judged.items() if d in set(pool)), reverse=True)
    return sum(in_pool[:k]) / ideal if ideal else math.nan


DOCS = [f"d{i}" for i in range(12)]


@st.composite
def labelled_case(draw: st.DrawFn) -> tuple[dict[str, int], list[str], list[str], int]:
    judged_docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
    judged = {d: draw(st.integers(1, 5)) for d in judged_docs}
    pool = draw(st.lists(st.sampled_from(DOCS), max_size=12, unique=True))
    take = draw(st.integers(0, len(pool)))
    selection = draw(st.permutations(pool))[:take]
    k = draw(st.integers(1, 8))
    return judged, pool, selection, k


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(labelled_case())
def test_agrees_with_the_reference(case: tuple[dict[str, int], list[str], list[str], int]) -> None:
    judged, pool, selection, k = case
    ra, proc = (
        evaluate(
            Run.from_lists({"q": selection}),
            Qrels.from_dict({"q": judged}),
            [f"ra_nwg@{k}", f"proc@{k}"],
            pool=Run.from_lists({"q": pool}),
        )
        .run.values[0]
        .tolist()
    )
    assert _same(ra, reference_ra_nwg(selection, judged, k))
    assert _same(proc, reference_proc(pool, judged, k))


@settings(max_examples=150, deadline=None)
@given(labelled_case())
def test_bounds_when_the_selection_comes_from_the_pool(
    case: tuple[dict[str, int], list[str], list[str], int],
) -> None:
    judged, pool, selection, k = case
    ra, proc, pct = (
        evaluate(
            Run.from_lists({"q": selection}),
            Qrels.from_dict({"q": judged}),
            [f"ra_nwg@{k}", f"proc@{k}", f"pct_proc@{k}"],
            pool=Run.from_lists({"q": pool}),
        )
        .run.values[0]
        .tolist()
    )
    if not math.isnan(ra):
        assert 0.0 <= ra <= proc + 1e-12 <= 1.0 + 1e-12
    if not math.isnan(pct):
        assert 0.0 <= pct <= 1.0 + 1e-12


@settings(max_examples=100, deadline=None)
@given(labelled_case(), st.randoms(use_true_random=False))
def test_reordering_inside_top_k_and_the_oracle(
    case: tuple[dict[str, int], list[str], list[str], int], rnd: object
) -> None:
    judged, _, selection, k = case
    names = [f"ra_nwg@{k}", f"n_recall4p@{k}", f"precision4p@{k}", f"harm@{k}"]
    head, tail = selection[:k], selection[k:]
    shuffled = list(head)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    a = _values(selection, names, judged)
    b = _values(shuffled + tail, names, judged)
    assert all(_same(x, y) for x, y in zip(a, b, strict=True))
    w = reference_weights(list(judged.values()))
    oracle = sorted(judged, key=lambda d: -w[judged[d]])[:k]
    (best,) = _values(oracle, [f"ra_nwg@{k}"], judged)
    assert math.isnan(best) or best == pytest.approx(1.0)
