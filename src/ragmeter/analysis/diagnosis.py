"""Where is the headroom? Retrieval- versus selection-limited queries (seed 000, §4).

Per query, at cutoff K: ``PROC@K`` (what the candidate pool allows) and ``%PROC@K`` (the share
of it the selection realized) place the query in the diagnostic matrix:

* **retrieval-limited**: ``PROC < proc_threshold`` — the pool lacks the evidence; fix the
  retriever (no reranking can help);
* **selection-limited**: ``PROC ≥ proc_threshold`` and ``%PROC < pct_threshold`` — the pool
  had it, the top K did not take it; fix the reranker / selection;
* **fine**: both at or above their thresholds;
* **undefined**: no passage of positive weight is labelled (``G_ideal = 0``, PROC is NA).

The 2×2 matrix counts the defined queries by PROC low/high × %PROC low/high; a query with
PROC = 0 has no %PROC (NA) and is counted under %PROC low. The worst queries (lowest
RA-nWG@K) list the grade-5 and grade-4 passages (utility scale) missing from their top K,
each with whether the pool held it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from ragmeter.core.align import Missing
from ragmeter.core.data import Qrels, Run
from ragmeter.core.sums import sequential_mean

Category = Literal["retrieval-limited", "selection-limited", "fine", "undefined"]


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class MissedPassage:
    """A grade-4/5 passage absent from the query's top K."""

    doc_id: str
    grade: int
    in_pool: bool


@dataclass(frozen=True)
class QueryDiagnosis:
    """One query's RA-nWG@K, PROC@K, %PROC@K (None where NA) and category."""

    query_id: str
    ra_nwg: float | None
    proc: float | None
    pct_proc: float | None
    category: Category
    missed: tuple[MissedPassage, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "ra_nwg": self.ra_nwg,
            "proc": self.proc,
            "pct_proc": self.pct_proc,
            "category": self.category,
            "missed": [
                {"doc_id": m.doc_id, "grade": m.grade, "in_pool": m.in_pool} for m in self.missed
            ],
        }


@dataclass(frozen=True)
class Diagnosis:
    """The diagnosis of one run at cutoff ``k``."""

    run: str
    k: int
    proc_threshold: float
    pct_threshold: float
    queries: tuple[QueryDiagnosis, ...]
    worst: tuple[QueryDiagnosis, ...]
    means: dict[str, float | None] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    #: what the labels are (the ``to_json()`` of
    #: :class:`ragmeter.analysis.calibration.LabelsDescription`), when the caller knows
    labels: dict[str, Any] | None = None

    def counts(self) -> dict[str, int]:
        """Queries per category."""
        out = {"retrieval-limited": 0, "selection-limited": 0, "fine": 0, "undefined": 0}
        for q in self.queries:
            out[q.category] += 1
        return out

    def matrix(self) -> dict[str, dict[str, int]]:
        """``{"proc_low"|"proc_high": {"pct_low"|"pct_high": count}}`` over defined queries."""
        out = {r: {"pct_low": 0, "pct_high": 0} for r in ("proc_low", "proc_high")}
        for q in self.queries:
            if q.proc is None:
                continue
            row = "proc_high" if q.proc >= self.proc_threshold else "proc_low"
            high = q.pct_proc is not None and q.pct_proc >= self.pct_threshold
            out[row]["pct_high" if high else "pct_low"] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NA is None, never NaN)."""
        return {
            "run": self.run,
            "k": self.k,
            "proc_threshold": self.proc_threshold,
            "pct_threshold": self.pct_threshold,
            "means": self.means,
            "counts": self.counts(),
            "matrix": self.matrix(),
            "worst": [q.to_dict() for q in self.worst],
            "queries": [q.to_dict() for q in self.queries],
            "warnings": list(self.warnings),
            **({"labels": self.labels} if self.labels is not None else {}),
        }


def _category(proc: float, pct: float, proc_t: float, pct_t: float) -> Category:
    if math.isnan(proc):
        return "undefined"
    if proc < proc_t:
        return "retrieval-limited"
    if math.isnan(pct) or pct < pct_t:
        return "selection-limited"
    return "fine"


def diagnose(
    run: Run,
    qrels: Qrels,
    *,
    k: int = 10,
    pool: Run | None = None,
    pool_depth: int | None = None,
    grade_map: str | None = None,
    proc_threshold: float = 0.8,
    pct_threshold: float = 0.8,
    worst: int = 10,
    missing: Missing = "zero",
    labels: dict[str, Any] | None = None,
) -> Diagnosis:
    """Classify each query of ``run`` (see the module docstring); one alignment. ``labels``:
    what the labels of ``qrels`` are, carried into the JSON (:attr:`Diagnosis.labels`)."""
    from ragmeter.evaluation import EvalInputs, compute, prepare, resolve_measures
    from ragmeter.metrics import setwise

    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    inputs = EvalInputs(
        qrels, missing=missing, pool=pool, pool_depth=pool_depth, grade_map=grade_map
    )
    measures = resolve_measures([f"ra_nwg@{k}", f"proc@{k}", f"pct_proc@{k}"], default_k=k)
    prepared = prepare(run, inputs, measures)
    al = prepared.aligned
    values = compute(al, measures)
    warnings = list(prepared.warnings)
    queries = [
        QueryDiagnosis(
            str(qid),
            _clean(ra),
            _clean(pr),
            _clean(pct),
            _category(pr, pct, proc_threshold, pct_threshold),
        )
        for qid, (ra, pr, pct) in zip(al.query_ids, values.tolist(), strict=True)
    ]
    # the worst defined queries by RA-nWG@K (ties: query id), with what they missed
    order = sorted(
        (i for i, q in enumerate(queries) if q.ra_nwg is not None),
        key=lambda i: (queries[i].ra_nwg, queries[i].query_id),
    )[: max(worst, 0)]
    scale = setwise.label_scale(al, measures[0])
    pooled = setwise.pool_labels(al)
    selected = np.zeros(len(scale), dtype=bool)
    top = (al.item_label >= 0) & (al.ranks <= k)
    selected[al.item_label[top]] = True
    worst_list = []
    for i in order:
        lo, hi = int(al.label_offsets[i]), int(al.label_offsets[i + 1])
        missed = tuple(
            MissedPassage(al.label_doc_id(j), int(scale[j]), bool(pooled[j]))
            for j in sorted(range(lo, hi), key=lambda j: (-int(scale[j]), al.label_doc_id(j)))
            if scale[j] >= 4 and not selected[j]
        )
        worst_list.append(replace(queries[i], missed=missed))
    means = {}
    for name, column in zip(("ra_nwg", "proc", "pct_proc"), values.T, strict=True):
        defined = column[~np.isnan(column)]
        means[f"{name}@{k}"] = sequential_mean(defined) if len(defined) else None
    return Diagnosis(
        run.name,
        k,
        proc_threshold,
        pct_threshold,
        tuple(queries),
        tuple(worst_list),
        means,
        tuple(warnings),
        labels,
    )
