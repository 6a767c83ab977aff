"""ragmeter: measure the retrieval side of RAG systems.

The top-level import stays light (numpy and pyarrow only); readers, reports and the CLI are
imported on first use.

>>> import ragmeter
>>> run = ragmeter.Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}})
>>> qrels = ragmeter.Qrels.from_dict({"q1": {"d2": 1}})
>>> ragmeter.evaluate(run, qrels, ["mrr"]).run.means()
{'mrr': 0.5}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError, MeasureError, RagmeterError
from ragmeter.evaluation import evaluate
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import Measure, Param, parse_measure, parse_measures

if TYPE_CHECKING:
    from ragmeter.io.readers import read_qrels, read_run
    from ragmeter.metrics.custom import Rankings, define_measure, define_measure_by_query
    from ragmeter.pipeline.fusion import fuse
    from ragmeter.pipeline.fusion_tuning import tune_fusion
    from ragmeter.pipeline.harness import (
        PipelineResult,
        RetrievalEvaluator,
        arun_pipeline,
        run_pipeline,
    )

__version__ = "0.1.0"

__all__ = [
    "Evaluation",
    "InputError",
    "Measure",
    "MeasureError",
    "Param",
    "PipelineResult",
    "Qrels",
    "RagmeterError",
    "Rankings",
    "RetrievalEvaluator",
    "Run",
    "RunResult",
    "__version__",
    "arun_pipeline",
    "define_measure",
    "define_measure_by_query",
    "evaluate",
    "fuse",
    "parse_measure",
    "parse_measures",
    "read_qrels",
    "read_run",
    "run_pipeline",
    "tune_fusion",
]

#: names imported on first use (the harness pulls in asyncio and thread pools)
_HARNESS = ("PipelineResult", "RetrievalEvaluator", "arun_pipeline", "run_pipeline")
#: names imported on first use (fusion: rank fusion and its tuning)
_FUSION = {"fuse": "ragmeter.pipeline.fusion", "tune_fusion": "ragmeter.pipeline.fusion_tuning"}
#: names imported on first use (defining a measure imports the measure families)
_CUSTOM = ("Rankings", "define_measure", "define_measure_by_query")


def __getattr__(name: str) -> Any:
    if name in ("read_run", "read_qrels"):
        from ragmeter.io import readers

        return getattr(readers, name)
    if name in _CUSTOM:
        from ragmeter.metrics import custom

        return getattr(custom, name)
    if name in _FUSION:
        import importlib

        return getattr(importlib.import_module(_FUSION[name]), name)
    if name in _HARNESS:
        from ragmeter.pipeline import harness

        return getattr(harness, name)
    raise AttributeError(f"module 'ragmeter' has no attribute {name!r}")
