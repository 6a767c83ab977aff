"""``--save`` on evaluate and compare, and ``ragmeter history`` list / show / compare / delete,
end to end on the shipped example runs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

pytest.importorskip("sqlalchemy", reason="the store extra (sqlalchemy) is needed")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BM25, DENSE = EXAMPLES / "run_bm25.txt", EXAMPLES / "run_dense.txt"
QRELS = EXAMPLES / "qrels.txt"
FAST = ("--bootstrap", "500", "--permutations", "2000")

runner = CliRunner()


def _invoke(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _history(store: str) -> list[dict[str, object]]:
    code, out, err = _invoke("history", "--store", store, "-f", "json")
    assert code == 0, err
    evaluations: list[dict[str, object]] = json.loads(out)["evaluations"]
    return evaluations


def _library(run: Path, measures: list[str]) -> object:
    import ragmeter

    return ragmeter.evaluate(ragmeter.read_run(run), ragmeter.read_qrels(QRELS), measures)


def test_evaluate_save_then_list_and_show(store_url: str) -> None:
    code, out, err = _invoke(
        "evaluate", BM25, "-q", QRELS, "-m", "ndcg@10", "-m", "map", "-f", "json",
        "--store", store_url, "--name", "bm25 wk46",
    )  # fmt: skip
    assert code == 0, err
    json.loads(out)  # stdout holds only the results; the note goes to stderr
    assert "saved evaluation #1 'bm25 wk46'" in err

    [entry] = _history(store_url)
    assert entry["id"] == 1 and entry["name"] == "bm25 wk46" and entry["command"] == "evaluate"
    assert entry["qrels_hash"] == _sha(QRELS)
    [run] = entry["runs"]  # type: ignore[misc]
    assert run["content_hash"] == _sha(BM25)
    expected = _library(BM25, ["ndcg@10", "map"]).run.means()  # type: ignore[attr-defined]
    assert run["means"] == pytest.approx(expected)
    params = entry["parameters"]
    assert params["measures"] == ["ndcg@10", "map"] and params["rel_level"] == 1  # type: ignore[index]
    assert params["inputs"]["qrels"]["sha256"] == _sha(QRELS)  # type: ignore[index]

    code, out, err = _invoke("history", "show", "bm25 wk46", "--store", store_url, "-f", "json",
                             "--per-query")  # fmt: skip
    assert code == 0, err
    shown = json.loads(out)
    library = _library(BM25, ["ndcg@10", "map"]).run  # type: ignore[attr-defined]
    assert shown["per_query"][library.name] == library.per_query()

    code, out, err = _invoke("history", "--store", store_url)
    assert code == 0, err
    assert "bm25 wk46" in out and "run_bm25.txt" in out and "ndcg@10" in out


def test_save_to_the_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGMETER_STORE", str(tmp_path / "env.db"))
    code, _, err = _invoke("evaluate", BM25, "-q", QRELS, "-m", "mrr", "--save")
    assert code == 0, err
    assert f"sqlite:///{tmp_path / 'env.db'}" in err
    code, out, err = _invoke("history")
    assert code == 0, err
    assert "run_bm25.txt" in out


def test_compare_save_and_history_compare_of_its_runs(tmp_path: Path) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    store = f"sqlite:///{tmp_path / 'h.db'}"
    code, _, err = _invoke(
        "compare", BM25, DENSE, "-q", QRELS, "-m", "ndcg@10", "--test", "t", *FAST,
        "--save", "--store", store,
    )  # fmt: skip
    assert code == 0, err
    [entry] = _history(store)
    assert entry["command"] == "compare"
    assert [r["name"] for r in entry["runs"]] == ["run_bm25.txt", "run_dense.txt"]  # type: ignore[attr-defined]
    assert entry["parameters"]["test"] == "t"  # type: ignore[index]

    code, _, err = _invoke("history", "compare", "1", "1", "--store", store)
    assert code == 2 and "holds 2 runs" in err and "--run NAME" in err

    code, out, err = _invoke(
        "history", "compare", "1:run_bm25.txt", "1:run_dense.txt", "--store", store,
        "--test", "t", "-f", "json", *FAST,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["baseline"] == "#1 run_bm25.txt"
    [d] = doc["differences"]
    a = _library(BM25, ["ndcg@10"]).run.column("ndcg@10")  # type: ignore[attr-defined]
    b = _library(DENSE, ["ndcg@10"]).run.column("ndcg@10")  # type: ignore[attr-defined]
    assert d["difference"] == pytest.approx(float(np.mean(b - a)))
    assert d["p_value"] == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue)
    assert d["n"] == 12


def test_history_compare_this_week_against_last(store_url: str, tmp_path: Path) -> None:
    # last week's hybrid on half the queries, this week's on all of them
    lines = BM25.read_text().splitlines()
    queries = sorted({line.split()[0] for line in lines})
    half = set(queries[: len(queries) // 2])
    last_week = tmp_path / "hybrid.txt"
    last_week.write_text("\n".join(x for x in lines if x.split()[0] in half) + "\n")
    this_week = tmp_path / "dense" / "hybrid.txt"
    this_week.parent.mkdir()
    this_week.write_bytes(DENSE.read_bytes())
    for run, name in ((last_week, "hybrid wk46"), (this_week, "hybrid wk47")):
        code, _, err = _invoke(
            "evaluate", run, "-q", QRELS, "-m", "ndcg@10", "-m", "P@5", "--missing", "skip",
            "--store", store_url, "--name", name,
        )  # fmt: skip
        assert code == 0, err

    code, out, err = _invoke(
        "history", "compare", "hybrid wk46", "hybrid wk47", "-m", "ndcg@10", "--store",
        store_url, "-f", "json", *FAST,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["runs"] == ["#1 hybrid.txt", "#2 hybrid.txt"]
    [d] = doc["differences"]
    # paired on the queries both evaluated: last week's half
    import ragmeter

    qrels = ragmeter.read_qrels(QRELS)
    old = ragmeter.evaluate(ragmeter.read_run(last_week), qrels, ["ndcg@10"], missing="skip").run
    new = ragmeter.evaluate(ragmeter.read_run(this_week), qrels, ["ndcg@10"]).run
    shared = sorted(set(old.query_ids) & set(new.query_ids))
    assert d["n"] == len(shared) == len(half)
    x = dict(zip(old.query_ids, old.column("ndcg@10"), strict=True))
    y = dict(zip(new.query_ids, new.column("ndcg@10"), strict=True))
    assert d["difference"] == pytest.approx(float(np.mean([y[q] - x[q] for q in shared])))
    assert d["n_dropped"] == len(queries) - len(half)

    code, out, err = _invoke("history", "compare", "1", "2", "--store", store_url, *FAST)
    assert code == 0, err
    assert "baseline #1 hybrid.txt" in out and "precision@5" in out


def test_history_compare_warns_when_the_qrels_differ(tmp_path: Path) -> None:
    store = str(tmp_path / "h.db")  # a plain path is a SQLite file
    other_qrels = tmp_path / "qrels.txt"
    other_qrels.write_text("\n".join(QRELS.read_text().splitlines()[1:]) + "\n")
    for qrels in (QRELS, other_qrels):
        code, _, err = _invoke("evaluate", BM25, "-q", qrels, "-m", "mrr", "--store", store)
        assert code == 0, err
    code, out, err = _invoke("history", "compare", "1", "2", "--store", store, *FAST)
    assert code == 0, err
    assert "qrels differ" in out  # the table prints its warnings under it
    code, _, err = _invoke("history", "compare", "1", "2", "--store", store, "-f", "json", *FAST)
    assert code == 0 and "warning: the qrels differ" in err


def test_errors_and_delete(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'h.db'}"
    code, out, err = _invoke("history", "--store", store)
    assert code == 0 and "no saved evaluations" in out
    assert not (tmp_path / "h.db").exists()  # listing creates no store
    code, _, err = _invoke("history", "show", "nightly", "--store", store)
    assert code == 2 and "no store at" in err
    code, _, err = _invoke("evaluate", BM25, "-q", QRELS, "-m", "mrr", "--store", store)
    assert code == 0, err
    code, _, err = _invoke("history", "show", "nightly", "--store", store)
    assert code == 2 and "no evaluation with id or name 'nightly'" in err
    code, out, err = _invoke("history", "--store", store, "show", "1")
    assert code == 0, err
    assert "evaluation #1" in out and _sha(QRELS) in out
    code, _, err = _invoke("history", "delete", "1", "--store", store)
    assert code == 0 and "deleted evaluation #1" in err
    assert _history(store) == []
    code, _, err = _invoke("history", "--store", "postgresql://nobody@127.0.0.1:1/x")
    assert code == 2 and "cannot open the store" in err


def test_history_compare_warns_when_the_settings_differ(tmp_path: Path) -> None:
    store = str(tmp_path / "h.db")
    for level in ("1", "2"):
        code, _, err = _invoke(
            "evaluate", BM25, "-q", QRELS, "-m", "mrr", "--rel-level", level, "--store", store
        )
        assert code == 0, err
    code, _, err = _invoke("history", "compare", "1", "2", "--store", store, "-f", "json", *FAST)
    assert code == 0, err
    assert "other settings: rel_level 1 → 2" in err
