"""Cold start: whole-process time of everyday commands, and what each import costs.

python benchmarks/startup_bench.py [--repeat 5] [--imports] [--report]

Each command runs as a fresh process (``python -m ragmeter …``) on 1,000 queries × 100 TREC
lines (``benchmarks/generate.py``, made if missing), after one untimed run that warms the page
cache and writes the bytecode caches, as a user's second run would find them. Reports the
median, minimum and maximum wall time of ``--repeat`` runs, the median CPU time (user +
system), and the load average before and after (the machine may be shared: the figures are
only as quiet as it was).

Then, side by side: ``ragmeter evaluate RUN --qrels QRELS -m ndcg@10 -m map -f json`` and the
script a user would write instead with pytrec_eval (:data:`PYTREC_SCRIPT`: parse both files,
evaluate ``ndcg_cut_10`` and ``map``, print the means), each a whole process, run in turns
(ragmeter, the script, ragmeter, …) so that both see the same load; prints the medians and
their ratio (the target: at most 1). Skipped when pytrec_eval is not installed.

``--imports`` adds the cost of importing each module alone in a fresh interpreter (the wall
time of ``import X`` timed inside it, median of ``--repeat``), its parent packages and
dependencies included (``python -X importtime -c "import ragmeter.cli"`` shows the tree).
``--report`` adds ``ragmeter report --grade-map`` on the shipped example (two runs, 30
queries: the HTML report with its charts, matplotlib included).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate, label  # noqa: E402

#: modules whose import alone is timed (``--imports``), with what they are for
IMPORTS = (
    ("typer", "the CLI's parser"),
    ("rich.console", "tables and colours"),
    ("numpy", "arrays"),
    ("pyarrow", "strings and files"),
    ("ragmeter", "the package (names load on first use)"),
    ("ragmeter.cli", "evaluate and trec-eval (the other commands on first use of app)"),
    ("ragmeter.evaluation", "the evaluation engine"),
    ("ragmeter.metrics", "every measure family"),
    ("ragmeter.workflows.evaluate", "what `evaluate` imports"),
    ("pandas", "optional: frames"),
    ("scipy.stats", "optional: some statistics"),
    ("matplotlib.pyplot", "optional: report charts"),
)


#: what a user writes instead of ``ragmeter evaluate -m ndcg@10 -m map`` with pytrec_eval
PYTREC_SCRIPT = """\
import sys

import pytrec_eval

with open(sys.argv[2]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[1]) as f:
    run = pytrec_eval.parse_run(f)
per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"}).evaluate(run)
for measure in ("ndcg_cut_10", "map"):
    print(measure, sum(v[measure] for v in per_query.values()) / len(per_query))
"""


def commands(run: Path, qrels: Path) -> dict[str, list[str]]:
    """The timed command lines (arguments of ``python -m ragmeter``)."""
    return {
        "ragmeter --version": ["--version"],
        "ragmeter evaluate (ndcg@10, map)": [
            "evaluate",
            str(run),
            "--qrels",
            str(qrels),
            "-m",
            "ndcg@10",
            "-m",
            "map",
        ],
        "ragmeter evaluate -f json": [
            "evaluate",
            str(run),
            "--qrels",
            str(qrels),
            "-m",
            "ndcg@10",
            "-m",
            "map",
            "-f",
            "json",
        ],
        "ragmeter --help": ["--help"],
    }


def report_command(out: Path) -> list[str]:
    """``report`` of the shipped example's two runs, TREC grades mapped onto 1..5."""
    examples = HERE.parent / "examples"
    return [
        "report",
        str(examples / "run_bm25.txt"),
        str(examples / "run_dense.txt"),
        "--qrels",
        str(examples / "qrels.txt"),
        "--grade-map",
        "0:1,1:3,2:4,3:5",
        "-o",
        str(out / "report.html"),
    ]


def timed_run(args: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and its children) of
    ``python -m ragmeter ARGS``."""
    return timed_process(["-m", "ragmeter", *args])


def timed_process(args: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and its children) of
    ``python ARGS``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        env=env,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def import_seconds(module: str) -> float | None:
    """Seconds of ``import module`` in a fresh interpreter (its packages and dependencies
    included); ``None`` when it is not installed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    return float(done.stdout) if done.returncode == 0 else None


def side_by_side(run: Path, qrels: Path, repeat: int, data: Path) -> None:
    """ragmeter's ``evaluate -f json`` and the pytrec_eval script, in turns; medians and
    their ratio."""
    if import_seconds("pytrec_eval") is None:
        print("\npytrec_eval is not installed: no side-by-side figures")
        return
    script = data / "pytrec_eval_user.py"
    script.write_text(PYTREC_SCRIPT)
    tools = {
        "ragmeter evaluate -m ndcg@10 -m map -f json": commands(run, qrels)[
            "ragmeter evaluate -f json"
        ],
        "pytrec_eval script (parse, evaluate, print means)": [str(script), str(run), str(qrels)],
    }
    argv = {
        name: (["-m", "ragmeter", *a] if name.startswith("ragmeter") else a)
        for name, a in tools.items()
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in tools}
    for name in tools:
        timed_process(argv[name])  # warm-up
    for _ in range(repeat):
        for name in tools:
            times[name].append(timed_process(argv[name]))
    print(
        f"\n| side by side ({len(times)} tools in turns, {repeat} runs each) | median s | min s "
        "| median CPU s |"
    )
    print("|---|---:|---:|---:|")
    medians = {}
    for name, runs in times.items():
        walls = [w for w, _ in runs]
        medians[name] = statistics.median(walls)
        cpu = statistics.median(c for _, c in runs)
        print(f"| {name} | {medians[name]:.3f} | {min(walls):.3f} | {cpu:.3f} |")
    ours, theirs = medians.values()
    print(f"ratio ragmeter / pytrec_eval script (medians): {ours / theirs:.2f}", flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--imports", action="store_true", help="also time each import alone")
    parser.add_argument("--report", action="store_true", help="also time report --grade-map")
    parser.add_argument("--only-report", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--only-side-by-side", action="store_true", help="only ragmeter beside pytrec_eval"
    )
    args = parser.parse_args()

    run = args.data / f"run-{label(args.queries)}.txt"
    qrels = args.data / f"qrels-{label(args.queries)}.txt"
    if not (run.exists() and qrels.exists()):
        generate(args.queries, args.data)
    print(f"load average before: {load()}  ({os.cpu_count()} CPUs)")
    timed = {} if args.only_report or args.only_side_by_side else commands(run, qrels)
    if args.report or args.only_report:
        timed["ragmeter report --grade-map (example)"] = report_command(args.data)
    if timed:
        print(
            f"| command ({label(args.queries)} queries × 100) | median s | min s | max s "
            "| median CPU s |"
        )
        print("|---|---:|---:|---:|---:|")
    for name, argv in timed.items():
        timed_run(argv)  # warm-up: page cache and bytecode caches
        runs = [timed_run(argv) for _ in range(args.repeat)]
        times = [wall for wall, _ in runs]
        cpu = statistics.median(c for _, c in runs)
        print(
            f"| `{name}` | {statistics.median(times):.3f} | {min(times):.3f} | "
            f"{max(times):.3f} | {cpu:.3f} |",
            flush=True,
        )
    if not args.only_report:
        side_by_side(run, qrels, args.repeat, args.data)
    if args.imports:
        print("\n| import alone | median s | what for |")
        print("|---|---:|---|")
        for module, why in IMPORTS:
            import_seconds(module)  # warm-up
            found = [import_seconds(module) for _ in range(args.repeat)]
            times = [t for t in found if t is not None]
            shown = f"{statistics.median(times):.3f}" if times else "not installed"
            print(f"| `{module}` | {shown} | {why} |", flush=True)
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
