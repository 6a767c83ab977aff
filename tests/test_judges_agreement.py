"""``ragmeter agreement``: κ values, confusion and per-grade precision/recall computed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

# eight pairs graded by both files: (A, B)
PAIRS = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (5, 4), (4, 5), (1, 2)]


def qrels_files(tmp_path: Path) -> tuple[Path, Path]:
    a_lines = [f"q{i // 4} 0 d{i} {ga}" for i, (ga, _) in enumerate(PAIRS)]
    b_lines = [f"q{i // 4} 0 d{i} {gb}" for i, (_, gb) in enumerate(PAIRS)]
    a_lines += ["q0 0 only_a 3", "q1 0 pooled -1"]  # -1: in the pool, not judged
    b_lines += ["q1 0 only_b 2", "q1 0 pooled 4"]
    a, b = tmp_path / "human.txt", tmp_path / "llm.txt"
    a.write_text("\n".join(a_lines) + "\n")
    b.write_text("\n".join(b_lines) + "\n")
    return a, b


def run_json(tmp_path: Path, *extra: str) -> dict:
    a, b = qrels_files(tmp_path)
    result = CliRunner().invoke(app, ["agreement", str(a), str(b), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_kappas_by_hand(tmp_path: Path) -> None:
    report = run_json(tmp_path)
    assert report["n_common"] == 8 and report["only_a"] == 1 and report["only_b"] == 2
    # marginals over grades 1..5: A = (2,1,1,2,2)/8, B = (1,2,1,2,2)/8
    # unweighted: p_o = 5/8, p_e = 13/64 -> κ = (40-13)/(64-13) = 27/51
    assert report["kappa"]["unweighted"] == pytest.approx(27 / 51)
    # linear: observed Σ|i-j|O = 3/8 = 24/64, expected Σ|i-j| a_i b_j / 64 = 106/64
    assert report["kappa"]["linear"] == pytest.approx(1 - 24 / 106)
    # quadratic: observed 24/64, expected Σ(i-j)² a_i b_j / 64 = 276/64
    assert report["kappa"]["quadratic"] == pytest.approx(1 - 24 / 276)
    assert report["accuracy"] == pytest.approx(5 / 8)
    assert report["scale"] == [1, 2, 3, 4, 5]
    assert report["confusion"] == [
        [1, 1, 0, 0, 0],
        [0, 1, 0, 0, 0],
        [0, 0, 1, 0, 0],
        [0, 0, 0, 1, 1],
        [0, 0, 0, 1, 1],
    ]
    per = report["per_grade"]
    assert (per["1"]["precision"], per["1"]["recall"], per["1"]["support"]) == (1.0, 0.5, 2)
    assert (per["2"]["precision"], per["2"]["recall"]) == (0.5, 1.0)
    assert (per["4"]["precision"], per["4"]["recall"]) == (0.5, 0.5)
    assert (per["5"]["precision"], per["5"]["recall"]) == (0.5, 0.5)


def test_binary_threshold_by_hand(tmp_path: Path) -> None:
    # relevant ⇔ grade ≥ 5: A = [0,0,0,0,1,1,0,0], B = [0,0,0,0,1,0,1,0]
    binary = run_json(tmp_path, "--threshold", "5")["binary"]
    assert binary["confusion"] == [[5, 1], [1, 1]]
    # p_o = 6/8, p_e = (6/8)² + (2/8)² = 40/64 -> κ = (48-40)/(64-40) = 1/3
    assert binary["kappa"] == pytest.approx(1 / 3)
    assert binary["relevant"]["precision"] == 0.5 and binary["relevant"]["recall"] == 0.5
    # at the default threshold 4 both files agree on every pair
    default = run_json(tmp_path)["binary"]
    assert default["threshold"] == 4 and default["kappa"] == pytest.approx(1.0)


def test_table_output_and_errors(tmp_path: Path) -> None:
    a, b = qrels_files(tmp_path)
    result = CliRunner().invoke(app, ["agreement", str(a), str(b)])
    assert result.exit_code == 0
    assert "8 pairs graded by both" in result.output and "quadratic 0.9130" in result.output
    result = CliRunner().invoke(app, ["agreement", str(a), str(tmp_path / "nope.txt")])
    assert result.exit_code == 2 and "no such file" in result.output
