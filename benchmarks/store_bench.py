"""Time of saving, loading and listing evaluations in the store (``--save``, ``history``).

Makes one evaluation of ``--runs`` runs × ``--queries`` queries × ``--measures`` measures
(random per-query values, 1 % NA) in memory and times :meth:`Store.save_evaluation`,
:meth:`Store.load_evaluation` and :meth:`Store.list_evaluations` on each store given
(``--store`` repeatable: a SQLite file by default; a ``postgresql://`` URL for a server).
Best of ``--repeat``; each save goes into the same store, so listing grows with the repeats.

    python benchmarks/store_bench.py --store /tmp/bench.db --store postgresql://postgres@127.0.0.1:5432/bench
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import parse_measures
from ragmeter.store import open_store


def synthetic(queries: int, measures: int, runs: int, seed: int = 0) -> Evaluation:
    rng = np.random.default_rng(seed)
    names = tuple(parse_measures([f"ndcg@{k}" for k in range(1, measures + 1)]))
    ids = np.array([f"q{i}" for i in range(queries)], dtype=object)
    results = []
    for r in range(runs):
        values = rng.random((queries, measures))
        values[rng.random((queries, measures)) < 0.01] = np.nan
        results.append(RunResult(f"system{r + 1}", ids, names, values))
    return Evaluation(tuple(results), names)


def bench(url: str, evaluation: Evaluation, repeat: int) -> dict[str, float]:
    best = {"save": np.inf, "load": np.inf, "list": np.inf}
    with open_store(url) as store:
        for _ in range(repeat):
            t0 = time.perf_counter()
            eid = store.save_evaluation(evaluation, git=None)
            t1 = time.perf_counter()
            loaded = store.load_evaluation(eid)
            t2 = time.perf_counter()
            store.list_evaluations(limit=50)
            t3 = time.perf_counter()
            assert np.array_equal(
                loaded.evaluation.runs[0].values, evaluation.runs[0].values, equal_nan=True
            )
            best = {
                "save": min(best["save"], t1 - t0),
                "load": min(best["load"], t2 - t1),
                "list": min(best["list"], t3 - t2),
            }
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--measures", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--store", action="append", default=None)
    args = parser.parse_args()
    evaluation = synthetic(args.queries, args.measures, args.runs)
    cells = args.queries * args.measures * args.runs
    with tempfile.TemporaryDirectory() as folder:
        stores = args.store or [str(Path(folder) / "bench.db")]
        for url in stores:
            t = bench(url, evaluation, args.repeat)
            backend = "postgresql" if url.startswith("postgres") else "sqlite"
            print(
                f"{backend:10s} {cells:>11,} cells  save {t['save']:6.2f} s  "
                f"load {t['load']:6.2f} s  list {t['list'] * 1000:6.1f} ms"
            )


if __name__ == "__main__":
    main()
