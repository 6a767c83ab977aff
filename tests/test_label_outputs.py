"""The labels' provenance in the machine-readable outputs and the other views: ``evaluate``,
``compare`` and ``agreement`` JSON carry a ``labels`` object (what
:func:`ragmeter.analysis.calibration.label_description` says), sweeps too; labels without a
sidecar are of unknown origin — never claimed human — and no existing key changes."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.analysis.calibration import describe_labels, label_description
from ragmeter.cli import app
from test_calibration import label_files, run_file, save

runner = CliRunner()
LLM_LINE = "LLM labels (umbrela, model qwen2.5-7b): 8 of 8 pairs"


def _json(args: list[str]) -> dict[str, Any]:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_the_description_of_llm_labels(tmp_path: Path) -> None:
    _, llm = label_files(tmp_path)
    described = label_description(llm)
    assert described.lines == tuple(describe_labels(llm)) == (LLM_LINE,)
    as_json = described.to_json()
    assert as_json["provenance"] == LLM_LINE
    assert as_json["llm"] is True
    assert as_json["n_pairs"] == 8 and as_json["counts"] == {"judge": 8}
    assert as_json["sources"]["judge"]["model"] == "qwen2.5-7b"
    assert as_json["calibration"] is None


def test_labels_without_a_sidecar_are_of_unknown_origin(tmp_path: Path) -> None:
    human, _ = label_files(tmp_path)
    as_json = label_description(human).to_json()
    assert as_json["provenance"] == "labels of unknown origin"
    assert as_json["llm"] is None  # unknown, not "no"
    assert as_json["lines"] == [] and as_json["sources"] == {}


def test_the_calibration_figures_when_one_applies(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    figures = label_description(llm, calibration=cal).to_json()["calibration"]
    assert figures["applies"] is True and figures["file"] == "cal.json"
    assert figures["n_pairs"] == 8
    # κ by hand from PAIRS: 5 of 8 agree (p_o = 0.625); grades 0..3 number 2, 2, 2, 2 in
    # the human labels and 1, 3, 2, 2 in the LLM's: p_e = (2·1 + 2·3 + 2·2 + 2·2) / 64 = 0.25
    assert abs(figures["kappa"] - (0.625 - 0.25) / (1 - 0.25)) < 1e-12


def test_evaluate_json_carries_the_labels(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    args = ["evaluate", str(run), "-m", "ndcg@5", "-f", "json", "--qrels"]
    on_llm = _json([*args, str(llm)])
    assert on_llm["labels"]["provenance"] == LLM_LINE and on_llm["labels"]["llm"] is True
    on_human = _json([*args, str(human)])
    assert on_human["labels"]["provenance"] == "labels of unknown origin"
    # the other keys are as before
    assert set(on_llm) == {"runs", "warnings", "labels"}


def test_the_sweep_json_and_curves_carry_the_labels(tmp_path: Path) -> None:
    _, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    curves = tmp_path / "curves.json"
    out = _json(
        ["evaluate", str(run), "--qrels", str(llm), "-m", "ndcg", "--k", "1:3", "-f", "json",
         "--curves", str(curves)]
    )  # fmt: skip
    assert out["labels"]["provenance"] == LLM_LINE
    assert json.loads(curves.read_text())["labels"]["provenance"] == LLM_LINE
    table = runner.invoke(
        app, ["evaluate", str(run), "--qrels", str(llm), "-m", "ndcg", "--k", "1:3"]
    )
    assert f"labels: {LLM_LINE}" in table.stderr


def test_compare_json_carries_the_labels(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    args = ["compare", str(run), str(run), "--qrels", str(llm), "-m", "ndcg@5", "-f", "json"]
    out = _json([*args, "--calibration", str(cal)])
    assert out["labels"]["provenance"] == LLM_LINE
    assert out["labels"]["calibration"]["applies"] is True
    assert "baseline" in out and "differences" in out
    pairs = _json([*args, "--all-pairs"])
    assert pairs["labels"]["llm"] is True and "pairs" in pairs


def test_check_json_carries_the_labels(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    args = ["check", str(run), "--baseline", str(run), "--fail-if", "ndcg@5 drop > 0.1"]
    out = _json([*args, "--qrels", str(llm), "-f", "json"])
    assert out["labels"]["provenance"] == LLM_LINE and "rules" in out
    plain = _json([*args, "--qrels", str(human), "-f", "json"])
    assert plain["labels"]["provenance"] == "labels of unknown origin"


def test_agreement_json_carries_both_label_files(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    out = _json(["agreement", str(human), str(llm), "-f", "json"])
    assert out["labels"]["reference"]["provenance"] == "labels of unknown origin"
    assert out["labels"]["compared"]["provenance"] == LLM_LINE
    assert "kappa" in out


# -- the store ------------------------------------------------------------------------------


def _labelled_evaluation(labels: dict[str, Any] | None) -> Any:
    import ragmeter

    run = ragmeter.Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="r")
    qrels = ragmeter.Qrels.from_dict({"q1": {"d1": 1}})
    return ragmeter.evaluate(run, qrels, ["mrr"]).with_labels(labels)


def test_the_store_records_the_labels(store_url: str, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    from ragmeter.store import open_store

    _, llm = label_files(tmp_path)
    labels = label_description(llm).to_json()
    with open_store(store_url) as store:
        described = store.save_evaluation(_labelled_evaluation(labels), git=None)
        plain = store.save_evaluation(_labelled_evaluation(None), git=None)
        assert store.get_record(described).labels == labels
        assert store.load_evaluation(described).evaluation.labels == labels
        assert store.get_record(plain).labels is None
        assert store.get_record(described).to_dict()["labels"]["llm"] is True


def test_a_version_3_store_keeps_its_evaluations_without_labels(store_url: str) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from ragmeter.store import open_store
    from ragmeter.store import schema as store_schema
    from test_store import _migrate_to

    _migrate_to(store_url, 3)
    engine = sa.create_engine(store_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        eid = conn.execute(
            sa.text(
                "INSERT INTO evaluations (name, created_at, command, parameters, measures, "
                "warnings, ragmeter_version) VALUES ('old', :t, 'evaluate', '{}', '[]', '[]', "
                "'0.1') RETURNING id"
            ),
            {"t": datetime(2024, 1, 1, tzinfo=UTC)},
        ).scalar_one()
    engine.dispose()
    with open_store(store_url) as store:
        assert store.schema_version() == store_schema.LATEST_VERSION
        record = store.get_record(int(eid))
        assert record.labels is None and record.name == "old"


def test_history_show_prints_the_recorded_labels(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    human, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    db = str(tmp_path / "store.db")
    for qrels, name in ((llm, "on-llm"), (human, "on-human")):
        saved = runner.invoke(
            app, ["evaluate", str(run), "--qrels", str(qrels), "-m", "ndcg@5", "--store", db,
                  "--name", name],
        )  # fmt: skip
        assert saved.exit_code == 0, saved.output
    shown = runner.invoke(app, ["history", "show", "on-llm", "--store", db])
    assert shown.exit_code == 0, shown.output
    assert f"labels: {LLM_LINE}" in shown.stdout
    as_json = _json(["history", "show", "on-llm", "--store", db, "-f", "json"])
    assert as_json["labels"]["provenance"] == LLM_LINE
    unknown = runner.invoke(app, ["history", "show", "on-human", "--store", db])
    assert "labels: labels of unknown origin" in unknown.stdout
    assert "LLM" not in unknown.stdout
    compared = runner.invoke(app, ["history", "compare", "on-llm", "on-human", "--store", db])
    assert compared.exit_code == 0, compared.output
    assert f"labels: #1 run.txt: {LLM_LINE}" in compared.stderr
    assert "labels: #2 run.txt: labels of unknown origin" in compared.stderr
    assert "the labels were made by others" in compared.output
    both = _json(["history", "compare", "on-llm", "on-human", "--store", db, "-f", "json"])
    assert both["labels"]["baseline"]["llm"] is True and both["labels"]["candidate"]["llm"] is None


def test_the_web_pages_of_a_saved_evaluation_show_its_labels(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("sqlalchemy")
    from fastapi.testclient import TestClient

    from ragmeter.store import save_evaluation
    from ragmeter.web.app import create_app
    from ragmeter.web.config import build_config
    from webdata import config_kwargs, write_collection

    _, llm = label_files(tmp_path)
    store = str(tmp_path / "store.db")
    saved = save_evaluation(_labelled_evaluation(label_description(llm).to_json()), url=store)
    older = save_evaluation(_labelled_evaluation(None), url=store)
    paths = write_collection(tmp_path / "data")
    config = build_config(**config_kwargs(paths, tmp_path))  # type: ignore[arg-type]
    config.store_url = store
    client: Any = TestClient(create_app(config))
    assert LLM_LINE in client.get(f"/evaluations/{saved.id}").text
    assert "not recorded" in client.get(f"/evaluations/{older.id}").text
    assert "<td>LLM</td>" in client.get("/evaluations").text
    if importlib.util.find_spec("matplotlib") is not None:
        assert LLM_LINE in client.get(f"/evaluations/{saved.id}/report").text


# -- the other views ------------------------------------------------------------------------


def test_diagnose_prints_and_carries_the_labels(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    args = ["diagnose", str(run), "--k", "3", "--grade-map", "0:1,1:3,2:4,3:5", "--qrels"]
    table = runner.invoke(app, [*args, str(llm)])
    assert table.exit_code == 0, table.output
    assert f"labels: {LLM_LINE}" in table.stderr
    out = _json([*args, str(llm), "-f", "json"])
    assert out["labels"]["provenance"] == LLM_LINE and "queries" in out
    plain = runner.invoke(app, [*args, str(human)])
    assert "labels:" not in plain.stderr  # no sidecar: nothing claimed


def test_the_demo_says_once_that_its_labels_are_human() -> None:
    from ragmeter.data import example_path
    from ragmeter.workflows.demo import evaluate_all, example_labels
    from test_demo import _small_systems

    pairs = len(example_path("qrels.txt").read_text().splitlines())
    data, systems = _small_systems()
    line = f"human labels: {pairs:,} of {pairs:,} pairs"
    assert example_labels(data).provenance == line
    labels = evaluate_all(data, systems).labels
    assert labels is not None and labels["llm"] is False and labels["provenance"] == line


def test_the_all_pairs_page_captions_the_labels(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    args = ["compare", str(run), str(run), "-m", "ndcg@5", "--all-pairs", "-f", "html"]
    page = runner.invoke(app, [*args, "--qrels", str(llm)])
    assert page.exit_code == 0, page.output
    assert f'<p class="labels">labels: {LLM_LINE}</p>' in page.stdout
    plain = runner.invoke(app, [*args, "--qrels", str(human)])
    assert 'class="labels"' not in plain.stdout


class _Reporter:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def section(self, title: str) -> None:
        self.lines.append(f"== {title}")

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_the_pytest_gate_says_its_numbers_are_on_llm_labels(tmp_path: Path) -> None:
    import ragmeter.pytest as plugin
    from ragmeter.analysis.gate import check_runs

    human, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    on_llm = check_runs(run, run, llm, ["ndcg@5 drop > 0.1"])
    assert on_llm.label_lines == [LLM_LINE]
    assert on_llm.describe().splitlines()[-1] == f"  labels: {LLM_LINE}"
    on_human = check_runs(run, run, human, ["ndcg@5 drop > 0.1"])
    assert on_human.label_lines == [] and "labels" not in on_human.describe()

    config = SimpleNamespace(stash={plugin._RESULTS: [on_llm]})
    reporter = _Reporter()
    plugin.pytest_terminal_summary(reporter, config)  # type: ignore[arg-type]
    assert f"  labels: {LLM_LINE}" in reporter.lines


# -- label files ragmeter writes ------------------------------------------------------------


def test_offline_qrels_carry_the_offline_judge_sidecar(tmp_path: Path) -> None:
    from ragmeter.io.provenance import read_provenance
    from ragmeter.judges.api import label_source
    from ragmeter.judges.offline import OfflineJudge, write_offline_qrels
    from ragmeter.judges.tasks import make_task

    path = tmp_path / "offline.txt"
    judge = OfflineJudge("relevance", thresholds=[0.2, 0.4, 0.6, 0.8])
    write_offline_qrels({"q1": {"d1": 3}}, path, judge=judge)
    provenance = read_provenance(path)
    assert provenance is not None and provenance.has_llm
    source = provenance.source_of("q1", "d1")
    assert source is not None and source.model == judge.model and "weak proxy" in str(source.note)
    assert source.prompt_id == "offline-relevance"  # it reads no LLM prompt
    # `ragmeter judge relevance --offline` writes the same source
    assert label_source(make_task("relevance"), judge) == source


def test_crux_qrels_carry_the_ratings_sidecar(tmp_path: Path) -> None:
    from ragmeter.core.provenance import LabelProvenance
    from ragmeter.io.provenance import provenance_path, read_provenance, write_provenance
    from test_calibration import UMBRELA

    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text(
        '{"query_id": "q1", "doc_id": "d1", "ratings": [4, 0]}\n'
        '{"query_id": "q1", "doc_id": "d2", "ratings": [0, 5]}\n'
    )
    graded, diversity = tmp_path / "graded.txt", tmp_path / "diversity.txt"
    args = ["crux", "build-qrels", str(judgments), "--out-graded", str(graded)]
    args += ["--out-diversity", str(diversity)]
    assert runner.invoke(app, args).exit_code == 0
    assert not provenance_path(graded).exists()  # ratings of unknown origin: nothing claimed
    write_provenance(judgments, LabelProvenance.single(UMBRELA), rows="records")
    assert runner.invoke(app, args).exit_code == 0
    for derived in (graded, diversity):
        assert read_provenance(derived) == LabelProvenance.single(UMBRELA)
    assert label_description(graded).provenance == (
        "LLM labels (umbrela, model qwen2.5-7b): 2 of 2 pairs"
    )


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(makers=st.lists(st.sampled_from(["human", "judge", None]), min_size=1, max_size=12))
def test_the_description_counts_every_judged_pair_once(
    tmp_path: Path, makers: list[str | None]
) -> None:
    """Whatever made each pair: the counts add up to the judged pairs, ``llm`` says whether a
    judge made one, and the lines are :func:`describe_labels`'."""
    from ragmeter.core.provenance import LabelProvenance, human_source
    from ragmeter.io.provenance import write_provenance
    from test_calibration import UMBRELA

    qrels = tmp_path / "mixed.txt"
    qrels.write_text("".join(f"q{i % 3} 0 d{i} 1\n" for i in range(len(makers))))
    pairs = {(f"q{i % 3}", f"d{i}"): m for i, m in enumerate(makers) if m is not None}
    sources = {"human": human_source(), "judge": UMBRELA}
    write_provenance(qrels, LabelProvenance(sources=sources, pairs=pairs))
    described = label_description(qrels).to_json()
    assert sum(described["counts"].values()) == described["n_pairs"] == len(makers)
    assert described["counts"].get("unknown", 0) == makers.count(None)
    # a judge made one; else unknown when a maker is unknown; else people made them all
    assert described["llm"] is (True if "judge" in makers else None if None in makers else False)
    assert described["lines"] == describe_labels(qrels)
