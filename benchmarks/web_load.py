"""Load on the labelling app: many concurrent annotators against ``ragmeter serve``.

Starts ``ragmeter serve`` on a synthetic collection (``--queries`` × ``--pool`` passages) in
its own process, then runs ``--users`` concurrent users, each with its own session (cookie,
CSRF token) and annotator name, through three phases of ``--seconds`` each:

* ``get``: label pages (``GET /label/{qid}``);
* ``post``: label saves (``POST /api/label`` JSON, as the page's script sends them);
* ``mixed``: one page for every four saves.

For each phase it prints the p50 / p99 latency of each kind of request, the throughput and
the labels acknowledged per second, and the server's own CPU time per request (from
``/proc``, Linux). Afterwards it reads the label database and counts the
labels lost: acknowledged (200) saves that the database does not hold.

The client is a small keep-alive HTTP/1.1 client on asyncio streams (the app answers with a
Content-Length), so that the client's own work stays small beside the server's on the same
machine. Run it on an otherwise idle machine; the load average is printed with the figures.

    python benchmarks/web_load.py                       # 200 users, 10 s per phase
    python benchmarks/web_load.py --users 50 --seconds 5
    python benchmarks/web_load.py --phases post --profile /tmp/serve.prof   # where time goes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def write_collection(folder: Path, n_queries: int, pool: int) -> list[str]:
    """A run (the pools) and a queries and corpus file; returns the run file's options."""
    rng = random.Random(0)
    run = folder / "run.txt"
    queries = folder / "queries.jsonl"
    corpus = folder / "corpus.jsonl"
    with run.open("w") as fh:
        for q in range(n_queries):
            for rank, d in enumerate(rng.sample(range(n_queries * pool), pool), start=1):
                fh.write(f"q{q} Q0 d{d} {rank} {1000 - rank} bench\n")
    queries.write_text(
        "".join(
            json.dumps({"id": f"q{q}", "text": f"question {q}?"}) + "\n" for q in range(n_queries)
        )
    )
    words = [
        "the",
        "a",
        "passage",
        "about",
        "trams",
        "fares",
        "passes",
        "caps",
        "students",
        "cards",
    ]
    corpus.write_text(
        "".join(
            json.dumps({"id": f"d{d}", "text": " ".join(rng.choices(words, k=60))}) + "\n"
            for d in range(n_queries * pool)
        )
    )
    return ["--run", str(run), "--queries", str(queries), "--corpus", str(corpus)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Connection:
    """One keep-alive HTTP/1.1 connection with the cookies of one browser."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        for key, value in (headers or {}).items():
            lines.append(f"{key}: {value}")
        lines.append(f"Content-Length: {len(body)}")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        close = False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"set-cookie":
                cookie = value.strip().split(b";", 1)[0].decode()
                key, _, val = cookie.partition("=")
                self.cookies[key] = val
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        data = await self.reader.readexactly(length)
        if close:
            self.writer.close()
            self.writer = None
        return status, data


@dataclass
class Tally:
    """Latencies (s) by kind of request, errors, and the labels the server acknowledged."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    acknowledged: Counter[str] = field(default_factory=Counter)  # by annotator


async def user(
    index: int,
    port: int,
    pools: dict[str, list[str]],
    until: float,
    mix: str,
    tally: Tally,
    acknowledged: Counter[str],
) -> None:
    conn = Connection(port)
    status, page = await conn.request("GET", "/")
    token = re.search(rb'name="csrf-token" content="([0-9a-f]+)"', page)
    assert status == 200 and token, status
    csrf = token.group(1).decode()
    name = f"user{index:03d}"
    form = f"name={name}&next=/&csrf_token={csrf}".encode()
    kind = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _ = await conn.request("POST", "/annotator", form, kind)
    assert status == 303, status
    rng = random.Random(index)
    qids = list(pools)
    n = 0
    while time.perf_counter() < until:
        q = rng.choice(qids)
        get = mix == "get" or (mix == "mixed" and n % 5 == 0)
        n += 1
        start = time.perf_counter()
        if get:
            status, _ = await conn.request("GET", f"/label/{q}")
            what = "GET /label"
        else:
            body = json.dumps(
                {"query_id": q, "doc_id": rng.choice(pools[q]), "grade": rng.randint(1, 5)}
            ).encode()
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json",
                "X-CSRF-Token": csrf,
            }
            status, _ = await conn.request("POST", "/api/label", body, headers)
            what = "POST /api/label"
            if status == 200:
                acknowledged[name] += 1
        elapsed = time.perf_counter() - start
        tally.latencies.setdefault(what, []).append(elapsed)
        if status != 200:
            tally.errors[f"{what} {status}"] += 1


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def phase(
    port: int, pools: dict[str, list[str]], users: int, seconds: float, mix: str
) -> tuple[Tally, float]:
    tally = Tally()
    until = time.perf_counter() + seconds
    start = time.perf_counter()
    await asyncio.gather(
        *(user(i, port, pools, until, mix, tally, tally.acknowledged) for i in range(users))
    )
    return tally, time.perf_counter() - start


def stored_labels(db: Path) -> Counter[str]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT annotator, COUNT(*) FROM events WHERE kind = 'grade' GROUP BY annotator"
        ).fetchall()
    finally:
        conn.close()
    return Counter({str(a): int(n) for a, n in rows})


def wait_ready(port: int, server: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with status {server.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--pool", type=int, default=20, help="passages per query")
    parser.add_argument("--phases", nargs="+", default=["get", "post", "mixed"])
    parser.add_argument(
        "--profile", type=Path, help="write the server's cProfile statistics to this file"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = write_collection(folder, args.queries, args.pool)
        db = folder / "labels.db"
        port = free_port()
        paths = [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        python = [sys.executable]
        if args.profile is not None:
            python += ["-m", "cProfile", "-o", str(args.profile)]
        cmd = [*python, "-m", "ragmeter", "serve", *inputs, "--depth", str(args.pool)]
        cmd += ["--labels", str(db), "--port", str(port)]
        server = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
        try:
            wait_ready(port, server)
            pools = read_pools(inputs[1], args.pool)
            load = os.getloadavg()[0]
            print(
                f"{args.users} users, {args.seconds:g} s per phase, {args.queries} queries × "
                f"{args.pool} passages; load average before: {load:.2f} on {os.cpu_count()} cores"
            )
            print(f"{'phase':6} {'request':16} {'n':>7} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>8}")
            acknowledged: Counter[str] = Counter()
            for mix in args.phases:
                cpu = server_cpu(server.pid)
                tally, elapsed = asyncio.run(phase(port, pools, args.users, args.seconds, mix))
                cpu = server_cpu(server.pid) - cpu
                acknowledged.update(tally.acknowledged)
                for what, values in sorted(tally.latencies.items()):
                    print(
                        f"{mix:6} {what:16} {len(values):7d} "
                        f"{1000 * percentile(values, 50):8.1f} "
                        f"{1000 * percentile(values, 99):8.1f} {len(values) / elapsed:8.1f}"
                    )
                labels = sum(tally.acknowledged.values())
                print(f"{mix:6} labels/s: {labels / elapsed:.1f}; errors: {dict(tally.errors)}")
                requests = sum(len(v) for v in tally.latencies.values())
                if cpu == cpu and requests:  # the server's own CPU per request (not NaN)
                    print(f"{mix:6} server CPU per request: {1000 * cpu / requests:.2f} ms")
        finally:
            server.send_signal(signal.SIGINT)  # a clean exit (and the profile written)
            server.wait(timeout=60)
        stored = stored_labels(db)
        lost = sum(max(0, n - stored.get(a, 0)) for a, n in acknowledged.items())
        print(
            f"labels acknowledged: {sum(acknowledged.values())}, stored: "
            f"{sum(stored.values())}, lost: {lost}; load average after: {os.getloadavg()[0]:.2f}"
        )


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server process has used; NaN where /proc is absent.
    Per request it varies less with the other jobs on the machine than latency does."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_pools(run_path: str, depth: int) -> dict[str, list[str]]:
    pools: dict[str, list[str]] = {}
    for line in Path(run_path).read_text().splitlines():
        q, _, d, rank, _, _ = line.split()
        if int(rank) <= depth:
            pools.setdefault(q, []).append(d)
    return pools


if __name__ == "__main__":
    main()
