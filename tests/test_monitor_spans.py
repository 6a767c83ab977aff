"""``ragmeter monitor``'s spans: known by (trace id, span id), spans that end before they
start, times past the store's integers, and the rules ``monitor check`` prints. Labels come
from a qrels file (no judge server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.core.provenance import LabelProvenance, human_source
from ragmeter.io.provenance import write_provenance
from ragmeter.io.traces import query_hash
from traces_util import DAY0_NS, HOUR_NS, rag_trace, request, write_lines

runner = CliRunner()
DAY_NS = 24 * HOUR_NS
DOCS = ["a", "b", "c"]


def _labels(tmp: Path, queries: list[str]) -> Path:
    labels = tmp / "labels.txt"
    lines = [
        f"{query_hash(q)} 0 {d} {g}\n"
        for q in queries
        for d, g in zip(DOCS, (3, 0, 1), strict=True)
    ]
    labels.write_text("".join(lines))
    write_provenance(labels, LabelProvenance.single(human_source("alice")))
    return labels


def _monitor(tmp: Path, traces: Path, labels: Path, *extra: str) -> Any:
    url = f"sqlite:///{tmp / 'm.db'}"
    args = ["monitor", str(traces), "--labels", str(labels), "--store", url, "--sample", "1.0"]
    return runner.invoke(app, [*args, *extra])


def _with_span_ids(spans: list[dict[str, Any]], ids: list[str]) -> list[dict[str, Any]]:
    """The spans given the span ids ``ids`` (parents pointed at the new root id)."""
    old = {s["spanId"]: new for s, new in zip(spans, ids, strict=True)}
    for s in spans:
        s["spanId"] = old[s["spanId"]]
        s["parentSpanId"] = old.get(s["parentSpanId"], "")
    return spans


def test_spans_of_another_trace_reusing_ids_are_kept(tmp_path: Path) -> None:
    """A later day's trace whose spans reuse the span ids of day 1's (another trace id) adds
    its 3 spans and its window; on the old key (stream, span id) they were taken as known:
    '3 span(s) read, 0 new' and day 2 had no window."""
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_samples, load_spans, load_windows

    day1 = rag_trace(1, "first question", DOCS, DAY0_NS, texts=DOCS)
    day2 = rag_trace(2, "second question", DOCS, DAY0_NS + DAY_NS, texts=DOCS)
    ids = [s["spanId"] for s in day1]
    day2 = _with_span_ids(day2, ids)
    assert day1[0]["traceId"] != day2[0]["traceId"]
    labels = _labels(tmp_path, ["first question", "second question"])
    one = _monitor(tmp_path, write_lines(tmp_path / "d1.json", [request(day1)]), labels)
    assert one.exit_code == 0, one.output
    two = _monitor(tmp_path, write_lines(tmp_path / "d2.json", [request(day2)]), labels)
    assert two.exit_code == 0, two.output
    assert "3 span(s) read, 3 new; 1 retriever span(s) sampled" in two.output
    with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        spans = load_spans(store, "production")
        samples = load_samples(store, "production")
        windows = {w.window_start for w in load_windows(store, "production", 86400)}
    assert len(spans) == 6 and len(samples) == 2
    assert {s.trace_id for s in samples} == {day1[0]["traceId"], day2[0]["traceId"]}
    assert windows == {DAY0_NS // 10**9, DAY0_NS // 10**9 + 86400}
    # both days in one file, read again: nothing new
    both = write_lines(tmp_path / "both.json", [request(day1), request(day2)])
    again = _monitor(tmp_path, both, labels)
    assert "6 span(s) read, 0 new; 0 retriever span(s) sampled" in again.output


def test_both_spans_sharing_an_id_in_one_file_are_sampled(tmp_path: Path) -> None:
    day1 = rag_trace(1, "first question", DOCS, DAY0_NS, texts=DOCS)
    day2 = _with_span_ids(
        rag_trace(2, "second question", DOCS, DAY0_NS + HOUR_NS, texts=DOCS),
        [s["spanId"] for s in day1],
    )
    labels = _labels(tmp_path, ["first question", "second question"])
    both = write_lines(tmp_path / "both.json", [request(day1), request(day2)])
    out = _monitor(tmp_path, both, labels)
    assert out.exit_code == 0, out.output
    assert "6 span(s) read, 6 new; 2 retriever span(s) sampled, 6 pair(s)" in out.output


def test_a_span_ending_before_it_starts_has_no_latency(tmp_path: Path) -> None:
    """Three requests of one day; the retriever span of one ends 5 s before it starts. It is
    counted, kept (sampled, judged) and left out of the latency percentiles: the retriever's
    p50 is that of the other two (10 and 20 ms: 15), not −5000 ms in the mix."""
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_spans, load_windows

    queries = ["q one", "q two", "q three"]
    records = []
    for n, (q, ms) in enumerate(zip(queries, (10.0, 20.0, 30.0), strict=True), 1):
        spans = rag_trace(n, q, DOCS, DAY0_NS + n * HOUR_NS, texts=DOCS, retrieve_ms=ms)
        if n == 3:
            start = int(spans[1]["startTimeUnixNano"])
            spans[1]["endTimeUnixNano"] = str(start - 5 * 10**9)
        records.append(request(spans))
    traces = write_lines(tmp_path / "t.json", records)
    out = _monitor(tmp_path, traces, _labels(tmp_path, queries))
    assert out.exit_code == 0, out.output
    assert "9 span(s) read, 9 new; 3 retriever span(s) sampled" in out.output
    assert "1 span(s) end before they start" in " ".join(out.output.split())
    with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        rows = {r.measure: r for r in load_windows(store, "production", 86400)}
        spans = load_spans(store, "production")
    p50 = rows["latency_ms.p50(stage=retriever)"]
    assert (p50.n, p50.mean) == (2, pytest.approx(15.0))
    assert rows["ndcg@5"].n == 3  # the span's ranking is still judged
    assert sum(s.duration_ms != s.duration_ms for s in spans) == 1  # NaN (NULL) once


@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano"])
def test_a_time_past_int64_is_an_input_error(tmp_path: Path, field: str) -> None:
    spans = rag_trace(1, "q", DOCS, DAY0_NS, texts=DOCS)
    spans[0][field] = "99999999999999999999999999"
    traces = write_lines(tmp_path / "t.json", [request(spans)])
    out = _monitor(tmp_path, traces, _labels(tmp_path, ["q"]))
    assert out.exit_code == 2, out.output
    text = " ".join(out.output.split())
    assert "Traceback" not in out.output and "OverflowError" not in text
    assert "t.json" in text and "line 1" in text and field in text
    assert not (tmp_path / "m.db").exists() or "new" not in text


def test_check_prints_a_latency_rule_as_written(tmp_path: Path) -> None:
    """The rule's text in the table and the JSON is the latency rule given, not the stand-in
    measure it was parsed with."""
    queries = ["q one", "q two"]
    records = [
        request(rag_trace(n, q, DOCS, DAY0_NS + day * DAY_NS, texts=DOCS, retrieve_ms=10.0 * n))
        for day in (0, 1)
        for n, q in enumerate(queries, 1 + 2 * day)
    ]
    traces = write_lines(tmp_path / "t.json", records)
    assert _monitor(tmp_path, traces, _labels(tmp_path, queries)).exit_code == 0
    rule = "latency_ms.p95(stage=retriever) rise > 50%"
    store = ["--store", f"sqlite:///{tmp_path / 'm.db'}"]
    table = runner.invoke(app, ["monitor", "check", "--fail-if", rule, *store])
    assert "mrr" not in table.output
    assert "latency_ms.p95(stage=retriever)" in table.output
    out = runner.invoke(app, ["monitor", "check", "--fail-if", rule, *store, "-f", "json"])
    (outcome,) = json.loads(out.output)["rules"]
    assert outcome["rule"] == rule and outcome["measure"] == "latency_ms.p95(stage=retriever)"


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--fail-if", "ndcg@5 drop > 0.1"],
        ["report", "-o", "trend.html"],
        ["metrics"],
        ["ppi", "--human-qrels", "HUMAN"],
    ],
)
def test_a_missing_monitor_store_says_what_makes_one(tmp_path: Path, args: list[str]) -> None:
    """Not 'evaluate --save creates it': a monitor store is made by ragmeter monitor."""
    url = f"sqlite:///{tmp_path / 'none.db'}"
    human = _labels(tmp_path, ["q"])
    args = [str(human) if a == "HUMAN" else a for a in args]
    args = [str(tmp_path / a) if a.endswith(".html") else a for a in args]
    out = runner.invoke(app, ["monitor", *args, "--store", url])
    text = " ".join(out.output.split())
    assert out.exit_code == 2, out.output
    assert f"no store at {url} yet (ragmeter monitor TRACES --store {url} creates it)" in text
    assert not (tmp_path / "none.db").exists()


def test_traces_given_as_labels_say_so_and_leave_no_store(tmp_path: Path) -> None:
    traces = write_lines(tmp_path / "t.json", [request(rag_trace(1, "q", DOCS, DAY0_NS))] * 2)
    out = _monitor(tmp_path, traces, traces)
    assert out.exit_code == 2 and "this is a trace file" in " ".join(out.output.split())
    assert not (tmp_path / "m.db").exists()
