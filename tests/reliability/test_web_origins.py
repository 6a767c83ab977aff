"""The web app's Origin and Host checks against the probes of an adversarial run, and
``GET /evaluate`` reading its measures from the query string.

* ``Origin: null`` (a sandboxed frame, a ``file:`` page) and an Origin whose scheme or port
  is not this server's (``https://127.0.0.1:PORT`` for the http server) are refused;
* ``Host: localhost:18765.evil.example`` is not ``localhost``: a port is digits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from fastapi.testclient import TestClient

from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from ragmeter.web.security import host_name, same_origin, split_host
from test_web import Browser, csrf_of
from webdata import config_kwargs, write_collection

BASE = "http://127.0.0.1:18765"


@pytest.fixture
def config(tmp_path: Path) -> Any:
    paths = write_collection(tmp_path / "data")
    return build_config(**config_kwargs(paths, tmp_path))  # type: ignore[arg-type]


def _label(browser: Browser, origin: str) -> int:
    response = browser.client.post(
        "/api/label",
        json={"query_id": "q1", "doc_id": "d1", "grade": 2},
        headers={"X-CSRF-Token": browser.csrf, "Origin": origin},
    )
    return int(response.status_code)


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        (BASE, 200),
        ("null", 403),
        ("https://127.0.0.1:18765", 403),  # another scheme: another origin
        ("http://127.0.0.1:18766", 403),  # another port
        ("http://127.0.0.1", 403),  # port 80
        ("http://127.0.0.1:18765.evil.example", 403),
        ("http://evil.example", 403),
        ("http://127.0.0.1:18765/path", 403),  # not an origin
    ],
)
def test_origins(config: Any, origin: str, status: int) -> None:
    browser = Browser(create_app(config), annotator=None)
    browser.client = TestClient(browser.client.app, base_url=BASE)  # Host: 127.0.0.1:18765
    browser.csrf = csrf_of(browser.client.get("/").text)
    assert browser.post_form("/annotator", {"name": "alice"}).status_code == 303
    assert _label(browser, origin) == status


def test_default_ports_are_the_same_origin() -> None:
    assert same_origin("http://localhost", "http", "localhost")
    assert same_origin("http://localhost:80", "http", "localhost")
    assert same_origin("https://example.org", "https", "example.org:443")
    assert not same_origin("https://example.org", "http", "example.org")
    assert not same_origin("null", "http", "localhost")
    assert same_origin("HTTP://LocalHost:8765", "http", "localhost:8765")
    assert same_origin("http://[::1]:8765", "http", "[::1]:8765")


@pytest.mark.parametrize(
    ("header", "parts"),
    [
        ("localhost:18765", ("localhost", 18765)),
        ("localhost", ("localhost", None)),
        ("[::1]:8765", ("::1", 8765)),
        ("localhost:18765.evil.example", None),
        ("localhost:", None),
        ("localhost:+80", None),
        ("localhost:٨٠", None),  # Arabic-Indic digits: int() reads them, a port is ASCII
        ("[::1]x", None),
        ("a:b:c", None),
    ],
)
def test_split_host(header: str, parts: tuple[str, int | None] | None) -> None:
    assert split_host(header) == parts


def test_a_host_with_a_port_that_is_not_digits_is_refused(config: Any) -> None:
    config.allowed_hosts = frozenset({"127.0.0.1", "localhost", "::1"})
    client = TestClient(create_app(config), base_url=BASE)
    assert client.get("/", headers={"Host": "localhost:18765"}).status_code == 200
    assert host_name("localhost:18765.evil.example") != "localhost"
    probe = client.get("/", headers={"Host": "localhost:18765.evil.example"})
    assert probe.status_code == 400


def test_get_evaluate_reads_the_measures_of_the_query_string(config: Any) -> None:
    browser = Browser(create_app(config))
    assert browser.grade("q1", "d1", 2).status_code == 200
    page = browser.client.get("/evaluate", params=[("measure", "P@1"), ("measure", "mrr")])
    assert page.status_code == 200
    # the page names measures canonically (P@1 is precision@1, as everywhere else)
    assert "precision@1" in page.text and "mrr" in page.text
    assert "ndcg@10" not in page.text  # the default measures are not shown
