"""Statistics: agreement, paired tests, bootstrap, corrections — checked side by side with
scipy on random data and against plainly written (slow) references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from ragmeter.stats.agreement import (  # noqa: E402
    cohen_kappa,
    confusion_matrix,
    kendall_tau_b,
    spearman_rho,
)


def _pairs(rng: np.random.Generator, trial: int) -> tuple[np.ndarray, np.ndarray]:
    n = int(rng.integers(3, 90))
    if trial % 3 == 0:  # continuous, no ties
        x = rng.normal(size=n)
        return x, x + rng.normal(size=n)
    x = rng.integers(0, 4, size=n).astype(float)  # heavy ties
    return x, x + rng.integers(0, 3, size=n)


# -- rank correlation ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_kendall_and_spearman_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for trial in range(60):
        x, y = _pairs(rng, trial)
        ours, ref = kendall_tau_b(x, y), scipy_stats.kendalltau(x, y)
        if np.isnan(ref.statistic):
            assert np.isnan(ours.statistic)
            continue
        assert ours.statistic == pytest.approx(ref.statistic, abs=1e-12)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-14)
        ours, ref = spearman_rho(x, y), scipy_stats.spearmanr(x, y)
        assert ours.statistic == pytest.approx(ref.statistic, abs=1e-12)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-14)


def test_kendall_large_sample_with_ties_matches_scipy() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 50, size=20_000)
    y = x + rng.integers(0, 30, size=20_000)
    ours, ref = kendall_tau_b(x, y), scipy_stats.kendalltau(x, y)
    assert ours.statistic == pytest.approx(ref.statistic, abs=1e-12)
    assert ours.method == "asymptotic"


def test_kendall_by_hand() -> None:
    # pairs: (1,1)-(2,3) c, (1,1)-(3,2) c, (2,3)-(3,2) d → τ = (2 − 1)/3
    r = kendall_tau_b([1, 2, 3], [1, 3, 2])
    assert r.statistic == pytest.approx(1 / 3)
    assert r.n == 3 and r.method == "exact"
    # exact: of the 6 permutations of 3, C ∈ {3, 2, 2, 1, 1, 0}; P(C ≥ 2) + P(C ≤ 1) = 1
    assert r.pvalue == pytest.approx(1.0)
    # perfect order of 4: P(C = 6) = 1/24, two-sided 2/24
    assert kendall_tau_b([1, 2, 3, 4], [10, 20, 30, 40]).pvalue == pytest.approx(2 / 24)


def test_correlation_na_pairs_dropped_and_constant_is_nan() -> None:
    r = kendall_tau_b([1, 2, np.nan, 4], [1, 2, 3, np.nan])
    assert r.n == 2
    assert np.isnan(spearman_rho([1, 1, 1], [1, 2, 3]).statistic)
    assert np.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]).statistic)
    assert r.to_dict()["n"] == 2


# -- labels --------------------------------------------------------------------------------


def test_kappa_by_hand() -> None:
    ref = [0, 1, 2, 2, 1]
    pred = [0, 2, 2, 1, 1]
    # C = [[1,0,0],[0,1,1],[0,1,1]]; p_o = 3/5; marginals (.2,.4,.4) both; p_e = .36
    assert cohen_kappa(ref, pred) == pytest.approx((0.6 - 0.36) / (1 - 0.36))
    # linear: observed weighted disagreement Σ w O = (1 + 1)/5 = .4;
    # expected Σ |i−j| p_i q_j = 2(.2·.4·1 + .2·.4·2 + .4·.4·1) = .8 → κ = 1 − .4/.8
    assert cohen_kappa(ref, pred, weights="linear") == pytest.approx(0.5)
    # quadratic: Σ w O = .4; Σ (i−j)² p_i q_j = 2(.08 + .08·4 + .16) = 1.12 → 1 − .4/1.12
    assert cohen_kappa(ref, pred, weights="quadratic") == pytest.approx(1 - 0.4 / 1.12)


def test_kappa_against_sklearn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, size=300)
    b = np.clip(a + rng.integers(-1, 2, size=300), 0, 3)
    for w in (None, "linear", "quadratic"):
        assert cohen_kappa(a, b, weights=w) == pytest.approx(
            metrics.cohen_kappa_score(a, b, weights=w)
        )


def test_confusion_matrix_precision_recall() -> None:
    cm = confusion_matrix(
        ["rel", "rel", "non", "non", None, "rel"],
        ["rel", "non", "non", "rel", "rel", "rel"],
        labels=["non", "rel"],
    )
    assert cm.n_dropped == 1
    assert cm.matrix.tolist() == [[1, 1], [1, 2]]
    assert cm.precision().tolist() == pytest.approx([0.5, 2 / 3])
    assert cm.recall().tolist() == pytest.approx([0.5, 2 / 3])
    assert cm.per_class()["rel"]["support"] == 3
    assert cm.accuracy() == pytest.approx(0.6)
    empty_class = confusion_matrix([0, 0], [0, 0], labels=[0, 1])
    assert np.isnan(empty_class.precision()[1]) and np.isnan(empty_class.recall()[1])
    assert empty_class.per_class()[1]["precision"] is None
    assert np.isnan(cohen_kappa([1, 1], [1, 1]))
    with pytest.raises(ValueError, match="not in labels"):
        confusion_matrix([0, 5], [0, 1], labels=[0, 1])


def test_inversion_count_against_loop() -> None:
    from ragmeter.stats.agreement import _count_inversions

    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 3, 7, 16, 33, 100):
        v = rng.integers(0, 5, size=n)
        slow = sum(1 for i, j in itertools.combinations(range(n), 2) if v[i] > v[j])
        assert _count_inversions(v) == slow
