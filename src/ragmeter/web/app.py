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
``POST /api/undo``           take back the annotator's last grade or rating ``{kind}``
``GET /review``              κ, confusion matrix, per-grade P/R of two label sources
                             (``kind=grade`` relevance, ``kind=rating`` sub-questions)
``POST /review/upload``      upload qrels (grades) or judgments JSONL (ratings)
``GET /evaluate``            evaluate the runs against the labels (a report page)
``GET /export``              export page; ``GET /export/qrels.txt``,
                             ``GET /export/judgments.jsonl`` download
``POST /export``             write an export into the server's export directory
``GET /history``             the label event log
``GET /evaluations``         stored evaluations (``--store``, else the default store);
                             ``/evaluations/{id}`` one of them, ``…/report`` its HTML report
==========================  ======================================================

Security (see :mod:`ragmeter.web.security`): an access token when configured, a CSRF token on
every POST, ids and values validated against the collection, exports confined to one
directory.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import Response

from ragmeter.errors import RagmeterError
from ragmeter.web import security
from ragmeter.web.collection import Collection
from ragmeter.web.export import ExportKind, export_text, safe_export_path
from ragmeter.web.labels import ItemKey, LabelDB, LabelKind, value_range
from ragmeter.web.review import review, source_labels, source_names

HERE = Path(__file__).parent
#: annotator names: short, printable, nothing that needs escaping in a cookie
_ANNOTATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
_UPLOAD_LIMIT = 20 << 20
EVALUATION_MEASURES = ("ndcg@10", "ra_nwg@10", "precision4p@10", "n_recall4p@10", "harm@10")


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
    """

    collection: Collection
    labels: Path
    export_dir: Path
    token: str | None = None
    store_url: str | None = None
    title: str = "ragmeter"
    allowed_hosts: frozenset[str] | None = None
    uploads: dict[str, dict[ItemKey, int]] = field(default_factory=dict)


class BadInput(HTTPException):
    """A 400 with a message for the person (JSON for scripts, a page for forms)."""

    def __init__(self, message: str) -> None:
        super().__init__(status_code=400, detail=message)


def create_app(config: WebConfig) -> FastAPI:
    """The application serving ``config`` (open the label database now)."""
    db = LabelDB(config.labels)
    secret = db.meta("secret") or ""
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = _fmt
    env.filters["anchor"] = _anchor
    app = FastAPI(title="ragmeter", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.config = config
    app.state.db = db
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    coll = config.collection

    # -- middleware: access token, session cookie ------------------------------------
    @app.middleware("http")
    async def guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if config.allowed_hosts is not None:
            host = security.host_name(request.headers.get("host", ""))
            if host not in config.allowed_hosts:
                return PlainTextResponse(f"400: unexpected Host {host!r}", status_code=400)
        given = request.query_params.get("token")
        if config.token is not None:
            if given is not None and security.token_valid(config.token, given):
                # once: remember it in a cookie and drop it from the address bar
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                url = request.url.path + (f"?{urlencode(rest)}" if rest else "")
                response: Response = RedirectResponse(url, status_code=303)
                response.set_cookie(
                    security.TOKEN_COOKIE, config.token, httponly=True, samesite="strict"
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
        session = request.cookies.get(security.SESSION_COOKIE)
        fresh = session is None
        request.state.session_id = session or security.new_session_id()
        response = await call_next(request)
        if fresh:
            response.set_cookie(
                security.SESSION_COOKIE,
                request.state.session_id,
                httponly=True,
                samesite="strict",
            )
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

    async def require_csrf(request: Request) -> None:
        """Every state-changing request: the session's CSRF token, and a same-origin Origin."""
        origin = request.headers.get("origin")
        if origin is not None and origin != "null":
            host = request.headers.get("host", "")
            if origin.split("://", 1)[-1] != host:
                raise HTTPException(403, "cross-origin request refused")
        token = request.headers.get(security.CSRF_HEADER)
        if token is None and _is_form(request):
            form = await request.form()
            value = form.get(security.CSRF_FIELD)
            token = value if isinstance(value, str) else None
        session = request.cookies.get(security.SESSION_COOKIE)
        if not security.csrf_valid(secret, session, token):
            raise HTTPException(403, "missing or invalid CSRF token: reload the page")

    csrf = [Depends(require_csrf)]

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if _wants_json(request):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return HTMLResponse(
            render(request, "error.html", status=exc.status_code, message=exc.detail),
            status_code=exc.status_code,
        )

    # -- helpers ----------------------------------------------------------------------
    def annotator_of(request: Request) -> str | None:
        name = request.cookies.get(security.ANNOTATOR_COOKIE)
        return name if name is not None and _ANNOTATOR.fullmatch(name) else None

    def need_annotator(request: Request) -> str:
        name = annotator_of(request)
        if name is None:
            raise BadInput("choose an annotator name first (on the start page)")
        return name

    def render(request: Request, template: str, **context: Any) -> str:
        page = env.get_template(template)
        return page.render(
            request=request,
            csrf_token=security.csrf_token(secret, request.state.session_id),
            annotator=annotator_of(request),
            title=config.title,
            has_subquestions=bool(coll.subquestions),
            **context,
        )

    def page(request: Request, template: str, **context: Any) -> HTMLResponse:
        return HTMLResponse(render(request, template, **context))

    def need_query(query_id: str) -> str:
        if not coll.has_query(query_id):
            raise HTTPException(404, f"unknown query {query_id!r}")
        return query_id

    def progress(kind: LabelKind, annotator: str | None, query_id: str) -> dict[str, int]:
        mine = db.current(kind, annotator=annotator).get(annotator, {}) if annotator else {}
        done = sum(1 for k in mine if k[0] == query_id and coll.in_pool(query_id, k[1]))
        pool = len(coll.pools[query_id])
        total = pool * (coll.n_questions(query_id) if kind == "rating" else 1)
        return {"done": done, "total": total}

    # -- pages ------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def index(request: Request) -> HTMLResponse:
        annotator = annotator_of(request)
        grades = db.current("grade", annotator=annotator).get(annotator, {}) if annotator else {}
        ratings = db.current("rating", annotator=annotator).get(annotator, {}) if annotator else {}
        rows = []
        for q in coll.query_ids:
            pool = coll.pools[q]
            n_q = coll.n_questions(q)
            rows.append(
                {
                    "id": q,
                    "text": coll.query_texts.get(q),
                    "pool": len(pool),
                    "graded": _count(grades, q, coll),
                    "questions": n_q,
                    "rated": _count(ratings, q, coll),
                    "cells": len(pool) * n_q,
                }
            )
        return page(request, "index.html", rows=rows, annotators=db.annotators())

    @app.post("/annotator", dependencies=csrf)
    async def choose_annotator(request: Request) -> Response:
        form = await request.form()
        name = str(form.get("name", "")).strip()
        if not _ANNOTATOR.fullmatch(name):
            raise BadInput(
                "annotator names are 1–40 letters, digits, spaces, '.', '_' or '-', "
                "starting with a letter or digit"
            )
        target = _local_path(str(form.get("next", "/")))
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            security.ANNOTATOR_COOKIE, name, httponly=True, samesite="strict", max_age=400 * 86400
        )
        return response

    @app.get("/label/{query_id}", response_class=HTMLResponse)
    def label_page(request: Request, query_id: str) -> HTMLResponse:
        need_query(query_id)
        annotator = annotator_of(request)
        mine = db.current("grade", annotator=annotator).get(annotator, {}) if annotator else {}
        before, after = coll.neighbours(query_id)
        passages = [
            {
                "index": i,
                "doc_id": d,
                "text": coll.doc_texts.get(d),
                "grade": mine.get((query_id, d, 0)),
            }
            for i, d in enumerate(coll.pools[query_id], start=1)
        ]
        return page(
            request,
            "label.html",
            query_id=query_id,
            query_text=coll.query_texts.get(query_id),
            subquestions=coll.subquestions.get(query_id, []),
            passages=passages,
            progress=progress("grade", annotator, query_id),
            before=before,
            after=after,
        )

    @app.get("/subquestions/{query_id}", response_class=HTMLResponse)
    def subquestion_page(request: Request, query_id: str) -> HTMLResponse:
        need_query(query_id)
        questions = coll.subquestions.get(query_id, [])
        annotator = annotator_of(request)
        mine = db.current("rating", annotator=annotator).get(annotator, {}) if annotator else {}
        before, after = coll.neighbours(query_id)
        passages = [
            {
                "index": i,
                "doc_id": d,
                "text": coll.doc_texts.get(d),
                "ratings": [mine.get((query_id, d, n)) for n in range(1, len(questions) + 1)],
            }
            for i, d in enumerate(coll.pools[query_id], start=1)
        ]
        return page(
            request,
            "subquestions.html",
            query_id=query_id,
            query_text=coll.query_texts.get(query_id),
            questions=questions,
            passages=passages,
            progress=progress("rating", annotator, query_id),
            before=before,
            after=after,
        )

    # -- labels -----------------------------------------------------------------------
    @app.post("/api/label", dependencies=csrf)
    async def save_grade(request: Request) -> Response:
        annotator = need_annotator(request)
        data = await _payload(request)
        query_id, doc_id = _pool_item(coll, data)
        grade = _int_field(data, "grade", value_range("grade"))
        db.record(annotator, "grade", query_id, doc_id, grade)
        reply = {
            "query_id": query_id,
            "doc_id": doc_id,
            "grade": grade,
            "progress": progress("grade", annotator, query_id),
        }
        return _reply(request, reply, f"/label/{query_id}#{_anchor(doc_id)}")

    @app.post("/api/rating", dependencies=csrf)
    async def save_rating(request: Request) -> Response:
        annotator = need_annotator(request)
        data = await _payload(request)
        query_id, doc_id = _pool_item(coll, data)
        n_q = coll.n_questions(query_id)
        if n_q == 0:
            raise BadInput(f"query {query_id!r} has no sub-questions")
        question = _int_field(data, "question", (1, n_q))
        rating = _int_field(data, "rating", value_range("rating"))
        db.record(annotator, "rating", query_id, doc_id, rating, question=question)
        reply = {
            "query_id": query_id,
            "doc_id": doc_id,
            "question": question,
            "rating": rating,
            "progress": progress("rating", annotator, query_id),
        }
        return _reply(request, reply, f"/subquestions/{query_id}#{_anchor(doc_id)}")

    @app.post("/api/undo", dependencies=csrf)
    async def undo(request: Request) -> Response:
        annotator = need_annotator(request)
        data = await _payload(request)
        kind = data.get("kind", "grade")
        if kind not in ("grade", "rating"):
            raise BadInput("kind must be 'grade' or 'rating'")
        event = db.undo(annotator, kind)
        if event is None:
            return _reply(request, {"undone": None}, str(data.get("next") or "/"))
        key: ItemKey = event.key
        now = db.current(kind, annotator=annotator).get(annotator, {}).get(key)
        base = "/label" if kind == "grade" else "/subquestions"
        url = f"{base}/{key[0]}#{_anchor(key[1])}"
        reply = {
            "undone": {
                "query_id": key[0],
                "doc_id": key[1],
                "question": key[2] or None,
                "value": now,
            },
            "url": url,
            "progress": progress(kind, annotator, key[0]) if coll.has_query(key[0]) else None,
        }
        return _reply(request, reply, url)

    @app.get("/history", response_class=HTMLResponse)
    def history(request: Request, query_id: str | None = None) -> HTMLResponse:
        events = db.history(query_id=query_id, limit=300)
        return page(request, "history.html", events=events, query_id=query_id)

    # -- review -----------------------------------------------------------------------
    @app.get("/review", response_class=HTMLResponse)
    def review_page(
        request: Request,
        a: str | None = None,
        b: str | None = None,
        kind: str = "grade",
        threshold: int | None = None,
    ) -> HTMLResponse:
        if kind not in ("grade", "rating"):
            raise BadInput("kind must be 'grade' or 'rating'")
        names = source_names(db, coll, config.uploads, kind)  # type: ignore[arg-type]
        if a is None:
            me = annotator_of(request)
            a = f"annotator:{me}" if me and f"annotator:{me}" in names else names[0]
        if b is None:
            files = [n for n in names if n.startswith(("qrels:", "judgments:"))]
            others = files or [n for n in names if n != a]
            b = others[0] if others else a
        threshold = (4 if kind == "grade" else 3) if threshold is None else threshold
        if not 1 <= threshold <= 5:
            raise BadInput("threshold must be within 1..5")
        try:
            la = source_labels(a, db, coll, config.uploads, kind)  # type: ignore[arg-type]
            lb = source_labels(b, db, coll, config.uploads, kind)  # type: ignore[arg-type]
        except RagmeterError as exc:
            raise BadInput(str(exc)) from None
        result = review(a, b, la, lb, kind=kind, threshold=threshold)  # type: ignore[arg-type]
        return page(
            request,
            "review.html",
            names=names,
            result=result,
            texts=coll.query_texts,
            in_pool=coll.in_pool,
            questions=coll.subquestions,
        )

    @app.post("/review/upload", dependencies=csrf)
    async def upload_labels(request: Request, file: UploadFile) -> Response:
        """A qrels file (grades), or a judgments ``.jsonl`` file (ratings)."""
        from ragmeter.io.judgments import read_judgments
        from ragmeter.io.trec import read_trec_qrels
        from ragmeter.web.collection import judgment_cells

        data = await file.read(_UPLOAD_LIMIT + 1)
        if len(data) > _UPLOAD_LIMIT:
            raise BadInput("uploads larger than 20 MiB are refused")
        base = Path(file.filename or "upload.txt").name or "upload.txt"
        ratings = base.lower().endswith((".jsonl", ".json"))
        family = "judgments" if ratings else "qrels"
        files = coll.judgment_sources if ratings else coll.qrels_sources
        taken = {**{f"{family}:{n}": 0 for n in files}, **config.uploads}
        name = f"{family}:{base}"
        n = 2
        while name in taken:
            name, n = f"{family}:{base} ({n})", n + 1
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / ("upload.jsonl" if ratings else "upload.txt")
            path.write_bytes(data)
            try:
                if ratings:
                    judged = read_judgments(path, questions=coll.subquestions or None)
                    labels = judgment_cells(judged)
                else:
                    qrels = read_trec_qrels(path)
                    labels = {
                        (q, d, 0): g for q, docs in qrels.to_dict().items() for d, g in docs.items()
                    }
            except RagmeterError as exc:
                raise BadInput(f"{base}: {exc}".replace(str(path), base)) from None
        config.uploads[name] = labels
        a = str((await request.form()).get("a") or "")
        query = {"kind": "rating" if ratings else "grade", "b": name, **({"a": a} if a else {})}
        return RedirectResponse(f"/review?{urlencode(query)}", status_code=303)

    # -- evaluate (a report page) -------------------------------------------------------
    @app.get("/evaluate", response_class=HTMLResponse)
    def evaluate_page(
        request: Request, source: str = "rule:latest", measure: list[str] | None = None
    ) -> HTMLResponse:
        from ragmeter.evaluation import evaluate

        names = source_names(db, coll, config.uploads)
        if source not in names:
            raise BadInput(f"unknown label source {source!r}")
        grades = source_labels(source, db, coll, config.uploads)
        measures = list(measure or EVALUATION_MEASURES)
        table: list[dict[str, Any]] = []
        error = None
        if coll.runs and grades:
            qrels: dict[str, dict[str, int]] = {}
            for (q, d, _), g in grades.items():
                qrels.setdefault(q, {})[d] = g
            try:
                result = evaluate(coll.runs, qrels, measures)
            except RagmeterError as exc:
                raise BadInput(str(exc)) from None
            for run in result.runs:
                means = run.means()
                table.append({"name": run.name, "values": [means.get(m) for m in measures]})
        elif not coll.runs:
            error = "no runs were given to the server (--run): nothing to evaluate"
        else:
            error = "no labels in this source yet"
        return page(
            request,
            "evaluate.html",
            names=names,
            source=source,
            measures=measures,
            table=table,
            n_labels=len(grades),
            n_queries=len({key[0] for key in grades}),
            error=error,
        )

    # -- export -----------------------------------------------------------------------
    def export_choice(annotator: str | None, rule: str) -> tuple[str | None, Any]:
        if annotator:
            if annotator not in db.annotators():
                raise BadInput(f"no labels by annotator {annotator!r}")
            return annotator, "latest"
        if rule not in ("latest", "majority"):
            raise BadInput("rule must be 'latest' or 'majority'")
        return None, rule

    @app.get("/export", response_class=HTMLResponse)
    def export_page(request: Request, written: str | None = None) -> HTMLResponse:
        files = (
            sorted(p.name for p in config.export_dir.glob("*") if p.is_file())
            if (config.export_dir.is_dir())
            else []
        )
        return page(
            request,
            "export.html",
            annotators=db.annotators(),
            export_dir=str(config.export_dir),
            files=files,
            written=written,
        )

    @app.get("/export/{filename}")
    def download(filename: str, annotator: str | None = None, rule: str = "latest") -> Response:
        kinds: dict[str, ExportKind] = {"qrels.txt": "qrels", "judgments.jsonl": "judgments"}
        if filename not in kinds:
            raise HTTPException(404, "downloads are qrels.txt and judgments.jsonl")
        who, how = export_choice(annotator, rule)
        text = export_text(kinds[filename], db, coll, annotator=who, rule=how)
        stem = f"{who or how}".replace(" ", "_")
        media = "text/plain" if kinds[filename] == "qrels" else "application/x-ndjson"
        return Response(
            text,
            media_type=f"{media}; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{stem}-{filename}"'},
        )

    @app.post("/export", dependencies=csrf)
    async def export_to_file(request: Request) -> Response:
        from ragmeter.io._common import atomic_write_text

        form = await request.form()
        kind = str(form.get("kind", "qrels"))
        if kind not in ("qrels", "judgments"):
            raise BadInput("kind must be 'qrels' or 'judgments'")
        who, how = export_choice(
            str(form.get("annotator") or "") or None, str(form.get("rule") or "latest")
        )
        filename = str(
            form.get("filename") or ("qrels.txt" if kind == "qrels" else "judgments.jsonl")
        )
        try:
            target = safe_export_path(config.export_dir, filename)
        except RagmeterError as exc:
            raise BadInput(str(exc)) from None
        text = export_text(kind, db, coll, annotator=who, rule=how)  # type: ignore[arg-type]
        config.export_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text)
        if _wants_json(request):
            return JSONResponse({"path": str(target), "lines": text.count("\n")})
        return RedirectResponse(f"/export?{urlencode({'written': target.name})}", status_code=303)

    # -- stored evaluations -------------------------------------------------------------
    @app.get("/evaluations", response_class=HTMLResponse)
    def evaluations(request: Request) -> HTMLResponse:
        opened = _open_store(config.store_url)
        if isinstance(opened, str):
            return page(request, "evaluations.html", available=False, reason=opened, rows=[])
        with opened as store:
            rows = store.list_evaluations(limit=500)
            url = store.url
        return page(request, "evaluations.html", available=True, rows=rows, store_url=url)

    @app.get("/evaluations/{evaluation_id}", response_class=HTMLResponse)
    def stored_evaluation(request: Request, evaluation_id: int) -> HTMLResponse:
        stored = _load_stored(config.store_url, evaluation_id)
        record, evaluation = stored.record, stored.evaluation
        measures = list(record.measures)
        per_query = [{"name": run.name, "queries": run.per_query()} for run in evaluation.runs]
        return page(
            request,
            "evaluation.html",
            record=record,
            measures=measures,
            per_query=per_query,
            has_report=_html_report_module() is not None,
        )

    @app.get("/evaluations/{evaluation_id}/report", response_class=HTMLResponse)
    def stored_report(evaluation_id: int) -> HTMLResponse:
        module = _html_report_module()
        if module is None:
            raise HTTPException(404, "the HTML report is not available in this installation")
        stored = _load_stored(config.store_url, evaluation_id)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "report.html"
            module.write_html_report(path, stored.evaluation)
            return HTMLResponse(path.read_text(encoding="utf-8"))

    return app


# -- the evaluation store ----------------------------------------------------------------


def _open_store(url: str | None) -> Any:
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
        return open_store(url)
    except RagmeterError as exc:
        return f"The evaluation store cannot be opened: {exc}"


def _load_stored(url: str | None, evaluation_id: int) -> Any:
    opened = _open_store(url)
    if isinstance(opened, str):
        raise HTTPException(404, opened)
    with opened as store:
        try:
            return store.load_evaluation(evaluation_id)
        except RagmeterError as exc:
            raise HTTPException(404, f"no stored evaluation #{evaluation_id}: {exc}") from None


def _html_report_module() -> Any:
    """``ragmeter.report.html`` when this installation has it (and its plotting library)."""
    import importlib

    try:
        return importlib.import_module("ragmeter.report.html")
    except ImportError:
        return None


# -- request helpers ---------------------------------------------------------------------


def _is_form(request: Request) -> bool:
    kind = request.headers.get("content-type", "")
    return kind.startswith(("application/x-www-form-urlencoded", "multipart/form-data"))


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    kind = request.headers.get("content-type", "")
    return "application/json" in accept or kind.startswith("application/json")


async def _payload(request: Request) -> dict[str, Any]:
    """The request's fields: a JSON object or a form."""
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = await request.json()
        except (ValueError, UnicodeDecodeError):
            raise BadInput("body is not valid JSON") from None
        if not isinstance(data, dict):
            raise BadInput("expected a JSON object")
        return data
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


def _reply(request: Request, data: Mapping[str, Any], redirect: str) -> Response:
    if _wants_json(request):
        return JSONResponse(dict(data))
    return RedirectResponse(_local_path(redirect), status_code=303)


def _pool_item(coll: Collection, data: Mapping[str, Any]) -> tuple[str, str]:
    query_id, doc_id = data.get("query_id"), data.get("doc_id")
    if not isinstance(query_id, str) or not coll.has_query(query_id):
        raise BadInput(f"unknown query_id {query_id!r}")
    if not isinstance(doc_id, str) or not coll.in_pool(query_id, doc_id):
        raise BadInput(f"doc_id {doc_id!r} is not in the pool of query {query_id!r}")
    return query_id, doc_id


def _int_field(data: Mapping[str, Any], name: str, bounds: tuple[int, int]) -> int:
    raw = data.get(name)
    if isinstance(raw, bool):
        raw = None
    if isinstance(raw, str) and re.fullmatch(r"-?\d{1,3}", raw.strip()):
        raw = int(raw)
    low, high = bounds
    if not isinstance(raw, int) or not low <= raw <= high:
        raise BadInput(f"{name} must be an integer in {low}..{high}, got {raw!r}")
    return raw


def _local_path(target: str) -> str:
    """A same-site path to redirect to (never another host)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _anchor(doc_id: str) -> str:
    return "doc-" + re.sub(r"[^A-Za-z0-9_-]", "_", doc_id)


def _count(labels: Mapping[ItemKey, int], query_id: str, coll: Collection) -> int:
    return sum(1 for k in labels if k[0] == query_id and coll.in_pool(query_id, k[1]))


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value != value:  # NaN
            return "NA"
        return f"{value:.{digits}f}"
    return str(value)
