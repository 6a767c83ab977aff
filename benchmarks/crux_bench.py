"""Coverage measures at scale: N queries × 15 sub-questions × 100 judged passages, a 20-passage
context per query; coverage, alpha_ndcg@20 and density (SPEC §4).

    python benchmarks/crux_bench.py [--queries 50000]

Data are random and built in memory (the readers are not timed): ratings 0..5 with 15%
answerable cells and 2% unparseable (−1), 100 passages per query, passage texts of 5..60
whitespace tokens; each run holds 15 judged and 5 unjudged passages per query.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from ragmeter import Run, evaluate
from ragmeter.core.judgments import Corpus, Judgments


def build(
    n_queries: int, n_questions: int, n_passages: int, seed: int = 0
) -> tuple[Judgments, Corpus, Run]:
    rng = np.random.default_rng(seed)
    n_rows = n_queries * n_passages
    qids = np.array([f"q{i:06d}" for i in range(n_queries)], dtype=object)
    docs = pa.array([f"q{i:06d}-p{j:03d}" for i in range(n_queries) for j in range(n_passages)])
    cells = n_rows * n_questions
    ratings = rng.choice(
        np.array([0, 1, 2, 3, 4, 5, -1], dtype=np.int8),
        size=cells,
        p=[0.55, 0.18, 0.10, 0.05, 0.05, 0.05, 0.02],
    )
    judgments = Judgments(
        query_ids=qids,
        offsets=np.arange(n_queries + 1, dtype=np.int64) * n_passages,
        doc_ids=docs,
        widths=np.full(n_queries, n_questions, dtype=np.int64),
        ratings=ratings,
        rating_offsets=np.arange(n_rows + 1, dtype=np.int64) * n_questions,
    )
    pool = pa.array([" ".join(["tok"] * n) for n in range(5, 61)])
    extra = pa.array([f"u{i:06d}-{j}" for i in range(n_queries) for j in range(5)])
    corpus_ids = pa.concat_arrays([docs, extra])
    texts = pool.take(pa.array(rng.integers(0, len(pool), len(corpus_ids))))
    corpus = Corpus(corpus_ids, texts)
    judged = rng.permuted(np.tile(np.arange(n_passages), (n_queries, 1)), axis=1)[:, :15]
    run_q: list[str] = []
    run_d: list[str] = []
    for i in range(n_queries):
        picks = [f"q{i:06d}-p{j:03d}" for j in judged[i]] + [f"u{i:06d}-{j}" for j in range(5)]
        rng.shuffle(picks)
        run_q.extend([qids[i]] * 20)
        run_d.extend(picks)
    scores = np.tile(np.arange(20, 0, -1, dtype=np.float64), n_queries)
    run = Run.from_columns(run_q, run_d, scores, name="bench")
    return judgments, corpus, run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--questions", type=int, default=15)
    parser.add_argument("--passages", type=int, default=100)
    args = parser.parse_args()
    t0 = time.perf_counter()
    judgments, corpus, run = build(args.queries, args.questions, args.passages)
    print(f"build data: {time.perf_counter() - t0:.1f} s")
    for k in ("20", "oracle"):
        fresh = Judgments(
            judgments.query_ids,
            judgments.offsets,
            judgments.doc_ids,
            judgments.widths,
            judgments.ratings,
            judgments.rating_offsets,
        )  # no cached P* / ideal between settings
        fresh_corpus = Corpus(corpus.doc_ids, corpus.texts)  # nor the corpus id index
        t0, c0 = time.perf_counter(), time.process_time()
        ev = evaluate(
            run,
            None,
            ["coverage", "alpha_ndcg@20", "density"],
            judgments=fresh,
            corpus=fresh_corpus,
            context_k=20 if k == "20" else "oracle",
        )
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        means = {m: round(v, 4) if v is not None else None for m, v in ev.run.means().items()}
        print(f"--k {k}: {total:.2f} s wall, {cpu:.2f} s CPU  {means}")
        t0 = time.perf_counter()
        fresh2 = Judgments(
            judgments.query_ids,
            judgments.offsets,
            judgments.doc_ids,
            judgments.widths,
            judgments.ratings,
            judgments.rating_offsets,
        )
        fresh2.required()
        t1 = time.perf_counter()
        fresh2.ideal_alpha_dcg(0.5, 20)
        t2 = time.perf_counter()
        print(f"  of which: P* greedy {t1 - t0:.2f} s, ideal α-DCG greedy {t2 - t1:.2f} s")


if __name__ == "__main__":
    main()
