"""Monitoring: the trend pages of the streams ``ragmeter monitor`` stored, and ``/metrics``,
the latest window of every stream in the Prometheus text exposition format (the numbers of
``ragmeter monitor metrics``, from the same stored figures)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from markupsafe import Markup
from starlette.responses import Response

from ragmeter.errors import RagmeterError
from ragmeter.web.state import INT64_MAX, BadInput, Web, open_store_or_reason

router = APIRouter()
#: the content type of the text exposition format
PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _window(text: str) -> int:
    from ragmeter.analysis.monitor import parse_window

    try:
        seconds = parse_window(text)
    except RagmeterError as exc:
        raise HTTPException(400, str(exc)) from None
    if seconds > INT64_MAX:  # the store's integers are 64-bit: never a query that overflows
        raise BadInput(f"window {text!r} is too long: at most {INT64_MAX} seconds")
    return seconds


def _store_url(web: Web) -> str:
    opened = open_store_or_reason(web.config.store_url)
    if isinstance(opened, str):
        raise HTTPException(404, opened)
    with opened as store:
        return str(store.url)


@router.get("/metrics", response_class=PlainTextResponse)
def metrics(web: Web, window: str = "1d") -> PlainTextResponse:
    from ragmeter.report.monitor import prometheus_text
    from ragmeter.workflows.monitor import stored_trends

    trends = stored_trends(_store_url(web), _window(window))
    return PlainTextResponse(prometheus_text(trends), media_type=PROMETHEUS_TYPE)


@dataclass(frozen=True)
class StreamRow:
    """One monitored stream at one window length, for the list of streams."""

    stream: str
    window: str
    windows: int
    first: str
    last: str
    measures: list[str]
    href: str


def monitored_streams(store: Any, only: str | None = None) -> list[StreamRow]:
    """Every stream of ``store`` (or the one named ``only``) with stored window figures,
    once per window length."""
    from ragmeter.analysis.monitor import window_label, window_text
    from ragmeter.store.monitor import load_windows, streams

    found = []
    for name in streams(store) if only is None else [only]:
        by_length: dict[int, list[Any]] = {}
        for row in load_windows(store, name):
            by_length.setdefault(row.window_s, []).append(row)
        for window_s, rows in sorted(by_length.items()):
            starts = sorted({r.window_start for r in rows})
            measures = list(dict.fromkeys(r.measure for r in rows))
            judged = [m for m in measures if not m.startswith("latency_ms.")]
            text = window_text(window_s)
            found.append(
                StreamRow(
                    stream=name,
                    window=text,
                    windows=len(starts),
                    first=window_label(starts[0], window_s),
                    last=window_label(starts[-1], window_s),
                    measures=judged,
                    href=stream_href(name, text),
                )
            )
    return found


def stream_href(stream: str, window: str) -> str:
    """The address of a stream's trend page: the name percent-encoded whole (a ``/`` in it
    included), so that every name has a page."""
    return f"/monitor/{quote(stream, safe='')}?{urlencode({'window': window})}"


@router.get("/monitor", response_class=HTMLResponse)
def streams_page(web: Web, request: Request) -> HTMLResponse:
    """The monitored streams of the store, each linked to its trend page."""
    opened = open_store_or_reason(web.config.store_url)
    if isinstance(opened, str):
        return web.page(request, "monitor_streams.html", reason=opened, rows=[])
    with opened as store:
        rows = monitored_streams(store)
        url = store.url
    return web.page(request, "monitor_streams.html", reason=None, rows=rows, store_url=url)


# ``:path``: a stream named ``a/b`` has a page too (its links encode the ``/`` as ``%2F``,
# which the server decodes before routing)
@router.get("/monitor/{stream:path}", response_class=HTMLResponse)
def trend_page(web: Web, request: Request, stream: str, window: str = "1d") -> Response:
    """A stream's trend: per measure a chart above its table, the latency last."""
    from ragmeter.report.monitor import trend_body
    from ragmeter.report.trend_svg import TREND_CSS
    from ragmeter.workflows.monitor import stored_trend

    if not stream:
        return RedirectResponse("/monitor", status_code=307)
    window_s = _window(window)
    url = _store_url(web)
    try:
        trend = stored_trend(url, stream, window_s)
    except RagmeterError as exc:
        raise HTTPException(404, str(exc)) from None
    opened = open_store_or_reason(url)
    with opened as store:
        lengths = monitored_streams(store, only=stream)
    return web.page(
        request,
        "monitor.html",
        stream=stream,
        shell_name=shlex.quote(stream),  # the command beside the page, ready to paste
        window=window,
        lengths=lengths,
        css=Markup(TREND_CSS),
        body=Markup(trend_body(trend)),
    )
