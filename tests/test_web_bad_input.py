"""Bad input to the web app is a 400 (or one clear error line), never a 500, a broken header
or no response: annotators in download headers, integers past 64 bits, a busy port."""

from __future__ import annotations

import email.message
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from ragmeter.web.security import attachment
from test_web import Browser
from webdata import POOLS, config_kwargs, write_collection

REPO = Path(__file__).resolve().parent.parent
SERVE = [sys.executable, "-m", "ragmeter", "serve"]
HUGE = 99999999999999999999  # past 2**63 - 1, the largest integer SQLite holds


@pytest.fixture
def client(tmp_path: Path) -> Browser:
    paths = write_collection(tmp_path / "data")
    config = build_config(**config_kwargs(paths, tmp_path))  # type: ignore[arg-type]
    return Browser(create_app(config))


def _filename_params(header: str) -> list[str]:
    """The names of the parameters of a ``Content-Disposition`` value, as a mail parser
    reads them, and the file name it picks."""
    message = email.message.Message()
    message["Content-Disposition"] = header
    names = [k for k, _ in message.get_params(header="content-disposition")[1:]]
    return [*names, str(message.get_filename())]


@pytest.mark.parametrize(
    "annotator",
    ['x"; filename="evil.html', "\U0001f600", "\r\n", "a\x00b", "x" * 41, " lead"],
)
def test_an_annotator_no_one_can_be_named_is_a_400(client: Browser, annotator: str) -> None:
    """Annotator names are 1–40 of ``[A-Za-z0-9 ._-]``: anything else is no annotator, said
    plainly (before: a quote added a second filename to the header, an emoji was a 500, a
    line break left the client with no response at all)."""
    reply = client.client.get(f"/export/spans.jsonl?annotator={quote(annotator, safe='')}")
    assert reply.status_code == 400, reply.text
    assert "no annotator" in reply.text
    assert "content-disposition" not in reply.headers


def test_a_download_header_has_one_filename_and_its_exact_name(client: Browser) -> None:
    reply = client.client.get("/export/spans.jsonl?annotator=ann%20b.c")
    assert reply.status_code == 200
    header = reply.headers["content-disposition"]
    assert header == 'attachment; filename="ann_b.c-spans.jsonl"'  # plain: said once
    assert _filename_params(header) == ["filename", "ann_b.c-spans.jsonl"]


@pytest.mark.parametrize(
    ("name", "plain", "exact"),
    [
        ('x"; filename="evil.html', "x___filename__evil.html", "x%22%3B%20filename%3D%22evil.html"),
        ("\U0001f600.txt", "_.txt", "%F0%9F%98%80.txt"),
        ("a\r\nb", "a__b", "a%0D%0Ab"),
    ],
)
def test_attachment_header_is_safe_for_any_name(name: str, plain: str, exact: str) -> None:
    """RFC 6266: an ASCII fallback (every other character ``_``) and the exact name
    percent-encoded as UTF-8 (RFC 8187); the value is latin-1 encodable, one line."""
    header = attachment(name)
    assert header == f"attachment; filename=\"{plain}\"; filename*=UTF-8''{exact}"
    header.encode("latin-1")
    found = re.fullmatch(
        r"attachment; filename=\"[A-Za-z0-9._-]+\"; filename\*=UTF-8''(\S+)", header
    )
    assert found is not None and unquote(found[1], errors="strict") == name


@pytest.mark.parametrize(
    "url",
    [
        "/metrics?window=99999999999999999999d",
        "/monitor/production?window=99999999999999999999d",
    ],
)
def test_a_window_past_64_bits_is_a_400(client: Browser, url: str, tmp_path: Path) -> None:
    """Before: the store's query overflowed (OverflowError, a 500)."""
    pytest.importorskip("sqlalchemy", reason="the store extra is not installed")
    from ragmeter.store import open_store

    with open_store(f"sqlite:///{tmp_path / 'm.db'}", create=True):
        pass
    app: Any = client.client.app
    app.state.config.store_url = f"sqlite:///{tmp_path / 'm.db'}"
    reply = client.client.get(url, headers={"Accept": "application/json"})
    assert reply.status_code == 400, reply.text
    assert "too long" in reply.json()["error"]


@pytest.mark.parametrize("span_id", [HUGE, -HUGE, str(HUGE), "²", 0, 1.5])
def test_a_span_id_no_span_can_have_is_a_400(client: Browser, span_id: Any) -> None:
    """Before: an id past 64 bits overflowed SQLite (a 500), ``"²"`` passed ``isdigit`` and
    failed ``int`` (a 500)."""
    reply = client.post_json("/api/span/remove", {"id": span_id})
    assert reply.status_code == 400, reply.text
    assert "id must be an integer in 1..9223372036854775807" in reply.json()["error"]


def test_a_span_id_past_64_bits_in_a_form_is_a_400(client: Browser) -> None:
    reply = client.post_form("/api/span/remove", {"id": str(HUGE)})
    assert reply.status_code == 400


def test_a_span_offset_past_64_bits_is_a_400(client: Browser) -> None:
    query = next(iter(POOLS))
    doc = POOLS[query][0]
    reply = client.post_json(
        "/api/span", {"query_id": query, "doc_id": doc, "start": 0, "end": HUGE}
    )
    assert reply.status_code == 400 and "end must be an integer" in reply.json()["error"]


def test_an_evaluation_id_past_64_bits_is_a_404(client: Browser, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="the store extra is not installed")
    from ragmeter.store import open_store

    with open_store(f"sqlite:///{tmp_path / 'm.db'}", create=True):
        pass
    app: Any = client.client.app
    app.state.config.store_url = f"sqlite:///{tmp_path / 'm.db'}"
    for url in (f"/evaluations/{HUGE}", f"/evaluations/{HUGE}/report"):
        reply = client.client.get(url)
        assert reply.status_code == 404, reply.text


def test_serve_on_a_busy_port_is_one_clear_error(tmp_path: Path) -> None:
    """The port is taken before the address is printed: no ``open http://…`` of the other
    server, no uvicorn traceback; one line, a non-zero exit."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        done = subprocess.run(
            [*SERVE, "--port", str(port), "--labels", str(tmp_path / "l.db")],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        )
    assert done.returncode == 2
    assert "open http" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ragmeter: error: port {port} on 127.0.0.1 is in use (another server is listening "
        "there): stop it or choose another --port"
    ]
