"""chunking_evaluation's own benchmark scored by its own scorer and by ragmeter, side by side.

Needs a checkout of https://github.com/brandonstarxel/chunking_evaluation (MIT licence; give
its root with ``--checkout``). Its scorer is run as it is written: the functions and the two
scoring methods of ``evaluation_framework/base_evaluation.py`` are taken from that file's
syntax tree and executed (the module itself imports chromadb and OpenAI, which the scorer does
not need), on ``questions_df.csv`` read as ``BaseEvaluation`` reads it (pandas + json).

For each fixed-size chunking of the five corpora (characters, no overlap, ragmeter's
``chunk_corpus``), BM25 retrieves the top 5 chunks of each question (the benchmark's own
retrieval embeds with OpenAI or SentenceTransformers; any run serves to compare scorers).
Printed: each measure's mean by both, and the largest per-question difference.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from ragmeter import evaluate
from ragmeter.core.judgments import Corpus
from ragmeter.core.spans import SpanInputs
from ragmeter.io.spans import read_spans
from ragmeter.pipeline.baselines import BM25Retriever, Texts
from ragmeter.pipeline.chunking import chunk_corpus

DATA = Path("chunking_evaluation") / "evaluation_framework" / "general_evaluation_data"
SCORER = Path("chunking_evaluation") / "evaluation_framework" / "base_evaluation.py"
KEEP = {"sum_of_ranges", "union_ranges", "intersect_two_ranges", "difference"}
METHODS = {"_full_precision_score", "_scores_from_dataset_and_retrievals"}
K = 5


def their_scorer(checkout: Path) -> dict[str, Any]:
    """The pure functions and the two scoring methods of base_evaluation.py, executed."""
    tree = ast.parse((checkout / SCORER).read_text(encoding="utf-8"))
    body: list[ast.stmt] = [
        f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name in KEEP
    ]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "BaseEvaluation":
            body += [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name in METHODS]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(SCORER), "exec"), namespace)
    return namespace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checkout", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 400, 800])
    args = parser.parse_args()
    import pandas as pd

    data = args.checkout / DATA
    scorer = their_scorer(args.checkout)
    questions = pd.read_csv(data / "questions_df.csv")
    questions["references"] = questions["references"].apply(json.loads)
    corpus_ids = questions["corpus_id"].unique().tolist()
    texts = {}
    for corpus_id in corpus_ids:  # read as BaseEvaluation reads them (text mode)
        with open(data / "corpora" / f"{corpus_id}.md") as file:
            texts[corpus_id] = file.read()
    corpus = Corpus.from_dict(texts)
    spans = read_spans(data / "questions_df.csv", corpus=corpus)
    checked = "; ".join(spans.warnings) or "every reference matches its corpus"
    print(f"{len(questions)} questions, {len(spans)} spans; {checked}")
    query_texts = Texts(tuple(str(i) for i in range(len(questions))), tuple(questions["question"]))
    this = SimpleNamespace(questions_df=questions)
    for size in args.sizes:
        chunking = chunk_corpus(corpus, size=size)
        table = chunking.table
        metas = [
            {"start_index": int(s), "end_index": int(e), "corpus_id": str(d)}
            for d, s, e in zip(table.doc_ids, table.starts, table.ends, strict=True)
        ]
        where = dict(zip(table.chunk_ids.tolist(), metas, strict=True))
        run = BM25Retriever(Texts(tuple(table.chunk_ids.tolist()), chunking.texts)).search(
            query_texts, depth=K, name=f"fixed-{size}"
        )
        ranked = run.ranked()
        retrieved = [[where[c] for c in ranked.get(str(i), [])] for i in range(len(questions))]
        omega, _ = scorer["_full_precision_score"](this, metas)
        iou, recall, precision = scorer["_scores_from_dataset_and_retrievals"](
            this, retrieved, [K] * len(questions)
        )
        names = [f"span_iou@{K}", f"span_recall@{K}", f"span_precision@{K}", "span_precision_omega"]
        ours = evaluate(run, None, names, spans=SpanInputs(spans, table)).run
        order = [list(ours.query_ids).index(str(i)) for i in range(len(questions))]
        print(f"fixed {size} characters, {len(table)} chunks, BM25 top {K}:")
        for j, (name, theirs) in enumerate(
            zip(names, (iou, recall, precision, omega), strict=True)
        ):
            mine = ours.values[order, j]
            gap = float(np.max(np.abs(mine - np.array(theirs))))
            print(
                f"  {name:22} chunking_evaluation {np.mean(theirs):.6f}  ragmeter "
                f"{ours.aggregate(names[j]).value:.6f}  largest per-question gap {gap:.1e}"
            )


if __name__ == "__main__":
    main()
