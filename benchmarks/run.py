"""Time ragmeter against pytrec_eval, ranx and ir_measures, each as a whole separate process.

Each process starts, parses the run and qrels files, computes ``ndcg@10, map@100, recall@100,
mrr@10, P@10`` and prints them. For every scale the data are generated if missing
(``benchmarks/generate.py``), each tool runs once untimed (warms the page cache; its values are
checked against every other tool to 4 decimals and any disagreement is printed), then
``--repeat`` timed runs; the best wall time is kept, with the peak RSS of that process
(``ru_maxrss`` from ``wait4``). ragmeter's phases (import, read run, read qrels, align,
compute) come from one more in-process run (``tools.py ragmeter-phases``).

Usage::

    python benchmarks/run.py                       # 1k, 10k, 100k queries × 100
    python benchmarks/run.py --scales 1000 --repeat 5
    python benchmarks/run.py --huge                # adds 1M queries (ragmeter, pytrec_eval)
    python benchmarks/run.py --tools ragmeter pytrec_eval --scales 100000

Install the other tools with ``pip install -e ".[bench]"``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate, label  # noqa: E402
from tools import MEASURES  # noqa: E402

ALL_TOOLS = ("ragmeter", "pytrec_eval", "ranx", "ir_measures")
HUGE_TOOLS = ("ragmeter", "pytrec_eval")


@dataclass
class Result:
    tool: str
    seconds: float
    peak_mib: float
    values: dict[str, float]


def command(tool: str, run: Path, qrels: Path) -> list[str]:
    if tool == "ragmeter":
        exe = shutil.which("ragmeter")
        head = [exe] if exe else [sys.executable, "-m", "ragmeter"]
        metrics = [a for m in MEASURES for a in ("-m", m)]
        return [*head, "evaluate", str(run), "--qrels", str(qrels), *metrics, "-f", "json"]
    return [sys.executable, str(HERE / "tools.py"), tool, str(run), str(qrels)]


def run_once(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and stdout of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()}")
    return dt, usage.ru_maxrss / 1024, out.decode()


def parse_values(tool: str, out: str) -> dict[str, float]:
    data: Any = json.loads(out)
    if tool == "ragmeter":
        metrics = data["runs"][0]["metrics"]
        rename = {"P@10": "precision@10"}
        return {m: float(metrics[rename.get(m, m)]["mean"]) for m in MEASURES}
    return {m: float(data[m]) for m in MEASURES}


def check_agreement(values: dict[str, dict[str, float]]) -> list[str]:
    problems = []
    ref_tool = "ragmeter" if "ragmeter" in values else next(iter(values))
    ref = values[ref_tool]
    for tool, vals in values.items():
        for m in MEASURES:
            if round(vals[m], 4) != round(ref[m], 4):
                problems.append(f"  {m}: {tool} {vals[m]:.6f} vs {ref_tool} {ref[m]:.6f}")
    return problems


def bench_scale(n: int, tools: tuple[str, ...], repeat: int, phases: bool) -> dict[str, Any]:
    data = HERE / "data"
    run, qrels = data / f"run-{label(n)}.txt", data / f"qrels-{label(n)}.txt"
    if not (run.exists() and qrels.exists()):
        print(f"generating {label(n)} …", flush=True)
        generate(n, data)
    with open(run, "rb") as fh:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))
    print(
        f"\n== {label(n)} queries × 100: {run.name} ({run.stat().st_size / 1e6:.0f} MB, "
        f"{lines:,} lines) ==",
        flush=True,
    )
    values: dict[str, dict[str, float]] = {}
    for tool in tools:
        _, _, out = run_once(command(tool, run, qrels))
        values[tool] = parse_values(tool, out)
    problems = check_agreement(values)
    if problems:
        print("DISAGREEMENT (4 decimals):\n" + "\n".join(problems))
    else:
        print(f"all tools agree to 4 decimals: {values[tools[0]]}")
    results: list[Result] = []
    for tool in tools:
        best = (float("inf"), 0.0)
        for _ in range(repeat):
            dt, rss, _ = run_once(command(tool, run, qrels))
            if dt < best[0]:
                best = (dt, rss)
        results.append(Result(tool, best[0], best[1], values[tool]))
    base = next((r for r in results if r.tool == "pytrec_eval"), None)
    print(
        f"{'tool':<12} {'wall s':>8} {'×pytrec':>8} {'peak MiB':>9} {'×pytrec':>8} "
        f"{'s/M lines':>10}"
    )
    for r in results:
        tr = f"{r.seconds / base.seconds:.2f}" if base else "-"
        mr = f"{r.peak_mib / base.peak_mib:.2f}" if base else "-"
        print(
            f"{r.tool:<12} {r.seconds:8.2f} {tr:>8} {r.peak_mib:9.0f} {mr:>8} "
            f"{r.seconds / (lines / 1e6):10.2f}"
        )
    phase_times: dict[str, float] = {}
    if phases and "ragmeter" in tools:
        _, _, out = run_once(
            [sys.executable, str(HERE / "tools.py"), "ragmeter-phases", str(run), str(qrels)]
        )
        phase_times = json.loads(out)["phases"]
        print("ragmeter phases: " + ", ".join(f"{k} {v:.2f}s" for k, v in phase_times.items()))
    return {
        "queries": n,
        "lines": lines,
        "results": [r.__dict__ for r in results],
        "phases": phase_times,
        "agree": not problems,
        "disagreements": problems,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--tools", nargs="+", default=list(ALL_TOOLS), choices=ALL_TOOLS)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--huge", action="store_true", help="add 1M queries (ragmeter, pytrec_eval)")
    ap.add_argument("--no-phases", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )
    out = []
    for n in args.scales:
        out.append(bench_scale(n, tuple(args.tools), args.repeat, not args.no_phases))
    if args.huge:
        tools = tuple(t for t in args.tools if t in HUGE_TOOLS)
        out.append(bench_scale(1_000_000, tools, 1, not args.no_phases))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
