"""Time reading sub-question judgments JSONL: 500,000 lines × 15 ratings by default.

python benchmarks/judgments_bench.py [--lines N] [--ratings R] [--repeat K]

Writes the file once into a temporary folder (5,000 queries × 100 passages, ratings −1..5),
then times ``read_judgments`` (best of ``--repeat``) and, for scale, ``json.loads`` of every
line alone.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from ragmeter.io.judgments import read_judgments, read_questions


def write_files(folder: Path, lines: int, ratings: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    per_query = 100
    values = rng.integers(-1, 6, size=(lines, ratings)).tolist()
    judgments = folder / "judgments.jsonl"
    with judgments.open("w", encoding="utf-8") as out:
        for i, row in enumerate(values):
            q, d = divmod(i, per_query)
            out.write(json.dumps({"query_id": f"q{q}", "doc_id": f"d{q}_{d}", "ratings": row}))
            out.write("\n")
    questions = folder / "questions.jsonl"
    with questions.open("w", encoding="utf-8") as out:
        for q in range((lines + per_query - 1) // per_query):
            texts = [f"sub-question {k} of query {q}?" for k in range(ratings)]
            out.write(json.dumps({"query_id": f"q{q}", "questions": texts}) + "\n")
    return judgments, questions


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=500_000)
    ap.add_argument("--ratings", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        judgments, questions = write_files(Path(tmp), args.lines, args.ratings)
        size = judgments.stat().st_size / 1e6
        print(f"{args.lines:,} lines × {args.ratings} ratings ({size:.0f} MB)")
        text = judgments.read_text(encoding="utf-8")
        parse = best(lambda: [json.loads(x) for x in text.splitlines()], args.repeat)
        print(f"json.loads of every line alone     {parse:7.3f} s")
        read = best(lambda: read_judgments(judgments), args.repeat)
        print(f"read_judgments                     {read:7.3f} s")
        qmap = read_questions(questions)
        with_q = best(lambda: read_judgments(judgments, questions=qmap), args.repeat)
        print(f"read_judgments, questions given    {with_q:7.3f} s")
        rq = best(lambda: read_questions(questions), args.repeat)
        print(f"read_questions ({len(qmap):,} queries)     {rq:7.3f} s")


if __name__ == "__main__":
    main()
