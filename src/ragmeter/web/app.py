"""The FastAPI application of ``ragmeter serve``: label, review, evaluate and export.

Pages are rendered on the server (Jinja2); a small script adds keyboard shortcuts and saves
labels with ``fetch`` — every action also works as a plain form post. Routes:

==========================  ======================================================
``GET /``                    queries with each one's progress; choose an annotator
``POST /annotator``          set the annotator name (cookie)
``GET /label/{qid}``         grade the pool of a query 1–5 (keys 1–5, j/k, arrows, u)
``POST /api/label``          save a grade ``{query_id, doc_id, grade}``
``GET /subquestions/{qid}``  rate how well each passage answers each sub-question 0–5
``POST /api/rating``         save a rating ``{query_id, doc_id, question, rating}``
``GET /nuggets/{qid}``       assign each nugget to each answer and passage 0–2
``POST /api/nugget``         save a nugget label ``{query_id, doc_id, question, rating}``
                             (``doc_id``: a passage, or ``answer:RUN``)
``POST /api/undo``           take back the annotator's last label ``{kind}``
``GET /review``              κ, confusion matrix, per-grade P/R of two label sources
                             (``kind=grade`` relevance, ``kind=rating`` sub-questions,
                             ``kind=nugget`` nugget assignments)
``POST /review/upload``      upload qrels (grades) or judgments JSONL (ratings)
``GET /evaluate``            evaluate the runs against the labels (a report page)
``GET /calibration``         κ and α of the human against the LLM labels (``--llm-qrels``)
                             and each run's PPI estimates (JSON with ``Accept``)
``GET /export``              export page; ``GET /export/qrels.txt``,
                             ``GET /export/judgments.jsonl``,
                             ``GET /export/assignments.jsonl`` download
``POST /export``             write an export into the server's export directory
``GET /history``             the label event log
``GET /evaluations``         stored evaluations (``--store``, else the default store);
                             ``/evaluations/{id}`` one of them, ``…/report`` its HTML report
``GET /monitor/{stream}``    the trend page of a monitored stream (``?window=1d``)
``GET /metrics``             every stream's latest window, Prometheus text format
==========================  ======================================================

Security (see :mod:`ragmeter.web.security`): an access token when configured, a CSRF token on
every POST, ids and values validated against the collection, exports confined to one
directory, bodies over a small limit refused before they are read (see
:mod:`ragmeter.web.limits`).
"""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragmeter.web import security
from ragmeter.web.limits import BodyLimit, HttpMiddleware
from ragmeter.web.routes import (
    calibrating,
    evaluations,
    exports,
    labelling,
    monitoring,
    reviewing,
)
from ragmeter.web.state import HERE, BadInput, WebConfig, WebState, wants_json, web_state

__all__ = ["ROUTERS", "BadInput", "WebConfig", "create_app"]

#: the routers of the app, by concern, in the order they are included
ROUTERS = (
    labelling.router,
    reviewing.router,
    evaluations.router,
    calibrating.router,
    exports.router,
    monitoring.router,
)


def create_app(config: WebConfig) -> FastAPI:
    """The application serving ``config`` (open the label database now): the routers of
    :mod:`ragmeter.web.routes` behind the access guard."""
    app = FastAPI(title="ragmeter", docs_url=None, redoc_url=None, openapi_url=None)
    web = WebState(config)
    app.state.web = web
    app.state.config = config
    app.state.db = web.db
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.exception_handler(HTTPException)(http_error)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(Guard, config=config)
    # outermost: a body over its limit is refused before anything reads it
    app.add_middleware(BodyLimit, max_body=config.max_body, max_upload=config.max_upload)
    return app


class Guard(HttpMiddleware):
    """Every request: the allowed Host names, the access token (taken once from the URL into
    a cookie), the session cookie, and headers against framing and sniffing.

    A plain ASGI middleware: unlike a ``BaseHTTPMiddleware`` it adds no task group and no
    body stream per request, which was a large part of a label's cost under load.
    """

    def __init__(self, app: ASGIApp, config: WebConfig) -> None:
        super().__init__(app)
        self.config = config

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        refused = self.refusal(request)
        if refused is not None:
            await refused(scope, receive, send)
            return
        session = request.cookies.get(security.SESSION_COOKIE)
        request.state.session_id = session or security.new_session_id()
        extra = [(b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff")]
        extra.append((b"referrer-policy", b"same-origin"))
        if session is None:
            secure = request.url.scheme == "https"
            cookie = _cookie(security.SESSION_COOKIE, request.state.session_id, secure=secure)
            extra.append((b"set-cookie", cookie))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in extra:
                    if name == b"set-cookie":
                        headers.append("set-cookie", value.decode("latin-1"))
                    else:
                        headers.setdefault(name.decode(), value.decode())
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def refusal(self, request: Request) -> Response | None:
        """The answer to a request refused (or redirected) before any route sees it."""
        config = self.config
        if config.allowed_hosts is not None:
            host = security.host_name(request.headers.get("host", ""))
            if host not in config.allowed_hosts:
                return PlainTextResponse(f"400: unexpected Host {host!r}", status_code=400)
        if config.token is None:
            return None
        given = request.query_params.get("token")
        if given is not None and security.token_valid(config.token, given):
            # once: remember it in a cookie and drop it from the address bar
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            url = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response: Response = RedirectResponse(url, status_code=303)
            response.set_cookie(
                security.TOKEN_COOKIE,
                config.token,
                httponly=True,
                samesite="strict",
                secure=request.url.scheme == "https",  # over TLS: never sent in clear
            )
            return response
        presented = request.headers.get(security.TOKEN_HEADER) or request.cookies.get(
            security.TOKEN_COOKIE
        )
        if not security.token_valid(config.token, presented):
            return PlainTextResponse(
                "401: this server needs its access token: open the URL that "
                "'ragmeter serve' printed (…/?token=…)",
                status_code=401,
            )
        return None


def _cookie(name: str, value: str, *, secure: bool = False) -> bytes:
    """The ``Set-Cookie`` value of an HttpOnly, SameSite=Strict session cookie (Secure when
    served over TLS)."""
    response = Response()
    response.set_cookie(name, value, httponly=True, samesite="strict", secure=secure)
    return response.headers["set-cookie"].encode("latin-1")


async def http_error(request: Request, exc: HTTPException) -> Response:
    """Errors as JSON for scripts, as a page for people."""
    if wants_json(request):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    page = web_state(request).render(
        request, "error.html", status=exc.status_code, message=exc.detail
    )
    return HTMLResponse(page, status_code=exc.status_code)
