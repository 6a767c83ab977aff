"""The intent-aware diversity measures (ERR-IA, nERR-IA, α-DCG, NRBP, nNRBP, P-IA, StRecall,
AP-IA) against ndeval's, through pyndeval (dev extra) as ir_measures calls it, side by side on
random sub-question judgments; and hand cases from their formulas."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest

from ragmeter import Run, evaluate
from ragmeter.core.judgments import Judgments
from ragmeter.io.judgments import read_judgments
from ragmeter.io.trec import read_trec_run

#: ir_measures' spelling → ours, each evaluated by both tools
NAMES = (
    "ERR_IA@5",
    "ERR_IA@10",
    "ERR_IA@20",
    "nERR_IA@5",
    "nERR_IA@20",
    "alpha_DCG@10",
    "alpha_DCG(alpha=0.3)@20",
    "NRBP",
    "NRBP(alpha=0.3,beta=0.8)",
    "nNRBP",
    "P_IA@5",
    "P_IA@20",
    "StRecall@5",
    "StRecall@20",
    "AP_IA",
)


def _random_judgments(seed: int) -> tuple[dict[str, dict[str, list[int]]], dict[str, list[str]]]:
    rng = random.Random(seed)
    data: dict[str, dict[str, list[int]]] = {}
    runs: dict[str, list[str]] = {}
    for q in range(1, 9):
        n_q = rng.randint(1, 6)
        docs = [f"D{q}x{i}" for i in range(rng.randint(1, 14))]
        data[str(q)] = {d: [rng.choice([0, 0, 1, 2, 3, 4, 5]) for _ in range(n_q)] for d in docs}
        runs[str(q)] = rng.sample(
            docs + [f"U{q}x{i}" for i in range(4)], k=rng.randint(1, len(docs) + 4)
        )
    return data, runs


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("seed", range(5))
def test_against_pyndeval(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")
    pytest.importorskip("pyndeval", reason="pyndeval (dev extra) is needed")
    data, runs = _random_judgments(seed)
    qrels = [
        ir_measures.GenericQrel(q, d, 1 if r >= 3 else 0, str(i + 1))
        for q, docs in data.items()
        for d, rs in docs.items()
        for i, r in enumerate(rs)
    ]
    run = [
        ir_measures.ScoredDoc(q, d, float(len(ranked) - rank))
        for q, ranked in runs.items()
        for rank, d in enumerate(ranked)
    ]
    result = evaluate(Run.from_lists(runs), None, list(NAMES), judgments=Judgments.from_dict(data))
    ours = result.run
    for name in NAMES:
        measure = ir_measures.parse_measure(name)
        theirs = {m.query_id: m.value for m in measure.iter_calc(qrels, run)}
        compared = 0
        for q, value in zip(ours.query_ids, ours.column(name), strict=True):
            if math.isnan(value):  # NA: no answerable sub-question (pyndeval: 0 or NaN)
                other = theirs.get(q, 0.0)
                assert other == 0.0 or math.isnan(other), (name, q)
                continue
            assert value == pytest.approx(theirs[q], abs=1e-9), (name, q)
            compared += 1
        assert compared >= 3, name


def _one(run: list[str], ratings: dict[str, list[int]], name: str) -> float:
    result = evaluate(
        Run.from_lists({"q": run}), None, [name], judgments=Judgments.from_dict({"q": ratings})
    )
    return float(result.run.column(name)[0])


def test_hand_cases() -> None:
    # S = 2; run [a answers both, b answers the first]: g = [2, 0.5] (α = 0.5)
    ratings = {"a": [5, 5], "b": [5, 0], "c": [0, 0]}
    run = ["a", "b", "c"]
    assert _one(run, ratings, "err_ia@2") == pytest.approx((2 + 0.25) / (2 + 0.5))
    assert _one(run, ratings, "nrbp") == pytest.approx(0.75 / 2 * (2 + 0.25))
    assert _one(run, ratings, "p_ia@2") == pytest.approx(3 / (2 * 2))
    assert _one(run, ratings, "strecall@1") == 1.0
    assert _one(["c", "b"], ratings, "strecall@2") == 0.5
    # the run is the greedy ideal: normalised measures are 1
    assert _one(run, ratings, "nerr_ia@3") == pytest.approx(1.0)
    assert _one(run, ratings, "nnrbp") == pytest.approx(1.0)
    # AP-IA: question 1 answered by a (1/1) and b (2/2), question 2 by a (1/1) → 1
    assert _one(run, ratings, "ap_ia") == pytest.approx(1.0)
    assert _one(["c", "a"], ratings, "ap_ia") == pytest.approx((0.5 / 2 + 0.5) / 2)
    # no answerable sub-question: NA
    assert math.isnan(_one(run, {"a": [0], "b": [1]}, "err_ia@5"))


def _write_files(
    tmp_path: Path, qrels_lines: list[str], runs: dict[str, list[str]]
) -> tuple[Path, Path]:
    """The diversity qrels lines and the runs (scores n − rank + 1: no ties) as TREC files."""
    qrels_path = tmp_path / "diversity.qrels"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    run_path = tmp_path / "run.txt"
    run_path.write_text(
        "".join(
            f"{q} Q0 {d} {rank + 1} {len(ranked) - rank} r\n"
            for q, ranked in runs.items()
            for rank, d in enumerate(ranked)
        )
    )
    return qrels_path, run_path


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("seed", range(4))
def test_diversity_qrels_file_as_ir_measures_reads_it(seed: int, tmp_path: Path) -> None:
    """One TREC diversity qrels file (``qid subtopic doc judgment``, subtopics from 0 as
    ir_measures writes the iteration column, judgments −1…2) read by ragmeter's reader and by
    ir_measures (pyndeval): the same values."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")
    pytest.importorskip("pyndeval", reason="pyndeval (dev extra) is needed")
    data, runs = _random_judgments(seed)
    rng = random.Random(seed)
    lines = [
        f"{q} {i} {d} {rng.choice((-1, 0, 1, 2)) if r >= 3 else 0}"
        for q, docs in data.items()
        for d, rs in docs.items()
        for i, r in enumerate(rs)
    ]
    qrels_path, run_path = _write_files(tmp_path, lines, runs)
    names = ("ERR_IA@20", "nERR_IA@10", "alpha_nDCG@20", "NRBP", "P_IA@5", "StRecall@10", "AP_IA")
    judgments = read_judgments(qrels_path, format="diversity")
    ours = evaluate(read_trec_run(run_path), None, list(names), judgments=judgments).run
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    for name in names:
        measure = ir_measures.parse_measure(name)
        theirs = {
            m.query_id: m.value for m in ir_measures.pyndeval.iter_calc([measure], qrels, run)
        }
        for q, value in zip(ours.query_ids, ours.column(name), strict=True):
            if math.isnan(value):  # no relevant subtopic: ndeval writes 0 (or nothing)
                assert theirs.get(q, 0.0) == 0.0 or math.isnan(theirs[q]), (name, q)
            else:
                assert value == pytest.approx(theirs[q], abs=1e-9), (name, q)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("seed", range(3))
def test_diversity_qrels_given_as_qrels_read_their_subtopics(seed: int, tmp_path: Path) -> None:
    """As an ir_measures user gives them: the diversity qrels file as the qrels
    (``--qrels``, ``evaluate(run, "file", ...)``), no ``--judgments``. ndeval's measures read
    its subtopics (second column) as ir_measures and pyndeval do, and a note says so; a
    document judged for several subtopics (0 for one, 1 for another) is no conflict there."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")
    pytest.importorskip("pyndeval", reason="pyndeval (dev extra) is needed")
    from typer.testing import CliRunner

    from ragmeter.cli import app

    data, runs = _random_judgments(seed)
    lines = [
        f"{q} {i + 1} {d} {1 if r >= 3 else 0}"
        for q, docs in data.items()
        for d, rs in docs.items()
        for i, r in enumerate(rs)
    ]
    qrels_path, run_path = _write_files(tmp_path, lines, runs)
    names = ("ERR_IA@20", "alpha_nDCG@20", "nNRBP", "AP_IA")
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    theirs = {
        name: {
            m.query_id: m.value
            for m in ir_measures.pyndeval.iter_calc([ir_measures.parse_measure(name)], qrels, run)
        }
        for name in names
    }
    api = evaluate(str(run_path), str(qrels_path), list(names))
    assert any("read as TREC diversity qrels" in w for w in api.warnings)
    cli = CliRunner().invoke(
        app,
        ["evaluate", str(run_path), "--qrels", str(qrels_path), "--per-query", "-f", "json"]
        + [a for name in names for a in ("-m", name)],
    )
    assert cli.exit_code == 0, cli.output
    printed = json.loads(cli.stdout)
    assert any("read as TREC diversity qrels" in w for w in printed["warnings"])
    per_query = printed["runs"][0]["per_query"]
    for name in names:
        for q, value in zip(api.run.query_ids, api.run.column(name), strict=True):
            if math.isnan(value):  # no relevant subtopic: ndeval writes 0 (or nothing)
                assert theirs[name].get(q, 0.0) == 0.0 or math.isnan(theirs[name][q]), (name, q)
                assert per_query[q][name] is None
            else:
                assert value == pytest.approx(theirs[name][q], abs=1e-9), (name, q)
                assert per_query[q][name] == pytest.approx(value, abs=1e-12), (name, q)


def test_diversity_subtopics_from_zero_are_shifted(tmp_path: Path) -> None:
    path = tmp_path / "div.qrels"
    path.write_text("q 0 a 1\nq 1 b 2\nq 1 a 0\nr 3 c 1\nr 1 d 0\n")
    judgments = read_judgments(path, format="diversity")
    offsets = judgments.rating_offsets.tolist()
    ratings = [judgments.ratings[s:e].tolist() for s, e in itertools.pairwise(offsets)]
    rows = dict(zip(judgments.doc_ids.to_pylist(), ratings, strict=True))
    # q: subtopics 0, 1 → sub-questions 1, 2; r: subtopics 1, 3 kept as numbered (3 of them)
    assert rows == {"a": [5, 0], "b": [0, 5], "c": [0, 0, 5], "d": [0, 0, 0]}
