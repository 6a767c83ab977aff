"""Partitioned runs on the Ray engine: the same per-query values as one TREC file in this
process, and the throughput with 1 and 2 workers.

Generates ``N`` queries × 100 (``benchmarks/generate.py``, seed 0) as one TREC run and its
qrels, cuts the run into ``P`` Parquet partitions by query (query ``i`` in partition
``i mod P``), then

1. the check, with the commands a user runs::

       ragmeter evaluate run-50k.txt --qrels qrels-50k.txt --per-query -f csv -o here.csv
       ragmeter evaluate run/ --qrels qrels-50k.txt --engine ray --per-query -f csv -o ray.csv

   every per-query value and every mean must be the same (the run's name aside);
2. the timings, through the Python API: a Ray instance started with ``W`` CPUs (the start
   timed apart), the partitions evaluated on it, the instance shut down; the in-process
   evaluations of the partitions and of the TREC file beside them.

Usage::

    python benchmarks/ray_bench.py [--queries 50000] [--partitions 8] [--out /tmp/ragmeter-ray]
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate, label

import ragmeter
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.io.tabular import run_table, write_table
from ragmeter.metrics.defaults import DEFAULT_MEASURES


def partition(run_path: Path, folder: Path, parts: int) -> None:
    """The run of ``run_path`` written as ``parts`` Parquet files, query ``qI`` in ``I % parts``
    (columns query_id, doc_id, rank, score, as ``ragmeter`` writes a run)."""
    run = read_run(run_path)
    table = run_table(run)
    folder.mkdir(parents=True, exist_ok=True)
    number = np.array([int(q[1:]) for q in run.query_ids.tolist()]) % parts
    rows = np.repeat(number, run.lengths())
    for p in range(parts):
        write_table(
            table.filter(pa.array(rows == p)), folder / f"part-{p:04d}.parquet", fmt="parquet"
        )


def per_query_csv(path: Path) -> dict[tuple[str, str], tuple[str, str, str]]:
    """``{(query, measure): (value, n, n_defined)}`` of a ``--per-query -f csv`` output, the
    means under query ``""`` (the run's name left out)."""
    with path.open(newline="") as fh:
        return {
            (row["query"], row["measure"]): (row["value"], row["n"], row["n_defined"])
            for row in csv.DictReader(fh)
        }


def check(run_path: Path, qrels_path: Path, folder: Path, out: Path) -> None:
    env = {**os.environ}
    env.pop("RAY_ADDRESS", None)
    here, on_ray = out / "here.csv", out / "ray.csv"
    commands = [
        ["ragmeter", "evaluate", str(run_path), "--qrels", str(qrels_path)],
        ["ragmeter", "evaluate", str(folder), "--qrels", str(qrels_path), "--engine", "ray"],
    ]
    for command, target in zip(commands, (here, on_ray), strict=True):
        t0 = time.perf_counter()
        full = [sys.executable, "-m", *command, "--per-query", "-f", "csv", "-o", str(target)]
        subprocess.run(full, check=True, env=env, capture_output=True)
        print(
            f"$ {' '.join(command)} --per-query -f csv -o {target.name}: "
            f"{time.perf_counter() - t0:.1f} s"
        )
    a, b = per_query_csv(here), per_query_csv(on_ray)
    queries = {q for q, _ in a}
    same = a == b
    print(
        f"check: {len(queries)} queries × {len(a) // max(1, len(queries))} measures, "
        f"per-query values {'identical' if same else 'DIFFER'}"
    )
    if not same:
        bad = [k for k in a if a[k] != b.get(k)][:5]
        raise SystemExit(f"differ at {bad}")


def timings(run_path: Path, qrels_path: Path, folder: Path, workers: list[int]) -> None:
    import ray

    qrels = read_qrels(qrels_path)
    lines = len(read_run(folder))
    t0 = time.perf_counter()
    base = ragmeter.evaluate(read_run(run_path), qrels, DEFAULT_MEASURES)
    dt = time.perf_counter() - t0
    print(
        f"in this process, the TREC file read whole: {dt:.1f} s ({lines / dt / 1e6:.2f} M lines/s)"
    )
    t0 = time.perf_counter()
    local = ragmeter.evaluate(folder, qrels, DEFAULT_MEASURES)
    dt = time.perf_counter() - t0
    print(f"in this process, partition by partition: {dt:.1f} s ({lines / dt / 1e6:.2f} M lines/s)")
    assert np.array_equal(base.run.values, local.run.values, equal_nan=True)
    for w in workers:
        t0 = time.perf_counter()
        ray.init(
            address="local",
            num_cpus=w,
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=False,
        )
        started = time.perf_counter() - t0
        times = []
        for _ in range(2):  # the first starts the worker processes (and their imports)
            t0 = time.perf_counter()
            done = ragmeter.evaluate(folder, qrels, DEFAULT_MEASURES, engine="ray")
            times.append(time.perf_counter() - t0)
            assert np.array_equal(base.run.values, done.run.values, equal_nan=True)
        ray.shutdown()
        print(
            f"ray, {w} worker(s): cluster start {started:.1f} s; evaluation {times[0]:.1f} s "
            f"({lines / times[0] / 1e6:.2f} M lines/s), again on the warm workers "
            f"{times[1]:.1f} s ({lines / times[1] / 1e6:.2f} M lines/s)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", "-n", type=int, default=50_000)
    ap.add_argument("--partitions", "-p", type=int, default=8)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--out", type=Path, default=Path("/tmp/ragmeter-ray"))
    ap.add_argument("--reuse", action="store_true", help="keep the data already in --out")
    ap.add_argument("--no-check", action="store_true", help="the timings only")
    args = ap.parse_args()
    t0 = time.perf_counter()
    folder = args.out / f"run-{label(args.queries)}"
    run_path, qrels_path = (args.out / f"{k}-{label(args.queries)}.txt" for k in ("run", "qrels"))
    if not (args.reuse and folder.is_dir() and run_path.is_file()):
        run_path, qrels_path = generate(args.queries, args.out)
        partition(run_path, folder, args.partitions)
    print(
        f"data: {run_path} ({run_path.stat().st_size / 1e6:.0f} MB) and {args.partitions} "
        f"Parquet partitions in {folder}, {time.perf_counter() - t0:.0f} s"
    )
    if not args.no_check:
        check(run_path, qrels_path, folder, args.out)
    timings(run_path, qrels_path, folder, args.workers)


if __name__ == "__main__":
    main()
