"""Cross-fit PPI++ (the default estimator), the exact stratified variance and the
finite-sample rule of the judge's correlation, against loops and formulas written out here
(Zrnic & Candès 2024, "Cross-prediction-powered inference"; Cochran 1977, §5.3;
arXiv:2505.20178). No expected value comes from ragmeter's own output."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from ragmeter.stats.ppi import PPIError, ppi_mean
from ragmeter.stats.validation import coverage


def _lambda(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """PPI++'s λ*, written out: cov(Y, Ŷ) (divisor n) / ((1 + n/N)·var₁(Ŷ ∪ Ŷ_u))."""
    n, big_n = len(y), len(yhat_u)
    cov = sum((a - y.mean()) * (b - yhat.mean()) for a, b in zip(y, yhat, strict=True)) / n
    var = np.var(np.concatenate([yhat, yhat_u]), ddof=1)
    return min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))


def test_crossfit_by_a_loop_over_the_folds() -> None:
    rng = np.random.default_rng(3)
    y = rng.uniform(size=7)
    yhat = np.clip(y + rng.normal(0, 0.2, 7), 0, 1)
    yhat_u = rng.uniform(size=12)
    got = ppi_mean(y, yhat, yhat_u, estimator="crossfit", folds=3, alpha=0.1)
    # folds i mod 3; each fold's λ from the other two folds' labels
    lams = np.empty(7)
    for k in range(3):
        other = [i for i in range(7) if i % 3 != k]
        for i in range(7):
            if i % 3 == k:
                lams[i] = _lambda(y[other], yhat[other], yhat_u)
    lam_bar = lams.mean()
    rect = y - lams * yhat
    estimate = lam_bar * yhat_u.mean() + rect.mean()
    se = math.sqrt(lam_bar**2 * np.var(yhat_u) / 12 + np.var(rect) / 7) * math.sqrt(7 / 6)
    t = sps.t.ppf(0.95, 6)
    assert got.estimate == pytest.approx(estimate, abs=1e-12)
    assert got.lam == pytest.approx(lam_bar, abs=1e-12)
    assert got.ci == pytest.approx((estimate - t * se, estimate + t * se), abs=1e-9)
    assert got.pvalue == pytest.approx(2 * sps.t.sf(abs(estimate / se), 6), abs=1e-9)
    # the human-only interval beside it is the t-interval of the labels
    half = t * np.std(y, ddof=1) / math.sqrt(7)
    assert got.human_ci == pytest.approx((y.mean() - half, y.mean() + half), abs=1e-9)
    assert got.estimator == "crossfit"


def test_crossfit_is_the_default_and_a_fixed_lambda_excludes_it() -> None:
    y, yhat, yhat_u = np.array([0.1, 0.5, 0.9, 0.4]), np.array([0.2, 0.5, 0.8, 0.3]), np.ones(5)
    assert ppi_mean(y, yhat, yhat_u).estimator == "crossfit"
    assert ppi_mean(y, yhat, yhat_u, lam=1.0).estimator == "fixed"
    with pytest.raises(PPIError, match="give one"):
        ppi_mean(y, yhat, yhat_u, lam=1.0, estimator="crossfit")
    with pytest.raises(PPIError, match="expected one of"):
        ppi_mean(y, yhat, yhat_u, estimator="bogus")  # type: ignore[arg-type]


def test_exact_stratified_variance_by_hand() -> None:
    # two strata: N = (6, 4), labelled n = (3, 2), w = N_h/n_h = (2, 2); M = 10
    y = np.array([0.2, 0.4, 0.9, 0.5, 0.7])
    yhat = np.array([0.3, 0.3, 0.8, 0.6, 0.6])
    yhat_u = np.array([0.1, 0.5, 0.7, 0.4, 0.2])
    strata = ["a", "a", "a", "b", "b"]
    w = np.full(5, 2.0)
    lam = 0.5
    got = ppi_mean(y, yhat, yhat_u, weights=w, strata=strata, lam=lam, alpha=0.1)
    everything = np.concatenate([yhat, yhat_u])
    estimate = lam * everything.mean() + 0.6 * (y[:3] - lam * yhat[:3]).mean()
    estimate += 0.4 * (y[3:] - lam * yhat[3:]).mean()
    r = y - lam * yhat
    design = 0.6**2 * (1 - 3 / 6) * np.var(r[:3], ddof=1) / 3
    design += 0.4**2 * (1 - 2 / 4) * np.var(r[3:], ddof=1) / 2
    y_st = 0.6 * y[:3].mean() + 0.4 * y[3:].mean()
    sigma2 = 0.6 * (np.var(y[:3], ddof=1) + (y[:3].mean() - y_st) ** 2)
    sigma2 += 0.4 * (np.var(y[3:], ddof=1) + (y[3:].mean() - y_st) ** 2)
    se = math.sqrt(sigma2 / 10 + design)
    z = sps.norm.ppf(0.95)
    assert got.estimate == pytest.approx(estimate, abs=1e-12)
    assert got.ci == pytest.approx((estimate - z * se, estimate + z * se), abs=1e-9)
    assert got.stratified
    with pytest.raises(PPIError, match="cross-fit"):
        ppi_mean(y, yhat, yhat_u, weights=w, strata=strata, estimator="crossfit")
    with pytest.raises(PPIError, match="differ within"):
        ppi_mean(y, yhat, yhat_u, weights=[2, 2, 3, 2, 2], strata=strata, lam=lam)


@pytest.mark.parametrize(
    ("y", "yhat", "note"),
    [
        # r = 1: no note
        ([0.1, 0.4, 0.5, 0.9, 0.3], [0.1, 0.4, 0.5, 0.9, 0.3], None),
        # n = 5: 1/√3 = 0.577; a judge of r ≈ 0 is below it
        ([0.1, 0.4, 0.5, 0.9, 0.3], [0.5, 0.1, 0.9, 0.4, 0.3], "below 1/√(n−2) = 0.58"),
        ([0.1, 0.4], [0.2, 0.5], "too few to tell"),
        ([0.1, 0.4, 0.5], [0.3, 0.3, 0.3], "correlation undefined"),
    ],
)
def test_weak_judge_note(y, yhat, note) -> None:
    est = ppi_mean(y, yhat, [0.2, 0.3, 0.4, 0.5])
    if note is None:
        assert est.weak_judge is None and est.to_dict()["weak_judge"] is None
    else:
        assert est.weak_judge is not None and note in est.weak_judge
        assert est.to_dict()["weak_judge"] == est.weak_judge
    n = len(y)
    assert est.to_dict()["weak_judge_threshold"] == (1 / math.sqrt(n - 2) if n > 2 else None)


def test_weak_judge_note_in_evaluate_json_and_table(tmp_path) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    # one run of 3 passages per query; LLM grades everywhere, human on q1–q5, where the
    # judge's P@3 runs against the human one (r < 0 < 1/√3)
    run = tmp_path / "run.txt"
    llm = tmp_path / "llm.txt"
    human = tmp_path / "human.txt"
    llm_useful = [1, 2, 3, 0, 1, 2, 3, 1]
    human_useful = [3, 1, 0, 2, 2]
    rows, llm_rows, human_rows = [], [], []
    for q in range(8):
        for d in range(3):
            rows.append(f"q{q} Q0 d{d} {d + 1} {3 - d} r")
            llm_rows.append(f"q{q} 0 d{d} {int(d < llm_useful[q])}")
            if q < 5:
                human_rows.append(f"q{q} 0 d{d} {int(d < human_useful[q])}")
    run.write_text("\n".join(rows) + "\n")
    llm.write_text("\n".join(llm_rows) + "\n")
    human.write_text("\n".join(human_rows) + "\n")
    args = ["evaluate", str(run), "--qrels", str(llm), "--human-qrels", str(human), "--ppi"]
    args += ["-m", "precision@3"]
    r = np.corrcoef(np.array(human_useful) / 3, np.array(llm_useful[:5]) / 3)[0, 1]
    assert r < 1 / math.sqrt(3)
    out = CliRunner().invoke(app, [*args, "-f", "json"])
    assert out.exit_code == 0, out.output
    ppi = json.loads(out.stdout)["runs"][0]["metrics"]["precision@3"]["ppi"]
    assert ppi["judge_correlation"] == pytest.approx(r, abs=1e-12)
    assert "below 1/√(n−2) = 0.58" in ppi["weak_judge"]
    assert ppi["estimator"] == "crossfit"
    table = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert table.exit_code == 0, table.output
    assert "read the human-only interval" in table.output
    assert "human only" in table.output and "cross-fit PPI++" in table.output


def _draw(rng: np.random.Generator, n: int, estimator: str) -> tuple[float, float] | None:
    y = rng.beta(2.0, 3.0, 300)
    yhat = np.clip(0.15 + 0.7 * y + 0.15 * rng.standard_normal(300), 0, 1)
    return ppi_mean(y[:n], yhat[:n], yhat[n:], estimator=estimator).ci  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [8, 30])
def test_crossfit_covers_at_its_level_at_small_n(n: int) -> None:
    # 400 draws of a biased noisy judge (the benchmark's, smaller): 90 % intervals cover
    # within ±3 Monte Carlo standard errors of 0.90
    c = coverage(lambda rng: _draw(rng, n, "crossfit"), 0.4, draws=400, seed=5)
    assert abs(c.rate - 0.90) <= 3 * math.sqrt(0.9 * 0.1 / 400), c.text()


def test_weighted_crossfit_by_a_loop_over_the_folds() -> None:
    # folds k mod 3 over the M = 9 queries (labelled first); λ of a fold by Zrnic & Candès'
    # formula on the other folds' queries: −cov(ηY, (1 − η)Ŷ)/var((1 − η)Ŷ), clipped
    y = np.array([0.2, 0.7, 0.4, 0.9])
    yhat = np.array([0.3, 0.6, 0.5, 0.7])
    yhat_u = np.array([0.1, 0.8, 0.4, 0.6, 0.5])
    w = np.array([2.0, 3.0, 2.5, 4.0])
    eta = np.concatenate([w, np.zeros(5)])
    ys = np.concatenate([y, np.zeros(5)])
    hs = np.concatenate([yhat, yhat_u])
    fold = np.arange(9) % 3
    lam = np.empty(9)
    for k in range(3):
        o = fold != k
        a, b = eta[o] * ys[o], (1 - eta[o]) * hs[o]
        cov = np.mean((a - a.mean()) * (b - b.mean()))
        lam[fold == k] = min(1.0, max(0.0, -cov / np.var(b)))
    z = lam * hs + eta * (ys - lam * hs)
    se = math.sqrt(np.var(z) / 9) * math.sqrt(4 / 3)
    t = sps.t.ppf(0.95, 3)
    got = ppi_mean(y, yhat, yhat_u, weights=w, estimator="crossfit", folds=3)
    assert got.estimate == pytest.approx(z.mean(), abs=1e-12)
    assert got.ci == pytest.approx((z.mean() - t * se, z.mean() + t * se), abs=1e-9)
    assert got.lam == pytest.approx(lam.mean(), abs=1e-12)


def test_a_stratum_with_one_label_gives_no_interval() -> None:
    est = ppi_mean(
        [0.2, 0.4, 0.9], [0.3, 0.5, 0.8], [0.1, 0.5, 0.7], weights=[2, 2, 2],
        strata=["low", "low", "high"], estimator="plusplus",
    )  # fmt: skip
    assert est.ci is None
    assert est.note == "stratum high has 1 labelled query: no stratified variance (needs 2)"


def test_confidence_sequence_by_the_formula() -> None:
    from ragmeter.stats.ppi import ppi_confidence_sequence

    rng = np.random.default_rng(2)
    y = rng.beta(2, 3, 40)
    yhat = np.clip(0.1 + 0.8 * y + rng.normal(0, 0.1, 40), 0, 1)
    yhat_u = rng.uniform(size=200)
    cs = ppi_confidence_sequence(y, yhat, yhat_u, alpha=0.1, optimised_at=50, burn_in=5)
    z = []
    for i in range(40):
        lam = _lambda(y[:i], yhat[:i], yhat_u) if i >= 2 else 0.0
        z.append(lam * yhat_u.mean() + y[i] - lam * yhat[i])
    z = np.array(z)
    rho2 = (-2 * math.log(0.1) + math.log(-2 * math.log(0.1) + 1)) / 50
    low, high = [], []
    for t in range(1, 41):
        m, s = z[:t].mean(), z[:t].std()
        r = s * math.sqrt(
            2 * (t * rho2 + 1) / (t * t * rho2) * math.log(math.sqrt(t * rho2 + 1) / 0.1)
        )
        low.append(-math.inf if t < 5 else m - r)
        high.append(math.inf if t < 5 else m + r)
    assert cs.estimate == pytest.approx(np.cumsum(z) / np.arange(1, 41), abs=1e-12)
    assert cs.lower == pytest.approx(np.maximum.accumulate(low), abs=1e-12)
    assert cs.upper == pytest.approx(np.minimum.accumulate(high), abs=1e-12)


def test_confidence_sequence_misses_at_any_time_rarely() -> None:
    # 200 streams of 150 labels: the share whose sequence misses 0.4 at ANY t ≥ 30 stays
    # within 3 Monte Carlo se of at most 0.10 (a fixed-n interval re-read at every t would
    # miss far more often)
    from ragmeter.stats.ppi import ppi_confidence_sequence

    def draw(rng: np.random.Generator) -> tuple[float, float] | None:
        y = rng.beta(2.0, 3.0, 650)
        yhat = np.clip(0.15 + 0.7 * y + 0.15 * rng.standard_normal(650), 0, 1)
        cs = ppi_confidence_sequence(y[:150], yhat[:150], yhat[150:], alpha=0.1)
        ok = bool(np.all((cs.lower <= 0.4) & (cs.upper >= 0.4)))
        return (0.0, 1.0) if ok else (2.0, 3.0)  # an "interval" holding 0.4 iff never missed

    c = coverage(lambda rng: draw(rng), 0.4, draws=200, seed=8)
    assert c.rate >= 0.90 - 3 * math.sqrt(0.9 * 0.1 / 200), c.text()


def test_a_fixed_n_interval_re_read_misses_far_more_often() -> None:
    # the docs' contrast, on the same 200 streams as above: PPI++'s 90 % interval re-read
    # every 5 labels from the 30th misses 0.4 at some point in far more than 10 % of them
    def draw(rng: np.random.Generator) -> tuple[float, float] | None:
        y = rng.beta(2.0, 3.0, 650)
        yhat = np.clip(0.15 + 0.7 * y + 0.15 * rng.standard_normal(650), 0, 1)
        for t in range(30, 151, 5):
            ci = ppi_mean(y[:t], yhat[:t], yhat[t:], estimator="plusplus").ci
            if ci is None or not ci[0] <= 0.4 <= ci[1]:
                return (2.0, 3.0)
        return (0.0, 1.0)

    c = coverage(draw, 0.4, draws=200, seed=8)
    assert 1 - c.rate > 0.25, c.text()  # 39 % of the streams (seed 8)
