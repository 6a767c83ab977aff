"""The PPI tables read at 80 columns, piped: ``evaluate --ppi``, ``compare --ppi`` and
``monitor ppi`` go through the table fitter, honour ``COLUMNS``, cut no cell (no ``…``),
keep every line within the width and print every number, header and marker that the wide
table prints (columns that do not fit go to a block under the first, repeating the run)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WIDE = 400
runner = CliRunner()
_BOX = re.compile(r"[\u2500-\u257f]")


def _tokens(text: str) -> set[str]:
    return set(_BOX.sub(" ", text).split())


def _check(narrow: str, wide: str, width: int) -> None:
    assert "…" not in narrow
    too_long = [line for line in narrow.splitlines() if len(line) > width]
    assert not too_long, too_long
    missing = _tokens(wide) - _tokens(narrow)
    assert not missing, missing


def _run(width: int, *args: str) -> str:
    done = runner.invoke(app, list(args), env={"COLUMNS": str(width)})  # not a terminal: piped
    assert done.exit_code == 0, done.output
    return done.stdout


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Two runs with long names; LLM labels that move every third grade up one, human labels
    (the example qrels) on 6 of the 12 queries: intervals, λ and effective n all defined."""
    root = tmp_path_factory.mktemp("ppi")
    lines = (EXAMPLES / "qrels.txt").read_text().splitlines()
    llm = root / "llm.txt"
    llm.write_text(
        "".join(
            f"{q} {it} {d} {(int(g) + (i % 3 == 2)) % 4}\n"
            for i, (q, it, d, g) in enumerate(line.split() for line in lines)
        )
    )
    human = root / "human.txt"
    human.write_text("".join(f"{line}\n" for line in lines if line.split()[0] <= "q06"))
    runs = []
    for i, source in enumerate(("run_bm25.txt", "run_dense.txt")):
        path = root / f"system-with-a-rather-long-name-{i}.txt"
        path.write_text((EXAMPLES / source).read_text())
        runs.append(str(path))
    return [*runs, "--qrels", str(llm), "--human-qrels", str(human), "--ppi"]


MEASURES = ("-m", "ndcg@10(rel_level=2)", "-m", "P@10")


@pytest.mark.parametrize("width", [80, 120])
def test_evaluate_ppi_fits_and_keeps_every_column(width: int, collection: list[str]) -> None:
    args = ["evaluate", *collection, *MEASURES]
    narrow, wide = _run(width, *args), _run(WIDE, *args)
    _check(narrow, wide, width)
    for header in ("PPI estimate", "LLM only", "human only", "λ", "labelled", "effective"):
        assert header in narrow
    # the whole interval under its estimate, never "0.4548 [0.363…"
    assert re.search(r"\[\d\.\d{4}, \d\.\d{4}\]", narrow)
    assert "6/12" in narrow and re.search(r"\(\+\d+\.\d\)", narrow)  # labelled, labels gained


@pytest.mark.parametrize("width", [80, 120])
def test_compare_ppi_keeps_the_p_columns(width: int, collection: list[str]) -> None:
    args = ["compare", *collection, *MEASURES]
    narrow, wide = _run(width, *args), _run(WIDE, *args)
    _check(narrow, wide, width)
    assert "p (holm)" in narrow and "PPI difference" in narrow and "LLM only" in narrow
    # the p-values sit in the first block of each measure's table, beside the difference
    first = narrow.split("(continued)")[0]
    assert re.search(r"\d\.\d{4}\s+\d\.\d{4}", first) and "p (holm)" in first


def test_monitor_ppi_table_fits_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.report.monitor import print_ppi
    from ragmeter.stats.ppi import ppi_mean
    from ragmeter.workflows.monitor import MonitorPPI, WindowPPI

    estimate = ppi_mean(
        [0.2, 0.6, 0.4], [0.4, 0.6, 0.8], [0.2, 0.6, 0.4, 0.8], alpha=0.05, estimator="plusplus"
    )
    windows = [WindowPPI(86400 * d, "ndcg@10(rel_level=2)", 3, 4, 0.5, estimate) for d in range(3)]
    result = MonitorPPI("production-stream", 86400, windows, None, "human (alice)", 0.05)
    printed = {}
    for width in (80, WIDE):
        monkeypatch.setenv("COLUMNS", str(width))
        buffer = io.StringIO()
        print_ppi(result, file=buffer)  # a file, as piped
        printed[width] = buffer.getvalue()
    _check(printed[80], printed[WIDE], 80)
    assert "[0.2" in printed[80] and "95% CI" in printed[80]
