"""Time and size of the HTML report (``ragmeter report``) on synthetic data.

Makes ``--queries`` queries × ``--runs`` runs of 100 ranked docs (30 judged docs per query,
TREC grades 0..3 mapped with ``0:1,1:3,2:4,3:5``) in memory, evaluates the report's default
measures, then times :func:`ragmeter.report.html.render_html_report` (comparison, K-sweep
1..20, diagnosis, charts) and prints the phases and the file size. Best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ragmeter
from ragmeter.report.html import default_measures, render_html_report

GRADE_MAP = "0:1,1:3,2:4,3:5"


def synthetic(queries: int, runs: int, seed: int = 0) -> tuple[list[ragmeter.Run], ragmeter.Qrels]:
    """Runs that find the judged docs with a skill growing from run to run."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(2000)]
    qrels: dict[str, dict[str, int]] = {}
    for q in range(queries):
        judged = rng.choice(2000, size=30, replace=False)
        grades = rng.choice(4, size=30, p=[0.5, 0.25, 0.15, 0.1])
        qrels[f"q{q}"] = {docs[d]: int(g) for d, g in zip(judged, grades, strict=True)}
    out = []
    for r in range(runs):
        ranked: dict[str, list[str]] = {}
        for qid, labels in qrels.items():
            scores = rng.random(2000)
            for doc, grade in labels.items():
                scores[int(doc[1:])] += grade * (0.3 + 0.2 * r) * rng.random()
            ranked[qid] = [docs[i] for i in np.argsort(-scores, kind="stable")[:100]]
        out.append(ragmeter.Run.from_lists(ranked, name=f"system{r + 1}"))
    return out, ragmeter.Qrels.from_dict(qrels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    runs, qrels = synthetic(args.queries, args.runs)
    measures = default_measures(qrels, grade_map=GRADE_MAP)
    start = time.perf_counter()
    evaluation = ragmeter.evaluate(runs, qrels, measures, grade_map=GRADE_MAP)
    evaluated = time.perf_counter() - start
    best = float("inf")
    text = ""
    for _ in range(args.repeat):
        start = time.perf_counter()
        text = render_html_report(evaluation, runs=runs, qrels=qrels, grade_map=GRADE_MAP)
        best = min(best, time.perf_counter() - start)
    print(
        f"{args.queries} queries × {args.runs} runs, {len(measures)} measures: evaluate "
        f"{evaluated:.2f} s, report {best:.2f} s, {len(text.encode()) / 1024:.0f} KiB, "
        f"{text.count('<svg')} charts"
    )


if __name__ == "__main__":
    main()
