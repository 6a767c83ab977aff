"""``ragmeter serve --queue``: the app shows exactly the queue's queries and passages, in the
queue's order; the labels it exports carry human provenance (the annotator)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from ragmeter.io.label_queue import QueueEntry, write_label_queue
from ragmeter.io.provenance import read_provenance
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from test_web import Browser
from webdata import write_collection

QUEUE = [
    QueueEntry("q2", ("d6", "d5"), "active", 0.5),
    QueueEntry("q1", ("d3", "d9", "d1"), "active", 0.25),
]


@pytest.fixture
def app(tmp_path: Path) -> Any:
    paths = write_collection(tmp_path / "data")
    queue = tmp_path / "queue.jsonl"
    write_label_queue(QUEUE, queue)
    config = build_config(
        queries=paths["queries"],
        corpus=paths["corpus"],
        runs=[paths["run_a"]],
        qrels=[paths["qrels"]],
        queue=queue,
        labels=tmp_path / "labels.db",
        export_dir=tmp_path / "exports",
    )
    return create_app(config)


def test_queue_sets_queries_and_passages_in_order(app: Any) -> None:
    coll = app.state.config.collection
    assert coll.query_ids == ["q2", "q1"]  # the queue's order, not the queries file's
    assert coll.pools == {"q2": ["d6", "d5"], "q1": ["d3", "d9", "d1"]}  # nothing pooled
    browser = Browser(app)
    index = browser.client.get("/").text
    assert index.index("/label/q2") < index.index("/label/q1")
    page = browser.client.get("/label/q1").text
    shown = [d for d in ("d3", "d9", "d1", "d2", "d4") if f'data-doc="{d}"' in page]
    assert shown == ["d3", "d9", "d1"]
    assert page.index('data-doc="d3"') < page.index('data-doc="d9"') < page.index('data-doc="d1"')
    # a passage the queue does not list cannot be labelled
    assert browser.grade("q1", "d2", 3).status_code == 400


def test_exports_carry_the_annotator(app: Any, tmp_path: Path) -> None:
    alice, bob = Browser(app, "alice"), Browser(app, "bob")
    alice.grade("q1", "d1", 4)
    alice.grade("q2", "d6", 2)
    bob.grade("q1", "d1", 5)  # the latest label of q1/d1
    bob.grade("q2", "d5", 1)
    response = alice.post_form("/export", {"kind": "qrels", "filename": "mine.txt"})
    assert response.status_code == 303
    prov = read_provenance(tmp_path / "exports" / "mine.txt")
    assert prov is not None
    by = {p: prov.source_of(*p) for p in [("q1", "d1"), ("q2", "d6"), ("q2", "d5")]}
    assert {p: (s.kind, s.annotator) for p, s in by.items() if s} == {
        ("q1", "d1"): ("human", "bob"),
        ("q2", "d6"): ("human", "alice"),
        ("q2", "d5"): ("human", "bob"),
    }
    assert not prov.has_llm and prov.verified  # bound to the file written beside it
    one = alice.client.get("/export/qrels.txt.provenance.jsonl", params={"annotator": "alice"})
    header = json.loads(one.text.splitlines()[0])
    assert header["sources"][header["default"]] == {"kind": "human", "annotator": "alice"}
    # a downloaded sidecar describes the labels downloaded with the same choice
    got = tmp_path / "alice-qrels.txt"
    got.write_text(alice.client.get("/export/qrels.txt", params={"annotator": "alice"}).text)
    Path(f"{got}.provenance.jsonl").write_text(one.text)
    assert header["labels"]["n"] == 2 and read_provenance(got).verified  # type: ignore[union-attr]
    majority = alice.client.get("/export/qrels.txt.provenance.jsonl", params={"rule": "majority"})
    lines = majority.text.splitlines()
    sources = json.loads(lines[0])["sources"]
    notes = [s.get("note") for s in sources.values()]
    assert "majority of annotators alice, bob" in notes
    assert alice.client.get("/export/other.txt.provenance.jsonl").status_code == 404


def test_serve_command_opens_the_queue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvicorn", reason="the web extra is needed")
    from typer.testing import CliRunner

    from ragmeter.cli import app as cli_app

    served: list[Any] = []
    # bind and start nothing
    monkeypatch.setattr("ragmeter.web.server.listening_socket", lambda host, port: None)
    monkeypatch.setattr("ragmeter.web.server.serve_app", lambda app, *_: served.append(app))
    paths = write_collection(tmp_path / "data")
    queue = tmp_path / "queue.jsonl"
    write_label_queue(QUEUE, queue)
    argv = ["serve", "--queue", str(queue), "--queries", str(paths["queries"])]
    argv += ["--corpus", str(paths["corpus"]), "--labels", str(tmp_path / "l.db")]
    result = CliRunner().invoke(cli_app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "2 queries, 5 passages to label" in result.output
    assert served[0].state.config.collection.query_ids == ["q2", "q1"]
    queue.write_text('{"query_id": "q1", "docs": ["d1"], "strategy": "active"}\n')
    refused = CliRunner().invoke(cli_app, argv)
    assert refused.exit_code == 2 and "inclusion_probability" in refused.output
