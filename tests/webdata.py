"""A tiny collection for the web app's tests, written into a temporary folder.

Pools (depth 3), worked out by hand from the two runs and the qrels:

* q1: run A's top 3 is d1 d2 d3, run B's d4 d1 → best ranks d1:1, d4:1, d2:2, d3:3 → ordered
  by (best rank, id): d1 d4 d2 d3; the qrels judge d9, which no run retrieved → appended.
* q2: run A's top 3 is d5 d6.
"""

from __future__ import annotations

import json
from pathlib import Path

QUERIES = {"q1": "is a cat a good pet", "q2": "what do dogs eat"}
DOCS = {
    "d1": "Cats are popular pets that need little space.",
    "d2": "Cat food contains taurine.",
    "d3": "The cat sat on the mat.",
    "d4": "Many families keep a cat as a pet; cats are independent and clean.",
    "d5": "Dogs eat meat, grains and vegetables.",
    "d6": "Puppies need food several times a day.",
    "d9": "Lions are big cats.",
}
SUBQUESTIONS = {"q1": ["Are cats easy to keep?", "Do cats need much space?"]}
POOLS = {"q1": ["d1", "d4", "d2", "d3", "d9"], "q2": ["d5", "d6"]}


def write_collection(folder: Path) -> dict[str, Path]:
    """Queries, corpus, two runs, qrels, sub-questions and an LLM's qrels and judgments in
    ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "queries": folder / "queries.jsonl",
        "corpus": folder / "corpus.jsonl",
        "run_a": folder / "run_a.txt",
        "run_b": folder / "run_b.txt",
        "qrels": folder / "qrels.txt",
        "llm": folder / "llm.txt",
        "subquestions": folder / "subquestions.jsonl",
        "llm_judgments": folder / "llm_judgments.jsonl",
    }
    paths["queries"].write_text(
        "".join(json.dumps({"id": q, "text": t}) + "\n" for q, t in QUERIES.items())
    )
    paths["corpus"].write_text(
        "".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in DOCS.items())
    )
    paths["run_a"].write_text(
        "q1 Q0 d1 1 4.0 A\nq1 Q0 d2 2 3.0 A\nq1 Q0 d3 3 2.0 A\nq1 Q0 d4 4 1.0 A\n"
        "q2 Q0 d5 1 2.0 A\nq2 Q0 d6 2 1.0 A\n"
    )
    paths["run_b"].write_text("q1 Q0 d4 1 9.0 B\nq1 Q0 d1 2 8.0 B\n")
    paths["qrels"].write_text("q1 0 d9 1\n")
    paths["llm"].write_text("q1 0 d1 5\nq1 0 d4 4\nq1 0 d2 1\nq2 0 d5 3\nq2 0 d6 -1\n")
    paths["subquestions"].write_text(
        "".join(json.dumps({"query_id": q, "questions": t}) + "\n" for q, t in SUBQUESTIONS.items())
    )
    paths["llm_judgments"].write_text(
        '{"query_id": "q1", "doc_id": "d1", "ratings": [5, 2]}\n'
        '{"query_id": "q1", "doc_id": "d4", "ratings": [1, -1]}\n'
    )
    return paths


def config_kwargs(paths: dict[str, Path], folder: Path) -> dict[str, object]:
    """Keyword arguments of :func:`ragmeter.web.config.build_config` for the collection."""
    return {
        "queries": paths["queries"],
        "corpus": paths["corpus"],
        "runs": [paths["run_a"], paths["run_b"]],
        "qrels": [paths["qrels"]],
        "compare_qrels": [paths["llm"]],
        "compare_judgments": [paths["llm_judgments"]],
        "subquestions": paths["subquestions"],
        "depth": 3,
        "labels": folder / "labels.db",
        "export_dir": folder / "exports",
    }
