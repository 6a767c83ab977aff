"""A large run file against ``wc -l``: the whole ``ragmeter evaluate`` over the time of counting
the file's lines, in one run, with the peak memory of the process tree.

python benchmarks/large_file_bench.py [--queries 1000000] [--data DIR] [--repeat 3]
    [--against SRC]

Data come from ``generate.py`` (``run-1m.txt``: 100 M lines, 3.75 GB; made if missing, which
takes minutes). ``wc -l RUN`` and ``ragmeter evaluate RUN --qrels QRELS -m ndcg@10 -m map@100
-m recall@100 -m mrr@10 -m P@10 -f json`` run in turns after one untimed run of each (the page
cache then holds the file, as the issue's figure had it: "page cache warm"); the best wall time
of each is kept, and the ratio of the two printed (the target: at most 8). The timed runs are
not watched (reading ``/proc/PID/smaps_rollup`` takes the process's memory-map lock, which
stalls the workers' page faults on the mapped file); their largest single process comes from
``wait4``. One more run, watched from ``/proc`` every 50 ms (``stream_bench.run_once``), gives
the peak of the tree's summed resident and proportional set sizes. ``--against SRC`` times
another ragmeter too (its sources in ``SRC``, put first on ``PYTHONPATH``; e.g. a commit
checked out with ``git archive``, its C extension built in place), in the same turns: a
before/after on the same machine at the same load. CPU seconds (user + system
of the tree) are less sensitive than wall seconds to a machine shared with other jobs; the load
average before and after says how shared it was.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate, label  # noqa: E402
from stream_bench import Sample, command, run_once  # noqa: E402

#: the ratio to ``wc -l`` the issue asks for
TARGET = 8.0


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system of the tree) and the largest resident set
    (MiB) of any one process of ``cmd``'s tree (Linux's ``wait4``)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.decode()}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def wc_seconds(path: Path) -> float:
    """Wall seconds of ``wc -l PATH`` as a whole process."""
    start = time.perf_counter()
    subprocess.run(["wc", "-l", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against", type=Path, default=None, help="another ragmeter's src folder")
    args = ap.parse_args()
    run = args.data / f"run-{label(args.queries)}.txt"
    qrels = args.data / f"qrels-{label(args.queries)}.txt"
    if not (run.exists() and qrels.exists()):
        generate(args.queries, args.data)
    cmd, env = command("ragmeter", run, qrels)
    print(
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} CPUs)",
        flush=True,
    )
    wc_seconds(run)  # warm-up: the page cache
    tree: Sample = run_once(cmd, env)  # warm-up, watched: the tree's memory
    other_env = None
    if args.against is not None:
        other_env = {**env, "PYTHONPATH": str(args.against.resolve())}
        timed(cmd, other_env)  # warm-up
    counts: list[float] = []
    runs: list[tuple[float, float, float]] = []
    others: list[tuple[float, float, float]] = []
    for _ in range(args.repeat):
        counts.append(wc_seconds(run))
        runs.append(timed(cmd, env))
        if other_env is not None:
            others.append(timed(cmd, other_env))
    seconds, cpu, max_rss = min(runs)
    wc = min(counts)
    lines = args.queries * 100
    print(
        f"\n{label(args.queries)} queries × 100 ({run.stat().st_size / 1e9:.2f} GB, "
        f"{lines / 1e6:.0f} M lines), best of {args.repeat} in turns"
    )
    print("| command | wall s | CPU s | max RSS MiB | tree RSS MiB | tree PSS MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| `wc -l` | {wc:.2f} | | | | |")
    print(
        f"| `ragmeter evaluate` (5 measures, -f json) | {seconds:.2f} | {cpu:.2f} | "
        f"{max_rss:.0f} | {tree.tree_rss:.0f} | {tree.tree_pss:.0f} |"
    )
    if others:
        o_seconds, o_cpu, o_rss = min(others)
        print(
            f"| `ragmeter evaluate` of {args.against} | {o_seconds:.2f} | {o_cpu:.2f} | "
            f"{o_rss:.0f} | | |"
        )
        print(f"ratio of {args.against} / wc -l: {o_seconds / wc:.1f}")
    ratio = seconds / wc
    verdict = "met" if ratio <= TARGET else "missed"
    print(f"ratio ragmeter / wc -l (best wall times): {ratio:.1f} (target ≤ {TARGET:g}: {verdict})")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
