"""Labelling: the queries with their progress, grading a pool 1–5, rating sub-questions 0–5,
assigning nuggets 0–2 (not / partial / full support), undo, and the label event log."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from markupsafe import Markup, escape
from starlette.responses import Response

from ragmeter.web import security
from ragmeter.web.collection import Collection
from ragmeter.web.labels import ItemKey, LabelKind, SpanRow, value_range
from ragmeter.web.passages import passage_html, selection_matches, spans_html
from ragmeter.web.state import (
    ANNOTATOR,
    INT64_MAX,
    BadInput,
    Web,
    WebState,
    anchor,
    committed,
    count,
    int_field,
    local_path,
    nugget_item,
    payload,
    pool_item,
    reply,
    require_csrf,
)

router = APIRouter()
csrf = [Depends(require_csrf)]


@dataclass(frozen=True, slots=True)
class PassageRow:
    """One passage of a labelling page. Attributes rather than a dict: Jinja looks an
    attribute up first, and a page reads a few hundred of them."""

    index: int
    doc_id: str
    text: str | None
    #: the annotator's grade (label page) or ratings by sub-question (sub-question page)
    value: int | list[int | None] | None
    #: the pressed-state buttons of that grade, or of each rating
    buttons: Markup | list[Markup]


@router.get("/", response_class=HTMLResponse)
def index(web: Web, request: Request) -> HTMLResponse:
    coll = web.coll
    annotator = web.annotator_of(request)
    grades = web.mine("grade", annotator)
    ratings = web.mine("rating", annotator)
    rows = []
    for q in coll.query_ids:
        pool = coll.pools[q]
        n_q = coll.n_questions(q)
        rows.append(
            {
                "id": q,
                "text": coll.query_texts.get(q),
                "pool": len(pool),
                "graded": count(grades, q, coll),
                "questions": n_q,
                "rated": count(ratings, q, coll),
                "cells": len(pool) * n_q,
                "nuggets": web.progress("nugget", annotator, q)
                if q in coll.nugget_targets
                else None,
            }
        )
    return web.page(request, "index.html", rows=rows, annotators=web.db.annotators())


@router.post("/annotator", dependencies=csrf)
async def choose_annotator(request: Request) -> Response:
    form = await request.form()
    name = str(form.get("name", "")).strip()
    if not ANNOTATOR.fullmatch(name):
        raise BadInput(
            "annotator names are 1–40 letters, digits, spaces, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    target = local_path(str(form.get("next", "/")))
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        security.ANNOTATOR_COOKIE, name, httponly=True, samesite="strict", max_age=400 * 86400
    )
    return response


#: the slots of a passage row that each page fills in, and the markers rendered there
_SLOTS = ("value", "token", "buttons", "ptext", "spans")
_MARKERS = {slot: Markup(f"\x00{slot}\x00") for slot in _SLOTS}
_MARKER = re.compile("\x00(" + "|".join(_SLOTS) + ")\x00")
#: queries whose passage rows are kept rendered (each holds its passages' escaped text)
ROW_CACHE_QUERIES = 1024


def _passage_rows(web: WebState, query_id: str) -> list[tuple[str, str]]:
    """The label page's passage rows of ``query_id``, rendered once (``_label_row.html``) as
    :meth:`str.format` templates with fields ``{value}``, ``{token}``, ``{buttons}``,
    ``{ptext}`` and ``{spans}``, each with its passage's text as HTML (no span marked).

    Everything in a row but the annotator's grade and spans, the session's CSRF token and
    the buttons of that grade depends on the collection only, which does not change while
    the app runs: Jinja escaping the ids and texts of 40 passages on every page was most of
    its CPU.
    """
    key = ("label", query_id)
    rows: list[tuple[str, str]] | None = web.fragments.get(key)
    if rows is None:
        template = web.env.get_template("_label_row.html")
        coll = web.coll
        rows = [
            (
                _format_template(template.render(index=i, doc_id=d, query_id=query_id, **_MARKERS)),
                str(passage_html(coll.doc_texts.get(d))),
            )
            for i, d in enumerate(coll.pools[query_id], start=1)
        ]
        if len(web.fragments) >= ROW_CACHE_QUERIES:
            web.fragments.pop(next(iter(web.fragments)))  # the oldest
        web.fragments[key] = rows
    return rows


def _format_template(html: str) -> str:
    """``html`` with its markers turned into format fields (and its braces doubled)."""
    pieces = _MARKER.split(html)  # [html, slot, html, slot, …, html]
    return (
        "".join(
            "{" + p + "}" if i % 2 else p.replace("{", "{{").replace("}", "}}")
            for i, p in enumerate(pieces)
        )
        + "\n"
    )


def _spans_by_doc(web: WebState, annotator: str | None, query_id: str) -> dict[str, list[SpanRow]]:
    """The annotator's live spans in the passages of ``query_id``, by passage."""
    found: dict[str, list[SpanRow]] = {}
    if annotator:
        for span in web.db.spans(annotator, query_id=query_id):
            found.setdefault(span.doc_id, []).append(span)
    return found


def _span_reply(
    web: WebState, request: Request, annotator: str, query_id: str, doc_id: str
) -> dict[str, str]:
    """The passage's text with the annotator's spans marked, and their list, as HTML: what
    the page puts in place after a span is saved or taken back."""
    text = web.coll.doc_texts.get(doc_id)
    spans = web.db.spans(annotator, query_id=query_id, doc_id=doc_id)
    token = security.csrf_token(web.secret, request.state.session_id)
    return {"ptext": str(passage_html(text, spans)), "spans": str(spans_html(text, spans, token))}


def _query_page(
    web: WebState,
    request: Request,
    template: str,
    query_id: str,
    kind: LabelKind,
    annotator: str | None,
    neighbours: tuple[str | None, str | None],
    **context: Any,
) -> HTMLResponse:
    """The labelling page ``template`` of ``query_id``: the query's id and text, the
    annotator's progress on its labels of ``kind``, links to the queries before and after
    it (``neighbours``), and the page's own ``context``."""
    before, after = neighbours
    return web.page(
        request,
        template,
        query_id=query_id,
        query_text=web.coll.query_texts.get(query_id),
        progress=web.progress(kind, annotator, query_id),
        before=before,
        after=after,
        **context,
    )


# The label pages read only memory (the collection, the annotator's cached labels) and
# fill in passage rows rendered once: on the event loop they cost a quarter less CPU than
# with the hop to a worker thread and back, which under load is the throughput.
@router.get("/label/{query_id}", response_class=HTMLResponse)
async def label_page(web: Web, request: Request, query_id: str) -> HTMLResponse:
    coll = web.coll
    web.need_query(query_id)
    annotator = web.annotator_of(request)
    mine = web.mine("grade", annotator)
    raw_token = security.csrf_token(web.secret, request.state.session_id)
    token = str(escape(raw_token))
    spans = _spans_by_doc(web, annotator, query_id)
    rows = []
    for d, (row, ptext) in zip(coll.pools[query_id], _passage_rows(web, query_id), strict=True):
        grade = mine.get((query_id, d, 0))
        value = "" if grade is None else str(grade)
        marked, listed = ptext, ""
        if d in spans:
            text = coll.doc_texts.get(d)
            marked = str(passage_html(text, spans[d]))
            listed = str(spans_html(text, spans[d], raw_token))
        buttons = web.buttons("grade", grade)
        rows.append(
            row.format(value=value, token=token, buttons=buttons, ptext=marked, spans=listed)
        )
    return _query_page(
        web,
        request,
        "label.html",
        query_id,
        "grade",
        annotator,
        coll.neighbours(query_id),
        subquestions=coll.subquestions.get(query_id, []),
        rows=Markup("".join(rows)),
    )


@router.get("/subquestions/{query_id}", response_class=HTMLResponse)
async def subquestion_page(web: Web, request: Request, query_id: str) -> HTMLResponse:
    coll = web.coll
    web.need_query(query_id)
    questions = coll.subquestions.get(query_id, [])
    annotator = web.annotator_of(request)
    mine = web.mine("rating", annotator)
    passages = []
    for i, d in enumerate(coll.pools[query_id], start=1):
        ratings = [mine.get((query_id, d, n)) for n in range(1, len(questions) + 1)]
        buttons = [web.buttons("rating", r) for r in ratings]
        passages.append(PassageRow(i, d, coll.doc_texts.get(d), ratings, buttons))
    return _query_page(
        web,
        request,
        "subquestions.html",
        query_id,
        "rating",
        annotator,
        coll.neighbours(query_id),
        questions=questions,
        passages=passages,
    )


@dataclass(frozen=True, slots=True)
class NuggetRow:
    """One nugget of a target on the nugget page: the annotator's label and its buttons, and
    the labels of the assignment files (an LLM's) beside them."""

    number: int
    text: str
    importance: str
    value: int | None
    buttons: Markup
    given: list[tuple[str, int]]


@router.get("/nuggets/{query_id}", response_class=HTMLResponse)
async def nugget_page(web: Web, request: Request, query_id: str) -> HTMLResponse:
    coll = web.coll
    if query_id not in coll.nugget_targets:
        raise HTTPException(404, f"query {query_id!r} has no nuggets to assign")
    annotator = web.annotator_of(request)
    mine = web.mine("nugget", annotator)
    order = list(coll.nugget_targets)
    i = order.index(query_id)
    targets = []
    for target, text in coll.nugget_targets[query_id]:
        rows = []
        for n, (_, nugget, importance) in enumerate(coll.nuggets[query_id], start=1):
            key = (query_id, target, n)
            value = mine.get(key)
            given = [
                (name, cells[key])
                for name, cells in coll.assignment_sources.items()
                if key in cells
            ]
            rows.append(
                NuggetRow(n, nugget, importance, value, web.buttons("nugget", value), given)
            )
        targets.append({"id": target, "text": text, "rows": rows})
    neighbours = (order[i - 1] if i > 0 else None, order[i + 1] if i + 1 < len(order) else None)
    return _query_page(
        web, request, "nuggets.html", query_id, "nugget", annotator, neighbours, targets=targets
    )


#: a label to save: (kind, query id, doc id, value)
LabelItem = tuple[LabelKind, str, str, int]
#: reads a posted label: the label, and its sub-question or nugget number (``None``: a grade)
_LabelReader = Callable[[Collection, Mapping[str, Any]], tuple[LabelItem, int | None]]


async def _save_label(web: Web, request: Request, read: _LabelReader, page: str) -> Response:
    """Save the annotator's label that the posted form or JSON holds (``read`` checks it
    against the collection, and names its sub-question or nugget) and answer with it, the
    annotator's progress on the query, and (a form post) the item on ``page``."""
    annotator = web.need_annotator(request)
    data = await payload(request)
    item, question = read(web.coll, data)
    kind, query_id, doc_id, value = item
    # committed by the label database's writer (with the labels of other requests) while
    # this coroutine waits: the event loop goes on serving
    await committed(web.db.submit_record(annotator, *item, question=question))
    answer = {
        "query_id": query_id,
        "doc_id": doc_id,
        **({"question": question} if question is not None else {}),
        "grade" if kind == "grade" else "rating": value,
        "progress": web.progress(kind, annotator, query_id),
    }
    return reply(request, answer, f"{page}/{query_id}#{anchor(doc_id)}")


def _nugget_label(coll: Collection, data: Mapping[str, Any]) -> tuple[LabelItem, int | None]:
    """A posted nugget label (0-2) of a target of the query's nuggets, and its nugget."""
    query_id, target, number = nugget_item(coll, data)
    value = int_field(data, "rating", value_range("nugget"))
    return ("nugget", query_id, target, value), number


def _grade_label(coll: Collection, data: Mapping[str, Any]) -> tuple[LabelItem, int | None]:
    """A posted grade (1-5) of a passage in the query's pool."""
    query_id, doc_id = pool_item(coll, data)
    grade = int_field(data, "grade", value_range("grade"))
    return ("grade", query_id, doc_id, grade), None


def _rating_label(coll: Collection, data: Mapping[str, Any]) -> tuple[LabelItem, int | None]:
    """A posted rating (0-5) of a passage in the query's pool, and its sub-question."""
    query_id, doc_id = pool_item(coll, data)
    n_q = coll.n_questions(query_id)
    if n_q == 0:
        raise BadInput(f"query {query_id!r} has no sub-questions")
    question = int_field(data, "question", (1, n_q))
    rating = int_field(data, "rating", value_range("rating"))
    return ("rating", query_id, doc_id, rating), question


@router.post("/api/nugget", dependencies=csrf)
async def save_nugget(web: Web, request: Request) -> Response:
    return await _save_label(web, request, _nugget_label, "/nuggets")


@router.post("/api/label", dependencies=csrf)
async def save_grade(web: Web, request: Request) -> Response:
    return await _save_label(web, request, _grade_label, "/label")


@router.post("/api/span", dependencies=csrf)
async def save_span(web: Web, request: Request) -> Response:
    """An evidence span selected in a passage: characters ``[start, end)`` of its stored
    text (code points, as Python indexes it), graded 1–5 (5 by default). With ``text`` (the
    text the page selected) the offsets are checked against it: a mismatch is refused."""
    annotator = web.need_annotator(request)
    data = await payload(request)
    query_id, doc_id = pool_item(web.coll, data)
    text = web.coll.doc_texts.get(doc_id)
    if text is None:
        raise BadInput(f"passage {doc_id!r} has no text to select in")
    start = int_field(data, "start", (0, len(text) - 1))
    end = int_field(data, "end", (start + 1, len(text)))
    grade = int_field(data, "grade", value_range("grade")) if "grade" in data else 5
    selected = data.get("text")
    if selected is not None and not (
        isinstance(selected, str) and selection_matches(text, start, end, selected)
    ):
        # the page counted its selection differently from the stored text: never save a
        # span at the wrong place
        raise BadInput(
            f"the selection {str(selected)[:60]!r} is not characters [{start}, {end}) of "
            f"passage {doc_id!r} ({text[start:end][:60]!r}): nothing saved; reload the page"
        )
    span = await committed(web.db.submit_span(annotator, query_id, doc_id, start, end, grade))
    answer = {
        "id": span.id,
        "query_id": query_id,
        "doc_id": doc_id,
        "start": start,
        "end": end,
        "grade": grade,
        "text": text[start:end],
        "html": _span_reply(web, request, annotator, query_id, doc_id),
    }
    return reply(request, answer, f"/label/{query_id}#{anchor(doc_id)}")


@router.post("/api/span/remove", dependencies=csrf)
async def remove_span(web: Web, request: Request) -> Response:
    """Take back one of the annotator's spans (by its id)."""
    annotator = web.need_annotator(request)
    data = await payload(request)
    span_id = int_field(data, "id", (1, INT64_MAX))
    removed = await committed(web.db.submit_span_removal(annotator, span_id))
    if removed is None:
        raise BadInput(f"no span {span_id} of yours to remove")
    answer = {
        "removed": span_id,
        "query_id": removed.query_id,
        "doc_id": removed.doc_id,
        "html": _span_reply(web, request, annotator, removed.query_id, removed.doc_id),
    }
    return reply(request, answer, f"/label/{removed.query_id}#{anchor(removed.doc_id)}")


@router.post("/api/rating", dependencies=csrf)
async def save_rating(web: Web, request: Request) -> Response:
    return await _save_label(web, request, _rating_label, "/subquestions")


@router.post("/api/undo", dependencies=csrf)
async def undo(web: Web, request: Request) -> Response:
    annotator = web.need_annotator(request)
    data = await payload(request)
    kind = data.get("kind", "grade")
    if kind not in ("grade", "rating", "nugget"):
        raise BadInput("kind must be 'grade', 'rating' or 'nugget'")
    event = await committed(web.db.submit_undo(annotator, kind))
    if event is None:
        return reply(request, {"undone": None}, str(data.get("next") or "/"))
    key: ItemKey = event.key
    now = web.mine(kind, annotator).get(key)
    base = {"grade": "/label", "rating": "/subquestions", "nugget": "/nuggets"}[kind]
    url = f"{base}/{key[0]}#{anchor(key[1])}"
    answer = {
        "undone": {
            "query_id": key[0],
            "doc_id": key[1],
            "question": key[2] or None,
            "value": now,
        },
        "url": url,
        "progress": web.progress(kind, annotator, key[0])
        if web.coll.has_query(key[0]) or key[0] in web.coll.nugget_targets
        else None,
    }
    return reply(request, answer, url)


@router.get("/history", response_class=HTMLResponse)
def history(web: Web, request: Request, query_id: str | None = None) -> HTMLResponse:
    events = web.db.history(query_id=query_id, limit=300)
    return web.page(request, "history.html", events=events, query_id=query_id)
