"""``ragmeter demo`` end to end on the shipped example: its files, and numbers for every
metric family and every system."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

SYSTEMS = ["bm25", "dense", "hybrid", "hybrid+mmr"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("bm25s", reason="the demo needs the baselines extra (bm25s)")
    embeddings = pytest.importorskip(
        "ragmeter.pipeline.embeddings", reason="the demo needs the models extra (MiniLM)"
    )
    try:
        embeddings.MiniLMEncoder().encode(["probe"])
    except Exception as exc:  # the model packages are not installed
        pytest.skip(f"MiniLM unavailable: {exc}")
    from rich import progress

    from ragmeter.cli import app

    bars: list[progress.Task] = []

    class Recorded(progress.Progress):
        """The progress bar, its tasks kept for the test."""

        def __exit__(self, *exc: Any) -> None:
            bars.extend(self.tasks)
            super().__exit__(*exc)

    out = tmp_path_factory.mktemp("demo") / "out"
    store = tmp_path_factory.mktemp("store") / "absent.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(progress, "Progress", Recorded)
        result = CliRunner().invoke(
            app, ["demo", "--out", str(out)], env={"RAGMETER_STORE": f"sqlite:///{store}"}
        )
    assert result.exit_code == 0, result.output
    return {"out": out, "output": result.output, "store": store, "bars": bars}


def test_the_progress_bar_ends_full(demo: dict[str, Any]) -> None:
    (bar,) = demo["bars"]
    # 13 labelled steps: 8 in run_demo (the chunkings among them) and 5 in retrieve_all
    assert bar.total is not None and bar.completed == bar.total == 13


def test_writes_runs_results_and_comparison(demo: dict[str, Any]) -> None:
    from ragmeter.io.readers import read_run

    out: Path = demo["out"]
    for name in ("bm25", "dense", "hybrid", "hybrid_mmr"):
        run = read_run(out / "runs" / f"{name}.txt")
        assert run.n_queries == 30
    assert (out / "results.json").is_file()
    assert (
        "| measure" in (out / "comparison.md").read_text()
        or "|" in (out / "comparison.md").read_text()
    )


def test_every_family_has_numbers_for_every_system(demo: dict[str, Any]) -> None:
    doc = json.loads((demo["out"] / "results.json").read_text())
    runs = {r["name"]: r for r in doc["evaluation"]["runs"]}
    assert list(runs) == SYSTEMS
    families = doc["families"]
    assert {"classical", "set-based", "coverage", "answers"} <= set(families)
    for family in ("classical", "set-based", "coverage"):
        assert families[family]
        for name in SYSTEMS:
            for measure in families[family]:
                mean = runs[name]["metrics"][measure]["mean"]
                assert mean is not None and math.isfinite(mean), (family, name, measure)
    answers = doc["answers"]["overall"]["metrics"]
    for metric in ("accuracy", "precision", "recall", "f1", "context_coverage", "token_f1"):
        assert answers[metric] is not None
    assert set(doc["answers"]["context_coverage_by_system"]) == set(SYSTEMS)
    assert runs["bm25"]["metrics"]["answer_coverage"]["mean"] is not None
    differences = doc["comparison"]["differences"]
    assert {d["run"] for d in differences} == set(SYSTEMS) - {"bm25"}


def test_prints_a_table_per_family_and_the_integrations(demo: dict[str, Any]) -> None:
    output = demo["output"]
    for title in ("classical", "set-based", "coverage", "answers"):
        assert title in output
    assert "store:" in output and "not saved" in output
    assert not demo["store"].exists()  # an absent default store is never created
    assert "HTML report" in output


def test_the_pools_are_fully_graded(demo: dict[str, Any]) -> None:
    """Every passage in the top 20 of each system carries a grade (the data's promise)."""
    from ragmeter.data import example_path
    from ragmeter.io.readers import read_qrels, read_run

    graded = read_qrels(example_path("qrels.txt")).to_dict()
    for name in ("bm25", "dense", "hybrid", "hybrid_mmr"):
        ranked = read_run(demo["out"] / "runs" / f"{name}.txt").ranked()
        unjudged = [(q, d) for q, docs in ranked.items() for d in docs[:20] if d not in graded[q]]
        assert unjudged == [], name


def _small_systems() -> tuple[Any, Any]:
    """The example with two hand-made systems (no model needed): the qrels' own ranking
    and its reverse."""
    from ragmeter import Run
    from ragmeter.workflows.demo import Systems, load_example

    data = load_example()
    best = {
        q: sorted(labels, key=lambda d: (-labels[d], d))
        for q, labels in data.qrels.to_dict().items()
    }
    good = Run.from_lists(best, name="bm25")
    bad = Run.from_lists({q: docs[::-1] for q, docs in best.items()}, name="reverse")
    return data, Systems(runs={"bm25": good, "reverse": bad}, pools={"bm25": good, "reverse": bad})


def test_saves_into_an_existing_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = pytest.importorskip("ragmeter.store", reason="the store needs sqlalchemy")
    pytest.importorskip("sqlalchemy", reason="the store needs sqlalchemy")
    from ragmeter.workflows.demo import evaluate_all, save_to_store

    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("RAGMETER_STORE", url)
    data, systems = _small_systems()
    evaluation = evaluate_all(data, systems)
    assert "not saved" in save_to_store(evaluation, data, systems)  # no store yet
    assert not (tmp_path / "store.db").exists()
    store.open_store(url).close()  # create it
    message = save_to_store(evaluation, data, systems)
    assert message.startswith("store: saved as evaluation"), message
    with store.open_store(url) as opened:
        assert len(opened.list_evaluations()) == 1


def test_family_tables_mark_the_verdicts() -> None:
    from rich.console import Console

    from ragmeter.commands.demo import family_table
    from ragmeter.workflows.demo import FAMILIES, compare_all, evaluate_all

    data, systems = _small_systems()
    evaluation = evaluate_all(data, systems)
    comparison = compare_all(evaluation)
    console = Console(width=200, record=True)
    console.print(family_table("classical", FAMILIES["classical"], evaluation, comparison))
    text = console.export_text()
    # the reversed ranking is significantly worse on nDCG over 30 queries
    assert "reverse" in text and "▼" in text


def test_evaluate_and_sweep_agree_on_the_example(demo: dict[str, Any], tmp_path: Path) -> None:
    """The "one name, one number" case of the example: ``evaluate --k 10 -m alpha_ndcg@10``
    and the same measures swept over ``--k 1:20`` give the same value at K = 10, for the
    coverage family and for a classical measure with parameters."""
    from ragmeter.cli import app
    from ragmeter.data import example_path

    run = str(demo["out"] / "runs" / "bm25.txt")
    common = [
        "evaluate", run, "--qrels", str(example_path("qrels.txt")),
        "--judgments", str(example_path("judgments.jsonl")),
    ]  # fmt: skip
    single = CliRunner().invoke(
        app,
        [*common, "--k", "10", "-m", "alpha_ndcg@10", "-m", "coverage",
         "-m", "ndcg@10(rel_level=3)", "-f", "json"],
    )  # fmt: skip
    assert single.exit_code == 0, single.output
    means = {k: v["mean"] for k, v in json.loads(single.stdout)["runs"][0]["metrics"].items()}
    # --k 10 writes its K into the name of the measure it fills in
    assert set(means) == {"alpha_ndcg@10", "coverage@10", "ndcg@10(rel_level=3)"}
    curves = tmp_path / "c.json"
    swept = CliRunner().invoke(
        app,
        [*common, "--k", "1:20", "-m", "alpha_ndcg", "-m", "coverage",
         "-m", "ndcg(rel_level=3)", "--curves", str(curves)],
    )  # fmt: skip
    assert swept.exit_code == 0, swept.output
    runs = json.loads(curves.read_text())["runs"]
    at10 = {m: next(p["mean"] for p in pts if p["k"] == 10) for m, pts in runs["bm25.txt"].items()}
    assert at10["alpha_ndcg"] == means["alpha_ndcg@10"]
    assert at10["coverage"] == means["coverage@10"]
    assert at10["ndcg(rel_level=3)"] == means["ndcg@10(rel_level=3)"]
    # docs/cutoffs.md quotes these figures to explain the rule: they must be what the code prints
    doc = Path(__file__).resolve().parent.parent / "docs" / "cutoffs.md"
    readme = doc.read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(): line
        for line in readme.splitlines()
        if line.startswith("| `") and "@10" in line.split("|")[1]
    }
    for name, row in [
        ("`alpha_ndcg@10`", "alpha_ndcg@10"),
        ("`coverage@10` (`-m coverage --k 10`)", "coverage@10"),
        ("`ndcg@10(rel_level=3)`", "ndcg@10(rel_level=3)"),
    ]:
        cells = [c.strip() for c in rows[name].split("|")[2:4]]
        assert cells == [f"{means[row]:.4f}"] * 2, (name, cells)


def test_prints_three_chunkings_on_span_labels(demo: dict[str, Any]) -> None:
    """The example's documents in 200-, 400- and 800-token chunks, side by side on the same
    span labels: longer chunks cover more evidence and are less precise."""
    from ragmeter.workflows.demo import chunkings_side_by_side

    evaluation, comparison = chunkings_side_by_side()
    means = {run.name: run.means() for run in evaluation.runs}
    assert list(means) == ["200 tokens", "400 tokens", "800 tokens"]
    recall = [means[n]["span_recall@5"] for n in means]
    precision = [means[n]["span_precision@5"] for n in means]
    assert recall == sorted(recall) and precision == sorted(precision, reverse=True)
    assert comparison.baseline == "200 tokens"
    assert "chunkings of the example's documents" in demo["output"]
    assert (demo["out"] / "chunkings" / "chunks-400.jsonl").is_file()


@pytest.mark.parametrize("where", ["a_file/x", "a_file"])
def test_an_unwritable_out_fails_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """--out under (or on) a file: the error comes first, not after the demo's work."""
    from ragmeter.cli import app
    from ragmeter.commands import demo as demo_module

    (tmp_path / "a_file").write_text("not a folder")

    def no_work() -> None:
        raise AssertionError("the demo started working")

    monkeypatch.setattr(demo_module, "load_example", no_work)
    out = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / where), "--no-store"])
    assert out.exit_code == 2, out.output
    assert f"cannot write {tmp_path / where}" in " ".join(out.output.split())
    assert (tmp_path / "a_file").read_text() == "not a folder"
