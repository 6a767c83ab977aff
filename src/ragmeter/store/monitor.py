"""The monitor's tables in the store: spans read, judged samples, window figures and the
windows' prediction-powered estimates (see :mod:`ragmeter.store.schema`, versions 5 to 7).
A *stream* names one monitored system (``--name``); a span is known by its trace id and span
id (:data:`SpanKey`: OpenTelemetry span ids are unique only within their trace).

Every write is one transaction; a rerun adds only the spans the store does not hold yet.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

import sqlalchemy as sa

from ragmeter.analysis.monitor import WindowFigure
from ragmeter.core.provenance import LabelSource
from ragmeter.errors import StoreError
from ragmeter.store import schema
from ragmeter.store.sql import Store

#: ids per ``IN (…)`` look-up (below SQLite's and PostgreSQL's parameter limits)
_CHUNK = 500

#: a span's identity: (trace id, span id)
SpanKey = tuple[str, str]


@dataclass(frozen=True)
class SpanRow:
    """A span read: its latency row (``duration_ms`` NaN, stored NULL, for a span that ends
    before it starts: it has no latency)."""

    span_id: str
    trace_id: str
    stage: str
    started_ns: int
    duration_ms: float

    @property
    def key(self) -> SpanKey:
        return (self.trace_id, self.span_id)


@dataclass(frozen=True)
class SampleRow:
    """A judged retriever span: its window, query, judge, pairs and measure values."""

    span_id: str
    trace_id: str
    window_s: int
    window_start: int
    query_id: str
    judge: LabelSource
    pairs: int
    unlabelled: int
    values: Mapping[str, float]
    #: the passages judged, in rank order
    doc_ids: tuple[str, ...] = ()

    @property
    def key(self) -> SpanKey:
        return (self.trace_id, self.span_id)


@dataclass(frozen=True)
class WindowRow(WindowFigure):
    """A stored window figure (NaN for NULL): the figure, the length of its window and the
    judge whose labels it measures (``None`` for a latency figure)."""

    window_s: int
    judge: LabelSource | None


@dataclass(frozen=True)
class PPIRow:
    """A window's prediction-powered estimate of a measure (NaN for NULL): the spans
    labelled by people and not, the LLM-label mean, the estimate and its ``1 − alpha``
    interval (NaN below 2 labelled spans), λ, who made the human labels, the judge's labels
    they correct, and how λ was chosen (``crossfit``, ``plusplus``; ``None``: stored before
    the estimator was recorded, PPI++)."""

    window_s: int
    window_start: int
    measure: str
    n_labelled: int
    n_unlabelled: int
    llm_mean: float
    estimate: float
    low: float
    high: float
    lam: float
    alpha: float
    human: str
    judge: LabelSource | None
    estimator: str | None = None


def _clean(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


def _nan(v: float | None) -> float:
    return math.nan if v is None else float(v)


def _replace_rows(
    store: Store, table: sa.Table, stream: str, window_s: int, rows: list[dict[str, Any]]
) -> None:
    """Replace the stream's rows of ``table`` for this window length, in one transaction."""
    with store.transaction() as conn:
        conn.execute(sa.delete(table).where(table.c.stream == stream, table.c.window_s == window_s))
        if rows:
            conn.execute(sa.insert(table), rows)


def _window_rows(
    conn: sa.Connection, table: sa.Table, stream: str, window_s: int | None
) -> Iterable[Any]:
    """The stream's rows of ``table`` (one window length, or all), by window then measure."""
    query = sa.select(table).where(table.c.stream == stream)
    if window_s is not None:
        query = query.where(table.c.window_s == window_s)
    order = (table.c.window_s, table.c.window_start, table.c.measure)
    return conn.execute(query.order_by(*order)).mappings()


def _judge_text(judge: LabelSource | None) -> str | None:
    return json.dumps(judge.to_json(), sort_keys=True) if judge is not None else None


_Row = TypeVar("_Row", "WindowRow", "PPIRow")


def _to_columns(row: WindowRow | PPIRow, stream: str, now: datetime) -> dict[str, Any]:
    """A window row as its table's columns: NaN stored as NULL, the judge as JSON."""
    values: dict[str, Any] = {"stream": stream, "updated_at": now}
    for f in fields(row):
        value = getattr(row, f.name)
        if f.name == "judge":
            value = _judge_text(value)
        elif f.type in ("float", float):  # the annotation, a string under PEP 563
            value = _clean(value)
        values[f.name] = value
    return values


def _load_rows(
    store: Store, table: sa.Table, cls: type[_Row], stream: str, window_s: int | None
) -> list[_Row]:
    """The stream's rows of ``table`` as ``cls`` (NULL read as NaN, the judge from JSON), by
    window then measure."""
    with store.connect() as conn:
        rows = list(_window_rows(conn, table, stream, window_s))
    out = []
    for r in rows:
        values: dict[str, Any] = {}
        for f in fields(cls):
            value = r[f.name]
            if f.name == "judge":
                value = LabelSource.from_json(json.loads(value)) if value else None
            elif f.type in ("float", float):  # the annotation, a string under PEP 563
                value = _nan(value)
            values[f.name] = value
        out.append(cls(**values))
    return out


def save_ppi(store: Store, stream: str, window_s: int, rows: Iterable[PPIRow]) -> None:
    """Replace the stream's estimates for this window length."""
    now = datetime.now(UTC)
    values = [_to_columns(replace(r, window_s=window_s), stream, now) for r in rows]
    _replace_rows(store, schema.monitor_ppi, stream, window_s, values)


def load_ppi(store: Store, stream: str, window_s: int | None = None) -> list[PPIRow]:
    """The stream's stored estimates (one window length, or all), by window then measure."""
    return _load_rows(store, schema.monitor_ppi, PPIRow, stream, window_s)


def drop_stale_ppi(store: Store, stream: str, started_s: Iterable[int]) -> int:
    """Remove the estimates of every window (of any length) holding one of the times
    ``started_s`` (seconds; the starts of newly sampled spans): their samples changed, so
    the estimates no longer describe them. Returns how many windows were dropped."""
    t = schema.monitor_ppi
    starts = sorted(set(started_s))
    if not starts:
        return 0
    stale: list[tuple[int, int]] = []
    with store.connect() as conn:
        held = conn.execute(
            sa.select(t.c.window_s, t.c.window_start).where(t.c.stream == stream).distinct()
        ).all()
    for window_s, window_start in held:
        first = bisect.bisect_left(starts, window_start)
        if first < len(starts) and starts[first] < window_start + window_s:
            stale.append((window_s, window_start))
    if stale:
        with store.transaction() as conn:
            for window_s, window_start in stale:
                conn.execute(
                    sa.delete(t).where(
                        t.c.stream == stream,
                        t.c.window_s == window_s,
                        t.c.window_start == window_start,
                    )
                )
    return len(stale)


def known_spans(store: Store, stream: str, keys: Iterable[SpanKey]) -> set[SpanKey]:
    """The spans among ``keys`` (trace id, span id) the stream already holds."""
    wanted = set(keys)
    ids = list(dict.fromkeys(span_id for _, span_id in wanted))
    found: set[SpanKey] = set()
    t = schema.monitor_spans
    with store.connect() as conn:
        # looked up by span id (one portable IN list), kept when the trace id matches too
        for i in range(0, len(ids), _CHUNK):
            query = sa.select(t.c.trace_id, t.c.span_id).where(
                t.c.stream == stream, t.c.span_id.in_(ids[i : i + _CHUNK])
            )
            found.update(k for k in map(tuple, conn.execute(query)) if k in wanted)
    return found


def add_spans(
    store: Store, stream: str, spans: Sequence[SpanRow], samples: Sequence[SampleRow]
) -> None:
    """Add new spans and the samples judged among them, in one transaction."""
    span_rows = [
        {
            "stream": stream,
            "span_id": s.span_id,
            "trace_id": s.trace_id,
            "stage": s.stage,
            "started_ns": s.started_ns,
            "duration_ms": _clean(s.duration_ms),
        }
        for s in spans
    ]
    sample_rows = [
        {
            "stream": stream,
            "trace_id": s.trace_id,
            "span_id": s.span_id,
            "window_s": s.window_s,
            "window_start": s.window_start,
            "query_id": s.query_id,
            "judge": json.dumps(s.judge.to_json(), sort_keys=True),
            "pairs": s.pairs,
            "unlabelled": s.unlabelled,
            "measure_values": json.dumps(
                {k: (None if math.isnan(v) else v) for k, v in s.values.items()}
            ),
            "doc_ids": json.dumps(list(s.doc_ids)),
        }
        for s in samples
    ]
    try:
        with store.transaction() as conn:
            for table, rows in (
                (schema.monitor_spans, span_rows),
                (schema.monitor_samples, sample_rows),
            ):
                for i in range(0, len(rows), 10_000):
                    conn.execute(sa.insert(table), rows[i : i + 10_000])
    except sa.exc.DBAPIError as exc:
        raise StoreError(
            f"cannot save the monitored spans to {store.url}: {exc.orig}; nothing was saved"
        ) from exc


def load_samples(store: Store, stream: str) -> list[SampleRow]:
    """Every judged sample of the stream."""
    t = schema.monitor_samples
    with store.connect() as conn:
        rows = conn.execute(sa.select(t).where(t.c.stream == stream)).mappings().all()
    return [
        SampleRow(
            span_id=r["span_id"],
            trace_id=r["trace_id"],
            window_s=r["window_s"],
            window_start=r["window_start"],
            query_id=r["query_id"],
            judge=LabelSource.from_json(json.loads(r["judge"])),
            pairs=r["pairs"],
            unlabelled=r["unlabelled"],
            values={
                k: (math.nan if v is None else float(v))
                for k, v in json.loads(r["measure_values"]).items()
            },
            doc_ids=tuple(json.loads(r["doc_ids"])),
        )
        for r in rows
    ]


def load_spans(store: Store, stream: str) -> list[SpanRow]:
    """Every span of the stream (its latency rows; NaN for a NULL duration)."""
    t = schema.monitor_spans
    with store.connect() as conn:
        rows = conn.execute(
            sa.select(t.c.span_id, t.c.trace_id, t.c.stage, t.c.started_ns, t.c.duration_ms).where(
                t.c.stream == stream
            )
        ).all()
    return [SpanRow(a, b, c, d, _nan(e)) for a, b, c, d, e in rows]


#: the fields a stored window row takes from its figure
_FIGURE_FIELDS = tuple(f.name for f in fields(WindowFigure))


def save_windows(
    store: Store,
    stream: str,
    window_s: int,
    figures: Iterable[Any],
    judge: LabelSource | None,
) -> None:
    """Replace the stream's figures for this window length (``WindowFigure`` objects)."""
    now = datetime.now(UTC)
    rows = [
        _to_columns(
            WindowRow(
                **{name: getattr(f, name) for name in _FIGURE_FIELDS},
                window_s=window_s,
                judge=None if f.measure.startswith("latency_ms.") else judge,
            ),
            stream,
            now,
        )
        for f in figures
    ]
    _replace_rows(store, schema.monitor_windows, stream, window_s, rows)


def load_windows(store: Store, stream: str, window_s: int | None = None) -> list[WindowRow]:
    """The stream's stored figures (one window length, or all), by window then measure."""
    return _load_rows(store, schema.monitor_windows, WindowRow, stream, window_s)


def streams(store: Store) -> list[str]:
    """The names of the monitored streams."""
    t = schema.monitor_spans
    with store.connect() as conn:
        return list(conn.execute(sa.select(t.c.stream).distinct().order_by(t.c.stream)).scalars())
