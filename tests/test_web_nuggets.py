"""Nugget assignments in the web app: the page, labels 0–2, undo, review against an LLM's
assignments (agreement), export back to an assignments file that ``ragmeter evaluate``
reads, and the label database's migration from the schema without nuggets."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from ragmeter.data import example_path
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from ragmeter.web.labels import LabelDB
from test_web import Browser


@pytest.fixture
def browser(tmp_path: Path) -> Browser:
    config = build_config(
        queries=example_path("queries.jsonl"),
        corpus=example_path("corpus.jsonl"),
        qrels=[example_path("qrels.txt")],
        nuggets=example_path("nuggets.jsonl"),
        nugget_assignments=[example_path("nugget_assignments.jsonl")],
        rag_answers=example_path("rag_answers.jsonl"),
        labels=tmp_path / "labels.db",
        export_dir=tmp_path / "exports",
    )
    return Browser(create_app(config))


def nugget(browser: Browser, target: str, number: int, value: Any, query: str = "q03") -> Any:
    return browser.post_json(
        "/api/nugget",
        {"query_id": query, "doc_id": target, "question": number, "rating": value},
    )


def test_the_collection_has_the_nuggets_and_their_targets(browser: Browser) -> None:
    coll = browser.client.app.state.web.coll  # type: ignore[attr-defined]
    assert sorted(coll.nugget_targets) == ["q01", "q02", "q03", "q06"]
    targets = [t for t, _ in coll.nugget_targets["q03"]]
    assert targets[0] == "answer:vellmar-rag"  # the answer first, then the assessed passages
    assert set(targets[1:]) == {"p093", "p163", "p126", "p038", "p116", "p148"}
    assert coll.nugget_targets["q03"][0][1].startswith("Riders under 19 pay half fare.")
    assert sorted(coll.assignment_sources) == ["nugget_assignments.jsonl"]


def test_page_labels_undo(browser: Browser) -> None:
    page = browser.client.get("/nuggets/q03")
    assert page.status_code == 200
    assert "The Campus pass costs 35 euros a month" in page.text
    assert "nugget_assignments.jsonl: not_support" in page.text  # the LLM's label beside
    assert "/nuggets/q06" in page.text  # the next query with nuggets
    done = nugget(browser, "answer:vellmar-rag", 2, 2)
    assert done.status_code == 200, done.text
    assert done.json()["progress"] == {"done": 1, "total": 7 * 6}
    assert nugget(browser, "answer:vellmar-rag", 2, 3).status_code == 400  # 0..2
    assert nugget(browser, "answer:vellmar-rag", 7, 1).status_code == 400  # 6 nuggets
    assert nugget(browser, "p999", 1, 1).status_code == 400  # not a target of q03
    assert nugget(browser, "p093", 1, 1, query="q04").status_code == 400  # no nuggets
    assert browser.client.get("/nuggets/q04").status_code == 404
    undone = browser.post_json("/api/undo", {"kind": "nugget"})
    assert undone.json()["undone"]["question"] == 2
    assert undone.json()["url"].startswith("/nuggets/q03#")
    # without JavaScript: the form posts the button's value and comes back to the page
    form = browser.post_form(
        "/api/nugget", {"query_id": "q03", "doc_id": "p163", "question": "2", "rating": "2"}
    )
    assert form.status_code == 303 and form.headers["location"].startswith("/nuggets/q03#")


def test_review_against_the_llm_and_export(browser: Browser, tmp_path: Path) -> None:
    # the hand labels of the example (as the "LLM" source) against alice on q03's answer:
    # LLM S N S N P N; alice agrees on 1, 3, 4, 6 and says 2 → partial, 5 → support
    for number, value in enumerate([2, 1, 2, 0, 2, 0], start=1):
        assert nugget(browser, "answer:vellmar-rag", number, value).status_code == 200
    page = browser.client.get(
        "/review",
        params={
            "kind": "nugget",
            "a": "annotator:alice",
            "b": "assignments:nugget_assignments.jsonl",
        },
    )
    assert page.status_code == 200, page.text
    assert "Nugget assignments 0–2" in page.text
    web = browser.client.app.state.web  # type: ignore[attr-defined]
    from ragmeter.web.review import review, source_labels

    a = source_labels("annotator:alice", web.db, web.coll, {}, "nugget")
    b = source_labels("assignments:nugget_assignments.jsonl", web.db, web.coll, {}, "nugget")
    result = review("alice", "llm", a, b, kind="nugget", threshold=2)
    assert result.n == 6  # the items both label
    assert len(result.disagreements) == 2
    # export: alice's labels as assignment lines; read back and scored
    text = browser.client.get("/export/assignments.jsonl", params={"annotator": "alice"}).text
    rows = [json.loads(line) for line in text.splitlines()]
    assert rows[0] == {
        "run_id": "vellmar-rag",
        "qid": "q03",
        "nugget_id": "1",
        "assignment": "support",
    }
    path = tmp_path / "alice.jsonl"
    path.write_text(text)
    from ragmeter import evaluate
    from ragmeter.io.nuggets import read_assignments, read_nuggets
    from ragmeter.io.readers import read_run

    nuggets = read_nuggets(example_path("nuggets.jsonl"))
    run = read_run(example_path("rag_answers.jsonl"))
    result_ev = evaluate(
        run,
        None,
        ["nugget_all"],
        nuggets=nuggets,
        nugget_assignments=read_assignments(path, nuggets),
    ).run
    # only q03's answer is labelled: (1 + .5 + 1 + 0 + 1 + 0)/6
    q03 = list(result_ev.query_ids).index("q03")
    assert result_ev.values[q03, 0] == pytest.approx(3.5 / 6)


def test_a_version_1_label_database_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, annotator TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('grade', 'rating', 'undo')),
            query_id TEXT, doc_id TEXT, question INTEGER, value INTEGER,
            undoes INTEGER REFERENCES events (id));
        INSERT INTO meta VALUES ('schema_version', '1'), ('secret', 'abc');
        INSERT INTO events (at, annotator, kind, query_id, doc_id, value)
            VALUES ('t', 'bob', 'grade', 'q1', 'd1', 4);
        INSERT INTO events (at, annotator, kind, undoes) VALUES ('t', 'bob', 'undo', 1);
        INSERT INTO events (at, annotator, kind, query_id, doc_id, value)
            VALUES ('t', 'bob', 'grade', 'q1', 'd1', 3);
        """
    )
    conn.commit()
    conn.close()
    db = LabelDB(path)
    try:
        assert db.current("grade") == {"bob": {("q1", "d1", 0): 3}}  # the events kept
        db.record("bob", "nugget", "q1", "answer:r", 2, question=1)
        assert db.current("nugget") == {"bob": {("q1", "answer:r", 1): 2}}
        assert db.meta("schema_version") == "2" and db.meta("secret") == "abc"
        assert db.undo("bob", "nugget") is not None
    finally:
        db.close()
