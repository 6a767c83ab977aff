"""Reading production traces: OTLP JSON retriever spans read into a run.

Writes N retriever spans of 10 documents each (one ``ExportTraceServiceRequest`` per line, as
the OpenTelemetry Collector's file exporter writes it; 5 000 distinct questions, so queries
repeat), then times, in a fresh process, ``ragmeter.read_run(TRACES)`` — the path of
``ragmeter evaluate TRACES`` — and reports wall time, spans per second and the process's
peak RSS (``ru_maxrss``). Each scale runs once untimed (page cache warm), then ``--repeat``
times; the best wall time is kept. The reader parses with orjson where it is installed (the
``traces`` extra); ``--json-only`` hides orjson from the timed process.

Usage::

    python benchmarks/traces_bench.py --data DIR --scales 100000 1000000 [--repeat 3]
        [--json-only]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

QUESTIONS = 5000
START_NS = 1_767_571_200 * 10**9


def write_traces(path: Path, n: int) -> None:
    """N retriever spans, seeded by their index (the file is the same every time)."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            attrs = [
                {"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                {"key": "input.value", "value": {"stringValue": f"question {i % QUESTIONS}"}},
            ]
            for rank in range(10):
                doc = f"doc{(i * 7919 + rank * 104729) % 1_000_000}"
                prefix = f"retrieval.documents.{rank}.document"
                attrs.append({"key": f"{prefix}.id", "value": {"stringValue": doc}})
                attrs.append({"key": f"{prefix}.score", "value": {"doubleValue": 1 - rank / 10}})
            start = START_NS + i * 1_000_000
            span = {
                "traceId": f"{i:032x}",
                "spanId": f"{i:016x}",
                "parentSpanId": "",
                "name": "retrieve",
                "kind": 1,
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(start + 20_000_000),
                "attributes": attrs,
            }
            request = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
            out.write(json.dumps(request, separators=(",", ":")) + "\n")


_CHILD = """
import sys, time
if sys.argv[2] == "json-only":
    sys.modules["orjson"] = None  # an import of orjson fails: Python's json parses
t = time.perf_counter()
from ragmeter import read_run
run = read_run(sys.argv[1])
print(time.perf_counter() - t, len(run), run.n_queries)
"""


def time_read(path: Path, json_only: bool = False) -> tuple[float, float, int]:
    """Wall seconds (read only, after imports are timed in), peak RSS MiB, queries."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), "json-only" if json_only else "any"],
        check=True,
        capture_output=True,
        text=True,
    )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    seconds, _rows, queries = done.stdout.split()
    return float(seconds), max(peak, before) / 1024, int(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("benchmarks/data"))
    parser.add_argument("--scales", type=int, nargs="+", default=[100_000])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json-only", action="store_true", help="parse without orjson")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    print("| spans | file MiB | wall s | spans/s | peak MiB | queries |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.scales:
        path = args.data / f"traces-{n}.json"
        if not path.exists():
            t = time.perf_counter()
            write_traces(path, n)
            print(f"(wrote {path} in {time.perf_counter() - t:.0f} s)", file=sys.stderr)
        time_read(path, args.json_only)  # warm the page cache
        runs = [time_read(path, args.json_only) for _ in range(args.repeat)]
        best = min(runs)
        size = os.path.getsize(path) / 2**20
        print(
            f"| {n:,} | {size:,.0f} | {best[0]:.1f} | {n / best[0]:,.0f} | {best[1]:,.0f} "
            f"| {best[2]:,} |"
        )


if __name__ == "__main__":
    main()
