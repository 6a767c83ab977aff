"""ragmeter: measure the retrieval side of RAG systems.

The top-level import is almost free: every name below is imported on first use (the data
types and ``evaluate`` bring numpy and pyarrow), so ``ragmeter --version`` starts without them.

>>> import ragmeter
>>> run = ragmeter.Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}})
>>> qrels = ragmeter.Qrels.from_dict({"q1": {"d2": 1}})
>>> ragmeter.evaluate(run, qrels, ["mrr"]).run.means()
{'mrr': 0.5}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragmeter.errors import InputError, MeasureError, RagmeterError

if TYPE_CHECKING:
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation import evaluate
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.io.readers import read_qrels, read_run
    from ragmeter.measures import Measure, Param, parse_measure, parse_measures
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

#: where each name of the package is defined: imported on first use (numpy, pyarrow, the
#: measure families, the harness's asyncio and thread pools all wait until asked)
_LAZY = {
    "Qrels": "ragmeter.core.data",
    "Run": "ragmeter.core.data",
    "evaluate": "ragmeter.evaluation",
    "Evaluation": "ragmeter.evaluation.results",
    "RunResult": "ragmeter.evaluation.results",
    "Measure": "ragmeter.measures",
    "Param": "ragmeter.measures",
    "parse_measure": "ragmeter.measures",
    "parse_measures": "ragmeter.measures",
    "read_run": "ragmeter.io.readers",
    "read_qrels": "ragmeter.io.readers",
    "Rankings": "ragmeter.metrics.custom",
    "define_measure": "ragmeter.metrics.custom",
    "define_measure_by_query": "ragmeter.metrics.custom",
    "fuse": "ragmeter.pipeline.fusion",
    "tune_fusion": "ragmeter.pipeline.fusion_tuning",
    "PipelineResult": "ragmeter.pipeline.harness",
    "RetrievalEvaluator": "ragmeter.pipeline.harness",
    "arun_pipeline": "ragmeter.pipeline.harness",
    "run_pipeline": "ragmeter.pipeline.harness",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragmeter' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
