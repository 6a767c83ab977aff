"""Traces from the app you run (issue #38): document ids from where frameworks put them, one
rule for order (and a TREC file that keeps it), reranker stages and agent steps each a run of
its own. Traces are made by the real OpenTelemetry SDK with the OpenInference semantic
conventions and written as OTLP JSON, as tests/test_traces_otel.py does; every expected value
is computed by hand in the comments."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

trace_sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk")
memory = pytest.importorskip(
    "opentelemetry.sdk.trace.export.in_memory_span_exporter", reason="opentelemetry-sdk"
)
export = pytest.importorskip("opentelemetry.sdk.trace.export", reason="opentelemetry-sdk")
encoder = pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.common.trace_encoder",
    reason="opentelemetry-exporter-otlp-proto-common",
)
json_format = pytest.importorskip("google.protobuf.json_format", reason="protobuf")
semconv = pytest.importorskip("openinference.semconv.trace", reason="openinference")

from ragmeter.cli import app  # noqa: E402
from ragmeter.errors import InputError  # noqa: E402
from ragmeter.io.readers import read_run  # noqa: E402
from ragmeter.io.traces import (  # noqa: E402
    content_id,
    query_hash,
    read_trace_stages,
    read_traces,
    trace_contents,
)

S = semconv.SpanAttributes
D = semconv.DocumentAttributes
R = semconv.RerankerAttributes
Kind = semconv.OpenInferenceSpanKindValues
runner = CliRunner()

#: a document: its id (None: not recorded), score, content and metadata (None: none)
Doc = tuple[str | None, float | None, str, dict[str, Any] | None]


class App:
    """A traced app: spans go to memory, :meth:`write` exports them as OTLP JSON."""

    def __init__(self) -> None:
        self.exporter = memory.InMemorySpanExporter()
        provider = trace_sdk.TracerProvider()
        provider.add_span_processor(export.SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("rag-app")

    def write(self, path: Path) -> Path:
        request = encoder.encode_spans(self.exporter.get_finished_spans())
        path.write_text(json.dumps(json_format.MessageToDict(request)) + "\n")
        return path

    @contextmanager
    def request(self, question: str, query_id: str | None = None) -> Iterator[None]:
        """One request's root span; ``query_id`` set as using_metadata sets it (the span's
        ``metadata`` attribute, JSON)."""
        with self.tracer.start_as_current_span("query") as chain:
            chain.set_attribute(S.OPENINFERENCE_SPAN_KIND, Kind.CHAIN.value)
            chain.set_attribute(S.INPUT_VALUE, question)
            yield

    def _meta(self, span: Any, query_id: str | None) -> None:
        if query_id is not None:
            span.set_attribute(S.METADATA, json.dumps({"query_id": query_id}))

    def retrieve(self, question: str, docs: Sequence[Doc], query_id: str | None = None) -> None:
        with self.tracer.start_as_current_span("retrieve") as span:
            span.set_attribute(S.OPENINFERENCE_SPAN_KIND, Kind.RETRIEVER.value)
            span.set_attribute(S.INPUT_VALUE, question)
            self._meta(span, query_id)
            _documents(span, S.RETRIEVAL_DOCUMENTS, docs)

    def rerank(
        self,
        question: str,
        inputs: Sequence[Doc],
        outputs: Sequence[Doc],
        query_id: str | None = None,
    ) -> None:
        with self.tracer.start_as_current_span("rerank") as span:
            span.set_attribute(S.OPENINFERENCE_SPAN_KIND, Kind.RERANKER.value)
            span.set_attribute(R.RERANKER_QUERY, question)
            span.set_attribute(R.RERANKER_TOP_K, len(outputs))
            self._meta(span, query_id)
            _documents(span, R.RERANKER_INPUT_DOCUMENTS, inputs)
            _documents(span, R.RERANKER_OUTPUT_DOCUMENTS, outputs)


def _documents(span: Any, prefix: str, docs: Sequence[Doc]) -> None:
    for i, (doc_id, score, content, metadata) in enumerate(docs):
        at = f"{prefix}.{i}"
        if doc_id is not None:
            span.set_attribute(f"{at}.{D.DOCUMENT_ID}", doc_id)
        if score is not None:
            span.set_attribute(f"{at}.{D.DOCUMENT_SCORE}", score)
        span.set_attribute(f"{at}.{D.DOCUMENT_CONTENT}", content)
        if metadata is not None:
            span.set_attribute(f"{at}.{D.DOCUMENT_METADATA}", json.dumps(metadata))


def ids(names: Sequence[str]) -> list[Doc]:
    """Documents with ids, scores n..1 and text."""
    return [(d, float(len(names) - i), f"text of {d}", None) for i, d in enumerate(names)]


def langchain_like(names: Sequence[str], key: str = "id") -> list[Doc]:
    """Documents as LangChain's instrumentor records them: content and metadata, no id."""
    return [(None, None, f"text of {d}", {key: d, "source": "corpus"}) for d in names]


def evaluate(*args: str) -> Any:
    out = runner.invoke(app, ["evaluate", *args, "-f", "json"])
    return out


def means(output: str, measure: str) -> dict[str, float]:
    return {r["name"]: r["metrics"][measure]["mean"] for r in json.loads(output)["runs"]}


# -- document ids --------------------------------------------------------------------------


def _langchain_trace(tmp_path: Path, key: str) -> tuple[Path, Path]:
    """Two questions (query ids Q1, Q2 in metadata) whose documents carry their ids in
    metadata[key]; qrels judge d1 and d9 for Q1, d5 for Q2."""
    rag = App()
    for qid, docs in (("Q1", ["d3", "d1", "d2"]), ("Q2", ["d5", "d4"])):
        with rag.request(f"question {qid}"):
            rag.retrieve(f"question {qid}", langchain_like(docs, key), qid)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("Q1 0 d1 1\nQ1 0 d9 1\nQ2 0 d5 1\n")
    return rag.write(tmp_path / "traces.jsonl"), qrels


def test_ids_in_an_unlisted_metadata_key_are_an_error_then_right_with_doc_id_from(
    tmp_path: Path,
) -> None:
    path, qrels = _langchain_trace(tmp_path, "pk")
    base = [str(path), "--qrels", str(qrels), "--query-id-from", "metadata.query_id"]
    out = evaluate(*base, "-m", "mrr")
    # the content hashes meet no judged document: an error, never a table of zeros
    assert out.exit_code == 2, out.output
    assert "none of its 5 retrieved documents is judged" in out.output
    assert "--doc-id-from" in out.output
    assert '"runs"' not in out.output
    right = evaluate(*base, "-m", "mrr", "-m", "recall@10", "--doc-id-from", "metadata.pk")
    assert right.exit_code == 0, right.output
    # Q1: d1 at rank 2 → RR 1/2, recall 1/2 (d9 not retrieved); Q2: d5 at rank 1 → 1, 1/1
    assert means(right.stdout, "mrr") == {"traces.jsonl": 0.75}
    assert means(right.stdout, "recall@10") == {"traces.jsonl": 0.75}


def test_automatic_ids_take_the_listed_metadata_keys_and_say_so(tmp_path: Path) -> None:
    path, qrels = _langchain_trace(tmp_path, "id")
    traces = read_traces(path, "metadata.query_id")
    assert [r.doc_ids for r in traces.retrievals] == [("d3", "d1", "d2"), ("d5", "d4")]
    notes = traces.describe()
    assert any("5 document(s) without a document.id" in n and "'id'" in n for n in notes)
    out = evaluate(str(path), "--qrels", str(qrels), "--query-id-from", "metadata.query_id",
                   "-m", "mrr")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert means(out.stdout, "mrr") == {"traces.jsonl": 0.75}
    assert "metadata.id" in out.output  # the note names where the ids came from


def test_doc_id_from_document_id_content_and_missing(tmp_path: Path) -> None:
    rag = App()
    with rag.request("q"):
        rag.retrieve("q", [("a", 2.0, "alpha", {"id": "m-a"}), (None, 1.0, "beta", {"id": "m-b"})])
    path = rag.write(tmp_path / "t.jsonl")
    # automatic: per document, document.id first, then the metadata's id
    assert read_run(path).ranked() == {query_hash("q"): ["a", "m-b"]}
    assert read_run(path, doc_id_from="metadata.id").ranked() == {query_hash("q"): ["m-a", "m-b"]}
    hashed = [content_id("alpha"), content_id("beta")]
    assert read_run(path, doc_id_from="content").ranked() == {query_hash("q"): hashed}
    with pytest.raises(InputError) as info:
        read_run(path, doc_id_from="document.id")
    assert info.value.line == 1
    assert info.value.field == "retrieval.documents.1.document.id"
    with pytest.raises(InputError, match=r"--doc-id-from 'meta\.id'"):
        read_run(path, doc_id_from="meta.id")


def test_query_ids_that_meet_no_qrels_are_an_error(tmp_path: Path) -> None:
    rag = App()
    with rag.request("q"):
        rag.retrieve("q", ids(["a"]))
    path = rag.write(tmp_path / "t.jsonl")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("Q1 0 a 1\n")
    out = evaluate(str(path), "--qrels", str(qrels), "-m", "mrr")
    assert out.exit_code == 2
    assert "none of its queries is in the qrels" in out.output and "--query-id-from" in out.output


def test_tiny_judged_share_is_warned_in_every_view(tmp_path: Path) -> None:
    # a trace of 20 documents of which one is judged: 5% < 10%
    rag = App()
    with rag.request("q"):
        rag.retrieve("q", ids([f"d{i}" for i in range(1, 21)]))
    path = rag.write(tmp_path / "t.jsonl")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{query_hash('q')} 0 d3 1\n")
    said = "only 1 of its 20 retrieved documents (5.0%) are judged"
    out = evaluate(str(path), "--qrels", str(qrels), "-m", "mrr")
    assert out.exit_code == 0
    assert any(said in w for w in json.loads(out.stdout)["warnings"])
    table = runner.invoke(app, ["evaluate", str(path), "--qrels", str(qrels), "-m", "mrr"])
    assert said in " ".join(table.output.split())
    # a TREC run is only warned about when none of its documents is judged
    other = tmp_path / "other.txt"
    other.write_text(f"{query_hash('q')} Q0 zz 1 1.0 o\n")
    compared = runner.invoke(
        app, ["compare", str(path), str(other), "--qrels", str(qrels), "-m", "mrr", "-f", "json"]
    )
    assert compared.exit_code == 0, compared.output
    assert said in compared.output
    assert "run 'other.txt': none of its 1 retrieved documents is judged" in compared.output
    report = tmp_path / "report.html"
    done = runner.invoke(
        app, ["report", str(path), "--qrels", str(qrels), "-m", "mrr", "-o", str(report)]
    )
    assert done.exit_code == 0, done.output
    assert said in " ".join(report.read_text().split())


# -- order ------------------------------------------------------------------------------------


def test_tied_scores_keep_the_retrievers_order_and_to_run_keeps_it(tmp_path: Path) -> None:
    rag = App()
    with rag.request("q"):
        # b and c tie: the retriever put b first
        rag.retrieve("q", [(d, s, d, None) for d, s in (("a", 3.0), ("b", 2.0), ("c", 2.0))])
    with rag.request("r"):
        rag.retrieve("r", ids(["x", "y"]))  # scores 2, 1: no tie
    path = rag.write(tmp_path / "t.jsonl")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{query_hash('q')} 0 b 1\n{query_hash('r')} 0 y 1\n")
    out = evaluate(str(path), "--qrels", str(qrels), "-m", "mrr")
    # b at rank 2 (retriever's order): 1/2; y at rank 2: 1/2
    assert means(out.stdout, "mrr") == {"t.jsonl": 0.5}
    assert any("1 ranking(s) have tied scores" in w for w in json.loads(out.stdout)["warnings"])
    # the same scores as a TREC file: trec_eval puts c (doc id descending) before b → 1/3
    raw = tmp_path / "raw.txt"
    raw.write_text(
        f"{query_hash('q')} Q0 a 1 3.0 t\n{query_hash('q')} Q0 b 2 2.0 t\n"
        f"{query_hash('q')} Q0 c 3 2.0 t\n{query_hash('r')} Q0 x 1 2.0 t\n"
        f"{query_hash('r')} Q0 y 2 1.0 t\n"
    )
    assert means(evaluate(str(raw), "--qrels", str(qrels), "-m", "mrr").stdout, "mrr") == {
        "raw.txt": (1 / 3 + 1 / 2) / 2
    }
    written = tmp_path / "run.txt"
    done = runner.invoke(app, ["traces", "to-run", str(path), "-o", str(written)])
    assert done.exit_code == 0, done.output
    lines = [line.split() for line in written.read_text().splitlines()]
    # the tied ranking's scores rewritten n..1; the strictly decreasing one keeps its own
    assert [(x[2], x[4]) for x in lines] == [
        ("a", "3.0"), ("b", "2.0"), ("c", "1.0"), ("x", "2.0"), ("y", "1.0"),
    ]  # fmt: skip
    again = evaluate(str(written), "--qrels", str(qrels), "-m", "mrr")
    assert list(means(again.stdout, "mrr").values()) == [0.5]


# -- stages ------------------------------------------------------------------------------------


def _two_stage(tmp_path: Path) -> tuple[Path, Path]:
    """One question Q1: the retriever's top 4 a b c d, the reranker's top 2 c a; grade 5
    (the utility scale) for a, b and e."""
    rag = App()
    with rag.request("question"):
        retrieved = ids(["a", "b", "c", "d"])
        rag.retrieve("question", retrieved, "Q1")
        rag.rerank("question", retrieved, ids(["c", "a"]), "Q1")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("Q1 0 a 5\nQ1 0 b 5\nQ1 0 e 5\n")
    return rag.write(tmp_path / "t.jsonl"), qrels


def test_two_stage_trace_prints_both_stages_and_the_loss(tmp_path: Path) -> None:
    path, qrels = _two_stage(tmp_path)
    base = [str(path), "--qrels", str(qrels), "--query-id-from", "metadata.query_id"]
    out = evaluate(*base, "-m", "recall@10", "-m", "proc@3", "-m", "pct_proc@3")
    assert out.exit_code == 0, out.output
    # recall: the retriever found a, b of a, b, e (2/3); the reranker kept a (1/3)
    assert means(out.stdout, "recall@10") == pytest.approx(
        {"t.jsonl (retriever)": 2 / 3, "t.jsonl (reranker)": 1 / 3}
    )
    # all grade 5, weight 1: G_ideal(3) = 3 (a, b, e); the pool is the retriever's
    # candidates a b c d for both stages: G_pool(3) = 2 → PROC@3 = 2/3. %PROC@3: the
    # retriever's top 3 a b c weighs 2 → 1; the reranker's c a weighs 1 → 1/2
    assert means(out.stdout, "proc@3") == pytest.approx(
        {"t.jsonl (retriever)": 2 / 3, "t.jsonl (reranker)": 2 / 3}
    )
    assert means(out.stdout, "pct_proc@3") == pytest.approx(
        {"t.jsonl (retriever)": 1.0, "t.jsonl (reranker)": 0.5}
    )
    warnings = json.loads(out.stdout)["warnings"]
    assert any("1 of the 2 relevant document(s) found were lost (50.0%)" in w for w in warnings)
    assert any("(reranker) = the reranker spans' output" in w for w in warnings)
    one = evaluate(*base, "-m", "recall@10", "--stage", "retriever")
    assert means(one.stdout, "recall@10") == pytest.approx({"t.jsonl": 2 / 3})
    # read_run's default is the ranking that reached the LLM: the reranker's
    assert read_run(path, query_id_from="metadata.query_id").ranked() == {"Q1": ["c", "a"]}
    with pytest.raises(InputError, match="no trace has a step 3 ranking"):
        read_run(path, stage="step:3")


def test_a_plain_trace_stays_one_run(tmp_path: Path) -> None:
    rag = App()
    with rag.request("q"):
        rag.retrieve("q", ids(["a", "b"]))
    path = rag.write(tmp_path / "t.jsonl")
    (run,) = read_trace_stages(path)
    assert run.name == "t.jsonl" and run.ranked() == {query_hash("q"): ["a", "b"]}
    assert trace_contents(path).stages == ("retriever",)


# -- agents --------------------------------------------------------------------------------


def _agent(tmp_path: Path) -> tuple[Path, Path]:
    """One question that an agent answers in two retrieval steps with queries of their own:
    step 1 a b, step 2 c e; a, c and d are relevant."""
    rag = App()
    with rag.request("what links a and c?"):
        rag.retrieve("what links a and c?", ids(["a", "b"]))
        rag.retrieve("what is c?", ids(["c", "e"]))
    qrels = tmp_path / "qrels.txt"
    qid = query_hash("what links a and c?")  # the first step's query gives the trace its id
    qrels.write_text(f"{qid} 0 a 1\n{qid} 0 c 1\n{qid} 0 d 1\n")
    return rag.write(tmp_path / "agent.jsonl"), qrels


def test_agent_steps_and_gathered_context_each_a_run(tmp_path: Path) -> None:
    path, qrels = _agent(tmp_path)
    out = evaluate(str(path), "--qrels", str(qrels), "-m", "recall@10")
    assert out.exit_code == 0, out.output
    # step 1 finds a (1/3), step 2 finds c (1/3), together a b c e hold a and c (2/3)
    assert means(out.stdout, "recall@10") == pytest.approx(
        {
            "agent.jsonl (step 1)": 1 / 3,
            "agent.jsonl (step 2)": 1 / 3,
            "agent.jsonl (gathered)": 2 / 3,
        }
    )
    qid = query_hash("what links a and c?")
    assert read_run(path).ranked() == {qid: ["a", "b", "c", "e"]}
    assert read_run(path, stage="step:2").ranked() == {qid: ["c", "e"]}
    steps = read_traces(path).retrievals
    assert [(r.step, r.query, r.query_id) for r in steps] == [
        (1, "what links a and c?", qid),
        (2, "what is c?", qid),
    ]
    held = trace_contents(path)
    assert held.stages == ("step:1", "step:2", "gathered")
    assert held.traces == 1 and held.queries == 1


def test_saved_evaluation_records_how_traces_were_read(tmp_path: Path) -> None:
    from ragmeter.workflows.evaluate import EvaluateRequest, evaluate_files

    path, qrels = _two_stage(tmp_path)
    asked = EvaluateRequest(
        runs=[path],
        qrels=qrels,
        measures=["recall@10"],
        query_id_from="metadata.query_id",
        doc_id_from="document.id",
        stage="reranker",
    )
    outcome = evaluate_files(asked)
    assert outcome.evaluation.runs[0].means()["recall@10"] == pytest.approx(1 / 3)
    assert {k: outcome.parameters[k] for k in ("query_id_from", "doc_id_from", "stage")} == {
        "query_id_from": "metadata.query_id",
        "doc_id_from": "document.id",
        "stage": "reranker",
    }
    default = evaluate_files(replace_request(asked))
    assert (default.parameters["doc_id_from"], default.parameters["stage"]) == ("auto", "every")


def replace_request(request: Any) -> Any:
    from dataclasses import replace

    return replace(request, doc_id_from=None, stage=None)


def test_monitor_reads_stages_and_refuses_gathered(tmp_path: Path) -> None:
    from ragmeter.workflows.monitor import monitor_stage

    path, _ = _two_stage(tmp_path)
    rerank = read_traces(path, "metadata.query_id", stage=monitor_stage("reranker"))
    assert [(r.stage, r.doc_ids) for r in rerank.retrievals] == [("reranker", ("c", "a"))]
    every = read_traces(path, "metadata.query_id", stage=monitor_stage(None))
    assert [(r.stage, r.doc_ids) for r in every.retrievals] == [("retriever", tuple("abcd"))]
    with pytest.raises(InputError, match="gathered"):
        monitor_stage("gathered")


def test_diagnose_splits_retriever_from_reranker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.io.traces import QUERY_ID_ENV

    monkeypatch.setenv(QUERY_ID_ENV, "metadata.query_id")
    path, qrels = _two_stage(tmp_path)
    out = runner.invoke(app, ["diagnose", str(path), "--qrels", str(qrels), "--k", "2"])
    assert out.exit_code == 0, out.output
    # the reranker's output c a is the selection, the retriever's a b c d the pool:
    # PROC@2 = G_pool(2) / G_ideal(2) = (a + b) / 2 = 1; %PROC@2 = G_obs / G_pool = a / 2
    # = 1/2 → selection-limited (with the output as its own pool PROC would be 1/2)
    assert "proc@2 1.0000, pct_proc@2 0.5000" in out.output
    assert "retrieval-limited 0, selection-limited 1" in out.output
