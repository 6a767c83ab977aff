"""Fusion tuning (``tune_fusion``, ``ragmeter fuse --tune``): the grid search by hand, against
ranx's ``optimize_fusion`` on the example runs side by side, the held-out split and the
same-queries warning."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from ragmeter import Qrels, Run, evaluate
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.io.query_ids import read_query_ids
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.pipeline.fusion import fuse
from ragmeter.pipeline.fusion_tuning import FusionTuningWarning, tune_fusion, weight_grid

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RUNS = [EXAMPLES / "run_bm25.txt", EXAMPLES / "run_dense.txt"]
QRELS = EXAMPLES / "qrels.txt"


def quiet(**kwargs: object):  # type: ignore[no-untyped-def]
    """``tune_fusion`` with the same-queries warning silenced (tested on its own below)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionTuningWarning)
        return tune_fusion(**kwargs)  # type: ignore[arg-type]


# -- the grid -------------------------------------------------------------------------------


def test_weight_grid() -> None:
    assert weight_grid(2, 0.25) == [(0, 1), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (1, 0)]
    assert weight_grid(3, 0.5) == [
        (0, 0, 1),
        (0, 0.5, 0.5),
        (0, 1, 0),
        (0.5, 0, 0.5),
        (0.5, 0.5, 0),
        (1, 0, 0),
    ]
    # C(10 + 2, 2) points for three runs at step 0.1; 0.3 is the nearest double to 3/10
    grid = weight_grid(3, 0.1)
    assert len(grid) == 66 and (0.3, 0.6, 0.1) in grid
    for bad in (0.3, 0.0, 1.5):
        with pytest.raises(InputError, match="step"):
            weight_grid(2, bad)


# -- by hand --------------------------------------------------------------------------------

#: q1 (d2 relevant) — A: d1 10, d2 8, d3 0 → min-max 1, .8, 0; B: d2 2, d3 1, d1 0 → 1, .5, 0.
#: With w = (a, 1 − a): d1 = a, d2 = .8a + 1 − a = 1 − .2a, d3 = .5(1 − a); d2 leads unless
#: a = 1 (d1 1 > d2 .8): RR 1, 1, 1, 1, 1/2 for a = 0, .25, .5, .75, 1.
#: q2 (d4 relevant) — A: d4 5, d5 1 → 1, 0; B: d5 7, d4 3 → 1, 0: d4 = a, d5 = 1 − a; d4 leads
#: for a > .5, a = .5 ties and the doc id descending puts d5 first: RR .5, .5, .5, 1, 1.
#: Mean RR: .75, .75, .75, 1, .75 → best a = .75.
HAND_A = Run.from_dict({"q1": {"d1": 10.0, "d2": 8.0, "d3": 0.0}, "q2": {"d4": 5.0, "d5": 1.0}})
HAND_B = Run.from_dict({"q1": {"d2": 2.0, "d3": 1.0, "d1": 0.0}, "q2": {"d5": 7.0, "d4": 3.0}})
HAND_QRELS = Qrels.from_dict({"q1": ["d2"], "q2": ["d4"]})


def test_wsum_by_hand() -> None:
    runs = [HAND_A, HAND_B]
    every = quiet(runs=runs, qrels=HAND_QRELS, metric="recip_rank", step=0.25)
    assert [t.train for t in every.trials] == pytest.approx([0.75, 0.75, 0.75, 1.0, 0.75])
    assert every.weights == (0.75, 0.25) and every.train_score == pytest.approx(1.0)
    assert every.test_score == pytest.approx(1.0)  # the same queries
    # trained on q1 alone: RR 1 for a = 0 … .75 — a tie, the last (a = .75) wins; on q2: 1
    one = tune_fusion(runs, HAND_QRELS, metric="recip_rank", step=0.25, train_queries=["q1"])
    assert (one.weights, one.train_score, one.test_score) == ((0.75, 0.25), 1.0, 1.0)
    assert one.test_queries == ("q2",) and one.warnings == ()
    # trained on q2: .5, .5, .5, 1, 1 — the tie of .75 and 1 goes to a = 1; on q1: RR 1/2
    two = tune_fusion(runs, HAND_QRELS, metric="recip_rank", step=0.25, train_queries=["q2"])
    assert (two.weights, two.train_score, two.test_score) == ((1.0, 0.0), 1.0, 0.5)
    assert two.run.to_dict() == fuse(runs, method="wsum", weights=[1.0, 0.0]).to_dict()
    assert two.table()[-1] == {"params": "1,0", "train": 1.0, "test": 0.5, "chosen": True}


def test_rrf_by_hand() -> None:
    # A: a, b; B: c, b. RRF: a = c = 1/(k+1), b = 2/(k+2); b > a ⇔ k > 0. k = 0: all three 1,
    # doc id descending puts c first → P@1 = 0 (b relevant); k > 0: b first → P@1 = 1.
    a = Run.from_dict({"q": {"a": 2.0, "b": 1.0}})
    b = Run.from_dict({"q": {"c": 2.0, "b": 1.0}})
    qrels = Qrels.from_dict({"q": ["b"]})
    tuned = quiet(runs=[a, b], qrels=qrels, method="rrf", metric="P@1", ks=(1, 0, 60, 5))
    assert [t.train for t in tuned.trials] == [1.0, 0.0, 1.0, 1.0]
    assert tuned.k == 5 and tuned.label == "k=5"  # the last of the tied best, in the order given
    assert tuned.norm == "none" and tuned.weights is None


def test_lower_is_better_measure_is_minimised(monkeypatch: pytest.MonkeyPatch) -> None:
    # the RRF case above: P@1 is 1 for k = 1, 0 for k = 0; were lower better, k = 0 wins
    monkeypatch.setattr("ragmeter.stats.comparison.direction", lambda measure: -1)
    a = Run.from_dict({"q": {"a": 2.0, "b": 1.0}})
    b = Run.from_dict({"q": {"c": 2.0, "b": 1.0}})
    qrels = Qrels.from_dict({"q": ["b"]})
    tuned = quiet(runs=[a, b], qrels=qrels, method="rrf", metric="P@1", ks=(1, 0))
    assert [t.train for t in tuned.trials] == [1.0, 0.0] and tuned.k == 0


def test_measure_must_read_qrels_only_and_have_a_direction() -> None:
    with pytest.raises(InputError, match="needs more than qrels"):
        quiet(runs=[HAND_A, HAND_B], qrels=HAND_QRELS, metric="coverage@5")
    with pytest.raises(InputError, match="neither better high nor low"):
        quiet(runs=[HAND_A, HAND_B], qrels=HAND_QRELS, metric="num_ret")


# -- the split and the warning --------------------------------------------------------------


def test_same_queries_warn_once() -> None:
    runs = [HAND_A, HAND_B]
    with pytest.warns(FusionTuningWarning) as caught:
        tuned = tune_fusion(runs, HAND_QRELS, metric="recip_rank", step=0.25)
    assert len(caught) == 1
    assert "same queries (2 of the 2 evaluation queries" in str(caught[0].message)
    assert tuned.warnings == (str(caught[0].message),)
    with pytest.warns(FusionTuningWarning, match="1 of the 2"):
        tune_fusion(runs, HAND_QRELS, train_queries=["q1"], test_queries=["q1", "q2"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # disjoint: no warning at all
        tune_fusion(runs, HAND_QRELS, train_queries=["q1"], test_queries=["q2"])


def test_split() -> None:
    runs = [read_run(p) for p in RUNS]
    qrels = read_qrels(QRELS)
    tuned = tune_fusion(runs, qrels, split=0.5, seed=3)
    assert len(tuned.train_queries) == len(tuned.test_queries) == 6
    assert set(tuned.train_queries).isdisjoint(tuned.test_queries)
    assert set(tuned.train_queries) | set(tuned.test_queries) == set(qrels.query_ids)
    again = tune_fusion(runs, qrels, split=0.5, seed=3)
    assert again.train_queries == tuned.train_queries and again.trials == tuned.trials
    other = tune_fusion(runs, qrels, split=0.25, seed=4)
    assert len(other.train_queries) == 3 and other.train_queries != tuned.train_queries[:3]
    # the scores are the means of the per-query values over each set, computed apart
    best = fuse(runs, method="wsum", weights=tuned.weights)
    for queries, score in ((tuned.train_queries, tuned.train_score), (tuned.test_queries, None)):
        sub = Qrels.from_dict({q: v for q, v in qrels.to_dict().items() if q in queries})
        mean = evaluate(best, sub, ["ndcg@10"]).run.means()["ndcg@10"]
        assert mean == pytest.approx(score if score is not None else tuned.test_score, abs=1e-12)


def test_bad_input() -> None:
    runs = [HAND_A, HAND_B]
    cases = [
        ({"train_queries": ["q9"]}, "not in the qrels: q9"),
        ({"test_queries": []}, "no held-out queries"),
        ({"split": 1.0}, "split must be in"),
        ({"split": 0.1}, "leaves no training"),
        ({"split": 0.5, "train_queries": ["q1"]}, "either training queries or a split"),
        ({"method": "combsum"}, "tuning is for wsum or rrf"),
        ({"method": "rrf", "ks": []}, "k grid"),
        ({"metric": "P.5,10"}, "one measure"),
    ]
    for kwargs, message in cases:
        with pytest.raises(InputError, match=message):
            quiet(runs=runs, qrels=HAND_QRELS, **kwargs)
    with pytest.raises(InputError, match="two runs"):
        quiet(runs=[HAND_A], qrels=HAND_QRELS)


_ids = st.sampled_from(["d1", "d2", "d3", "d4", "d5"])
_scores = st.dictionaries(_ids, st.integers(0, 4).map(float), min_size=1, max_size=5)
_run = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), _scores, min_size=1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=_run, b=_run, norm=st.sampled_from(["min-max", "z-score", "sum", "none"]))
def test_every_trial_is_the_fused_runs_score(a: dict, b: dict, norm: str) -> None:
    """Each grid point's score is that of ``fuse`` with its weights evaluated on the qrels
    of the training queries; the chosen one is the best of them."""
    runs = [Run.from_dict(a), Run.from_dict(b)]
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d3": 2}, "q2": {"d2": 1}, "q3": {"d5": 0}})
    tuned = tune_fusion(runs, qrels, norm=norm, metric="ndcg@3", step=0.25, train_queries=["q1"])
    train = Qrels.from_dict({"q1": {"d1": 1, "d3": 2}})
    for trial in tuned.trials:
        fused = fuse(runs, method="wsum", norm=norm, weights=trial.weights)
        expected = evaluate(fused, train, ["ndcg@3"]).run.means()["ndcg@3"]
        assert trial.train == pytest.approx(expected, abs=1e-12)
    assert tuned.train_score == max(t.train for t in tuned.trials if t.train is not None)


# -- against ranx ---------------------------------------------------------------------------


def _ranks_as_scores(run: Run, ranx: object) -> object:
    """A ranx run whose scores are ranks in ragmeter's order (trec_eval's tie order)."""
    ranked = run.ranked()
    return ranx.Run(  # type: ignore[attr-defined]
        {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}
    )


def _tied_at_top(run: Run, depth: int) -> set[str]:
    """Queries whose top ``depth`` + 1 scores hold two equal ones (an order ranx may differ on)."""
    tied = set()
    for q, docs in run.to_dict().items():
        top = sorted(docs.values(), reverse=True)[: depth + 1]
        if len(set(top)) < len(top):
            tied.add(q)
    return tied


@pytest.mark.parametrize(
    ("norm", "ranx_norm"), [("min-max", "min-max"), ("z-score", "zmuv"), ("sum", "sum")]
)
def test_wsum_against_ranx(norm: str, ranx_norm: str) -> None:
    ranx = pytest.importorskip("ranx", reason="ranx (dev extra) is needed")
    runs = [read_run(p) for p in RUNS]
    qrels = read_qrels(QRELS)
    ranx_qrels = ranx.Qrels.from_file(str(QRELS), kind="trec")
    ranx_runs = [ranx.Run.from_file(str(p), kind="trec") for p in RUNS]
    best, report = ranx.optimize_fusion(
        ranx_qrels,
        ranx_runs,
        norm=ranx_norm,
        method="wsum",
        metric="ndcg@10",
        return_optimization_report=True,
        show_progress=False,
    )
    ours = quiet(runs=runs, qrels=qrels, norm=norm, metric="ndcg@10", step=0.1)
    assert ours.weights == tuple(float(w) for w in best["weights"])
    assert [str(tuple(t.weights or ())) for t in ours.trials] == [
        str(tuple(float(w) for w in eval(c))) for c in report.configs
    ]
    for trial, theirs in zip(ours.trials, report.results, strict=True):
        fused = ranx.fuse(
            ranx_runs, norm=ranx_norm, method="wsum", params={"weights": trial.weights}
        )
        if not _tied_at_top(fuse(runs, method="wsum", norm=norm, weights=trial.weights), 10):
            assert trial.train == pytest.approx(float(theirs), abs=1e-9), trial
        # tied or not: ranx's fused run in ranx's order has ranx's score here too
        in_ranx_order = Run.from_lists({q: list(docs) for q, docs in fused.to_dict().items()})
        again = evaluate(in_ranx_order, qrels, ["ndcg@10"]).run.means()["ndcg@10"]
        assert again == pytest.approx(float(theirs), abs=1e-9), trial
    assert ours.train_score == pytest.approx(float(max(report.results)), abs=1e-9)


def test_held_out_against_ranx() -> None:
    """Tuned on half the queries by ranx (its qrels and runs cut to them) and scored on the
    other half with ``ranx.evaluate``: the same weights and both scores."""
    ranx = pytest.importorskip("ranx", reason="ranx (dev extra) is needed")
    runs = [read_run(p) for p in RUNS]
    qrels = read_qrels(QRELS)
    ours = tune_fusion(runs, qrels, norm="sum", metric="ndcg@10", split=0.5, seed=0)

    def cut(d: dict, queries: tuple[str, ...]) -> dict:
        return {q: v for q, v in d.items() if q in queries}

    def ranx_part(queries: tuple[str, ...]) -> tuple:
        return (
            ranx.Qrels(cut(qrels.to_dict(), queries)),
            [ranx.Run(cut(read_run(p).to_dict(), queries)) for p in RUNS],
        )

    train_qrels, train_runs = ranx_part(ours.train_queries)
    best = ranx.optimize_fusion(
        train_qrels, train_runs, norm="sum", method="wsum", metric="ndcg@10", show_progress=False
    )
    assert ours.weights == tuple(float(w) for w in best["weights"])
    for queries, score in (
        (ours.train_queries, ours.train_score),
        (ours.test_queries, ours.test_score),
    ):
        part_qrels, part_runs = ranx_part(queries)
        fused = ranx.fuse(part_runs, norm="sum", method="wsum", params={"weights": ours.weights})
        assert score == pytest.approx(ranx.evaluate(part_qrels, fused, "ndcg@10"), abs=1e-9)


def test_rrf_against_ranx() -> None:
    """RRF ties often (a document ranked r by one run only and one ranked r by the other
    only): ragmeter orders tied documents by doc id descending, as trec_eval; ranx as its sort
    leaves them. So the two agree query by query where the top 11 holds no tie, and ranx's
    fused run, in ranx's order, has ranx's score in ragmeter at every k; on the example runs
    the tie order alone moves the best k from ranx's 10 to ragmeter's 20."""
    ranx = pytest.importorskip("ranx", reason="ranx (dev extra) is needed")
    runs = [read_run(p) for p in RUNS]
    qrels = read_qrels(QRELS)
    ranx_qrels = ranx.Qrels.from_file(str(QRELS), kind="trec")
    ranx_runs = [_ranks_as_scores(r, ranx) for r in runs]  # the same input order
    best, report = ranx.optimize_fusion(
        ranx_qrels,
        ranx_runs,
        norm=None,
        method="rrf",
        metric="ndcg@10",
        return_optimization_report=True,
        show_progress=False,
    )
    ours = quiet(runs=runs, qrels=qrels, method="rrf", metric="ndcg@10")
    assert [t.label for t in ours.trials] == [f"k={c}" for c in report.configs]
    compared = 0
    for trial, theirs in zip(ours.trials, report.results, strict=True):
        assert trial.k is not None
        fused = ranx.fuse(ranx_runs, method="rrf", params={"k": trial.k})
        in_ranx_order = Run.from_lists({q: list(docs) for q, docs in fused.to_dict().items()})
        again = evaluate(in_ranx_order, qrels, ["ndcg@10"]).run.means()["ndcg@10"]
        assert again == pytest.approx(float(theirs), abs=1e-9), trial
        mine = fuse(runs, method="rrf", k=trial.k)
        per_query = evaluate(mine, qrels, ["ndcg@10"]).run.per_query()
        ranx_per_query = ranx.evaluate(ranx_qrels, fused, "ndcg@10", return_mean=False)
        by_id = dict(zip(sorted(ranx_qrels.keys()), ranx_per_query, strict=True))
        for q in set(per_query) - _tied_at_top(mine, 10):
            assert per_query[q]["ndcg@10"] == pytest.approx(float(by_id[q]), abs=1e-9)
            compared += 1
    assert compared >= 50  # of the 120 (query, k) pairs
    assert (ours.k, best["k"]) == (20, 10)
    scores = [float(r) for r in report.results]
    assert best["k"] == ours.trials[max(range(len(scores)), key=lambda i: (scores[i], i))].k


def test_ranx_grid_drops_points() -> None:
    """ranx keeps the weight vectors whose float weights add up to exactly 1.0: for three
    runs at step 0.1, 62 of the 66 points of the simplex (the module docstring names the 4)."""
    pytest.importorskip("ranx", reason="ranx (dev extra) is needed")
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    theirs = {tuple(float(w) for w in c) for c in get_trial_configs(get_possible_weights(0.1), 3)}
    ours = set(weight_grid(3, 0.1))
    assert theirs < ours
    assert sorted(ours - theirs) == [
        (0.2, 0.7, 0.1),
        (0.3, 0.6, 0.1),
        (0.6, 0.3, 0.1),
        (0.7, 0.2, 0.1),
    ]
    assert np.all([sum(w) == pytest.approx(1.0) for w in ours])


# -- the command line -----------------------------------------------------------------------


def _fuse_cli(*args: str) -> Result:
    return CliRunner().invoke(app, ["fuse", *map(str, RUNS), *args])


def test_cli_tune_split(tmp_path: Path) -> None:
    out = tmp_path / "fused.txt"
    result = _fuse_cli("--qrels", str(QRELS), "--tune", "ndcg@10", "--split", "0.5", "-o", str(out))
    assert result.exit_code == 0, result.output
    tuned = tune_fusion([read_run(p) for p in RUNS], read_qrels(QRELS), split=0.5, seed=0)
    assert "tuned wsum (min-max) on ndcg@10 over 11 grid points: weights 0.6,0.4" in result.stdout
    assert "  0.6  run_bm25.txt\n  0.4  run_dense.txt" in result.stdout
    assert f"training ndcg@10 {tuned.train_score:.4f}  (6 queries)" in result.stdout
    assert f"held-out ndcg@10 {tuned.test_score:.4f}  (6 queries)" in result.stdout
    assert "warning" not in result.output
    assert (
        read_run(out).to_dict()
        == fuse([read_run(p) for p in RUNS], method="wsum", weights=[0.6, 0.4]).to_dict()
    )


def test_cli_tune_rrf_same_queries_warns_once(tmp_path: Path) -> None:
    out = tmp_path / "fused.txt"
    args = ["--qrels", str(QRELS), "--tune", "ndcg@10", "--method", "rrf", "--show-grid"]
    result = _fuse_cli(*args, "--rrf-ks", "20,60", "--depth", "5", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.output.count("warning: fusion tuned and evaluated on the same queries") == 1
    assert "tuned rrf on ndcg@10 over 2 grid points: k 20" in result.stdout
    assert "k=20" in result.stdout and "k=60" in result.stdout and "<- chosen" in result.stdout
    expected = fuse([read_run(p) for p in RUNS], method="rrf", k=20, depth=5)
    assert read_run(out).to_dict() == expected.to_dict()


def test_cli_tune_query_files(tmp_path: Path) -> None:
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    train.write_text("# training\nq01\nq02\nq03\n")
    test.write_text("q04 0 doc-1 1\nq05\n")
    args = ["--qrels", str(QRELS), "--tune", "ndcg@10", "--norm", "z-score"]
    result = _fuse_cli(
        *args,
        "--train-queries",
        str(train),
        "--test-queries",
        str(test),
        "-o",
        str(tmp_path / "f.txt"),
    )
    assert result.exit_code == 0, result.output
    tuned = tune_fusion(
        [read_run(p) for p in RUNS],
        read_qrels(QRELS),
        norm="z-score",
        train_queries=["q01", "q02", "q03"],
        test_queries=["q04", "q05"],
    )
    assert f"held-out ndcg@10 {tuned.test_score:.4f}  (2 queries)" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tune", "ndcg@10"], "--tune needs --qrels"),
        (["--qrels", str(QRELS)], "--qrels is for --tune"),
        (["--qrels", str(QRELS), "--tune", "map", "--method", "combmnz"], "not combmnz's"),
        (["--qrels", str(QRELS), "--tune", "map", "--weights", "1,2"], "leave out --weights"),
        (["--qrels", str(QRELS), "--tune", "map", "--rrf-ks", "1,x"], "--rrf-ks '1,x'"),
        (["--qrels", str(QRELS), "--tune", "map", "--train-queries", "nope.txt"], "no such file"),
    ],
)
def test_cli_tune_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = _fuse_cli(*args, "-o", str(tmp_path / "f.txt"))
    assert result.exit_code == 2 and message in result.output, result.output


def test_read_query_ids(tmp_path: Path) -> None:
    path = tmp_path / "ids.txt"
    path.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="no query ids"):
        read_query_ids(path)
    path.write_text("q2\nq1 Q0 d 1 2.0 run\n  q2  \n")
    assert read_query_ids(path) == ["q2", "q1"]
