"""Span measures at scale: 10,000 queries × 10 spans × top 20 chunks (issue 33's target: ≤ 1 s).

Synthetic, seeded: 1,000 documents of 20,000 characters, each cut into 400-character chunks
with 50 of overlap (a chunk table of ~57,000 chunks); per query 10 spans of 20–300 characters
in one or two documents, and a run of 20 chunks (half near the spans, half anywhere). Times,
best of ``--repeat``, in process: the join of the run and spans onto the alignment
(``prepare``), then the four chunking_evaluation measures at K = 20 (``compute``), then all
eight span families.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ragmeter import Run
from ragmeter.core.spans import ChunkTable, SpanInputs, SpanLabels
from ragmeter.evaluation import EvalInputs, compute, prepare, resolve_measures

FOUR = ["span_recall@20", "span_precision@20", "span_iou@20", "span_precision_omega"]
EIGHT = [*FOUR, "span_set_recall@20", "span_set_precision@20", "span_set_iou@20"]
EIGHT.append("span_set_precision_omega")


def make(n_queries: int, seed: int = 0) -> tuple[Run, SpanInputs]:
    rng = np.random.default_rng(seed)
    n_docs, length, size, overlap = 1000, 20_000, 400, 50
    starts = np.arange(0, length - overlap, size - overlap)
    doc = np.repeat(np.arange(n_docs), len(starts))
    start = np.tile(starts, n_docs)
    end = np.minimum(start + size, length)
    chunk_ids = np.array([f"c{i}" for i in range(len(doc))], dtype=object)
    doc_ids = np.array([f"d{d}" for d in range(n_docs)], dtype=object)
    table = ChunkTable(chunk_ids, doc_ids[doc], start.astype(np.int64), end.astype(np.int64))
    q = np.repeat(np.arange(n_queries), 10)
    span_doc = rng.integers(0, n_docs, n_queries)[q] + rng.integers(0, 2, len(q))
    span_doc %= n_docs
    span_start = rng.integers(0, length - 300, len(q))
    span_end = span_start + rng.integers(20, 300, len(q))
    query_ids = np.array([f"q{i}" for i in range(n_queries)], dtype=object)
    labels = SpanLabels(
        query_ids[q],
        doc_ids[span_doc],
        span_start,
        span_end,
        np.ones(len(q), dtype=np.int32),
    )
    per_doc = len(starts)
    near = span_doc[::10, None] * per_doc + (span_start[::10, None] // (size - overlap))
    near = near + np.arange(10)[None, :]
    anywhere = rng.integers(0, len(doc), (n_queries, 10))
    picked = np.minimum(np.concatenate([near, anywhere], axis=1), len(doc) - 1)
    ranking = {
        str(query_ids[i]): [str(chunk_ids[c]) for c in dict.fromkeys(picked[i].tolist())]
        for i in range(n_queries)
    }
    return Run.from_lists(ranking), SpanInputs(labels, table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    run, spans = make(args.queries)
    inputs = EvalInputs(spans.labels.query_qrels(), spans=spans)
    for label, names in (("4 measures", FOUR), ("8 measures", EIGHT)):
        measures = resolve_measures(names, default_k=20)
        joins, computes = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            aligned = prepare(run, inputs, measures).aligned
            t1 = time.perf_counter()
            values = compute(aligned, measures)
            t2 = time.perf_counter()
            joins.append(t1 - t0)
            computes.append(t2 - t1)
        print(
            f"{args.queries} queries, {label}: align+join {min(joins):.3f} s, "
            f"compute {min(computes):.3f} s, total {min(joins) + min(computes):.3f} s "
            f"(mean of {names[0]}: {np.nanmean(values[:, 0]):.4f})"
        )


if __name__ == "__main__":
    main()
