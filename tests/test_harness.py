"""The pipeline harness: your callables (sync and async) over a query set, with failures,
slow calls, timeouts, the concurrency bound and timings; and seed 004's RetrievalEvaluator."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.pipeline.harness import (
    Hit,
    PipelineResult,
    RetrievalEvaluator,
    arun_pipeline,
    as_hits,
    run_pipeline,
)

CORPUS = {
    "d1": "Paris is the capital of France.",
    "d2": "Lyon is a city in France.",
    "d3": "Berlin is the capital of Germany.",
    "d4": "Munich is in Bavaria.",
}
QUERIES = {"q1": "capital of France", "q2": "capital of Germany"}
QRELS = {"q1": {"d1": 1}, "q2": {"d3": 1}}


def lexical_retrieve(query: str) -> list[tuple[str, float, str]]:
    """Score = number of shared lower-case words; ties by doc id."""
    words = set(query.lower().split())
    scored = [(len(words & set(t.lower().rstrip(".").split())), d) for d, t in CORPUS.items()]
    ranked = sorted(scored, key=lambda x: (-x[0], x[1]))
    return [(d, float(s), CORPUS[d]) for s, d in ranked]


def keep_two(query: str, hits: list[tuple[str, float, str]]) -> list[tuple[str, float, str]]:
    return hits[:2]


def first_sentence(query: str, hits: list[tuple[str, float, str]]) -> str:
    return hits[0][2] if hits else ""


def test_sync_pipeline_records_pool_selection_samples_timings() -> None:
    embedded: list[str] = []

    def embed(query: str) -> list[float]:
        embedded.append(query)
        return [float(len(query))]

    def retrieve(query: str, embedding: list[float]) -> list[tuple[str, float, str]]:
        assert embedding == [float(len(query))]  # embed's output is handed on
        return lexical_retrieve(query)

    result = run_pipeline(
        QUERIES,
        embed=embed,
        retrieve=retrieve,
        rerank=keep_two,
        generate=first_sentence,
        references={"q1": "Paris is the capital of France", "q2": "Berlin"},
        labels={"q1": 1, "q2": 0},
        concurrency=2,
    )
    assert result.errors == []
    assert sorted(embedded) == sorted(QUERIES.values())
    # q1 "capital of France": d1 shares 3 words, d2 1 (france), d3 2 (capital, of), d4 0
    assert result.pool is not None and result.selection is not None
    assert result.pool.ranked() == {"q1": ["d1", "d3", "d2", "d4"], "q2": ["d3", "d1", "d2", "d4"]}
    assert result.selection.ranked() == {"q1": ["d1", "d3"], "q2": ["d3", "d1"]}
    assert result.run is result.selection
    assert result.pool_hits["q1"][0] == Hit("d1", 3.0, CORPUS["d1"])
    # the samples: context = selection texts, retrieved = pool texts
    by_id = {s.id: s for s in result.samples}
    s1 = by_id["q1"]
    assert s1.generated_answer == CORPUS["d1"] and s1.context == (CORPUS["d1"], CORPUS["d3"])
    assert s1.retrieved == tuple(CORPUS[d] for d in ("d1", "d3", "d2", "d4"))
    assert s1.reference_answer == "Paris is the capital of France" and s1.label == 1
    assert set(s1.timings or {}) == {"embed", "retrieve", "rerank", "generate"}
    assert result.embeddings["q2"] == [float(len(QUERIES["q2"]))]
    # classical metrics on the selection (the pool is passed for the pool-based ones)
    ev = result.evaluate(QRELS, ["mrr", "recall@2", "proc@2"])
    assert ev.run.means()["mrr"] == 1.0 and ev.run.means()["recall@2"] == 1.0
    assert result.evaluate(QRELS, ["recall@1"], on="pool").run.means()["recall@1"] == 1.0
    # answer metrics: q1 answer has every reference keyword (correct, label 1 -> TP);
    # q2 answer "Berlin is the capital of Germany." contains "berlin" (1/1 > 0.7) but
    # label 0 -> FP
    report = result.evaluate_answers()
    assert report["confusion"] == {"tp": 1, "fp": 1, "tn": 0, "fn": 0}
    assert set(report["latency"]) == {"embed", "retrieve", "rerank", "generate", "total"}
    body = json.loads(json.dumps(result.to_dict()))
    assert body["queries"][0]["id"] == "q1" and body["queries"][0]["selected"][0]["id"] == "d1"
    assert set(result.latency()) == {"embed", "retrieve", "rerank", "generate", "total"}


def test_async_callables_and_any_subset() -> None:
    async def retrieve(query: str) -> list[dict[str, Any]]:
        await asyncio.sleep(0.01)
        return [{"id": d, "score": s, "text": t} for d, s, t in lexical_retrieve(query)]

    async def generate(query: str, hits: list[dict[str, Any]]) -> str:
        await asyncio.sleep(0.01)
        return hits[0]["text"]

    result = run_pipeline(QUERIES, retrieve=retrieve, generate=generate)
    assert result.errors == [] and result.selection is None and result.run is result.pool
    assert result.pool is not None and result.pool.ranked()["q2"][0] == "d3"
    # no rerank: the context is the pool
    assert {s.id: s.context[0] for s in result.samples} == {"q1": CORPUS["d1"], "q2": CORPUS["d3"]}
    # generate alone: it gets [] as its hits; no pool, no selection
    only = run_pipeline(["what?"], generate=lambda q, hits: f"{q} {len(hits)}")
    assert only.answers == {"0": "what? 0"} and only.pool is None and only.selection is None
    with pytest.raises(ValueError, match="no retrieve"):
        only.evaluate(QRELS, ["mrr"], on="pool")
    # embed alone
    emb = run_pipeline(QUERIES, embed=lambda q: len(q))
    assert emb.embeddings == {"q1": 17, "q2": 18} and emb.samples == []
    with pytest.raises(ValueError, match="no answers"):
        emb.evaluate_answers()


def test_await_inside_a_running_loop() -> None:
    async def main() -> tuple[PipelineResult, PipelineResult]:
        direct = await arun_pipeline(QUERIES, retrieve=lexical_retrieve)
        # the sync entry point also works while a loop runs (own loop on a helper thread)
        nested = run_pipeline(QUERIES, retrieve=lexical_retrieve)
        return direct, nested

    direct, nested = asyncio.run(main())
    assert direct.pool is not None and nested.pool is not None
    assert direct.pool.ranked() == nested.pool.ranked()


def test_failing_calls_are_recorded_and_the_rest_goes_on() -> None:
    generated: list[str] = []

    def retrieve(query: str) -> Any:
        if "Germany" in query:
            raise ConnectionError("index unavailable")
        if query == "bad":
            return "d1"  # a string, not a list of hits
        return lexical_retrieve(query)

    async def generate(query: str, hits: Any) -> Any:
        generated.append(query)
        if query == "capital of France":
            return 42  # not an answer
        return "fine"

    queries = {**QUERIES, "q3": "bad", "q4": "Munich"}
    result = run_pipeline(queries, retrieve=retrieve, generate=generate, concurrency=3)
    errors = {e.query_id: e for e in result.errors}
    assert set(errors) == {"q1", "q2", "q3"}
    assert (errors["q2"].stage, errors["q2"].type, errors["q2"].message) == (
        "retrieve",
        "ConnectionError",
        "index unavailable",
    )
    assert errors["q3"].stage == "retrieve" and errors["q3"].type == "TypeError"
    assert "returned str" in errors["q3"].message
    assert errors["q1"].stage == "generate" and "returned int" in errors["q1"].message
    assert all(e.seconds >= 0 for e in result.errors)
    # a failed stage ends its query: generate never ran for q2, q3
    assert sorted(generated) == sorted([QUERIES["q1"], "Munich"])
    # the failed stage's timing is None; the stages before it keep theirs
    assert result.timings["q2"] == {"retrieve": None}
    t1 = result.timings["q1"]
    assert t1["generate"] is None and t1["retrieve"] is not None and t1["retrieve"] >= 0
    # the pool has the queries whose retrieve worked; the samples those with an answer
    assert result.pool is not None and set(result.pool.ranked()) == {"q1", "q4"}
    assert [s.id for s in result.samples] == ["q4"]
    assert result.to_dict()["queries"][1]["error"]["type"] == "ConnectionError"
    # evaluating still works: q2 (failed) scores as an empty ranking
    ev = result.evaluate(QRELS, ["mrr"])
    assert ev.run.per_query()["q2"]["mrr"] == 0.0 and ev.run.per_query()["q1"]["mrr"] == 1.0


class InFlight:
    """Counts calls running at once, from threads and coroutines alike."""

    def __init__(self) -> None:
        self.now = 0
        self.max = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.max = max(self.max, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_concurrency_bound_is_honoured(kind: str) -> None:
    meter = InFlight()

    def sync_retrieve(query: str) -> list[str]:
        meter.enter()
        time.sleep(0.03)
        meter.leave()
        return ["d1"]

    async def async_retrieve(query: str) -> list[str]:
        meter.enter()
        await asyncio.sleep(0.03)
        meter.leave()
        return ["d1"]

    def sync_generate(query: str, hits: list[str]) -> str:
        meter.enter()
        time.sleep(0.01)
        meter.leave()
        return "x"

    retrieve = sync_retrieve if kind == "sync" else async_retrieve
    queries = [f"query {i}" for i in range(16)]
    result = run_pipeline(queries, retrieve=retrieve, generate=sync_generate, concurrency=3)
    assert result.errors == [] and len(result.samples) == 16
    assert meter.max == 3  # reached, never exceeded
    assert result.concurrency == 3


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_slow_call_does_not_block_the_others(kind: str) -> None:
    done: dict[str, float] = {}
    start = time.perf_counter()

    def sync_retrieve(query: str) -> list[str]:
        time.sleep(0.6 if query == "slow" else 0.01)
        return ["d1"]

    async def async_retrieve(query: str) -> list[str]:
        await asyncio.sleep(0.6 if query == "slow" else 0.01)
        return ["d1"]

    def generate(query: str, hits: list[str]) -> str:
        done[query] = time.perf_counter() - start
        return "x"

    retrieve = sync_retrieve if kind == "sync" else async_retrieve
    queries = ["slow"] + [f"fast {i}" for i in range(9)]
    result = run_pipeline(queries, retrieve=retrieve, generate=generate, concurrency=3)
    assert result.errors == []
    # 9 fast queries on the 2 other slots: ≈ 5 rounds of 0.01 s, all before the slow one ends
    assert max(v for k, v in done.items() if k != "slow") < done["slow"]
    assert done["slow"] >= 0.6
    # the slow call's own timing is recorded, the fast ones' are short
    slow_t = result.timings["0"]["retrieve"]
    assert slow_t is not None and slow_t >= 0.6
    fast_t = result.timings["1"]["retrieve"]
    assert fast_t is not None and fast_t < 0.3


def test_timeout_per_call() -> None:
    async def hangs(query: str) -> list[str]:
        await asyncio.sleep(30)
        return ["never"]

    def sync_slow(query: str) -> list[str]:
        time.sleep(0.5)
        return ["late"]

    start = time.perf_counter()
    result = run_pipeline(QUERIES, retrieve=hangs, timeout=0.1)
    assert time.perf_counter() - start < 5  # cancelled, not waited for
    assert [(e.stage, e.type) for e in result.errors] == [("retrieve", "TimeoutError")] * 2
    assert "0.1 s" in result.errors[0].message
    assert 0.1 <= result.errors[0].seconds < 5
    res = run_pipeline({"q": "x"}, retrieve=sync_slow, timeout=0.05)
    assert res.errors[0].type == "TimeoutError" and res.pool is not None and len(res.pool) == 0
    # within the limit: no error
    ok = run_pipeline({"q": "x"}, retrieve=lambda q: ["d1"], timeout=5)
    assert ok.errors == []


def test_timings_measure_the_call() -> None:
    def retrieve(query: str) -> list[str]:
        time.sleep(0.05)
        return ["d1"]

    async def generate(query: str, hits: list[str]) -> str:
        await asyncio.sleep(0.08)
        return "x"

    result = run_pipeline({"q": "x"}, retrieve=retrieve, generate=generate)
    t = result.timings["q"]
    assert t["retrieve"] is not None and 0.05 <= t["retrieve"] < 1.0
    assert t["generate"] is not None and 0.08 <= t["generate"] < 1.0
    total = result.latency()["total"].mean
    assert total is not None and math.isclose(total, t["retrieve"] + t["generate"])
    assert result.wall_seconds >= 0.13


def test_hits_normalisation_and_input_checks() -> None:
    class Doc:
        def __init__(self, id: str, score: float) -> None:
            self.id = id
            self.score = score

    hits = as_hits(["a", 7, ("b", 2), ("c", 1.5, "text"), {"doc_id": "d"}, Hit("e"), Doc("f", 1)])
    assert [h.id for h in hits] == ["a", "7", "b", "c", "d", "e", "f"]
    assert hits[3] == Hit("c", 1.5, "text") and hits[6].score == 1.0
    for bad in ("abc", {"id": "x"}, [None], [("x", "high")], [{"score": 1}], [("x", math.nan)]):
        with pytest.raises(TypeError):
            as_hits(bad)
    with pytest.raises(ValueError, match="no stage"):
        run_pipeline(QUERIES)
    with pytest.raises(ValueError, match="concurrency"):
        run_pipeline(QUERIES, retrieve=lexical_retrieve, concurrency=0)
    with pytest.raises(ValueError, match="timeout"):
        run_pipeline(QUERIES, retrieve=lexical_retrieve, timeout=0)
    with pytest.raises(TypeError, match="expected a callable"):
        run_pipeline(QUERIES, retrieve="bm25")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="duplicate query id"):
        run_pipeline([("a", "x"), ("a", "y")], retrieve=lexical_retrieve)
    # the accepted query shapes
    result = run_pipeline([{"id": "a", "text": "x"}, {"id": "b", "query": "y"}], embed=len)
    assert result.queries == {"a": "x", "b": "y"}


def test_top_level_exports_are_lazy() -> None:
    assert ragmeter.run_pipeline is run_pipeline
    assert ragmeter.RetrievalEvaluator is RetrievalEvaluator


# -- seed 004: RetrievalEvaluator ----------------------------------------------------------------

# the seed's worked examples (its hand computations are the expected values)
SEED_QUERIES = [
    {"id": "a", "query": "first", "expected": ["doc2", "doc3", "doc7"]},
    {"id": "b", "query": "second", "expected": ["doc3", "doc2"]},
]
SEED_RESULTS = [
    {"id": "a", "retrieved": ["doc6", "doc2", "doc3", "doc4", "doc5"]},
    {"query": "second", "retrieved": ["doc5", "doc4", "doc3", "doc2", "doc1"], "evals": {"x": 1}},
]


def test_retrieval_evaluator_seed_examples(tmp_path: Path) -> None:
    out = tmp_path / "evals.json"
    evaluator = RetrievalEvaluator({"k": 5, "output": str(out)}, SEED_QUERIES)
    results = evaluator.run(SEED_RESULTS)
    a, b = (r["evals"] for r in results)
    # query a: P@5 = 2/5, R@5 = 2/3, F1@5 = 2·(2/5)(2/3)/(2/5 + 2/3) = 0.5, RR = 1/2
    assert a["precision@5"] == pytest.approx(2 / 5)
    assert a["recall@5"] == pytest.approx(2 / 3)
    assert a["f1@5"] == pytest.approx(0.5)
    assert a["mrr"] == pytest.approx(1 / 2)
    # query b: first relevant at rank 3 -> RR = 1/3; MRR = (1/2 + 1/3)/2 ≈ 0.4167
    assert b["mrr"] == pytest.approx(1 / 3)
    assert b["x"] == 1  # the evals it already had are kept
    assert results[1]["query"] == "second"  # matched to query b by its text
    means = evaluator.evaluation.run.means() if evaluator.evaluation else {}
    assert means["mrr"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    body = json.loads(out.read_text(encoding="utf-8"))
    assert set(body) == {"config", "metrics", "results", "warnings"}
    assert body["metrics"]["mrr"]["mean"] == pytest.approx(0.41666666)
    assert body["config"]["metrics"] == [
        "precision@5", "recall@5", "f1@5", "mrr", "map", "dcg@5", "ndcg@5"
    ]  # fmt: skip


def test_retrieval_evaluator_seed_ap_and_graded() -> None:
    # AP: retrieved doc1..doc5, relevant doc2, doc3, doc5: (1/2 + 2/3 + 3/5) / 3 ≈ 0.59
    ev = RetrievalEvaluator(
        {"metrics": ["map"]}, [{"id": "q", "expected": ["doc2", "doc3", "doc5"]}]
    )
    [res] = ev.run({"q": ["doc1", "doc2", "doc3", "doc4", "doc5"]})
    assert res["evals"]["map"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3)
    # graded: grades 3, 2, 3, 1, 0 in rank order; DCG@3 = 3 + 2/log2(3) + 3/2 ≈ 5.76,
    # IDCG@3 = 3 + 3/log2(3) + 2/2 ≈ 5.89, NDCG@3 ≈ 0.978
    grades = {"doc1": 3, "doc2": 2, "doc3": 3, "doc4": 1, "doc5": 0}
    ev = RetrievalEvaluator({"metrics": ["dcg@3", "ndcg@3"]}, [{"id": "q", "expected": grades}])
    [res] = ev.run([{"id": "q", "retrieved": [f"doc{i}" for i in range(1, 6)]}])
    dcg = 3 + 2 / math.log2(3) + 3 / 2
    idcg = 3 + 3 / math.log2(3) + 2 / 2
    assert res["evals"]["dcg@3"] == pytest.approx(dcg)
    assert res["evals"]["ndcg@3"] == pytest.approx(dcg / idcg)
    assert round(dcg / idcg, 3) == 0.978


def test_retrieval_evaluator_takes_a_pipeline_result_and_checks_config(tmp_path: Path) -> None:
    result = run_pipeline(QUERIES, retrieve=lexical_retrieve, rerank=keep_two)
    labelled = [{"id": q, "query": QUERIES[q], "expected": list(rel)} for q, rel in QRELS.items()]
    path = tmp_path / "queries.json"
    path.write_text(json.dumps(labelled), encoding="utf-8")
    for queries in (labelled, str(path)):
        records = RetrievalEvaluator({"metrics": ["mrr", "recall@1"]}, queries).run(result)
        assert [r["retrieved"] for r in records] == [["d1", "d3"], ["d3", "d1"]]
        assert all(r["evals"] == {"mrr": 1.0, "recall@1": 1.0} for r in records)
    with pytest.raises(ValueError, match="unknown config key"):
        RetrievalEvaluator({"metric": ["mrr"]}, labelled)
    with pytest.raises(ValueError, match="positive integer"):
        RetrievalEvaluator({"k": 0}, labelled)
    with pytest.raises(ValueError, match="has no 'id'"):
        RetrievalEvaluator(None, labelled).run([{"query": "unknown", "retrieved": []}])


def test_readme_pipeline_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = Path(__file__).resolve().parents[1] / "docs" / "pipeline.md"
    text = readme.read_text(encoding="utf-8")
    section = text.split("## Evaluate your own RAG pipeline", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(blocks), str(readme), "exec"), namespace)
    # q1: d1 (grade 5) first, d2 (grade 2) not selected -> nDCG@2 = 5 / (5 + 2/log2(3))
    means = namespace["result"].evaluate(namespace["qrels"], ["ndcg@2"]).run.means()
    assert means["ndcg@2"] == pytest.approx((1 + 5 / (5 + 2 / math.log2(3))) / 2)
    assert namespace["answers"]["metrics"]["exact_match"] == 1.0
    body = json.loads((tmp_path / "evals.json").read_text(encoding="utf-8"))
    assert body["metrics"]["mrr"]["mean"] == 1.0
