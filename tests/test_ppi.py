"""Prediction-powered estimates against ppi-python, run side by side, and against the
formulas written out here from the papers (the weighted, active-inference estimator).

References: ``ppi_py.ppi_mean_pointestimate``, ``ppi_py.ppi_mean_ci``, ``ppi_py.ppi_mean_pval``
and ``ppi_py.baselines.classical_mean_ci`` (ppi-python 0.2.3); Zrnic & Candès 2024, "Active
statistical inference" for the weighted estimator. No expected value comes from ragmeter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.stats import ppi as _ppi
from ragmeter.stats.ppi import PPIError


def ppi_mean(*args, **kwargs):  # type: ignore[no-untyped-def]
    """PPI++ (these tests hold it to ppi-python) unless a λ or an estimator is given; the
    default, cross-fit PPI++, is tested in tests/test_ppi_crossfit.py."""
    if kwargs.get("lam") is None:
        kwargs.setdefault("estimator", "plusplus")
    return _ppi.ppi_mean(*args, **kwargs)


def ppi_paired_difference(*args, **kwargs):  # type: ignore[no-untyped-def]
    if kwargs.get("lam") is None:
        kwargs.setdefault("estimator", "plusplus")
    return _ppi.ppi_paired_difference(*args, **kwargs)


ppi_py = pytest.importorskip("ppi_py")
baselines = pytest.importorskip("ppi_py.baselines")

TOL = 1e-9


def _data(seed: int, n: int, big_n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.beta(2, 3, n + big_n)
    # a biased, noisy judge: shifted up, shrunk, noise
    yhat = np.clip(0.15 + 0.7 * y + rng.normal(0, 0.1, n + big_n), 0, 1)
    return y[:n], yhat[:n], yhat[n:]


CASES = [
    (seed, n, big_n) for seed in range(12) for n, big_n in ((2, 5), (8, 22), (40, 460), (200, 50))
]


@pytest.mark.parametrize(("seed", "n", "big_n"), CASES)
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
@pytest.mark.parametrize("alpha", [0.1, 0.05])
def test_matches_ppi_python(seed: int, n: int, big_n: int, lam: float | None, alpha: float) -> None:
    y, yhat, yhat_u = _data(seed, n, big_n)
    got = ppi_mean(y, yhat, yhat_u, alpha=alpha, lam=lam)
    point = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)).item())
    low, high = (
        float(np.asarray(v).item())
        for v in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
    )
    assert got.estimate == pytest.approx(point, abs=TOL)
    assert got.ci is not None
    assert got.ci[0] == pytest.approx(low, abs=TOL)
    assert got.ci[1] == pytest.approx(high, abs=TOL)
    h_low, h_high = baselines.classical_mean_ci(y, alpha=alpha)
    assert got.human_ci == pytest.approx((h_low, h_high), abs=TOL)
    assert got.human_mean == pytest.approx(float(y.mean()), abs=TOL)
    everything = np.concatenate([yhat, yhat_u])
    assert got.llm_ci == pytest.approx(
        baselines.classical_mean_ci(everything, alpha=alpha), abs=TOL
    )


@pytest.mark.parametrize("seed", range(10))
def test_pvalue_matches_ppi_python_at_lambda_one(seed: int) -> None:
    # ppi_mean_pval tunes λ without clipping it to [0, 1], so the power-tuned p-values
    # differ by design; at a fixed λ they are the same rectified z-test
    y, yhat, yhat_u = _data(seed, 30, 300)
    y = y - 0.4
    yhat = yhat - 0.45
    yhat_u = yhat_u - 0.45
    got = ppi_mean(y, yhat, yhat_u, lam=1.0)
    want = float(np.asarray(ppi_py.ppi_mean_pval(y, yhat, yhat_u, lam=1.0)).item())
    assert got.pvalue == pytest.approx(want, abs=TOL)


def test_power_tuned_lambda_by_hand() -> None:
    # λ* = cov(Y, Ŷ)/((1 + n/N)·var₁(Ŷ ∪ Ŷᵤ)), worked out on five numbers
    y = np.array([0.0, 1.0, 1.0])
    yhat = np.array([0.0, 0.5, 1.0])
    yhat_u = np.array([0.5, 0.5])
    cov = np.mean((y - 2 / 3) * (yhat - 0.5))
    assert cov == pytest.approx(((-2 / 3) * (-0.5) + (1 / 3) * 0 + (1 / 3) * 0.5) / 3)
    var_all = np.var([0.0, 0.5, 1.0, 0.5, 0.5], ddof=1)  # 0.125
    assert var_all == pytest.approx(0.125)
    lam = (0.5 / 3) / ((1 + 3 / 2) * 0.125)
    got = ppi_mean(y, yhat, yhat_u)
    assert got.lam == pytest.approx(min(1.0, lam))
    # λ = 0.5333…: θ̂ = λ·0.5 + mean(Y − λŶ) = 2/3
    assert got.estimate == pytest.approx(lam * 0.5 + np.mean(y - lam * yhat))


def _active_reference(y, yhat, yhat_u, w, lam):
    """Zrnic & Candès (2024), eq. (2)/(4) written out: θ̂ = (1/M)Σ[λŶ + (Y − λŶ)·ξ/π]."""
    terms = [lam * h + (t - lam * h) * wi for t, h, wi in zip(y, yhat, w, strict=True)]
    terms += [lam * h for h in yhat_u]
    m = len(terms)
    mean = sum(terms) / m
    var = sum((t - mean) ** 2 for t in terms) / m
    return mean, math.sqrt(var / m)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("lam", [1.0, 0.5, None])
def test_weighted_estimator_matches_the_formula(seed: int, lam: float | None) -> None:
    rng = np.random.default_rng(seed)
    y, yhat, yhat_u = _data(seed, 25, 200)
    w = 1.0 / rng.uniform(0.05, 0.6, 25)
    got = ppi_mean(y, yhat, yhat_u, weights=w, lam=lam, alpha=0.1)
    if lam is None:
        # λ* minimises the variance of the terms: no λ on a fine grid does better
        grid = np.linspace(0, 1, 2001)
        ses = [_active_reference(y, yhat, yhat_u, w, g)[1] for g in grid]
        assert got.se is not None
        assert got.se <= min(ses) + 1e-12
        lam = got.lam
    mean, se = _active_reference(y, yhat, yhat_u, w, lam)
    assert got.estimate == pytest.approx(mean, abs=TOL)
    assert got.se == pytest.approx(se, abs=TOL)
    z = 1.6448536269514722  # Φ⁻¹(0.95), from tables
    assert got.ci == pytest.approx((mean - z * se, mean + z * se), abs=TOL)
    # the human-only mean is the self-normalised weighted one (ppi-python's classical_mean_ci)
    h_low, h_high = baselines.classical_mean_ci(y, w=w, alpha=0.1)
    assert got.human_ci == pytest.approx((h_low, h_high), abs=TOL)


def test_paired_difference_is_the_mean_of_differences() -> None:
    ya, yhat_a, yu_a = _data(1, 20, 100)
    yb, yhat_b, yu_b = _data(2, 20, 100)
    got = ppi_paired_difference(ya, yhat_a, yu_a, yb, yhat_b, yu_b, lam=None)
    d, dh, du = ya - yb, yhat_a - yhat_b, yu_a - yu_b
    assert got.estimate == pytest.approx(
        float(np.asarray(ppi_py.ppi_mean_pointestimate(d, dh, du)).item()), abs=TOL
    )
    low, high = (float(np.asarray(v).item()) for v in ppi_py.ppi_mean_ci(d, dh, du))
    assert got.ci == pytest.approx((low, high), abs=TOL)


def test_one_labelled_query_gives_an_estimate_without_interval() -> None:
    got = ppi_mean([0.5], [0.4], [0.3, 0.6, 0.2], lam=1.0)
    assert got.estimate == pytest.approx(np.mean([0.3, 0.6, 0.2]) + 0.1)
    assert got.ci is None and got.human_ci is None and got.pvalue is None
    assert got.note is not None and "no interval" in got.note
    # power tuning needs two labels to estimate a covariance: λ = 0, the human value
    assert ppi_mean([0.5], [0.4], [0.3, 0.6]).estimate == pytest.approx(0.5)


def test_every_query_labelled_is_the_human_mean() -> None:
    got = ppi_mean([0.2, 0.4, 0.9], [0.1, 0.5, 0.5], [])
    assert got.lam == 0.0
    assert got.estimate == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"y": [0.1, float("nan")], "yhat": [0.1, 0.2]}, "NA"),
        ({"y": [0.1], "yhat": [0.1, 0.2]}, "1 human-label values for 2"),
        ({"y": [], "yhat": []}, "no labelled query"),
        ({"alpha": 1.5}, "alpha"),
        ({"lam": 2.0}, "lambda"),
        ({"weights": [0.5, 2.0]}, "below 1"),
        ({"weights": [2.0]}, "1 weights for 2"),
    ],
)
def test_bad_input_is_refused(kwargs: dict, message: str) -> None:
    args = {"y": [0.1, 0.2], "yhat": [0.1, 0.3], "yhat_u": [0.2, 0.4]} | kwargs
    extra = {k: args.pop(k) for k in ("alpha", "lam", "weights") if k in args}
    with pytest.raises(PPIError, match=message):
        ppi_mean(args["y"], args["yhat"], args["yhat_u"], **extra)


values = st.lists(st.floats(0, 1), min_size=2, max_size=30)


@settings(max_examples=60, deadline=None)
@given(values, st.lists(st.floats(0, 1), min_size=1, max_size=40), st.floats(0, 1))
def test_perfect_judge_gives_the_labelled_mean_at_lambda_zero_and_unbiased_shift(
    y: list[float], yhat_u: list[float], shift: float
) -> None:
    # with λ = 1, a judge off by a constant is corrected exactly: θ̂ = mean(Ŷᵤ) − shift
    arr = np.array(y)
    got = ppi_mean(arr, arr + shift, np.array(yhat_u) + shift, lam=1.0)
    assert got.estimate == pytest.approx(float(np.mean(yhat_u)), abs=1e-9)
    assert ppi_mean(arr, arr + shift, np.array(yhat_u), lam=0.0).estimate == pytest.approx(
        float(arr.mean())
    )
    if len(set(y)) == 1:  # constant human labels: no variance estimate, so no interval
        assert got.ci is None and got.pvalue is None
        assert got.note == f"human labels constant on {len(y)} queries: no variance estimate"
    elif got.ci is None:  # Y − Ŷ is constant (0 up to rounding), so only Ŷᵤ could vary
        assert np.ptp(yhat_u) < 1e-9 and got.pvalue is None
        assert got.note == f"zero estimated variance on {len(y)} labelled queries: no interval"
    else:
        assert got.ci[0] <= got.estimate <= got.ci[1]


@pytest.mark.parametrize("weighted", [False, True])
def test_the_interval_covers_the_true_mean_about_as_often_as_it_says(weighted: bool) -> None:
    # a small version of benchmarks/ppi_coverage.py: a biased noisy judge, 40 labels of 400;
    # with 400 draws a 90 % interval covers in 84–96 % of them (±4 standard errors)
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(400):
        y = rng.beta(2.0, 3.0, 400)  # true mean 0.4
        yhat = np.clip(0.15 + 0.7 * y + rng.normal(0, 0.1, 400), 0, 1)
        if weighted:  # each query labelled independently, π by a known noise proxy
            pi = np.clip(0.5 * 40 * (0.2 + yhat) / (0.2 + yhat).sum() + 0.5 * 40 / 400, 0, 1)
            labelled = rng.random(400) < pi
            w = 1.0 / pi[labelled]
        else:
            labelled = np.zeros(400, dtype=bool)
            labelled[rng.choice(400, 40, replace=False)] = True
            w = None
        est = ppi_mean(y[labelled], yhat[labelled], yhat[~labelled], alpha=0.1, weights=w)
        assert est.ci is not None
        hits += est.ci[0] <= 0.4 <= est.ci[1]
    assert 0.84 <= hits / 400 <= 0.96


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=3, max_size=25),
    st.lists(st.floats(0, 1), min_size=3, max_size=25),
    st.floats(0.1, 5),
    st.floats(-2, 2),
)
def test_estimate_follows_an_affine_change_of_scale(
    y: list[float], yhat_u: list[float], scale: float, shift: float
) -> None:
    # θ̂(a·Y + b, a·Ŷ + b) = a·θ̂(Y, Ŷ) + b at the same λ (λ* is scale-free), and the
    # interval scales with it: a measure in other units gives the same answer
    rng = np.random.default_rng(len(y) * 31 + len(yhat_u))
    arr = np.array(y)
    yhat = np.clip(arr + rng.normal(0, 0.2, arr.shape[0]), 0, 1)
    u = np.array(yhat_u)
    base = ppi_mean(arr, yhat, u)
    moved = ppi_mean(scale * arr + shift, scale * yhat + shift, scale * u + shift)
    assert moved.lam == pytest.approx(base.lam, abs=1e-9)
    assert moved.estimate == pytest.approx(scale * base.estimate + shift, abs=1e-9)
    if len(set(y)) == 1:  # constant human labels: no interval at any scale
        assert base.ci is None and moved.ci is None
        return
    if np.ptp(arr) < 1e-9:  # variances of ~1e-274 underflow to 0 at one scale or the other
        return
    assert base.ci is not None and moved.ci is not None
    assert moved.ci[1] - moved.ci[0] == pytest.approx(scale * (base.ci[1] - base.ci[0]), abs=1e-9)
