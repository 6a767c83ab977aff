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
        ours = kendall_tau_b(x, y)
        # exact (no ties, n <= 50) or the tie-corrected normal approximation, as scipy
        ref = scipy_stats.kendalltau(x, y, method="exact" if ours.method == "exact" else "auto")
        if np.isnan(ref.statistic):
            assert np.isnan(ours.statistic)
            continue
        assert ours.statistic == pytest.approx(ref.statistic, abs=1e-12)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-14)
        ours, ref = spearman_rho(x, y), scipy_stats.spearmanr(x, y)
        assert ours.statistic == pytest.approx(ref.statistic, abs=1e-12)
        if len(x) > 9:  # t approximation, as scipy.stats.spearmanr
            assert ours.method == "t"
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


def _spearman_statistic(x: np.ndarray, y: np.ndarray) -> float:
    return float(scipy_stats.spearmanr(x, y).statistic)


@pytest.mark.parametrize("n", range(3, 10))
def test_spearman_exact_matches_full_enumeration(n: int) -> None:
    rng = np.random.default_rng(n)
    for ties in (False, True):
        x = rng.integers(0, 3, size=n).astype(float) if ties else rng.normal(size=n)
        y = x + rng.normal(size=n)
        if np.ptp(x) == 0:
            continue
        # reference: Pearson of scipy's average ranks over all n! pairings, written plainly
        rx, ry = scipy_stats.rankdata(x), scipy_stats.rankdata(y)
        perms = np.array(list(itertools.permutations(range(n))))
        rho = np.corrcoef(rx, ry)[0, 1]
        cx = rx - rx.mean()
        cy = ry[perms] - ry.mean()
        null = cy @ cx / np.sqrt((cx @ cx) * (cy[0] @ cy[0]))
        expected = np.mean(np.abs(null) >= abs(rho) - 1e-12)
        ours = spearman_rho(x, y)
        assert ours.method == "exact"
        assert ours.pvalue == pytest.approx(expected, rel=1e-12)
    if n <= 5:  # scipy's own exact permutation test (far slower beyond)
        x = rng.normal(size=n)
        y = x + rng.normal(size=n)
        ref = scipy_stats.permutation_test(
            (x, y), _spearman_statistic, permutation_type="pairings", n_resamples=np.inf,
            alternative="two-sided",
        )  # fmt: skip
        assert spearman_rho(x, y).pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_three_systems_in_perfect_agreement_give_one_third() -> None:
    # of the 3! = 6 orderings, the identity and its reverse are as extreme: p = 2/6
    for r in (kendall_tau_b([1, 2, 3], [4, 5, 6]), spearman_rho([1, 2, 3], [4, 5, 6])):
        assert r.statistic == pytest.approx(1.0)
        assert r.pvalue == pytest.approx(1 / 3)
        assert r.method == "exact" and r.min_pvalue == pytest.approx(1 / 3)
    # n = 5: min p = 2/120
    assert spearman_rho(range(5), range(5)).min_pvalue == pytest.approx(2 / 120)
    assert kendall_tau_b(range(5), range(5)).min_pvalue == pytest.approx(2 / 120)


@pytest.mark.parametrize("n", [34, 45, 50])
def test_kendall_exact_up_to_fifty(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    y = x + rng.normal(size=n) * 2
    ours = kendall_tau_b(x, y)
    ref = scipy_stats.kendalltau(x, y, method="exact")
    assert ours.method == "exact"
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_student_t_without_scipy_matches_scipy() -> None:
    from ragmeter.stats._common import t_two_sided

    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(5)
    for df in (1, 2, 3, 7, 29, 100, 1000):
        for t in [*(rng.normal(size=40) * 4), 0.0, 40.0, -200.0]:
            ref = float(2 * special.stdtr(df, -abs(t)))
            assert t_two_sided(t, df) == pytest.approx(ref, rel=1e-9, abs=1e-300)


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
    from ragmeter.stats.correlation import _count_inversions

    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 3, 7, 16, 33, 100):
        v = rng.integers(0, 5, size=n)
        slow = sum(1 for i, j in itertools.combinations(range(n), 2) if v[i] > v[j])
        assert _count_inversions(v) == slow


# -- paired tests against scipy --------------------------------------------------------------

from ragmeter.stats.bootstrap import (  # noqa: E402
    bootstrap_ci,
    bootstrap_means,
    paired_bootstrap_ci,
    percentile_interval,
)
from ragmeter.stats.correction import adjust, bonferroni, holm  # noqa: E402
from ragmeter.stats.paired import (  # noqa: E402
    cohens_d,
    paired_t_test,
    randomization_pvalues,
    randomization_test,
    rank_biserial,
    wilcoxon_test,
)


def _paired(rng: np.random.Generator, trial: int) -> tuple[np.ndarray, np.ndarray]:
    if trial % 2:  # continuous metric values
        n = int(rng.integers(3, 120))
        x = rng.random(n)
        return x, np.clip(x + rng.normal(0.03, 0.2, n), 0, 1)
    # a coarse metric (P@4): many ties and zero differences (n > 13: scipy's permutation
    # method for small tied samples is slow; see the test after)
    n = int(rng.integers(14, 120))
    return rng.integers(0, 5, n) / 4, rng.integers(0, 5, n) / 4


@pytest.mark.parametrize("seed", range(3))
def test_t_and_wilcoxon_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for trial in range(40):
        x, y = _paired(rng, trial)
        if np.all(x == y):
            continue
        ours, ref = paired_t_test(x, y), scipy_stats.ttest_rel(x, y)
        assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
        ours, ref = wilcoxon_test(x, y), scipy_stats.wilcoxon(x, y)
        assert ours.statistic == pytest.approx(ref.statistic)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15), (x, y)


def test_wilcoxon_small_tied_sample_matches_scipy() -> None:
    x = np.array([0.25, 0.5, 0.5, 1.0, 0.0, 0.75, 0.5, 0.25, 1.0])
    y = np.array([0.0, 0.25, 0.5, 0.5, 0.25, 0.25, 0.0, 0.0, 0.5])
    ours, ref = wilcoxon_test(x, y), scipy_stats.wilcoxon(x, y)
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_wilcoxon_methods_follow_scipy() -> None:
    assert wilcoxon_test(np.arange(1, 11) * 0.1, np.zeros(10)).method == "exact"
    tied = np.array([1, 1, 2, 2, -3, 1, 2, 3, 1, 2, 0.0])
    assert wilcoxon_test(tied, np.zeros(11)).method == "exact"  # enumerated signs (n ≤ 13)
    many = np.tile(tied, 5)
    assert wilcoxon_test(many, np.zeros(55)).method == "asymptotic"


def test_degenerate_differences() -> None:
    x = np.array([0.5, 0.2, 0.3])
    assert paired_t_test(x, x).pvalue == 1.0
    assert wilcoxon_test(x, x).pvalue == 1.0
    assert randomization_test(x, x).pvalue == 1.0
    assert cohens_d(x, x) == 0.0 and rank_biserial(x, x) == 0.0
    assert np.isnan(paired_t_test([1.0], [0.0]).pvalue)
    assert np.isnan(randomization_test([], []).pvalue)


def test_effect_sizes_by_hand() -> None:
    x = np.array([3.0, 5.0, 4.0, 6.0])
    y = np.array([1.0, 4.0, 5.0, 3.0])  # d = 2, 1, −1, 3: mean 1.25, sd √(8.75/3)
    assert cohens_d(x, y) == pytest.approx(1.25 / np.sqrt(8.75 / 3))
    # |d| ranks: 1→1.5, 1→1.5, 2→3, 3→4; W+ = 1.5 + 3 + 4 = 8.5, W− = 1.5
    assert rank_biserial(x, y) == pytest.approx((8.5 - 1.5) / 10)


# -- randomization test against a plainly written one ----------------------------------------


def _slow_randomization(d: np.ndarray, permutations: int, seed: int) -> float:
    """Loop reference: flip each sign with a fair coin, count |Σ| ≥ |observed|."""
    rng = np.random.default_rng(seed)
    observed = abs(d.sum())
    hits = 0
    for _ in range(permutations):
        signs = np.where(rng.random(d.shape[0]) < 0.5, -1.0, 1.0)
        if abs((signs * d).sum()) >= observed - 1e-9 * np.abs(d).sum():
            hits += 1
    return (hits + 1) / (permutations + 1)


def _enumerated(d: np.ndarray) -> float:
    observed = abs(d.sum())
    sums = [
        abs(sum(s * v for s, v in zip(signs, d, strict=True)))
        for signs in itertools.product((-1.0, 1.0), repeat=d.shape[0])
    ]
    return float(np.mean(np.array(sums) >= observed - 1e-9 * np.abs(d).sum()))


def test_randomization_exact_enumeration() -> None:
    rng = np.random.default_rng(5)
    for n in (1, 2, 5, 9, 12):
        d = np.round(rng.normal(0.1, 0.3, n), 2)
        test = randomization_test(d, np.zeros(n), permutations=10_000)
        assert test.method == "exact"
        assert test.pvalue == pytest.approx(_enumerated(d[d != 0]), abs=1e-12)
    # 8 differences, all +0.1: only the 2 extreme sign vectors of 256 reach |Σ| = 0.8
    assert randomization_test(np.full(8, 0.1), np.zeros(8)).pvalue == pytest.approx(2 / 256)


def test_randomization_monte_carlo_matches_loop_within_error() -> None:
    rng = np.random.default_rng(11)
    permutations = 4000
    for shift in (0.0, 0.03, 0.06):
        d = rng.normal(shift, 0.3, 60)
        fast = randomization_test(d, np.zeros(60), permutations=permutations, seed=1)
        slow = _slow_randomization(d, permutations, seed=2)
        assert fast.method == "monte-carlo"
        # two independent estimates of p: difference sd ≤ √(2·p(1−p)/B)
        sd = np.sqrt(2 * max(slow * (1 - slow), 1e-4) / permutations)
        assert abs(fast.pvalue - slow) < 5 * sd
        # and both near the t-test's p (n = 60: the randomization distribution is ≈ normal)
        assert fast.pvalue == pytest.approx(paired_t_test(d, np.zeros(60)).pvalue, abs=0.03)


def test_randomization_columns_seeded_and_independent_of_each_other() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(0.02, 0.2, (500, 4))
    p1, _ = randomization_pvalues(d, permutations=3000, seed=7)
    p2, _ = randomization_pvalues(d, permutations=3000, seed=7)
    assert np.array_equal(p1, p2)
    alone, _ = randomization_pvalues(d[:, 2], permutations=3000, seed=7)
    assert alone[0] == p1[2]
    p3, _ = randomization_pvalues(d, permutations=3000, seed=8)
    assert not np.array_equal(p1, p3)
    assert np.all(p1 >= 1 / 3001)
    with pytest.raises(ValueError, match="NaN"):
        randomization_pvalues(np.array([np.nan, 1.0]))


# -- bootstrap -------------------------------------------------------------------------------


def test_bootstrap_reproducible_and_matches_a_loop() -> None:
    rng = np.random.default_rng(3)
    v = rng.random((40, 3))
    a = bootstrap_means(v, replicates=500, seed=9)
    assert np.array_equal(a, bootstrap_means(v, replicates=500, seed=9))
    assert not np.array_equal(a, bootstrap_means(v, replicates=500, seed=10))
    # the same draws, replicate by replicate, with a loop
    ref_rng = np.random.default_rng(9)
    idx = ref_rng.integers(0, 40, size=(500, 40), dtype=np.int64)
    slow = np.array([[v[row, j].mean() for j in range(3)] for row in idx])
    assert np.allclose(a, slow, rtol=0, atol=1e-12)
    # columns resampled together share their draws: the mean of a difference is the
    # difference of the means
    assert np.allclose(
        bootstrap_means(v[:, 1] - v[:, 0], replicates=500, seed=9)[:, 0], a[:, 1] - a[:, 0]
    )


def test_bootstrap_ci_percentiles_and_na() -> None:
    rng = np.random.default_rng(4)
    v = rng.normal(0.5, 0.1, 200)
    low, high = bootstrap_ci(v, replicates=2000, seed=1)
    reps = bootstrap_means(v, replicates=2000, seed=1)[:, 0]
    assert (low, high) == (np.quantile(reps, 0.025), np.quantile(reps, 0.975))
    assert low < v.mean() < high
    # NaN values are dropped before resampling
    with_na = np.r_[v, np.nan, np.nan]
    assert bootstrap_ci(with_na, replicates=2000, seed=1) == (low, high)
    assert all(np.isnan(bootstrap_ci([np.nan])))
    x, y = v, v + 0.1
    assert paired_bootstrap_ci(x, y, replicates=100, seed=0) == pytest.approx((-0.1, -0.1))
    lo, hi = percentile_interval(np.arange(101.0), 0.9)
    assert (lo[0], hi[0]) == pytest.approx((5.0, 95.0))


# -- corrections -----------------------------------------------------------------------------


def test_holm_and_bonferroni_by_hand() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # Bonferroni: ×4
    assert bonferroni(p).tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    # Holm: sorted .005, .01, .03, .04 → ×4, ×3, ×2, ×1 = .02, .03, .06, .04 → running
    # max .02, .03, .06, .06
    assert holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]).tolist() == pytest.approx([1.0, 1.0])  # capped at 1
    # NaN (untestable) is left out of m
    out = holm([0.01, np.nan, 0.02])
    assert np.isnan(out[1]) and out[[0, 2]].tolist() == pytest.approx([0.02, 0.02])
    assert adjust(p, "none").tolist() == p
    with pytest.raises(ValueError):
        adjust(p, "sidak")  # type: ignore[arg-type]


# -- compare: alignment, NA rule, corrections across the report --------------------------------

import json  # noqa: E402

from ragmeter.evaluation.results import Evaluation, RunResult  # noqa: E402
from ragmeter.measures import parse_measures  # noqa: E402
from ragmeter.stats import compare  # noqa: E402


def _evaluation(runs: dict[str, dict[str, list[float]]], measures: list[str]) -> Evaluation:
    ms = tuple(parse_measures(measures))
    results = tuple(
        RunResult(
            name=name,
            query_ids=np.array(list(rows), dtype=object),
            measures=ms,
            values=np.array(list(rows.values()), dtype=np.float64).reshape(len(rows), len(ms)),
        )
        for name, rows in runs.items()
    )
    return Evaluation(results, ms)


def test_compare_aligns_by_query_id_and_drops_na() -> None:
    nan = float("nan")
    ev = _evaluation(
        {
            "base": {"q1": [0.1], "q2": [0.5], "q3": [nan], "q4": [0.2]},
            # other order, q4 absent, q5 extra, q2 NA
            "new": {"q5": [0.9], "q3": [0.4], "q2": [nan], "q1": [0.4]},
        },
        ["ndcg@10"],
    )
    c = compare(ev, bootstrap=200)
    d = c.difference("new", "ndcg@10")
    assert d.n == 1  # only q1 is defined in both
    assert d.n_dropped == 4  # q2 (NA), q3 (NA), q4, q5 (one run lacks them)
    assert d.difference == pytest.approx(0.3)
    base = c.summary("base", "ndcg@10")
    assert (base.n, base.n_defined) == (4, 3)
    assert base.mean == pytest.approx((0.1 + 0.5 + 0.2) / 3)
    assert c.summary("new", "ndcg@10").mean == pytest.approx((0.9 + 0.4 + 0.4) / 3)
    text = json.dumps(c.to_dict(), allow_nan=False)  # NA is null, never NaN
    assert '"p_value"' in text


def test_compare_matches_the_tests_and_corrects_across_runs_and_measures() -> None:
    rng = np.random.default_rng(0)
    base = rng.random((80, 2))
    runs = {
        "base": {f"q{i}": list(row) for i, row in enumerate(base)},
        "better": {f"q{i}": list(np.clip(row + 0.15, 0, 1)) for i, row in enumerate(base)},
        "same": {
            f"q{i}": list(np.clip(row + rng.normal(0, 0.05, 2), 0, 1)) for i, row in enumerate(base)
        },
    }
    ev = _evaluation(runs, ["ndcg@10", "harm@5"])
    for test in ("t", "wilcoxon", "randomization"):
        c = compare(ev, test=test, bootstrap=500, permutations=2000)  # type: ignore[arg-type]
        raw = [d.p_value for d in c.differences]
        assert [d.p_adjusted for d in c.differences] == pytest.approx(holm(raw).tolist())
        d = c.difference("better", "ndcg@10")
        xs = np.array([runs["better"][f"q{i}"][0] for i in range(80)])
        if test == "t":
            assert d.p_value == pytest.approx(scipy_stats.ttest_rel(xs, base[:, 0]).pvalue)
        if test == "wilcoxon":
            assert d.p_value == pytest.approx(scipy_stats.wilcoxon(xs, base[:, 0]).pvalue)
        assert d.verdict == "better" and d.significant
        # harm: lower is better, so the same increase is worse
        assert c.difference("better", "harm@5").verdict == "worse"
        assert d.ci_low < d.difference < d.ci_high
    c_bonf = compare(ev, test="t", correction="bonferroni", bootstrap=100)
    assert c_bonf.differences[0].p_adjusted == pytest.approx(
        min(1.0, 4 * c_bonf.differences[0].p_value)
    )
    # the same seed gives the same numbers
    again = compare(ev, bootstrap=300, permutations=500, seed=3)
    assert again.to_dict() == compare(ev, bootstrap=300, permutations=500, seed=3).to_dict()


def test_compare_geometric_mean_and_baseline_choice() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(30) * 0.5 + 0.1, rng.random(30) * 0.5 + 0.2
    ev = _evaluation(
        {
            "a": {f"q{i}": [v] for i, v in enumerate(a)},
            "b": {f"q{i}": [v] for i, v in enumerate(b)},
        },
        ["gm_map"],
    )
    c = compare(ev, baseline="b", test="t", bootstrap=300)
    assert c.baseline == "b" and c.runs == ("b", "a")
    gm = lambda v: float(np.exp(np.mean(np.log(v))))  # noqa: E731
    assert c.summary("a", "gm_map").mean == pytest.approx(gm(a))
    assert c.summary("a", "gm_map").mean == pytest.approx(ev["a"].means()["gm_map"])
    d = c.difference("a", "gm_map")
    assert d.difference == pytest.approx(gm(a) - gm(b))
    assert d.p_value == pytest.approx(scipy_stats.ttest_rel(np.log(a), np.log(b)).pvalue)
    assert compare(ev, baseline=1, bootstrap=10).baseline == "b"
    with pytest.raises(KeyError):
        compare(ev, baseline="zzz")
    with pytest.raises(ValueError, match="two runs"):
        compare(Evaluation(ev.runs[:1], ev.measures))


def test_label_agreement_by_hand() -> None:
    from ragmeter.stats.agreement import Disagreement, label_agreement

    a = {("q", "d1"): 5, ("q", "d2"): 4, ("q", "d3"): 1, ("q", "d4"): 2}
    b = {("q", "d1"): 4, ("q", "d2"): 4, ("q", "d3"): 1, ("q", "d4"): 3, ("q", "d5"): 2}
    r = label_agreement(a, b, a_name="human", b_name="llm", threshold=4)
    assert (r.n, r.n_a, r.n_b) == (4, 4, 5)
    assert r.scale == (1, 2, 3, 4, 5)
    # p_o = 2/4; p_e = P_a(1)P_b(1) + P_a(4)P_b(4) = 1/16 + 1/8 = 3/16; κ = (1/2 - 3/16)/(13/16)
    assert r.accuracy == pytest.approx(0.5)
    assert r.kappa["unweighted"] == pytest.approx(5 / 13)
    # at grade ≥ 4 both say (rel, rel, non, non): perfect binary agreement
    assert r.binary_accuracy == 1.0 and r.binary_kappa == pytest.approx(1.0)
    assert r.binary_matrix == [[2, 0], [0, 2]]
    assert r.disagreements == [Disagreement("q", "d1", 0, 5, 4), Disagreement("q", "d4", 0, 2, 3)]
    assert r.per_grade[4] == {"precision": 0.5, "recall": 1.0, "support": 1}


# -- Krippendorff's alpha ------------------------------------------------------------------

_KRIPPENDORFF_2011 = [  # "Computing Krippendorff's alpha-reliability" (2011), section C
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
]


def test_krippendorff_alpha_published_example() -> None:
    from ragmeter.stats.agreement import krippendorff_alpha

    # the paper's values, to its three decimals
    assert krippendorff_alpha(_KRIPPENDORFF_2011, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(_KRIPPENDORFF_2011, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(_KRIPPENDORFF_2011, "interval") == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_matches_package(level: str) -> None:
    kd = pytest.importorskip("krippendorff")
    from ragmeter.stats.agreement import krippendorff_alpha

    rng = np.random.default_rng(11)
    for _ in range(30):
        raters, units = int(rng.integers(2, 5)), int(rng.integers(3, 40))
        truth = rng.integers(0, 4, size=units)
        data = np.clip(truth + rng.integers(-1, 2, size=(raters, units)), 0, 3).astype(float)
        data[rng.random(size=data.shape) < 0.2] = np.nan
        if np.unique(data[~np.isnan(data)]).shape[0] < 2:
            continue
        ref = kd.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(data, level) == pytest.approx(ref, rel=1e-9, abs=1e-12)  # type: ignore[arg-type]


def test_label_agreement_reports_krippendorff_alpha() -> None:
    kd = pytest.importorskip("krippendorff")
    from ragmeter.stats.agreement import label_agreement

    a = {("q", f"d{i}"): g for i, g in enumerate([0, 1, 2, 3, 3, 2, 1, 0, 2])}
    b = {("q", f"d{i}"): g for i, g in enumerate([0, 2, 2, 3, 1, 2, 1, 1, 3])}
    r = label_agreement(a, b, scale=(0, 3))
    data = np.array([list(a.values()), list(b.values())], dtype=float)
    for level in ("nominal", "ordinal", "interval"):
        ref = kd.alpha(reliability_data=data, level_of_measurement=level)
        assert r.alpha[level] == pytest.approx(ref, rel=1e-9)
