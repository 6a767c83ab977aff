"""The labelling queue: which queries people label, written by ``ragmeter sample``, opened by
``ragmeter serve --queue`` and read by the estimators that weight each labelled query.

JSONL, one line per chosen query, in the order they are to be labelled::

    {"query_id": "q07", "docs": ["p012", "p113", …], "inclusion_probability": 0.08,
     "strategy": "active", "stratum": 2, "population": 500, "n": 40, "seed": 1,
     "measure": "ndcg@10", "value": 0.61, "uncertainty": 0.43}

``query_id``, ``docs`` (the passages to label, in rank order) and ``strategy`` are required;
``inclusion_probability`` π_i (0 < π_i ≤ 1, the chance the query was drawn) is required for
an ``active`` queue — its queries were drawn with unequal probabilities, and an estimate that
does not weight them by 1/π_i is biased, so such a queue without π is refused. The other
fields say how the queue was drawn (``stratum`` for the stratified design, the measure and
its value under the LLM labels, the active design's uncertainty score).

An ``active-learned`` queue (the learned judge's least certain pairs of each topic) has the
same lines with ``docs`` the chosen pairs (least certain first), no inclusion probability
(the pairs are chosen, not drawn: :data:`CHOSEN`), and ``margins``, ``grades`` and
``boundaries``: each pair's distance to the judge's nearest cut, its grade, and that cut.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, atomic_write_text
from ragmeter.io._documents import loads_finite

#: strategies whose probabilities are unequal: π_i is required to weight their labels
UNEQUAL = ("active",)
#: the queue of the learned judge's least certain pairs (``ragmeter sample --strategy active
#: --learned``): pairs chosen, not drawn, so no inclusion probability
LEARNED_STRATEGY = "active-learned"
#: strategies that choose rather than draw: their labels are no sample, and no estimate may
#: weight them as one
CHOSEN = (LEARNED_STRATEGY,)

#: the smallest inclusion probability taken. A labelled query weighs w = 1/π, and the
#: estimate's variance squares it (w²·Y², summed over queries): π = 1e-300 makes w² overflow
#: float64 (max 1.8e308) and the estimate NaN. π ≥ 1e-100 keeps w² ≤ 1e200, so the arithmetic
#: stays finite for any measure value below 1e50. The one rule of π, for every reader and for
#: :func:`ragmeter.stats.ppi.ppi_mean`'s weights (at most 1/MIN_INCLUSION_PROBABILITY).
MIN_INCLUSION_PROBABILITY = 1e-100


def inclusion_problem(value: object) -> str | None:
    """Why ``value`` is not an inclusion probability π (``None`` when it is one): π must be
    a number in [:data:`MIN_INCLUSION_PROBABILITY`, 1] (a chance in (0, 1] whose weight
    1/π the estimate's variance can square without overflow)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected a probability in (0, 1], got {value!r}"
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        return f"inclusion probability {value!r} is not in (0, 1]"
    if value < MIN_INCLUSION_PROBABILITY:
        return (
            f"inclusion probability {value!r} is below {MIN_INCLUSION_PROBABILITY:g}: its "
            f"weight 1/π would overflow the estimate's variance"
        )
    return None


@dataclass(frozen=True)
class QueueEntry:
    """One query of the queue: the passages to label and its inclusion probability
    (``None`` when the queue does not say; never for an active queue)."""

    query_id: str
    docs: tuple[str, ...]
    strategy: str
    inclusion_probability: float | None = None
    stratum: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query_id": self.query_id, "docs": list(self.docs)}
        if self.inclusion_probability is not None:
            out["inclusion_probability"] = self.inclusion_probability
        out["strategy"] = self.strategy
        if self.stratum is not None:
            out["stratum"] = self.stratum
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class LabelQueue:
    """The queries of a queue, in order."""

    entries: tuple[QueueEntry, ...]
    source: str = "<queue>"

    @property
    def query_ids(self) -> list[str]:
        return [e.query_id for e in self.entries]

    def probabilities(self) -> dict[str, float | None]:
        """``{query: π_i}`` (``None`` where the queue gives none); weights are 1/π_i."""
        return {e.query_id: e.inclusion_probability for e in self.entries}

    def docs(self) -> dict[str, list[str]]:
        return {e.query_id: list(e.docs) for e in self.entries}


def write_label_queue(entries: Sequence[QueueEntry], path: PathLike) -> None:
    """Write the queue atomically, one JSON line per entry."""
    atomic_write_text(
        path, "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in entries)
    )


def read_label_queue(path: PathLike) -> LabelQueue:
    """Read a queue; errors name the file, the line and the field. An active queue whose
    line lacks ``inclusion_probability`` is refused (its labels could not be weighted)."""
    name = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the label queue: {exc}", source=name) from None
    entries: list[QueueEntry] = []
    seen: set[str] = set()
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        entry = _entry(line, name, n)
        if entry.query_id in seen:
            raise InputError(
                f"query {entry.query_id!r} is queued twice", source=name, line=n, field="query_id"
            )
        seen.add(entry.query_id)
        entries.append(entry)
    if not entries:
        raise InputError("empty label queue: no query to label", source=name)
    return LabelQueue(tuple(entries), name)


def _entry(line: str, name: str, n: int) -> QueueEntry:
    record = loads_finite(line, name, n)  # NaN, 1e400, 100,000-deep arrays: one-line errors
    if not isinstance(record, dict):
        raise InputError("expected a JSON object", source=name, line=n)

    def bad(key: str, what: str) -> InputError:
        return InputError(f"expected {what}", source=name, line=n, field=key)

    query_id, strategy, docs = record.get("query_id"), record.get("strategy"), record.get("docs")
    if not isinstance(query_id, str) or not query_id:
        raise bad("query_id", "a query id (a non-empty string)")
    if not isinstance(strategy, str) or not strategy:
        raise bad("strategy", "the sampling strategy (random, stratified, active)")
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
        raise bad("docs", "a list of doc ids")
    pi = record.get("inclusion_probability")
    if pi is None and strategy in UNEQUAL:
        raise InputError(
            f"an {strategy} queue needs the inclusion probability of each query: its queries "
            "were drawn with unequal probabilities and their labels are weighted by 1/π "
            "(without it an estimate would be biased)",
            source=name,
            line=n,
            field="inclusion_probability",
        )
    if pi is not None and (problem := inclusion_problem(pi)) is not None:
        raise InputError(problem, source=name, line=n, field="inclusion_probability")
    stratum = record.get("stratum")
    if stratum is not None and (isinstance(stratum, bool) or not isinstance(stratum, int)):
        raise bad("stratum", "an integer")
    known = {"query_id", "docs", "strategy", "inclusion_probability", "stratum"}
    return QueueEntry(
        query_id,
        tuple(docs),
        strategy,
        None if pi is None else float(pi),
        stratum,
        {k: v for k, v in record.items() if k not in known},
    )


__all__ = [
    "CHOSEN",
    "LEARNED_STRATEGY",
    "LabelQueue",
    "QueueEntry",
    "read_label_queue",
    "write_label_queue",
]
