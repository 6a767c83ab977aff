"""Prediction-powered inference: the mean a measure would have under human labels, from a
few human-labelled queries and many LLM-labelled ones, with a valid confidence interval.

Notation: ``n`` labelled queries carry the measure under human labels ``Y_i`` and under LLM
labels ``Ŷ_i``; ``N`` unlabelled queries carry ``Ŷ_j`` only. The estimand is the mean of
``Y`` over the population the queries are drawn from.

Unweighted (labelled queries a uniform sample; Angelopoulos et al. 2023, "Prediction-powered
inference", Science 382; PPI++: Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453)::

    θ̂_λ = λ·mean_j(Ŷ_j) + mean_i(Y_i − λ·Ŷ_i)
    se²  = λ²·var(Ŷ_unlabelled)/N + var(Y − λ·Ŷ)/n          (var: divisor n, not n − 1)
    λ*   = clip( cov(Y, Ŷ) / ((1 + n/N)·var₁(Ŷ_labelled ∪ Ŷ_unlabelled)), 0, 1 )

``cov`` has divisor ``n`` and ``var₁`` divisor ``n + N − 1``; the interval is
``θ̂ ± z_{1−α/2}·se`` with the normal quantile. These are the conventions of ``ppi-python``
(``ppi_mean_pointestimate``, ``ppi_mean_ci``), which the tests match to 1e-9. The labelled
queries' ``Ŷ`` do not enter the unlabelled mean. ``λ = 1`` is classic PPI, ``λ = 0`` the
human-only mean.

Weighted (labelled queries drawn with known inclusion probabilities ``π_i``, as in
stratified or active sampling; Zrnic & Candès 2024, "Active statistical inference", ICML),
with ``w_i = 1/π_i`` and ``η_k = w_k`` for a labelled query, ``0`` otherwise, over all
``M = n + N`` queries::

    Z_k(λ) = λ·Ŷ_k + η_k·(Y_k − λ·Ŷ_k)
    θ̂_λ = mean_k Z_k(λ)          se² = var(Z(λ))/M          (var: divisor M)
    λ*   = clip( −cov(η·Y, (1 − η)·Ŷ) / var((1 − η)·Ŷ), 0, 1 )

θ̂ is unbiased whatever the ``π_i`` (each query labelled independently with probability
``π_i``); λ* minimises ``var(Z(λ))``.

**Estimators** (``estimator=``): ``"crossfit"``, the default, fits each fold's λ on the
other folds' labels (:func:`ragmeter.stats.ppi_core.crossfit_mean_se`, Zrnic & Candès 2024,
"Cross-prediction-powered inference") and gives Student's t interval on ``n − 1`` df with
the unbiased variance (the human-only interval beside it too); ``"plusplus"`` is PPI++ above
(λ tuned on all the labels: too narrow at small n, ``benchmarks/ppi_coverage.py``);
``"classic"`` λ = 1. With ``strata`` (a stratified sample, ``w = N_h/n_h``) PPI and PPI++ use
the exact stratified variance (:func:`ragmeter.stats.ppi_core.stratified_mean_se`).

**The finite-sample rule** (arXiv:2505.20178): PPI++ beats the human labels alone only when
the judge's correlation with people is at least ``1/√(n − 2)``; below it (or ``n ≤ 2``, or
an undefined correlation) :attr:`PPIEstimate.weak_judge` is a note every view prints beside
the estimate, pointing at the human-only interval.

**No interval without a variance estimate.** The interval and the p-value rest on an
estimated variance; where the data give none they are not reported (``ci``, ``se``,
``pvalue`` and ``effective_n`` are ``None``) and ``reason`` says why, in one rule for every
view (``evaluate --ppi``, ``compare --ppi``, ``monitor ppi``, the report):

* fewer than 2 labelled queries: ``"1 labelled query: no interval (needs 2)"``;
* the human labels' measure ``Y`` constant on the ``n`` labelled queries: ``"human labels
  constant on n queries: no variance estimate"``. The sample variance of ``Y`` is then 0,
  which estimates nothing (three queries all scoring 1.0 do not show that every query
  scores 1.0); an interval ``[1, 1]`` or a p-value of 0 would claim a certainty the labels
  do not hold, so neither is given, whatever λ;
* otherwise an estimated standard error of 0 (``Y − λ·Ŷ`` constant on the labelled queries
  and nothing varying elsewhere): ``"zero estimated variance on n labelled queries: no
  interval"``.

"Constant" and "0" are up to rounding: a spread or standard error at most
:data:`RELATIVE_ZERO` (1e-12) of the values' magnitude is 0 (``0.2 − 0.1`` and ``0.9 − 0.8``
differ in their last bit, and a standard error of 1e-17 would give p = 0).

The human-only interval follows the same rule (constant ``Y``: none), and the LLM-only one
is left out where ``Ŷ`` is constant. A p-value is never computed from a zero, NaN or
infinite standard error: it is ``None`` (shown ``n/a``), never 0.

Weights must be finite and at most ``1/MIN_INCLUSION_PROBABILITY`` (π ≥ 1e-100): larger
ones overflow ``var(Z)``. A result that is not finite anyway is an error, never a NaN.
The arithmetic itself is :mod:`ragmeter.stats.ppi_core`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np
import numpy.typing as npt

from ragmeter.errors import RagmeterError
from ragmeter.io.label_queue import MIN_INCLUSION_PROBABILITY
from ragmeter.stats import ppi_core as core
from ragmeter.stats._common import FloatArray, normal_two_sided


class PPIError(RagmeterError, ValueError):
    """Inputs a prediction-powered estimate cannot be computed from."""


#: how λ is chosen: ``classic`` λ = 1 (PPI), ``plusplus`` power-tuned on the labelled
#: queries (PPI++), ``crossfit`` power-tuned on the other folds (cross-fit PPI++), ``fixed``
#: a λ given by the caller
Estimator = Literal["classic", "plusplus", "crossfit", "fixed"]
ESTIMATORS: tuple[str, ...] = ("classic", "plusplus", "crossfit")

#: the estimator used when none is named (and no λ is given): the one that covers at its
#: nominal level at every n of the study in ``benchmarks/ppi_coverage.py`` (docs/ppi.md)
DEFAULT_ESTIMATOR: Estimator = "crossfit"

#: folds of cross-fit PPI++ (at most one per labelled query): λ of a fold is fitted on the
#: other ``K − 1`` folds, so on ``(K − 1)/K`` of the labels; with 10 folds it is fitted on
#: 90 % of them (close to PPI++'s λ, so the interval is about as narrow) and never on the
#: fold's own labels (so the interval is not narrowed by them)
DEFAULT_FOLDS = 10

ESTIMATOR_NAMES: dict[str, str] = {
    "classic": "PPI",
    "plusplus": "PPI++",
    "crossfit": "cross-fit PPI++",
}


def estimator_name(estimator: Estimator, lam: float | None = None) -> str:
    """``PPI``, ``PPI++``, ``cross-fit PPI++`` or ``PPI, λ = x`` (a fixed λ)."""
    if estimator == "fixed":
        return "PPI" if lam == 1.0 else f"PPI, λ = {lam:g}"
    return ESTIMATOR_NAMES[estimator]


def weak_judge_threshold(n: int) -> float | None:
    """``1/√(n − 2)``: below this correlation with people PPI++ is not expected to beat the
    human labels alone at ``n`` labels (``None``, no threshold, for ``n ≤ 2``)."""
    return 1.0 / math.sqrt(n - 2) if n > 2 else None


def weak_judge_note(n: int, r: float | None) -> str | None:
    """The finite-sample rule (Mani et al. 2025, arXiv:2505.20178): the note printed beside
    an estimate whose judge correlates with people less than ``1/√(n − 2)`` on the ``n``
    labelled queries (or whose correlation is undefined, or ``n ≤ 2``); ``None`` otherwise."""
    threshold = weak_judge_threshold(n)
    if threshold is None:
        return (
            f"{n} labelled {'query' if n == 1 else 'queries'}: too few to tell whether the "
            "judge helps (needs 3); read the human-only interval"
        )
    if r is None:
        return (
            "judge-human correlation undefined (a constant side): PPI may not beat the "
            "human labels alone; read the human-only interval"
        )
    if r < threshold:
        return (
            f"judge-human correlation r = {r:.2f} below 1/√(n−2) = {threshold:.2f} at n = "
            f"{n}: PPI may not beat the human labels alone; read the human-only interval"
        )
    return None


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate of a human-label mean (or of a paired difference).

    Attributes:
        estimate: θ̂_λ, the estimate of the mean under human labels.
        ci: its ``1 − alpha`` interval; ``None`` where the data give no variance estimate
            (fewer than 2 labelled queries, constant human labels: ``reason`` says which).
        se: the standard error of ``estimate`` (``None`` without an interval).
        lam: the λ used (power-tuned unless given).
        alpha: the error level of the intervals.
        n_labelled, n_unlabelled: queries with human labels, and those with LLM labels only.
        llm_mean, llm_ci: the LLM-label mean over all ``n + N`` queries and its interval.
        human_mean, human_ci: the human-label mean over the labelled queries (weighted by
            ``w`` when weights are given) and its interval (``None`` below 2 labels).
        effective_n: the number of human labels a human-only interval would need to be as
            narrow as the PPI one, ``var(Y) / se²`` (``None`` when undefined).
        pvalue: two-sided p-value of "the human-label mean is 0" (meaningful for a paired
            difference), ``2·Φ(−|θ̂/se|)``; ``None`` without an interval (never 0 from a
            zero or undefined standard error).
        weighted: whether inverse-probability weights were used.
        reason: why there is no interval (``None`` when there is one).
        estimator: how λ was chosen (:data:`Estimator`); ``lam`` is then the mean of the
            folds' λ for ``crossfit``.
        correlation: Pearson's r between ``Y`` and ``Ŷ`` on the labelled queries (``None``
            when undefined: fewer than 2 labels or a constant side).
        stratified: whether the exact stratified variance was used (strata given).
    """

    estimate: float
    ci: tuple[float, float] | None
    se: float | None
    lam: float
    alpha: float
    n_labelled: int
    n_unlabelled: int
    llm_mean: float
    llm_ci: tuple[float, float] | None
    human_mean: float
    human_ci: tuple[float, float] | None
    effective_n: float | None
    pvalue: float | None
    weighted: bool = False
    reason: str | None = None
    estimator: Estimator = "plusplus"
    correlation: float | None = None
    stratified: bool = False

    @property
    def weak_judge(self) -> str | None:
        """The finite-sample rule's note (:func:`weak_judge_note`): the judge correlates with
        people less than ``1/√(n − 2)``, so PPI may not beat the human labels alone; ``None``
        when it does not apply. Printed beside the estimate in every view."""
        return weak_judge_note(self.n_labelled, self.correlation)

    @property
    def note(self) -> str | None:
        """Why the interval is missing, or ``None`` when there is one."""
        if self.ci is None:
            return self.reason or no_interval_reason(self.n_labelled)
        if not all(math.isfinite(v) for v in (self.estimate, *self.ci)):
            return "a number is not finite (overflow): written as null"
        return None

    @property
    def gained(self) -> float | None:
        """Effective labels gained over the human labels alone: ``effective_n − n``."""
        return None if self.effective_n is None else self.effective_n - self.n_labelled

    def to_dict(self) -> dict[str, object]:
        """The JSON object ``evaluate --ppi -f json`` prints for a measure (a number that is
        not finite, which the checks above never let through, would be ``null``, never a
        ``NaN`` that strict JSON cannot hold)."""
        return {
            "estimate": _json_number(self.estimate),
            "ci": _json_pair(self.ci),
            "lambda": _json_number(self.lam),
            "n_labelled": self.n_labelled,
            "n_unlabelled": self.n_unlabelled,
            "llm_mean": _json_number(self.llm_mean),
            "llm_ci": _json_pair(self.llm_ci),
            "human_mean": _json_number(self.human_mean),
            "human_ci": _json_pair(self.human_ci),
            "effective_n": _json_number(self.effective_n),
            "labels_gained": _json_number(self.gained),
            "alpha": self.alpha,
            "weighted": self.weighted,
            "estimator": self.estimator,
            "stratified": self.stratified,
            "judge_correlation": _json_number(self.correlation),
            "weak_judge_threshold": weak_judge_threshold(self.n_labelled),
            "weak_judge": self.weak_judge,
            "note": self.note,
        }


def _json_number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _json_pair(pair: tuple[float, float] | None) -> list[float] | None:
    if pair is None or not all(math.isfinite(v) for v in pair):
        return None
    return list(pair)


def no_interval_reason(
    n_labelled: int, *, y_constant: bool = False, zero_se: bool = False
) -> str | None:
    """The one rule of a missing interval (module docstring): why ``n_labelled`` labelled
    queries give no interval, or ``None`` when they give one."""
    if n_labelled < 2:
        queries = "query" if n_labelled == 1 else "queries"
        return f"{n_labelled} labelled {queries}: no interval (needs 2)"
    if y_constant:
        return f"human labels constant on {n_labelled} queries: no variance estimate"
    if zero_se:
        return f"zero estimated variance on {n_labelled} labelled queries: no interval"
    return None


def normal_quantile(alpha: float) -> float:
    """z_{1−α/2}, the two-sided normal quantile (standard library, no scipy)."""
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def clt_interval(
    values: npt.ArrayLike, alpha: float = 0.1
) -> tuple[float, tuple[float, float] | None]:
    """The mean of ``values`` and its CLT interval ``mean ± z_{1−α/2}·std/√n`` (std with
    divisor n, as ppi-python's ``classical_mean_ci``); no interval below 2 values or when
    every value is the same (no variance estimate)."""
    arr = _as_values(values, "values")
    if arr.shape[0] == 0:
        raise PPIError("no value to average")
    mean, se = core.classical_mean_se(arr)
    return mean, _interval(mean, se, normal_quantile(alpha), _scale(arr))


def ppi_mean(
    y_labelled: npt.ArrayLike,
    yhat_labelled: npt.ArrayLike,
    yhat_unlabelled: npt.ArrayLike,
    *,
    alpha: float = 0.1,
    lam: float | None = None,
    weights: npt.ArrayLike | None = None,
    estimator: Estimator | None = None,
    folds: int = DEFAULT_FOLDS,
    strata: npt.ArrayLike | None = None,
) -> PPIEstimate:
    """The prediction-powered estimate of the mean of ``Y`` with its ``1 − alpha`` interval.

    ``estimator`` chooses λ: ``"crossfit"`` (the default, :data:`DEFAULT_ESTIMATOR`: each of
    ``folds`` folds of the labelled queries uses the λ power-tuned on the others),
    ``"plusplus"`` (power-tuned on all the labels, PPI++) or ``"classic"`` (λ = 1); a
    given ``lam`` fixes λ instead (``estimator`` then must be left out). ``weights`` (one
    per labelled query, ``1/π_i ≥ 1``) switch to the inverse-probability estimator of active
    inference; ``strata`` (one stratum label per labelled query, with ``weights = N_h/n_h``
    the same within a stratum) to the exact variance of stratified sampling with a fixed
    number of labels per stratum. See the module docstring for the formulas and references.
    """
    y, yhat, yhat_u = _checked(y_labelled, yhat_labelled, yhat_unlabelled, alpha, lam)
    chosen = _estimator(estimator, lam, folds)
    w = _checked_weights(weights, y.shape[0])
    groups = _checked_strata(strata, w, y.shape[0], chosen)
    z = normal_quantile(alpha)
    everything = np.concatenate([yhat, yhat_u])
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        if groups is not None:
            assert w is not None
            lam_used, estimate, se = _stratified(y, yhat, yhat_u, groups, w, chosen, lam)
        elif w is None:
            lam_used, estimate, se = _unweighted(y, yhat, yhat_u, chosen, lam, folds)
        else:
            lam_used, estimate, se = _weighted(y, yhat, yhat_u, w, chosen, lam, folds)
        human_mean, human_se = core.classical_mean_se(y, w)
        llm_mean, llm_se = core.classical_mean_se(everything)
    _finite(estimate, se, human_mean, human_se, llm_mean, llm_se)
    n = y.shape[0]
    small = chosen == "crossfit" and n >= 2
    if small:  # Student's t on n − 1 df with the unbiased variance (module docstring)
        se, human_se = se * _bessel(n), human_se * _bessel(n)
        z = small_sample_quantile(alpha, n)
    scale = max(_scale(y), _scale(everything)) * (1.0 if w is None else float(w.max()))
    y_constant = _constant(y)
    zero_se = _interval(estimate, se, z, scale) is None
    reason = no_interval_reason(n, y_constant=y_constant, zero_se=zero_se)
    if reason is None and groups is not None:
        reason = _thin_stratum(groups, w, strata if strata is not None else [])
    has_ci = reason is None
    human_ci = None if n < 2 or y_constant else _interval(human_mean, human_se, z, scale)
    return PPIEstimate(
        estimate=estimate,
        ci=_interval(estimate, se, z, scale) if has_ci else None,
        se=se if has_ci else None,
        lam=lam_used,
        alpha=alpha,
        n_labelled=n,
        n_unlabelled=yhat_u.shape[0],
        llm_mean=llm_mean,
        llm_ci=_interval(llm_mean, llm_se, z, _scale(everything)),
        human_mean=human_mean,
        human_ci=human_ci,
        effective_n=human_se * human_se * n / (se * se) if has_ci else None,
        pvalue=_pvalue(estimate / se, n if small else None) if has_ci else None,
        weighted=w is not None,
        reason=reason,
        estimator=chosen,
        correlation=correlation(y, yhat),
        stratified=groups is not None,
    )


def _bessel(n: int) -> float:
    """``√(n/(n − 1))``: a standard error of divisor ``n`` to that of divisor ``n − 1``."""
    return math.sqrt(n / (n - 1))


@lru_cache(maxsize=256)
def small_sample_quantile(alpha: float, n: int) -> float:
    """``t_{1−α/2, n−1}``, Student's quantile on ``n − 1`` degrees of freedom (the
    multiplier of cross-fit PPI++'s interval and of the human-only one beside it)."""
    from ragmeter.stats.seeds import t_quantile

    return t_quantile(1.0 - alpha / 2.0, n - 1)


def _pvalue(t: float, n: int | None) -> float:
    """``2·Φ(−|t|)``, or Student's on ``n − 1`` df when ``n`` is given."""
    if n is None:
        return normal_two_sided(t)
    from ragmeter.stats._common import t_two_sided

    return t_two_sided(t, n - 1)


def correlation(y: FloatArray, yhat: FloatArray) -> float | None:
    """Pearson's r of the human and LLM values on the labelled queries; ``None`` below 2
    values or when either side is constant (up to rounding)."""
    if y.shape[0] < 2 or _constant(y) or _constant(yhat):
        return None
    with np.errstate(divide="ignore", invalid="ignore"):  # a NaN r is None just below
        r = float(np.corrcoef(y, yhat)[0, 1])
    return r if math.isfinite(r) else None


def ppi_paired_difference(
    y_a: npt.ArrayLike,
    yhat_a: npt.ArrayLike,
    yhat_unlabelled_a: npt.ArrayLike,
    y_b: npt.ArrayLike,
    yhat_b: npt.ArrayLike,
    yhat_unlabelled_b: npt.ArrayLike,
    *,
    alpha: float = 0.1,
    lam: float | None = None,
    weights: npt.ArrayLike | None = None,
    estimator: Estimator | None = None,
    folds: int = DEFAULT_FOLDS,
    strata: npt.ArrayLike | None = None,
) -> PPIEstimate:
    """The prediction-powered estimate of the mean paired difference ``A − B`` under human labels.

    The per-query differences ``D = Y_a − Y_b`` and ``D̂ = Ŷ_a − Ŷ_b`` (same queries, same
    order) go through :func:`ppi_mean`; its ``pvalue`` tests "no difference",
    ``p = 2·Φ(−|θ̂/se|)`` (the rectified z-test of ``ppi_mean_pval``).
    """
    d = _difference(y_a, y_b, "labelled Y")
    d_hat = _difference(yhat_a, yhat_b, "labelled Ŷ")
    d_hat_u = _difference(yhat_unlabelled_a, yhat_unlabelled_b, "unlabelled Ŷ")
    return ppi_mean(
        d,
        d_hat,
        d_hat_u,
        alpha=alpha,
        lam=lam,
        weights=weights,
        estimator=estimator,
        folds=folds,
        strata=strata,
    )


def ppi_lambda(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray) -> float:
    """Power-tuned λ* of the unweighted estimator (:func:`ragmeter.stats.ppi_core.tuned_lambda`).

    Undefined cases (no unlabelled query, constant Ŷ, fewer than 2 labels) give λ = 0: the
    human-only mean, which needs no predictions.
    """
    return core.tuned_lambda(y, yhat, yhat_u)


def _estimator(estimator: Estimator | None, lam: float | None, folds: int) -> Estimator:
    if lam is not None:
        if estimator is not None and estimator != "fixed":
            raise PPIError(
                f"lambda {lam} is fixed and estimator {estimator!r} chooses it: give one"
            )
        return "fixed"
    if estimator is None:
        return DEFAULT_ESTIMATOR
    if estimator not in ESTIMATORS:
        raise PPIError(
            f"estimator {estimator!r}: expected one of {', '.join(ESTIMATORS)} (or a fixed λ)"
        )
    if estimator == "crossfit" and folds < 2:
        raise PPIError(f"folds {folds}: cross-fitting needs at least 2")
    return estimator


def _unweighted(
    y: FloatArray,
    yhat: FloatArray,
    yhat_u: FloatArray,
    estimator: Estimator,
    lam: float | None,
    folds: int,
) -> tuple[float, float, float]:
    if yhat_u.shape[0] == 0:
        lam = 0.0  # every query labelled: the human mean is the estimate
    elif estimator == "crossfit":
        lams = core.crossfit_lambdas(y, yhat, yhat_u, folds)
        return (float(lams.mean()), *core.crossfit_mean_se(y, yhat, yhat_u, lams))
    elif estimator == "classic":
        lam = 1.0
    elif lam is None:
        lam = core.tuned_lambda(y, yhat, yhat_u)
    return lam, core.rectified_mean(y, yhat, yhat_u, lam), core.rectified_se(y, yhat, yhat_u, lam)


def _weighted(
    y: FloatArray,
    yhat: FloatArray,
    yhat_u: FloatArray,
    w: FloatArray,
    estimator: Estimator,
    lam: float | None,
    folds: int,
) -> tuple[float, float, float]:
    if estimator == "crossfit":
        estimate, se, lam_bar = core.crossfit_weighted_mean_se(y, yhat, yhat_u, w, folds)
        return lam_bar, estimate, se
    if estimator == "classic":
        lam = 1.0
    elif lam is None:
        lam = core.weighted_lambda(y, yhat, yhat_u, w)
    return (lam, *core.weighted_mean_se(y, yhat, yhat_u, w, lam))


def _stratified(
    y: FloatArray,
    yhat: FloatArray,
    yhat_u: FloatArray,
    strata: npt.NDArray[np.int64],
    w: FloatArray,
    estimator: Estimator,
    lam: float | None,
) -> tuple[float, float, float]:
    m = y.shape[0] + yhat_u.shape[0]
    if estimator == "classic":
        lam = 1.0
    elif lam is None:
        lam = core.stratified_lambda(y, yhat, strata, w, m)
    return (lam, *core.stratified_mean_se(y, yhat, yhat_u, strata, w, lam))


def _checked_strata(
    strata: npt.ArrayLike | None, w: FloatArray | None, n: int, estimator: Estimator
) -> npt.NDArray[np.int64] | None:
    """Stratum indices ``0..H−1`` of the labelled queries (any hashable labels in)."""
    if strata is None:
        return None
    labels = list(np.asarray(strata, dtype=object).reshape(-1))
    if len(labels) != n:
        raise PPIError(f"{len(labels)} strata for {n} labelled queries; expected one each")
    if w is None:
        raise PPIError(
            "strata need the weights N_h/n_h (inverse inclusion probabilities) of a "
            "stratified sample"
        )
    if estimator == "crossfit":
        raise PPIError(
            "cross-fit PPI++ has no exact stratified variance (its λ varies within a "
            "stratum, whose unlabelled queries are unknown): use the plusplus or classic "
            "estimator with strata, or leave the strata out (the conservative variance)"
        )
    index = {label: i for i, label in enumerate(dict.fromkeys(labels))}
    groups = np.array([index[label] for label in labels], dtype=np.int64)
    for h in range(len(index)):
        ws = w[groups == h]
        if float(np.ptp(ws)) > RELATIVE_ZERO * float(ws.max()):
            raise PPIError(
                f"stratum {list(index)[h]!r}: inclusion probabilities differ within it; a "
                "stratified sample draws every query of a stratum with the same n_h/N_h"
            )
    return groups


def _thin_stratum(
    groups: npt.NDArray[np.int64], w: FloatArray | None, strata: npt.ArrayLike
) -> str | None:
    """Why the stratified variance is missing: a stratum with 1 label and unlabelled queries
    (its within-stratum variance cannot be estimated); the stratum named as given."""
    assert w is not None
    labels = list(np.asarray(strata, dtype=object).reshape(-1))
    for h in np.unique(groups):
        sel = groups == h
        if int(sel.sum()) < 2 and float(w[sel].max()) > 1.0:
            name = labels[int(np.flatnonzero(sel)[0])]
            return f"stratum {name} has 1 labelled query: no stratified variance (needs 2)"
    return None


#: a standard error (or a spread of values) at most this share of the values' magnitude is
#: zero: rounding leaves ~1e-17 of it where the exact answer is 0 (``0.2 − 0.1`` and
#: ``0.9 − 0.8`` differ in the last bit), and no real spread of a measure is that small. A
#: rounding residue read as a standard error would give a p-value of 0.
RELATIVE_ZERO = 1e-12


def _scale(values: FloatArray) -> float:
    return float(np.max(np.abs(values))) if values.shape[0] else 0.0


def _constant(values: FloatArray) -> bool:
    """Every value the same (up to rounding, :data:`RELATIVE_ZERO`): the sample variance is
    0 and estimates nothing."""
    if values.shape[0] == 0:
        return False
    return bool(np.ptp(values) <= RELATIVE_ZERO * _scale(values))


def _finite(*values: float) -> None:
    """A NaN or infinite result is an error (an overflow the input checks did not stop),
    never a number."""
    if not all(math.isfinite(v) for v in values):
        raise PPIError(
            "the estimate is not finite (the values or weights overflow floating point); "
            "check the measure values and the inclusion probabilities"
        )


def _interval(centre: float, se: float, z: float, scale: float) -> tuple[float, float] | None:
    """``centre ± z·se``; ``None`` without a finite standard error above rounding (more than
    :data:`RELATIVE_ZERO` of ``scale``, the magnitude of the values it comes from)."""
    if not (math.isfinite(se) and se > RELATIVE_ZERO * scale and se > 0.0):
        return None
    return centre - z * se, centre + z * se


def _as_values(values: npt.ArrayLike, what: str) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.isnan(arr).any():
        i = int(np.flatnonzero(np.isnan(arr))[0])
        raise PPIError(f"{what}: value {i} is NA (undefined); drop the query or define it")
    if not np.isfinite(arr).all():
        raise PPIError(f"{what}: values must be finite")
    return arr


def _checked(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    yhat_u: npt.ArrayLike,
    alpha: float,
    lam: float | None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    if not 0.0 < alpha < 1.0:
        raise PPIError(f"alpha {alpha}: expected a level in (0, 1)")
    if lam is not None and not (math.isfinite(lam) and 0.0 <= lam <= 1.0):
        raise PPIError(f"lambda {lam}: expected a value in [0, 1]")
    y_arr = _as_values(y, "human-label values Y")
    yhat_arr = _as_values(yhat, "LLM-label values Ŷ of the labelled queries")
    yhat_u_arr = _as_values(yhat_u, "LLM-label values Ŷ of the unlabelled queries")
    if y_arr.shape != yhat_arr.shape:
        raise PPIError(
            f"{y_arr.shape[0]} human-label values for {yhat_arr.shape[0]} LLM-label values "
            "of the labelled queries; expected one of each per labelled query"
        )
    if y_arr.shape[0] == 0:
        raise PPIError("no labelled query: a prediction-powered estimate needs human labels")
    return y_arr, yhat_arr, yhat_u_arr


def _checked_weights(weights: npt.ArrayLike | None, n: int) -> FloatArray | None:
    if weights is None:
        return None
    w = _as_values(weights, "weights (inverse inclusion probabilities)")
    if w.shape[0] != n:
        raise PPIError(f"{w.shape[0]} weights for {n} labelled queries; expected one each")
    if (w < 1.0).any():
        i = int(np.flatnonzero(w < 1.0)[0])
        raise PPIError(
            f"weight {float(w[i])!r} of labelled query {i} is below 1: weights are inverse "
            "inclusion probabilities 1/π, π in (0, 1]"
        )
    largest = 1.0 / MIN_INCLUSION_PROBABILITY
    if (w > largest).any():
        i = int(np.flatnonzero(w > largest)[0])
        raise PPIError(
            f"weight {float(w[i])!r} of labelled query {i} is above {largest:g}: its "
            f"inclusion probability is below {MIN_INCLUSION_PROBABILITY:g}, and w² would "
            "overflow the estimate's variance"
        )
    return w


def _difference(a: npt.ArrayLike, b: npt.ArrayLike, what: str) -> FloatArray:
    a_arr = _as_values(a, f"{what} of A")
    b_arr = _as_values(b, f"{what} of B")
    if a_arr.shape != b_arr.shape:
        raise PPIError(f"{what}: {a_arr.shape[0]} values of A and {b_arr.shape[0]} of B")
    return a_arr - b_arr


#: the PPI confidence sequence's defaults: the time its boundary is tightest (fixed in
#: advance: choosing it from the data would void the guarantee) and the labels before which
#: its intervals are infinite (an asymptotic guarantee needs a variance from enough values)
CS_OPTIMISED_AT = 100
CS_BURN_IN = 30


@dataclass(frozen=True)
class PPISequence:
    """Intervals after each label of a stream: ``lower[t-1] ≤ θ ≤ upper[t-1]`` for every
    ``t`` at once with probability about ``1 − alpha`` (asymptotically), however often it is
    looked at; ``estimate[t-1]`` the running PPI mean."""

    estimate: FloatArray
    lower: FloatArray
    upper: FloatArray
    alpha: float


def ppi_confidence_sequence(
    y_labelled: npt.ArrayLike,
    yhat_labelled: npt.ArrayLike,
    yhat_unlabelled: npt.ArrayLike,
    *,
    alpha: float = 0.1,
    optimised_at: int = CS_OPTIMISED_AT,
    burn_in: int = CS_BURN_IN,
) -> PPISequence:
    """A PPI confidence sequence for labels arriving one by one (in the order given): the
    asymptotic confidence sequence (:func:`ragmeter.stats.ppi_core.asymptotic_cs`) of the
    PPI terms with predictable λ (:func:`ragmeter.stats.ppi_core.predictable_terms`). A
    fixed-n interval re-read after every label misses more often than ``alpha``; this one
    may be read after every label. Infinite before ``burn_in`` labels."""
    y, yhat, yhat_u = _checked(y_labelled, yhat_labelled, yhat_unlabelled, alpha, None)
    if optimised_at < 1 or burn_in < 2:
        raise PPIError("optimised_at must be at least 1 and burn_in at least 2")
    z = core.predictable_terms(y, yhat, yhat_u)
    lower, upper = core.asymptotic_cs(z, alpha, optimised_at, burn_in)
    estimate = np.cumsum(z) / np.arange(1, z.shape[0] + 1)
    return PPISequence(estimate, lower, upper, alpha)


def human_confidence_sequence(
    y_labelled: npt.ArrayLike,
    *,
    alpha: float = 0.1,
    optimised_at: int = CS_OPTIMISED_AT,
    burn_in: int = CS_BURN_IN,
) -> PPISequence:
    """The same confidence sequence on the human labels alone (``Z_i = Y_i``: λ = 0), to
    read beside :func:`ppi_confidence_sequence`'s: what the labels give without the judge."""
    if not 0.0 < alpha < 1.0:
        raise PPIError(f"alpha {alpha}: expected a level in (0, 1)")
    if optimised_at < 1 or burn_in < 2:
        raise PPIError("optimised_at must be at least 1 and burn_in at least 2")
    y = _as_values(y_labelled, "human-label values Y")
    lower, upper = core.asymptotic_cs(y, alpha, optimised_at, burn_in)
    return PPISequence(np.cumsum(y) / np.arange(1, y.shape[0] + 1), lower, upper, alpha)


def ppi_method(estimator: str | None, alpha: float) -> str:
    """How a window's estimate was made: ``cross-fit PPI++, λ power-tuned on the other folds,
    95% Student t intervals``, or ``PPI++, power-tuned λ, 95% normal intervals`` (also for an
    estimate stored before the estimator was recorded: ``None``)."""
    level = round(100 * (1 - alpha))
    if estimator == "crossfit":
        how = f"λ power-tuned on the other folds, {level}% Student t intervals"
    else:
        how = f"power-tuned λ, {level}% normal intervals"
    return f"{ESTIMATOR_NAMES[estimator or 'plusplus']}, {how}"
