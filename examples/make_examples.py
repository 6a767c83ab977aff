"""Write the small example collection shipped with ragmeter (deterministic, seeded).

Twelve queries over a collection of 400 documents: graded judgments (0–3, TREC style) for
about 25 documents per query, and two runs of depth 50 — a lexical-looking one ("bm25") that
finds fewer relevant documents but ranks its best ones high, and a dense-looking one
("dense") with better recall and noisier tops. Run `python examples/make_examples.py` to
regenerate the files beside this script.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N_QUERIES = 12
N_DOCS = 400
JUDGED = 25
DEPTH = 50


def _doc(i: int) -> str:
    return f"doc-{i:03d}"


def main() -> None:
    rng = np.random.default_rng(20261122)
    qrels_lines = []
    runs: dict[str, list[str]] = {"bm25": [], "dense": []}
    for q in range(1, N_QUERIES + 1):
        qid = f"q{q:02d}"
        judged = rng.choice(N_DOCS, JUDGED, replace=False)
        grades = rng.choice([0, 0, 0, 1, 1, 2, 3], JUDGED)
        for d, g in zip(judged, grades, strict=True):
            qrels_lines.append(f"{qid} 0 {_doc(int(d))} {int(g)}\n")
        gain = dict(zip(judged.tolist(), grades.tolist(), strict=True))
        for name, (signal, noise) in {"bm25": (0.9, 1.0), "dense": (0.5, 0.8)}.items():
            scores = rng.normal(0.0, noise, N_DOCS)
            for d, g in gain.items():
                scores[d] += signal * g + (0.6 if name == "dense" and g > 0 else 0.0)
            top = np.argsort(-scores, kind="stable")[:DEPTH]
            for rank, d in enumerate(top, start=1):
                runs[name].append(f"{qid} Q0 {_doc(int(d))} {rank} {scores[d] + 10:.4f} {name}\n")
    (HERE / "qrels.txt").write_text("".join(qrels_lines), encoding="utf-8")
    for name, lines in runs.items():
        (HERE / f"run_{name}.txt").write_text("".join(lines), encoding="utf-8")
    write_lengths()


def write_lengths() -> None:
    """``passage_lengths.tsv``: a token length (40–400) per document, for token budgets
    (``ra_nwg@512t --corpus examples/passage_lengths.tsv``); its own seed, so the other
    files do not change."""
    rng = np.random.default_rng(512)
    lengths = rng.integers(40, 401, N_DOCS)
    rows = "".join(f"{_doc(i)}\t{int(n)}\n" for i, n in enumerate(lengths))
    (HERE / "passage_lengths.tsv").write_text("id\tlength\n" + rows, encoding="utf-8")


if __name__ == "__main__":
    main()
