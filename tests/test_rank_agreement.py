"""τ_AP, τ_AP-b, top-k overlap and the row-wise τ-b and ρ of the bootstrap.

Expected values: scipy.stats.kendalltau / spearmanr run side by side; τ_AP from a direct
transcription of Yilmaz, Aslam & Robertson's formula written here (positions, not matrices);
τ_AP and τ_AP-b on the example printed in the README of Urbano's ``ircor`` R package
(0.7491182 and 0.6269841).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.stats.correlation import kendall_tau_b, spearman_rho
from ragmeter.stats.rank_agreement import (
    kendall_tau_b_rows,
    rank_changes,
    ranking,
    spearman_rho_rows,
    tau_ap,
    tau_ap_b,
    tau_ap_or_b,
    top_k_overlap,
)


def tau_ap_by_the_paper(truth: list[float], estimate: list[float]) -> float:
    """Yilmaz et al. 2008, eq. (2): walk down the estimated list; C(i) = systems above
    position i in it that the true list also ranks above the system at position i."""
    n = len(truth)
    order = sorted(range(n), key=lambda s: -estimate[s])  # estimated list, best first
    true_pos = {s: r for r, s in enumerate(sorted(range(n), key=lambda s: -truth[s]))}
    total = 0.0
    for i in range(2, n + 1):  # positions 2..n (1-based)
        system = order[i - 1]
        c = sum(1 for other in order[: i - 1] if true_pos[other] < true_pos[system])
        total += c / (i - 1)
    return 2.0 / (n - 1) * total - 1.0


# Urbano's ircor README example
X = [0.06, 0.2, 0.27, 0.37, 0.57, 0.63, 0.66, 0.9, 0.91, 0.94]
Y = [0.37, 0.06, 0.2, 0.27, 0.57, 0.66, 0.63, 0.91, 0.9, 0.94]


def test_tau_ap_on_the_ircor_example() -> None:
    assert tau_ap(X, Y) == pytest.approx(0.7491182, abs=5e-8)
    assert tau_ap(X, Y) == pytest.approx(tau_ap_by_the_paper(X, Y))


def test_tau_ap_b_with_ties_on_the_ircor_example() -> None:
    x = np.round(np.array(X) * 5) / 5
    y = np.round(np.array(Y) * 5) / 5
    assert tau_ap_b(x, y) == pytest.approx(0.6269841, abs=5e-8)
    assert tau_ap_b(y, x) == pytest.approx(tau_ap_b(x, y))  # symmetric
    chosen = tau_ap_or_b(x, y)
    assert chosen.variant == "tau_ap_b" and chosen.value == pytest.approx(0.6269841, abs=5e-8)
    # the row-wise τ-b of the bootstrap as scipy (ircor's tau_b prints 0.75 here)
    assert kendall_tau_b_rows([x], [y])[0] == pytest.approx(scipy.stats.kendalltau(x, y)[0])
    assert kendall_tau_b_rows([x], [y])[0] == pytest.approx(0.75)


def test_tau_ap_b_without_ties_is_the_mean_of_both_directions() -> None:
    assert tau_ap_b(X, Y) == pytest.approx((tau_ap(X, Y) + tau_ap(Y, X)) / 2)
    assert tau_ap_or_b(X, Y).variant == "tau_ap"


def test_tau_ap_refuses_ties_and_small_inputs() -> None:
    with pytest.raises(ValueError, match="tau_ap_b"):
        tau_ap([1, 1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="NaN"):
        tau_ap([1, math.nan], [1, 2])
    assert math.isnan(tau_ap([1], [1]))
    assert math.isnan(tau_ap_b([1, 1, 1], [1, 2, 3]))  # a constant list has no ranking


def test_a_swap_at_the_top_costs_more_than_at_the_bottom() -> None:
    truth = [5, 4, 3, 2, 1]
    top_swapped = [4, 5, 3, 2, 1]
    bottom_swapped = [5, 4, 3, 1, 2]
    # Kendall's τ sees one discordant pair in both
    assert (
        kendall_tau_b(truth, top_swapped).statistic
        == kendall_tau_b(truth, bottom_swapped).statistic
    )
    # by hand: top swap: C = 0,2,3,4 → 2/4·(0 + 1 + 1 + 1) − 1 = 0.5
    assert tau_ap(truth, top_swapped) == pytest.approx(0.5)
    # bottom swap: C = 1,2,3,3 → 2/4·(1 + 1 + 1 + 3/4) − 1 = 0.875
    assert tau_ap(truth, bottom_swapped) == pytest.approx(0.875)


distinct = st.lists(
    st.integers(min_value=-1000, max_value=1000), min_size=2, max_size=25, unique=True
)


@given(distinct, st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None)
def test_tau_ap_properties(values: list[int], rnd: object) -> None:
    truth = [float(v) for v in values]
    assert tau_ap(truth, truth) == pytest.approx(1.0)
    assert tau_ap(truth, [-v for v in truth]) == pytest.approx(-1.0)
    shuffled = truth[:]
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    value = tau_ap(truth, shuffled)
    assert -1.0 - 1e-12 <= value <= 1.0 + 1e-12
    assert value == pytest.approx(tau_ap_by_the_paper(truth, shuffled))


def test_tau_ap_is_not_symmetric() -> None:
    a, b = [5, 4, 3, 2, 1], [4, 5, 3, 2, 1]
    c = [1, 5, 4, 3, 2]  # the worst of a moved to the top … and back
    assert tau_ap(a, c) != pytest.approx(tau_ap(c, a))
    assert tau_ap(a, b) == pytest.approx(tau_ap(b, a))  # a single adjacent swap is symmetric


scores = st.lists(st.integers(min_value=0, max_value=6), min_size=2, max_size=12)


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_row_wise_tau_and_rho_match_scipy(data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=3, max_value=12))
    rows = data.draw(st.integers(min_value=1, max_value=4))
    gen = st.lists(st.integers(min_value=0, max_value=5), min_size=n, max_size=n)
    xs = np.array([data.draw(gen) for _ in range(rows)], dtype=float)
    ys = np.array([data.draw(gen) for _ in range(rows)], dtype=float)
    taus, rhos = kendall_tau_b_rows(xs, ys), spearman_rho_rows(xs, ys)
    for r in range(rows):
        constant = np.ptp(xs[r]) == 0 or np.ptp(ys[r]) == 0
        if constant:
            assert math.isnan(taus[r]) and math.isnan(rhos[r])
            continue
        assert taus[r] == pytest.approx(scipy.stats.kendalltau(xs[r], ys[r])[0])
        assert rhos[r] == pytest.approx(scipy.stats.spearmanr(xs[r], ys[r])[0])
        # and the same as the coefficients ragmeter prints with p-values
        assert taus[r] == pytest.approx(kendall_tau_b(xs[r], ys[r]).statistic)
        assert rhos[r] == pytest.approx(spearman_rho(xs[r], ys[r]).statistic)


def test_rankings_overlap_and_rank_changes() -> None:
    a = ranking({"bm25": 0.3, "dense": 0.5, "hybrid": 0.6, "mmr": 0.5})
    assert a == ["hybrid", "dense", "mmr", "bm25"]  # the tie in name order
    b = ["dense", "bm25", "hybrid", "mmr"]
    assert top_k_overlap(a, b, 1) == 0.0
    assert top_k_overlap(a, b, 3) == pytest.approx(2 / 3)
    assert top_k_overlap(a, b, 5) == 1.0  # k capped at the 4 systems
    biggest = rank_changes(a, b)[0]
    assert (biggest.name, biggest.rank_a, biggest.rank_b, biggest.shift) in {
        ("hybrid", 1, 3, 2),
        ("bm25", 4, 2, -2),
    }
    assert biggest.name == "hybrid"  # equal |shift|: the better-ranked under a first
    with pytest.raises(ValueError):
        rank_changes(a, ["x", "y", "z", "w"])


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_tau_ap_b_properties(data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=2, max_value=12))
    gen = st.lists(st.integers(min_value=0, max_value=4), min_size=n, max_size=n)
    x, y = data.draw(gen), data.draw(gen)
    value = tau_ap_b(x, y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert math.isnan(value)
        return
    assert value == pytest.approx(tau_ap_b(y, x))  # symmetric
    assert -1.0 - 1e-12 <= value <= 1.0 + 1e-12
    assert tau_ap_b(x, x) == pytest.approx(1.0)
