"""Seeded synthetic TREC run + qrels at a given scale.

``N`` queries × ``depth`` retrieved docs (default 100), about 10 judged docs per query with
grades 0–3, a doc vocabulary of ``50 × N`` ids. Ids look like real ones (``q123``, ``d4567``);
queries appear in numeric order (so *not* in byte order: ``q10`` comes before ``q2`` in byte
order), docs in rank order with scores descending, about 3% of scores tied with the previous
doc. Half of each query's judgments come from its top 20, half from the whole collection.

Written with numpy + Arrow string kernels, one write per block of queries — no Python loop per
line. Usage::

    python benchmarks/generate.py --queries 100000 [--seed 0] [--out benchmarks/data]

writes ``run-100k.txt`` and ``qrels-100k.txt``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

BLOCK = 20_000  # queries per write


def label(n: int) -> str:
    """1000 → '1k', 100000 → '100k', 1000000 → '1m'."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def _first_occurrence(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Mask of the first occurrence of each value within each row of a 2-d array."""
    order = np.argsort(rows, axis=1, kind="stable")
    srt = np.take_along_axis(rows, order, axis=1)
    dup_sorted = np.zeros(rows.shape, dtype=bool)
    dup_sorted[:, 1:] = srt[:, 1:] == srt[:, :-1]
    mask = np.empty(rows.shape, dtype=bool)
    np.put_along_axis(mask, order, ~dup_sorted, axis=1)
    return mask


def _ids(prefix: str, values: npt.NDArray[np.int64]) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(values), pa.string()), "")


def _write_lines(fh: object, columns: list[pa.Array | str]) -> None:
    """Join ``columns`` with spaces, one line per row, and write the bytes in one call."""
    lines = pc.binary_join_element_wise(*columns, " ")
    lines = pc.binary_join_element_wise(lines, "\n", "")
    lines = lines.cast(pa.large_string())
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
    data = lines.buffers()[2]
    start, end = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    fh.write(memoryview(data)[start:end])  # type: ignore[attr-defined]


def generate(
    n_queries: int, out: Path, *, seed: int = 0, depth: int = 100, judged: int = 10
) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    vocab = 50 * n_queries
    out.mkdir(parents=True, exist_ok=True)
    run_path = out / f"run-{label(n_queries)}.txt"
    qrels_path = out / f"qrels-{label(n_queries)}.txt"
    with run_path.open("wb") as run_fh, qrels_path.open("wb") as qrels_fh:
        for lo in range(0, n_queries, BLOCK):
            hi = min(n_queries, lo + BLOCK)
            nq = hi - lo
            # Retrieved docs: distinct per query.
            cand = rng.integers(0, vocab, size=(nq, depth + 8), dtype=np.int64)
            keep = _first_occurrence(cand)
            keep &= np.cumsum(keep, axis=1) <= depth
            counts = keep.sum(axis=1)
            docs = cand[keep]
            qidx = np.repeat(np.arange(lo, hi, dtype=np.int64), counts)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            rank = np.arange(len(docs), dtype=np.int64) - np.repeat(starts, counts) + 1
            # Scores: descending within each query, ~3% tied with the previous doc.
            step = rng.exponential(0.05, size=len(docs)).round(4)
            step[rng.random(len(docs)) < 0.03] = 0.0
            step[starts] = 0.0
            top = np.repeat(rng.uniform(15.0, 25.0, size=nq).round(4), counts)
            csum = np.cumsum(step)
            score = (top - (csum - np.repeat(csum[starts], counts))).round(4)
            _write_lines(
                run_fh,
                [
                    _ids("q", qidx),
                    "Q0",
                    _ids("d", docs),
                    pc.cast(pa.array(rank), pa.string()),
                    pc.cast(pa.array(score), pa.string()),
                    "bench",
                ],
            )
            # Judgments: half from each query's top 20, half from the collection, distinct.
            half = judged // 2
            top_pos = np.argsort(rng.random((nq, 20)), axis=1)[:, :half]
            from_run = cand[
                np.arange(nq)[:, None], _top_columns(keep, 20)[np.arange(nq)[:, None], top_pos]
            ]
            from_pool = rng.integers(0, vocab, size=(nq, judged - half), dtype=np.int64)
            jd = np.concatenate([from_run, from_pool], axis=1)
            jkeep = _first_occurrence(jd)
            grade_run = rng.choice(4, size=from_run.shape, p=[0.35, 0.3, 0.2, 0.15])
            grade_pool = rng.choice(4, size=from_pool.shape, p=[0.8, 0.12, 0.05, 0.03])
            grades = np.concatenate([grade_run, grade_pool], axis=1)
            # Judged docs in a random order within the query.
            shuffle = np.argsort(rng.random(jd.shape), axis=1)
            jd = np.take_along_axis(jd, shuffle, axis=1)
            jkeep = np.take_along_axis(jkeep, shuffle, axis=1)
            grades = np.take_along_axis(grades, shuffle, axis=1)
            jq = np.repeat(np.arange(lo, hi, dtype=np.int64), jkeep.sum(axis=1))
            _write_lines(
                qrels_fh,
                [
                    _ids("q", jq),
                    "0",
                    _ids("d", jd[jkeep]),
                    pc.cast(pa.array(grades[jkeep].astype(np.int64)), pa.string()),
                ],
            )
    return run_path, qrels_path


def _top_columns(keep: npt.NDArray[np.bool_], k: int) -> npt.NDArray[np.int64]:
    """Column index (in the candidate matrix) of each row's first ``k`` kept entries."""
    order = np.argsort(~keep, axis=1, kind="stable")
    return order[:, :k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", "-n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    args = ap.parse_args()
    t0 = time.perf_counter()
    run_path, qrels_path = generate(args.queries, args.out, seed=args.seed, depth=args.depth)
    dt = time.perf_counter() - t0
    print(f"{run_path} ({run_path.stat().st_size / 1e6:.0f} MB), {qrels_path} in {dt:.1f}s")


if __name__ == "__main__":
    main()
