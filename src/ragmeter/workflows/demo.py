"""The steps of ``ragmeter demo`` on the shipped example collection (:mod:`ragmeter.data`):
read it, retrieve with four baseline systems, evaluate every metric family, compare with
BM25, the answer metrics, the report, the store, and the results file.

Settings (the example's grades are on the 1..5 utility scale, 1 = off-topic): classical
measures count relevant ⇔ grade ≥ 3; the set-based ones use K = 10 plus a 250-token budget,
PROC's pool being each system's own list (for MMR the hybrid top 50 it reranked); coverage
uses the top 10 as context (τ = 3).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import MissingExtraError

if TYPE_CHECKING:
    from ragmeter.analysis.calibration import LabelsDescription
    from ragmeter.core.data import Qrels, Run
    from ragmeter.core.judgments import Answers, Corpus, Judgments
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.answers import AnswerSample
    from ragmeter.stats.comparison import Comparison

BASELINE = "bm25"
K = 10
POOL_DEPTH = 100
MMR_CANDIDATES = 50
TOKEN_BUDGET = 250
REL_LEVEL = 3

#: the measures of each family, in the order they are printed
FAMILIES: dict[str, tuple[str, ...]] = {
    "classical": ("ndcg@10(rel_level=3)", "map", "recall@20", "mrr", "P@10"),
    "set-based": (
        "ra_nwg@10",
        "proc@10",
        "pct_proc@10",
        "n_recall4p@10",
        "precision4p@10",
        "harm@10",
        f"ra_nwg@{TOKEN_BUDGET}t",
    ),
    # the context is in the name: coverage of the top K (coverage alone is the oracle |P*|)
    "coverage": (f"coverage@{K}", "alpha_ndcg@20", f"density@{K}"),
}
#: the same for every system (one set of generated answers), so shown but not compared
ANSWER_MEASURES = ("answer_coverage",)
#: chunkings of the example's documents compared on its span labels (BM25 over the chunks)
CHUNK_SIZES = (200, 400, 800)
SPAN_FAMILY = ("span_recall@5", "span_precision@5", "span_iou@5", "span_precision_omega")


@dataclass
class ExampleData:
    """The example collection, read with ragmeter's own readers."""

    corpus: Corpus
    queries: Corpus
    qrels: Qrels
    judgments: Judgments
    answers: Answers
    samples: list[AnswerSample]
    qrels_path: Path

    @property
    def corpus_texts(self) -> dict[str, str]:
        return dict(
            zip(self.corpus.doc_ids.to_pylist(), self.corpus.texts.to_pylist(), strict=True)
        )

    @property
    def query_texts(self) -> dict[str, str]:
        return dict(
            zip(self.queries.doc_ids.to_pylist(), self.queries.texts.to_pylist(), strict=True)
        )


def load_example() -> ExampleData:
    """Read every file of the example collection."""
    from ragmeter.data import example_path
    from ragmeter.io.answers import read_answer_samples
    from ragmeter.io.judgments import read_answers, read_corpus, read_judgments
    from ragmeter.io.readers import read_qrels

    return ExampleData(
        corpus=read_corpus(example_path("corpus.jsonl"), name="corpus"),
        queries=read_corpus(example_path("queries.jsonl"), name="queries"),
        qrels=read_qrels(example_path("qrels.txt")),
        judgments=read_judgments(
            example_path("judgments.jsonl"), questions=example_path("subquestions.jsonl")
        ),
        answers=read_answers(example_path("answers_rated.jsonl")),
        samples=read_answer_samples(example_path("answers.json")),
        qrels_path=example_path("qrels.txt"),
    )


@dataclass
class Systems:
    """The demo's runs, by name, and each one's PROC pool."""

    runs: dict[str, Run]
    pools: dict[str, Run]
    seconds: dict[str, float] = field(default_factory=dict)


def retrieve_all(data: ExampleData, step: Callable[[str], Any]) -> Systems:
    """BM25, dense, hybrid (RRF) and hybrid + MMR over the example; ``step(label)`` wraps
    each stage (progress and timing)."""
    from ragmeter.pipeline.baselines import (
        BM25Retriever,
        DenseRetriever,
        Texts,
        mmr_rerank,
        reciprocal_rank_fusion,
    )

    corpus = Texts.from_corpus(data.corpus)
    queries = Texts.from_corpus(data.queries)
    with step("BM25 (bm25s)"):
        bm25 = BM25Retriever(corpus).search(queries, depth=POOL_DEPTH, name="bm25")
    with step(f"encoding {len(corpus)} passages (all-MiniLM-L6-v2)"):
        dense_index = DenseRetriever(corpus)
    with step("dense retrieval"):
        query_rows = dense_index.encode(queries.texts, "queries")
        dense = dense_index.search(
            queries, depth=POOL_DEPTH, name="dense", query_embeddings=query_rows
        )
    with step("hybrid (reciprocal rank fusion, k = 60)"):
        hybrid = reciprocal_rank_fusion([bm25, dense], depth=POOL_DEPTH, name="hybrid")
    with step(f"MMR over the hybrid top {MMR_CANDIDATES} (λ = 0.5)"):
        mmr = mmr_rerank(
            hybrid,
            queries,
            dense_index,
            candidates=MMR_CANDIDATES,
            name="hybrid+mmr",
            query_embeddings=dict(zip(queries.ids, query_rows, strict=True)),
        )
    runs = {"bm25": bm25, "dense": dense, "hybrid": hybrid, "hybrid+mmr": mmr}
    pools = {"bm25": bm25, "dense": dense, "hybrid": hybrid, "hybrid+mmr": hybrid}
    return Systems(runs=runs, pools=pools)


def evaluate_all(data: ExampleData, systems: Systems) -> Evaluation:
    """Every family for every system (one evaluation; each system with its own pool)."""
    from ragmeter.evaluation import evaluate
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.lengths import read_passage_lengths

    measures = [m for family in FAMILIES.values() for m in family] + list(ANSWER_MEASURES)
    from ragmeter.data import example_path

    lengths = read_passage_lengths(example_path("corpus.jsonl"))
    parts = [
        evaluate(
            {name: run},
            data.qrels,
            measures,
            rel_level=REL_LEVEL,
            pool=systems.pools[name],
            pool_depth=MMR_CANDIDATES if name == "hybrid+mmr" else None,
            judgments=data.judgments,
            corpus=data.corpus,
            answers=data.answers,
            passage_lengths=lengths,
        )
        for name, run in systems.runs.items()
    ]
    return Evaluation.concat(parts).with_labels(example_labels(data).to_json())


def example_labels(data: ExampleData) -> LabelsDescription:
    """What the example's labels are: graded by hand (its qrels' provenance sidecar)."""
    from ragmeter.analysis.calibration import label_description

    return label_description(data.qrels_path)


def chunkings_side_by_side(folder: Path | None = None) -> tuple[Evaluation, Comparison]:
    """The example's documents cut into 200-, 400- and 800-token chunks (recursive splitting,
    MiniLM word pieces), BM25 over each chunking, scored on the same span labels and compared
    with the 200-token chunking (queries paired). With ``folder``, each chunking's table,
    texts and run are written there."""
    from ragmeter.core.judgments import Corpus
    from ragmeter.core.spans import SpanInputs
    from ragmeter.data import example_path
    from ragmeter.evaluation import evaluate
    from ragmeter.io.judgments import read_corpus
    from ragmeter.io.spans import read_spans, write_chunks, write_texts
    from ragmeter.io.trec import write_trec_run
    from ragmeter.pipeline.baselines import BM25Retriever, Texts
    from ragmeter.pipeline.chunking import chunk_corpus
    from ragmeter.stats.comparison import compare

    documents = read_corpus(example_path("documents.jsonl"), name="documents")
    labels = read_spans(example_path("spans.jsonl"), corpus=documents)
    queries = Texts.from_corpus(read_corpus(example_path("queries.jsonl")))
    runs, tables = {}, {}
    for size in CHUNK_SIZES:
        name = f"{size} tokens"
        chunking = chunk_corpus(documents, size=size, tokens=True, recursive=True)
        texts = Corpus.from_dict({row["id"]: row["text"] for row in chunking.rows()})
        runs[name] = BM25Retriever(Texts.from_corpus(texts)).search(queries, depth=20, name=name)
        tables[name] = chunking.table
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            write_chunks(chunking.table, folder / f"chunks-{size}.jsonl")
            write_texts(chunking.rows(), folder / f"texts-{size}.jsonl")
            write_trec_run(runs[name], folder / f"run-{size}.txt")
    evaluation = evaluate(runs, None, SPAN_FAMILY, spans=SpanInputs(labels, tables))
    baseline = f"{CHUNK_SIZES[0]} tokens"
    return evaluation, compare(evaluation, baseline=baseline, measures=list(SPAN_FAMILY))


def compare_all(evaluation: Evaluation) -> Comparison:
    """Each system against BM25 on the compared families."""
    from ragmeter.stats.comparison import compare

    compared = [m for family in FAMILIES.values() for m in family]
    return compare(evaluation, baseline=BASELINE, measures=compared)


def answer_reports(data: ExampleData, systems: Systems) -> dict[str, Any]:
    """The seed-001 answer metrics of the example's generated answers, and per system the
    context coverage of those answers by the system's own top 3."""
    from ragmeter.metrics.answers import evaluate_answers, mean_defined

    # ROUGE-L is ragmeter's own; BLEU needs sacrebleu (the demo extra installs it)
    text_metrics: tuple[str, ...] = ("token_f1", "exact_match", "rouge_l")
    if _has("sacrebleu"):
        text_metrics = (*text_metrics, "bleu")
    overall = evaluate_answers(data.samples, text_metrics=text_metrics)
    corpus = data.corpus_texts
    coverage: dict[str, float | None] = {}
    for name, run in systems.runs.items():
        ranked = run.ranked()
        resampled = [
            replace(
                s,
                context=tuple(corpus[d] for d in ranked.get(s.id, [])[:3]),
                retrieved=tuple(corpus[d] for d in ranked.get(s.id, [])[:5]),
            )
            for s in data.samples
        ]
        report = evaluate_answers(resampled, text_metrics=())
        coverage[name] = mean_defined([row["context_coverage"] for row in report["per_sample"]])
    return {"overall": overall, "context_coverage_by_system": coverage}


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# -- optional integrations -------------------------------------------------------------------


def write_report(
    path: Path, evaluation: Evaluation, comparison: Comparison, data: ExampleData, systems: Systems
) -> str:
    """The HTML report (:mod:`ragmeter.report.html`; needs the report extra); the message to
    print."""
    from ragmeter.report.html import write_html_report

    try:
        write_html_report(
            path,
            evaluation,
            runs=list(systems.runs.values()),
            qrels=data.qrels,
            judgments=data.judgments,
            comparison=comparison,
            baseline=BASELINE,
            k=K,
            pools={
                name: (systems.pools[name], MMR_CANDIDATES if name == "hybrid+mmr" else None)
                for name in systems.runs
            },
            rel_level=REL_LEVEL,
            title="ragmeter demo: four retrievers on the Vellmar transit example",
            inputs=[("labels", example_labels(data).provenance)],
        )
    except MissingExtraError as exc:  # matplotlib is not installed
        return f"HTML report: skipped ({exc})"
    return f"HTML report: {path}"


def save_to_store(evaluation: Evaluation, data: ExampleData, systems: Systems) -> str:
    """Save into the default store only when it exists (:mod:`ragmeter.store`); the message
    to print."""
    from ragmeter.store import default_store_exists, default_store_url, save_evaluation

    if not default_store_exists():
        return (
            f"store: no store at {default_store_url()}, results not saved (the demo saves only "
            "into an existing store)"
        )
    try:
        saved = save_evaluation(
            evaluation,
            name="demo",
            command="demo",
            parameters={"k": K, "rel_level": REL_LEVEL, "mmr_candidates": MMR_CANDIDATES},
            qrels=data.qrels_path,
            runs=list(systems.runs.values()),
        )
    except MissingExtraError as exc:  # sqlalchemy is not installed
        return f"store: not saved ({exc})"
    return f"store: saved as evaluation {saved.id}"


def results_json(
    evaluation: Evaluation,
    comparison: Comparison,
    answers: Mapping[str, Any],
    seconds: Mapping[str, float],
) -> str:
    """``results.json``: settings, families, the evaluation (per query), the comparison,
    the answer metrics and the seconds of each stage; NA is ``null``."""
    from ragmeter.measures import parse_measure

    doc = {
        "settings": {
            "baseline": BASELINE,
            "k": K,
            "rel_level": REL_LEVEL,
            "token_budget": TOKEN_BUDGET,
            "pool_depth": POOL_DEPTH,
            "mmr_candidates": MMR_CANDIDATES,
            "coverage_context_k": K,
        },
        "families": {
            **{f: [str(parse_measure(m)) for m in ms] for f, ms in FAMILIES.items()},
            "answers": [*ANSWER_MEASURES, "seed-001 answer metrics"],
        },
        "evaluation": evaluation.to_dict(per_query=True),
        "comparison": comparison.to_dict(),
        "answers": answers,
        "seconds": dict(seconds),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
