"""Time ``ragmeter.stats.compare``: 5 runs × 5 measures × 10,000 queries, 10,000 sign flips.

python benchmarks/compare_bench.py [--queries N] [--runs R] [--measures M]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import parse_measures
from ragmeter.stats.comparison import compare
from ragmeter.stats.paired import randomization_pvalues


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--measures", type=int, default=5)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--bootstrap", type=int, default=10_000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    names = ["ndcg@10", "map", "recall@100", "mrr", "P@10", "ndcg@5", "P@5", "bpref"]
    measures = tuple(parse_measures(names[: args.measures]))
    ids = np.array([f"q{i}" for i in range(args.queries)], dtype=object)
    base = rng.random((args.queries, len(measures)))
    runs = tuple(
        RunResult(
            f"run{r}",
            ids,
            measures,
            np.clip(base + rng.normal(0.002 * r, 0.1, base.shape), 0, 1),
        )
        for r in range(args.runs)
    )
    ev = Evaluation(runs, measures)
    k = (args.runs - 1) * len(measures)
    diffs = np.column_stack(
        [
            runs[r].values[:, j] - base[:, j]
            for r in range(1, args.runs)
            for j in range(len(measures))
        ]
    )
    t = time.perf_counter()
    randomization_pvalues(diffs, permutations=args.permutations, seed=0)
    test_s = time.perf_counter() - t
    t = time.perf_counter()
    compare(ev, test="randomization", permutations=args.permutations, bootstrap=args.bootstrap)
    full_s = time.perf_counter() - t
    print(
        f"{args.runs} runs × {len(measures)} measures × {args.queries:,} queries "
        f"({k} comparisons): randomization test, {args.permutations:,} sign flips "
        f"{test_s:.2f} s; whole compare (+ {args.bootstrap:,} bootstrap resamples) "
        f"{full_s:.2f} s"
    )


if __name__ == "__main__":
    main()
