"""Calibration: the human labels made in the app against the LLM labels (``--llm-qrels``):
κ and α, each run's prediction-powered estimates and their anytime-valid intervals as labels
arrive, and a learned judge's agreement (``--learned``) (:mod:`ragmeter.web.calibration`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.responses import Response

from ragmeter.web.calibration import arrival_order, calibration_view
from ragmeter.web.review import source_labels, source_names
from ragmeter.web.routes.evaluations import EVALUATION_MEASURES
from ragmeter.web.state import BadInput, Web, wants_json

router = APIRouter()
#: the label sources that hold human labels: annotators, and everyone combined
HUMAN_SOURCES = ("annotator:", "rule:")


@router.get("/calibration", response_class=HTMLResponse)
def calibration_page(
    web: Web,
    request: Request,
    human: str = "rule:latest",
    measure: Annotated[list[str] | None, Query()] = None,
) -> Response:
    coll = web.coll
    names = [n for n in source_names(web.db, coll, {}) if n.startswith(HUMAN_SOURCES)]
    if human not in names:
        raise BadInput(f"unknown human label source {human!r}; expected one of {names}")
    measures = list(measure or EVALUATION_MEASURES)
    labels = source_labels(human, web.db, coll, {})
    annotator = human.removeprefix("annotator:") if human.startswith("annotator:") else None
    view = calibration_view(
        coll,
        human,
        labels,
        measures,
        learned=web.config.learned,
        arrival=arrival_order(web.db.latest_times("grade"), labels, annotator),
    )
    if wants_json(request):
        return JSONResponse(view.to_dict())
    return web.page(request, "calibration.html", names=names, view=view, measures=measures)
