"""Review: agreement (κ, confusion matrix, per-grade P/R) of two label sources, and uploads
of qrels (grades) or judgments (ratings) to review against."""

from __future__ import annotations

import tempfile
from pathlib import Path
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.responses import Response

from ragmeter.errors import RagmeterError
from ragmeter.web.review import review, source_labels, source_names
from ragmeter.web.state import BadInput, Web, require_csrf

router = APIRouter()
#: the largest upload read
UPLOAD_LIMIT = 20 << 20


@router.get("/review", response_class=HTMLResponse)
def review_page(
    web: Web,
    request: Request,
    a: str | None = None,
    b: str | None = None,
    kind: str = "grade",
    threshold: int | None = None,
    clip: str = "",
    map: str = "",
) -> HTMLResponse:
    coll, uploads = web.coll, web.config.uploads
    if kind not in ("grade", "rating", "nugget"):
        raise BadInput("kind must be 'grade', 'rating' or 'nugget'")
    names = source_names(web.db, coll, uploads, kind)  # type: ignore[arg-type]
    if a is None:
        me = web.annotator_of(request)
        a = f"annotator:{me}" if me and f"annotator:{me}" in names else names[0]
    if b is None:
        files = [n for n in names if n.startswith(("qrels:", "judgments:", "assignments:"))]
        others = files or [n for n in names if n != a]
        b = others[0] if others else a
    if threshold is None:
        threshold = {"grade": 4, "rating": 3, "nugget": 2}[kind]
    if not 1 <= threshold <= 5:
        raise BadInput("threshold must be within 1..5")
    if len(clip) > 100 or len(map) > 2000:
        raise BadInput("clip or grade map too long")
    try:
        la = source_labels(a, web.db, coll, uploads, kind)  # type: ignore[arg-type]
        lb = source_labels(b, web.db, coll, uploads, kind)  # type: ignore[arg-type]
    except RagmeterError as exc:
        raise BadInput(str(exc)) from None
    try:
        result = review(
            a,
            b,
            la,
            lb,
            kind=kind,  # type: ignore[arg-type]
            threshold=threshold,
            grade_map=map,
            clip=clip,
        )
    except RagmeterError as exc:
        raise BadInput(str(exc)) from None
    return web.page(
        request,
        "review.html",
        names=names,
        result=result,
        clip=clip,
        grade_map=map,
        texts=coll.query_texts,
        in_pool=coll.is_target if kind == "nugget" else coll.in_pool,
        questions=coll.subquestions
        if kind != "nugget"
        else {q: [text for _, text, _ in ns] for q, ns in coll.nuggets.items()},
    )


@router.post("/review/upload", dependencies=[Depends(require_csrf)])
async def upload_labels(web: Web, request: Request, file: UploadFile) -> Response:
    """A qrels file (grades), or a judgments ``.jsonl`` file (ratings)."""
    from ragmeter.io.judgments import read_judgments
    from ragmeter.io.trec import read_trec_qrels
    from ragmeter.web.collection import judgment_cells

    coll, uploads = web.coll, web.config.uploads
    data = await file.read(UPLOAD_LIMIT + 1)
    if len(data) > UPLOAD_LIMIT:
        raise BadInput("uploads larger than 20 MiB are refused")
    base = Path(file.filename or "upload.txt").name or "upload.txt"
    ratings = base.lower().endswith((".jsonl", ".json"))
    family = "judgments" if ratings else "qrels"
    files = coll.judgment_sources if ratings else coll.qrels_sources
    taken = {**{f"{family}:{n}": 0 for n in files}, **uploads}
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
    uploads[name] = labels
    a = str((await request.form()).get("a") or "")
    query = {"kind": "rating" if ratings else "grade", "b": name, **({"a": a} if a else {})}
    return RedirectResponse(f"/review?{urlencode(query)}", status_code=303)
