"""Confidence sequences: the empirical-Bernstein CS against a loop written from Waudby-Smith &
Ramdas (2023, Theorem 2) and a first step by hand, the asymptotic CS against its closed form,
and the anytime guarantee (the chance of *ever* missing the mean over every look ≤ α) by
simulation, beside a fixed-n interval re-read at every look, which misses far more often."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.stats import confseq_core as core
from ragmeter.stats.confseq import (
    confidence_sequence,
    difference_from_reference,
    paired_difference_sequence,
)


def eb_by_loop(x: list[float], alpha: float) -> list[tuple[float, float]]:
    """The PrPl-EB CS (WSR 2023, eq. (13)–(15)) one value at a time, from the paper's text."""
    out = []
    total, sq = 0.0, 0.0  # Σ X_i, Σ (X_i − μ̂_i)²
    mu_prev, var_prev = 0.5, 0.25  # μ̂_0, σ̂²_0
    sum_lam, sum_lam_x, sum_v_psi = 0.0, 0.0, 0.0
    for t, xt in enumerate(x, start=1):
        lam = min(math.sqrt(2 * math.log(2 / alpha) / (var_prev * t * math.log(1 + t))), 0.5)
        v = 4 * (xt - mu_prev) ** 2
        psi = (-math.log(1 - lam) - lam) / 4
        sum_lam += lam
        sum_lam_x += lam * xt
        sum_v_psi += v * psi
        centre = sum_lam_x / sum_lam
        half = (math.log(2 / alpha) + sum_v_psi) / sum_lam
        out.append((max(centre - half, 0.0), min(centre + half, 1.0)))
        total += xt
        mu_prev = (0.5 + total) / (t + 1)
        sq += (xt - mu_prev) ** 2
        var_prev = (0.25 + sq) / (t + 1)
    return out


def test_first_step_by_hand() -> None:
    """t = 1, X_1 = 0.9, α = 0.1: λ_1 = min(√(2 log 20 / (¼ · 1 · log 2)), ½) = ½ (the root is
    4.15); centre 0.9; half = (log 20 + 4 (0.9 − ½)² (log 2 − ½) / 4) / ½ = 6.0533; [0, 1]."""
    lower, upper = core.empirical_bernstein_cs(np.array([0.9]), 0.1)
    half = (math.log(20) + 0.16 * (math.log(2) - 0.5)) / 0.5
    assert half == pytest.approx(6.05327, abs=1e-5)
    assert (lower[0], upper[0]) == (0.0, 1.0)
    centre, width = core.predictable_mixture_bounds(
        np.array([0.9]), np.array([0.5]), np.array([0.5]), math.log(20)
    )
    assert centre[0] == pytest.approx(0.9) and width[0] == pytest.approx(half)


@pytest.mark.parametrize("seed", range(5))
def test_empirical_bernstein_equals_the_papers_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.beta(rng.uniform(0.3, 3), rng.uniform(0.3, 3), int(rng.integers(1, 300)))
    alpha = float(rng.choice([0.01, 0.05, 0.1]))
    lower, upper = core.empirical_bernstein_cs(x, alpha)
    expected = eb_by_loop(x.tolist(), alpha)
    assert np.allclose(lower, [a for a, _ in expected], atol=1e-12)
    assert np.allclose(upper, [b for _, b in expected], atol=1e-12)


def test_against_confseq_where_it_installs() -> None:
    """confseq (Howard & Waudby-Smith's package) is the reference where it installs; version
    0.0.11 builds only with an old pybind11 and numpy 1 (``np.float_``)."""
    predmix = pytest.importorskip(
        "confseq.predmix", reason="confseq does not install here (no wheel; numpy 2)"
    )
    rng = np.random.default_rng(7)
    x = rng.beta(2, 5, 200)
    lower, upper = predmix.predmix_empbern_twosided_cs(x, alpha=0.05, truncation=0.5)
    ours = confidence_sequence(x, alpha=0.05)
    # confseq centres the variance term on the plain running mean (from 0), the paper on the
    # regularised one: the same construction, bounds a little apart
    assert np.all(np.abs(ours.lower - np.maximum.accumulate(lower)) < 0.05)
    assert np.all(np.abs(ours.upper - np.minimum.accumulate(upper)) < 0.05)


def test_asymptotic_closed_form() -> None:
    """μ̂_t ± σ̂_t √(2(tρ²+1)/(t²ρ²) · log(√(tρ²+1)/α)), ρ² = (−2 log α + log(1 − 2 log α))/t*,
    computed here for t = 40 of values 0, 1, 2, 3, … (mean 19.5, variance (40² − 1)/12)."""
    x = np.arange(40, dtype=float)
    alpha, t_star = 0.05, 100.0
    a = -2 * math.log(alpha)
    rho2 = (a + math.log(a + 1)) / t_star
    t = 40
    half = math.sqrt((t * t - 1) / 12) * math.sqrt(
        2 * (t * rho2 + 1) / (t * t * rho2) * math.log(math.sqrt(t * rho2 + 1) / alpha)
    )
    lower, upper = core.asymptotic_cs(x, alpha, t_star, burn_in=30)
    assert (lower[39], upper[39]) == pytest.approx((19.5 - half, 19.5 + half))
    cs = confidence_sequence(x, alpha=alpha, method="asymptotic", optimised_at=t_star)
    assert cs.at(29) == (-math.inf, math.inf)  # before the burn-in
    # the running intersection: the largest lower and smallest upper bound so far
    assert cs.at(40) == (max(lower[29:40]), min(upper[29:40]))


def ever_misses(draw, mean: float, streams: int, seed: int) -> float:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    misses = 0
    for _ in range(streams):
        cs = draw(rng)
        misses += bool(np.any((cs.lower > mean) | (cs.upper < mean)))
    return misses / streams


def test_empirical_bernstein_never_misses_more_than_alpha_over_all_looks() -> None:
    """400 streams of 500 Bernoulli(0.3) values, a look after every value: the share whose CS
    ever excludes 0.3 is at most α = 0.1 (plus 3 Monte Carlo standard errors)."""
    alpha, streams = 0.1, 400
    rate = ever_misses(
        lambda rng: confidence_sequence(rng.binomial(1, 0.3, 500), alpha=alpha),
        0.3,
        streams,
        seed=3,
    )
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / streams)


def test_a_fixed_interval_reread_at_every_look_misses_far_more() -> None:
    """The same streams with a 90 % normal interval re-read after each value (from 10 on):
    most of them miss at some look — why a monitor needs the sequence."""
    rng = np.random.default_rng(3)
    misses = 0
    for _ in range(200):
        x = rng.binomial(1, 0.3, 500).astype(float)
        t = np.arange(1, 501)
        mean = np.cumsum(x) / t
        sd = np.sqrt(np.maximum(np.cumsum(x * x) / t - mean**2, 0) / t)
        miss = np.abs(mean - 0.3) > 1.645 * sd
        misses += bool(np.any(miss[9:]))
    assert misses / 200 > 0.3


def test_asymptotic_sequence_coverage_on_unbounded_values() -> None:
    """Exponential latencies (mean 200 ms), 300 streams × 1,000 values: ever-miss ≤ α + 3 se."""
    alpha, streams = 0.1, 300
    rate = ever_misses(
        lambda rng: confidence_sequence(
            rng.exponential(200.0, 1000), alpha=alpha, method="asymptotic"
        ),
        200.0,
        streams,
        seed=5,
    )
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / streams)


def test_difference_from_reference_unchanged_and_dropped() -> None:
    """Unchanged stream: the difference's sequence ever excludes 0 at most α of the time;
    a drop of 0.15 in a mean of 0.6 is found, and not before its values arrive."""
    rng = np.random.default_rng(11)
    alpha, streams, false = 0.1, 200, 0
    for _ in range(streams):
        ref = rng.beta(6, 4, 300)
        cs = difference_from_reference(ref, rng.beta(6, 4, 600), alpha=alpha)
        false += cs.first_below(0.0) is not None or cs.first_above(0.0) is not None
    assert false / streams <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / streams)
    ref = rng.beta(6, 4, 300)
    dropped = np.concatenate([rng.beta(6, 4, 200), rng.beta(4.5, 5.5, 800)])  # 0.6 → 0.45
    look = difference_from_reference(ref, dropped, alpha=alpha).first_below(0.0)
    assert look is not None and look > 200


def test_paired_difference_holds_the_true_difference() -> None:
    rng = np.random.default_rng(4)
    a = rng.beta(5, 5, 400)
    b = np.clip(a - 0.1 + rng.normal(0, 0.05, 400), 0, 1)
    cs = paired_difference_sequence(a, b, alpha=0.05)
    true = float(np.mean(a - b))
    assert cs.last[0] <= true <= cs.last[1]
    assert cs.last[0] > 0  # a is better, and the sequence says so


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60),
    st.sampled_from([0.01, 0.05, 0.2]),
)
def test_intervals_are_nested_hold_the_running_mean_and_stay_in_bounds(
    values: list[float], alpha: float
) -> None:
    cs = confidence_sequence(values, alpha=alpha)
    assert np.all(np.diff(cs.lower) >= 0) and np.all(np.diff(cs.upper) <= 0)
    assert np.all(cs.lower >= 0) and np.all(cs.upper <= 1) and np.all(cs.lower <= cs.upper)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        confidence_sequence([0.5, float("nan")])
    with pytest.raises(ValueError, match=r"value 1.5 \(number 2\) is outside \[0.0, 1.0\]"):
        confidence_sequence([0.5, 1.5])
    with pytest.raises(ValueError, match="alpha"):
        confidence_sequence([0.5], alpha=1.0)
    with pytest.raises(ValueError, match="differ in length"):
        paired_difference_sequence([0.1, 0.2], [0.3])


def test_scan_fires_falsely_at_most_alpha_over_all_looks() -> None:
    """300 unchanged streams, 30 looks of 20 values each, a reference of 60: the share in which
    some reading ever lies wholly past 0 (either way) is ≤ α + 3 se — while a fixed-level
    test of each look's window against the reference, looked at 30 times, alarms far more."""
    from ragmeter.stats.confseq import scan_from_reference

    rng = np.random.default_rng(21)
    alpha, streams = 0.1, 300
    fired = welch = 0
    for _ in range(streams):
        ref = rng.beta(6, 4, 60)
        looks = [rng.beta(6, 4, 20) for _ in range(30)]
        scan = scan_from_reference(ref, looks, alpha=alpha)
        fired += any(r.upper < 0 for r in scan.lowest_upper) or any(
            r.lower > 0 for r in scan.highest_lower
        )
        se = [math.sqrt(ref.var(ddof=1) / 60 + w.var(ddof=1) / 20) for w in looks]
        welch += any(abs(w.mean() - ref.mean()) / s > 1.645 for w, s in zip(looks, se, strict=True))
    assert fired / streams <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / streams)
    assert welch / streams > 0.5


def test_scan_reads_a_change_on_the_values_since_it_started() -> None:
    """A drop of 0.2 from look 21 on: the scan fires after look 20, on a reading that started
    at or after the change (the looks before it do not dilute it)."""
    from ragmeter.stats.confseq import scan_from_reference

    rng = np.random.default_rng(5)
    ref = rng.beta(6, 4, 200)
    looks = [rng.beta(6, 4, 30) for _ in range(20)] + [rng.beta(4, 6, 30) for _ in range(20)]
    scan = scan_from_reference(ref, looks, alpha=0.05)
    first = next(t for t, r in enumerate(scan.lowest_upper, start=1) if r.upper < 0)
    assert 20 < first <= 25
    assert scan.lowest_upper[first - 1].start >= 21
