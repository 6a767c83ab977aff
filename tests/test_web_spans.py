"""Evidence spans in the labelling app: a selection saved as characters of the passage,
taken back, and exported as span labels that ``--spans`` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from ragmeter.io.spans import read_spans
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from test_web import Browser
from webdata import POOLS, config_kwargs, write_collection


@pytest.fixture
def browser(tmp_path: Path) -> tuple[Browser, Any]:
    paths = write_collection(tmp_path / "data")
    config = build_config(**config_kwargs(paths, tmp_path))  # type: ignore[arg-type]
    app = create_app(config)
    return Browser(app), app


def test_select_save_remove_export(browser: tuple[Browser, Any], tmp_path: Path) -> None:
    client, _ = browser
    page = client.client.get(f"/label/{next(iter(POOLS))}").text
    assert "data-spans" in page and "mark it as evidence" in page
    query, doc = next(iter(POOLS)), POOLS[next(iter(POOLS))][0]
    saved = client.post_json("/api/span", {"query_id": query, "doc_id": doc, "start": 1, "end": 4})
    assert saved.status_code == 200, saved.text
    first = saved.json()
    assert (first["start"], first["end"], first["grade"]) == (1, 4, 5)
    second = client.post_json(
        "/api/span", {"query_id": query, "doc_id": doc, "start": 0, "end": 2, "grade": 3}
    ).json()
    text = client.client.get("/export/spans.jsonl").text
    rows = [json.loads(line) for line in text.splitlines()]
    assert [(r["start"], r["end"], r["grade"], r["annotator"]) for r in rows] == [
        (1, 4, 5, "alice"),
        (0, 2, 3, "alice"),
    ]
    assert rows[0]["text"] == first["text"] and len(first["text"]) == 3
    removed = client.post_json("/api/span/remove", {"id": second["id"]})
    assert removed.status_code == 200 and removed.json()["removed"] == second["id"]
    again = client.post_json("/api/span/remove", {"id": second["id"]})
    assert again.status_code == 400
    exported = tmp_path / "spans.jsonl"
    exported.write_text(client.client.get("/export/spans.jsonl").text, encoding="utf-8")
    spans = read_spans(exported)
    assert spans.query_ids.tolist() == [query] and spans.starts.tolist() == [1]


@pytest.mark.parametrize(
    ("start", "end"), [(-1, 2), (3, 3), (5, 2), (0, 10_000), ("a", 2), (True, 2)]
)
def test_bad_offsets_are_refused(browser: tuple[Browser, Any], start: Any, end: Any) -> None:
    client, _ = browser
    query, doc = next(iter(POOLS)), POOLS[next(iter(POOLS))][0]
    reply = client.post_json(
        "/api/span", {"query_id": query, "doc_id": doc, "start": start, "end": end}
    )
    assert reply.status_code == 400, reply.text


def test_span_outside_the_pool_is_refused(browser: tuple[Browser, Any]) -> None:
    client, _ = browser
    query = next(iter(POOLS))
    reply = client.post_json(
        "/api/span", {"query_id": query, "doc_id": "nope", "start": 0, "end": 1}
    )
    assert reply.status_code == 400 and "not in the pool" in reply.text
