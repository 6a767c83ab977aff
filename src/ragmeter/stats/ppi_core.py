"""The arithmetic of prediction-powered inference: arrays in, floats out.

No checks, no result types, no output formats: :mod:`ragmeter.stats.ppi` validates the
inputs, calls these functions and decides what may be reported (an interval needs a variance
estimate). Every function takes float64 arrays already free of NaN and infinities.

Notation (as in :mod:`ragmeter.stats.ppi`): ``y`` and ``yhat`` are the measure under human
and LLM labels on the ``n`` labelled queries, ``yhat_u`` under LLM labels on the ``N``
unlabelled ones, ``w = 1/π`` the inverse inclusion probabilities of the labelled queries.
``var`` and ``cov`` divide by the number of values unless said otherwise (ppi-python's
conventions). A new variance (cross-fit PPI++, a confidence sequence) is one more function
here with its own known-value test.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import FloatArray


def tuned_lambda(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray) -> float:
    """Power-tuned λ* of the unweighted estimator (PPI++):

    ``λ* = clip( cov(Y, Ŷ) / ((1 + n/N)·var₁(Ŷ_labelled ∪ Ŷ_unlabelled)), 0, 1 )``

    with ``var₁`` of divisor ``n + N − 1``. Undefined cases (no unlabelled query, fewer than
    2 labels, constant Ŷ) give λ = 0: the human-only mean, which needs no predictions.

    >>> # cov = 0.25, var₁([0, 1, 0, 1]) = 1/3, 1 + n/N = 2: λ* = 0.25 / (2/3)
    >>> tuned_lambda(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    0.375
    """
    n, big_n = y.shape[0], yhat_u.shape[0]
    if big_n == 0 or n < 2:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var_all = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if not var_all > 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var_all), 0.0, 1.0))


def rectified_mean(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, lam: float) -> float:
    """``θ̂_λ = λ·mean(Ŷ_unlabelled) + mean(Y − λ·Ŷ)``; without unlabelled queries the
    first term is 0 (callers then use λ = 0: the human mean).

    >>> rectified_mean(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([0.5]), 1.0)
    0.0
    """
    imputed = float(np.mean(lam * yhat_u)) if yhat_u.shape[0] else 0.0
    return imputed + float(np.mean(y - lam * yhat))


def rectified_se(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, lam: float) -> float:
    """``se = √( λ²·var(Ŷ_unlabelled)/N + var(Y − λ·Ŷ)/n )`` (the first term 0 when N = 0).

    >>> round(rectified_se(np.array([0.0, 2.0]), np.array([0.0, 0.0]), np.array([]), 0.0), 12)
    0.707106781187
    """
    big_n = yhat_u.shape[0]
    imputed_var = float(np.var(lam * yhat_u)) / big_n if big_n else 0.0
    return math.sqrt(imputed_var + float(np.var(y - lam * yhat)) / y.shape[0])


def _parts(
    y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, w: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``η·Y`` and ``(1 − η)·Ŷ`` over all ``M = n + N`` queries (η = w on a labelled query,
    0 elsewhere: Y never enters where it is unknown)."""
    zeros = np.zeros(yhat_u.shape[0])
    eta = np.concatenate([w, zeros])
    labelled_part = eta * np.concatenate([y, zeros])
    predicted_part = (1.0 - eta) * np.concatenate([yhat, yhat_u])
    return labelled_part, predicted_part


def weighted_lambda(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, w: FloatArray) -> float:
    """λ* of the inverse-probability estimator (active inference), minimising ``var(Z(λ))``:

    ``λ* = clip( −cov(η·Y, (1 − η)·Ŷ) / var((1 − η)·Ŷ), 0, 1 )``; 0 when the denominator is.
    """
    labelled_part, predicted_part = _parts(y, yhat, yhat_u, w)
    var_pred = float(np.var(predicted_part))
    if not var_pred > 0.0:
        return 0.0
    centred = (labelled_part - labelled_part.mean()) * (predicted_part - predicted_part.mean())
    return float(np.clip(-float(np.mean(centred)) / var_pred, 0.0, 1.0))


def weighted_mean_se(
    y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, w: FloatArray, lam: float
) -> tuple[float, float]:
    """``(θ̂_λ, se)`` of the inverse-probability estimator over the ``M`` queries:

    ``Z_k = λ·Ŷ_k + η_k·(Y_k − λ·Ŷ_k)``, ``θ̂_λ = mean(Z)``, ``se = √(var(Z)/M)``.
    """
    labelled_part, predicted_part = _parts(y, yhat, yhat_u, w)
    z = labelled_part + lam * predicted_part
    return float(np.mean(z)), math.sqrt(float(np.var(z)) / z.shape[0])


def classical_mean_se(values: FloatArray, w: FloatArray | None = None) -> tuple[float, float]:
    """Mean and CLT standard error, weights normalised to sum ``n`` (ppi-python's
    ``classical_mean_ci``): ``mean(w·Y)`` and ``std(w·Y)/√n``, std of divisor ``n``.

    >>> mean, se = classical_mean_se(np.array([0.0, 2.0]))  # std 1, n = 2
    >>> mean, round(se, 12)
    (1.0, 0.707106781187)
    """
    n = values.shape[0]
    weighted = values if w is None else values * (w / w.sum() * n)
    return float(np.mean(weighted)), float(np.std(weighted)) / math.sqrt(n)


# -- cross-fit PPI++ ------------------------------------------------------------------------


def fold_labels(n: int, folds: int) -> npt.NDArray[np.int64]:
    """The fold of each of ``n`` labelled queries: ``i mod K`` in the order given (a fixed
    rule, so that the same labels give the same number), ``K = min(folds, n)``.

    >>> fold_labels(5, 2).tolist()
    [0, 1, 0, 1, 0]
    """
    return np.arange(n, dtype=np.int64) % max(1, min(folds, n))


def crossfit_lambdas(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, folds: int) -> FloatArray:
    """λ of each labelled query, fitted on the labelled queries of the *other* folds (and
    every unlabelled query) by :func:`tuned_lambda`: ``λ_i = λ*(Y_{−k(i)}, Ŷ_{−k(i)}, Ŷ_u)``.
    A query's own label never chooses its λ.

    >>> crossfit_lambdas(np.array([0.0, 1.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0, 1.0]),
    ...                  np.array([0.0, 1.0]), 2).tolist()   # each fold sees [0, 0] or [1, 1]
    [0.0, 0.0, 0.0, 0.0]
    """
    k_of = fold_labels(y.shape[0], folds)
    lams = np.empty(y.shape[0])
    for k in np.unique(k_of):
        rest = k_of != k
        lams[k_of == k] = tuned_lambda(y[rest], yhat[rest], yhat_u)
    return lams


def crossfit_mean_se(
    y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, lams: FloatArray
) -> tuple[float, float]:
    """``(θ̂, se)`` of cross-fit PPI++ (the rectifier of each fold with the λ fitted on the
    other folds; the cross-fitting of Zrnic & Candès 2024, "Cross-prediction-powered
    inference", PNAS 121, applied to the power-tuning λ rather than to the predictor)::

        θ̂   = λ̄·mean(Ŷ_unlabelled) + mean_i(Y_i − λ_i·Ŷ_i),      λ̄ = mean_i λ_i
        se² = λ̄²·var(Ŷ_unlabelled)/N + var_i(Y_i − λ_i·Ŷ_i)/n   (var: divisor n)

    θ̂ is the ``n_k``-weighted mean of the fold estimates ``λ_k·mean(Ŷ_u) + mean_k(Y −
    λ_k·Ŷ)``. Given the λ's, a fold's rectifier is unbiased for ``θ − λ_k·E Ŷ`` (its own
    labels did not choose λ_k), so θ̂ is unbiased up to λ's dependence on ``Ŷ_u``; the
    variance is PPI++'s with the fold λ's in place of one λ (the λ_k converge to the same
    λ*, so the folds' dependence through the shared labels vanishes as n grows), and the
    rectifier's variance is taken around its pooled mean, so the spread of ``λ_k·E Ŷ``
    between folds counts as variance (conservative). Without unlabelled queries λ is 0.

    >>> m, se = crossfit_mean_se(np.array([1.0, 0.0]), np.array([1.0, 1.0]),
    ...                          np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    >>> m, round(se, 12)  # λ̄ = ½: ½·½ + mean(0, 0); var(Ŷ_u) = 0, var(0, 0) = 0
    (0.25, 0.0)
    """
    big_n = yhat_u.shape[0]
    lam_bar = float(lams.mean()) if big_n else 0.0
    lams = lams if big_n else np.zeros_like(lams)
    rectifier = y - lams * yhat
    imputed = lam_bar * float(np.mean(yhat_u)) if big_n else 0.0
    imputed_var = lam_bar * lam_bar * float(np.var(yhat_u)) / big_n if big_n else 0.0
    return imputed + float(rectifier.mean()), math.sqrt(
        imputed_var + float(np.var(rectifier)) / y.shape[0]
    )


def crossfit_weighted_mean_se(
    y: FloatArray, yhat: FloatArray, yhat_u: FloatArray, w: FloatArray, folds: int
) -> tuple[float, float, float]:
    """``(θ̂, se, λ̄)`` of the inverse-probability estimator with cross-fit λ: the ``M``
    queries (labelled first, then unlabelled, in the order given) fall in folds ``k mod K``;
    the queries of fold ``k`` use the λ :func:`weighted_lambda` fits on the other folds'
    queries, and ``θ̂ = mean(Z)``, ``se² = var(Z)/M`` as :func:`weighted_mean_se` (each
    ``Z_k`` has its fold's λ, chosen without its own label)."""
    n, m = y.shape[0], y.shape[0] + yhat_u.shape[0]
    k_of = fold_labels(m, folds)
    lab_k, unl_k = k_of[:n], k_of[n:]
    labelled_part, predicted_part = _parts(y, yhat, yhat_u, w)
    lam_of = np.empty(m)
    for k in np.unique(k_of):
        lo, uo = lab_k != k, unl_k != k
        lam_of[k_of == k] = weighted_lambda(y[lo], yhat[lo], yhat_u[uo], w[lo])
    z = labelled_part + lam_of * predicted_part
    return float(np.mean(z)), math.sqrt(float(np.var(z)) / m), float(lam_of.mean())


# -- stratified designs: the exact variance --------------------------------------------------


def _stratum_moments(
    y: FloatArray, yhat: FloatArray, strata: npt.NDArray[np.int64], w: FloatArray, m: int
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per stratum ``h``: the design coefficient ``a_h = (N_h/M)²·(1 − n_h/N_h)/n_h`` and the
    sample variances (divisor ``n_h − 1``) ``s²(Y)``, ``cov(Y, Ŷ)``, ``s²(Ŷ)``, and
    ``N_h/M``; ``N_h = n_h·w_h`` (``w_h = N_h/n_h`` for a simple random sample of ``n_h`` in
    the stratum)."""
    labels = np.unique(strata)
    a, vy, c, vh, share = (np.zeros(labels.shape[0]) for _ in range(5))
    for j, h in enumerate(labels):
        sel = strata == h
        n_h = int(sel.sum())
        big_n_h = n_h * float(w[sel].mean())
        share[j] = big_n_h / m
        a[j] = share[j] ** 2 * max(0.0, 1.0 - n_h / big_n_h) / n_h
        if n_h >= 2:
            yh, ph = y[sel], yhat[sel]
            vy[j] = float(np.var(yh, ddof=1))
            vh[j] = float(np.var(ph, ddof=1))
            c[j] = float(np.sum((yh - yh.mean()) * (ph - ph.mean()))) / (n_h - 1)
    return a, vy, c, vh, share


def stratified_lambda(
    y: FloatArray, yhat: FloatArray, strata: npt.NDArray[np.int64], w: FloatArray, m: int
) -> float:
    """λ* minimising the stratified variance below: ``s²_h(Y − λŶ) = s²_h(Y) − 2λ·c_h +
    λ²·s²_h(Ŷ)``, so ``λ* = clip( Σ a_h·c_h / Σ a_h·s²_h(Ŷ), 0, 1 )`` (0 when the
    denominator is)."""
    a, _, c, vh, _ = _stratum_moments(y, yhat, strata, w, m)
    den = float(np.sum(a * vh))
    if not den > 0.0:
        return 0.0
    return float(np.clip(float(np.sum(a * c)) / den, 0.0, 1.0))


def stratified_mean_se(
    y: FloatArray,
    yhat: FloatArray,
    yhat_u: FloatArray,
    strata: npt.NDArray[np.int64],
    w: FloatArray,
    lam: float,
) -> tuple[float, float]:
    """``(θ̂, se)`` under stratified simple random sampling without replacement (``n_h``
    labelled of the ``N_h`` queries of stratum ``h``, ``w = N_h/n_h``), ``M = n + N``::

        θ̂   = λ·mean_M(Ŷ) + Σ_h (N_h/M)·mean_{S_h}(Y − λŶ)
        se² = σ̂²_Y/M + Σ_h (N_h/M)²·(1 − n_h/N_h)·s²_h(Y − λŶ)/n_h

    θ̂ is the inverse-probability estimate (:func:`weighted_mean_se`). Its error is
    ``(Ȳ_M − θ) + Σ_h (N_h/M)·(r̄_{S_h} − R̄_h)``, with ``R = Y − λŶ`` and ``R̄_h`` its
    stratum mean over all ``N_h`` queries: the ``M`` queries' own spread around the
    population mean (variance ``σ²_Y/M``), plus the sampling error of a simple random sample
    within each stratum (Cochran 1977, *Sampling Techniques*, §5.3, with the finite
    population correction ``1 − n_h/N_h``); the two are uncorrelated (the design error has
    mean 0 given the queries). ``σ̂²_Y = Σ_h (N_h/M)·(s²_h(Y) + (ȳ_h − ȳ_st)²)``. Unlike
    ``var(Z)/M``, which assumes each query labelled independently (Poisson sampling), this
    does not count the variance of a stratum's number of labels, which a fixed ``n_h`` does
    not have. Needs ``n_h ≥ 2`` in every stratum with unlabelled queries.
    """
    m = y.shape[0] + yhat_u.shape[0]
    a, vy, c, vh, share = _stratum_moments(y, yhat, strata, w, m)
    labels = np.unique(strata)
    means = np.array([float(y[strata == h].mean()) for h in labels])
    share_n = share / share.sum()
    y_st = float(np.sum(share_n * means))
    sigma2_y = float(np.sum(share_n * (vy + (means - y_st) ** 2)))
    rectifier_var = np.maximum(vy - 2.0 * lam * c + lam * lam * vh, 0.0)
    estimate = (
        lam * float(np.mean(np.concatenate([yhat, yhat_u])))
        + float(np.sum(w * (y - lam * yhat))) / m
    )
    return estimate, math.sqrt(sigma2_y / m + float(np.sum(a * rectifier_var)))


# -- labels arriving one by one: an asymptotic confidence sequence ---------------------------


def predictable_terms(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray) -> FloatArray:
    """The PPI terms of labels arriving one by one, ``Z_i = λ_i·mean(Ŷ_u) + (Y_i − λ_i·Ŷ_i)``
    (``Ŷ_u`` the LLM values of the pool of queries, known before any label) with ``λ_i``
    *predictable*: :func:`tuned_lambda` on the labels before ``i`` (0 for the first two).
    Given the past, ``E Z_i = θ + λ_i·(mean(Ŷ_u) − E Ŷ)``: θ up to the pool's own error
    (variance ``λ²·var(Ŷ_u)/N``, small beside the labels' for a large pool), so the running
    mean of ``Z`` estimates θ and the ``Z_i − θ`` are (nearly) martingale differences: the
    cross-fitting of :func:`crossfit_lambdas`, in time."""
    pool_mean = float(np.mean(yhat_u)) if yhat_u.shape[0] else 0.0
    lams = np.zeros(y.shape[0])
    for i in range(2, y.shape[0]):
        lams[i] = tuned_lambda(y[:i], yhat[:i], yhat_u)
    return lams * pool_mean + (y - lams * yhat)


def asymptotic_cs(
    z: FloatArray, alpha: float, optimised_at: int, burn_in: int
) -> tuple[FloatArray, FloatArray]:
    """The two-sided asymptotic confidence sequence of the mean of ``z`` (Waudby-Smith,
    Arnold, Wu, Howard & Ramdas, "Time-uniform central limit theory and asymptotic
    confidence sequences", Ann. Statist. 2024, Theorem 2.2)::

        C_t = μ̂_t ± σ̂_t·√( 2(tρ² + 1)/(t²ρ²) · log(√(tρ² + 1)/α) )
        ρ²  = (−2·log α + log(−2·log α + 1)) / t*

    ``σ̂_t`` the running standard deviation (divisor ``t``), ``t*`` = ``optimised_at`` (where
    the boundary is tightest, fixed in advance), intervals infinite before ``burn_in``
    values, then intersected (they never widen)."""
    t = np.arange(1, z.shape[0] + 1, dtype=np.float64)
    mean = np.cumsum(z) / t
    var = np.maximum(np.cumsum(z * z) / t - mean * mean, 0.0)
    rho2 = (-2.0 * math.log(alpha) + math.log(-2.0 * math.log(alpha) + 1.0)) / optimised_at
    radius = np.sqrt(var) * np.sqrt(
        2.0 * (t * rho2 + 1.0) / (t * t * rho2) * np.log(np.sqrt(t * rho2 + 1.0) / alpha)
    )
    lower, upper = mean - radius, mean + radius
    early = t < burn_in
    lower[early], upper[early] = -np.inf, np.inf
    return np.maximum.accumulate(lower), np.minimum.accumulate(upper)
