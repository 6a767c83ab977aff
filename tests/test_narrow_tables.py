"""Every table reads at 80 columns: nothing cut (no ``…``), every number and marker of the
wide table still printed, every line within the width; columns that do not fit go to a
second block that repeats the key columns."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.report.tables import fit

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
QRELS = str(EXAMPLES / "qrels.txt")
FAST = ("--bootstrap", "500", "--permutations", "2000")
MEASURES = ("ndcg@10", "map", "P@10", "recall@100", "mrr@10")
WIDE = 400

runner = CliRunner()
_BOX = re.compile(r"[\u2500-\u257f]")


def _run(width: int, *args: str) -> str:
    done = runner.invoke(app, list(args), env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.output
    return done.stdout


def _tokens(text: str) -> set[str]:
    return set(_BOX.sub(" ", text).split())


def _check(narrow: str, wide: str, width: int) -> None:
    assert "…" not in narrow
    too_long = [line for line in narrow.splitlines() if len(line) > width]
    assert not too_long, too_long
    missing = _tokens(wide) - _tokens(narrow)
    assert not missing, missing


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("runs")
    out = []
    for i, source in enumerate(("run_bm25.txt", "run_dense.txt") * 2):
        path = root / f"system-with-a-rather-long-name-{i}.txt"
        shutil.copy(EXAMPLES / source, path)
        out.append(str(path))
    return out


@pytest.mark.parametrize("width", [80, 120])
def test_evaluate_four_runs_five_measures(width: int, runs: list[str]) -> None:
    args = ["evaluate", *runs, "--qrels", QRELS, *(x for m in MEASURES for x in ("-m", m))]
    narrow, wide = _run(width, *args), _run(WIDE, *args)
    _check(narrow, wide, width)
    assert len(wide.splitlines()) < len(narrow.splitlines()) or width >= 120


@pytest.mark.parametrize("width", [80, 120])
def test_compare_keeps_p_values_and_markers(width: int, runs: list[str]) -> None:
    args = ["compare", *runs[:3], "--qrels", QRELS, "-m", "ndcg@10", "-m", "P@10", *FAST]
    narrow, wide = _run(width, *args), _run(WIDE, *args)
    _check(narrow, wide, width)
    assert "▲" in narrow and "p (Holm)" in narrow


@pytest.mark.parametrize("width", [80, 120])
def test_measures_lists_every_family_whole(width: int) -> None:
    narrow, wide = _run(width, "measures"), _run(WIDE, "measures")
    _check(narrow, wide, width)
    assert "aliases: P, prec" in re.sub(r"\s+", " ", _BOX.sub(" ", narrow))


@pytest.mark.parametrize("width", [80, 120])
def test_agreement(width: int, tmp_path: Path) -> None:
    lines = Path(QRELS).read_text().splitlines()
    other = tmp_path / "other.txt"
    other.write_text(
        "".join(
            f"{q} {it} {d} {(int(g) + (i % 3 == 0)) % 4}\n"
            for i, (q, it, d, g) in enumerate(line.split() for line in lines)
        )
    )
    args = ["agreement", QRELS, str(other)]
    narrow, wide = _run(width, *args), _run(WIDE, *args)
    _check(narrow, wide, width)


def _printed(table: Table, width: int) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width).print(fit(table))
    return buffer.getvalue()


def test_fit_deals_columns_into_blocks_that_repeat_the_key() -> None:
    table = Table(title="t")
    table.add_column("run", no_wrap=True)
    for i in range(8):
        table.add_column(f"measure_{i}@10", justify="right")
    table.add_row("a-run", *(f"0.{i}234" for i in range(8)))
    text = _printed(table, 60)
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 60
    assert text.count("a-run") == text.count("t (continued)") + 1 > 1
    assert all(f"0.{i}234" in text and f"measure_{i}@10" in text for i in range(8))
    # one block when it fits: the table as rich prints it
    wide = io.StringIO()
    Console(file=wide, width=200).print(table)
    assert _printed(table, 200) == wide.getvalue()


def test_fit_wraps_long_text_but_never_short_cells() -> None:
    table = Table()
    table.add_column("name", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column("summary")
    table.add_row("ndcg", "0.1234 ▲", "a long summary " * 10)
    text = _printed(table, 50)
    assert "0.1234 ▲" in text and "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 50
