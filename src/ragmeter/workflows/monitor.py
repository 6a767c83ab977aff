"""``ragmeter monitor``: read production traces, sample retriever spans per window, judge the
sampled passages (the relevance prompts of ``ragmeter judge``, cached), score each span with
the evaluation path of ``ragmeter evaluate`` and store spans, samples and window figures.

A span's judged measures are those of ``ragmeter evaluate`` on a run of one query (the span)
whose qrels are the judge's grades of its top ``depth`` passages: P@K and nDCG@K over judged
retrieved passages (the ideal ranking of nDCG is that of the retrieved passages), as Phoenix
computes them from LLM-judged retriever spans. The figures are computed on LLM labels and say
so (:meth:`MonitorOutcome.labels_line`). The statistics are :mod:`ragmeter.analysis.monitor`'s.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ragmeter.analysis.monitor import (
    LATENCY_QUANTILES,
    MonitorError,
    SampleSpec,
    WindowFigure,
    choose,
    latency_figures,
    latency_name,
    mean_figure,
    window_label,
    window_of,
)
from ragmeter.errors import InputError

if TYPE_CHECKING:
    from ragmeter.analysis.gate import GateResult
    from ragmeter.core.provenance import LabelSource
    from ragmeter.io.traces import Retrieval
    from ragmeter.judges.runner import Progress
    from ragmeter.judges.types import Judge
    from ragmeter.store.monitor import PPIRow, SampleRow, SpanKey, SpanRow
    from ragmeter.store.sql import Store

#: the judged measures by default: nDCG@5 on the judge's grades, and P@5 counting grade ≥ 2
#: (UMBRELA's "highly relevant") as relevant
DEFAULT_MEASURES: tuple[str, ...] = ("ndcg@5", "P@5(rel_level=2)")
DEFAULT_STREAM = "production"


def _made_by(url: str | None) -> str:
    """What makes a monitor store (said when a command that reads one finds none)."""
    return f"ragmeter monitor TRACES --store {url}" if url else "ragmeter monitor TRACES"


@dataclass(frozen=True)
class MonitorRequest:
    """What ``ragmeter monitor`` was asked."""

    traces: Sequence[str | os.PathLike[str]]
    store: str
    sample: SampleSpec
    window_s: int = 86400
    stream: str = DEFAULT_STREAM
    seed: int = 0
    measures: Sequence[str] = DEFAULT_MEASURES
    depth: int = 10
    prompt: str = "umbrela"
    query_id_from: str | None = None
    #: where documents take their ids (``None``: automatic, :mod:`ragmeter.io.traces`)
    doc_id_from: str | None = None
    #: which spans are sampled: ``None`` every retriever span (each step of an agent),
    #: ``reranker`` the rerankers' output, ``step:N`` each trace's N-th retriever step
    stage: str | None = None
    #: labels from a qrels file (by query id) instead of a judge; its provenance sidecar
    #: says who made them
    labels: str | os.PathLike[str] | None = None
    #: grades mapped before scoring, as ``ragmeter evaluate --grade-map`` (RA-nWG reads the
    #: 1..5 utility scale: ``0:1,1:3,2:4,3:5`` for UMBRELA's grades)
    grade_map: str | None = None
    #: a folder to write this run's sampled spans in for people to label (``ragmeter serve``)
    export: str | os.PathLike[str] | None = None


@dataclass
class MonitorOutcome:
    """What a monitor run did and the stream's figures for its window length afterwards."""

    stream: str
    window_s: int
    spans_read: int
    new_spans: int
    sampled: int
    pairs_judged: int
    pairs_unlabelled: int
    judge: LabelSource
    figures: list[WindowFigure]
    notes: list[str] = field(default_factory=list)
    judge_lines: list[str] = field(default_factory=list)

    def labels_line(self) -> str:
        from ragmeter.core.provenance import LabelProvenance

        return f"computed on {LabelProvenance.single(self.judge).describe()}"


def canonical_measures(names: Sequence[str]) -> list[str]:
    """The measures' canonical names (as ``ragmeter evaluate`` prints them)."""
    from ragmeter.measures import REGISTRY

    out: list[str] = []
    for name in names:
        out.extend(str(m) for m in REGISTRY.parse(name))
    return list(dict.fromkeys(out))


def _span_rows(traces: Any) -> tuple[dict[SpanKey, SpanRow], int]:
    """The spans read by (trace id, span id), and how many of them end before they start:
    those have no latency (their duration is NaN, stored NULL, left out of the percentiles),
    as a time the reader cannot read has none; the span itself is kept (a rerun skips it, its
    ranking may be sampled). A span read twice keeps its first row."""
    from ragmeter.store.monitor import SpanRow

    rows: dict[SpanKey, SpanRow] = {}
    backwards = 0
    for span_id, trace_id, stage, start_ns, duration_ms in traces.span_rows:
        if duration_ms < 0:
            backwards += 1
            duration_ms = math.nan
        row = SpanRow(span_id, trace_id, stage, start_ns, duration_ms)
        rows.setdefault(row.key, row)
    return rows, backwards


#: the range of a time in nanoseconds since the epoch: OTLP's 64-bit integers, the store's
_NS_MIN, _NS_MAX = -(2**63), 2**63 - 1
#: a time's field, by the shape of the trace file
_TIME_FIELDS = {
    "otlp": ("startTimeUnixNano", "endTimeUnixNano"),
    "phoenix": ("start_time", "end_time"),
}


def _check_times(rows: Mapping[SpanKey, SpanRow], paths: Sequence[Any]) -> None:
    """A span starting or ending past the 64-bit integers of OTLP times (after the year
    2262) is an error naming the file, the line and the field: the store keeps times in
    such integers (the end is judged from the start and the duration, then read again)."""
    for row in rows.values():
        end = row.started_ns + (0.0 if math.isnan(row.duration_ms) else row.duration_ms * 1e6)
        if not (_NS_MIN <= row.started_ns <= _NS_MAX and end <= _NS_MAX):
            _time_error(row, paths)


def _time_error(row: SpanRow, paths: Sequence[Any]) -> None:
    """Raise the :class:`InputError` of a span's time past 64 bits, found again in its file."""
    from ragmeter.io.traces import iter_spans, sniff_traces

    for path in paths:
        for span in iter_spans(path):
            if (span.trace_id, span.span_id) != row.key:
                continue
            fields = _TIME_FIELDS[sniff_traces(path) or "otlp"]
            for field_name, ns in zip(fields, (span.start_ns, span.end_ns), strict=True):
                if not _NS_MIN <= ns <= _NS_MAX:
                    raise InputError(
                        f"span {span.span_id} of trace {span.trace_id}: {ns} ns since the "
                        "epoch is past the 64-bit integers of OTLP times (at most "
                        f"{_NS_MAX}, in the year 2262)",
                        source=str(path),
                        line=span.line,
                        field=field_name,
                    )


def _ids(spans: Sequence[Retrieval] | Sequence[SampleRow]) -> list[str]:
    """One text id per span (``trace_id:span_id``; the spans are distinct by (trace id, span
    id)), as the query ids of the runs the spans are scored and judged as; prefixed by the
    span's position in the odd case two texts meet (ids holding ``:``)."""
    from ragmeter.analysis.monitor import span_text

    texts = [span_text((s.trace_id, s.span_id)) for s in spans]
    if len(set(texts)) < len(texts):
        return [f"{i}:{t}" for i, t in enumerate(texts)]
    return texts


def _passages(retrievals: Sequence[Retrieval], depth: int) -> dict[str, str]:
    """``{doc id: text}`` of the sampled top passages; a passage without text cannot be
    judged: an error naming the file, the line and the attribute."""
    texts: dict[str, str] = {}
    for r in retrievals:
        for i, (doc, text) in enumerate(zip(r.doc_ids[:depth], r.texts[:depth], strict=True)):
            if text is None:
                raise InputError(
                    f"retriever span {r.span_id}: document {doc!r} has no content to judge",
                    line=r.line,
                    field=f"retrieval.documents.{i}.document.content",
                )
            texts.setdefault(doc, text)
    return texts


def span_values(
    retrievals: Sequence[Retrieval],
    labels: Mapping[str, Mapping[str, int]],
    measures: Sequence[str],
    depth: int,
    grade_map: str | None = None,
) -> dict[str, dict[str, float]]:
    """Each span's measure values: ``ragmeter evaluate`` of the span's top ``depth`` against
    the judge's grades (a span without any label is NA on every measure); ``labels`` and the
    result are keyed by the spans' ids (:func:`_ids`)."""
    from ragmeter.core.data import Run
    from ragmeter.evaluation import evaluate

    nan = dict.fromkeys(measures, math.nan)
    ids = _ids(retrievals)
    out = {i: dict(nan) for i in ids}
    judged = {i: r for i, r in zip(ids, retrievals, strict=True) if labels.get(i)}
    if not judged:
        return out
    run = Run.from_lists({i: list(r.doc_ids[:depth]) for i, r in judged.items()}, name="sample")
    qrels = {i: dict(labels[i]) for i in judged}
    result = evaluate(run, qrels, list(measures), grade_map=grade_map).runs[0]
    for qid, row in zip(result.query_ids, result.values.tolist(), strict=True):
        out[str(qid)] = {str(m): float(v) for m, v in zip(result.measures, row, strict=True)}
    return out


def _check_judge(samples: Sequence[SampleRow], source: LabelSource, stream: str) -> None:
    """A stream's figures come from one judge: another one would mix two scales in a mean."""
    for s in samples:
        if not s.judge.same_judge(source):
            raise MonitorError(
                f"stream {stream!r} was judged by {s.judge.describe()}; this run's judge is "
                f"{source.describe()}. Use the same judge, or another --name"
            )


def _doc_id_from(request: MonitorRequest) -> str | None:
    """Where documents take their ids: as asked; automatic, unless the ``--labels`` were
    made from content hashes (an export of documents without ids): those hashes then."""
    if request.doc_id_from is not None or request.labels is None:
        return request.doc_id_from
    from ragmeter.io.readers import read_qrels
    from ragmeter.io.traces import doc_id_from_for

    judged = read_qrels(request.labels).doc_ids.unique().to_pylist()
    return doc_id_from_for(None, judged)


def monitor_stage(stage: str | None) -> str | None:
    """A stage the monitor samples by: one span per ranking, so ``gathered`` (a union of
    spans) is refused, and ``retriever`` is every retriever span, the default."""
    from ragmeter.io.trace_stages import resolve_stage

    wanted = resolve_stage(stage)
    if wanted == "gathered":
        raise InputError(
            "--stage gathered: the monitor samples spans; a gathered context is no span "
            "(use step:N, reranker, or ragmeter evaluate)"
        )
    return None if wanted == "retriever" else wanted


def run_monitor(
    request: MonitorRequest,
    judge: Judge | Any,
    *,
    cache: Any = ":memory:",
    progress: Progress | None = None,
) -> MonitorOutcome:
    """Read, sample, judge, score and store (see the module docstring)."""
    from ragmeter.analysis.monitor import span_text
    from ragmeter.io.traces import read_traces
    from ragmeter.store import open_store
    from ragmeter.store.monitor import (
        SampleRow,
        add_spans,
        drop_stale_ppi,
        known_spans,
        load_samples,
    )

    measures = canonical_measures(request.measures)
    traces = read_traces(
        request.traces,
        request.query_id_from,
        doc_id_from=_doc_id_from(request),
        stage=monitor_stage(request.stage),
        keep_spans=True,
    )
    rows, backwards = _span_rows(traces)
    _check_times(rows, request.traces)
    # read before the store is opened: a bad labels file leaves no store behind
    given = labels_file(request.labels) if request.labels is not None else None
    with open_store(request.store) as store:
        known = known_spans(store, request.stream, rows)
        stored = load_samples(store, request.stream)
        fresh_by_key: dict[SpanKey, Retrieval] = {}
        for r in traces.retrievals:
            if (r.trace_id, r.span_id) not in known:
                fresh_by_key.setdefault((r.trace_id, r.span_id), r)
        held = _held_per_window(store, request.stream, request.window_s, stored)
        wanted = choose(
            [(window_of(r.start_ns, request.window_s), k) for k, r in fresh_by_key.items()],
            request.sample,
            request.seed,
            held,
            text=span_text,
        )
        sampled = [r for k, r in fresh_by_key.items() if k in wanted]
        labels, source, lines = _label_sampled(
            request, sampled, judge, stored, cache, progress, given
        )
        values = span_values(sampled, labels, measures, request.depth, request.grade_map)
        samples = [
            SampleRow(
                span_id=r.span_id,
                trace_id=r.trace_id,
                window_s=request.window_s,
                window_start=window_of(r.start_ns, request.window_s),
                query_id=r.query_id,
                judge=source,
                pairs=min(len(r.doc_ids), request.depth),
                unlabelled=min(len(r.doc_ids), request.depth) - len(labels.get(i, {})),
                values=values[i],
                doc_ids=tuple(r.doc_ids[: request.depth]),
            )
            for i, r in zip(_ids(sampled), sampled, strict=True)
        ]
        new_rows = [row for key, row in rows.items() if key not in known]
        add_spans(store, request.stream, new_rows, samples)
        figures = refresh_windows(store, request.stream, request.window_s, measures, source)
        stale = drop_stale_ppi(store, request.stream, (r.start_ns // 10**9 for r in sampled))
    notes = traces.describe()
    if backwards:
        notes.append(
            f"{backwards} span(s) end before they start (a clock set wrong?): they have no "
            "latency and are left out of the latency percentiles"
        )
    if stale:
        notes.append(
            f"the prediction-powered estimates of {stale} window(s) were removed: their "
            "samples changed (rerun ragmeter monitor ppi)"
        )
    if request.export is not None:
        notes.append(
            export_for_labelling(sampled, labels, source, request.export, request.depth)
            if sampled
            else f"no span sampled in this run ({len(new_rows)} new span(s)): nothing "
            f"written to {request.export}"
        )
    return MonitorOutcome(
        stream=request.stream,
        window_s=request.window_s,
        spans_read=traces.spans,
        new_spans=len(new_rows),
        sampled=len(samples),
        pairs_judged=sum(s.pairs for s in samples),
        pairs_unlabelled=sum(s.unlabelled for s in samples),
        judge=source,
        figures=figures,
        notes=notes,
        judge_lines=lines,
    )


def _label_sampled(
    request: MonitorRequest,
    sampled: Sequence[Retrieval],
    judge: Any,
    stored: Sequence[SampleRow],
    cache: Any,
    progress: Progress | None,
    given: tuple[dict[str, dict[str, int]], LabelSource] | None = None,
) -> tuple[dict[str, dict[str, int]], LabelSource, list[str]]:
    """``{span's id (:func:`_ids`): {doc id: grade}}`` of the sampled spans, who made the
    labels, and the judge's summary lines: the judge's grades of each span's top ``depth``
    (cached), or the labels of ``request.labels`` by the span's query id."""
    from ragmeter.judges.api import as_judge, label_source, relevance_job

    if request.labels is not None:
        by_query, source = given if given is not None else labels_file(request.labels)
        _check_judge(stored, source, request.stream)
        labels = {
            i: {
                d: by_query[r.query_id][d]
                for d in r.doc_ids[: request.depth]
                if d in by_query.get(r.query_id, {})
            }
            for i, r in zip(_ids(sampled), sampled, strict=True)
        }
        return labels, source, [f"labels from {request.labels} ({source.describe()})"]
    the_judge = as_judge(judge)
    job = relevance_job(
        {i: list(r.doc_ids) for i, r in zip(_ids(sampled), sampled, strict=True)},
        {i: r.query for i, r in zip(_ids(sampled), sampled, strict=True)},
        _passages(sampled, request.depth),
        depth=request.depth,
        prompt=request.prompt,
    )
    source = label_source(job.task, the_judge)
    _check_judge(stored, source, request.stream)
    if not sampled:
        return {}, source, []
    result = job.execute(the_judge, cache=cache, progress=progress)
    return result.labels, source, [*result.summary.lines(), *result.notes]


def labels_file(path: str | os.PathLike[str]) -> tuple[dict[str, dict[str, int]], LabelSource]:
    """The qrels of ``path`` and the one source its provenance sidecar names; a file
    without a sidecar, or with labels from several sources, is refused (a window's figures
    come from one maker of labels)."""
    from ragmeter.io.provenance import provenance_path, read_provenance, require_verified
    from ragmeter.io.readers import read_qrels

    qrels = read_qrels(path).to_dict()  # first: a file that is not qrels says so
    prov = read_provenance(path)
    if prov is None:
        raise MonitorError(
            f"{path}: no provenance sidecar ({provenance_path(path).name}) says who made "
            "these labels; ragmeter monitor needs it"
        )
    require_verified(prov, path)  # the window's maker of labels must be proven
    if len(prov.sources) != 1:
        raise MonitorError(
            f"{path}: labels from {len(prov.sources)} sources; ragmeter monitor takes the "
            "labels of one maker"
        )
    return qrels, next(iter(prov.sources.values()))


#: the labels file of an export, by who made the labels (:attr:`LabelSource.kind`)
EXPORTED_LABELS: dict[str, str] = {"judge": "llm_labels.txt", "human": "human_labels.txt"}


def export_for_labelling(
    sampled: Sequence[Retrieval],
    labels: Mapping[str, Mapping[str, int]],
    source: LabelSource,
    folder: str | os.PathLike[str],
    depth: int,
) -> str:
    """Write the sampled spans as a collection people can label with ``ragmeter serve``:
    ``queries.jsonl`` and ``corpus.jsonl`` ({id, text}), ``run.txt`` (each query's judged
    passages, rank order; several spans of a query pooled) and the sampled spans' labels
    with their provenance sidecar, named by who made them (:data:`EXPORTED_LABELS`: a judge's
    ``llm_labels.txt``, people's ``human_labels.txt``; a labels file an earlier export left
    in the folder is removed, as it would not describe this collection). People's labels,
    exported from the app, are the ``--human-qrels`` of ``ragmeter monitor ppi``. Returns a
    line saying so."""
    from pathlib import Path

    from ragmeter.core.data import Run
    from ragmeter.core.provenance import LabelProvenance
    from ragmeter.io._common import atomic_write_text
    from ragmeter.io.provenance import provenance_path, write_provenance
    from ragmeter.io.trec import write_trec_qrels, write_trec_run

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    queries: dict[str, str] = {}
    passages: dict[str, str] = {}
    pooled: dict[str, dict[str, None]] = {}
    grades: dict[str, dict[str, int]] = {}
    for i, r in zip(_ids(sampled), sampled, strict=True):
        queries.setdefault(r.query_id, r.query)
        for doc, text in zip(r.doc_ids[:depth], r.texts[:depth], strict=True):
            passages.setdefault(doc, text or "")
            pooled.setdefault(r.query_id, {})[doc] = None
            if doc in labels.get(i, {}):
                grades.setdefault(r.query_id, {})[doc] = labels[i][doc]
    lines = (json.dumps({"id": k, "text": v}, ensure_ascii=False) for k, v in queries.items())
    atomic_write_text(out / "queries.jsonl", "".join(f"{line}\n" for line in lines))
    lines = (json.dumps({"id": k, "text": v}, ensure_ascii=False) for k, v in passages.items())
    atomic_write_text(out / "corpus.jsonl", "".join(f"{line}\n" for line in lines))
    write_trec_run(
        Run.from_lists({q: list(d) for q, d in pooled.items()}, name="sampled"), out / "run.txt"
    )
    for stale in EXPORTED_LABELS.values():
        (out / stale).unlink(missing_ok=True)
        provenance_path(out / stale).unlink(missing_ok=True)
    written = ""
    if grades:
        from ragmeter.core.data import Qrels

        labels_path = out / EXPORTED_LABELS[source.kind]
        write_trec_qrels(Qrels.from_dict(grades), labels_path)
        write_provenance(labels_path, LabelProvenance.single(source))
        written = f", their labels in {labels_path.name}"
    return (
        f"{len(queries)} sampled quer(ies) and {len(passages)} passage(s) written to {out}"
        f"{written}, for people to label (ragmeter serve)"
    )


def _held_per_window(
    store: Store, stream: str, window_s: int, stored: Sequence[SampleRow]
) -> dict[int, int]:
    """How many stored samples each window (of this length) holds."""
    from ragmeter.store.monitor import load_spans

    if not stored:
        return {}
    starts = {s.key: s.started_ns for s in load_spans(store, stream)}
    held: dict[int, int] = {}
    for s in stored:
        w = window_of(starts[s.key], window_s)
        held[w] = held.get(w, 0) + 1
    return held


def refresh_windows(
    store: Store,
    stream: str,
    window_s: int,
    measures: Sequence[str],
    judge: LabelSource | None,
) -> list[WindowFigure]:
    """Recompute and store the stream's window figures: each measure's mean and interval
    over the window's samples, and the stages' latency percentiles over its spans."""
    from ragmeter.store.monitor import load_samples, load_spans, save_windows

    spans = load_spans(store, stream)
    starts = {s.key: s.started_ns for s in spans}
    per_window: dict[int, dict[str, list[float]]] = {}
    for s in load_samples(store, stream):
        w = window_of(starts[s.key], window_s)
        bucket = per_window.setdefault(w, {})
        for m in measures:
            bucket.setdefault(m, []).append(s.values.get(m, math.nan))
    durations: dict[int, dict[str, list[float]]] = {}
    for span in spans:
        stages = durations.setdefault(window_of(span.started_ns, window_s), {})
        if not math.isnan(span.duration_ms):  # NaN: the span ends before it starts
            stages.setdefault(span.stage, []).append(span.duration_ms)
    figures: list[WindowFigure] = []
    for w in sorted(set(per_window) | set(durations)):
        for m in measures:
            figures.append(mean_figure(w, m, per_window.get(w, {}).get(m, []), seed=w))
        figures.extend(latency_figures(w, durations.get(w, {})))
    save_windows(store, stream, window_s, figures, judge)
    return figures


# -- drift ----------------------------------------------------------------------------------


def _parse_time(text: str) -> int | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp())


def window_values(
    store: Store, stream: str, window_s: int, *, latencies: bool = False
) -> dict[int, dict[str, list[float]]]:
    """The samples' values by window (of this length) and measure; ``latencies`` adds each
    stage's span durations under its latency measures' names (for the gate's quantiles)."""
    from ragmeter.store.monitor import load_samples, load_spans

    spans = load_spans(store, stream)
    starts = {s.key: s.started_ns for s in spans}
    out: dict[int, dict[str, list[float]]] = {}
    for s in load_samples(store, stream):
        bucket = out.setdefault(window_of(starts[s.key], window_s), {})
        for m, v in s.values.items():
            bucket.setdefault(m, []).append(v)
    if latencies:
        for span in spans:
            held = out.get(window_of(span.started_ns, window_s))
            if held is None:  # a window without a judged sample is not a window checked
                continue
            for q in LATENCY_QUANTILES:
                held.setdefault(latency_name(span.stage, q), []).append(span.duration_ms)
    return out


def _pick_window(
    windows: Sequence[int], text: str, window_s: int, what: str, before: int | None = None
) -> int:
    candidates = [w for w in windows if before is None or w < before]
    if not candidates:
        raise MonitorError(f"{what}: no judged window{' before it' if before else ''}")
    if text == "latest":
        return candidates[-1]
    if text == "previous":
        return candidates[-1]
    if text == "first":
        return candidates[0]
    at = _parse_time(text)
    if at is None:
        raise MonitorError(
            f"{what} {text!r}: expected latest, previous, first or a time (2026-01-05, "
            "2026-01-05T13:00Z)"
        )
    w = window_of(at * 1_000_000_000, window_s)
    if w not in windows:
        raise MonitorError(f"{what} {text!r}: no judged span in the window starting there")
    return w


@dataclass(frozen=True)
class MonitorCheckRequest:
    """What ``ragmeter monitor check`` was asked: rules, the window checked (``at``) and the
    baseline: ``previous`` (the judged window before it), ``first``, a time, or ``stored:REF``
    (a saved evaluation of the store, its first run unless ``REF:RUN``)."""

    store: str
    rules: Sequence[str]
    window_s: int = 86400
    stream: str = DEFAULT_STREAM
    baseline: str = "previous"
    at: str = "latest"
    alpha: float = 0.05
    #: significant rules on a confidence sequence over every window after the baseline
    #: (:func:`ragmeter.analysis.monitor.check_sequential`), not on the window ``at`` alone
    sequential: bool = False


def check_monitor(request: MonitorCheckRequest) -> GateResult:
    """Check the rules on the window ``at`` against the baseline: Welch's t for
    ``significant`` (:func:`ragmeter.analysis.monitor.check_windows`), or with ``sequential``
    a confidence sequence over the windows since the baseline
    (:func:`ragmeter.analysis.monitor.check_sequential`)."""
    from ragmeter.analysis.gate import GRAMMAR, RuleError
    from ragmeter.analysis.monitor import check_sequential, check_windows, parse_monitor_rule
    from ragmeter.store import open_store

    if not request.rules:
        raise RuleError(f"no rule given; give one or more --fail-if {GRAMMAR}")
    rules = [parse_monitor_rule(r) for r in request.rules]
    with open_store(request.store, create=False, made_by=_made_by(request.store)) as store:
        by_window = window_values(store, request.stream, request.window_s, latencies=True)
        if not by_window:
            raise MonitorError(f"stream {request.stream!r} has no judged sample in {store.url}")
        windows = sorted(by_window)
        current = _pick_window(windows, request.at, request.window_s, "--at")
        name = f"{request.stream} {window_label(current, request.window_s)}"
        base = None
        if request.baseline.startswith("stored:"):
            base_values, base_name = _stored_baseline(store, request.baseline[len("stored:") :])
        else:
            if request.sequential and request.baseline == "previous":
                raise MonitorError(
                    "--baseline previous moves with every look; a sequential check reads every "
                    "window after a fixed baseline: first (its default), a window's time or "
                    "stored:REF (or check one window with --per-window)"
                )
            base = _pick_window(
                windows, request.baseline, request.window_s, "--baseline", before=current
            )
            base_values = by_window[base]
            base_name = f"{request.stream} {window_label(base, request.window_s)}"
        samples = _judge_line(store, request.stream)
    if request.sequential:
        looks = [
            (window_label(w, request.window_s), by_window[w])
            for w in windows
            if (base is None or w > base) and w <= current
        ]
        last = window_label(current, request.window_s)
        return check_sequential(
            looks,
            base_values,
            rules,
            current_name=f"{request.stream} {len(looks)} window(s) to {last}",
            baseline_name=base_name,
            alpha=request.alpha,
            warnings=[samples] if samples else [],
        )
    return check_windows(
        by_window[current],
        base_values,
        rules,
        current_name=name,
        baseline_name=base_name,
        alpha=request.alpha,
        warnings=[samples] if samples else [],
    )


def _judge_line(store: Store, stream: str) -> str:
    from ragmeter.core.provenance import LabelProvenance
    from ragmeter.store.monitor import load_samples

    samples = load_samples(store, stream)
    if not samples:
        return ""
    return f"computed on {LabelProvenance.single(samples[0].judge).describe()}"


def _stored_baseline(store: Store, reference: str) -> tuple[dict[str, list[float]], str]:
    """The per-query values of a saved evaluation's run (``REF`` or ``REF:RUN``)."""
    ref, _, run_name = reference.partition(":")
    stored = store.load_evaluation(store.resolve(ref))
    evaluation = stored.evaluation
    run = evaluation[run_name] if run_name else evaluation.runs[0]
    values = {str(m): run.column(m).tolist() for m in run.measures}
    return values, f"stored {ref} ({run.name})"


# -- trends ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """A window's change of a measure against the judged window before it: the difference
    of the means and Welch's two-sided p (unadjusted; NaN when it cannot be computed)."""

    difference: float
    p_value: float

    def significant(self, alpha: float = 0.05) -> bool:
        return not math.isnan(self.p_value) and self.p_value <= alpha


@dataclass
class Trend:
    """A stream's stored window figures (one window length), the judge of its samples, and
    each judged window's change against the previous one."""

    stream: str
    window_s: int
    rows: list[Any]
    judge: LabelSource | None
    changes: dict[tuple[str, int], Change] = field(default_factory=dict)
    #: the stored prediction-powered estimates (``ragmeter monitor ppi``) by (measure,
    #: window start)
    ppi: dict[tuple[str, int], PPIRow] = field(default_factory=dict)

    def measures(self) -> list[str]:
        return list(dict.fromkeys(r.measure for r in self.rows))

    def windows(self) -> list[int]:
        return sorted({r.window_start for r in self.rows})

    def latest(self) -> list[Any]:
        """The figures of the latest window."""
        if not self.rows:
            return []
        last = max(r.window_start for r in self.rows)
        return [r for r in self.rows if r.window_start == last]

    def labels_line(self) -> str:
        from ragmeter.core.provenance import LabelProvenance

        if self.judge is None:
            return ""
        return f"judged measures computed on {LabelProvenance.single(self.judge).describe()}"

    def latest_ppi(self) -> list[PPIRow]:
        """The stored estimates of the latest window."""
        if not self.rows:
            return []
        last = max(r.window_start for r in self.rows)
        return [p for (_, w), p in self.ppi.items() if w == last]

    def ppi_line(self) -> str:
        """Who made the human labels of the stored estimates, the estimator and its level."""
        rows = list(self.ppi.values())
        if not rows:
            return ""
        from ragmeter.stats.ppi import ppi_method

        made = [r for r in rows if r.estimator is not None] or rows
        how = ppi_method(made[0].estimator, made[0].alpha)
        return f"PPI: the judged means corrected by {rows[0].human} ({how})"


def stored_trend(store_url: str, stream: str, window_s: int) -> Trend:
    """The stream's figures for ``window_s`` as stored by its last monitor run, with the
    changes between consecutive judged windows (Welch's t on the spans' values)."""
    from ragmeter.analysis.monitor import welch_test
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_ppi, load_windows

    with open_store(store_url, create=False, made_by=_made_by(store_url)) as store:
        rows = load_windows(store, stream, window_s)
        if not rows:
            raise MonitorError(
                f"no figures for stream {stream!r} with {window_s}s windows in {store.url}; "
                "run ragmeter monitor with this --name and --window first"
            )
        by_window = window_values(store, stream, window_s)
        ppi = {(p.measure, p.window_start): p for p in load_ppi(store, stream, window_s)}
    judge = next((r.judge for r in rows if r.judge is not None), None)
    trend = Trend(stream, window_s, rows, judge, ppi=ppi)
    windows = sorted(by_window)
    for before, after in itertools.pairwise(windows):
        for measure, values in by_window[after].items():
            test = welch_test(values, by_window[before].get(measure, []))
            previous = [v for v in by_window[before].get(measure, []) if not math.isnan(v)]
            current = [v for v in values if not math.isnan(v)]
            if previous and current:
                diff = sum(current) / len(current) - sum(previous) / len(previous)
                trend.changes[(measure, after)] = Change(diff, test.p_value)
    return trend


def stored_trends(store_url: str | None, window_s: int) -> list[Trend]:
    """The trend of every stream of the store with figures for ``window_s`` (the default
    store when ``store_url`` is None)."""
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_windows, streams

    with open_store(store_url, create=False, made_by=_made_by(store_url)) as store:
        names = [s for s in streams(store) if load_windows(store, s, window_s)]
        url = store.url
    return [stored_trend(url, name, window_s) for name in names]


# -- human labels: prediction-powered windows ------------------------------------------------


@dataclass(frozen=True)
class WindowPPI:
    """One measure in one window corrected by the human labels of some of its sampled spans
    (``estimate`` ``None`` when none of them is labelled)."""

    window_start: int
    measure: str
    n_labelled: int
    n_unlabelled: int
    llm_mean: float
    estimate: Any


@dataclass
class MonitorPPI:
    stream: str
    window_s: int
    windows: list[WindowPPI]
    judge: LabelSource | None
    human: str
    alpha: float


def _human_labels(path: str | os.PathLike[str]) -> tuple[dict[str, dict[str, int]], str]:
    """The human qrels and how their origin reads; labels a sidecar says an LLM made are
    refused (a prediction-powered estimate corrects LLM labels with people's)."""
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.readers import read_qrels

    prov = read_provenance(path)
    if prov is not None and prov.has_llm:
        raise MonitorError(
            f"{path}: its provenance says {prov.describe()}; --human-qrels takes people's labels"
        )
    origin = prov.describe() if prov is not None else "human labels of unrecorded origin"
    return read_qrels(path).to_dict(), origin


def monitor_ppi(
    store_url: str,
    stream: str,
    window_s: int,
    human_qrels: str | os.PathLike[str],
    *,
    measures: Sequence[str] | None = None,
    grade_map: str | None = None,
    alpha: float = 0.05,
) -> MonitorPPI:
    """Each window's judged measures corrected by people's labels (prediction-powered
    inference with the estimator ``ragmeter evaluate --ppi`` uses by default, cross-fit PPI++:
    :func:`ragmeter.stats.ppi.ppi_mean`, :data:`ragmeter.stats.ppi.DEFAULT_ESTIMATOR`): a
    sampled span is *labelled* when the human qrels grade every passage that was judged for
    it; its Y is ``ragmeter evaluate`` of its ranking
    against those grades (``grade_map`` as the monitor run's), its Ŷ the stored value under
    the judge's labels. The labelled spans must be a uniform sample of the window's sampled
    spans for the estimate to be unbiased. The estimates are stored (replacing the stream's
    for this window length), for ``monitor report`` and ``/metrics`` to show."""
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_samples, save_ppi

    human, origin = _human_labels(human_qrels)
    with open_store(store_url, create=False, made_by=_made_by(store_url)) as store:
        samples = load_samples(store, stream)
        starts = {s.key: s.started_ns for s in _spans(store, stream)}
        if not samples:
            raise MonitorError(f"stream {stream!r} has no judged sample in {store_url}")
        names = canonical_measures(measures) if measures else list(samples[0].values)
        labelled = [
            s
            for s in samples
            if s.doc_ids and all(d in human.get(s.query_id, {}) for d in s.doc_ids)
        ]
        y = _human_values(labelled, human, names, grade_map)
        windows: dict[int, list[SampleRow]] = {}
        for s in samples:
            windows.setdefault(window_of(starts[s.key], window_s), []).append(s)
        out = [_window_ppi(w, m, windows[w], y, alpha) for w in sorted(windows) for m in names]
        result = MonitorPPI(stream, window_s, out, samples[0].judge, origin, alpha)
        save_ppi(store, stream, window_s, ppi_rows(result))
    return result


def ppi_rows(result: MonitorPPI) -> list[PPIRow]:
    """The store's rows of ``result`` (what ``monitor report`` and ``/metrics`` show)."""
    from ragmeter.store.monitor import PPIRow

    rows = []
    for w in result.windows:
        e = w.estimate
        low, high = e.ci if e is not None and e.ci is not None else (math.nan, math.nan)
        rows.append(
            PPIRow(
                window_s=result.window_s,
                window_start=w.window_start,
                measure=w.measure,
                n_labelled=w.n_labelled,
                n_unlabelled=w.n_unlabelled,
                llm_mean=w.llm_mean,
                estimate=math.nan if e is None else float(e.estimate),
                low=float(low),
                high=float(high),
                lam=math.nan if e is None else float(e.lam),
                alpha=result.alpha,
                human=result.human,
                judge=result.judge,
                estimator=None if e is None else str(e.estimator),
            )
        )
    return rows


def _spans(store: Store, stream: str) -> list[SpanRow]:
    from ragmeter.store.monitor import load_spans

    return load_spans(store, stream)


def _human_values(
    labelled: Sequence[SampleRow],
    human: Mapping[str, Mapping[str, int]],
    measures: Sequence[str],
    grade_map: str | None,
) -> dict[SpanKey, dict[str, float]]:
    """Each labelled span's measures under the human grades of its judged passages."""
    from ragmeter.core.data import Run
    from ragmeter.evaluation import evaluate

    if not labelled:
        return {}
    by_id = dict(zip(_ids(labelled), labelled, strict=True))
    run = Run.from_lists({i: list(s.doc_ids) for i, s in by_id.items()}, name="human")
    qrels = {i: {d: human[s.query_id][d] for d in s.doc_ids} for i, s in by_id.items()}
    result = evaluate(run, qrels, list(measures), grade_map=grade_map).runs[0]
    return {
        by_id[str(q)].key: {str(m): float(v) for m, v in zip(result.measures, row, strict=True)}
        for q, row in zip(result.query_ids, result.values.tolist(), strict=True)
    }


def _window_ppi(
    window: int,
    measure: str,
    samples: Sequence[SampleRow],
    y: Mapping[SpanKey, Mapping[str, float]],
    alpha: float,
) -> WindowPPI:
    from ragmeter.stats.ppi import ppi_mean

    pairs = [(y[s.key][measure], s.values.get(measure, math.nan)) for s in samples if s.key in y]
    pairs = [(a, b) for a, b in pairs if not (math.isnan(a) or math.isnan(b))]
    rest = [s.values.get(measure, math.nan) for s in samples if s.key not in y]
    rest = [v for v in rest if not math.isnan(v)]
    everything = [b for _, b in pairs] + rest
    llm_mean = sum(everything) / len(everything) if everything else math.nan
    estimate = None
    if pairs:
        # the default estimator, as evaluate --ppi's: one name, one number
        estimate = ppi_mean([a for a, _ in pairs], [b for _, b in pairs], rest, alpha=alpha)
    return WindowPPI(window, measure, len(pairs), len(rest), llm_mean, estimate)
