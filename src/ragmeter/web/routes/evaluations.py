"""Evaluations: the runs evaluated against a label source (a report page), the evaluations of
the store, one of them, and its HTML report."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from ragmeter.errors import RagmeterError
from ragmeter.web.review import source_labels, source_names
from ragmeter.web.state import (
    BadInput,
    Web,
    html_report_module,
    load_stored,
    open_store_or_reason,
)

router = APIRouter()
#: the measures of the evaluate page when none are asked for
EVALUATION_MEASURES = ("ndcg@10", "ra_nwg@10", "precision4p@10", "n_recall4p@10", "harm@10")


@router.get("/evaluate", response_class=HTMLResponse)
def evaluate_page(
    web: Web,
    request: Request,
    source: str = "rule:latest",
    measure: Annotated[list[str] | None, Query()] = None,  # ?measure=…&measure=…, not a body
) -> HTMLResponse:
    from ragmeter.web.calibration import evaluate_grades, grade_qrels

    coll, uploads = web.coll, web.config.uploads
    names = source_names(web.db, coll, uploads)
    if source not in names:
        raise BadInput(f"unknown label source {source!r}")
    grades = source_labels(source, web.db, coll, uploads)
    measures = list(measure or EVALUATION_MEASURES)
    family, _, file_name = source.partition(":")
    held = coll.qrels_sources.get(file_name) if family == "qrels" else None
    label_notes = list(held.label_notes) if held is not None else []
    table: list[dict[str, Any]] = []
    error = None
    if coll.runs and grades:
        try:
            result = evaluate_grades(coll.runs, grade_qrels(grades), measures)
        except RagmeterError as exc:
            raise BadInput(str(exc)) from None
        measures = [str(m) for m in result.measures]  # canonical names: the means' keys
        for run in result.runs:
            means = run.means()
            table.append({"name": run.name, "values": [means.get(m) for m in measures]})
    elif not coll.runs:
        error = "no runs were given to the server (--run): nothing to evaluate"
    else:
        error = "no labels in this source yet"
    return web.page(
        request,
        "evaluate.html",
        names=names,
        source=source,
        measures=measures,
        table=table,
        label_notes=label_notes,
        n_labels=len(grades),
        n_queries=len({key[0] for key in grades}),
        error=error,
    )


@router.get("/evaluations", response_class=HTMLResponse)
def evaluations(web: Web, request: Request) -> HTMLResponse:
    opened = open_store_or_reason(web.config.store_url)
    if isinstance(opened, str):
        return web.page(request, "evaluations.html", available=False, reason=opened, rows=[])
    from ragmeter.analysis.calibration import labels_kind
    from ragmeter.store.monitor import streams

    with opened as store:
        rows = store.list_evaluations(limit=500)
        url = store.url
        monitored = streams(store)  # a store can hold monitored streams and no evaluation
    kinds = {r.id: labels_kind(r.labels) for r in rows}
    return web.page(
        request,
        "evaluations.html",
        available=True,
        rows=rows,
        store_url=url,
        label_kinds=kinds,
        streams=monitored,
    )


@router.get("/evaluations/{evaluation_id}", response_class=HTMLResponse)
def stored_evaluation(web: Web, request: Request, evaluation_id: int) -> HTMLResponse:
    from ragmeter.analysis.calibration import recorded_label_lines

    stored = load_stored(web.config.store_url, evaluation_id)
    record, evaluation = stored.record, stored.evaluation
    measures = list(record.measures)
    per_query = [{"name": run.name, "queries": run.per_query()} for run in evaluation.runs]
    # " (n=k/N)" beside a mean over fewer queries than the run has, as every other table
    notes = {
        run.name: {name: agg.defined_note for name, agg in run.aggregates().items()}
        for run in evaluation.runs
    }
    return web.page(
        request,
        "evaluation.html",
        record=record,
        measures=measures,
        per_query=per_query,
        defined_notes=notes,
        has_report=html_report_module() is not None,
        label_lines=recorded_label_lines(record.labels),
    )


@router.get("/evaluations/{evaluation_id}/report", response_class=HTMLResponse)
def stored_report(web: Web, evaluation_id: int) -> HTMLResponse:
    module = html_report_module()
    if module is None:
        raise HTTPException(404, "the HTML report is not available in this installation")
    from ragmeter.analysis.calibration import recorded_label_lines

    stored = load_stored(web.config.store_url, evaluation_id)
    labels = [("labels", line) for line in recorded_label_lines(stored.record.labels)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        module.write_html_report(path, stored.evaluation, inputs=labels)
        return HTMLResponse(path.read_text(encoding="utf-8"))
