"""The monitor's pages, read as pictures: ``/monitor`` lists the streams (linked from every
page), a stream's page draws each judged measure (the windows' means over their interval
band, the baseline, the alarms) above its table, the latency last; a stream named ``a/b``
has a page; ``/evaluations`` says what a store of streams holds; ``monitor report`` writes
the same trend as a file."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")
pytest.importorskip("sqlalchemy", reason="the store extra is not installed")

from fastapi.testclient import TestClient

from ragmeter.cli import app
from ragmeter.report.trend_svg import Point, trend_svg
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from webdata import config_kwargs, write_collection

runner = CliRunner()
STREAMS = ("production", "team/search")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Three days of the demo's traffic, retrieval degraded on the third, stored as two
    streams (one named with a ``/``)."""
    folder = tmp_path_factory.mktemp("monitor")
    demo = ["monitor", "demo", str(folder), "--days", "3", "--degrade-day", "3"]
    assert runner.invoke(app, demo).exit_code == 0
    url = f"sqlite:///{folder / 'monitor.db'}"
    for name in STREAMS:
        args = ["monitor", str(folder / "traces.json"), "--labels", str(folder / "labels.txt")]
        done = runner.invoke(app, [*args, "--store", url, "--name", name])
        assert done.exit_code == 0, done.output
    return url


@pytest.fixture
def client(store: str, tmp_path: Path) -> TestClient:
    config = build_config(**config_kwargs(write_collection(tmp_path / "data"), tmp_path))  # type: ignore[arg-type]
    config.store_url = store
    return TestClient(create_app(config))


def _stored(store: str, stream: str) -> list[Any]:
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_windows

    with open_store(store, create=False) as opened:
        return load_windows(opened, stream, 86400)


def test_every_page_links_the_monitor(client: TestClient) -> None:
    for url in ("/", "/evaluations", "/monitor"):
        assert '<a href="/monitor"' in client.get(url).text


def test_monitor_lists_the_streams_with_links_that_work(client: TestClient) -> None:
    """Before: ``/monitor`` was a 404, and a stream named ``team/search`` had no page."""
    page = client.get("/monitor")
    assert page.status_code == 200
    links = re.findall(r'<td><a href="([^"]+)">([^<]+)</a></td>', page.text)
    assert links == [
        ("/monitor/production?window=1d", "production"),
        ("/monitor/team%2Fsearch?window=1d", "team/search"),
    ]
    for href, name in links:
        trend = client.get(href)
        assert trend.status_code == 200, trend.text
        assert f'<span id="stream-name">{name}</span>' in trend.text
    # spelled with its slash, the address finds the page too
    assert client.get("/monitor/team/search").status_code == 200
    assert client.get("/monitor/team").status_code == 404


def test_trend_page_draws_each_measure_before_its_table(client: TestClient, store: str) -> None:
    """Per judged measure: a chart (band, mean line, a dot per window, the baseline at the
    first window's mean, an alarm on the degraded day) then its table; the measures before
    the latency; quantile headers over the latencies; no column left empty."""
    text = client.get("/monitor/production").text
    rows = _stored(store, "production")
    judged = list(dict.fromkeys(r.measure for r in rows if not r.measure.startswith("latency")))
    assert len(judged) == 2
    charts = re.findall(r'<svg class="trend".*?</svg>', text, flags=re.S)
    assert len(charts) == len(judged)
    assert text.index("<svg") < text.index('<table class="summary"') < text.index('id="latency"')
    for measure, chart in zip(judged, charts, strict=True):
        first = min((r for r in rows if r.measure == measure), key=lambda r: r.window_start)
        assert f"baseline {first.mean:.4f} (first window, 2026-01-05)" in chart
        assert chart.count('class="band"') == 1 and chart.count('class="mean"') == 1
        # days 1 and 2 alike, day 3 degraded: one alarm, a drop, on 2026-01-07
        assert chart.count('class="alarm worse"') == 1 and "better" not in chart
        assert re.search(r'class="alarm worse">.*?<title>2026-01-07: ', chart)
    latency = text[text.index('id="latency"') :]
    assert '<th class="num">p50 (ms)</th>' in latency and ">mean<" not in latency
    # no empty cell in the measures' tables (before: empty interval / change columns)
    measures_part = text[: text.index('id="latency"')]
    assert '<td class="num"></td>' not in measures_part and "<td></td>" not in measures_part
    assert "change vs previous window" in measures_part and "first window</td>" in measures_part


def test_evaluations_says_what_a_store_of_streams_holds(client: TestClient) -> None:
    """Before: "The store is empty." over a store of monitored streams."""
    page = client.get("/evaluations").text
    assert "The store is empty" not in page
    assert "No saved evaluation in this store." in page
    assert (
        "It holds 2 monitored streams (production, team/search): see "
        '<a href="/monitor">Monitor</a>.' in page
    )


def test_monitor_report_file_has_the_charts(store: str, tmp_path: Path) -> None:
    out = tmp_path / "m.html"
    done = runner.invoke(app, ["monitor", "report", "--store", store, "-o", str(out)])
    assert done.exit_code == 0, done.output
    html = out.read_text(encoding="utf-8")
    assert html.count('<svg class="trend"') == 2
    assert html.index('<svg class="trend"') < html.index('id="latency"')
    assert "<script" not in html and "http://" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )


def test_chart_geometry() -> None:
    """Hand-placed: three windows 0.2, NaN, 0.6 on a 760 × 220 chart (plot area x 56..716,
    y 16..180): the line breaks at the missing window, the band covers the windows with an
    interval, the baseline sits at 0.2."""
    points = [
        Point("d1", 0.2, 0.1, 0.3, 5),
        Point("d2", math.nan, math.nan, math.nan, 0),
        Point("d3", 0.6, math.nan, math.nan, 5, alarm="better"),
    ]
    svg = trend_svg(points, baseline=0.2, baseline_label="baseline 0.2", title="m")
    # y range: 0.1..0.6 padded by 8% of 0.5 = 0.04 → 0.06..0.64; y(v) = 16 + 164 (0.64 − v)/0.58
    y = lambda v: 16 + 164 * (0.64 - v) / 0.58  # noqa: E731
    assert svg.count("<polyline") == 2  # d1 alone, d3 alone: no line across the gap
    assert f'<polygon class="band" points="56.0,{y(0.3):.1f} 56.0,{y(0.1):.1f}"/>' in svg
    assert f'y1="{y(0.2):.1f}"' in svg and "baseline 0.2" in svg
    assert f'<g class="alarm better"><circle cx="716.0" cy="{y(0.6):.1f}"' in svg
    assert trend_svg([points[1]], baseline=math.nan, baseline_label="", title="m") == ""
