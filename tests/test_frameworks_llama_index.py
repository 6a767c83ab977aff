"""LlamaIndex traced by OpenInference's own instrumentor, read back by ragmeter.

The example collection's 30 questions go through LlamaIndex's BM25 retriever
(llama-index-retrievers-bm25), a retriever followed by a reranker (a node postprocessor
written as LlamaIndex's own rerankers are, so that the instrumentor records a RERANKER span),
and a two-hop agent whose second query is the question expanded by LlamaIndex's MockLLM
with what the first hop found. The instrumentor's spans are exported as OTLP JSON lines and
evaluated by ragmeter; every per-query ranking and value must be the one of the ranking
LlamaIndex itself returned (see ``frameworks_util``). Nothing is downloaded: BM25 and the
stemmer are local, MockLLM echoes its prompt.

Skipped where the ``frameworks`` extra is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core", reason="the frameworks extra (llama-index-core)")
bm25 = pytest.importorskip(
    "llama_index.retrievers.bm25", reason="the frameworks extra (llama-index-retrievers-bm25)"
)
oi_llama = pytest.importorskip(
    "openinference.instrumentation.llama_index",
    reason="the frameworks extra (openinference-instrumentation-llama-index)",
)

from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.base.response.schema import Response  # noqa: E402
from llama_index.core.bridge.pydantic import PrivateAttr  # noqa: E402
from llama_index.core.instrumentation import get_dispatcher  # noqa: E402
from llama_index.core.instrumentation.events.rerank import (  # noqa: E402
    ReRankEndEvent,
    ReRankStartEvent,
)
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.query_engine import CustomQueryEngine, RetrieverQueryEngine  # noqa: E402
from llama_index.core.response_synthesizers import get_response_synthesizer  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from frameworks_util import (  # noqa: E402
    MEASURES,
    QUERY_ID_FROM,
    REL_LEVEL,
    Collection,
    Rankings,
    assert_same_values,
    example_collection,
    instrumented,
    means,
    query_id,
    ragmeter_values,
    reference_of_run,
    reference_values,
    write_otlp,
    write_trec,
)
from ragmeter.cli import app  # noqa: E402
from ragmeter.errors import InputError  # noqa: E402
from ragmeter.io.readers import read_run  # noqa: E402
from ragmeter.io.traces import iter_spans  # noqa: E402

dispatcher = get_dispatcher(__name__)

# the instrumentor records an LLM's parameters with pydantic's deprecated ``.json()``
pytestmark = pytest.mark.filterwarnings("ignore:The `json` method is deprecated")


class WordOverlapReranker(BaseNodePostprocessor):
    """A reranker as LlamaIndex's own are written (``SentenceTransformerRerank``,
    ``LLMRerank``): a node postprocessor announcing its input and output with the rerank
    events, which OpenInference records as a RERANKER span. It scores a passage by the
    question's distinct words it holds, over the square root of its length in words: cheap,
    deterministic and different from BM25's order."""

    top_n: int = 5
    #: (input ids, output ids) of each call: the rankings LlamaIndex handed it and got back
    _calls: list[tuple[list[str], list[str]]] = PrivateAttr(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "WordOverlapReranker"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        assert query_bundle is not None
        dispatcher.event(
            ReRankStartEvent(
                query=query_bundle, nodes=nodes, top_n=self.top_n, model_name="word-overlap"
            )
        )
        asked = set(_words(query_bundle.query_str))
        scored = []
        for node in nodes:
            words = _words(node.node.get_content())
            score = len(asked & set(words)) / max(len(words), 1) ** 0.5
            scored.append(NodeWithScore(node=node.node, score=score))
        # stable: equal scores keep the retriever's order
        reranked = sorted(scored, key=lambda n: -(n.score or 0.0))[: self.top_n]
        dispatcher.event(ReRankEndEvent(nodes=reranked))
        self._calls.append(([n.node_id for n in nodes], [n.node_id for n in reranked]))
        return reranked


def _words(text: str) -> list[str]:
    return [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split() if w]


class TwoHopEngine(CustomQueryEngine):
    """An agent that retrieves twice per question: the question, then the question expanded
    by the LLM with the first hop's top passages (MockLLM echoes its prompt, so the
    expansion is the question and those passages). The response keeps both hops' rankings
    as LlamaIndex returned them."""

    retriever: BaseRetriever
    llm: MockLLM
    context: int = 2

    def custom_query(self, query_str: str) -> Response:
        hop1 = self.retriever.retrieve(query_str)
        found = "\n".join(n.node.get_content() for n in hop1[: self.context])
        expanded = self.llm.complete(f"{query_str}\n{found}").text
        hop2 = self.retriever.retrieve(expanded)
        return Response(
            response=expanded,
            source_nodes=[*hop1, *hop2],
            metadata={"hops": [[n.node_id for n in hop1], [n.node_id for n in hop2]]},
        )


@dataclass(frozen=True)
class Traced:
    """A traced run of the 30 questions: the OTLP JSON file and LlamaIndex's own rankings
    (with the retriever's scores where the stage has one ranking per question)."""

    path: Path
    rankings: dict[str, Rankings]
    scores: dict[str, list[float]]


@pytest.fixture(scope="module")
def collection() -> Collection:
    return example_collection()


@pytest.fixture(scope="module")
def exporter() -> Iterator[Any]:
    with instrumented(oi_llama.LlamaIndexInstrumentor()) as exporter:
        yield exporter


def _retriever(collection: Collection, top_k: int) -> Any:
    nodes = [TextNode(id_=pid, text=text) for pid, text in collection.passages.items()]
    return bm25.BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=top_k)


def _exported(exporter: Any, path: Path) -> Path:
    spans = exporter.get_finished_spans()
    exporter.clear()
    return write_otlp(spans, path)


@pytest.fixture(scope="module")
def bm25_traced(
    collection: Collection, exporter: Any, tmp_path_factory: pytest.TempPathFactory
) -> Traced:
    retriever = _retriever(collection, 10)
    exporter.clear()
    rankings: Rankings = {}
    scores: dict[str, list[float]] = {}
    for qid, text in collection.queries.items():
        with query_id(qid):
            nodes = retriever.retrieve(text)
        rankings[qid] = [n.node_id for n in nodes]
        scores[qid] = [float(n.score or 0.0) for n in nodes]
    path = _exported(exporter, tmp_path_factory.mktemp("llama") / "bm25.json")
    return Traced(path, {"retriever": rankings}, scores)


@pytest.fixture(scope="module")
def reranked_traced(
    collection: Collection, exporter: Any, tmp_path_factory: pytest.TempPathFactory
) -> Traced:
    """A query engine: the BM25 retriever's top 20, reranked to a top 5, then MockLLM."""
    reranker = WordOverlapReranker(top_n=5)
    engine = RetrieverQueryEngine(
        retriever=_retriever(collection, 20),
        response_synthesizer=get_response_synthesizer(llm=MockLLM()),
        node_postprocessors=[reranker],
    )
    exporter.clear()
    rankings: dict[str, Rankings] = {"retriever": {}, "reranker": {}}
    for qid, text in collection.queries.items():
        with query_id(qid):
            response = engine.query(text)
        # what the retriever handed the reranker, and what the engine answered from
        handed, reranked = reranker._calls[-1]
        assert [n.node_id for n in response.source_nodes] == reranked
        rankings["retriever"][qid] = handed
        rankings["reranker"][qid] = reranked
    path = _exported(exporter, tmp_path_factory.mktemp("llama") / "rerank.json")
    return Traced(path, rankings, {})


@pytest.fixture(scope="module")
def two_hop_traced(
    collection: Collection, exporter: Any, tmp_path_factory: pytest.TempPathFactory
) -> Traced:
    engine = TwoHopEngine(retriever=_retriever(collection, 10), llm=MockLLM())
    exporter.clear()
    rankings: dict[str, Rankings] = {"step:1": {}, "step:2": {}, "gathered": {}}
    for qid, text in collection.queries.items():
        with query_id(qid):
            response = engine.query(text)
        hop1, hop2 = response.metadata["hops"]
        rankings["step:1"][qid] = hop1
        rankings["step:2"][qid] = hop2
        rankings["gathered"][qid] = [*hop1, *(d for d in hop2 if d not in hop1)]
    path = _exported(exporter, tmp_path_factory.mktemp("llama") / "two_hop.json")
    return Traced(path, rankings, {})


def test_bm25_rankings_and_values_are_llama_index_own(
    bm25_traced: Traced, collection: Collection, tmp_path: Path
) -> None:
    own = bm25_traced.rankings["retriever"]
    run = read_run(bm25_traced.path, query_id_from=QUERY_ID_FROM)
    assert run.ranked() == own
    from_trace = ragmeter_values(run, collection.qrels_path)
    assert_same_values(from_trace, reference_values(own, collection.qrels))
    # one name, one number: the framework's ranking as a TREC run gives the same values
    trec = write_trec(own, tmp_path / "own.trec")
    assert ragmeter_values(trec, collection.qrels_path) == from_trace


def test_bm25_tied_scores_keep_the_retriever_order(
    bm25_traced: Traced, collection: Collection, tmp_path: Path
) -> None:
    """LlamaIndex's BM25 returns equal scores (q01's 6th and 7th passages): the trace's
    order is the retriever's, and the TREC run written from the trace keeps it, where a
    TREC file of the same scores is reordered by trec_eval (score, then doc id descending)."""
    tied = [q for q, s in bm25_traced.scores.items() if len(set(s)) < len(s)]
    assert tied, "no tied scores: the tie case is not exercised"
    own = bm25_traced.rankings["retriever"]
    from_trace = ragmeter_values(
        read_run(bm25_traced.path, query_id_from=QUERY_ID_FROM), collection.qrels_path
    )

    to_run = tmp_path / "to_run.trec"
    _trace_to_trec(bm25_traced.path, to_run)
    assert read_run(to_run).ranked() == own
    assert ragmeter_values(to_run, collection.qrels_path) == from_trace

    raw = tmp_path / "raw_scores.trec"
    with raw.open("w") as out:
        for qid, docs in own.items():
            for rank, (doc, score) in enumerate(zip(docs, bm25_traced.scores[qid], strict=True)):
                out.write(f"{qid} Q0 {doc} {rank + 1} {score!r} bm25\n")
    reordered = read_run(raw).ranked()
    moved = [q for q in own if reordered[q] != own[q]]
    assert moved and set(moved) <= set(tied)
    raw_values = ragmeter_values(raw, collection.qrels_path)
    raw_run = {q: dict(zip(docs, bm25_traced.scores[q], strict=True)) for q, docs in own.items()}
    assert_same_values(raw_values, reference_of_run(raw_run, collection.qrels))
    assert means(raw_values)["ndcg@10"] != means(from_trace)["ndcg@10"]


def _trace_to_trec(traces: Path, out: Path) -> None:
    """The documented way to a TREC run from a trace: ``ragmeter traces to-run``."""
    result = CliRunner().invoke(
        app, ["traces", "to-run", str(traces), "--query-id-from", QUERY_ID_FROM, "-o", str(out)]
    )
    assert result.exit_code == 0, result.output


def test_reranker_span_is_recorded_and_each_stage_is_llama_index_own(
    reranked_traced: Traced, collection: Collection
) -> None:
    # OpenInference's own RERANKER span: the query, top_n, the input and output documents
    rerankers = [
        s.attributes
        for s in iter_spans(reranked_traced.path)
        if s.attributes.get("openinference.span.kind") == "RERANKER"
    ]
    assert len(rerankers) == len(collection.queries)
    for attrs in rerankers:
        assert attrs["reranker.top_k"] == 5 and attrs["reranker.model_name"] == "word-overlap"
        keys = [k for k in attrs if k.endswith(".document.id")]
        assert sum(k.startswith("reranker.input_documents.") for k in keys) == 20
        assert sum(k.startswith("reranker.output_documents.") for k in keys) == 5
    measures = ("ndcg@5", "recall@5")
    for stage in ("retriever", "reranker"):
        own = reranked_traced.rankings[stage]
        assert {len(r) for r in own.values()} == {20 if stage == "retriever" else 5}
        run = read_run(reranked_traced.path, query_id_from=QUERY_ID_FROM, stage=stage)
        assert run.ranked() == own, stage
        assert_same_values(
            ragmeter_values(run, collection.qrels_path, measures),
            reference_values(own, collection.qrels, measures),
        )
    # `ragmeter evaluate` without --stage: one run per stage, each the framework's own
    assert _cli_means(reranked_traced.path, measures, collection) == {
        f"rerank.json ({stage})": pytest.approx(
            means(reference_values(reranked_traced.rankings[stage], collection.qrels, measures))
        )
        for stage in ("retriever", "reranker")
    }
    # the reranker reordered: its top 5 is not the retriever's
    first = reranked_traced.rankings["retriever"]
    assert any(r[:5] != first[q][:5] for q, r in reranked_traced.rankings["reranker"].items())


def test_two_hop_steps_and_gathered_are_llama_index_own(
    two_hop_traced: Traced, collection: Collection
) -> None:
    for stage, measures in (
        ("step:1", MEASURES),
        ("step:2", MEASURES),
        ("gathered", ("ndcg@10", "recall@20")),
    ):
        own = two_hop_traced.rankings[stage]
        run = read_run(two_hop_traced.path, query_id_from=QUERY_ID_FROM, stage=stage)
        assert run.ranked() == own, stage
        assert_same_values(
            ragmeter_values(run, collection.qrels_path, measures),
            reference_values(own, collection.qrels, measures),
        )
    measures = ("ndcg@10", "recall@20")
    assert _cli_means(two_hop_traced.path, measures, collection) == {
        f"two_hop.json ({label})": pytest.approx(
            means(reference_values(two_hop_traced.rankings[stage], collection.qrels, measures))
        )
        for stage, label in (("step:1", "step 1"), ("step:2", "step 2"), ("gathered", "gathered"))
    }
    shown = CliRunner().invoke(
        app, ["traces", "show", str(two_hop_traced.path), "--query-id-from", QUERY_ID_FROM]
    )
    assert shown.exit_code == 0, shown.output
    listed = [line.split()[1] for line in shown.stdout.splitlines() if "--stage" in line]
    assert listed == ["step:1", "step:2", "gathered"]
    # the second hop found something the first did not
    assert any(len(r) > 10 for r in two_hop_traced.rankings["gathered"].values())


def _cli_means(
    path: Path, measures: tuple[str, ...], collection: Collection
) -> dict[str, dict[str, float]]:
    """``{run: {measure: mean}}`` of ``ragmeter evaluate TRACES -f json`` (no --stage)."""
    args = ["evaluate", str(path), "--qrels", str(collection.qrels_path), "-f", "json"]
    args += ["--query-id-from", QUERY_ID_FROM, "--rel-level", str(REL_LEVEL)]
    args += [x for m in measures for x in ("-m", m)]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    runs = json.loads(out.stdout)["runs"]
    return {r["name"]: {m: r["metrics"][m]["mean"] for m in measures} for r in runs}


def test_a_query_id_the_spans_lack_names_the_attribute(bm25_traced: Traced) -> None:
    with pytest.raises(InputError, match=r"metadata\.session"):
        read_run(bm25_traced.path, query_id_from="metadata.session")
