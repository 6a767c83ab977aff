"""Integers no 64-bit type holds, wherever a number is given: a measure's cutoff, ``--depth``
and the other options of an evaluation, a ``--k`` sweep, a stored evaluation's id on the
command line and in the web app. Each is a range error (as ``P@-1`` is) or "not found",
never an ``OverflowError`` traceback or a 500."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import InputError, MeasureError
from ragmeter.measures import MAX_CUTOFF, MAX_DEPTH, parse_measures

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
RUN, QRELS = EXAMPLES / "run_bm25.txt", EXAMPLES / "qrels.txt"
HUGE = "99999999999999999999999"  # more than any 64-bit integer holds

runner = CliRunner()


def _evaluate(*args: str) -> tuple[int, str]:
    done = runner.invoke(app, ["evaluate", str(RUN), "--qrels", str(QRELS), *args])
    return done.exit_code, done.stderr


@pytest.mark.parametrize("name", [f"ndcg@{HUGE}", f"P@{HUGE}.0", f"recall@{MAX_CUTOFF + 1}"])
def test_a_huge_cutoff_is_a_range_error(name: str) -> None:
    with pytest.raises(MeasureError, match=f"cutoff must be ≤ {MAX_CUTOFF}"):
        parse_measures([name])
    code, err = _evaluate("-m", name)
    assert code == 2 and "cutoff must be ≤" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert parse_measures([f"ndcg@{MAX_CUTOFF}"])[0].k == MAX_CUTOFF  # the largest is read


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--depth", HUGE, "≤"),
        ("--depth", "-1", "≥ 1"),
        ("--depth", "0", "≥ 1"),
        ("--pool-depth", HUGE, "≤"),
        ("--default-k", HUGE, "≤"),
        ("--default-k", "0", "≥ 1"),
        ("--rel-level", HUGE, "≤"),
        ("--k", f"1:{HUGE}", "≤"),
        ("--k", HUGE, "≤"),
        ("--k", "1:10000000", "cutoffs"),
    ],
)
def test_huge_and_negative_options_are_range_errors(option: str, value: str, words: str) -> None:
    measure = ["-m", "ndcg"] if option == "--k" else []
    code, err = _evaluate(option, value, *measure)
    assert code == 2, err
    assert err.startswith("ragmeter: error:") and words in err, err
    assert len(err.strip().splitlines()) == 1


def test_the_library_checks_the_same_ranges() -> None:
    run = ragmeter.read_run(RUN)
    qrels = ragmeter.read_qrels(QRELS)
    for option in ("depth", "pool_depth", "default_k"):
        with pytest.raises(InputError, match=f"field '{option}'"):
            ragmeter.evaluate(run, qrels, ["ndcg@10"], **{option: int(HUGE)})
    with pytest.raises(InputError, match="field 'depth'"):
        ragmeter.evaluate(run, qrels, ["ndcg@10"], depth=-1)
    full = ragmeter.evaluate(run, qrels, ["ndcg@10"]).run.means()
    assert ragmeter.evaluate(run, qrels, ["ndcg@10"], depth=MAX_DEPTH).run.means() == full


def test_history_show_of_a_huge_id_is_not_found(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    store = f"sqlite:///{tmp_path / 'h.db'}"
    code, err = _evaluate("-m", "mrr", "--store", store)
    assert code == 0, err
    for command in ("show", "delete"):
        done = runner.invoke(app, ["history", command, HUGE, "--store", store])
        assert done.exit_code == 2, done.output
        assert f"no evaluation with id or name '{HUGE}'" in done.stderr
    done = runner.invoke(app, ["history", "compare", "1", HUGE, "--store", store])
    assert done.exit_code == 2 and "Traceback" not in done.output


def test_web_evaluation_of_a_huge_id_is_404(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from ragmeter.store import save_evaluation
    from ragmeter.web.app import create_app
    from ragmeter.web.config import build_config

    evaluation = ragmeter.evaluate(ragmeter.read_run(RUN), ragmeter.read_qrels(QRELS), ["mrr"])
    store = tmp_path / "store.db"
    save_evaluation(evaluation, url=str(store))
    config = build_config(qrels=[QRELS], runs=[RUN], store=str(store), labels=tmp_path / "l.db")
    client = TestClient(create_app(config))
    for path in (f"/evaluations/{HUGE}", f"/evaluations/-{HUGE}", f"/evaluations/{HUGE}/report"):
        assert client.get(path).status_code == 404
    assert client.get("/evaluations/1").status_code == 200  # the connection still serves
