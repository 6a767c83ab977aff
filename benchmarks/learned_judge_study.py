"""A judge from your labels, studied: with k human labels per topic, how well do a learned
judge's grades agree with the held-back human labels, and do the systems rank as they do
under the full human labels?

python benchmarks/learned_judge_study.py [--per-topic 8 16 24 32] [--draws 10]
    [--resamples 200] [--measure ndcg@10] [--json out.json]

Data: ragmeter's bundled example collection (30 topics, 1,233 hand-graded pairs, 32 to 50
per topic, grades 1..5). No public collection with human labels *and* passage texts ships
in a package this project can install (docs/learned-judge.md, "64 and 128 labels per topic:
blocked on data", says what was looked at), so k stops at 32 here; 64 and 128 are not
measured.

Systems (all built offline with ragmeter's own baselines, depth 100): BM25 with three
(k1, b) settings, BM25 without stop words, dense all-MiniLM-L6-v2, reciprocal rank fusion
of BM25 and dense (k = 60 and k = 10), CombSUM and CombMNZ of the two (min-max), and MMR
over the k = 60 fusion — 10 runs. The example's labels pool the demo's four systems'
top 20 only, so the other runs meet unjudged passages; they count as not relevant under
every label set alike.

For each k and draw (seeded by draw and topic), every topic's labels are shuffled; the
first k are "yours", the rest are held back. Four label sets are scored against the full
human qrels:

* ``k human``: your k labels alone (the held-back pairs unjudged);
* ``+ pooled`` / ``+ per-topic``: your k labels, and the held-back pairs graded by the
  learned judge fitted on them (what ``judge relevance --learned --holes`` gives);
  per-topic gives every topic an adapter (``--min-labels k``);
* ``+ offline``: your k labels, and the held-back pairs graded by the offline judge's
  fixed thresholds (:func:`ragmeter.judges.offline.grade_from_cosine`, tuned on this very
  collection; no labels needed) on the same MiniLM cosine the learned judge sees.

The example ships no LLM judge's labels, so none stand beside these.

Agreement (κ quadratic, ordinal α) is on the held-back pairs only; leaderboard agreement
(Kendall τ-b, τ_AP with the human ranking as truth) is ``ragmeter agreement``'s
(:func:`ragmeter.analysis.leaderboard.leaderboard_agreement`) on ``--measure`` at the
demo's relevance level (grade ≥ 3). Each figure is the mean over draws; the bracket is
the 95 % topic-bootstrap interval (``--resamples`` draws of whole topics) averaged over
draws, and ``τ-b, draws`` the lowest and highest τ-b of a single draw.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.analysis.leaderboard import leaderboard_agreement
from ragmeter.core.data import Qrels, Run
from ragmeter.data import EXAMPLE_DIR
from ragmeter.evaluation import evaluate
from ragmeter.io.judgments import read_corpus
from ragmeter.io.readers import read_qrels
from ragmeter.judges.learned import fit_model, pair_features
from ragmeter.judges.learning import read_training_set, validation_figures
from ragmeter.judges.offline import grade_from_cosine

DEPTH = 100
REL_LEVEL = 3  # the demo's: relevant ⇔ grade ≥ 3, nDCG gains zero below
LABEL_SETS = ("k human", "+ pooled", "+ per-topic", "+ offline")
#: the judge that grades the held-back pairs of each label set but the first
JUDGES = {
    "+ pooled": "learned, pooled",
    "+ per-topic": "learned, per-topic",
    "+ offline": "offline",
}


def build_systems(corpus: Any, queries: Any) -> dict[str, Run]:
    """The 10 runs (see the module doc), from ragmeter's own retrievers and fusion."""
    from ragmeter.pipeline.baselines import (
        BM25Retriever,
        DenseRetriever,
        Texts,
        mmr_rerank,
        reciprocal_rank_fusion,
    )
    from ragmeter.pipeline.fusion import fuse

    docs = Texts.from_corpus(corpus)
    qs = Texts.from_corpus(queries)
    runs: dict[str, Run] = {}
    for name, k1, b in (("bm25", 1.5, 0.75), ("bm25-k0.9-b0.4", 0.9, 0.4), ("bm25-b0", 1.2, 0.0)):
        runs[name] = BM25Retriever(docs, k1=k1, b=b).search(qs, depth=DEPTH, name=name)
    runs["bm25-nostop"] = BM25Retriever(docs, stopwords=None).search(
        qs, depth=DEPTH, name="bm25-nostop"
    )
    dense_index = DenseRetriever(docs)
    query_rows = dense_index.encode(qs.texts, "queries")
    runs["dense"] = dense_index.search(qs, depth=DEPTH, name="dense", query_embeddings=query_rows)
    pair = [runs["bm25"], runs["dense"]]
    runs["rrf60"] = reciprocal_rank_fusion(pair, k=60, depth=DEPTH, name="rrf60")
    runs["rrf10"] = reciprocal_rank_fusion(pair, k=10, depth=DEPTH, name="rrf10")
    runs["combsum"] = fuse(pair, method="combsum", depth=DEPTH, name="combsum")
    runs["combmnz"] = fuse(pair, method="combmnz", depth=DEPTH, name="combmnz")
    runs["rrf60+mmr"] = mmr_rerank(
        runs["rrf60"],
        qs,
        dense_index,
        candidates=50,
        name="rrf60+mmr",
        query_embeddings=dict(zip(qs.ids, query_rows, strict=True)),
    )
    return runs


def as_qrels(pairs: Sequence[tuple[str, str]], grades: Sequence[int], name: str) -> Qrels:
    table: dict[str, dict[str, int]] = {}
    for (q, d), g in zip(pairs, grades, strict=True):
        table.setdefault(q, {})[d] = int(g)
    return Qrels.from_dict(table, name=name)


def split(rows: Mapping[str, list[int]], k: int, draw: int) -> tuple[list[int], list[int]]:
    """Each topic's rows shuffled (seeded by draw and topic): its first k, and the rest."""
    train: list[int] = []
    test: list[int] = []
    for topic, members in rows.items():
        shuffled = list(members)
        random.Random(f"{draw}:{topic}").shuffle(shuffled)
        train += shuffled[:k]
        test += shuffled[k:]
    return train, test


def mean_figure(values: list[tuple[float, float, float]]) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(np.nanmean(arr[:, 0])),
        "low": float(np.nanmean(arr[:, 1])),
        "high": float(np.nanmean(arr[:, 2])),
        "min": float(np.nanmin(arr[:, 0])),
        "max": float(np.nanmax(arr[:, 0])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-topic", type=int, nargs="+", default=[8, 16, 24, 32])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--measure", default="ndcg@10")
    parser.add_argument("--json", help="also write every figure to this JSON file")
    args = parser.parse_args()
    started = time.perf_counter()

    human = read_qrels(EXAMPLE_DIR / "qrels.txt")
    queries = read_corpus(EXAMPLE_DIR / "queries.jsonl")
    corpus = read_corpus(EXAMPLE_DIR / "corpus.jsonl")
    data = read_training_set(human.to_dict(), queries, corpus, source="qrels.txt")
    x = pair_features(list(data.texts))
    y = np.asarray(data.grades, dtype=np.int64)
    offline = np.asarray([grade_from_cosine(float(c)) for c in x[:, 0]], dtype=np.int64)
    topics = [q for q, _ in data.pairs]
    query_texts = [q for q, _ in data.texts]
    rows: dict[str, list[int]] = {}
    for i, t in enumerate(topics):
        rows.setdefault(t, []).append(i)
    runs = build_systems(corpus, queries)
    truth = evaluate(runs, human, [args.measure], rel_level=REL_LEVEL)
    print(
        f"{len(data)} human labels of {len(rows)} topics "
        f"({min(map(len, rows.values()))}..{max(map(len, rows.values()))} per topic), "
        f"{len(runs)} systems, {args.draws} draws, {args.measure} at grade ≥ {REL_LEVEL}"
    )

    results: list[dict[str, Any]] = []
    for k in args.per_topic:
        acc: dict[str, dict[str, list[tuple[float, float, float]]]] = {
            name: {} for name in LABEL_SETS
        }
        for draw in range(args.draws):
            train, test = split(rows, k, draw)
            graded: dict[str, np.ndarray | None] = {"k human": None, "+ offline": offline[test]}
            for per_topic in (False, True):
                model = fit_model(
                    x[train],
                    y[train].tolist(),
                    [topics[i] for i in train],
                    [query_texts[i] for i in train],
                    per_topic=per_topic,
                    min_labels=k,
                    scale=data.scale,
                )
                name = "+ per-topic" if per_topic else "+ pooled"
                graded[name] = np.asarray(
                    model.grades(x[test], [query_texts[i] for i in test]), dtype=np.int64
                )
            train_pairs = [data.pairs[i] for i in train]
            for name in LABEL_SETS:
                predicted = graded[name]
                if predicted is None:
                    qrels = as_qrels(train_pairs, y[train].tolist(), name)
                else:
                    qrels = as_qrels(
                        train_pairs + [data.pairs[i] for i in test],
                        y[train].tolist() + predicted.tolist(),
                        name,
                    )
                    figures = validation_figures(
                        y[test].tolist(),
                        predicted.tolist(),
                        [topics[i] for i in test],
                        data.scale,
                        resamples=args.resamples,
                        seed=draw,
                    )
                    for key in ("kappa_quadratic", "alpha_ordinal"):
                        f = figures[key]
                        acc[name].setdefault(key, []).append((f.value, f.low, f.high))
                ev = evaluate(runs, qrels, [args.measure], rel_level=REL_LEVEL)
                board = leaderboard_agreement(truth, ev, resamples=args.resamples, seed=draw)
                m = board.measures[0]
                acc[name].setdefault("kendall_tau", []).append(
                    (m.kendall_tau.statistic, m.ci["kendall_tau"].low, m.ci["kendall_tau"].high)
                )
                acc[name].setdefault("tau_ap", []).append(
                    (m.tau_ap.value, m.ci["tau_ap"].low, m.ci["tau_ap"].high)
                )
        for name in LABEL_SETS:
            results.append(
                {"k": k, "labels": name}
                | {key: mean_figure(values) for key, values in acc[name].items()}
            )
    print_table(results)
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


def _cell(fig: dict[str, float]) -> str:
    return f"{fig['mean']:.2f} [{fig['low']:.2f}, {fig['high']:.2f}]"


def print_table(results: list[dict[str, Any]]) -> None:
    """The two tables of docs/learned-judge.md: agreement on the held-back pairs, then the
    leaderboard's (each line within 80 columns)."""
    print("\n|  k | judge of the held-back | κ quadratic         | ordinal α           |")
    print("|---:|------------------------|---------------------|---------------------|")
    for r in results:
        if "kappa_quadratic" in r:
            judge = JUDGES[r["labels"]]
            print(
                f"| {r['k']:>2} | {judge:<22} | {_cell(r['kappa_quadratic']):<19} | "
                f"{_cell(r['alpha_ordinal']):<19} |"
            )
    print("\n|  k | labels      | τ-b                | τ_AP               | τ-b, draws  |")
    print("|---:|-------------|--------------------|--------------------|-------------|")
    for r in results:
        tau = r["kendall_tau"]
        spread = f"{tau['min']:.2f}..{tau['max']:.2f}"
        print(
            f"| {r['k']:>2} | {r['labels']:<11} | {_cell(tau):<18} | "
            f"{_cell(r['tau_ap']):<18} | {spread:<11} |"
        )


if __name__ == "__main__":
    main()
