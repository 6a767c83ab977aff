"""Does asking for the learned judge's least certain pairs teach it more than random pairs?
On the example collection, the agreement with held-back labels after each round of labels.

python benchmarks/learned_active.py [--draws 10] [--start 8] [--rounds 3] [--per-round 4]

For each draw (seeded), every topic's labels are shuffled: 40 % are held back (never asked
for, the test set), the rest are the pool the questions come from. The judge (pooled: with
at most 50 labels a topic gets no adapter) is fitted on the first ``--start`` pool labels of
each topic, then ``--rounds`` times each topic gets ``--per-round`` more labels of its pool —
the least certain pairs (``ragmeter sample --strategy active --learned``'s
:func:`~ragmeter.analysis.label_sampling.least_certain_pairs`, the pool as the candidates) or
a uniform draw — and the judge is fitted again. Printed per round: the mean over draws of κ
quadratic and ordinal α on the held-back labels for each design, and the mean paired
difference (least certain − random) ± its standard error over draws.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path

import numpy as np

from ragmeter.analysis.label_sampling import least_certain_pairs
from ragmeter.data import EXAMPLE_DIR
from ragmeter.io.judgments import read_corpus
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.judges.learned import fit_model, grades_from_cuts, pair_features
from ragmeter.judges.learning import agreement_figures, read_training_set

Labels = dict[str, dict[str, int]]


class Memo:
    """MiniLM with each text embedded once (the study refits many times on the same texts)."""

    dimension = 384

    def __init__(self) -> None:
        from ragmeter.pipeline.embeddings import MiniLMEncoder

        self.encoder = MiniLMEncoder()
        self.seen: dict[str, np.ndarray] = {}

    def encode(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if new:
            self.seen.update(zip(new, np.asarray(self.encoder.encode(new)), strict=True))
        return np.asarray([self.seen[t] for t in texts])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--start", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-round", type=int, default=4)
    args = parser.parse_args()
    qrels = read_qrels(EXAMPLE_DIR / "qrels.txt").to_dict()
    queries = read_corpus(EXAMPLE_DIR / "queries.jsonl")
    corpus = read_corpus(EXAMPLE_DIR / "corpus.jsonl")
    data = read_training_set(qrels, queries, corpus, source="qrels.txt")
    encoder = Memo()
    x = pair_features(list(data.texts), encoder=encoder)  # type: ignore[arg-type]
    row = {p: i for i, p in enumerate(data.pairs)}
    results: dict[str, list[list[dict[str, float]]]] = {"least certain": [], "random": []}
    for draw in range(args.draws):
        test, pool = split(qrels, draw)
        run = pool_run(pool)
        for design in results:
            labels = {q: {d: pool[q][d] for d in ds[: args.start]} for q, ds in order(pool, draw)}
            rng = random.Random(f"ask:{draw}")
            curve = []
            for r in range(args.rounds + 1):
                model = fit(x, data, row, labels)
                curve.append(score(model, x, data, row, test))
                if r == args.rounds:
                    break
                if design == "least certain":
                    asked = least_certain_pairs(
                        model, [run], labels, queries, corpus, per_topic=args.per_round,
                        depth=10_000, seed=draw, encoder=encoder,  # type: ignore[arg-type]
                    )  # fmt: skip
                    new = [(e.query_id, d) for e in asked.entries for d in e.docs]
                else:
                    new = []
                    for q, docs in pool.items():
                        todo = sorted(d for d in docs if d not in labels.get(q, {}))
                        new += [(q, d) for d in rng.sample(todo, min(args.per_round, len(todo)))]
                for q, d in new:
                    labels.setdefault(q, {})[d] = pool[q][d]
            results[design].append(curve)
    report(results, args)


def split(qrels: Labels, draw: int) -> tuple[Labels, Labels]:
    """Per topic, 40 % of the labels held back (the test set) and the rest (the pool)."""
    test: Labels = {}
    pool: Labels = {}
    for q, docs in qrels.items():
        ids = sorted(docs)
        random.Random(f"split:{draw}:{q}").shuffle(ids)
        cut = int(0.4 * len(ids))
        test[q] = {d: docs[d] for d in ids[:cut]}
        pool[q] = {d: docs[d] for d in ids[cut:]}
    return test, pool


def order(pool: Labels, draw: int) -> list[tuple[str, list[str]]]:
    out = []
    for q, docs in pool.items():
        ids = sorted(docs)
        random.Random(f"start:{draw}:{q}").shuffle(ids)
        out.append((q, ids))
    return out


def pool_run(pool: Labels) -> object:
    """The pool's pairs as a run: the candidates of the least certain design."""
    path = Path(tempfile.mkdtemp()) / "pool.txt"
    with path.open("w") as f:
        for q, docs in pool.items():
            for rank, d in enumerate(sorted(docs), start=1):
                f.write(f"{q} Q0 {d} {rank} {1000 - rank} pool\n")
    return read_run(path)


def fit(x: np.ndarray, data: object, row: dict[tuple[str, str], int], labels: Labels) -> object:
    idx = [row[(q, d)] for q, docs in sorted(labels.items()) for d in sorted(docs)]
    grades = [labels[q][d] for q, docs in sorted(labels.items()) for d in sorted(docs)]
    texts = [data.texts[i][0] for i in idx]  # type: ignore[attr-defined]
    topics = [data.pairs[i][0] for i in idx]  # type: ignore[attr-defined]
    return fit_model(x[idx], grades, topics, texts, per_topic=False, scale=(1, 5))


def score(
    model: object, x: np.ndarray, data: object, row: dict[tuple[str, str], int], test: Labels
) -> dict[str, float]:
    idx = [row[(q, d)] for q, docs in test.items() for d in docs]
    truth = np.array([g for docs in test.values() for g in docs.values()], dtype=np.int64)
    texts = [data.texts[i][0] for i in idx]  # type: ignore[attr-defined]
    predicted = grades_from_cuts(model.scores(x[idx], texts), model.cuts, 1)  # type: ignore[attr-defined]
    return agreement_figures(truth, np.asarray(predicted, dtype=np.int64), (1, 5))


def report(results: dict[str, list[list[dict[str, float]]]], args: argparse.Namespace) -> None:
    print(f"{args.draws} draws; {args.start} labels per topic, then +{args.per_round} per round")
    print(f"{'round':>5} {'labels/topic':>12} {'measure':<13} {'least certain':>13} "
          f"{'random':>7} {'difference ± se':>16}")  # fmt: skip
    for r in range(args.rounds + 1):
        for key, name in (("kappa_quadratic", "κ quadratic"), ("alpha_ordinal", "ordinal α")):
            a = [c[r][key] for c in results["least certain"]]
            b = [c[r][key] for c in results["random"]]
            diff = [u - v for u, v in zip(a, b, strict=True)]
            se = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else float("nan")
            print(
                f"{r:>5} {args.start + r * args.per_round:>12} {name:<13} "
                f"{statistics.mean(a):>13.3f} {statistics.mean(b):>7.3f} "
                f"{statistics.mean(diff):>+8.3f} ± {se:.3f}"
            )


if __name__ == "__main__":
    main()
