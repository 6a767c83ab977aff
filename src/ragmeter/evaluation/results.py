"""The result of an evaluation: per-query values, aggregates and warnings.

Means, intervals and tests are views of this object; JSON, tables and HTML are renderings of
it. Nothing downstream recomputes a metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ragmeter.core.data import Run
from ragmeter.errors import MeasureError, import_extra
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.measures import REGISTRY, Measure
from ragmeter.stats.aggregate import Aggregate, aggregate

if TYPE_CHECKING:
    import pandas as pd


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=_Named)


def named(runs: Iterable[_N], name: str) -> _N:
    """The one of ``runs`` named ``name``; a ``KeyError`` listing their names otherwise."""
    runs = list(runs)
    for run in runs:
        if run.name == name:
            return run
    raise KeyError(f"no run named '{name}'; have {[r.name for r in runs]}")


def _clean(value: float) -> float | None:
    """A JSON-safe value: NaN (NA) becomes None."""
    return None if np.isnan(value) else float(value)


@dataclass(frozen=True, eq=False)
class RunResult:
    """Per-query values of one run.

    Attributes:
        name: the run's name.
        query_ids: evaluated query ids (rows of ``values``).
        measures: the measures (columns of ``values``).
        values: float64 array (query × measure); NaN marks NA (undefined).
        n_missing: evaluated queries absent from the run (scored as empty runs).
        n_skipped: qrels queries absent from the run and dropped (``missing="skip"``).
        n_unjudged_queries: run queries without judgments, not evaluated.
        source: the evaluated run (``None`` for results loaded from a store).
        inputs: the labels, side inputs and options it was evaluated with (``None`` for
            results loaded from a store); a view that evaluates the run again (a sweep, a
            report panel) uses these, so its numbers match this result's.
        run_file: the run file a streamed result was read from in blocks (``source`` is then
            ``None``): a view that evaluates the run again streams it from there.
    """

    name: str
    query_ids: npt.NDArray[np.object_]
    measures: tuple[Measure, ...]
    values: npt.NDArray[np.float64]
    n_missing: int = 0
    n_skipped: int = 0
    n_unjudged_queries: int = 0
    source: Run | None = field(default=None, repr=False)
    inputs: EvalInputs | None = field(default=None, repr=False)
    run_file: str | None = field(default=None, repr=False)

    def column(self, measure: Measure | str) -> npt.NDArray[np.float64]:
        """Per-query values of one measure."""
        return self.values[:, self._index(measure)]

    def aggregate(self, measure: Measure | str) -> Aggregate:
        m = self.measures[self._index(measure)]
        return aggregate(self.column(m), m.spec.aggregate)

    def aggregates(self) -> dict[str, Aggregate]:
        return {str(m): self.aggregate(m) for m in self.measures}

    def means(self) -> dict[str, float | None]:
        """``{measure: mean}`` (the family's aggregate; the sum for count measures)."""
        return {name: agg.value for name, agg in self.aggregates().items()}

    def per_query(self) -> dict[str, dict[str, float | None]]:
        names = [str(m) for m in self.measures]
        return {
            str(q): {n: _clean(v) for n, v in zip(names, row, strict=True)}
            for q, row in zip(self.query_ids, self.values.tolist(), strict=True)
        }

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "metrics": {name: agg.to_dict() for name, agg in self.aggregates().items()},
        }
        if per_query:
            out["per_query"] = self.per_query()
        return out

    def to_pandas(self) -> pd.DataFrame:
        """Wide DataFrame: one row per query, one column per measure (NaN = NA)."""
        import_extra("pandas", feature="to_pandas()", package="pandas", extra="frames")
        import pandas as pd

        frame = pd.DataFrame(self.values, columns=[str(m) for m in self.measures])
        frame.insert(0, "query_id", list(self.query_ids))
        return frame

    def _index(self, measure: Measure | str) -> int:
        """Column of ``measure``, given as a Measure or any spelling of its name."""
        key = str(measure)
        for i, m in enumerate(self.measures):
            if str(m) == key:
                return i
        if isinstance(measure, str):
            try:
                parsed = REGISTRY.parse(measure)
            except MeasureError:
                parsed = []
            if len(parsed) == 1 and parsed[0] in self.measures:
                return self.measures.index(parsed[0])
        raise KeyError(f"measure '{key}' was not evaluated; have {[str(m) for m in self.measures]}")


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Results of one or more runs on the same measures, with the warnings collected.

    ``labels``: what the labels the numbers were computed on are (the ``to_json()`` of
    :class:`ragmeter.analysis.calibration.LabelsDescription`: provenance, counts per source,
    a calibration's figures), attached by the workflow that read the qrels file
    (:meth:`with_labels`); ``None`` when no qrels file was described."""

    runs: tuple[RunResult, ...]
    measures: tuple[Measure, ...]
    warnings: tuple[str, ...] = field(default=())
    labels: Mapping[str, Any] | None = field(default=None)

    def with_labels(self, labels: Mapping[str, Any] | None) -> Evaluation:
        """This evaluation, its labels described by ``labels`` (see the class docstring)."""
        return replace(self, labels=labels)

    def __iter__(self) -> Iterator[RunResult]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, key: int | str) -> RunResult:
        return self.runs[key] if isinstance(key, int) else named(self.runs, key)

    @property
    def run(self) -> RunResult:
        """The only run (an error if there are several)."""
        if len(self.runs) != 1:
            raise ValueError(f"{len(self.runs)} runs; index by name instead")
        return self.runs[0]

    def means(self) -> dict[str, dict[str, float | None]]:
        return {r.name: r.means() for r in self.runs}

    @classmethod
    def concat(cls, evaluations: list[Evaluation]) -> Evaluation:
        """One evaluation holding the runs of several (on the same measures)."""
        if not evaluations:
            raise ValueError("nothing to concatenate")
        measures = evaluations[0].measures
        if any(e.measures != measures for e in evaluations):
            raise ValueError("evaluations differ in their measures")
        runs = tuple(r for e in evaluations for r in e.runs)
        warnings = tuple(w for e in evaluations for w in e.warnings)
        return cls(runs, measures, warnings)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """The JSON shape: ``{"runs": [...], "warnings": [...]}``; NA is ``None``.

        Measures asked for in another tool's spelling (ir_measures' ``P(rel=2)@10``) keep it
        as their key; ``measure_names`` then maps each such spelling to ragmeter's name.
        """
        out: dict[str, Any] = {
            "runs": [r.to_dict(per_query=per_query) for r in self.runs],
            "warnings": list(self.warnings),
        }
        names = {str(m): m.canonical for m in self.measures if str(m) != m.canonical}
        if names:
            out["measure_names"] = names
        if self.labels is not None:
            out["labels"] = dict(self.labels)
        return out

    def to_pandas(self) -> pd.DataFrame:
        """Long DataFrame: columns run, query_id, measure, value (NaN = NA)."""
        import_extra("pandas", feature="to_pandas()", package="pandas", extra="frames")
        import pandas as pd

        frames = []
        for r in self.runs:
            wide = r.to_pandas()
            long = wide.melt(id_vars="query_id", var_name="measure", value_name="value")
            long.insert(0, "run", r.name)
            frames.append(long)
        return pd.concat(frames, ignore_index=True)
