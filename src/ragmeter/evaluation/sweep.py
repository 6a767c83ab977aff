"""Cutoff sweeps: every measure at every K of ``1:50`` (or ``1,5,10``) in one evaluation.

:func:`sweep` expands each measure over the cutoffs and evaluates them together: one
alignment per run, and for the set-based family one (queries × K_max) matrix of running sums
in rank order, read one column per K (K steps of O(queries); see
:mod:`ragmeter.metrics.setwise`). Other families with a cutoff are computed per K on the same
alignment. A swept measure at K *is* the measure ``m@K`` (``coverage@10``, ``ndcg@10``): the
values equal single-K evaluations bit for bit, for every family (tested).

:func:`sweep_evaluation` sweeps the measures of an existing evaluation with the runs and
inputs that produced it, so a report's curves pass through its summary's values.

The curves (:meth:`Sweep.curves`) give, per run, per measure, per K: ``mean``, ``n`` and
``n_defined`` — JSON (:meth:`Sweep.to_json`) or long CSV (:meth:`Sweep.to_csv`) for plotting.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import MeasureError
from ragmeter.evaluation.api import evaluate
from ragmeter.evaluation.engine import evaluate_inputs
from ragmeter.evaluation.results import Evaluation
from ragmeter.measures import MAX_CUTOFF, REGISTRY, Measure, parse_measures

#: the most cutoffs one sweep evaluates (each is a measure of the evaluation)
MAX_SWEEP_CUTOFFS = 100_000


def parse_ks(text: str) -> list[int]:
    """``"1:50"`` (inclusive), ``"1:50:5"`` (step), ``"1,5,10"`` or a mix, sorted, unique."""
    ks: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            bounds = [int(x) for x in part.split(":")]
        except ValueError:
            raise MeasureError(f"--k: '{part}' is not a number or a range a:b[:step]") from None
        if len(bounds) > 3:
            raise MeasureError(f"--k: '{part}' is not a range a:b[:step]")
        if max(bounds[:2]) > MAX_CUTOFF:
            raise MeasureError(f"--k: cutoffs must be ≤ {MAX_CUTOFF}, got '{part}'")
        if len(bounds) == 1:
            ks.add(bounds[0])
            continue
        step = bounds[2] if len(bounds) == 3 else 1
        if step < 1 or bounds[1] < bounds[0]:
            raise MeasureError(f"--k: empty range '{part}'")
        cutoffs = range(bounds[0], bounds[1] + 1, step)
        if len(ks) + len(cutoffs) > MAX_SWEEP_CUTOFFS:
            raise MeasureError(
                f"--k: '{part}' sweeps {len(cutoffs):,} cutoffs; at most "
                f"{MAX_SWEEP_CUTOFFS:,} (give a step: a:b:step)"
            )
        ks.update(cutoffs)
    if not ks:
        raise MeasureError("--k: no cutoff given")
    if min(ks) < 1:
        raise MeasureError(f"--k: cutoffs must be ≥ 1, got {min(ks)}")
    return sorted(ks)


def expand(measures: Iterable[str | Measure] | str, ks: Sequence[int]) -> list[Measure]:
    """Each measure (given without a cutoff) at each K, measure-major."""
    out: list[Measure] = []
    for m in parse_measures(measures):
        if m.k is not None or m.budget is not None:
            raise MeasureError(f"{m}: give swept measures without a cutoff (the sweep sets @K)")
        if m.spec.cutoff == "none":
            raise MeasureError(f"{m} takes no cutoff, so it cannot be swept")
        out.extend(REGISTRY.make(m.family, k, dict(m.params)) for k in ks)
    return out


@dataclass(frozen=True, eq=False)
class Sweep:
    """A sweep's evaluation (measures ``m@K``) and the base measures and cutoffs it covers."""

    evaluation: Evaluation
    base: tuple[Measure, ...]
    ks: tuple[int, ...]

    def curves(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """``{run: {measure: [{"k", "mean", "n", "n_defined"}, ...]}}`` (mean None if no
        query is defined)."""
        out: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for run in self.evaluation.runs:
            per_measure: dict[str, list[dict[str, Any]]] = {}
            for m in self.base:
                points = []
                for k in self.ks:
                    agg = run.aggregate(REGISTRY.make(m.family, k, dict(m.params)))
                    points.append(
                        {"k": k, "mean": agg.value, "n": agg.n, "n_defined": agg.n_defined}
                    )
                per_measure[str(m)] = points
            out[run.name] = per_measure
        return out

    def to_json(self) -> str:
        """``{"ks": [...], "runs": {run: {measure: [points]}}, "warnings": [...]}``, and
        ``labels`` when the evaluation's labels are described; no NaN."""
        body: dict[str, Any] = {
            "ks": list(self.ks),
            "runs": self.curves(),
            "warnings": list(self.evaluation.warnings),
        }
        if self.evaluation.labels is not None:
            body["labels"] = dict(self.evaluation.labels)
        return json.dumps(body, indent=2, allow_nan=False) + "\n"

    def to_csv(self) -> str:
        """Long CSV ``run,measure,k,mean,n,n_defined`` (empty mean where undefined)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["run", "measure", "k", "mean", "n", "n_defined"])
        for run, measures in self.curves().items():
            for name, points in measures.items():
                for p in points:
                    mean = "" if p["mean"] is None else repr(p["mean"])
                    writer.writerow([run, name, p["k"], mean, p["n"], p["n_defined"]])
        return buf.getvalue()


def sweep(
    runs: Any,
    qrels: Any,
    measures: Iterable[str | Measure] | str,
    ks: Sequence[int] | str,
    **options: Any,
) -> Sweep:
    """Evaluate each measure at every cutoff of ``ks`` in one pass per run.

    ``ks``: cutoffs, or their text (``"1:50"``, ``"1,5,10"``); ``options`` are
    :func:`ragmeter.evaluation.evaluate`'s keywords (``pool=``, ``grade_map=``…).

    Example:
        >>> from ragmeter import Run, Qrels
        >>> s = sweep(Run.from_lists({"q": ["a", "b"]}), Qrels.from_dict({"q": ["b"]}),
        ...           ["precision"], "1:2")
        >>> [p["mean"] for p in s.curves()["run"]["precision"]]
        [0.0, 0.5]
    """
    cutoffs = _cutoffs(ks)
    base = tuple(parse_measures(measures))
    expanded = expand(base, cutoffs)
    return Sweep(evaluate(runs, qrels, expanded, **options), base, tuple(cutoffs))


def _cutoffs(ks: Sequence[int] | str) -> list[int]:
    cutoffs = parse_ks(ks) if isinstance(ks, str) else sorted({int(k) for k in ks})
    if not cutoffs or cutoffs[0] < 1:
        raise MeasureError("cutoffs must be ≥ 1")
    return cutoffs


def sweepable(measures: Iterable[Measure]) -> list[Measure]:
    """The measures of ``measures`` that take a cutoff, without it (parameters kept), once
    each: ``ndcg@10(rel_level=3)`` → ``ndcg(rel_level=3)``; token budgets are not swept."""
    out: list[Measure] = []
    for m in measures:
        if m.spec.cutoff == "none" or m.budget is not None:
            continue
        base = Measure(m.family, None, m.params)
        if base not in out:
            out.append(base)
    return out


def sweep_evaluation(
    evaluation: Evaluation,
    ks: Sequence[int] | str,
    measures: Iterable[str | Measure] | str | None = None,
) -> Sweep:
    """Sweep an evaluation's runs over ``ks`` with the inputs that produced it.

    ``measures`` default to :func:`sweepable` of the evaluation's measures (same parameters),
    so at every K the curve holds the value the evaluation gives ``m@K``. Each run is
    evaluated with its own inputs (an evaluation joined from several, each with its own
    pool, sweeps each with its pool). A result streamed from a run file
    (:func:`~ragmeter.evaluation.stream.evaluate_run_files`) streams the file again. Results
    loaded from a store carry no run: an error.
    """
    cutoffs = _cutoffs(ks)
    base = tuple(sweepable(evaluation.measures) if measures is None else parse_measures(measures))
    if not base:
        raise MeasureError("nothing to sweep: no measure of the evaluation takes a cutoff")
    expanded = expand(base, cutoffs)
    parts = []
    for result in evaluation.runs:
        if result.inputs is not None and result.source is None and result.run_file is not None:
            from ragmeter.evaluation.stream import evaluate_run_files

            # a streamed result: its file streamed again (the run is not held)
            parts.append(
                evaluate_run_files([result.run_file], result.inputs, expanded, names=[result.name])
            )
            continue
        if result.source is None or result.inputs is None:
            raise MeasureError(
                f"run '{result.name}': its run and inputs are not at hand (loaded from a "
                "store, or evaluated from an iterator of blocks?); evaluate the run, or its "
                "file, to sweep it"
            )
        parts.append(evaluate_inputs([result.source], result.inputs, expanded))
    return Sweep(Evaluation.concat(parts), base, tuple(cutoffs))
