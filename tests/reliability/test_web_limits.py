"""The web app refuses bodies over its limits before reading them (413) and JSON nested
past the decoder's depth (400), on the label API and every other POST."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")


from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from ragmeter.web.labels import LabelDB
from test_web import Browser
from webdata import config_kwargs, write_collection


@pytest.fixture
def config(tmp_path: Path) -> Any:
    paths = write_collection(tmp_path / "data")
    config = build_config(**config_kwargs(paths, tmp_path))  # type: ignore[arg-type]
    config.max_body = 4096
    config.max_upload = 64 << 10
    return config


@pytest.fixture
def browser(config: Any) -> Browser:
    return Browser(create_app(config))


def _labels(config: Any) -> int:
    db = LabelDB(config.labels)
    try:
        return sum(len(v) for v in db.current("grade").values())
    finally:
        db.close()


def test_a_label_within_the_limit_is_saved(browser: Browser, config: Any) -> None:
    assert browser.grade("q1", "d1", 3).status_code == 200
    assert _labels(config) == 1


def test_a_large_json_body_is_refused_by_its_length(browser: Browser, config: Any) -> None:
    body = {"query_id": "q1", "doc_id": "d1", "grade": 3, "padding": "x" * 10_000}
    response = browser.post_json("/api/label", body)
    assert response.status_code == 413
    assert "4,096 bytes" in response.json()["error"]
    assert _labels(config) == 0


def test_a_large_chunked_body_is_refused_while_read(browser: Browser, config: Any) -> None:
    """No Content-Length (a generator body is sent chunked): the cap applies as it streams."""
    chunks_sent = []

    def chunks() -> Any:
        for _ in range(100):
            chunks_sent.append(1)
            yield b'{"padding": "' + b"x" * 1000 + b'", '
        yield b'"grade": 3}'

    response = browser.client.post(
        "/api/label",
        content=chunks(),
        headers={"X-CSRF-Token": browser.csrf, "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert _labels(config) == 0


def test_a_large_form_is_refused(browser: Browser) -> None:
    response = browser.post_form("/annotator", {"name": "bob", "next": "/" + "x" * 10_000})
    assert response.status_code == 413


def test_an_upload_has_its_own_larger_limit(browser: Browser) -> None:
    small = browser.client.post(
        "/review/upload",
        files={"file": ("mine.txt", b"q1 0 d1 3\n" * 500)},  # 5 KB: over max_body
        data={"csrf_token": browser.csrf},
        follow_redirects=False,
    )
    assert small.status_code == 303
    large = browser.client.post(
        "/review/upload",
        files={"file": ("big.txt", b"q1 0 d1 3\n" * 10_000)},
        data={"csrf_token": browser.csrf},
        follow_redirects=False,
    )
    assert large.status_code == 413


def test_deeply_nested_json_is_a_400(browser: Browser, config: Any) -> None:
    config_deep = "[" * 2000 + "]" * 2000  # within the size limit, past the decoder's depth
    response = browser.client.post(
        "/api/label",
        content=config_deep,
        headers={"X-CSRF-Token": browser.csrf, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["error"]


def test_a_100000_deep_body_is_refused_by_size(browser: Browser) -> None:
    response = browser.client.post(
        "/api/label",
        content="[" * 100_000 + "]" * 100_000,
        headers={"X-CSRF-Token": browser.csrf, "Content-Type": "application/json"},
    )
    assert response.status_code == 413


def test_a_bad_content_length_is_a_400(browser: Browser) -> None:
    response = browser.client.post(
        "/api/label",
        content=json.dumps({"grade": 1}),
        headers={"X-CSRF-Token": browser.csrf, "Content-Length": "many"},
    )
    assert response.status_code in (400, 413)


def test_the_limit_is_an_option_of_serve() -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"})
    assert "--max-body" in result.output
