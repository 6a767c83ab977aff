"""``ragmeter compare`` end to end on the shipped example data."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

pytest.importorskip("scipy")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BM25, DENSE = str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "run_dense.txt")
QRELS = str(EXAMPLES / "qrels.txt")
FAST = ("--bootstrap", "500", "--permutations", "2000")

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_matches_the_library_and_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    code, out, err = _invoke(
        "compare", BM25, DENSE, "-q", QRELS, "-m", "ndcg@10", "-m", "P@10",
        "--test", "t", "-f", "json", *FAST,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["baseline"] == "run_bm25.txt"
    assert doc["settings"]["test"] == "t" and doc["settings"]["correction"] == "holm"
    diffs = {d["measure"]: d for d in doc["differences"]}
    assert set(diffs) == {"ndcg@10", "precision@10"}

    import ragmeter

    ev = ragmeter.evaluate(
        [ragmeter.read_run(BM25), ragmeter.read_run(DENSE)],
        ragmeter.read_qrels(QRELS),
        ["ndcg@10", "P@10"],
    )
    a, b = ev[0].column("ndcg@10"), ev[1].column("ndcg@10")
    d = diffs["ndcg@10"]
    assert d["p_value"] == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue)
    assert d["difference"] == pytest.approx(float(np.mean(b - a)))
    assert d["n"] == 12 and d["n_dropped"] == 0
    summary = {(s["run"], s["measure"]): s for s in doc["summaries"]}
    assert summary[("run_bm25.txt", "ndcg@10")]["mean"] == pytest.approx(float(a.mean()))


def test_table_shows_markers_baseline_and_dropped() -> None:
    code, out, err = _invoke(
        "compare", BM25, DENSE, "--qrels", QRELS, "-m", "ndcg@10", "-m", "recall@50", *FAST
    )
    assert code == 0, err
    assert "baseline run_bm25.txt" in out
    assert "run_dense.txt" in out and "dropped" in out
    assert "▼" in out  # ndcg@10 drops significantly with two measures under Holm
    assert "·" in out  # recall@50 does not change significantly
    assert "p (Holm)" in out


def test_baseline_option_and_other_formats(tmp_path: Path) -> None:
    out_file = tmp_path / "cmp.csv"
    code, _, err = _invoke(
        "compare", BM25, DENSE, "-q", QRELS, "-m", "map", "--baseline", DENSE,
        "-f", "csv", "-o", str(out_file), *FAST,
    )  # fmt: skip
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out_file.read_text())))
    assert [r["run"] for r in rows] == ["run_dense.txt", "run_bm25.txt"]
    assert rows[0]["difference"] == "" and rows[1]["difference"] != ""
    assert rows[1]["baseline"] == "run_dense.txt"

    code, md, _ = _invoke("compare", BM25, DENSE, "-q", QRELS, "-m", "map", "-f", "markdown", *FAST)
    assert code == 0 and md.count("\n|") >= 3 and "| map |" in md
    code, tex, _ = _invoke("compare", BM25, DENSE, "-q", QRELS, "-m", "map", "-f", "latex", *FAST)
    assert code == 0
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"run\_bm25.txt" in tex

    table_file = tmp_path / "cmp.txt"
    code, _, _ = _invoke("compare", BM25, DENSE, "-q", QRELS, "-m", "map", "-o", str(table_file))
    assert code == 0 and "run_dense.txt" in table_file.read_text()


def test_seed_reproducible_and_tests_selectable() -> None:
    args = ("compare", BM25, DENSE, "-q", QRELS, "-m", "ndcg@10", "-f", "json", *FAST)
    first = _invoke(*args, "--seed", "5")[1]
    assert first == _invoke(*args, "--seed", "5")[1]
    for test, method in (
        ("wilcoxon", "wilcoxon:exact"),
        ("randomization", "randomization:monte-carlo"),
    ):
        doc = json.loads(_invoke(*args, "--test", test)[1])
        assert doc["differences"][0]["method"] == method
    doc = json.loads(_invoke(*args, "--correction", "none", "--test", "t")[1])
    d = doc["differences"][0]
    assert d["p_adjusted"] == d["p_value"]


def test_na_is_null_and_dropped_is_counted(tmp_path: Path) -> None:
    # a run missing two judged queries, evaluated with --missing skip: they are dropped
    lines = Path(DENSE).read_text().splitlines()
    short = tmp_path / "short.txt"
    short.write_text("\n".join(x for x in lines if x.split()[0] not in ("q01", "q02")) + "\n")
    code, out, err = _invoke(
        "compare", BM25, str(short), "-q", QRELS, "-m", "ndcg@10", "--missing", "skip",
        "-f", "json", *FAST,
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)["differences"][0]
    assert d["n"] == 10 and d["n_dropped"] == 2
    assert "NaN" not in out


def test_errors() -> None:
    code, _, err = _invoke("compare", BM25, "-q", QRELS)
    assert code == 2 and "at least two runs" in err
    code, _, err = _invoke("compare", BM25, DENSE, "-q", QRELS, "--baseline", "nope")
    assert code == 2 and "none of the runs" in err
    code, _, err = _invoke("compare", BM25, DENSE, "-q", QRELS, "-m", "nosuchmetric")
    assert code == 2


def test_same_file_names_are_told_apart(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "run.txt").write_text(Path(BM25 if sub == "a" else DENSE).read_text())
    a, b = str(tmp_path / "a" / "run.txt"), str(tmp_path / "b" / "run.txt")
    code, out, err = _invoke("compare", a, b, "-q", QRELS, "-m", "map", "-f", "json", *FAST)
    assert code == 0, err
    assert json.loads(out)["runs"] == [a, b]


def test_counts_are_printed_as_integers_as_evaluate_prints_them(tmp_path: Path) -> None:
    """num_ret is a sum: 3 + 2 = 5 documents for run a, 2 + 2 = 4 for run b (Δ −1); the
    table and the Markdown print 5, 4 and −1, as evaluate does, not 5.0000."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("q1 Q0 d1 1 3 a\nq1 Q0 d3 2 2 a\nq1 Q0 d4 3 1 a\nq2 Q0 d2 1 2 a\nq2 Q0 d5 2 1 a\n")
    b.write_text("q1 Q0 d3 1 2 b\nq1 Q0 d1 2 1 b\nq2 Q0 d5 1 2 b\nq2 Q0 d2 2 1 b\n")
    args = ["compare", str(a), str(b), "-q", str(qrels), "-m", "num_ret", "-m", "mrr", *FAST]
    code, out, err = _invoke(*args)
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.strip().startswith("num_ret"))
    assert row.split()[:4] == ["num_ret", "5", "b.txt", "4"] and "-1" in row.split()
    assert "5.0000" not in out and "4.0000" not in out
    assert "0.5000" in out  # mrr of b: (1/2 + 1/2) / 2, still with 4 decimals
    code, md, err = _invoke(*args, "-f", "markdown")
    assert code == 0, err
    assert "| num_ret | 5 " in md and "5.0000" not in md
    code, evaluated, _ = _invoke("evaluate", str(a), str(b), "-q", str(qrels), "-m", "num_ret")
    assert " 5 " in evaluated and " 4 " in evaluated
