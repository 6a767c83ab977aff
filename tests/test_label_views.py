"""Numbers computed on LLM labels say so wherever they are printed: ``evaluate``, ``compare``,
``check``, the HTML report and the web app all print the line of
:func:`ragmeter.analysis.calibration.describe_labels` — and nothing else changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.core.provenance import LabelProvenance, LabelSource
from ragmeter.io.provenance import write_provenance
from test_calibration import UMBRELA, label_files, run_file, save

runner = CliRunner()
LINE = "labels: LLM labels (umbrela, model qwen2.5-7b): 8 of 8 pairs"


def test_evaluate_says_the_labels_come_from_a_judge(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    on_llm = runner.invoke(app, ["evaluate", str(run), "--qrels", str(llm), "-m", "ndcg@5"])
    on_human = runner.invoke(app, ["evaluate", str(run), "--qrels", str(human), "-m", "ndcg@5"])
    assert on_llm.exit_code == 0 and on_human.exit_code == 0
    assert LINE in on_llm.stderr
    assert "labels:" not in on_human.stderr  # no sidecar: nothing claimed
    # the line is on stderr: the JSON on stdout is the same as without it
    as_json = runner.invoke(
        app, ["evaluate", str(run), "--qrels", str(llm), "-m", "ndcg@5", "-f", "json"]
    )
    assert json.loads(as_json.stdout)["runs"][0]["name"] == "run.txt"
    assert LINE in as_json.stderr


def test_compare_prints_the_calibration_given_or_found_beside(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    args = ["compare", str(run), str(run), "--qrels", str(llm), "-m", "ndcg@5"]
    given = runner.invoke(app, [*args, "--calibration", str(cal)])
    assert given.exit_code == 0, given.output
    assert LINE in given.stderr
    assert "labels: calibration: LLM labels (umbrela, model qwen2.5-7b): κ 0.50" in given.stderr
    assert "against 8 human labels" in given.stderr
    cal.rename(tmp_path / "llm.txt.calibration.json")
    beside = runner.invoke(app, args)
    assert "labels: calibration: LLM labels" in beside.stderr


def test_a_calibration_of_another_judge_does_not_apply(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    other = LabelSource(**{**UMBRELA.__dict__, "model": "llama-3-8b"})
    write_provenance(llm, LabelProvenance.single(other))
    run = run_file(tmp_path)
    result = runner.invoke(
        app,
        ["evaluate", str(run), "--qrels", str(llm), "-m", "ndcg@5", "--calibration", str(cal)],
    )
    assert result.exit_code == 0
    assert "calibration cal.json does not apply" in result.stderr
    assert "κ 0.50" not in result.stderr


def test_a_hand_edited_calibration_is_an_error_before_any_work(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    cal.write_text(cal.read_text().replace('"n_pairs": 8', '"n_pairs": 9'))
    result = runner.invoke(
        app,
        ["evaluate", str(run_file(tmp_path)), "--qrels", str(llm), "--calibration", str(cal)],
    )
    assert result.exit_code == 2 and "edited by hand" in result.stderr
    assert result.stdout == ""


def test_the_report_shows_the_labels_and_the_scatter(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    human, llm = label_files(tmp_path)
    runs = []
    for r in range(3):
        path = tmp_path / f"r{r}.txt"
        order = list(range(8))[r:] + list(range(8))[:r]
        path.write_text(
            "".join(f"q{i % 2} Q0 d{i} {k + 1} {10 - k} r{r}\n" for k, i in enumerate(order))
        )
        runs.append(str(path))
    out = tmp_path / "report.html"
    result = runner.invoke(
        app,
        ["report", *runs, "--qrels", str(human), "--compare-qrels", str(llm),
         "-m", "ndcg@5", "-o", str(out), "--worst", "0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "Labels: do the runs rank alike?" in page
    assert 'id="labels-' in page  # the scatter's SVG
    assert "LLM labels (umbrela, model qwen2.5-7b): 8 of 8 pairs" in page


def test_the_web_evaluate_page_shows_the_labels_line(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ragmeter.web.app import create_app
    from ragmeter.web.config import build_config
    from webdata import config_kwargs, write_collection

    paths = write_collection(tmp_path / "data")
    write_provenance(paths["llm"], LabelProvenance.single(UMBRELA))
    client: Any = TestClient(create_app(build_config(**config_kwargs(paths, tmp_path))))  # type: ignore[arg-type]
    page = client.get("/evaluate", params={"source": "qrels:llm.txt"}).text
    assert "LLM labels (umbrela, model qwen2.5-7b)" in page
    plain = client.get("/evaluate", params={"source": "qrels:qrels.txt"}).text
    assert "LLM labels" not in plain
