"""Monitoring: the trend pages of the streams ``ragmeter monitor`` stored, and ``/metrics``,
the latest window of every stream in the Prometheus text exposition format (the numbers of
``ragmeter monitor metrics``, from the same stored figures)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, PlainTextResponse

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


@router.get("/monitor/{stream}", response_class=HTMLResponse)
def trend_page(web: Web, request: Request, stream: str, window: str = "1d") -> HTMLResponse:
    from ragmeter.report.monitor import trend_html
    from ragmeter.workflows.monitor import stored_trend

    try:
        trend = stored_trend(_store_url(web), stream, _window(window))
    except RagmeterError as exc:
        raise HTTPException(404, str(exc)) from None
    return HTMLResponse(trend_html(trend))
