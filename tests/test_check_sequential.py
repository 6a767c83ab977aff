"""``ragmeter check --sequential --history STORE``: a gate re-checked on every commit against
one baseline, α spent look by look (:mod:`ragmeter.analysis.sequential_gate`).

Expected values are computed here independently: α_s from its formula, the t intervals with
scipy's Student quantile, the per-query nDCG@10 by pytrec_eval, and the guarantee by
simulating histories of runs that change nothing (or exactly the threshold).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.analysis.gate import parse_rule
from ragmeter.analysis.sequential_gate import (
    Look,
    alpha_spent,
    check_look,
    look_alpha,
    t_interval,
)
from ragmeter.cli import app
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import REGISTRY

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BM25, DENSE = str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "run_dense.txt")
QRELS = str(EXAMPLES / "qrels.txt")
runner = CliRunner()
NDCG = REGISTRY.parse("ndcg@10")[0]


def _evaluation(base: np.ndarray, run: np.ndarray) -> Evaluation:
    ids = np.array([f"q{i}" for i in range(len(base))], dtype=object)
    results = (
        RunResult("base", ids, (NDCG,), base.reshape(-1, 1)),
        RunResult("run", ids, (NDCG,), run.reshape(-1, 1)),
    )
    return Evaluation(results, (NDCG,), ())


# -- the spending and the interval ----------------------------------------------------------


def test_each_look_spends_its_share_and_all_of_them_alpha() -> None:
    assert look_alpha(0.05, 1) == pytest.approx(0.05 * 6 / math.pi**2)  # 0.030396
    assert look_alpha(0.05, 1) == pytest.approx(0.0303964, abs=1e-7)
    assert look_alpha(0.05, 10) == pytest.approx(0.05 * 6 / (math.pi**2 * 100))
    assert alpha_spent(0.05, 2) == pytest.approx(0.05 * 6 / math.pi**2 * 1.25)
    # Σ 1/s² = π²/6: the looks together never spend more than α (the tail after s is ~ 1/s)
    assert 0.05 - 0.05 * 6 / (math.pi**2 * 999) < alpha_spent(0.05, 1000) < 0.05
    with pytest.raises(ValueError, match="from 1"):
        look_alpha(0.05, 0)


def test_t_interval_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    d = np.array([0.1, -0.05, 0.2, 0.0, 0.15, 0.3, -0.1])
    low, high = t_interval(d, 0.01)
    half = stats.t.ppf(1 - 0.005, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    assert (low, high) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)
    assert t_interval([0.2, 0.2, 0.2], 0.05) == pytest.approx((0.2, 0.2))  # no spread
    with pytest.raises(ValueError, match="2 values"):
        t_interval([0.1], 0.05)


# -- the guarantee, by simulation -----------------------------------------------------------

HISTORIES, LOOKS, QUERIES = 200, 30, 50


def _ever_failed(
    shift: float, rule: str, alpha: float = 0.05, histories: int = HISTORIES
) -> tuple[float, float]:
    """The share of histories (each: a fixed baseline, then LOOKS new runs of the same
    quality shifted by ``shift``) where the sequential gate ever failed, and where the plain
    per-look gate (change past the threshold and a two-sided t test's p ≤ α in the rule's
    direction, as ``check --test t``) did."""
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(7)
    parsed = parse_rule(rule)
    # the plain gate's t test: p ≤ α two-sided with the effect a drop ⇔ t ≤ −t_{1−α/2, n−1}
    critical = stats.t.ppf(1 - alpha / 2, QUERIES - 1)
    sequential = plain = 0
    for _ in range(histories):
        hardness = rng.uniform(0.0, 1.0, QUERIES)
        base = hardness + rng.normal(0.0, 0.15, QUERIES)
        seq_failed = plain_failed = False
        for s in range(1, LOOKS + 1):
            # each look another system of the same quality: its true mean change is `shift`
            run = hardness + rng.normal(0.0, 0.15, QUERIES) + shift
            result = check_look(_evaluation(base, run), [parsed], Look(s, alpha, "memory"))
            seq_failed |= result.failed
            d = run - base
            t = d.mean() / (d.std(ddof=1) / math.sqrt(QUERIES))
            plain_failed |= -d.mean() > parsed.amount and t <= -critical
        sequential += seq_failed
        plain += plain_failed
    return sequential / histories, plain / histories


def test_unchanged_histories_fail_at_most_alpha_over_thirty_looks() -> None:
    sequential, plain = _ever_failed(0.0, "ndcg@10 drop > 0 significant")
    # ≤ α within Monte Carlo error (the binomial's standard error at 0.05 and 200 is 0.015)
    assert sequential <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / HISTORIES)
    # the plain gate, re-read at each look at level α, fails far more often
    assert plain >= 0.25, plain


def test_a_true_change_within_the_threshold_does_not_fail_either() -> None:
    # every run drops exactly the threshold (0.05): no rule may break, yet with 50 queries
    # the plain gate sees a drop past it and a significant difference at many looks
    sequential, plain = _ever_failed(-0.05, "ndcg@10 drop > 0.05 significant", histories=100)
    assert sequential <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 100)
    assert plain >= 0.5, plain


def test_a_real_drop_fails_and_says_at_which_look() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.9, 200)
    run = base - 0.2 + rng.normal(0.0, 0.05, 200)
    rule = parse_rule("ndcg@10 drop > 0.05 significant")
    result = check_look(_evaluation(base, run), [rule], Look(12, 0.05, "h.db"))
    assert result.failed
    (o,) = result.outcomes
    assert o.sequence is not None and o.sequence.fired_at == "look 12"
    assert o.sequence.alpha == pytest.approx(0.05 * 6 / (math.pi**2 * 144))
    assert o.sequence.lower > 0.05 and o.sequence.lower < 0.2 < o.sequence.upper
    assert result.look is not None and result.look["look"] == 12


# -- the command ------------------------------------------------------------------------------


def _per_query_ndcg(path: str) -> dict[str, float]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(QRELS).read_text().splitlines():
        q, _, doc, rel = line.split()
        qrels.setdefault(q, {})[doc] = int(rel)
    run: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        q, _, doc, _, score, _ = line.split()
        run.setdefault(q, {})[doc] = float(score)
    got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut"}).evaluate(run)
    return {q: v["ndcg_cut_10"] for q, v in got.items()}


def test_cli_records_each_look_and_spends_alpha_look_by_look(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    stats = pytest.importorskip("scipy.stats")
    history = tmp_path / "gate.db"
    rule = "ndcg@10 drop > 0.01 significant"
    gate = ["-q", QRELS, "-b", BM25, "--fail-if", rule, "--sequential", "--history"]

    first = runner.invoke(app, ["check", DENSE, *gate, str(history), "-f", "json"])
    assert first.exit_code == 3, first.output
    doc = json.loads(first.stdout)
    assert doc["look"]["look"] == 1 and doc["look"]["repeated"] is False
    a1 = 0.05 * 6 / math.pi**2
    assert doc["look"]["alpha_look"] == pytest.approx(a1)
    # the interval: the per-query drops of nDCG@10 (pytrec_eval), t at level 1 − α_1
    base, dense = _per_query_ndcg(BM25), _per_query_ndcg(DENSE)
    d = np.array([base[q] - dense.get(q, 0.0) for q in base])
    half = stats.t.ppf(1 - a1 / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    reading = doc["rules"][0]["sequence"]
    assert reading["interval"] == pytest.approx([d.mean() - half, d.mean() + half], abs=1e-9)
    assert reading["fired_at"] == "look 1" and doc["rules"][0]["broken"] is True

    # the same run again (a CI rerun): its look is read again, nothing more spent
    again = runner.invoke(app, ["check", DENSE, *gate, str(history), "-f", "json"])
    assert again.exit_code == 3
    assert json.loads(again.stdout)["look"] | {} == doc["look"] | {"repeated": True}

    # another run (the baseline's ranking under another file): look 2, at α_2 = α_1 / 4
    same = tmp_path / "candidate.trec"
    shutil.copy(BM25, same)
    with same.open("a") as f:
        f.write("\n")
    second = runner.invoke(app, ["check", str(same), *gate, str(history)])
    assert second.exit_code == 0, second.output
    flat = " ".join(second.output.split())
    assert "Look 2 of the history" in flat and "Looks that failed before: 1." in flat
    assert f"{a1 / 4:.3g}" in flat and f"{a1 * 1.25:.3g} of α = 0.05" in flat

    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{history}")
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT look, failed, run FROM check_looks")).all()
        values = conn.execute(sa.text("SELECT run_values FROM check_looks WHERE look = 1"))
        recorded = json.loads(values.scalar_one())["ndcg@10"]
    engine.dispose()
    assert [(r[0], bool(r[1]), r[2]) for r in rows] == [
        (1, True, "run_dense.txt"),
        (2, False, "candidate.trec"),
    ]
    assert recorded == pytest.approx({q: dense.get(q, 0.0) for q in base})


def test_cli_refuses_a_history_of_another_gate_and_a_missing_history(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    history = str(tmp_path / "gate.db")
    rule = ["--fail-if", "ndcg@10 drop > 0.01 significant"]
    seq = ["--sequential", "--history", history]
    first = runner.invoke(
        app, ["check", DENSE, "-q", QRELS, "-b", BM25, *rule, "--sequential", "--history", history]
    )
    assert first.exit_code == 3, first.output

    other = runner.invoke(
        app, ["check", BM25, "-q", QRELS, "-b", DENSE, *rule, "--sequential", "--history", history]
    )
    assert other.exit_code == 2
    flat = " ".join(other.output.split())
    assert f"--history {history}" in flat and "the baseline's per-query values" in flat
    assert "run_bm25.txt" in flat and "run_dense.txt" in flat

    measure = runner.invoke(
        app,
        ["check", DENSE, "-q", QRELS, "-b", BM25, "--fail-if", "map drop > 0.01 significant", *seq],
    )
    assert measure.exit_code == 2
    flat = " ".join(measure.output.split())
    assert "the rules ('ndcg@10 drop > 0.01 significant' → 'map drop > 0.01 significant')" in flat

    alpha = runner.invoke(
        app,
        ["check", DENSE, "-q", QRELS, "-b", BM25, *rule, "--alpha", "0.1", *seq],
    )
    assert alpha.exit_code == 2 and "--alpha (0.05 → 0.1)" in " ".join(alpha.output.split())

    for args, says in (
        (["--sequential"], "--sequential needs --history STORE"),
        (["--history", history], "--history records the looks of --sequential"),
        (["--sequential", "--history", history, "--test", "wilcoxon"], "--test wilcoxon"),
    ):
        out = runner.invoke(app, ["check", DENSE, "-q", QRELS, "-b", BM25, *rule, *args])
        assert out.exit_code == 2 and says in " ".join(out.output.split()), out.output


def test_a_history_on_postgresql(postgres_url: str) -> None:
    """The looks recorded in a PostgreSQL store, as in a SQLite one; a second check that
    numbers the same look is refused by the key (never a look spent twice)."""
    from ragmeter.errors import StoreError
    from ragmeter.store import open_store
    from ragmeter.store.check_history import LookRow, add_look, read_looks

    gate = ["-q", QRELS, "-b", BM25, "--fail-if", "ndcg@10 drop > 0.01 significant"]
    seq = ["--sequential", "--history", postgres_url, "-f", "json"]
    first = runner.invoke(app, ["check", DENSE, *gate, *seq])
    assert first.exit_code == 3, first.output
    assert json.loads(first.stdout)["look"]["look"] == 1
    with open_store(postgres_url) as store:
        with store.transaction() as conn:
            (row,) = read_looks(conn)
        assert (row.look, row.failed, row.run) == (1, True, "run_dense.txt")
        with (
            pytest.raises(StoreError, match=r"look 1 .* at the same time"),
            store.transaction() as conn,
        ):
            add_look(conn, LookRow(1, "other", "0" * 64, None, False, []), {})
