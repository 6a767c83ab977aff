"""How many labels per topic a learned judge needs: agreement with the held-back labels of the
example collection, pooled and per topic, for k labels per topic.

python benchmarks/learned_judge_curve.py [--per-topic 8 16 24 32] [--draws 5]

For each k and each draw (seeded), every topic's labels are shuffled; its first k train the
judge (per topic: every topic gets an adapter), the rest are graded by it. Printed: the mean
over draws of κ quadratic, unweighted κ, ordinal α and exact agreement on the held-back
labels. The example's topics hold 32 to 50 labels, so k stops at 32; a study at 64 and 128
needs a larger collection with human labels.
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from ragmeter.data import EXAMPLE_DIR
from ragmeter.io.judgments import read_corpus
from ragmeter.io.readers import read_qrels
from ragmeter.judges.learned import fit_model, pair_features
from ragmeter.judges.learning import agreement_figures, read_training_set


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-topic", type=int, nargs="+", default=[8, 16, 24, 32])
    parser.add_argument("--draws", type=int, default=5)
    args = parser.parse_args()
    data = read_training_set(
        read_qrels(EXAMPLE_DIR / "qrels.txt").to_dict(),
        read_corpus(EXAMPLE_DIR / "queries.jsonl"),
        read_corpus(EXAMPLE_DIR / "corpus.jsonl"),
        source="qrels.txt",
    )
    x = pair_features(list(data.texts))
    y = np.asarray(data.grades)
    topics = [q for q, _ in data.pairs]
    queries = [q for q, _ in data.texts]
    rows: dict[str, list[int]] = {}
    for i, t in enumerate(topics):
        rows.setdefault(t, []).append(i)
    print(f"{'k':>3} {'model':<9} {'κ quad':>7} {'κ':>6} {'ord. α':>7} {'exact':>6}")
    for k in args.per_topic:
        for per_topic in (False, True):
            figures = []
            for draw in range(args.draws):
                train, test = [], []
                for t, members in rows.items():
                    shuffled = list(members)
                    random.Random(f"{draw}:{t}").shuffle(shuffled)
                    train += shuffled[:k]
                    test += shuffled[k:]
                model = fit_model(
                    x[train],
                    y[train].tolist(),
                    [topics[i] for i in train],
                    [queries[i] for i in train],
                    per_topic=per_topic,
                    min_labels=k,
                    scale=data.scale,
                )
                predicted = np.asarray(model.grades(x[test], [queries[i] for i in test]))
                figures.append(agreement_figures(y[test], predicted, data.scale))
            mean = {key: float(np.mean([f[key] for f in figures])) for key in figures[0]}
            name = "per-topic" if per_topic else "pooled"
            print(
                f"{k:>3} {name:<9} {mean['kappa_quadratic']:>7.3f} {mean['kappa']:>6.3f} "
                f"{mean['alpha_ordinal']:>7.3f} {mean['accuracy']:>6.3f}"
            )


if __name__ == "__main__":
    main()
