"""Build the example collection shipped in ``src/ragmeter/data/example/`` from hand-written text.

The collection is about the public transit of Vellmar, a fictional port city; every passage,
query, grade, sub-question rating and answer was written by hand for ragmeter (the text lives
in ``scripts/example_text/``). This script assembles the files:

* ``corpus.jsonl`` / ``queries.jsonl`` — ``{"id", "text"}`` rows. Doc ids ``p001``… are
  assigned after a seeded shuffle, so an id says nothing about the query it was written for.
* ``qrels.txt`` — ``qid 0 docid grade`` on the 1..5 utility scale of the set-based measures
  (5 decisive, 4 substantial, 3 partial, 2 tangential, 1 off-topic or a distractor). Every
  passage of a query's *pool* is graded: the pool is the union of the top 20 of the demo's
  four systems (BM25, dense, hybrid, hybrid + MMR). A pooled passage that no one graded by
  hand for that query was written for another query or as background, so it is off-topic
  there and takes the **default grade 1** (and sub-question ratings 0); the passages of
  another query that are relevant here were graded by hand (``example_text/also.py``).
  Hand-graded passages that no system retrieves stay in the qrels too (they are what the
  oracle could have found). Beside it, ``qrels.txt.provenance.jsonl`` says the labels were
  made by people (the label provenance sidecar of :mod:`ragmeter.io.provenance`).
* ``subquestions.jsonl`` — ``{"query_id", "questions"}``, 2–4 per query.
* ``judgments.jsonl`` — ``{"query_id", "doc_id", "ratings"}``, one 0..5 rating per
  sub-question for every passage in the qrels.
* ``references.jsonl`` — ``{"id", "text"}`` reference answers.
* ``answers.json`` — seed-001 samples: the query, the context (the texts of the hybrid run's
  top 3), a hand-written generated answer, the reference answer, a human label (1 correct, 0
  not), ``retrieved`` (texts of the hybrid top 5) and per-stage ``timings``. The timings are
  synthetic: drawn from a seeded random generator around typical values (embed ≈ 15 ms,
  retrieve ≈ 40 ms, rerank ≈ 120 ms, generate ≈ 1.2 s), for the latency summary to have
  something to show.
* ``answers_rated.jsonl`` — the same generated answers rated 0..5 against the sub-questions
  (``{"query_id", "ratings", "text"}``), for ``answer_coverage``.
* ``nuggets.jsonl``, ``nugget_assignments.jsonl``, ``rag_answers.jsonl``,
  ``citation_support.jsonl`` — nuggets of four queries and their assignments, written by
  ``make_example_nuggets.py`` (run at the end).

Run from the repository root with the ``baselines`` extra installed (the pool needs the
retrievers): ``python scripts/make_example_data.py``. It prints the pooled passages that took
the default grade while ranking in some system's top 5, for a second look by hand.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "src"))

from example_text import also, background, batch1, batch2, batch3, batch4  # noqa: E402

OUT = ROOT / "src" / "ragmeter" / "data" / "example"
POOL_DEPTH = 20
DEFAULT_GRADE = 1
SHUFFLE_SEED = 2026
TIMING_SEED = 1


def clusters() -> list[tuple[Any, ...]]:
    return [c for batch in (batch1, batch2, batch3, batch4) for c in batch.CLUSTERS]


def build() -> dict[str, Any]:
    """Passages with ids, queries, hand grades and ratings."""
    texts: list[tuple[str, str | None]] = []  # (text, key)
    own: list[tuple[str, int, int, str]] = []  # (qid, passage index, grade, ratings)
    refs: list[tuple[str, str, int, str]] = []  # (qid, key, grade, ratings)
    for qid, _query, subqs, *_rest, passages in clusters():
        for entry in passages:
            if isinstance(entry[0], str) and entry[0].startswith("@"):
                key, grade, ratings = entry
                refs.append((qid, key[1:], grade, ratings))
                continue
            grade, ratings, text, *key = entry
            assert 1 <= grade <= 5, (qid, text)
            assert len(ratings) == len(subqs), (qid, text)
            own.append((qid, len(texts), grade, ratings))
            texts.append((text, key[0] if key else None))
    for text in background.PASSAGES:
        texts.append((text, None))
    order = list(range(len(texts)))
    random.Random(SHUFFLE_SEED).shuffle(order)
    width = len(str(len(texts)))
    doc_id = {idx: f"p{pos + 1:0{width}d}" for pos, idx in enumerate(order)}
    by_key = {key: doc_id[i] for i, (_, key) in enumerate(texts) if key}
    graded: dict[str, dict[str, tuple[int, str]]] = {}
    for qid, idx, grade, ratings in own:
        graded.setdefault(qid, {})[doc_id[idx]] = (grade, ratings)
    for qid, key, grade, ratings in refs:
        graded.setdefault(qid, {})[by_key[key]] = (grade, ratings)
    for qid, prefix, grade, ratings in also.ALSO:
        found = [i for i, (t, _) in enumerate(texts) if t.startswith(prefix)]
        assert len(found) == 1, (qid, prefix, len(found))
        d = doc_id[found[0]]
        assert d not in graded[qid], (qid, prefix, "graded twice")
        graded[qid][d] = (grade, ratings)
    corpus = sorted(((doc_id[i], t) for i, (t, _) in enumerate(texts)), key=lambda r: r[0])
    return {"corpus": corpus, "graded": graded}


def systems(corpus: dict[str, str], queries: dict[str, str]) -> dict[str, Any]:
    """The demo's four runs (the same settings as ``ragmeter demo``)."""
    from ragmeter.pipeline.baselines import (
        BM25Retriever,
        DenseRetriever,
        mmr_rerank,
        reciprocal_rank_fusion,
    )

    bm25 = BM25Retriever(corpus).search(queries, depth=100, name="bm25")
    retriever = DenseRetriever(corpus)
    dense = retriever.search(queries, depth=100, name="dense")
    hybrid = reciprocal_rank_fusion([bm25, dense], depth=100, name="hybrid")
    mmr = mmr_rerank(hybrid, queries, retriever, candidates=50, name="hybrid+mmr")
    return {"bm25": bm25, "dense": dense, "hybrid": hybrid, "hybrid+mmr": mmr}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


def write_human_provenance(qrels: Path) -> None:
    """The sidecar saying that every label of ``qrels`` was made by hand."""
    from ragmeter.core.provenance import LabelProvenance, LabelSource
    from ragmeter.io.provenance import write_provenance

    made_by = LabelSource(kind="human", note="graded by hand for the example collection")
    write_provenance(qrels, LabelProvenance.single(made_by))


def main() -> None:
    data = build()
    corpus = dict(data["corpus"])
    graded: dict[str, dict[str, tuple[int, str]]] = data["graded"]
    cl = clusters()
    queries = {c[0]: c[1] for c in cl}
    subqs = {c[0]: c[2] for c in cl}
    runs = systems(corpus, queries)
    ranked = {name: run.ranked() for name, run in runs.items()}
    OUT.mkdir(parents=True, exist_ok=True)
    write_jsonl(OUT / "corpus.jsonl", [{"id": d, "text": t} for d, t in data["corpus"]])
    write_jsonl(OUT / "queries.jsonl", [{"id": q, "text": t} for q, t in queries.items()])
    qrels_lines: list[str] = []
    judgments: list[dict[str, Any]] = []
    n_default = 0
    for qid in queries:
        labels = {d: (g, [int(c) for c in r]) for d, (g, r) in graded[qid].items()}
        pool = {d for lists in ranked.values() for d in lists.get(qid, [])[:POOL_DEPTH]}
        for d in sorted(pool - set(labels)):
            labels[d] = (DEFAULT_GRADE, [0] * len(subqs[qid]))
            n_default += 1
            top5 = [n for n, lists in ranked.items() if d in lists.get(qid, [])[:5]]
            if top5:
                print(f"review {qid} {d} (top 5 of {', '.join(top5)}): {corpus[d][:90]}")
        for d in sorted(labels):
            grade, ratings = labels[d]
            qrels_lines.append(f"{qid} 0 {d} {grade}\n")
            judgments.append({"query_id": qid, "doc_id": d, "ratings": ratings})
    (OUT / "qrels.txt").write_text("".join(qrels_lines), encoding="utf-8")
    write_human_provenance(OUT / "qrels.txt")
    write_jsonl(OUT / "judgments.jsonl", judgments)
    write_jsonl(
        OUT / "subquestions.jsonl", [{"query_id": q, "questions": s} for q, s in subqs.items()]
    )
    write_jsonl(OUT / "references.jsonl", [{"id": c[0], "text": c[3]} for c in cl])
    rng = random.Random(TIMING_SEED)
    samples = []
    rated = []
    hybrid = ranked["hybrid"]
    for qid, query, _s, reference, generated, label, answer_ratings, _p in cl:
        top = [corpus[d] for d in hybrid[qid][:5]]
        samples.append(
            {
                "id": qid,
                "query": query,
                "context": top[:3],
                "generated_answer": generated,
                "reference_answer": reference,
                "label": label,
                "retrieved": top,
                "timings": {
                    "embed": round(rng.lognormvariate(-4.2, 0.25), 4),
                    "retrieve": round(rng.lognormvariate(-3.2, 0.3), 4),
                    "rerank": round(rng.lognormvariate(-2.1, 0.3), 4),
                    "generate": round(rng.lognormvariate(0.15, 0.35), 4),
                },
            }
        )
        rated.append(
            {"query_id": qid, "ratings": [int(c) for c in answer_ratings], "text": generated}
        )
    (OUT / "answers.json").write_text(
        json.dumps(samples, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    write_jsonl(OUT / "answers_rated.jsonl", rated)
    import make_example_nuggets  # the nugget files read the answers written above

    make_example_nuggets.main()
    import make_example_spans  # the documents and span labels read the corpus and qrels

    make_example_spans.main()
    print(
        f"{len(corpus)} passages, {len(queries)} queries, {len(qrels_lines)} graded pairs "
        f"({n_default} with the default grade {DEFAULT_GRADE}) -> {OUT}"
    )


if __name__ == "__main__":
    main()
