"""The web app through FastAPI's TestClient: every route, persistence, undo, exports, review,
CSRF, the access token, input validation and path traversal."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from ragmeter.errors import InputError, MissingInputError
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from ragmeter.web.labels import LabelDB, aggregate
from ragmeter.web.security import host_name, is_loopback
from webdata import POOLS, config_kwargs, write_collection

REPO = Path(__file__).resolve().parent.parent


class Browser:
    """A TestClient with the session's CSRF token (read from a page, as a browser would)."""

    def __init__(self, app: Any, annotator: str | None = "alice") -> None:
        self.client = TestClient(app)
        self.csrf = csrf_of(self.client.get("/").text)
        if annotator is not None:
            response = self.post_form("/annotator", {"name": annotator})
            assert response.status_code == 303

    def post_json(self, url: str, data: dict[str, Any]) -> Any:
        return self.client.post(url, json=data, headers={"X-CSRF-Token": self.csrf})

    def post_form(self, url: str, data: dict[str, Any]) -> Any:
        return self.client.post(url, data={**data, "csrf_token": self.csrf}, follow_redirects=False)

    def grade(self, query_id: str, doc_id: str, grade: Any) -> Any:
        return self.post_json(
            "/api/label", {"query_id": query_id, "doc_id": doc_id, "grade": grade}
        )


def csrf_of(html: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([0-9a-f]+)">', html)
    assert found, "page carries no CSRF token"
    return found.group(1)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def config(folder: Path) -> Any:
    paths = write_collection(folder / "data")
    return build_config(**config_kwargs(paths, folder))  # type: ignore[arg-type]


@pytest.fixture
def app(config: Any) -> Any:
    return create_app(config)


@pytest.fixture
def browser(app: Any) -> Browser:
    return Browser(app)


# -- collection --------------------------------------------------------------------------


def test_pools_by_best_rank_then_judged(config: Any) -> None:
    coll = config.collection
    assert coll.pools == POOLS
    assert coll.query_ids == ["q1", "q2"]  # the queries file's order
    assert sorted(coll.qrels_sources) == ["llm.txt", "qrels.txt"]


def test_nothing_to_label_is_an_error(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragmeter.web.config.example_inputs", lambda: None)
    with pytest.raises(MissingInputError, match="nothing to label"):
        build_config(labels=folder / "l.db")


def test_default_label_database_in_the_data_folder(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETER_DATA_DIR", str(folder / "home"))
    paths = write_collection(folder / "data")
    config = build_config(runs=[paths["run_a"]])
    # one database per folder of the first input, in the data folder: nothing beside the input
    assert config.labels.parent == folder / "home" / "labels"
    assert config.labels.name.startswith("data-") and config.labels.suffix == ".db"
    assert config.export_dir == config.labels.parent / f"{config.labels.stem}-exports"
    assert build_config(qrels=[paths["qrels"]]).labels == config.labels  # same folder
    assert not list((folder / "data").glob("*.db"))
    # a database an earlier version wrote beside the input is still used
    old = folder / "data" / "ragmeter-labels.db"
    old.write_bytes(b"")
    assert build_config(runs=[paths["run_a"]]).labels == old.resolve()


def test_bad_input_file_names_file_and_line(folder: Path) -> None:
    paths = write_collection(folder / "data")
    paths["corpus"].write_text('{"id": "d1", "text": "x"}\n{"id": "d2"}\n')
    with pytest.raises(InputError, match=r"corpus.jsonl.*line 2"):
        build_config(**config_kwargs(paths, folder))  # type: ignore[arg-type]


# -- pages -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/label/q1",
        "/label/q2",
        "/subquestions/q1",
        "/subquestions/q2",
        "/review",
        "/review?a=rule:majority&b=qrels:llm.txt&threshold=3",
        "/evaluate",
        "/export",
        "/history",
        "/history?query_id=q1",
        "/evaluations",
        "/static/app.css",
        "/static/app.js",
    ],
)
def test_every_page_renders(browser: Browser, url: str) -> None:
    browser.grade("q1", "d1", 4)
    response = browser.client.get(url)
    assert response.status_code == 200, response.text


def test_label_page_shows_pool_texts_and_progress(browser: Browser) -> None:
    browser.grade("q1", "d4", 5)
    html = browser.client.get("/label/q1").text
    order = [m.group(1) for m in re.finditer(r'data-item data-doc="([^"]+)"', html)]
    assert order == POOLS["q1"]
    assert "is a cat a good pet" in html
    assert "Many families keep a cat" in html
    assert "1/5 labelled" in html
    assert 'data-doc="d4" data-value="5"' in html


def test_unknown_query_is_404(browser: Browser) -> None:
    assert browser.client.get("/label/nope").status_code == 404
    assert browser.client.get("/subquestions/nope").status_code == 404


def test_texts_are_escaped(folder: Path) -> None:
    paths = write_collection(folder / "data")
    paths["corpus"].write_text('{"id": "d1", "text": "<script>alert(1)</script>"}\n')
    app = create_app(build_config(**config_kwargs(paths, folder)))  # type: ignore[arg-type]
    html = Browser(app).client.get("/label/q1").text
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_label_rows_rendered_once_keep_braces_and_escape(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The passage rows are rendered once per query and filled in per page: a text with
    braces or markup comes out as written (escaped), each page shows that session's token and
    that annotator's grades, and the rows of at most ROW_CACHE_QUERIES queries are kept."""
    from ragmeter.web.routes import labelling

    paths = write_collection(folder / "data")
    text = "{value} {0} }{ <b>{token}</b>"
    paths["corpus"].write_text(json.dumps({"id": "d1", "text": text}) + "\n")
    app = create_app(build_config(**config_kwargs(paths, folder)))  # type: ignore[arg-type]
    monkeypatch.setattr(labelling, "ROW_CACHE_QUERIES", 1)
    alice, bob = Browser(app), Browser(app, annotator="bob")
    alice.grade("q1", "d1", 4)
    for _ in range(2):  # the second page from the rows kept
        html = alice.client.get("/label/q1").text
        assert "{value} {0} }{ &lt;b&gt;{token}&lt;/b&gt;" in html
        assert 'data-doc="d1" data-value="4"' in html
        assert html.count(f'name="csrf_token" value="{csrf_of(html)}"') == len(POOLS["q1"])
    other = bob.client.get("/label/q1").text
    assert 'data-doc="d1" data-value=""' in other  # bob's grades, bob's token
    assert csrf_of(other) != csrf_of(html) and csrf_of(other) in other
    bob.client.get("/label/q2")
    assert list(app.state.web.fragments) == [("label", "q2")]  # q1's rows were let go


# -- labels, persistence, undo -----------------------------------------------------------


def test_labels_persist_across_a_restart(config: Any) -> None:
    first = Browser(create_app(config))
    assert first.grade("q1", "d1", 4).json()["progress"] == {"done": 1, "total": 5}
    assert first.grade("q1", "d2", 2).status_code == 200
    assert first.grade("q1", "d1", 3).status_code == 200  # relabel: the latest counts
    # a new app on the same database, as after a server restart, and a new browser session
    again = Browser(create_app(config))
    html = again.client.get("/label/q1").text
    assert 'data-doc="d1" data-value="3"' in html
    assert 'data-doc="d2" data-value="2"' in html
    assert "2/5 labelled" in html


def test_every_label_is_committed_before_the_reply(folder: Path) -> None:
    """A process killed right after recording (no close, no exit handlers) loses nothing."""
    db_path = folder / "kill.db"
    code = (
        "import os\n"
        "from ragmeter.web.labels import LabelDB\n"
        f"db = LabelDB({str(db_path)!r})\n"
        "db.record('alice', 'grade', 'q1', 'd1', 5)\n"
        "os._exit(0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)
    assert LabelDB(db_path).current("grade") == {"alice": {("q1", "d1", 0): 5}}


def test_form_post_without_script_redirects_back(browser: Browser) -> None:
    response = browser.post_form("/api/label", {"query_id": "q1", "doc_id": "d4", "grade": "5"})
    assert response.status_code == 303
    assert response.headers["location"] == "/label/q1#doc-d4"
    assert 'data-doc="d4" data-value="5"' in browser.client.get("/label/q1").text


def test_undo_walks_back_the_annotators_own_history(app: Any) -> None:
    alice, bob = Browser(app, "alice"), Browser(app, "bob")
    alice.grade("q1", "d1", 4)
    alice.grade("q1", "d1", 2)
    bob.grade("q1", "d1", 5)
    alice.grade("q1", "d2", 3)

    def undo() -> Any:
        return alice.post_json("/api/undo", {"kind": "grade"}).json()

    step = undo()
    assert step["undone"] == {"query_id": "q1", "doc_id": "d2", "question": None, "value": None}
    assert step["url"] == "/label/q1#doc-d2"
    assert undo()["undone"]["value"] == 4  # d1 back to its earlier grade
    assert undo()["undone"]["value"] is None
    assert undo()["undone"] is None  # nothing left
    db = app.state.db
    assert db.current("grade") == {"bob": {("q1", "d1", 0): 5}}
    # the history keeps everything, the undone labels flagged
    events = db.history()
    assert [e.kind for e in events].count("undo") == 3
    assert sum(e.undone for e in events) == 3


def test_ratings_of_sub_questions(browser: Browser, app: Any) -> None:
    response = browser.post_json(
        "/api/rating", {"query_id": "q1", "doc_id": "d4", "question": 2, "rating": 0}
    )
    assert response.status_code == 200
    assert response.json()["progress"] == {"done": 1, "total": 10}  # 5 passages × 2 questions
    browser.post_json("/api/rating", {"query_id": "q1", "doc_id": "d4", "question": 1, "rating": 5})
    html = browser.client.get("/subquestions/q1").text
    assert 'data-doc="d4" data-question="1" data-value="5"' in html
    assert 'data-doc="d4" data-question="2" data-value="0"' in html
    undone = browser.post_json("/api/undo", {"kind": "rating"}).json()["undone"]
    assert undone == {"query_id": "q1", "doc_id": "d4", "question": 1, "value": None}
    assert app.state.db.current("rating") == {"alice": {("q1", "d4", 2): 0}}


# -- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"query_id": "q1", "doc_id": "d1", "grade": 0}, "grade must be an integer in 1..5"),
        ({"query_id": "q1", "doc_id": "d1", "grade": 6}, "grade must be an integer in 1..5"),
        ({"query_id": "q1", "doc_id": "d1", "grade": 2.5}, "grade must be"),
        ({"query_id": "q1", "doc_id": "d1", "grade": "4x"}, "grade must be"),
        ({"query_id": "q1", "doc_id": "d1", "grade": True}, "grade must be"),
        ({"query_id": "q1", "doc_id": "d1"}, "grade must be"),
        ({"query_id": "q9", "doc_id": "d1", "grade": 3}, "unknown query_id"),
        ({"query_id": "q2", "doc_id": "d1", "grade": 3}, "not in the pool"),
        ({"query_id": "q1", "doc_id": "d404", "grade": 3}, "not in the pool"),
        ({"query_id": ["q1"], "doc_id": "d1", "grade": 3}, "unknown query_id"),
    ],
)
def test_grades_are_validated(browser: Browser, app: Any, payload: Any, message: str) -> None:
    response = browser.post_json("/api/label", payload)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert app.state.db.current("grade") == {}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"query_id": "q1", "doc_id": "d1", "question": 0, "rating": 3}, "question must be"),
        ({"query_id": "q1", "doc_id": "d1", "question": 3, "rating": 3}, "in 1..2"),
        ({"query_id": "q1", "doc_id": "d1", "question": 1, "rating": 6}, "rating must be"),
        ({"query_id": "q1", "doc_id": "d1", "question": 1, "rating": -1}, "in 0..5"),
        ({"query_id": "q2", "doc_id": "d5", "question": 1, "rating": 3}, "no sub-questions"),
    ],
)
def test_ratings_are_validated(browser: Browser, app: Any, payload: Any, message: str) -> None:
    response = browser.post_json("/api/rating", payload)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert app.state.db.current("rating") == {}


def test_malformed_json_and_kind(browser: Browser) -> None:
    response = browser.client.post(
        "/api/label",
        content=b"{not json",
        headers={"X-CSRF-Token": browser.csrf, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert browser.post_json("/api/label", [1, 2]).status_code == 400  # type: ignore[arg-type]
    assert browser.post_json("/api/undo", {"kind": "everything"}).status_code == 400


def test_labelling_needs_an_annotator_name(app: Any) -> None:
    anonymous = Browser(app, annotator=None)
    response = anonymous.grade("q1", "d1", 3)
    assert response.status_code == 400
    assert "annotator" in response.json()["error"]


@pytest.mark.parametrize("name", ["", "-lead", "x" * 41, "a/b", "<b>", "é"])
def test_annotator_names_are_validated(app: Any, name: str) -> None:
    browser = Browser(app, annotator=None)
    assert browser.post_form("/annotator", {"name": name}).status_code == 400


def test_annotator_redirect_stays_on_this_site(app: Any) -> None:
    browser = Browser(app, annotator=None)
    for target, expected in [
        ("/label/q2", "/label/q2"),
        ("//evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil", "/"),
    ]:
        response = browser.post_form("/annotator", {"name": "carol", "next": target})
        assert response.headers["location"] == expected


# -- CSRF --------------------------------------------------------------------------------


def _post_routes(app: Any) -> list[str]:
    from ragmeter.web.app import ROUTERS

    # the app's own routes and those of the routers it includes (by concern)
    routes = [*app.routes, *(r for router in ROUTERS for r in router.routes)]
    return sorted(r.path for r in routes if isinstance(r, APIRoute) and "POST" in r.methods)


def test_every_post_route_needs_the_csrf_token(app: Any, browser: Browser) -> None:
    routes = _post_routes(app)
    assert routes == [
        "/annotator",
        "/api/label",
        "/api/nugget",
        "/api/rating",
        "/api/span",
        "/api/span/remove",
        "/api/undo",
        "/export",
        "/review/upload",
    ]
    for path in routes:
        no_token = browser.client.post(path, json={"kind": "grade"})
        assert no_token.status_code == 403, path
        wrong = browser.client.post(path, json={}, headers={"X-CSRF-Token": "0" * 64})
        assert wrong.status_code == 403, path
        form = browser.client.post(path, data={"csrf_token": "nope", "name": "x"})
        assert form.status_code == 403, path
    assert app.state.db.history() == []
    assert not Path(app.state.config.export_dir).exists()


def test_csrf_token_is_bound_to_the_session(app: Any, browser: Browser) -> None:
    other = TestClient(app)
    other.get("/")  # its own session cookie
    other.cookies.set("ragmeter_annotator", "alice")
    stolen = other.post(
        "/api/label",
        json={"query_id": "q1", "doc_id": "d1", "grade": 5},
        headers={"X-CSRF-Token": browser.csrf},
    )
    assert stolen.status_code == 403
    no_session = TestClient(app)
    no_session.cookies.set("ragmeter_annotator", "alice")
    response = no_session.post(
        "/api/label",
        json={"query_id": "q1", "doc_id": "d1", "grade": 5},
        headers={"X-CSRF-Token": browser.csrf},
    )
    assert response.status_code == 403
    assert app.state.db.history() == []


def test_cross_origin_posts_are_refused(browser: Browser) -> None:
    response = browser.client.post(
        "/api/label",
        json={"query_id": "q1", "doc_id": "d1", "grade": 5},
        headers={"X-CSRF-Token": browser.csrf, "Origin": "http://evil.example"},
    )
    assert response.status_code == 403
    same = browser.client.post(
        "/api/label",
        json={"query_id": "q1", "doc_id": "d1", "grade": 5},
        headers={"X-CSRF-Token": browser.csrf, "Origin": "http://testserver"},
    )
    assert same.status_code == 200


def test_csrf_secret_survives_a_restart(config: Any) -> None:
    browser = Browser(create_app(config))
    browser.client.app = create_app(config)  # the server restarts; the page stays open
    assert browser.grade("q1", "d1", 2).status_code == 200


# -- access token ------------------------------------------------------------------------


def test_access_token(config: Any) -> None:
    config.token = "s3cret-token-0123456789"
    client = TestClient(create_app(config))
    for url in ["/", "/label/q1", "/static/app.css", "/export/qrels.txt"]:
        assert client.get(url).status_code == 401, url
    assert client.get("/", params={"token": "wrong-token-0123456789"}).status_code == 401
    first = client.get(
        "/label/q1", params={"token": config.token, "x": "1"}, follow_redirects=False
    )
    assert first.status_code == 303
    assert first.headers["location"] == "/label/q1?x=1"  # the token leaves the address bar
    assert "ragmeter_token" in first.headers["set-cookie"]
    assert "HttpOnly" in first.headers["set-cookie"]
    assert client.get("/label/q1").status_code == 200  # the cookie now
    header_only = TestClient(create_app(config))
    assert header_only.get("/", headers={"X-Ragmeter-Token": config.token}).status_code == 200


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.5.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.4", False),
        ("::", False),
        ("example.org", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("127.0.0.1:8765", "127.0.0.1"),
        ("LOCALHOST:80", "localhost"),
        ("[::1]:8765", "::1"),
        ("[::1]", "::1"),
        ("evil.example", "evil.example"),
        ("evil.example:8765", "evil.example"),
    ],
)
def test_host_names(header: str, host: str) -> None:
    assert host_name(header) == host


def test_loopback_server_refuses_other_host_names(config: Any) -> None:
    """DNS rebinding: a page on evil.example re-pointed at 127.0.0.1 sends Host: evil.example."""
    config.allowed_hosts = frozenset({"127.0.0.1", "localhost", "::1"})
    client = TestClient(create_app(config), base_url="http://127.0.0.1:8765")
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"Host": "localhost:8765"}).status_code == 200
    assert client.get("/", headers={"Host": "evil.example:8765"}).status_code == 400
    rebound = client.post("/api/label", json={}, headers={"Host": "evil.example"})
    assert rebound.status_code == 400


def test_serve_off_loopback_generates_a_token(
    monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app as cli

    paths = write_collection(folder / "data")
    seen: dict[str, Any] = {}

    def fake_serve(app: Any, sock: Any, options: dict[str, Any]) -> None:
        seen.update(app=app, **options)

    # the port is bound before the address is printed, then served: neither for real here
    monkeypatch.setattr("ragmeter.web.server.listening_socket", lambda host, port: None)
    monkeypatch.setattr("ragmeter.web.server.serve_app", fake_serve)
    args = ["serve", "--run", str(paths["run_a"]), "--labels", str(folder / "l.db")]
    result = CliRunner().invoke(cli, [*args, "--host", "0.0.0.0", "--port", "9999"])
    assert result.exit_code == 0, result.output
    token = seen["app"].state.config.token
    assert token and len(token) >= 16
    assert f"?token={token}" in result.output
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert seen["host"] == "127.0.0.1" and seen["app"].state.config.token is None
    assert seen["app"].state.config.allowed_hosts == {"127.0.0.1", "localhost", "::1"}
    short = CliRunner().invoke(cli, [*args, "--token", "short"])
    assert short.exit_code == 2 and "at least 16" in short.output


# -- export ------------------------------------------------------------------------------


def _label_some(app: Any) -> None:
    alice, bob, carol = Browser(app, "alice"), Browser(app, "bob"), Browser(app, "carol")
    alice.grade("q1", "d1", 4)
    bob.grade("q1", "d1", 2)
    alice.grade("q1", "d4", 5)
    bob.grade("q1", "d4", 5)
    carol.grade("q1", "d4", 3)
    bob.grade("q2", "d6", 1)
    alice.grade("q2", "d5", 3)
    alice.grade("q2", "d5", 2)  # relabelled: alice's current grade is 2


def test_export_downloads(app: Any, browser: Browser) -> None:
    _label_some(app)
    get = browser.client.get
    # one annotator: her current labels, queries and docs in byte order
    assert get("/export/qrels.txt", params={"annotator": "alice"}).text == (
        "q1 0 d1 4\nq1 0 d4 5\nq2 0 d5 2\n"
    )
    # latest label of anyone: q1/d1 bob's 2 (after alice's 4), q1/d4 carol's 3
    assert get("/export/qrels.txt", params={"rule": "latest"}).text == (
        "q1 0 d1 2\nq1 0 d4 3\nq2 0 d5 2\nq2 0 d6 1\n"
    )
    # majority: d1 tie 4 vs 2 → the lower, 2; d4 5,5,3 → 5
    response = get("/export/qrels.txt", params={"rule": "majority"})
    assert response.text == "q1 0 d1 2\nq1 0 d4 5\nq2 0 d5 2\nq2 0 d6 1\n"
    assert response.headers["content-disposition"] == 'attachment; filename="majority-qrels.txt"'
    assert get("/export/qrels.txt", params={"rule": "mean"}).status_code == 400
    assert get("/export/qrels.txt", params={"annotator": "nobody"}).status_code == 400
    assert get("/export/other.txt").status_code == 404


def test_exported_qrels_and_judgments_read_back(app: Any, browser: Browser, folder: Path) -> None:
    from ragmeter.io.judgments import read_judgments
    from ragmeter.io.trec import read_trec_qrels

    _label_some(app)
    rate = browser.post_json
    rate("/api/rating", {"query_id": "q1", "doc_id": "d4", "question": 2, "rating": 4})
    rate("/api/rating", {"query_id": "q1", "doc_id": "d1", "question": 1, "rating": 5})
    rate("/api/rating", {"query_id": "q1", "doc_id": "d1", "question": 2, "rating": 3})
    response = browser.post_form(
        "/export", {"kind": "qrels", "rule": "majority", "filename": "h.txt"}
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/export?written=h.txt"
    written = folder / "exports" / "h.txt"
    assert read_trec_qrels(written).to_dict() == {
        "q1": {"d1": 2, "d4": 5},
        "q2": {"d5": 2, "d6": 1},
    }
    response = browser.post_form(
        "/export", {"kind": "judgments", "annotator": "alice", "filename": "j.jsonl"}
    )
    assert response.status_code == 303
    text = (folder / "exports" / "j.jsonl").read_text()
    # pool order within the query: d1 before d4; an unrated sub-question is 0
    assert text == (
        '{"query_id": "q1", "doc_id": "d1", "ratings": [5, 3]}\n'
        '{"query_id": "q1", "doc_id": "d4", "ratings": [0, 4]}\n'
    )
    judged = read_judgments(
        folder / "exports" / "j.jsonl", questions=folder / "data" / "subquestions.jsonl"
    )
    assert judged.doc_ids.to_pylist() == ["d1", "d4"]
    assert "j.jsonl" in browser.client.get("/export").text


@pytest.mark.parametrize(
    "filename",
    [
        "../escape.txt",
        "..",
        "sub/x.txt",
        "/tmp/abs.txt",
        ".hidden",
        "a\\b.txt",
        "x..txt",
        "%2e%2e%2fx",
        "nul\x00.txt",
        "a" * 200,
        "~root.txt",
    ],
)
def test_export_never_leaves_its_directory(
    app: Any, browser: Browser, folder: Path, filename: str
) -> None:
    browser.grade("q1", "d1", 3)
    before = set(folder.rglob("*"))
    response = browser.post_form("/export", {"kind": "qrels", "filename": filename})
    assert response.status_code == 400
    assert set(folder.rglob("*")) - before <= {folder / "labels.db-wal", folder / "labels.db-shm"}


def test_export_refuses_a_link_out_of_its_directory(
    app: Any, browser: Browser, folder: Path
) -> None:
    browser.grade("q1", "d1", 3)
    exports = folder / "exports"
    exports.mkdir()
    outside = folder / "outside.txt"
    outside.write_text("keep me\n")
    (exports / "link.txt").symlink_to(outside)
    response = browser.post_form("/export", {"kind": "qrels", "filename": "link.txt"})
    assert response.status_code == 400
    assert outside.read_text() == "keep me\n"


def test_export_json_reply(app: Any, browser: Browser, folder: Path) -> None:
    browser.grade("q1", "d1", 3)
    response = browser.client.post(
        "/export",
        data={"kind": "qrels", "filename": "x.txt", "csrf_token": browser.csrf},
        headers={"Accept": "application/json"},
    )
    assert response.json() == {"path": str((folder / "exports" / "x.txt").resolve()), "lines": 1}


# -- review ------------------------------------------------------------------------------


def test_review_against_llm_qrels(app: Any, browser: Browser) -> None:
    """alice vs llm.txt on q1/d1, q1/d4, q1/d2, q2/d5 (llm's q2/d6 is −1: not a grade).

    alice: d1 4, d4 5, d2 2, d5 2 ; llm: d1 5, d4 4, d2 1, d5 3 → no exact agreement.
    scale 1..5; confusion rows alice, columns llm: (4,5) (5,4) (2,1) (2,3).
    κ unweighted: p_o = 0; p_e = Σ_c rows_c·cols_c / 16 = (r4·c4 + r5·c5) / 16 = 2/16.
    """
    for doc, grade in [("d1", 4), ("d4", 5), ("d2", 2)]:
        browser.grade("q1", doc, grade)
    browser.grade("q2", "d5", 2)
    html = browser.client.get("/review", params={"a": "annotator:alice", "b": "qrels:llm.txt"}).text
    assert re.search(r'id="n-pairs">4<', html)
    p_e = 2 / 16
    assert f'id="kappa">{(0 - p_e) / (1 - p_e):.3f}<' in html
    # the same figures from scikit-learn, an independent implementation
    sklearn = pytest.importorskip("sklearn.metrics", reason="scikit-learn not installed")
    a, b = [4, 5, 2, 2], [5, 4, 1, 3]
    for weights, element in [("linear", "kappa-linear"), ("quadratic", "kappa-quadratic")]:
        expected = sklearn.cohen_kappa_score(a, b, weights=weights, labels=[1, 2, 3, 4, 5])
        assert f'id="{element}">{expected:.3f}<' in html
    assert html.count('href="/label/q1#doc-d') == 3  # disagreements link to the passages
    assert 'href="/label/q2#doc-d5"' in html


def test_review_with_grade_map_and_clip(app: Any, browser: Browser) -> None:
    """alice d1 4, d4 5, d2 2, d5 2 against llm d1 5, d4 4, d2 1, d5 3, clipped to 2..4:
    alice 4, 4, 2, 2 (one 5→4) and llm 4, 4, 2, 3 (5→4, 1→2); the map 3:2 first turns the
    llm's 3 into 2. α from the ``krippendorff`` package."""
    for doc, grade in [("d1", 4), ("d4", 5), ("d2", 2)]:
        browser.grade("q1", doc, grade)
    browser.grade("q2", "d5", 2)
    params = {"a": "annotator:alice", "b": "qrels:llm.txt", "clip": "2:4"}
    html = browser.client.get("/review", params=params).text
    assert "clipped to 2..4" in html
    assert re.search(r"A changed 1 of \d+ labels, B 2 of \d+", html)
    kd = pytest.importorskip("krippendorff")
    # items in key order: q1/d1, q1/d2, q1/d4, q2/d5
    data = np.array([[4, 2, 4, 2], [4, 2, 4, 3]], dtype=float)
    for level in ("ordinal", "nominal", "interval"):
        expected = kd.alpha(reliability_data=data, level_of_measurement=level)
        assert f'id="alpha-{level}">{expected:.3f}<' in html
    params["map"] = "3:2"
    html = browser.client.get("/review", params=params).text
    assert "Grade map 3:2" in html and 'id="kappa">1.000<' in html  # now every pair agrees
    for bad in ({"clip": "4:2"}, {"map": "3=2"}, {"clip": "x" * 200}):
        assert browser.client.get("/review", params={**params, **bad}).status_code == 400


def test_review_of_sub_question_ratings(app: Any, browser: Browser) -> None:
    """alice vs llm_judgments.jsonl. Cells rated by both (the judge's −1 is no rating):
    (d1,1) 5/5, (d1,2) 3/2, (d4,1) 0/1 → p_o = 1/3, p_e = (1·1 for rating 5)/9 = 1/9,
    κ = (1/3 − 1/9)/(1 − 1/9) = 0.25."""
    for doc, question, rating in [("d1", 1, 5), ("d1", 2, 3), ("d4", 1, 0), ("d4", 2, 4)]:
        body = {"query_id": "q1", "doc_id": doc, "question": question, "rating": rating}
        assert browser.post_json("/api/rating", body).status_code == 200
    params = {"kind": "rating", "a": "annotator:alice", "b": "judgments:llm_judgments.jsonl"}
    html = browser.client.get("/review", params=params).text
    assert re.search(r'id="n-pairs">3<', html)
    assert 'id="kappa">0.250<' in html
    sklearn = pytest.importorskip("sklearn.metrics", reason="scikit-learn not installed")
    a, b = [5, 3, 0], [5, 2, 1]
    expected = sklearn.cohen_kappa_score(a, b, weights="quadratic", labels=list(range(6)))
    assert f'id="kappa-quadratic">{expected:.3f}<' in html
    assert 'href="/subquestions/q1#doc-d1"' in html and 'href="/subquestions/q1#doc-d4"' in html
    assert "Do cats need much space?" in html  # the sub-question of the (d1, 2) disagreement
    assert browser.client.get("/review", params={"kind": "both"}).status_code == 400
    wrong_kind = {"kind": "rating", "b": "qrels:llm.txt"}
    assert browser.client.get("/review", params=wrong_kind).status_code == 400


def test_review_upload_of_judgments(app: Any, browser: Browser) -> None:
    browser.post_json("/api/rating", {"query_id": "q1", "doc_id": "d1", "question": 1, "rating": 4})
    response = browser.client.post(
        "/review/upload",
        data={"csrf_token": browser.csrf},
        files={"file": ("judge.jsonl", b'{"query_id": "q1", "doc_id": "d1", "ratings": [4, 0]}\n')},
        follow_redirects=False,
    )
    assert response.status_code == 303
    html = browser.client.get(response.headers["location"]).text
    assert re.search(r'id="n-pairs">1<', html) and 'id="kappa">NA<' in html  # one class only
    bad = browser.client.post(
        "/review/upload",
        data={"csrf_token": browser.csrf},
        files={"file": ("bad.jsonl", b'{"query_id": "q1", "doc_id": "d1", "ratings": [4, 9]}\n')},
    )
    assert bad.status_code == 400 and "bad.jsonl" in bad.text and "line 1" in bad.text


def test_review_upload(app: Any, browser: Browser) -> None:
    browser.grade("q1", "d1", 4)
    response = browser.client.post(
        "/review/upload",
        data={"csrf_token": browser.csrf, "a": "annotator:alice"},
        files={"file": ("judge.txt", b"q1 0 d1 4\nq1 0 d2 2\n", "text/plain")},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == (
        "/review?kind=grade&b=qrels%3Ajudge.txt&a=annotator%3Aalice"
    )
    html = browser.client.get(response.headers["location"]).text
    assert re.search(r'id="n-pairs">1<', html)
    bad = browser.client.post(
        "/review/upload",
        data={"csrf_token": browser.csrf},
        files={"file": ("bad.txt", b"q1 0 d1 4\nq1 0 d2\n", "text/plain")},
    )
    assert bad.status_code == 400
    assert "bad.txt" in bad.text and "line 2" in bad.text


def test_review_rejects_unknown_sources(browser: Browser) -> None:
    assert browser.client.get("/review", params={"a": "qrels:/etc/passwd"}).status_code == 400
    assert browser.client.get("/review", params={"threshold": 9}).status_code == 400


def test_evaluate_page(app: Any, browser: Browser) -> None:
    """run_a ranks q1's d1 first and d4 fourth; alice grades only d1 → ndcg@10(q1) = 1 for
    run_a, and run_b (d4, d1) gets 1/log2(3) / 1 = 0.6309 on q1."""
    browser.grade("q1", "d1", 5)
    html = browser.client.get("/evaluate", params={"source": "annotator:alice"}).text
    rows = dict(re.findall(r"<tr><th>(run_[ab]\.txt)</th><td>.*?</span>([0-9.]+)</td>", html))
    assert rows == {"run_a.txt": "1.0000", "run_b.txt": f"{1 / 1.584962500721156:.4f}"}
    assert browser.client.get("/evaluate", params={"source": "rule:nope"}).status_code == 400


# -- the label database and aggregation, without the web stack ---------------------------


def test_aggregation_rules() -> None:
    labels = {
        "a": {("q", "d1", 0): 4, ("q", "d2", 0): 1},
        "b": {("q", "d1", 0): 2, ("q", "d2", 0): 1},
        "c": {("q", "d1", 0): 2},
    }
    assert aggregate(labels, "majority") == {("q", "d1", 0): 2, ("q", "d2", 0): 1}
    clock = {
        ("a", ("q", "d1", 0)): 9,
        ("b", ("q", "d1", 0)): 3,
        ("c", ("q", "d1", 0)): 5,
        ("a", ("q", "d2", 0)): 1,
        ("b", ("q", "d2", 0)): 2,
    }
    assert aggregate(labels, "latest", clock=clock) == {("q", "d1", 0): 4, ("q", "d2", 0): 1}
    with pytest.raises(ValueError, match="rule"):
        aggregate(labels, "mean")  # type: ignore[arg-type]


def test_label_database_refuses_out_of_range_values(folder: Path) -> None:
    db = LabelDB(folder / "x.db")
    with pytest.raises(ValueError, match=r"1\.\.5"):
        db.record("a", "grade", "q", "d", 0)
    with pytest.raises(ValueError, match="sub-question"):
        db.record("a", "rating", "q", "d", 3)
    assert db.history() == []


def test_import_ragmeter_does_not_import_the_web_stack() -> None:
    code = (
        "import sys, ragmeter, ragmeter.cli\n"
        "heavy = [m for m in ('fastapi', 'starlette', 'uvicorn', 'jinja2', 'ragmeter.web.app')"
        " if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


def test_serve_without_inputs_serves_the_example_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ragmeter.data", reason="the example collection is not installed")
    from ragmeter.data import example_path

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    config = build_config()
    assert config.labels == tmp_path / "ragmeter" / "labels" / "example.db"
    coll = config.collection
    queries = [line for line in example_path("queries.jsonl").read_text().splitlines() if line]
    assert len(coll.query_ids) == len(queries)
    judged = {
        (f[0], f[2]) for f in (line.split() for line in example_path("qrels.txt").open()) if f
    }
    assert {(q, d) for q, docs in coll.pools.items() for d in docs} == judged
    assert coll.subquestions and list(coll.qrels_sources) == ["qrels.txt"]
    browser = Browser(create_app(config))
    first = coll.query_ids[0]
    assert browser.grade(first, coll.pools[first][0], 5).status_code == 200
    for url in ["/", f"/label/{first}", f"/subquestions/{first}", "/review", "/evaluate"]:
        assert browser.client.get(url).status_code == 200, url


# -- stored evaluations ------------------------------------------------------------------


def test_browse_stored_evaluations(config: Any, folder: Path) -> None:
    """q1 ranks its grade-2 d1 first (nDCG 1, RR 1); q2 has its one relevant doc second
    (RR 1/2, nDCG 1/log2(3)) → means mrr 0.75, nDCG@10 (1 + 0.6309)/2 = 0.8155."""
    pytest.importorskip("sqlalchemy", reason="the store extra (sqlalchemy) is not installed")
    import ragmeter
    from ragmeter.store import save_evaluation

    run = ragmeter.Run.from_dict(
        {"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d3": 1.0, "d4": 0.5}}, name="bm25-wk47"
    )
    qrels = ragmeter.Qrels.from_dict({"q1": {"d1": 2, "d2": 1}, "q2": {"d4": 1}})
    evaluation = ragmeter.evaluate(run, qrels, ["ndcg@10", "mrr"])
    store = folder / "store.db"
    saved = save_evaluation(evaluation, url=str(store), name="hybrid wk47")
    config.store_url = str(store)
    browser = Browser(create_app(config))
    listing = browser.client.get("/evaluations").text
    assert f'href="/evaluations/{saved.id}"' in listing
    assert "hybrid wk47" in listing and "bm25-wk47" in listing
    html = browser.client.get(f"/evaluations/{saved.id}").text
    ndcg_q2 = 1 / 1.584962500721156
    assert f"{(1 + ndcg_q2) / 2:.4f}" in html and "0.7500" in html
    assert f"{ndcg_q2:.4f}" in html and "0.5000" in html  # per query
    assert browser.client.get("/evaluations/999").status_code == 404
    assert browser.client.get("/evaluations/abc").status_code == 422
    if importlib.util.find_spec("matplotlib") is not None:  # the report extra
        assert f'href="/evaluations/{saved.id}/report"' in html
        report = browser.client.get(f"/evaluations/{saved.id}/report")
        assert report.status_code == 200
        assert "<svg" in report.text and "bm25-wk47" in report.text
        assert browser.client.get("/evaluations/999/report").status_code == 404


def test_stored_evaluation_shows_n_defined(config: Any, folder: Path) -> None:
    """coverage@10 NA on q2 of three queries: its mean (1 + 0.5)/2 covers 2 of 3."""
    pytest.importorskip("sqlalchemy", reason="the store extra (sqlalchemy) is not installed")
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.measures import parse_measures
    from ragmeter.store import save_evaluation

    ms = tuple(parse_measures(["ndcg@10", "coverage@10"]))
    values = np.array([[1.0, 1.0], [0.5, np.nan], [0.0, 0.5]])
    run = RunResult("r", np.array(["q1", "q2", "q3"], dtype=object), ms, values)
    store = folder / "store.db"
    saved = save_evaluation(Evaluation((run,), ms), url=str(store), name="na")
    config.store_url = str(store)
    html = Browser(create_app(config)).client.get(f"/evaluations/{saved.id}").text
    assert "0.7500" in html and "(n=2/3)" in html
    assert html.count("(n=") == 1  # ndcg@10 is defined on every query


def test_no_store_is_said_plainly(
    config: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(folder / "empty-home"))
    monkeypatch.delenv("RAGMETER_STORE", raising=False)
    browser = Browser(create_app(config))
    html = browser.client.get("/evaluations").text
    assert 'id="no-store"' in html
    assert browser.client.get("/evaluations/1").status_code == 404
