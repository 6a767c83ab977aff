"""Peak memory and time of ``BM25Retriever.search``: 1,000 queries × 50,000 documents.

python benchmarks/bm25_bench.py [--docs N] [--queries Q] [--depth K]

Documents and queries are drawn from a Zipf-distributed vocabulary (seeded); the peak is
what Python and numpy allocate during ``search`` (tracemalloc), the index excluded.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from ragmeter.pipeline.baselines import BM25Retriever


def texts(rng: np.random.Generator, n: int, length: int, vocab: int) -> list[str]:
    words = np.minimum(rng.zipf(1.3, size=(n, length)), vocab)
    return [" ".join(f"w{w}" for w in row) for row in words]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    corpus = {f"d{i}": t for i, t in enumerate(texts(rng, args.docs, 40, 20_000))}
    queries = {f"q{i}": t for i, t in enumerate(texts(rng, args.queries, 5, 20_000))}
    bm25 = BM25Retriever(corpus, stopwords=None)
    tracemalloc.start()
    start = time.perf_counter()
    run = bm25.search(queries, depth=args.depth)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"{args.queries:,} queries × {args.docs:,} documents, depth {args.depth}: "
        f"{elapsed:.2f} s, peak {peak / 2**20:.0f} MiB allocated during search, "
        f"{len(run):,} rows"
    )


if __name__ == "__main__":
    main()
