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


def test_saved_spans_are_marked_and_removable_on_the_page(browser: tuple[Browser, Any]) -> None:
    """Reloaded, the page marks the annotator's spans in the text (overlaps in pieces) and
    lists each with a remove form; another annotator's page shows none of them."""
    client, app = browser
    query = next(iter(POOLS))
    doc = POOLS[query][0]  # d1: "Cats are popular pets that need little space."
    first = client.post_json("/api/span", {"query_id": query, "doc_id": doc, "start": 0, "end": 8})
    second = client.post_json(
        "/api/span", {"query_id": query, "doc_id": doc, "start": 5, "end": 12, "grade": 2}
    )
    a, b = first.json()["id"], second.json()["id"]
    page = client.client.get(f"/label/{query}").text
    assert (
        f'<p class="ptext"><mark class="evidence e5" data-span-ids="{a}">Cats </mark>'
        f'<mark class="evidence e5" data-span-ids="{a} {b}">are</mark>'
        f'<mark class="evidence e2" data-span-ids="{b}"> pop</mark>ular pets' in page
    )
    assert page.count('action="/api/span/remove"') == 2
    assert f'<input type="hidden" name="id" value="{a}">' in page
    # the JSON reply carries the passage redrawn, for the page to put in place
    assert 'data-span-ids="' in second.json()["html"]["ptext"]
    # without the script: the remove form posts and comes back to the passage
    removed = client.post_form("/api/span/remove", {"id": str(a)})
    assert removed.status_code == 303 and removed.headers["location"] == f"/label/{query}#doc-{doc}"
    page = client.client.get(f"/label/{query}").text
    assert page.count('action="/api/span/remove"') == 1 and f'data-span-ids="{a}' not in page
    other = Browser(app, annotator="bob").client.get(f"/label/{query}").text
    assert "<mark" not in other and 'action="/api/span/remove"' not in other


def test_a_selection_that_is_not_the_offsets_text_is_refused(
    browser: tuple[Browser, Any],
) -> None:
    """The page sends the text it selected: offsets that select other characters of the
    stored text (a page counting on a DOM that differs from it) are refused, nothing saved."""
    client, _ = browser
    query = next(iter(POOLS))
    doc = POOLS[query][0]
    ok = {"query_id": query, "doc_id": doc, "start": 0, "end": 4, "text": "Cats"}
    assert client.post_json("/api/span", ok).status_code == 200
    shifted = {**ok, "start": 1, "end": 5}
    reply = client.post_json("/api/span", shifted)
    assert reply.status_code == 400 and "nothing saved" in reply.json()["error"]
    assert client.post_json("/api/span", {**ok, "text": 4}).status_code == 400
    assert len(client.client.get("/export/spans.jsonl").text.splitlines()) == 1


def test_passage_text_keeps_every_character_in_the_dom() -> None:
    """CR written as a character reference (the HTML parser keeps it), U+0000 and lone
    surrogates as U+FFFD: one character for one, so offsets on the page are offsets of the
    stored text."""
    from ragmeter.web.passages import passage_html, selection_matches, shown_text

    assert str(passage_html("a\r\nb<\x00")) == "a&#13;\nb&lt;\ufffd"
    assert shown_text("x\ud800y\x00") == "x\ufffdy\ufffd"
    assert selection_matches("a\x00b", 1, 3, "\ufffdb")
    assert not selection_matches("a\r\nb", 2, 4, "\nb\n")
