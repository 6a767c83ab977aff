"""Traces as input: OTLP JSON and Phoenix span exports read as runs through the format
registry, query ids, latencies and bad input (file, line and field in every error)."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.io.readers import read_run
from ragmeter.io.traces import query_hash, read_traces, sniff_traces
from traces_util import (
    DAY0_NS,
    otlp_span,
    rag_trace,
    request,
    retriever_attributes,
    write_lines,
)

runner = CliRunner()


def expected_hash(text: str) -> str:
    # the documented rule, spelled out independently: NFKC, casefold, one space, stripped
    return "q" + hashlib.sha256(text.encode()).hexdigest()[:16]


def test_query_hash_normalises_case_space_and_width() -> None:
    assert query_hash("  What   is RAG? ") == expected_hash("what is rag?")
    # NFKC folds the full-width letters
    assert query_hash("ＲＡＧ") == expected_hash("rag")


def test_otlp_file_is_a_run(tmp_path: Path) -> None:
    spans = rag_trace(1, "What is RAG?", ["d1", "d2", "d3"], DAY0_NS, retrieve_ms=20)
    spans += rag_trace(2, "who wrote it", ["d4", "d1"], DAY0_NS + 10**9, retrieve_ms=40)
    path = write_lines(tmp_path / "traces.json", [request(spans[:3]), request(spans[3:])])
    assert sniff_traces(path) == "otlp"
    run = read_run(path)
    assert run.name == "traces.json"
    assert run.ranked() == {
        expected_hash("what is rag?"): ["d1", "d2", "d3"],
        expected_hash("who wrote it"): ["d4", "d1"],
    }
    traces = read_traces(path)
    assert traces.spans == 6
    assert sorted(traces.latencies["retriever"]) == [20.0, 40.0]
    assert sorted(traces.latencies["llm"]) == [300.0, 300.0]
    assert set(traces.answers.values()) == {"an answer"}


def test_evaluate_cli_reads_traces(tmp_path: Path) -> None:
    spans = rag_trace(1, "What is RAG?", ["d1", "d2", "d3"], DAY0_NS)
    spans += rag_trace(2, "who wrote it", ["d4", "d1"], DAY0_NS)
    path = write_lines(tmp_path / "traces.jsonl", [request(spans)])
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        f"{expected_hash('what is rag?')} 0 d2 1\n{expected_hash('who wrote it')} 0 d4 1\n"
    )
    args = ["evaluate", str(path), "--qrels", str(qrels), "-m", "mrr", "-f", "json"]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    # reciprocal ranks 1/2 and 1/1
    assert json.loads(out.output)["runs"][0]["metrics"]["mrr"]["mean"] == 0.75


def test_query_id_from_attribute_and_metadata(tmp_path: Path) -> None:
    attrs = retriever_attributes("q text", ["a"], **{"session.id": "s1"})
    attrs["metadata"] = json.dumps({"query_id": "Q7"})
    span = otlp_span("t" * 32, "s" * 16, "RETRIEVER", DAY0_NS, 5, attrs)
    path = write_lines(tmp_path / "t.jsonl", [request([span])])
    assert read_traces(path, "session.id").retrievals[0].query_id == "s1"
    assert read_traces(path, "metadata.query_id").retrievals[0].query_id == "Q7"
    assert read_traces(path, "text").retrievals[0].query_id == "q text"
    with pytest.raises(InputError) as info:
        read_traces(path, "user.id")
    assert info.value.line == 1 and info.value.field == "user.id"


def test_repeated_query_keeps_latest_span(tmp_path: Path) -> None:
    late = rag_trace(1, "same question", ["new"], DAY0_NS + 10**9)
    early = rag_trace(2, "Same  Question", ["old"], DAY0_NS)
    path = write_lines(tmp_path / "t.jsonl", [request(late), request(early)])
    run = read_run(path)
    assert run.ranked() == {expected_hash("same question"): ["new"]}
    assert any("repeat a query" in w for w in run.warnings)


def test_phoenix_jsonl_nested(tmp_path: Path) -> None:
    record = {
        "name": "retrieve",
        "context": {"trace_id": "t1", "span_id": "s1"},
        "span_kind": "RETRIEVER",
        "parent_id": None,
        "start_time": "2026-01-05T00:00:00.000000+00:00",
        "end_time": "2026-01-05T00:00:00.250000+00:00",
        "status_code": "OK",
        "attributes": {
            "input": {"value": "hello"},
            "retrieval": {
                "documents": [
                    {"document": {"id": "b", "score": 0.9, "content": "B"}},
                    {"document": {"id": "a", "score": 0.5, "content": "A"}},
                ]
            },
        },
    }
    path = write_lines(tmp_path / "spans.jsonl", [record])
    assert sniff_traces(path) == "phoenix"
    traces = read_traces(path)
    (r,) = traces.retrievals
    assert r.doc_ids == ("b", "a") and r.texts == ("B", "A")
    assert r.duration_ms == 250.0
    assert read_run(path).ranked() == {expected_hash("hello"): ["b", "a"]}


def test_phoenix_parquet_flat_columns(tmp_path: Path) -> None:
    table = pa.table(
        {
            "name": ["retrieve"],
            "span_kind": ["RETRIEVER"],
            "context.trace_id": ["t1"],
            "context.span_id": ["s1"],
            "parent_id": [None],
            "start_time": pa.array([DAY0_NS], pa.timestamp("ns", tz="UTC")),
            "end_time": pa.array([DAY0_NS + 5_000_000], pa.timestamp("ns", tz="UTC")),
            "attributes.input.value": ["hello"],
            "attributes.retrieval.documents": [
                [{"document.id": "x", "document.score": 1.0, "document.content": "X"}]
            ],
        }
    )
    path = tmp_path / "spans.parquet"
    pq.write_table(table, path)
    assert sniff_traces(path) == "phoenix"
    assert read_run(path).ranked() == {expected_hash("hello"): ["x"]}
    (r,) = read_traces(path).retrievals
    assert r.start_ns == DAY0_NS and r.duration_ms == 5.0


def test_malformed_line_names_file_line_and_field(tmp_path: Path) -> None:
    good = request(rag_trace(1, "q", ["d"], DAY0_NS))
    bad = request([otlp_span("t" * 32, "s" * 16, "RETRIEVER", DAY0_NS, 1, {})])
    bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = "yesterday"
    path = write_lines(tmp_path / "t.json", [good, bad])
    with pytest.raises(InputError) as info:
        read_traces(path)
    assert (info.value.source, info.value.line, info.value.field) == (
        str(path),
        2,
        "startTimeUnixNano",
    )
    path.write_text(json.dumps(good) + "\n{not json\n" + json.dumps(good) + "\n")
    with pytest.raises(InputError) as info:
        read_traces(path)
    assert info.value.line == 2


def test_spans_without_documents_are_counted(tmp_path: Path) -> None:
    empty = otlp_span("t" * 32, "e" * 16, "RETRIEVER", DAY0_NS, 1, {"input.value": "q"})
    path = write_lines(tmp_path / "t.jsonl", [request([empty, *rag_trace(1, "q", ["d"], 0)])])
    traces = read_traces(path)
    assert traces.without_documents == 1 and len(traces.retrievals) == 1
    assert any("1 retriever span(s) without documents" in n for n in traces.describe())


def test_growing_file_reads_what_is_complete(tmp_path: Path) -> None:
    whole = json.dumps(request(rag_trace(1, "q", ["d"], DAY0_NS)))
    path = tmp_path / "t.jsonl"
    path.write_text(whole + "\n" + whole[: len(whole) // 2])
    traces = read_traces(path)
    assert len(traces.retrievals) == 1
    assert any("line 2 is incomplete" in n for n in traces.describe())


def test_document_without_id_is_named_by_its_content(tmp_path: Path) -> None:
    attrs = {"input.value": "q", "retrieval.documents.0.document.content": "some text"}
    span = otlp_span("t" * 32, "s" * 16, "RETRIEVER", DAY0_NS, 1, attrs)
    path = write_lines(tmp_path / "t.jsonl", [request([span])])
    (r,) = read_traces(path).retrievals
    assert r.doc_ids == ("c" + hashlib.sha256(b"some text").hexdigest()[:16],)


def test_traces_hold_no_qrels(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [request(rag_trace(1, "q", ["d"], DAY0_NS))])
    from ragmeter.io.readers import read_qrels

    with pytest.raises(InputError, match="holds rankings"):
        read_qrels(path, format="otlp")


def _session_trace(tmp_path: Path) -> tuple[Path, Path]:
    """A trace of one retriever span (session S1, documents a, b) and qrels judging b."""
    attrs = retriever_attributes("some text", ["a", "b"], **{"session.id": "S1"})
    span = otlp_span("t" * 32, "s" * 16, "RETRIEVER", DAY0_NS, 5, attrs)
    path = write_lines(tmp_path / "t.jsonl", [request([span])])
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("S1 0 b 1\n")
    return path, qrels


def test_evaluate_query_id_from_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.io.traces import QUERY_ID_ENV

    monkeypatch.delenv(QUERY_ID_ENV, raising=False)
    path, qrels = _session_trace(tmp_path)
    trec = tmp_path / "run.txt"
    trec.write_text("S1 Q0 b 1 2.0 r\nS1 Q0 a 2 1.0 r\n")
    args = ["evaluate", str(path), str(trec), "--qrels", str(qrels), "-m", "mrr", "-f", "json"]
    out = runner.invoke(app, [*args, "--query-id-from", "session.id"])
    assert out.exit_code == 0, out.output
    runs = json.loads(out.output)["runs"]
    # b is at rank 2 in the trace (1/2), at rank 1 in the TREC run, which has its own ids
    assert [r["metrics"]["mrr"]["mean"] for r in runs] == [0.5, 1.0]
    # the option is carried by the request, not left in the process's environment
    assert QUERY_ID_ENV not in os.environ


def test_evaluate_files_records_where_query_ids_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.io.traces import QUERY_ID_ENV
    from ragmeter.workflows.evaluate import EvaluateRequest, evaluate_files

    monkeypatch.delenv(QUERY_ID_ENV, raising=False)
    path, qrels = _session_trace(tmp_path)
    asked = EvaluateRequest(runs=[path], qrels=qrels, measures=["mrr"], query_id_from="session.id")
    outcome = evaluate_files(asked)
    assert outcome.evaluation.runs[0].means()["mrr"] == 0.5
    assert outcome.parameters["query_id_from"] == "session.id"
    hashed = tmp_path / "hashed.txt"
    hashed.write_text(f"{query_hash('some text')} 0 b 1\n")
    default = evaluate_files(EvaluateRequest(runs=[path], qrels=hashed, measures=["mrr"]))
    assert default.parameters["query_id_from"] == "hash"
    trec = tmp_path / "run.txt"
    trec.write_text("S1 Q0 b 1 2.0 r\n")
    plain = evaluate_files(EvaluateRequest(runs=[trec], qrels=qrels, measures=["mrr"]))
    assert "query_id_from" not in plain.parameters


def test_query_id_from_is_a_read_run_parameter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.io.traces import QUERY_ID_ENV, query_hash

    path, _ = _session_trace(tmp_path)
    monkeypatch.delenv(QUERY_ID_ENV, raising=False)

    def ids(run: Any) -> list[str]:
        return list(run.query_ids)

    assert ids(read_run(path)) == [query_hash("some text")]
    assert ids(read_run(path, query_id_from="session.id")) == ["S1"]
    assert ids(read_run(path, query_id_from="text")) == ["some text"]
    # the environment variable is the user's default; the parameter wins over it
    monkeypatch.setenv(QUERY_ID_ENV, "session.id")
    assert ids(read_run(path)) == ["S1"]
    assert ids(read_run(path, query_id_from="text")) == ["some text"]
    with pytest.raises(InputError, match="--query-id-from is empty"):
        read_run(path, query_id_from=" ")


def test_sniffing_reads_only_the_head(tmp_path: Path) -> None:
    """A long one-line JSON run is not read whole to learn it is not traces; a long OTLP
    line is still recognised by its head."""
    big = {f"q{i}": {f"d{j}": float(j) for j in range(50)} for i in range(3000)}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(big))
    assert path.stat().st_size > 1 << 20
    assert sniff_traces(path) is None
    assert read_run(path).n_queries == 3000
    docs = [f"d{j}" for j in range(20_000)]
    long = write_lines(tmp_path / "t.json", [request(rag_trace(1, "q", docs, DAY0_NS))])
    assert long.stat().st_size > 1 << 20 and sniff_traces(long) == "otlp"


def _hand_line(attributes: str, start: str = '"1767571200000000000"') -> str:
    # written out by hand: numbers json.loads and orjson read differently
    return (
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t1","spanId":"s1",'
        f'"startTimeUnixNano":{start},"endTimeUnixNano":1767571200020000000,'
        f'"attributes":[{attributes}]}}]}}]}}]}}'
    )


def test_orjson_and_json_read_the_same_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("orjson")
    from ragmeter.io import traces as traces_module

    kind = '{"key":"openinference.span.kind","value":{"stringValue":"RETRIEVER"}},'
    doc = '{"key":"retrieval.documents.0.document.id","value":{"stringValue":"d\\u00e9"}},'
    query = '{"key":"input.value","value":{"stringValue":"q \\ud800"}},'
    plain = '{"key":"input.value","value":{"stringValue":"plain"}}'
    lines = [
        # an intValue past 64 bits: an integer to json.loads, a float to orjson
        _hand_line(kind + doc + plain + ',{"key":"n","value":{"intValue":123456789012345678901}}'),
        # NaN and a lone surrogate: json.loads only
        _hand_line(kind + doc + query + '{"key":"x","value":{"doubleValue":NaN}}'),
        # a start time past 64 bits (a number, not a string)
        _hand_line(kind + doc + plain, start="18446744073709551616001"),
        _hand_line(kind + doc + plain),
    ]
    path = tmp_path / "t.json"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    def read(loads: object) -> list[tuple[int, int, list[tuple[str, Any]]]]:
        monkeypatch.setattr(traces_module, "_ORJSON_LOADS", loads)
        return [
            (s.start_ns, s.end_ns, sorted(s.attributes.items(), key=repr))
            for s in traces_module.iter_spans(path)
        ]

    import orjson

    exact = read(None)
    assert dict(exact[0][2])["n"] == 123456789012345678901
    assert exact[2][0] == 18446744073709551616001
    assert math.isnan(dict(exact[1][2])["x"])
    assert dict(exact[1][2])["input.value"] == "q \ud800"
    assert dict(exact[3][2])["retrieval.documents.0.document.id"] == "d\u00e9"
    assert repr(read(orjson.loads)) == repr(exact)  # repr: NaN is not equal to itself


_ANY_VALUE = st.one_of(
    st.builds(lambda s: {"stringValue": s}, st.text(max_size=12)),
    st.builds(lambda f: {"doubleValue": f}, st.floats(allow_nan=False, allow_infinity=False)),
    st.builds(lambda i: {"intValue": str(i)}, st.integers(-(2**70), 2**70)),
    # a bare number (not a string): json.loads reads an integer, orjson a float past 64 bits
    st.builds(lambda i: {"intValue": i}, st.integers(-(2**70), 2**70)),
    st.builds(lambda b: {"boolValue": b}, st.booleans()),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=8), _ANY_VALUE), max_size=6),
    st.integers(0, 2**63) | st.integers(2**64 + 1, 2**70),
)
def test_orjson_never_changes_a_value(attributes: list[tuple[str, Any]], start: int) -> None:
    pytest.importorskip("orjson")
    import orjson

    from ragmeter.io import traces as traces_module

    items = [{"key": k, "value": v} for k, v in attributes]
    span = {"traceId": "t", "spanId": "s", "startTimeUnixNano": start, "attributes": items}
    span["endTimeUnixNano"] = start
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()

    def spans(loads: object) -> str:
        saved = traces_module._ORJSON_LOADS
        traces_module._ORJSON_LOADS = loads
        try:
            return repr(list(traces_module._line_spans(1, line, "t.json", "otlp")))
        finally:
            traces_module._ORJSON_LOADS = saved

    assert spans(orjson.loads) == spans(None)
