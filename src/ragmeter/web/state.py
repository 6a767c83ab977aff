"""What every route of the web app shares: the configuration, the label database, the page
templates, the checks of a request (CSRF, annotator, query ids, field values) and the replies.

The routers (:mod:`ragmeter.web.routes`) reach the app's :class:`WebState` through
:func:`web_state`; :func:`ragmeter.web.app.create_app` builds it once per app.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from fastapi import Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.responses import Response

from ragmeter.errors import RagmeterError
from ragmeter.web import security
from ragmeter.web.collection import Collection
from ragmeter.web.labels import ItemKey, LabelDB, LabelKind
from ragmeter.web.limits import MAX_BODY, MAX_UPLOAD

if TYPE_CHECKING:
    from ragmeter.web.calibration import LearnedGrader

HERE = Path(__file__).parent
T = TypeVar("T")
#: annotator names: short, printable, nothing that needs escaping in a cookie
ANNOTATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
#: the largest integer SQLite (and so the label database and the store) holds
INT64_MAX = 2**63 - 1


@dataclass
class WebConfig:
    """What the app serves and where it writes.

    Attributes:
        collection: queries, pools, sub-questions, qrels to review against.
        labels: path of the label database (created if absent).
        export_dir: the only directory exports are written to (created on first export).
        token: access token; ``None`` = none required (loopback only, checked by the CLI).
        store_url: evaluation store to browse (``None``: the default store, if it exists).
        title: shown in the header.
        allowed_hosts: host names the ``Host`` header may carry (``None``: any). Bound to
            loopback without a token, ``ragmeter serve`` allows only the loopback names, so
            that a web page whose domain is re-pointed at 127.0.0.1 (DNS rebinding) cannot
            use the app.
        uploads: label sources uploaded on the review page, by name.
        max_body: the largest JSON or form body read, in bytes (larger: 413).
        max_upload: the largest file upload body read, in bytes (larger: 413).
        learned: a learned judge (``--learned``) whose agreement with the human labels the
            Calibration page gives.
    """

    collection: Collection
    labels: Path
    export_dir: Path
    token: str | None = None
    store_url: str | None = None
    title: str = "ragmeter"
    allowed_hosts: frozenset[str] | None = None
    uploads: dict[str, dict[ItemKey, int]] = field(default_factory=dict)
    max_body: int = MAX_BODY
    max_upload: int = MAX_UPLOAD
    learned: LearnedGrader | None = None


class BadInput(HTTPException):
    """A 400 with a message for the person (JSON for scripts, a page for forms)."""

    def __init__(self, message: str) -> None:
        super().__init__(status_code=400, detail=message)


class WebState:
    """The app's configuration, label database, CSRF secret and templates, with the helpers
    the routes share."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.coll = config.collection
        self.db = LabelDB(config.labels)
        self.secret = self.db.meta("secret") or ""
        self.env = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # the templates ship with the package: no stat per page
        )
        self.env.filters["fmt"] = fmt
        self.env.filters["anchor"] = anchor
        #: parts of pages rendered once (they depend on the collection only), by page and key
        self.fragments: dict[tuple[str, str], Any] = {}
        self._buttons = {
            "grade": self._button_states("grade", "g", range(1, 6)),
            "rating": self._button_states("rating", "r", range(0, 6)),
            "nugget": self._button_states("rating", "n", range(0, 3)),
        }

    def _button_states(self, name: str, prefix: str, values: range) -> dict[int | None, Markup]:
        template = self.env.get_template("_buttons.html")
        return {
            current: Markup(
                template.render(name=name, prefix=prefix, values=values, current=current)
            )
            for current in (None, *values)
        }

    def buttons(self, kind: LabelKind, current: int | None) -> Markup:
        """The buttons of one ``grade`` or ``rating`` with ``current`` pressed (none if
        ``None`` or out of the scale), rendered once when the app starts."""
        states = self._buttons[kind]
        return states.get(current, states[None])

    def annotator_of(self, request: Request) -> str | None:
        name = request.cookies.get(security.ANNOTATOR_COOKIE)
        return name if name is not None and ANNOTATOR.fullmatch(name) else None

    def need_annotator(self, request: Request) -> str:
        name = self.annotator_of(request)
        if name is None:
            raise BadInput("choose an annotator name first (on the start page)")
        return name

    def render(self, request: Request, template: str, **context: Any) -> str:
        page = self.env.get_template(template)
        return page.render(
            request=request,
            csrf_token=security.csrf_token(self.secret, request.state.session_id),
            annotator=self.annotator_of(request),
            title=self.config.title,
            has_subquestions=bool(self.coll.subquestions),
            has_nuggets=bool(self.coll.nugget_targets),
            **context,
        )

    def page(self, request: Request, template: str, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.render(request, template, **context))

    def need_query(self, query_id: str) -> str:
        if not self.coll.has_query(query_id):
            raise HTTPException(404, f"unknown query {query_id!r}")
        return query_id

    def mine(self, kind: LabelKind, annotator: str | None) -> dict[ItemKey, int]:
        """The annotator's current labels of ``kind`` (none without an annotator)."""
        if not annotator:
            return {}
        return self.db.current(kind, annotator=annotator).get(annotator, {})

    def progress(self, kind: LabelKind, annotator: str | None, query_id: str) -> dict[str, int]:
        coll = self.coll
        mine = self.mine(kind, annotator)
        if kind == "nugget":
            targets = coll.nugget_targets.get(query_id, [])
            done = sum(1 for k in mine if k[0] == query_id and coll.is_target(query_id, k[1]))
            return {"done": done, "total": len(targets) * len(coll.nuggets.get(query_id, []))}
        done = sum(1 for k in mine if k[0] == query_id and coll.in_pool(query_id, k[1]))
        pool = len(coll.pools[query_id])
        total = pool * (coll.n_questions(query_id) if kind == "rating" else 1)
        return {"done": done, "total": total}


def web_state(request: Request) -> WebState:
    """The :class:`WebState` of the app serving ``request``."""
    state: WebState = request.app.state.web
    return state


async def _web_dependency(request: Request) -> WebState:
    """:func:`web_state` as a coroutine: FastAPI runs a plain function dependency in a worker
    thread, and that hop cost every request (every page, every save) more CPU than rendering
    a label page."""
    return web_state(request)


#: a route's parameter ``web: Web`` receives the app's :class:`WebState`
Web = Annotated[WebState, Depends(_web_dependency)]


async def require_csrf(request: Request) -> None:
    """Every state-changing request: the session's CSRF token, and a same-origin Origin."""
    origin = request.headers.get("origin")
    if origin is not None:
        host = request.headers.get("host", "")
        if not security.same_origin(origin, request.url.scheme, host):
            raise HTTPException(403, "cross-origin request refused")
    token = request.headers.get(security.CSRF_HEADER)
    if token is None and is_form(request):
        form = await request.form()
        value = form.get(security.CSRF_FIELD)
        token = value if isinstance(value, str) else None
    session = request.cookies.get(security.SESSION_COOKIE)
    if not security.csrf_valid(web_state(request).secret, session, token):
        raise HTTPException(403, "missing or invalid CSRF token: reload the page")


# -- the evaluation store ----------------------------------------------------------------


def open_store_or_reason(url: str | None) -> Any:
    """The store to browse (``--store``, else the default one if it exists), or a sentence
    saying why there is none."""
    try:
        from ragmeter.store import default_store_exists, open_store
    except ImportError:
        return "The evaluation store is not part of this installation."
    if url is None and not default_store_exists():
        return (
            "No evaluation store yet: save evaluations with 'ragmeter evaluate … --save', "
            "or start the server with --store URL."
        )
    try:
        return open_store(url, create=False)  # browsing never creates a store
    except RagmeterError as exc:
        return f"The evaluation store cannot be opened: {exc}"


def load_stored(url: str | None, evaluation_id: int) -> Any:
    if not 0 < evaluation_id <= INT64_MAX:  # an id the store's integers cannot hold
        raise HTTPException(404, f"no stored evaluation #{evaluation_id}")
    opened = open_store_or_reason(url)
    if isinstance(opened, str):
        raise HTTPException(404, opened)
    with opened as store:
        try:
            return store.load_evaluation(evaluation_id)
        except RagmeterError as exc:
            raise HTTPException(404, f"no stored evaluation #{evaluation_id}: {exc}") from None


def html_report_module() -> Any:
    """``ragmeter.report.html`` when this installation has it (and its plotting library)."""
    import importlib

    try:
        return importlib.import_module("ragmeter.report.html")
    except ImportError:
        return None


# -- request helpers ---------------------------------------------------------------------


def is_form(request: Request) -> bool:
    kind = request.headers.get("content-type", "")
    return kind.startswith(("application/x-www-form-urlencoded", "multipart/form-data"))


def wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    kind = request.headers.get("content-type", "")
    return "application/json" in accept or kind.startswith("application/json")


async def payload(request: Request) -> dict[str, Any]:
    """The request's fields: a JSON object or a form."""
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = await request.json()
        except (ValueError, UnicodeDecodeError):
            raise BadInput("body is not valid JSON") from None
        except RecursionError:
            raise BadInput("body is JSON nested too deeply; expected a flat object") from None
        if not isinstance(data, dict):
            raise BadInput("expected a JSON object")
        return data
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def committed(write: Future[T]) -> T:
    """The result of a label database write, awaited without holding the event loop; a
    write the database refused (a full disk, a read-only file) is a 503 saying that nothing
    was saved, so the page can say so and the person try again."""
    try:
        return await asyncio.wrap_future(write)
    except sqlite3.Error as exc:
        raise HTTPException(
            503, f"the label was not saved ({exc}); nothing was written: try again"
        ) from None


def reply(request: Request, data: Mapping[str, Any], redirect: str) -> Response:
    if wants_json(request):
        return JSONResponse(dict(data))
    return RedirectResponse(local_path(redirect), status_code=303)


def pool_item(coll: Collection, data: Mapping[str, Any]) -> tuple[str, str]:
    query_id, doc_id = data.get("query_id"), data.get("doc_id")
    if not isinstance(query_id, str) or not coll.has_query(query_id):
        raise BadInput(f"unknown query_id {query_id!r}")
    if not isinstance(doc_id, str) or not coll.in_pool(query_id, doc_id):
        raise BadInput(f"doc_id {doc_id!r} is not in the pool of query {query_id!r}")
    return query_id, doc_id


def nugget_item(coll: Collection, data: Mapping[str, Any]) -> tuple[str, str, int]:
    """(query, target, nugget number) of a nugget label: a known query with nuggets, one of
    the texts its nuggets are assigned to, a nugget number 1..n."""
    query_id, target = data.get("query_id"), data.get("doc_id")
    if not isinstance(query_id, str) or query_id not in coll.nugget_targets:
        raise BadInput(f"query_id {query_id!r} has no nuggets to assign")
    if not isinstance(target, str) or not coll.is_target(query_id, target):
        raise BadInput(f"{target!r} is not a text the nuggets of {query_id!r} are assigned to")
    return query_id, target, int_field(data, "question", (1, len(coll.nuggets[query_id])))


def int_field(data: Mapping[str, Any], name: str, bounds: tuple[int, int]) -> int:
    raw = data.get(name)
    if isinstance(raw, bool):
        raw = None
    if isinstance(raw, str) and re.fullmatch(r"-?[0-9]{1,19}", raw.strip()):
        raw = int(raw)  # ASCII digits only: int() also reads other scripts' digits
    low, high = bounds
    if not isinstance(raw, int) or not low <= raw <= high:
        given = repr(raw)
        given = given if len(given) <= 40 else given[:37] + "…"  # a number of 4000 digits
        raise BadInput(f"{name} must be an integer in {low}..{high}, got {given}")
    return raw


def local_path(target: str) -> str:
    """A same-site path to redirect to (never another host)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def anchor(doc_id: str) -> str:
    return "doc-" + re.sub(r"[^A-Za-z0-9_-]", "_", doc_id)


def count(labels: Mapping[ItemKey, int], query_id: str, coll: Collection) -> int:
    return sum(1 for k in labels if k[0] == query_id and coll.in_pool(query_id, k[1]))


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value != value:  # NaN
            return "NA"
        return f"{value:.{digits}f}"
    return str(value)
