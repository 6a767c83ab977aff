"""ragmeter as an ir_measures provider: ragmeter's measures in ``ir_measures.calc_aggregate``
and in everything built on it (PyTerrier's ``pt.Experiment(..., eval_metrics=[...])``).

    import ir_measures
    from ragmeter.interop.irm_provider import PROC, RA_nWG

    ir_measures.calc_aggregate([RA_nWG(grade_map="0:1,1:3,2:5") @ 10, PROC @ 10], qrels, run)

Importing this module registers the provider ``ragmeter`` with ir_measures and appends it to
``ir_measures.DefaultPipeline`` (its other providers do not know these measures, so none is
displaced). Every ragmeter family that reads only a run and qrels is available, with its own
parameters as ir_measures parameters and ``cutoff`` as ``@k``
(:func:`measure` builds one for any such family); the set-based families also take
``pool``, the path of a run file holding the candidate pool (default: the run itself), and
``grade_map`` (their grades are on a 1..5 scale). A query the run does not answer scores as an
empty ranking, as ir_measures' other providers do; an undefined value (NA) comes back as NaN,
so a mean over it is NaN rather than quietly lower.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import ir_measures
from ir_measures import Metric, providers
from ir_measures.measures import Measure as IrmMeasure
from ir_measures.measures.base import ParamInfo, SumAgg

from ragmeter.core.data import Qrels, Run
from ragmeter.evaluation.api import evaluate
from ragmeter.io.readers import read_run
from ragmeter.measures import REGISTRY, Family, Measure

_CLASSES: dict[str, type[IrmMeasure]] = {}


def _params(family: Family) -> dict[str, ParamInfo]:
    out: dict[str, ParamInfo] = {}
    if family.cutoff != "none":
        kind = float if family.cutoff_type is float else int
        out["cutoff"] = ParamInfo(dtype=kind, required=family.cutoff == "required")
    for p in family.params:
        kinds: Any = (int, float) if p.kind is float else p.kind
        out[p.name] = ParamInfo(dtype=kinds, default=p.default, desc=p.doc)
    if family.uses_pool:
        out["pool"] = ParamInfo(dtype=str, desc="path of a run file: the candidate pool")
    return out


def measure(family: str, name: str | None = None) -> IrmMeasure:
    """The ir_measures measure of a ragmeter family that reads only a run and qrels."""
    spec = REGISTRY.family(family)
    if set(spec.needs) != {"qrels"}:
        raise ValueError(
            f"{spec.name} needs {', '.join(sorted(set(spec.needs) - {'qrels'}))}: "
            "ir_measures passes a run and qrels only"
        )
    label = name or spec.name
    if label not in _CLASSES:
        attrs: dict[str, Any] = {
            "__name__": label,
            "NAME": label,
            "SHORT_DESC": spec.summary,
            "SUPPORTED_PARAMS": _params(spec),
            "ragmeter_family": spec.name,
        }
        if spec.aggregate == "sum":
            attrs["aggregator"] = lambda self: SumAgg()
        _CLASSES[label] = type(f"_{label}", (IrmMeasure,), attrs)
        PROVIDER.SUPPORTED_MEASURES.append(_CLASSES[label]())
        ir_measures.measures.register(_CLASSES[label](), name=label)
    return _CLASSES[label]()


def ragmeter_measure(m: IrmMeasure) -> tuple[Measure, str | None]:
    """The ragmeter measure an ir_measures measure of this provider denotes, and its pool."""
    family = getattr(type(m), "ragmeter_family", None)
    if family is None:
        raise ValueError(f"{m} is not a ragmeter measure")
    params = {k: v for k, v in m.params.items() if k not in ("cutoff", "pool")}
    cutoff = m.params.get("cutoff")
    return REGISTRY.make(family, cutoff, params), m.params.get("pool")


class RagmeterProvider(providers.Provider):
    """Evaluates ragmeter's measures for ir_measures."""

    NAME = "ragmeter"
    SUPPORTED_MEASURES: list[IrmMeasure] = []  # noqa: RUF012 (ir_measures reads it from the class)

    def supports(self, measure: IrmMeasure) -> bool:
        return getattr(type(measure), "ragmeter_family", None) is not None and bool(
            super().supports(measure)
        )

    def _evaluator(self, measures: Iterable[IrmMeasure], qrels: Any) -> RagmeterEvaluator:
        as_dict = ir_measures.util.QrelsConverter(qrels).as_dict_of_dict()
        return RagmeterEvaluator(list(measures), as_dict)


class RagmeterEvaluator(providers.Evaluator):
    """One qrels, any number of runs."""

    def __init__(self, measures: list[IrmMeasure], qrels: Mapping[str, Mapping[str, int]]):
        super().__init__(measures, set(qrels))
        self.qrels = Qrels.from_dict(qrels, name="qrels")
        self.targets = [(m, *ragmeter_measure(m)) for m in measures]

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        as_dict = ir_measures.util.RunConverter(run).as_dict_of_dict()
        ragmeter_run = Run.from_dict(as_dict, name="run")
        by_pool: dict[str | None, list[tuple[IrmMeasure, Measure]]] = {}
        for theirs, ours, pool in self.targets:
            by_pool.setdefault(pool, []).append((theirs, ours))
        for pool, pairs in by_pool.items():
            pool_run = read_run(pool) if pool is not None else None
            result = evaluate(
                ragmeter_run, self.qrels, [ours for _, ours in pairs], pool=pool_run
            ).run
            for theirs, ours in pairs:
                for q, value in zip(result.query_ids, result.column(ours), strict=True):
                    yield Metric(query_id=str(q), measure=theirs, value=float(value))


PROVIDER = RagmeterProvider()
providers.register(PROVIDER)
if PROVIDER not in ir_measures.DefaultPipeline.providers:
    ir_measures.DefaultPipeline.providers.append(PROVIDER)

RA_nWG = measure("ra_nwg", "RA_nWG")
PROC = measure("proc", "PROC")
PCT_PROC = measure("pct_proc", "PCT_PROC")
nRecall4p = measure("n_recall4p", "nRecall4p")
nRecall5 = measure("n_recall5", "nRecall5")
PROC_nRecall4p = measure("proc_n_recall4p", "PROC_nRecall4p")
Precision4p = measure("precision4p", "Precision4p")
HARM = measure("harm", "HARM")

__all__ = [
    "HARM",
    "PCT_PROC",
    "PROC",
    "PROVIDER",
    "PROC_nRecall4p",
    "Precision4p",
    "RA_nWG",
    "RagmeterProvider",
    "measure",
    "nRecall4p",
    "nRecall5",
    "ragmeter_measure",
]
