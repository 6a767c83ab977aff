"""All-pairs comparison, Tukey's HSD, win/tie/loss and seed summaries.

Expected values come from scipy and statsmodels run side by side on the same inputs
(``ttest_rel``, ``wilcoxon``, ``tukey_hsd``, ``studentized_range``, ``multipletests``,
``pairwise_tukeyhsd``, ``AnovaRM``, ``psturng``), from brute-force enumeration, or by hand.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import parse_measure
from ragmeter.stats.allpairs import all_pairs, letters
from ragmeter.stats.comparison import compare, win_tie_loss
from ragmeter.stats.seeds import seed_interval, seed_summaries, t_quantile
from ragmeter.stats.tukey import tukey_hsd

scipy_stats = pytest.importorskip("scipy.stats")
multitest = pytest.importorskip("statsmodels.stats.multitest")

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
NDCG = parse_measure("ndcg@10")


def evaluation(
    matrix: np.ndarray, names: list[str] | None = None, ids: list[str] | None = None
) -> Evaluation:
    """An evaluation of k runs on one measure from an n × k matrix of per-query values."""
    n, k = matrix.shape
    names = names or [f"r{j}" for j in range(k)]
    qids = np.array(ids or [f"q{i:03d}" for i in range(n)], dtype=object)
    runs = tuple(RunResult(names[j], qids, (NDCG,), matrix[:, j : j + 1].copy()) for j in range(k))
    return Evaluation(runs, (NDCG,))


def data(seed: int = 7, n: int = 20, k: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    shifts = np.array([0.0, 0.15, -0.1, 0.02, 0.3][:k])
    return np.clip(base + shifts + 0.1 * rng.standard_normal((n, k)), 0, 1)


def expected_letters(
    x: np.ndarray, p_adjusted: dict[tuple[int, int], float], alpha: float
) -> list[str]:
    """Letters from the reference p-values: run a beats b when p̃ ≤ α and mean a > mean b."""
    k = x.shape[1]
    names = letters(k)
    out = []
    for a in range(k):
        beaten = [
            names[b]
            for b in range(k)
            if b != a
            and p_adjusted[(min(a, b), max(a, b))] <= alpha
            and x[:, a].mean() > x[:, b].mean()
        ]
        out.append("".join(beaten))
    return out


# -- paired tests and corrections against scipy / statsmodels --------------------------------


@pytest.mark.parametrize(
    ("correction", "sm_method"),
    [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh"), ("none", None)],
)
def test_t_test_pairs_and_corrections_match_scipy_and_statsmodels(
    correction: str, sm_method: str | None
) -> None:
    x = data()
    table = all_pairs(evaluation(x), test="t", correction=correction, alpha=0.05)  # type: ignore[arg-type]
    pairs = list(itertools.combinations(range(x.shape[1]), 2))
    raw = [scipy_stats.ttest_rel(x[:, a], x[:, b]).pvalue for a, b in pairs]
    adj = raw if sm_method is None else multitest.multipletests(raw, method=sm_method)[1]
    for (a, b), p, q in zip(pairs, raw, adj, strict=True):
        got = table.pair(f"r{a}", f"r{b}", "ndcg@10")
        assert got.p_value == pytest.approx(p, rel=1e-9, abs=1e-15)
        assert got.p_adjusted == pytest.approx(q, rel=1e-9, abs=1e-15)
        assert got.difference == pytest.approx(x[:, a].mean() - x[:, b].mean())
        assert got.n == x.shape[0]
    want = expected_letters(x, dict(zip(pairs, adj, strict=True)), 0.05)
    assert [table.superscript(r, "ndcg@10") for r in table.runs] == want
    assert any(want)  # the data make some difference significant


def test_wilcoxon_pairs_match_scipy() -> None:
    x = data(seed=3, n=30)
    table = all_pairs(evaluation(x), test="wilcoxon", correction="holm")
    pairs = list(itertools.combinations(range(x.shape[1]), 2))
    raw = [scipy_stats.wilcoxon(x[:, a], x[:, b]).pvalue for a, b in pairs]
    adj = multitest.multipletests(raw, method="holm")[1]
    for (a, b), p, q in zip(pairs, raw, adj, strict=True):
        got = table.pair(f"r{a}", f"r{b}", "ndcg@10")
        assert got.p_value == pytest.approx(p, rel=1e-9)
        assert got.p_adjusted == pytest.approx(q, rel=1e-9)
    assert [table.superscript(r, "ndcg@10") for r in table.runs] == expected_letters(
        x, dict(zip(pairs, adj, strict=True)), 0.05
    )


def test_randomization_pairs_match_brute_force_enumeration() -> None:
    x = data(seed=11, n=9, k=3)  # 2⁹ = 512 sign vectors ≤ 10,000: the test is exact
    table = all_pairs(evaluation(x), test="randomization", correction="bonferroni")
    for a, b in itertools.combinations(range(3), 2):
        d = x[:, a] - x[:, b]
        observed = abs(d.sum())
        sums = [abs(np.dot(s, d)) for s in itertools.product((-1, 1), repeat=len(d))]
        p = np.mean([s >= observed - 1e-9 for s in sums])
        got = table.pair(f"r{a}", f"r{b}", "ndcg@10")
        assert got.p_value == pytest.approx(p)
        assert got.p_adjusted == pytest.approx(min(1.0, 3 * p))
        assert got.method == "randomization:exact"


def test_pairs_use_the_queries_both_runs_define() -> None:
    x = data(seed=5, n=12, k=3)
    x[0, 0] = np.nan
    x[1, 2] = np.nan
    table = all_pairs(evaluation(x), test="t", correction="none")
    ok = ~np.isnan(x[:, 0]) & ~np.isnan(x[:, 2])
    got = table.pair("r0", "r2", "ndcg@10")
    assert got.n == 10
    assert got.p_value == pytest.approx(scipy_stats.ttest_rel(x[ok, 0], x[ok, 2]).pvalue)
    assert table.pair("r0", "r1", "ndcg@10").n == 11
    # the mean is over the run's own defined values, never with a NaN in it
    assert table.mean("r0", "ndcg@10").mean == pytest.approx(np.nanmean(x[:, 0]))
    assert table.mean("r0", "ndcg@10").n_defined == 11


def test_lower_is_better_measures_letter_the_lower_mean() -> None:
    harm = parse_measure("harm@5")
    ids = np.array([f"q{i}" for i in range(10)], dtype=object)
    low = np.full((10, 1), 0.1) + np.linspace(0, 0.01, 10)[:, None]
    high = low + 0.5
    ev = Evaluation(
        (RunResult("low", ids, (harm,), low), RunResult("high", ids, (harm,), high)), (harm,)
    )
    table = all_pairs(ev, test="t")
    assert table.superscript("low", "harm@5") == "b"
    assert table.superscript("high", "harm@5") == ""


# -- Tukey's HSD -----------------------------------------------------------------------------


def test_tukey_repeated_with_two_runs_is_the_paired_t_test() -> None:
    x = data(seed=2, n=15, k=2)
    hsd = tukey_hsd(x)
    t = scipy_stats.ttest_rel(x[:, 0], x[:, 1])
    assert hsd.pvalue[0, 1] == pytest.approx(t.pvalue, rel=1e-7)
    assert hsd.statistic[0, 1] == pytest.approx(math.sqrt(2) * abs(t.statistic), rel=1e-12)
    assert hsd.df == 14


def test_tukey_independent_matches_scipy_and_statsmodels() -> None:
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    x = data(seed=4, n=12, k=4)
    hsd = tukey_hsd(x, variant="independent")
    ref = scipy_stats.tukey_hsd(*x.T)
    np.testing.assert_allclose(hsd.pvalue, ref.pvalue, rtol=1e-9, atol=1e-12)
    # scipy's statistic is the difference of means; q = |difference| / √(MSE / n)
    q = np.abs(ref.statistic) / math.sqrt(hsd.mse / 12)
    np.testing.assert_allclose(hsd.statistic, q, rtol=1e-9)
    groups = np.repeat(np.arange(4), 12)
    sm = pairwise_tukeyhsd(x.T.reshape(-1), groups)
    pairs = list(itertools.combinations(range(4), 2))  # statsmodels' order
    np.testing.assert_allclose([hsd.pvalue[a, b] for a, b in pairs], sm.pvalues, atol=2e-3)


def test_tukey_repeated_matches_anova_rm_and_the_studentized_range() -> None:
    import pandas as pd
    from statsmodels.stats.anova import AnovaRM
    from statsmodels.stats.libqsturng import psturng

    x = data(seed=9, n=16, k=4)
    n, k = x.shape
    frame = pd.DataFrame(
        {
            "query": np.repeat(np.arange(n), k),
            "system": np.tile(np.arange(k), n),
            "value": x.reshape(-1),
        }
    )
    anova = AnovaRM(frame, "value", "query", within=["system"]).fit().anova_table
    f_value = float(anova["F Value"].iloc[0])
    assert float(anova["Den DF"].iloc[0]) == (n - 1) * (k - 1)
    ms_system = n * np.sum((x.mean(axis=0) - x.mean()) ** 2) / (k - 1)
    mse = ms_system / f_value
    hsd = tukey_hsd(x)
    assert hsd.mse == pytest.approx(mse, rel=1e-9)
    assert hsd.df == (n - 1) * (k - 1)
    for a, b in itertools.combinations(range(k), 2):
        q = abs(x[:, a].mean() - x[:, b].mean()) / math.sqrt(mse / n)
        assert hsd.statistic[a, b] == pytest.approx(q, rel=1e-9)
        # scipy's exact integral, and statsmodels' independent approximation (3 digits)
        exact = scipy_stats.studentized_range.sf(q, k, hsd.df)
        assert hsd.pvalue[a, b] == pytest.approx(exact, rel=1e-9)
        assert hsd.pvalue[a, b] == pytest.approx(
            float(np.ravel(psturng(q, k, hsd.df))[0]), abs=2e-3
        )


def test_all_pairs_tukey_letters() -> None:
    x = data(seed=1, n=25, k=4)
    table = all_pairs(evaluation(x), correction="tukey")
    hsd = tukey_hsd(x)
    pairs = list(itertools.combinations(range(4), 2))
    ref = {
        (a, b): float(scipy_stats.studentized_range.sf(hsd.statistic[a, b], 4, 72))
        for a, b in pairs
    }
    for a, b in pairs:
        got = table.pair(f"r{a}", f"r{b}", "ndcg@10")
        assert got.p_adjusted == pytest.approx(ref[(a, b)], rel=1e-9)
        assert got.method == "tukey-hsd"
    assert [table.superscript(r, "ndcg@10") for r in table.runs] == expected_letters(x, ref, 0.05)
    assert table.to_dict()["settings"]["test"] == "tukey"


def test_tukey_uses_the_queries_every_run_defines() -> None:
    x = data(seed=6, n=14, k=3)
    x[2, 1] = np.nan
    table = all_pairs(evaluation(x), correction="tukey")
    keep = ~np.isnan(x).any(axis=1)
    hsd = tukey_hsd(x[keep])
    assert table.pair("r0", "r2", "ndcg@10").n == 13
    assert table.pair("r0", "r2", "ndcg@10").p_value == pytest.approx(hsd.pvalue[0, 2])


# -- properties ------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=0, max_value=10_000),
    st.sampled_from(["t", "wilcoxon", "randomization", "tukey"]),
)
def test_permuting_queries_changes_nothing(seed: int, method: str) -> None:
    x = data(seed=seed % 97, n=10, k=3)  # 2¹⁰ ≤ 10,000: randomization is exact
    perm = np.random.default_rng(seed).permutation(10)
    ids = [f"q{i:03d}" for i in range(10)]
    kw = {"correction": "tukey"} if method == "tukey" else {"test": method}
    one = all_pairs(evaluation(x, ids=ids), **kw)  # type: ignore[arg-type]
    two = all_pairs(evaluation(x[perm], ids=[ids[i] for i in perm]), **kw)  # type: ignore[arg-type]
    for p, q in zip(one.pairs, two.pairs, strict=True):
        assert p.p_adjusted == pytest.approx(q.p_adjusted, rel=1e-9)
        assert p.better == q.better
    assert [m.mean for m in one.means] == pytest.approx([m.mean for m in two.means])


@settings(max_examples=25, deadline=None)
@given(st.permutations([0, 1, 2, 3]), st.sampled_from(["t", "wilcoxon", "randomization", "tukey"]))
def test_relabelling_runs_permutes_the_table(order: list[int], method: str) -> None:
    x = data(seed=8, n=20, k=4)  # 2²⁰ sign vectors: the randomization test is Monte Carlo
    names = ["bm25", "dense", "rrf", "splade"]
    kw = {"correction": "tukey"} if method == "tukey" else {"test": method}
    one = all_pairs(evaluation(x, names), **kw)  # type: ignore[arg-type]
    two = all_pairs(evaluation(x[:, order], [names[i] for i in order]), **kw)  # type: ignore[arg-type]
    assert two.runs == tuple(names[i] for i in order)
    for name in names:
        assert set(one.better_than(name, "ndcg@10")) == set(two.better_than(name, "ndcg@10"))
        assert one.mean(name, "ndcg@10").mean == two.mean(name, "ndcg@10").mean
        for other in names:
            if other != name:
                p, q = one.pair(name, other, "ndcg@10"), two.pair(name, other, "ndcg@10")
                assert p.p_adjusted == pytest.approx(q.p_adjusted, rel=1e-9)


# -- win / tie / loss ------------------------------------------------------------------------


def test_win_tie_loss_by_hand() -> None:
    run = np.array([0.5, 0.3, 0.3, np.nan, 0.8, 0.1])
    base = np.array([0.4, 0.3, 0.35, 0.2, 0.8, 0.2])
    # differences (NaN pair left out): +0.1, 0, −0.05, 0, −0.1
    assert win_tie_loss(run, base) == (1, 2, 2)
    assert win_tie_loss(run, base, tolerance=0.06) == (1, 3, 1)
    assert win_tie_loss(run, base, sense=-1) == (2, 2, 1)
    with pytest.raises(ValueError, match="tolerance"):
        win_tie_loss(run, base, tolerance=-1)


def test_compare_counts_wins_ties_losses_against_the_baseline() -> None:
    x = np.array(
        [[0.5, 0.6, 0.5], [0.2, 0.2, 0.1], [0.9, 0.7, 0.91], [0.4, np.nan, 0.4], [0.1, 0.3, 0.0]]
    )
    c = compare(evaluation(x), bootstrap=200, permutations=100)
    d1, d2 = c.difference("r1", "ndcg@10"), c.difference("r2", "ndcg@10")
    assert (d1.wins, d1.ties, d1.losses) == (2, 1, 1)  # +0.1, 0, −0.2, (NA), +0.2
    assert (d2.wins, d2.ties, d2.losses) == (1, 2, 2)  # 0, −0.1, +0.01, 0, −0.1
    pairs = all_pairs(evaluation(x), test="t", tie_tolerance=0.0)
    p = pairs.pair("r0", "r1", "ndcg@10")  # r0 against r1: −0.1, 0, +0.2, (NA), −0.2
    assert (p.wins, p.ties, p.losses) == (1, 1, 2)
    loose = compare(evaluation(x), bootstrap=200, permutations=100, tie_tolerance=0.05)
    d2 = loose.difference("r2", "ndcg@10")
    assert (d2.wins, d2.ties, d2.losses) == (0, 3, 2)
    assert loose.to_dict()["settings"]["tie_tolerance"] == 0.05
    assert loose.to_dict()["differences"][1]["ties"] == 3


# -- seeds -----------------------------------------------------------------------------------


def test_seed_interval_by_hand() -> None:
    means = [0.61, 0.64, 0.58, 0.66]
    m = sum(means) / 4
    sd = math.sqrt(sum((v - m) ** 2 for v in means) / 3)
    half = scipy_stats.t.ppf(0.975, 3) * sd / 2
    got = seed_interval(means)
    assert got == pytest.approx((m, sd, m - half, m + half), rel=1e-10)
    assert t_quantile(0.995, 7) == pytest.approx(scipy_stats.t.ppf(0.995, 7), rel=1e-10)
    assert math.isnan(seed_interval([0.5])[2])
    assert seed_interval([0.5, np.nan, 0.7])[0] == pytest.approx(0.6)


def test_seed_summaries_and_merged_groups() -> None:
    from ragmeter.analysis.seeds import merge_groups

    x = np.array([[0.2, 0.4, 0.6], [0.4, 0.4, np.nan], [0.6, 0.7, 0.8]])
    ev = evaluation(x, ["base", "s1", "s2"])
    [s] = seed_summaries(ev, {"sys": ["s1", "s2"]}, confidence=0.9)
    # seed means: s1 = (0.4 + 0.4 + 0.7) / 3 = 0.5; s2 = (0.6 + 0.8) / 2 = 0.7
    assert s.seed_means == pytest.approx((0.5, 0.7))
    half = scipy_stats.t.ppf(0.95, 1) * math.sqrt(0.02) / math.sqrt(2)
    assert (s.mean, s.ci_low, s.ci_high) == pytest.approx((0.6, 0.6 - half, 0.6 + half))
    merged = merge_groups(ev, {"sys": ["s1", "s2"]})
    assert [r.name for r in merged.runs] == ["base", "sys"]
    assert merged["sys"].column("ndcg@10").tolist() == pytest.approx([0.5, 0.4, 0.75])
    with pytest.raises(KeyError, match="nope"):
        seed_summaries(ev, {"sys": ["s1", "nope"]})
    with pytest.raises(ValueError, match="in groups"):
        merge_groups(ev, {"a": ["s1"], "b": ["s1", "s2"]})


# -- rendering and the command line ----------------------------------------------------------


def test_renderings_carry_the_letters() -> None:
    from ragmeter.report import allpairs as render

    x = data()
    table = all_pairs(evaluation(x, ["a_run", "b", "c", "d"]), test="t")
    sup = {r: table.superscript(r, "ndcg@10") for r in table.runs}
    md = render.to_markdown(table)
    tex = render.to_latex(table)
    page = render.to_html(table)
    for letters_ in sup.values():
        if letters_:
            assert f"<sup>{letters_}</sup>" in md and f"$^{{{letters_}}}$" in tex
            assert f"<sup>{letters_}</sup>" in page
    assert r"a\_run" in tex and "<!doctype html>" in page
    rows = render.to_csv(table).splitlines()
    assert rows[0].startswith("measure,run,other") and len(rows) == 1 + 6
    assert json.loads(render.to_json(table))["letters"]["a_run"] == "a"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", "COLUMNS": "120"},
        timeout=120,
    )


def test_cli_all_pairs_and_groups_on_the_example_runs(tmp_path: Path) -> None:
    runs = [str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "run_dense.txt")]
    fused = _cli("fuse", *runs, "--method", "rrf", "-o", "rrf.txt", cwd=tmp_path)
    assert fused.returncode == 0, fused.stderr
    qrels = ["--qrels", str(EXAMPLES / "qrels.txt"), "-m", "ndcg@10", "-m", "recall@50"]
    done = _cli("compare", *runs, "rrf.txt", *qrels, "--all-pairs", "-f", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["runs"] == ["run_bm25.txt", "run_dense.txt", "rrf.txt"]
    assert len(out["pairs"]) == 6 and out["settings"]["correction"] == "holm"
    table = _cli(
        "compare", *runs, "rrf.txt", *qrels, "--all-pairs", "--correction", "tukey", cwd=tmp_path
    )
    assert table.returncode == 0, table.stderr
    assert "Tukey's HSD" in table.stdout and "run_dense.txt" in table.stdout
    grouped = _cli(
        "compare",
        *runs,
        "rrf.txt",
        *qrels,
        "--group",
        "hybrid=run_dense.txt,rrf.txt",
        "-f",
        "json",
        "--bootstrap",
        "200",
        cwd=tmp_path,
    )
    assert grouped.returncode == 0, grouped.stderr
    out = json.loads(grouped.stdout)
    assert out["runs"] == ["run_bm25.txt", "hybrid"]
    assert out["groups"][0]["seeds"] == ["run_dense.txt", "rrf.txt"]
    assert {"wins", "ties", "losses"} <= set(out["differences"][0])
    tied = _cli("compare", *runs, *qrels, "--tie-tolerance", "0.05", "-f", "csv", cwd=tmp_path)
    assert tied.returncode == 0, tied.stderr
    header, *rows = tied.stdout.splitlines()
    dense = dict(zip(header.split(","), rows[-1].split(","), strict=True))
    assert dense["run"] == "run_dense.txt"
    assert int(dense["wins"]) + int(dense["ties"]) + int(dense["losses"]) == 12
    bad = _cli("compare", *runs, *qrels, "-f", "html", cwd=tmp_path)
    assert bad.returncode == 2 and "--all-pairs" in bad.stderr
    bad = _cli("compare", *runs, *qrels, "--correction", "tukey", cwd=tmp_path)
    assert bad.returncode == 2 and "--all-pairs" in bad.stderr
    bad = _cli("compare", *runs, *qrels, "--group", "oops", cwd=tmp_path)
    assert bad.returncode == 2 and "NAME=RUN" in bad.stderr


def test_cli_groups_by_a_naming_rule(tmp_path: Path) -> None:
    import shutil

    shutil.copy(EXAMPLES / "run_dense.txt", tmp_path / "dense_seed1.txt")
    fused = _cli(
        "fuse", str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "run_dense.txt"),
        "--method", "wsum", "--weights", "0.2,0.8", "-o", "dense_seed2.txt", cwd=tmp_path,
    )  # fmt: skip
    assert fused.returncode == 0, fused.stderr
    done = _cli(
        "compare", str(EXAMPLES / "run_bm25.txt"), "dense_seed1.txt", "dense_seed2.txt",
        "--qrels", str(EXAMPLES / "qrels.txt"), "-m", "ndcg@10", "--group-by", r"(.*)_seed\d+",
        "--all-pairs", "-f", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["runs"] == ["run_bm25.txt", "dense"]
    assert out["groups"][0]["seeds"] == ["dense_seed1.txt", "dense_seed2.txt"]
    qrels = ("--qrels", str(EXAMPLES / "qrels.txt"))
    for pairs in ((), ("--all-pairs",)):  # a CSV holds one table: it says what it leaves out
        csv_out = _cli(
            "compare", str(EXAMPLES / "run_bm25.txt"), "dense_seed1.txt", "dense_seed2.txt",
            *qrels, "-m", "ndcg@10", "--group-by", r"(.*)_seed\d+", *pairs, "-f", "csv",
            cwd=tmp_path,
        )  # fmt: skip
        assert csv_out.returncode == 0, csv_out.stderr
        assert "across-seeds summaries of 1 group(s) are not in the CSV" in csv_out.stderr
    bad = _cli(
        "compare", "dense_seed1.txt", "dense_seed2.txt", *qrels, "--group-by", "(", cwd=tmp_path
    )
    assert bad.returncode == 2 and "regular expression" in bad.stderr


def test_the_report_shows_all_pairs_for_three_runs() -> None:
    pytest.importorskip("matplotlib")
    from ragmeter.analysis.report import build_report
    from ragmeter.report.html import render_report

    x = data(seed=12, n=15, k=3)
    model = build_report(evaluation(x, ["bm25", "dense", "rrf"]), bootstrap=200, permutations=500)
    assert model.all_pairs is not None and model.all_pairs.runs == ("bm25", "dense", "rrf")
    page = render_report(model)
    assert 'id="all-pairs"' in page and '<table class="allpairs">' in page
    two = build_report(evaluation(x[:, :2]), bootstrap=200, permutations=500)
    assert two.all_pairs is None
