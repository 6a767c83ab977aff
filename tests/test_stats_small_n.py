"""Every p-value and interval of ``compare`` at small n, against scipy and hand computation.

References: ``scipy.stats.wilcoxon`` (method="exact" / "approx"), ``scipy.stats.ttest_rel``,
``scipy.stats.permutation_test`` (paired, all 2^n relabellings), ``scipy.stats.
false_discovery_control``, and sign vectors enumerated with ``itertools`` below. No expected
value is taken from ragmeter's own output.
"""

from __future__ import annotations

import doctest
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import parse_measures
from ragmeter.stats import compare
from ragmeter.stats.bootstrap import bootstrap_ci, bootstrap_means, min_bootstrap_n
from ragmeter.stats.correction import adjust, benjamini_hochberg, smallest_adjusted
from ragmeter.stats.paired import (
    paired_t_test,
    randomization_test,
    smallest_pvalue,
    wilcoxon_test,
)

scipy_stats = pytest.importorskip("scipy.stats")


# -- Wilcoxon -----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50])
def test_wilcoxon_exact_without_ties_matches_scipy_exact(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(5):
        x, y = rng.random(n), rng.random(n)
        ours = wilcoxon_test(x, y)
        ref = scipy_stats.wilcoxon(x, y, method="exact")
        assert ours.method == "exact"
        assert ours.statistic == pytest.approx(ref.statistic)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_wilcoxon_exact_by_hand() -> None:
    # d = 1..5 all positive: W⁺ = 15 is reached by 1 of the 32 sign patterns, two-sided 2/32
    assert wilcoxon_test(np.arange(1.0, 6.0), np.zeros(5)).pvalue == pytest.approx(2 / 32)
    # d = 1, 2, −3: W⁺ = 3; the subsets of {1,2,3} with sum ≤ 3 are {}, {1}, {2}, {3}, {1,2}:
    # P(W⁺ ≤ 3) = 5/8, P(W⁺ ≥ 3) = 5/8 → p = min(1, 2·5/8) = 1
    assert wilcoxon_test([1.0, 2.0, -3.0], [0.0, 0.0, 0.0]).pvalue == 1.0
    # d = 1, 2, 3, −4 (n = 4): W⁺ = 6; sums ≥ 6 of subsets of {1..4}: {1,2,3}, {2,4}, {1,2,4},
    # {3,4}, {1,3,4}, {2,3,4}, {1,2,3,4}, {2,4}… counted plainly below
    sums = [sum(s) for r in range(5) for s in itertools.combinations(range(1, 5), r)]
    high = sum(v >= 6 for v in sums) / 16
    low = sum(v <= 6 for v in sums) / 16
    assert wilcoxon_test([1.0, 2.0, 3.0, -4.0], np.zeros(4)).pvalue == pytest.approx(
        min(1.0, 2 * min(low, high))
    )


def _enumerated_wilcoxon(d: np.ndarray) -> float:
    """Signed-rank p over all 2^m sign patterns of the average ranks (zeros dropped)."""
    nz = d[d != 0]
    ranks = scipy_stats.rankdata(np.abs(nz))
    observed = ranks[nz > 0].sum()
    null = [
        sum(r for r, s in zip(ranks, signs, strict=True) if s > 0)
        for signs in itertools.product((-1, 1), repeat=nz.shape[0])
    ]
    arr = np.array(null)
    return min(1.0, 2 * min(np.mean(arr <= observed + 1e-9), np.mean(arr >= observed - 1e-9)))


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_small_with_ties_and_zeros_as_scipy(seed: int) -> None:
    rng = np.random.default_rng(50 + seed)
    n = int(rng.integers(4, 13))
    x, y = rng.integers(0, 4, n) / 4, rng.integers(0, 4, n) / 4
    if np.all(x == y):
        return
    ours = wilcoxon_test(x, y)
    assert ours.method == "exact"
    assert ours.pvalue == pytest.approx(_enumerated_wilcoxon(x - y), rel=1e-12)
    assert ours.pvalue == pytest.approx(scipy_stats.wilcoxon(x, y).pvalue, rel=1e-9)


def test_wilcoxon_beyond_exact_is_the_stated_normal_approximation() -> None:
    rng = np.random.default_rng(9)
    x, y = rng.integers(0, 5, 80) / 4, rng.integers(0, 5, 80) / 4
    ours = wilcoxon_test(x, y)
    ref = scipy_stats.wilcoxon(x, y, method="approx", correction=False)
    assert ours.method == "asymptotic"
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


# -- t and randomization ------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_t_at_tiny_n_matches_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(10):
        x, y = rng.random(n), rng.random(n)
        ours, ref = paired_t_test(x, y), scipy_stats.ttest_rel(x, y)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 10])
def test_randomization_enumerates_every_sign_flip_as_scipy(n: int) -> None:
    rng = np.random.default_rng(20 + n)
    x, y = rng.random(n), rng.random(n)
    ours = randomization_test(x, y, permutations=10_000)
    ref = scipy_stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert ours.method == "exact"
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


# -- smallest attainable p ----------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_smallest_p_is_two_over_two_to_the_m_and_is_attained(n: int) -> None:
    agree = np.arange(1.0, n + 1.0)  # every difference of one sign: the extreme pattern
    for test in (randomization_test(agree, np.zeros(n)), wilcoxon_test(agree, np.zeros(n))):
        assert smallest_pvalue(test, agree, 10_000) == pytest.approx(min(1.0, 2 / 2**n))
        assert test.pvalue == pytest.approx(min(1.0, 2 / 2**n))
    ref = scipy_stats.wilcoxon(agree, method="exact").pvalue
    assert ref == pytest.approx(min(1.0, 2 / 2**n))
    # zeros do not count: m = non-zero differences
    mixed = np.r_[agree, 0.0, 0.0]
    test = randomization_test(mixed, np.zeros(n + 2))
    assert smallest_pvalue(test, mixed, 10_000) == pytest.approx(min(1.0, 2 / 2**n))


def test_smallest_p_of_other_methods() -> None:
    d = np.array([0.3, -0.1, 0.2])
    assert smallest_pvalue(paired_t_test(d, np.zeros(3)), d, 100) == 0.0
    big = np.random.default_rng(0).normal(0.1, 1.0, 30)
    mc = randomization_test(big, np.zeros(30), permutations=999)
    assert mc.method == "monte-carlo"
    assert smallest_pvalue(mc, big, 999) == pytest.approx(1 / 1000)
    many = np.tile([1.0, 2.0, 2.0, 3.0, 3.0, 3.0], 10)  # 60, tied: normal approximation
    w = wilcoxon_test(many, np.zeros(60))
    assert w.method == "asymptotic"
    # every difference positive is the extreme: its p is the bound
    assert smallest_pvalue(w, many, 1) == pytest.approx(w.pvalue)
    ref = scipy_stats.wilcoxon(many, method="approx", correction=False).pvalue
    assert smallest_pvalue(w, many, 1) == pytest.approx(ref, rel=1e-9)


def test_smallest_adjusted_by_hand() -> None:
    s = [0.0625, 0.25, 0.03125]
    assert smallest_adjusted(s, "none").tolist() == s
    assert smallest_adjusted(s, "bh").tolist() == s
    assert smallest_adjusted(s, "bonferroni").tolist() == pytest.approx([0.1875, 0.75, 0.09375])
    # Holm: p̃ ≥ max(s_i, 3·min s) = max(s_i, 0.09375)
    assert smallest_adjusted(s, "holm").tolist() == pytest.approx([0.09375, 0.25, 0.09375])


# -- corrections --------------------------------------------------------------------------


def test_benjamini_hochberg_by_hand_and_as_scipy() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted .005 .01 .03 .04 → ×4/1 ×4/2 ×4/3 ×4/4 = .02 .02 .04 .04; running min from the top
    assert benjamini_hochberg(p).tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust(p, "bh").tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.random(int(rng.integers(1, 40))) ** 3
        ref = scipy_stats.false_discovery_control(q, method="bh")
        assert benjamini_hochberg(q) == pytest.approx(ref, rel=1e-12)
    out = benjamini_hochberg([0.01, np.nan, 0.04])
    assert np.isnan(out[1]) and out[[0, 2]].tolist() == pytest.approx([0.02, 0.04])


def test_holm_as_a_plain_loop() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        p = rng.random(int(rng.integers(1, 12))) ** 2
        order = np.argsort(p)
        m = p.shape[0]
        ref = np.empty(m)
        running = 0.0
        for i, j in enumerate(order):  # Holm (1979), step-down
            running = max(running, min(1.0, (m - i) * p[j]))
            ref[j] = running
        assert adjust(p, "holm") == pytest.approx(ref, rel=1e-12)


# -- bootstrap at tiny n ------------------------------------------------------------------


def test_min_bootstrap_n_by_hand() -> None:
    # 3⁻³ = 0.037 ≥ 0.025 but 4⁻⁴ = 0.0039 < 0.025 (95%) and < 0.005 (99%);
    # 4⁻⁴ ≥ 0.0005 but 5⁻⁵ = 0.00032 < 0.0005 (99.9%)
    assert min_bootstrap_n(0.95) == 4
    assert min_bootstrap_n(0.99) == 4
    assert min_bootstrap_n(0.999) == 5
    # 2⁻² = 0.25 ≥ (1 − 0.5)/2 = 0.25: 3 at 50%
    assert min_bootstrap_n(0.5) == 3


def test_below_min_n_the_percentile_interval_is_only_the_range() -> None:
    v = np.array([0.1, 0.5, 0.9])
    means = bootstrap_means(v, replicates=20_000, seed=0)[:, 0]
    # (1/3)³ = 3.7% of resamples are all 0.1: the 2.5% quantile is the smallest value
    assert np.quantile(means, 0.025) == pytest.approx(0.1)
    assert np.quantile(means, 0.975) == pytest.approx(0.9)
    assert all(math.isnan(x) for x in bootstrap_ci(v))
    low, high = bootstrap_ci([0.1, 0.5, 0.9, 0.3])
    assert 0.1 < low < high < 0.9


# -- compare: notes, flags, renderings ----------------------------------------------------


def _evaluation(runs: dict[str, list[float]], measure: str = "ndcg@10") -> Evaluation:
    ms = tuple(parse_measures([measure]))
    results = tuple(
        RunResult(
            name=name,
            query_ids=np.array([f"q{i}" for i in range(len(v))], dtype=object),
            measures=ms,
            values=np.array(v, dtype=np.float64).reshape(-1, 1),
        )
        for name, v in runs.items()
    )
    return Evaluation(results, ms)


def test_compare_says_when_n_is_too_small_for_significance() -> None:
    base = [0.1, 0.2, 0.3, 0.4, 0.5]
    better = [0.9, 0.8, 0.7, 0.6, 0.55]  # all five better: p = 2/32 = 0.0625 at best
    c = compare(_evaluation({"b": base, "r": better}), bootstrap=200)
    d = c.difference("r", "ndcg@10")
    assert d.p_value == pytest.approx(2 / 32) and d.min_p == pytest.approx(2 / 32)
    assert not d.can_be_significant and d.verdict == "ns"
    assert any("n too small for significance" in n for n in c.notes)
    # six queries: 2/64 ≤ 0.05 on its own, but Holm over two comparisons doubles it
    six = {"b": [*base, 0.6], "r": [*better, 0.65]}
    c6 = compare(_evaluation(six), bootstrap=200)
    assert c6.difference("r", "ndcg@10").can_be_significant
    assert c6.difference("r", "ndcg@10").verdict == "better"
    c6b = compare(_evaluation({**six, "s": [v + 0.05 for v in six["r"]]}), bootstrap=200)
    assert all(x.min_p_adjusted == pytest.approx(2 * 2 / 64) for x in c6b.differences)
    assert not any(x.can_be_significant for x in c6b.differences)
    # t: any p can be reached with n ≥ 2
    ct = compare(_evaluation({"b": base, "r": better}), test="t", bootstrap=200)
    assert ct.difference("r", "ndcg@10").can_be_significant
    assert not any("significance" in n for n in ct.notes)


def test_compare_gives_no_interval_below_min_n() -> None:
    c = compare(_evaluation({"b": [0.1, 0.2, 0.4], "r": [0.3, 0.2, 0.9]}), bootstrap=200)
    assert math.isnan(c.summary("b", "ndcg@10").ci_low)
    assert math.isnan(c.difference("r", "ndcg@10").ci_high)
    assert any("n too small for an interval" in n for n in c.notes)
    c4 = compare(_evaluation({"b": [0.1, 0.2, 0.4, 0.5], "r": [0.3, 0.2, 0.9, 0.5]}))
    assert not math.isnan(c4.summary("b", "ndcg@10").ci_low)
    assert not any("interval" in n for n in c4.notes)


def test_compare_docstring_example_runs() -> None:
    import ragmeter.stats.comparison as module

    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def _write_run(path: Path, scores: dict[str, list[str]]) -> str:
    lines = [
        f"{q} Q0 {doc} {rank + 1} {10 - rank} run"
        for q, docs in scores.items()
        for rank, doc in enumerate(docs)
    ]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_cli_outputs_say_n_too_small(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 rel{i} 1\n" for i in range(3)))
    base = _write_run(tmp_path / "base.txt", {f"q{i}": ["x", f"rel{i}"] for i in range(3)})
    new = _write_run(tmp_path / "new.txt", {f"q{i}": [f"rel{i}"] for i in range(3)})
    runner = CliRunner()
    args = ["compare", base, new, "-q", str(qrels), "-m", "mrr", "--bootstrap", "200"]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.stderr
    assert "†" in out.stdout and "n too small for significance" in out.stdout
    assert "0.25" in out.stdout  # 3 agreeing differences: 2/2³
    assert "[n too small]" in out.stdout
    md = runner.invoke(app, [*args, "-f", "markdown"]).stdout
    assert "> note: n too small for significance" in md and "†" in md
    doc = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    (d,) = doc["differences"]
    assert d["min_p"] == pytest.approx(0.25) and d["can_be_significant"] is False
    assert d["ci"] == [None, None]
    assert any("n too small for significance" in n for n in doc["notes"])


def test_renderings_state_the_wilcoxon_method_and_the_bound() -> None:
    from ragmeter.report import comparison as render

    base = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    shift = [0.01, 0.02, -0.03, 0.04, 0.05, 0.06, 0.07]  # 7 distinct |d| ≠ 0: exact
    new = [x + s for x, s in zip(base, shift, strict=True)]
    c = compare(_evaluation({"b": base, "r": new}), test="wilcoxon", bootstrap=200)
    assert "Wilcoxon (exact null distribution)" in render.describe(c)
    d = c.difference("r", "ndcg@10")
    ref = scipy_stats.wilcoxon(new, base, method="exact").pvalue
    assert d.p_value == pytest.approx(ref) and d.min_p == pytest.approx(2 / 2**7)
    rows = render.to_csv(c).splitlines()
    header, last = rows[0].split(","), rows[-1].split(",")
    row = dict(zip(header, last, strict=True))
    assert float(row["min_p"]) == pytest.approx(2 / 128) and row["can_be_significant"] == "true"
