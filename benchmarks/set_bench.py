"""In-process compute time (after alignment) of the set-based family against ``ndcg@10``.

Reads ``data/run-100k.txt`` and ``data/qrels-100k.txt`` (``generate.py``; grades 0..3, mapped
with ``0:1,1:3,2:4,3:5``), aligns once per repetition (alignment and pool membership are not
timed), then times: ``ndcg@10`` alone; the eight set measures at K = 10; the eight at every
K = 1..50 (one sweep, 400 values per query). Best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from ragmeter.core.align import align, pool_membership
from ragmeter.evaluation import compute, evaluation_options, resolve_measures
from ragmeter.evaluation.side import side_options
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.measures import Measure
from ragmeter.sweep import expand

HERE = Path(__file__).resolve().parent
FAMILY = [
    "ra_nwg",
    "proc",
    "pct_proc",
    "n_recall4p",
    "n_recall5",
    "precision4p",
    "harm",
    "proc_n_recall4p",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", default="100k")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    run = read_run(HERE / "data" / f"run-{args.scale}.txt")
    qrels = read_qrels(HERE / "data" / f"qrels-{args.scale}.txt")

    def best(measures: list[Measure]) -> float:
        times = []
        for _ in range(args.repeat):
            al = align(run, qrels)
            options = {**evaluation_options("0:1,1:3,2:4,3:5"), **side_options(measures)}
            al = replace(al, options=options)
            k = max(int(m.k or 0) for m in measures)
            in_pool, _ = pool_membership(al, run, qrels, selection=k)
            al = replace(al, label_in_pool=in_pool)
            start = time.perf_counter()
            compute(al, measures)
            times.append(time.perf_counter() - start)
        return min(times)

    ndcg = best(resolve_measures(["ndcg@10"], default_k=10))
    one = best(resolve_measures([f"{f}@10" for f in FAMILY], default_k=10))
    sweep = best(expand(FAMILY, list(range(1, 51))))
    print(f"ndcg@10            {ndcg:.3f} s")
    print(f"set family @10     {one:.3f} s  ({one / ndcg:.2f} × ndcg@10)")
    print(f"sweep K = 1..50    {sweep:.3f} s  ({sweep / ndcg:.2f} × ndcg@10)")


if __name__ == "__main__":
    main()
