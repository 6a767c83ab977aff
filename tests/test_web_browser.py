"""The web app in a real browser: Playwright for Python driving Debian's Chromium.

A person's session, keyboard only: label five passages, move back and relabel, undo, reload
(the labels persist), export, and check the exported qrels line by line; and screenshots of
report pages (checked for size and content, not for pixels).

Needs the ``playwright`` package and ``/usr/bin/chromium`` (Debian packages ``chromium``,
``chromium-driver``); Playwright's own browser download is never used.
"""

from __future__ import annotations

import importlib.util
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1200, "height": 800}

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip(
        f"{CHROMIUM} not found: install Debian's chromium and chromium-driver packages",
        allow_module_level=True,
    )

import uvicorn  # noqa: E402

from ragmeter.web.app import create_app  # noqa: E402
from ragmeter.web.config import build_config  # noqa: E402
from webdata import config_kwargs, write_collection  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _serving(config: Any) -> Iterator[str]:
    """The app of ``config`` on a free loopback port (uvicorn in a thread); its URL."""
    port = _free_port()
    uv = uvicorn.Server(
        uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web app did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    uv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The app on a free loopback port (uvicorn in a thread); yields its URL and folder.
    Its evaluation store is ``store.db`` in the folder."""
    paths = write_collection(tmp_path / "data")
    config = build_config(**config_kwargs(paths, tmp_path))  # type: ignore[arg-type]
    config.store_url = str(tmp_path / "store.db")
    with _serving(config) as url:
        yield url, tmp_path


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One browser for the module (starting Chromium is the slow part)."""
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, chromium_sandbox=False
        )
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh page in a fresh context (no cookies from another test)."""
    context = chromium.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(20_000)
    yield context.new_page()
    context.close()


def _choose_name(page: Any, base: str, name: str) -> None:
    page.goto(base + "/")
    page.fill("#name", name)
    page.click("#annotator button[type=submit]")
    page.wait_for_selector(f"#annotator-name:text-is('{name}')")


def _wait_value(page: Any, doc: str, value: str) -> None:
    page.wait_for_selector(f'li#doc-{doc}[data-value="{value}"]', state="attached")


def _values(page: Any) -> dict[str, str]:
    items = page.query_selector_all("li.passage[data-item]")
    return {i.get_attribute("data-doc"): i.get_attribute("data-value") for i in items}


def test_label_with_the_keyboard_reload_and_export(server: tuple[str, Path], page: Any) -> None:
    base, folder = server
    _choose_name(page, base, "alice")
    page.goto(base + "/label/q1")
    # the pool of q1 is d1 d4 d2 d3 d9; each key grades the current passage and moves on,
    # typed at once (the page saves them in order while the person goes on)
    for key in "45231":
        page.keyboard.press(key)
    for doc, key in zip(["d1", "d4", "d2", "d3", "d9"], "45231", strict=True):
        _wait_value(page, doc, key)
    page.wait_for_selector(".progress-text:text-is('5/5 labelled')")
    # back up one passage (d3), change its grade, then undo twice: d3 back to 3, d9 unlabelled
    page.keyboard.press("ArrowUp")
    page.keyboard.press("5")
    _wait_value(page, "d3", "5")
    page.keyboard.press("u")
    _wait_value(page, "d3", "3")
    page.keyboard.press("Control+z")
    _wait_value(page, "d9", "")
    assert page.inner_text(".progress-text >> nth=0") == "4/5 labelled"
    # undo moved the focus to d9: grade it again; k and j move without grading
    page.keyboard.press("1")
    _wait_value(page, "d9", "1")
    page.keyboard.press("k")
    page.keyboard.press("j")
    assert page.eval_on_selector("li.current", "e => e.dataset.doc") == "d9"
    # shown at once, saved in the background: the progress moves when the server has it
    # (a reload before that would cancel the request)
    page.wait_for_selector(".progress-text:text-is('5/5 labelled')")

    page.reload()
    assert _values(page) == {"d1": "4", "d4": "5", "d2": "2", "d3": "3", "d9": "1"}
    assert page.inner_text(".progress-text >> nth=0") == "5/5 labelled"

    # export on the server, then download
    page.goto(base + "/export")
    page.select_option("select[name=annotator]", "alice")
    page.fill("input[name=filename]", "alice-qrels.txt")
    page.click("#export-form button[type=submit]")
    page.wait_for_selector("#written")
    lines = (folder / "exports" / "alice-qrels.txt").read_text().splitlines()
    assert lines == ["q1 0 d1 4", "q1 0 d2 2", "q1 0 d3 3", "q1 0 d4 5", "q1 0 d9 1"]
    with page.expect_download() as download:
        page.click("a[href='/export/qrels.txt?annotator=alice']")
    saved = Path(download.value.path())
    assert saved.read_text().splitlines() == lines


def test_sub_question_ratings_with_the_keyboard(server: tuple[str, Path], page: Any) -> None:
    base, _ = server
    _choose_name(page, base, "bob")
    page.goto(base + "/subquestions/q1")
    for key in "53":  # d1 × question 1, then d1 × question 2
        page.keyboard.press(key)
    page.wait_for_selector('tr[data-doc="d1"][data-question="2"][data-value="3"]')
    # the page shows a value at once and saves it in the background, one request after the
    # other: "saved 3" is the second one answered (a reload before it would cancel it)
    page.wait_for_selector('#status:has-text("saved 3")')
    page.keyboard.press("6")  # out of range: refused in the page, nothing sent
    page.wait_for_selector("#status.bad")
    page.reload()
    first = page.query_selector_all('tr[data-doc="d1"]')
    assert [r.get_attribute("data-value") for r in first] == ["5", "3"]
    with page.expect_download() as download:
        page.goto(base + "/export")
        page.click("a[href='/export/judgments.jsonl?annotator=bob']")
    text = Path(download.value.path()).read_text()
    assert text == '{"query_id": "q1", "doc_id": "d1", "ratings": [5, 3]}\n'


# -- screenshots -------------------------------------------------------------------------


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the RGB rows of an 8-bit RGB or RGBA PNG (a small decoder, so that
    the check needs no imaging library): chunks → zlib → undo each row's filter."""
    import numpy as np

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IHDR":
            header = data[pos + 8 : pos + 8 + length]
        elif kind == b"IDAT":
            chunks.append(data[pos + 8 : pos + 8 + length])
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    bpp = 3 if color == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), dtype=np.uint8)
    raw = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        kind, line = int(raw[y, 0]), raw[y, 1:].astype(np.int64)
        if kind == 1:  # Sub: a running sum per channel
            line = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:  # Up
            line = (line + prev) % 256
        elif kind in (3, 4):  # Average, Paeth: byte after byte
            cur, up = line.tolist(), prev.tolist()
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                if kind == 3:
                    cur[i] = (cur[i] + (left + up[i]) // 2) % 256
                    continue
                corner = up[i - bpp] if i >= bpp else 0
                p = left + up[i] - corner
                pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up[i] if pb <= pc else corner
                cur[i] = (cur[i] + pred) % 256
            line = np.asarray(cur, dtype=np.int64)
        out[y] = line
        prev = line
    rgb = out.reshape(height, width, bpp)[:, :, :3]
    return width, height, [row.tobytes() for row in rgb]


def assert_not_blank(path: Path, width: int, height: int) -> None:
    w, h, rows = png_pixels(path.read_bytes())
    assert (w, h) == (width, height)
    colours = {row[i : i + 3] for row in rows[::4] for i in range(0, len(row), 12)}
    background = max(colours, key=lambda c: sum(row.count(c) for row in rows[::40]))
    assert len(colours) > 20, f"{path.name}: only {len(colours)} colours: a blank page?"
    inked = sum(
        1 for row in rows[::4] for i in range(0, len(row), 12) if row[i : i + 3] != background
    )
    sampled = (h // 4 + (h % 4 > 0)) * (w // 4 + (w % 4 > 0))
    assert inked / sampled > 0.02, f"{path.name}: {inked}/{sampled} non-background samples"


def _saved_evaluation(store: Path) -> int:
    """An evaluation of two runs saved in ``store``; its id."""
    import ragmeter
    from ragmeter.store import save_evaluation

    qrels = ragmeter.Qrels.from_dict({"q1": {"d1": 5, "d4": 4, "d2": 2}, "q2": {"d5": 3}})
    runs = [
        ragmeter.Run.from_dict({"q1": {"d1": 3.0, "d4": 2.0}, "q2": {"d6": 1.0}}, name="bm25"),
        ragmeter.Run.from_dict({"q1": {"d4": 3.0, "d2": 2.0}, "q2": {"d5": 1.0}}, name="dense"),
    ]
    evaluation = ragmeter.evaluate(runs, qrels, ["ndcg@10", "P@5", "mrr", "ra_nwg@10"])
    return save_evaluation(evaluation, url=str(store), name="example").id


def test_screenshots_of_report_pages(server: tuple[str, Path], page: Any, tmp_path: Path) -> None:
    base, folder = server
    _choose_name(page, base, "alice")
    page.goto(base + "/label/q1")
    for doc, key in zip(["d1", "d4", "d2"], "452", strict=True):
        page.keyboard.press(key)
        _wait_value(page, doc, key)
    shots = {
        "review": "/review?a=annotator:alice&b=qrels:llm.txt",
        "evaluate": "/evaluate?source=annotator:alice",
        "label": "/label/q1",
    }
    if importlib.util.find_spec("sqlalchemy") is not None:
        saved = _saved_evaluation(folder / "store.db")
        shots["evaluation"] = f"/evaluations/{saved}"
        if importlib.util.find_spec("matplotlib") is not None:
            shots["evaluation-report"] = f"/evaluations/{saved}/report"
    for name, url in shots.items():
        page.goto(base + url)
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path))
        assert_not_blank(path, VIEWPORT["width"], VIEWPORT["height"])


def test_screenshot_of_the_html_report(page: Any, tmp_path: Path) -> None:
    """The self-contained HTML report (``ragmeter report``), opened from a file."""
    html = pytest.importorskip("ragmeter.report.html", reason="the HTML report is not built")
    import ragmeter

    run_a = ragmeter.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d3": 1.0}})
    qrels = ragmeter.Qrels.from_dict({"q1": {"d1": 5, "d2": 2}, "q2": {"d3": 4}})
    evaluation = ragmeter.evaluate(run_a, qrels, ["ndcg@10", "P@5"])
    report = tmp_path / "report.html"
    html.write_html_report(report, evaluation)
    page.goto(report.as_uri())
    path = tmp_path / "report.png"
    page.screenshot(path=str(path))
    assert_not_blank(path, VIEWPORT["width"], VIEWPORT["height"])


def test_select_evidence_in_a_passage(server: tuple[str, Path], page: Any) -> None:
    """A selection inside a passage is saved as a span of its text, in code points, and
    exported for ``--spans``."""
    import json

    base, _ = server
    _choose_name(page, base, "alice")
    page.goto(base + "/label/q1")
    text = page.eval_on_selector("li#doc-d1 .ptext", "e => e.textContent")
    # select characters 2..7 of the passage (as a person dragging the mouse would)
    page.eval_on_selector(
        "li#doc-d1 .ptext",
        """e => {
            const node = e.firstChild, range = document.createRange();
            range.setStart(node, 2); range.setEnd(node, 7);
            const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
            e.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
        }""",
    )
    page.wait_for_selector("li#doc-d1 [data-spans] li")
    exported = page.evaluate("() => fetch('/export/spans.jsonl').then(r => r.text())")
    rows = [json.loads(line) for line in exported.splitlines()]
    assert [(r["doc_id"], r["start"], r["end"], r["annotator"]) for r in rows] == [
        ("d1", 2, 7, "alice")
    ]
    assert rows[0]["text"] == text[2:7]


#: passages whose DOM text the HTML parser would make differ from the stored text: CR LF
#: and a lone CR (both become LF), characters outside the BMP (two UTF-16 units each in
#: JavaScript, one code point in Python), a combining accent, and U+0000 (dropped)
TRICKY = {
    "d1": "Timetable\r\nLine 1\r\nTrams run every 10 minutes.",
    "d4": "Tickets \U0001f3ab\U0001f68b cost \u20ac2\rper ride; \U0001f600 trams run late.",
    "d2": "Cafe\u0301 menu\r\n\x00\r\nTrams run on Sundays.",
}


@pytest.fixture
def tricky_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The app serving passages with CR LF, a lone CR, emoji and U+0000 (:data:`TRICKY`)."""
    import json

    from webdata import DOCS

    paths = write_collection(tmp_path / "data")
    texts = {**DOCS, **TRICKY}
    paths["corpus"].write_text(
        "".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in texts.items())
    )
    config = build_config(**config_kwargs(paths, tmp_path))  # type: ignore[arg-type]
    with _serving(config) as url:
        yield url, tmp_path


def _select(page: Any, doc: str, target: str, nth: int = 0) -> None:
    """Select ``target`` in the passage's text as a person dragging the mouse would, across
    whatever elements (marks) hold it, and let go of the button."""
    page.eval_on_selector(
        f"li#doc-{doc} .ptext",
        """(e, [target, nth]) => {
            const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT), nodes = [];
            let all = "";
            while (walker.nextNode()) { nodes.push([walker.currentNode, all.length]);
                                        all += walker.currentNode.data; }
            let at = -1;
            for (let i = 0; i <= nth; i++) at = all.indexOf(target, at + 1);
            const place = (k) => { for (const [n, o] of nodes.slice().reverse())
                                       if (o <= k) return [n, k - o]; };
            const range = document.createRange();
            range.setStart(...place(at)); range.setEnd(...place(at + target.length));
            const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
            e.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
        }""",
        [target, nth],
    )


def _exported_spans(page: Any) -> list[tuple[str, int, int, str]]:
    import json

    text = page.evaluate("() => fetch('/export/spans.jsonl').then(r => r.text())")
    rows = [json.loads(line) for line in text.splitlines()]
    return [(r["doc_id"], r["start"], r["end"], r["text"]) for r in rows]


def test_evidence_offsets_are_of_the_stored_text(
    tricky_server: tuple[str, Path], page: Any, tmp_path: Path
) -> None:
    """Selections after CR LF, a lone CR, emoji and U+0000 are saved as characters of the
    stored text (Python's code points); reloaded, the spans are marked in the text and
    listed; one is removed with its button, and stays removed."""
    base, _ = tricky_server
    _choose_name(page, base, "alice")
    page.goto(base + "/label/q1")
    chosen = [("d1", "Trams run"), ("d4", "\U0001f600 trams"), ("d2", "Trams run on")]
    for n, (doc, target) in enumerate(chosen, start=1):
        _select(page, doc, target)
        page.wait_for_selector(f"li#doc-{doc} [data-spans] li")
        assert page.locator("[data-spans] li").count() == n
    # expected: where Python finds the words in the stored text
    expected = [(d, TRICKY[d].index(t), TRICKY[d].index(t) + len(t), t) for d, t in chosen]
    assert _exported_spans(page) == expected
    assert expected[0][1:3] == (19, 28)  # 'Timetable' 9 + CR LF 2 + 'Line 1' 6 + CR LF 2

    # an overlapping span on d4: the text is marked in pieces, each naming its spans
    _select(page, "d4", "trams run late")
    page.locator("li#doc-d4 [data-spans] li").nth(1).wait_for()

    page.reload()
    marks = {
        d: page.eval_on_selector_all(f"li#doc-{d} .ptext mark", "ms => ms.map(m => m.textContent)")
        for d in TRICKY
    }
    assert marks == {
        "d1": ["Trams run"],
        "d4": ["\U0001f600 ", "trams", " run late"],
        "d2": ["Trams run on"],
    }
    # the DOM holds the stored text code point for code point (U+0000 shown as U+FFFD)
    shown = page.eval_on_selector("li#doc-d2 .ptext", "e => e.textContent")
    assert shown == TRICKY["d2"].replace("\x00", "\ufffd")
    shot = tmp_path / "label-evidence.png"
    page.locator("li#doc-d4").scroll_into_view_if_needed()
    page.screenshot(path=str(shot))
    assert_not_blank(shot, VIEWPORT["width"], VIEWPORT["height"])

    # take back d1's span with its button: gone from the text, the list and the export
    page.click("li#doc-d1 [data-spans] button[data-remove]")
    page.wait_for_selector("li#doc-d1 .ptext mark", state="detached")
    assert page.locator("li#doc-d1 [data-spans] li").count() == 0
    assert [r[0] for r in _exported_spans(page)] == ["d4", "d2", "d4"]
    page.reload()
    assert page.locator("li#doc-d1 .ptext mark").count() == 0
    assert page.locator("[data-spans] li").count() == 3


def test_monitor_pages_in_the_browser(page: Any, tmp_path: Path) -> None:
    """From the navigation to the list of streams to a stream named with a ``/``: each
    judged measure a chart as wide as the page allows (not past it), the degraded day
    marked, the tables below; a screenshot at a normal width."""
    pytest.importorskip("sqlalchemy", reason="the store extra is not installed")
    from typer.testing import CliRunner

    from ragmeter.cli import app as cli

    runner = CliRunner()
    demo = ["monitor", "demo", str(tmp_path / "demo"), "--days", "3", "--degrade-day", "3"]
    assert runner.invoke(cli, demo).exit_code == 0
    url = f"sqlite:///{tmp_path / 'm.db'}"
    traces, labels = tmp_path / "demo" / "traces.json", tmp_path / "demo" / "labels.txt"
    run = ["monitor", str(traces), "--labels", str(labels), "--store", url, "--name", "team/search"]
    assert runner.invoke(cli, run).exit_code == 0
    config = build_config(**config_kwargs(write_collection(tmp_path / "data"), tmp_path))  # type: ignore[arg-type]
    config.store_url = url
    with _serving(config) as base:
        page.goto(base + "/")
        page.click("header nav a:text-is('Monitor')")
        page.wait_for_selector("#streams")
        page.click("#streams a:text-is('team/search')")
        page.wait_for_selector("svg.trend")
        assert page.inner_text("#stream-name") == "team/search"
        boxes = [svg.bounding_box() for svg in page.query_selector_all("svg.trend")]
        assert len(boxes) == 2
        for box in boxes:
            assert box["width"] > 600 and box["height"] > 150
            assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"]
        assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORT["width"]
        assert page.locator("svg.trend .alarm.worse").count() == 2
        shot = tmp_path / "monitor.png"
        page.screenshot(path=str(shot))
        assert_not_blank(shot, VIEWPORT["width"], VIEWPORT["height"])
        page.goto(base + "/evaluations")
        page.click("#store-streams a")
        page.wait_for_selector("#streams")
