"""Streamed evaluation: whole-process wall time and peak memory of the process tree.

``ragmeter evaluate RUN --qrels QRELS -m ndcg@10 -m map@100 -m recall@100 -m mrr@10 -m P@10
-f json`` streams a TREC run file in blocks of queries, in forked worker processes
(``RAGMETER_WORKERS``, default 2). Its memory is the parent's plus the workers', so peak RSS
of one process (``ru_maxrss``) is not the whole story; this script polls ``/proc`` every 50 ms
for every process of the tree and reports:

* ``max RSS``: the largest resident set of any one process (what ``/usr/bin/time -v`` shows
  for the parent; ``ru_maxrss`` of the children, from ``wait4``, agrees with it);
* ``tree RSS``: the peak of the sum of the tree's resident sets (pages shared by a parent
  and its forked children — the qrels, the interpreter — counted once per process);
* ``tree PSS``: the peak of the sum of proportional set sizes (shared pages divided among
  the processes sharing them: the tree's real footprint);
* ``CPU s``: user + system time of the process and the children it reaped (``wait4``), which
  a loaded machine inflates less than the wall time.

Each tool runs once untimed (page cache warm), then ``--repeat`` times; the best wall time is
kept, with the memory of that run. pytrec_eval (``tools.py pytrec_eval``) and ragmeter reading
the whole run (``ragmeter.evaluate(ragmeter.read_run(RUN), …)``) run beside it where asked.

Usage::

    python benchmarks/stream_bench.py --data DIR --scales 10000 100000 1000000 \\
        [--tools ragmeter ragmeter-1 ragmeter-api ragmeter-whole pytrec_eval] [--repeat 3]

``ragmeter-1`` is the streamed CLI with ``RAGMETER_WORKERS=1`` (in-process);
``ragmeter-api`` the library given the path (``ragmeter.evaluate(RUN, …)``, streamed, no CLI),
``ragmeter-whole`` the library given the run read whole (the way before streaming). Data come from
``generate.py`` (``run-100k.txt``, ``qrels-100k.txt`` in ``--data``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import label  # noqa: E402
from tools import MEASURES  # noqa: E402

WHOLE = (
    "import json, sys, ragmeter; "
    "e = ragmeter.evaluate(ragmeter.read_run(sys.argv[1]), ragmeter.read_qrels(sys.argv[2]), "
    "sys.argv[3:]); print(json.dumps(e.to_dict()))"
)
API = (
    "import json, sys, ragmeter; "
    "e = ragmeter.evaluate(sys.argv[1], ragmeter.read_qrels(sys.argv[2]), sys.argv[3:]); "
    "print(json.dumps(e.to_dict()))"
)


@dataclass
class Sample:
    seconds: float
    max_rss: float  # MiB, largest single process
    tree_rss: float  # MiB, peak sum over the tree
    tree_pss: float  # MiB, peak sum over the tree
    cpu: float  # user + system seconds of the process and its reaped children
    out: str


def command(tool: str, run: Path, qrels: Path) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    metrics = [a for m in MEASURES for a in ("-m", m)]
    if tool in ("ragmeter", "ragmeter-1"):
        exe = shutil.which("ragmeter")
        head = [exe] if exe else [sys.executable, "-m", "ragmeter"]
        if tool == "ragmeter-1":
            env["RAGMETER_WORKERS"] = "1"
        return [*head, "evaluate", str(run), "--qrels", str(qrels), *metrics, "-f", "json"], env
    if tool in ("ragmeter-whole", "ragmeter-api"):
        code = WHOLE if tool == "ragmeter-whole" else API
        return [sys.executable, "-c", code, str(run), str(qrels), *MEASURES], env
    return [sys.executable, str(HERE / "tools.py"), tool, str(run), str(qrels)], env


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (from ``/proc/PID/task/TID/children``: cheap to read)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
            except OSError:
                continue
    return out


def _memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of ``pid`` in KiB, or zeros if it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def run_once(cmd: list[str], env: dict[str, str]) -> Sample:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak = {"max": 0, "rss": 0, "pss": 0}
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            per = [_memory(p) for p in _tree(proc.pid)]
            if per:
                peak["max"] = max(peak["max"], *(r for r, _ in per))
                peak["rss"] = max(peak["rss"], sum(r for r, _ in per))
                peak["pss"] = max(peak["pss"], sum(p for _, p in per))
            done.wait(0.05)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    out_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    err = proc.stderr.read()  # type: ignore[union-attr]
    reader.join()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    done.set()
    watcher.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.decode()}")
    return Sample(
        seconds,
        max(peak["max"], usage.ru_maxrss) / 1024,
        peak["rss"] / 1024,
        peak["pss"] / 1024,
        usage.ru_utime + usage.ru_stime,
        b"".join(out_chunks).decode(),
    )


def means_of(tool: str, out: str) -> dict[str, float]:
    data = json.loads(out)
    if tool.startswith("ragmeter"):
        metrics = data["runs"][0]["metrics"]
        rename = {"P@10": "precision@10"}
        return {m: float(metrics[rename.get(m, m)]["mean"]) for m in MEASURES}
    return {m: float(data[m]) for m in MEASURES}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--scales", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--tools", nargs="+", default=["ragmeter", "pytrec_eval"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    for n in args.scales:
        run, qrels = args.data / f"run-{label(n)}.txt", args.data / f"qrels-{label(n)}.txt"
        lines = n * 100
        print(f"\n== {label(n)} × 100 ({run.stat().st_size / 1e6:.0f} MB) ==", flush=True)
        print("| tool | wall s | CPU s | s / M lines | max RSS MiB | tree RSS MiB | tree PSS MiB |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        reference: dict[str, float] | None = None
        for tool in args.tools:
            cmd, env = command(tool, run, qrels)
            first = run_once(cmd, env)  # warm-up; values checked
            values = means_of(tool, first.out)
            reference = reference or values
            off = [m for m in MEASURES if round(values[m], 4) != round(reference[m], 4)]
            samples = [run_once(cmd, env) for _ in range(args.repeat)]
            best = min(samples, key=lambda s: s.seconds)
            note = f" (differs: {off})" if off else ""
            print(
                f"| {tool} | {best.seconds:.2f} | {best.cpu:.2f} | "
                f"{best.seconds / (lines / 1e6):.3f} | "
                f"{best.max_rss:.0f} | {best.tree_rss:.0f} | {best.tree_pss:.0f} |{note}",
                flush=True,
            )
        print(f"load average after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
