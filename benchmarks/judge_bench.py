"""Judge throughput: relevance judgments per second against the deterministic local test server
(``tests/judge_server.py``, a separate process answering after a fixed latency), through the
whole runner — client, parsing, one SQLite commit per judgment — the client's CPU time per
judgment (its overhead: what each judgment costs this process, server excluded) and the test
server's.

    python benchmarks/judge_bench.py [--pairs 5000] [--concurrency 64] [--latency 0.005]
                                     [--repeat 3]

The cache is a fresh file per repetition (every pair is asked); the best repetition counts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragmeter.judges import JudgeConfig, JudgeItem, make_task
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.llm import LLMJudge
from ragmeter.judges.runner import run_judgments

REPO = Path(__file__).resolve().parent.parent


def start_server(latency: float) -> tuple[subprocess.Popen[bytes], str]:
    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "judge_server.py"), "--latency", str(latency)],
        stdout=subprocess.PIPE,
    )
    assert server.stdout is not None
    line = server.stdout.readline().decode().split()
    if not line or line[0] != "PORT":
        server.kill()
        raise RuntimeError("the test server did not start")
    return server, f"http://127.0.0.1:{line[1]}/v1"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def items(n: int) -> list[JudgeItem]:
    return [
        JudgeItem(
            (f"q{i // 20}", f"d{i}"),
            {
                "query": f"what is the timetable of line {i // 20}?",
                "passage": f"Passage {i}: buses on line {i % 97} leave every {i % 13 + 5} minutes.",
            },
        )
        for i in range(n)
    ]


def once(url: str, pairs: list[JudgeItem], concurrency: int, server_pid: int) -> dict[str, float]:
    config = JudgeConfig(base_urls=(url,), model="bench", concurrency=concurrency)
    with tempfile.TemporaryDirectory() as tmp, JudgmentCache(Path(tmp) / "c.sqlite") as cache:
        server0 = cpu_seconds(server_pid)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        run = run_judgments(make_task("relevance"), pairs, LLMJudge(config), cache=cache)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        server_cpu = cpu_seconds(server_pid) - server0
    assert run.summary.judged == len(pairs) and run.summary.failures == 0
    n = len(pairs)
    return {
        "wall_s": wall,
        "rate": n / wall,
        "cpu_us": cpu / n * 1e6,
        "server_us": server_cpu / n * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.005)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    server, url = start_server(args.latency)
    try:
        pairs = items(args.pairs)
        results = [once(url, pairs, args.concurrency, server.pid) for _ in range(args.repeat)]
    finally:
        server.kill()
        server.wait()
    best = max(results, key=lambda r: r["rate"])
    load = os.getloadavg()[0]
    rates = ", ".join(f"{r['rate']:.0f}/s" for r in results)
    print(
        f"{args.pairs} judgments, concurrency {args.concurrency}, server latency "
        f"{args.latency * 1000:g} ms: {best['rate']:.0f} judgments/s "
        f"({best['wall_s']:.2f} s), client CPU {best['cpu_us']:.0f} µs/judgment, "
        f"server CPU {best['server_us']:.0f} µs/judgment "
        f"[all: {rates}; load average {load:.1f}]"
    )


if __name__ == "__main__":
    main()
