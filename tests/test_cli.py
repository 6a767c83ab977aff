"""The ``ragmeter evaluate`` command end to end on the shipped example data."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from ragmeter.cli import app

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RUNS = [str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "run_dense.txt")]
QRELS = str(EXAMPLES / "qrels.txt")

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_shape_and_per_query(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, _, _ = _invoke(
        "evaluate",
        *RUNS,
        "--qrels",
        QRELS,
        "-m",
        "ndcg@10",
        "-m",
        "P_10",
        "--per-query",
        "--format",
        "json",
        "-o",
        str(out),
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert [r["name"] for r in data["runs"]] == ["run_bm25.txt", "run_dense.txt"]
    metrics = data["runs"][0]["metrics"]
    assert set(metrics) == {"ndcg@10", "precision@10"}
    assert metrics["ndcg@10"]["n"] == 12 and metrics["ndcg@10"]["n_defined"] == 12
    assert len(data["runs"][0]["per_query"]) == 12
    assert data["warnings"] == []


def test_json_without_per_query_has_no_per_query_key() -> None:
    code, stdout, _ = _invoke("evaluate", RUNS[0], "--qrels", QRELS, "-m", "map", "-f", "json")
    assert code == 0
    assert "per_query" not in json.loads(stdout)["runs"][0]


def test_csv_and_trec_formats_agree_with_json() -> None:
    _, js, _ = _invoke("evaluate", RUNS[0], "--qrels", QRELS, "-m", "map", "-f", "json")
    mean = json.loads(js)["runs"][0]["metrics"]["map"]["mean"]
    _, text, _ = _invoke("evaluate", RUNS[0], "--qrels", QRELS, "-m", "map", "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert float(rows[0]["value"]) == mean and rows[0]["query"] == "all"
    _, trec, _ = _invoke("evaluate", RUNS[0], "--qrels", QRELS, "-m", "map", "-f", "trec")
    assert trec.strip() == f"map\tall\t{mean:.4f}"


def test_table_lists_one_row_per_run() -> None:
    code, stdout, _ = _invoke("evaluate", *RUNS, "--qrels", QRELS, "-m", "ndcg@10")
    assert code == 0
    assert "run_bm25.txt" in stdout and "run_dense.txt" in stdout


def test_missing_skip_versus_zero(tmp_path: Path) -> None:
    run = tmp_path / "partial.txt"
    lines = Path(RUNS[0]).read_text().splitlines(keepends=True)
    run.write_text("".join(line for line in lines if not line.startswith("q01 ")))
    _, zero, _ = _invoke("evaluate", str(run), "--qrels", QRELS, "-m", "map", "-f", "json")
    _, skip, _ = _invoke(
        "evaluate", str(run), "--qrels", QRELS, "-m", "map", "-f", "json", "--missing", "skip"
    )
    z, s = json.loads(zero), json.loads(skip)
    assert z["runs"][0]["metrics"]["map"]["n"] == 12
    assert s["runs"][0]["metrics"]["map"]["n"] == 11
    assert any("absent from the run" in w for w in z["warnings"])
    assert any("skipped" in w for w in s["warnings"])


def test_errors_exit_non_zero_with_a_clear_message(tmp_path: Path) -> None:
    code, _, err = _invoke("evaluate", RUNS[0], "--qrels", str(tmp_path / "nope.txt"))
    assert code == 2 and "nope.txt" in err and "no such file" in err
    code, _, err = _invoke("evaluate", RUNS[0], "--qrels", QRELS, "-m", "ndcgg@10")
    assert code == 2 and "unknown measure 'ndcgg" in err and "ndcg" in err


def test_qrels_format_reads_trec_qrels_named_tsv(tmp_path: Path) -> None:
    """A TREC qrels file named .tsv is read as a headed TSV (and refused, pointing at the
    option) unless --qrels-format trec says what it is; then its numbers are the .txt's."""
    tsv = tmp_path / "qrels.tsv"
    tsv.write_bytes(Path(QRELS).read_bytes())
    code, _, err = _invoke("evaluate", RUNS[0], "--qrels", str(tsv), "-m", "map")
    assert code == 2 and "--qrels-format trec" in " ".join(err.split())
    args = ["evaluate", RUNS[0], "-m", "map", "-m", "ndcg@10", "-f", "json"]
    code, out, err = _invoke(*args, "--qrels", str(tsv), "--qrels-format", "trec")
    assert code == 0, err
    code, expected, _ = _invoke(*args, "--qrels", QRELS)
    assert json.loads(out)["runs"] == json.loads(expected)["runs"]
    code, _, err = _invoke(*args, "--qrels", str(tsv), "--qrels-format", "nope")
    assert code == 2 and "unknown format 'nope'" in err


def test_python_dash_m_runs_the_same_cli() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragmeter",
            "evaluate",
            RUNS[0],
            "--qrels",
            QRELS,
            "-m",
            "mrr",
            "-f",
            "trec",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("mrr\tall\t")


def test_samples_file_carries_its_own_judgments(tmp_path: Path) -> None:
    samples = tmp_path / "samples.json"
    samples.write_text(
        json.dumps(
            [
                {
                    "id": "q-1",
                    "actual_output": {
                        "retrieved": [
                            {"id": d} for d in ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]
                        ]
                    },
                    "expected_output": ["doc-3", "doc-9"],
                    "metadata": {"k": 5},
                }
            ]
        )
    )
    code, stdout, _ = _invoke("evaluate", str(samples), "-m", "ndcg@5", "-m", "mrr", "-f", "json")
    assert code == 0
    metrics = json.loads(stdout)["runs"][0]["metrics"]
    # SPEC §2 (seed 002): nDCG@5 = (1/log2 3 + 1/log2 5) / (1 + 1/log2 3), RR = 1/2
    assert abs(metrics["ndcg@5"]["mean"] - 0.6509209298) < 1e-10
    assert metrics["mrr"]["mean"] == 0.5


def test_table_written_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "table.txt"
    code, _, _ = _invoke("evaluate", RUNS[0], "--qrels", QRELS, "-m", "map", "-o", str(out))
    assert code == 0 and "run_bm25.txt" in out.read_text()
