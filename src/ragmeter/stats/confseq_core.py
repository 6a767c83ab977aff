"""Confidence sequences: the maths, arrays in and arrays out (no checks, no result types).

A confidence sequence (CS) for a mean μ at level α is a sequence of intervals C_1, C_2, …
such that P(∃ t ≥ 1 : μ ∉ C_t) ≤ α: it holds at every look at once, so it may be re-read after
every new value and stopped at any data-dependent time. A fixed-n interval re-read after each
value has no such guarantee (its miss rate grows without bound with the number of looks).

Two families are implemented, each returning the bounds after every value ``t = 1..n``:

* **Predictable plug-in empirical Bernstein** (Waudby-Smith & Ramdas 2023, "Estimating means of
  bounded random variables by betting", JRSS-B 86(1), Theorem 2 and eq. (13)–(15)), for values
  in [0, 1]. With the bets λ_i chosen from the values before i,

      C_t = ( Σ λ_i X_i / Σ λ_i )  ±  ( log(2/α) + Σ v_i ψ_E(λ_i) ) / Σ λ_i,
      v_i = 4 (X_i − μ̂_{i−1})²,   ψ_E(λ) = (−log(1 − λ) − λ) / 4,
      λ_t = min( √( 2 log(2/α) / (σ̂²_{t−1} t log(1 + t)) ), c ),  c = 1/2,
      μ̂_t = (1/2 + Σ_{i≤t} X_i) / (t + 1),  σ̂²_t = (1/4 + Σ_{i≤t} (X_i − μ̂_i)²) / (t + 1),

  (the sums over i ≤ t), intersected with [0, 1]. Valid for every sample size, nonasymptotic.
* **Asymptotic** (Waudby-Smith, Arnold, Wu, Howard & Ramdas 2024, "Time-uniform central limit
  theory and asymptotic confidence sequences", Ann. Statist., Theorem 2.2), for values with a
  finite variance (any scale: latencies too):

      C_t = μ̂_t ± σ̂_t √( 2 (t ρ² + 1) / (t² ρ²) · log( √(t ρ² + 1) / α ) ),
      ρ² = ( −2 log α + log(−2 log α + 1) ) / t*,

  μ̂_t, σ̂²_t the sample mean and (biased) variance of the first t values; ρ makes the
  boundary tightest at t = t* (the "optimised" time). Its coverage holds in the limit as t*
  grows, like a t interval's: use it where values are unbounded.

The running intersection (the largest lower bound so far, the smallest upper bound) is also a
CS and never widens; :func:`running_intersection` gives it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: the largest bet of the empirical-Bernstein CS (Waudby-Smith & Ramdas's c = 1/2)
EB_TRUNCATION = 0.5


def regularised_means(x: FloatArray) -> FloatArray:
    """μ̂_t = (1/2 + Σ_{i≤t} X_i) / (t + 1) for t = 0..n (μ̂_0 = 1/2)."""
    t = np.arange(len(x) + 1, dtype=np.float64)
    return (0.5 + np.concatenate(([0.0], np.cumsum(x)))) / (t + 1.0)


def regularised_variances(x: FloatArray) -> FloatArray:
    """σ̂²_t = (1/4 + Σ_{i≤t} (X_i − μ̂_i)²) / (t + 1) for t = 0..n (σ̂²_0 = 1/4)."""
    mu = regularised_means(x)[1:]
    t = np.arange(len(x) + 1, dtype=np.float64)
    return (0.25 + np.concatenate(([0.0], np.cumsum((x - mu) ** 2)))) / (t + 1.0)


def plug_in_bets(x: FloatArray, alpha: float, truncation: float = EB_TRUNCATION) -> FloatArray:
    """λ_t = min( √(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), c ), t = 1..n: each bet uses only
    the values before it (predictable)."""
    t = np.arange(1, len(x) + 1, dtype=np.float64)
    before = regularised_variances(x)[:-1]
    bets: FloatArray = np.minimum(
        np.sqrt(2.0 * np.log(2.0 / alpha) / (before * t * np.log1p(t))), truncation
    )
    return bets


def predictable_mixture_bounds(
    x: FloatArray, bets: FloatArray, centres: FloatArray, log_term: float
) -> tuple[FloatArray, FloatArray]:
    """The centre and half-width of the predictable-mixture empirical-Bernstein CS:

        centre_t = Σ λ_i X_i / Σ λ_i,
        half_t   = ( log_term + Σ (X_i − m_{i−1})² (−log(1 − λ_i) − λ_i) ) / Σ λ_i,

    with ``centres[i]`` = m_{i−1} the predictable centre of the variance term (the sums over
    i ≤ t). ``log_term`` is log(1/α) for one side, log(2/α) for both."""
    weights = np.cumsum(bets)
    psi = -np.log1p(-bets) - bets
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.cumsum(bets * x) / weights
        half = (log_term + np.cumsum((x - centres) ** 2 * psi)) / weights
    return centre, half


def empirical_bernstein_cs(x: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Lower and upper bounds after each value of the two-sided predictable plug-in
    empirical-Bernstein CS for the mean of values in [0, 1] (module docs), clipped to [0, 1]."""
    bets = plug_in_bets(x, alpha)
    centres = regularised_means(x)[:-1]
    centre, half = predictable_mixture_bounds(x, bets, centres, float(np.log(2.0 / alpha)))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def asymptotic_rho2(alpha: float, optimised_at: float) -> float:
    """ρ² = (−2 log α + log(−2 log α + 1)) / t*, the mixing variance whose boundary is tightest
    at t = t* (Waudby-Smith et al. 2024, Proposition 2.3)."""
    a = -2.0 * np.log(alpha)
    return float((a + np.log(a + 1.0)) / optimised_at)


def asymptotic_cs(
    x: FloatArray, alpha: float, optimised_at: float, burn_in: int
) -> tuple[FloatArray, FloatArray]:
    """Lower and upper bounds after each value of the two-sided asymptotic CS (module docs);
    infinite before ``burn_in`` values, where a variance estimated from a handful of values
    (0 from one) would make the sequence miss at once: its guarantee is asymptotic."""
    t = np.arange(1, len(x) + 1, dtype=np.float64)
    mean = np.cumsum(x) / t
    var = np.maximum(np.cumsum(x * x) / t - mean * mean, 0.0)
    rho2 = asymptotic_rho2(alpha, optimised_at)
    half = np.sqrt(var) * np.sqrt(
        2.0 * (t * rho2 + 1.0) / (t * t * rho2) * np.log(np.sqrt(t * rho2 + 1.0) / alpha)
    )
    half[t < burn_in] = np.inf
    return mean - half, mean + half


def running_intersection(lower: FloatArray, upper: FloatArray) -> tuple[FloatArray, FloatArray]:
    """∩_{s≤t} C_s: the largest lower bound so far and the smallest upper bound so far."""
    return np.maximum.accumulate(lower), np.minimum.accumulate(upper)
