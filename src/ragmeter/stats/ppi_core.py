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
