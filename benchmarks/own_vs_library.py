"""Where ragmeter keeps its own code: timed side by side with the library that does the same.

python benchmarks/own_vs_library.py [--only randomization,bootstrap,trec,bm25]

* randomization: ``randomization_pvalues`` vs ``scipy.stats.permutation_test`` (paired,
  sign flips), 200 queries, 10,000 permutations, 5 measures; and an exact case (12 queries,
  2^12 sign vectors) whose p-values must be identical.
* bootstrap: ``bootstrap_means`` (one draw of indices shared by every measure) + percentile
  interval vs ``scipy.stats.bootstrap`` (percentile, one measure at a time), 20 measures ×
  500 queries, 10,000 replicates.
* trec: ``read_trec_run`` on 1,000,000 lines with the C reader vs the pure pyarrow path
  (``RAGMETER_PURE=1`` in a subprocess).
* bm25: ``BM25Retriever.search`` (bm25s's scores, our top-k) vs bm25s's own ``retrieve``,
  200 queries × 20,000 documents, top 100, the same scores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def best(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def randomization() -> None:
    from scipy import stats

    from ragmeter.stats.paired import randomization_pvalues

    rng = np.random.default_rng(0)
    d = rng.normal(0.01, 0.1, size=(200, 5))

    def ours() -> Any:
        return randomization_pvalues(d, permutations=10_000, seed=0)[0]

    def theirs() -> Any:
        return [
            stats.permutation_test(
                (d[:, j], np.zeros(200)),
                lambda x, y, axis: np.mean(x - y, axis=axis),
                permutation_type="samples",
                n_resamples=10_000,
                vectorized=True,
                random_state=0,
            ).pvalue
            for j in range(5)
        ]

    t_ours, _ = best(ours)
    t_theirs, _ = best(theirs, 1)
    print(
        f"randomization, 200 q × 5 measures × 10,000: ours {t_ours:.3f} s, "
        f"scipy.stats.permutation_test {t_theirs:.3f} s ({t_theirs / t_ours:.0f}×)"
    )
    small = rng.normal(0.02, 0.1, size=(12, 5))
    exact_ours = randomization_pvalues(small, permutations=10_000)[0]
    exact_scipy = [
        stats.permutation_test(
            (small[:, j], np.zeros(12)),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            n_resamples=np.inf,
            vectorized=True,
        ).pvalue
        for j in range(5)
    ]
    same = np.array_equal(exact_ours, np.asarray(exact_scipy))
    print(f"  exact (12 queries, 4,096 sign vectors): identical p-values: {same}")


def bootstrap() -> None:
    from scipy import stats

    from ragmeter.stats.bootstrap import bootstrap_means, percentile_interval

    rng = np.random.default_rng(0)
    v = rng.random((500, 20))

    def ours() -> Any:
        return percentile_interval(bootstrap_means(v, replicates=10_000, seed=0), 0.95)

    def theirs() -> Any:
        return [
            stats.bootstrap(
                (v[:, j],), np.mean, n_resamples=10_000, method="percentile", random_state=0
            ).confidence_interval
            for j in range(20)
        ]

    t_ours, _ = best(ours)
    t_theirs, _ = best(theirs, 1)
    print(
        f"bootstrap, 500 q × 20 measures × 10,000: ours {t_ours:.3f} s, "
        f"scipy.stats.bootstrap {t_theirs:.3f} s ({t_theirs / t_ours:.0f}×)"
    )


def trec() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.txt"
        rng = np.random.default_rng(0)
        with path.open("w") as out:
            for q in range(1_000):
                scores = np.sort(rng.random(1_000))[::-1]
                out.write(
                    "".join(
                        f"q{q} Q0 doc{rng.integers(10**6)} {r + 1} {s:.6f} run\n"
                        for r, s in enumerate(scores)
                    )
                )
        code = (
            "import time, sys; from ragmeter.io.trec import read_trec_run; "
            "from ragmeter import _accel; ts = []\n"
            "for _ in range(3):\n t = time.perf_counter(); read_trec_run(sys.argv[1]);"
            " ts.append(time.perf_counter() - t)\n"
            "print(min(ts), _accel.native is not None)"
        )
        times = {}
        for label, env in (("C", {}), ("pyarrow", {"RAGMETER_PURE": "1"})):
            out = subprocess.run(
                [sys.executable, "-c", code, str(path)],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            times[label] = float(out[0])
        print(
            f"TREC run, 1,000,000 lines: C reader {times['C']:.3f} s, pyarrow path "
            f"{times['pyarrow']:.3f} s ({times['pyarrow'] / times['C']:.1f}×)"
        )


def bm25() -> None:
    import bm25s

    from ragmeter.pipeline.baselines import BM25Retriever

    rng = np.random.default_rng(0)

    def texts(n: int, length: int) -> list[str]:
        words = np.minimum(rng.zipf(1.3, size=(n, length)), 20_000)
        return [" ".join(f"w{w}" for w in row) for row in words]

    corpus = texts(20_000, 40)
    queries = texts(200, 5)
    ours = BM25Retriever({f"d{i}": t for i, t in enumerate(corpus)}, stopwords=None)
    model = ours._model
    tokens = bm25s.tokenize(queries, stopwords=None, show_progress=False, return_ids=False)
    vocab = ours._vocab
    known = [[t for t in q if t in vocab] or ["w1"] for q in tokens]

    def our_topk() -> Any:
        # what search does per query once tokenized: bm25s's scores, an argpartition top-k
        out = []
        for q in known:
            row = np.asarray(model.get_scores(q), dtype=np.float64)
            top = np.argpartition(-row, 99)[:100]
            out.append(top[np.argsort(-row[top], kind="stable")])
        return out

    t_ours, _ = best(our_topk)
    t_theirs, _ = best(lambda: model.retrieve(known, k=100, show_progress=False, n_threads=1))
    t_search, _ = best(lambda: ours.search({f"q{i}": q for i, q in enumerate(queries)}, depth=100))
    print(
        f"BM25 top 100, 200 tokenized queries × 20,000 docs: ours {t_ours:.3f} s, bm25s "
        f"retrieve {t_theirs:.3f} s ({t_theirs / t_ours:.1f}×); whole search() with "
        f"tokenizing and the run: {t_search:.3f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="randomization,bootstrap,trec,bm25")
    args = ap.parse_args()
    for name in args.only.split(","):
        globals()[name]()


if __name__ == "__main__":
    main()
