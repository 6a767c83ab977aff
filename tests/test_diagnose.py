"""``diagnose``: PROC × %PROC classification, missed passages, JSON; and the CLI options of
the set-based features (sweeps, token budgets, utilities)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import Qrels, Run
from ragmeter.analysis.diagnosis import diagnose
from ragmeter.cli import app

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GRADES = "0:1,1:3,2:4,3:5"
# grades [5,4,4,3,3,3,2,1] → w4 = 0.25, w3 = 1/30 (SPEC §3)
POOL = {"a5": 5, "b4": 4, "c4": 4, "d3": 3, "e3": 3, "f3": 3, "g2": 2, "h1": 1}


def test_classification_and_missed_passages() -> None:
    qrels = Qrels.from_dict({"retr": POOL, "sel": POOL, "fine": POOL, "none": {"g2": 2}})
    run = Run.from_lists(
        {
            "retr": ["d3", "e3", "f3"],  # the pool (= the run) lacks a5, b4, c4
            "sel": ["d3", "e3", "a5", "b4"],  # a5, b4 in the pool but below K = 2
            "fine": ["a5", "b4"],
            "none": ["g2"],
        }
    )
    result = diagnose(run, qrels, k=2, proc_threshold=0.8, pct_threshold=0.8, worst=2)
    by_id = {q.query_id: q for q in result.queries}
    # retr: G_ideal(2) = 1.25, pool best 2 = 2/30 → PROC = (1/15) / 1.25 < 0.8
    assert by_id["retr"].category == "retrieval-limited"
    assert by_id["retr"].proc == pytest.approx((2 / 30) / 1.25)
    # sel: PROC = 1, RA-nWG = (2/30) / 1.25 → %PROC < 0.8
    assert by_id["sel"].category == "selection-limited"
    assert by_id["fine"].category == "fine" and by_id["fine"].ra_nwg == 1.0
    assert by_id["none"].category == "undefined" and by_id["none"].proc is None
    assert result.counts() == {
        "retrieval-limited": 1,
        "selection-limited": 1,
        "fine": 1,
        "undefined": 1,
    }
    assert result.matrix() == {
        "proc_low": {"pct_low": 0, "pct_high": 1},  # retr: %PROC = 1 (took what was there)
        "proc_high": {"pct_low": 1, "pct_high": 1},
    }
    # worst 2 by RA-nWG: retr and sel tie at (2/30)/1.25; ties by query id
    assert [q.query_id for q in result.worst] == ["retr", "sel"]
    missed = {q.query_id: [(m.doc_id, m.grade, m.in_pool) for m in q.missed] for q in result.worst}
    assert missed["retr"] == [("a5", 5, False), ("b4", 4, False), ("c4", 4, False)]
    assert missed["sel"] == [("a5", 5, True), ("b4", 4, True), ("c4", 4, False)]
    body = json.dumps(result.to_dict(), allow_nan=False)  # no NaN anywhere
    rows = {q["query_id"]: q for q in json.loads(body)["queries"]}
    assert rows["none"]["pct_proc"] is None and rows["none"]["ra_nwg"] is None


def test_diagnose_cli_on_the_examples() -> None:
    args = ["diagnose", str(EXAMPLES / "run_dense.txt"), "--qrels", str(EXAMPLES / "qrels.txt")]
    args += ["--k", "5", "--grade-map", GRADES, "--worst", "3", "--format", "json"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert sum(body["counts"].values()) == 12 and len(body["worst"]) == 3
    table = CliRunner().invoke(app, args[:-2])
    assert table.exit_code == 0 and "PROC" in table.stdout
    bad = CliRunner().invoke(app, args[:4])  # TREC grades 0..3 without --grade-map
    assert bad.exit_code == 2 and "grade-map" in bad.output


def test_sweep_budget_and_udcg_cli(tmp_path: Path) -> None:
    base = [str(EXAMPLES / "run_bm25.txt"), "--qrels", str(EXAMPLES / "qrels.txt")]
    curves = tmp_path / "curves.csv"
    out = CliRunner().invoke(
        app,
        [
            "evaluate",
            *base,
            "-m",
            "ra_nwg",
            "-m",
            "harm",
            "--k",
            "1:3",
            "--grade-map",
            GRADES,
            "--curves",
            str(curves),
            "-f",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "ra_nwg@3" in json.loads(out.stdout)["runs"][0]["metrics"]
    rows = list(csv.DictReader(curves.open()))
    assert [(r["measure"], r["k"]) for r in rows][:3] == [
        ("ra_nwg", "1"),
        ("ra_nwg", "2"),
        ("ra_nwg", "3"),
    ]
    lengths = EXAMPLES / "passage_lengths.tsv"
    out = CliRunner().invoke(
        app,
        [
            "evaluate",
            *base,
            "-m",
            "ra_nwg@512t",
            "-m",
            "proc@512t",
            "--grade-map",
            GRADES,
            "--corpus",
            str(lengths),
            "-f",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    metrics = json.loads(out.stdout)["runs"][0]["metrics"]
    assert 0 < metrics["ra_nwg@512t"]["mean"] <= metrics["proc@512t"]["mean"] <= 1
    utilities = tmp_path / "u.txt"
    utilities.write_text("q01 doc-287 0.5\n")
    out = CliRunner().invoke(
        app, ["evaluate", *base, "-m", "udcg@1", "--utilities", str(utilities), "-f", "json"]
    )
    assert out.exit_code == 2 and "has no utility" in out.output
