"""Exports: qrels and judgments of the labels, downloaded or written into the server's one
export directory."""

from __future__ import annotations

import errno
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.responses import Response

from ragmeter.errors import RagmeterError
from ragmeter.web.export import (
    ExportKind,
    export_provenance,
    export_rows,
    export_sidecar,
    export_text,
    safe_export_path,
)
from ragmeter.web.labels import AggregationRule
from ragmeter.web.security import attachment
from ragmeter.web.state import ANNOTATOR, BadInput, Web, require_csrf, wants_json

router = APIRouter()
#: the rule of exports that combine nothing (one annotator's labels, or the spans)
LATEST: AggregationRule = "latest"


def _choice(web: Web, annotator: str | None, rule: str) -> tuple[str | None, Any]:
    """One annotator's latest labels, or every annotator's by ``rule``."""
    if annotator:
        if annotator not in web.db.annotators():
            raise BadInput(f"no labels by annotator {annotator!r}")
        return annotator, "latest"
    if rule not in ("latest", "majority"):
        raise BadInput("rule must be 'latest' or 'majority'")
    return None, rule


def _label_kind(kind: ExportKind) -> Any:
    """The label kind an export holds."""
    return {"qrels": "grade", "judgments": "rating", "assignments": "nugget"}[kind]


@router.get("/export", response_class=HTMLResponse)
def export_page(web: Web, request: Request, written: str | None = None) -> HTMLResponse:
    export_dir = web.config.export_dir
    files = (
        sorted(p.name for p in export_dir.glob("*") if p.is_file()) if export_dir.is_dir() else []
    )
    return web.page(
        request,
        "export.html",
        annotators=web.db.annotators(),
        export_dir=str(export_dir),
        files=files,
        written=written,
    )


@router.get("/export/{filename}")
def download(
    web: Web, filename: str, annotator: str | None = None, rule: str = "latest"
) -> Response:
    from ragmeter.io.provenance import SUFFIX

    kinds: dict[str, ExportKind] = {
        "qrels.txt": "qrels",
        "judgments.jsonl": "judgments",
        "assignments.jsonl": "assignments",
        "spans.jsonl": "spans",
    }
    sidecar = filename.endswith(SUFFIX) and filename.removesuffix(SUFFIX) in kinds
    if filename not in kinds and not sidecar:
        raise HTTPException(
            404,
            "downloads are qrels.txt, judgments.jsonl, assignments.jsonl and spans.jsonl, and "
            f"their provenance (NAME{SUFFIX})",
        )
    # spans are every annotator's (or one's), each row naming its maker: no combining rule
    spans = kinds[filename.removesuffix(SUFFIX)] == "spans"
    if annotator and not ANNOTATOR.fullmatch(annotator):
        raise BadInput(
            f"no annotator {annotator!r}: names are 1–40 letters, digits, spaces, '.', '_' or '-'"
        )
    who, how = (annotator or None, LATEST) if spans else _choice(web, annotator, rule)
    if sidecar:
        if spans:
            raise HTTPException(404, "spans.jsonl names each span's annotator on its row")
        kind = kinds[filename.removesuffix(SUFFIX)]
        sidecar_text = export_sidecar(kind, web.db, web.coll, annotator=who, rule=how)
        if sidecar_text is None:
            raise HTTPException(404, "nothing is labelled yet: no provenance to download")
        stem = f"{who or how}".replace(" ", "_")
        return Response(
            sidecar_text,
            media_type="application/x-ndjson; charset=utf-8",
            headers={"Content-Disposition": attachment(f"{stem}-{filename}")},
        )
    text = export_text(kinds[filename], web.db, web.coll, annotator=who, rule=how)
    stem = f"{who or ('everyone' if spans else how)}".replace(" ", "_")
    media = "text/plain" if kinds[filename] == "qrels" else "application/x-ndjson"
    return Response(
        text,
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": attachment(f"{stem}-{filename}")},
    )


@router.post("/export", dependencies=[Depends(require_csrf)])
async def export_to_file(web: Web, request: Request) -> Response:
    from ragmeter.io._common import atomic_write_text
    from ragmeter.io.provenance import write_provenance

    form = await request.form()
    kind = str(form.get("kind", "qrels"))
    if kind not in ("qrels", "judgments", "assignments", "spans"):
        raise BadInput("kind must be 'qrels', 'judgments', 'assignments' or 'spans'")
    chosen = str(form.get("annotator") or "") or None
    rule = str(form.get("rule") or "latest")
    who, how = (chosen, LATEST) if kind == "spans" else _choice(web, chosen, rule)
    default = {"qrels": "qrels.txt", "judgments": "judgments.jsonl"}.get(kind, f"{kind}.jsonl")
    filename = str(form.get("filename") or default)
    try:
        target = safe_export_path(web.config.export_dir, filename)
    except RagmeterError as exc:
        raise BadInput(str(exc)) from None
    text = export_text(kind, web.db, web.coll, annotator=who, rule=how)  # type: ignore[arg-type]
    try:
        web.config.export_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text)
        prov = (  # a span row names its annotator itself
            None
            if kind == "spans"
            else export_provenance(_label_kind(kind), web.db, annotator=who, rule=how)  # type: ignore[arg-type]
        )
        if prov is not None:
            write_provenance(target, prov, rows=export_rows(kind))  # type: ignore[arg-type]
    except OSError as exc:  # a full disk, a read-only directory: the page says which
        said = str(exc) if isinstance(exc, RagmeterError) else f"{exc.filename}: {exc.strerror}"
        raise HTTPException(507 if exc.errno == errno.ENOSPC else 500, said) from None
    if wants_json(request):
        return JSONResponse({"path": str(target), "lines": text.count("\n")})
    return RedirectResponse(f"/export?{urlencode({'written': target.name})}", status_code=303)
