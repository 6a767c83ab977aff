"""Random TREC runs grouped by query, and their qrels, for the tests that compare a run
evaluated in blocks (streamed, merged) with the same run evaluated whole."""

from __future__ import annotations

import random
from pathlib import Path


def random_trec_files(
    seed: int,
    tmp: Path,
    *,
    comments: bool = False,
    max_queries: int = 12,
    ragged_end: bool = False,
) -> tuple[Path, Path]:
    """A random run grouped by query (in a random query order) and its qrels, written to
    ``tmp``: ties, repeated docs, judged queries the run lacks, run queries without
    judgments, negative grades; ``comments`` adds comment lines, ``ragged_end`` sometimes
    leaves the run's last line without its newline."""
    rng = random.Random(seed)
    n_q = rng.randint(0, max_queries)
    queries = [f"q{i}" for i in range(n_q)]
    judged = [q for q in queries if rng.random() < 0.8] + [
        f"x{i}" for i in range(rng.randint(0, 3))
    ]
    judged = judged or ["x0"]  # qrels without a data line are an error either way
    run_q = [q for q in queries if rng.random() < 0.85]
    rng.shuffle(run_q)
    lines = []
    for q in run_q:
        for r in range(rng.randint(1, 15)):
            doc = f"d{rng.randint(0, 20)}"  # repeats: duplicate rows
            score = rng.choice([1.0, 2.0, round(rng.uniform(0, 5), 2)])  # ties
            lines.append(f"{q} Q0 {doc} {r + 1} {score} tag{seed % 3}")
            if comments and rng.random() < 0.05:
                lines.append("# a comment")
    qrel_lines = [
        f"{q} 0 d{d} {rng.choice([-1, 0, 0, 1, 2, 3])}"
        for q in judged
        for d in rng.sample(range(25), rng.randint(1, 8))
    ]
    run_path, qrels_path = tmp / f"run{seed}.txt", tmp / f"qrels{seed}.txt"
    end = "\n" if lines and (not ragged_end or rng.random() < 0.8) else ""
    run_path.write_text("\n".join(lines) + end)
    qrels_path.write_text("\n".join(qrel_lines) + "\n")
    return run_path, qrels_path
