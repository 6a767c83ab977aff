"""Build the nugget files of the example collection from ``example_text/nuggets.py``.

Reads the shipped ``corpus.jsonl`` and ``answers.json`` (its generated answers and their
retrieved passages) and writes, for the four queries of ``example_text/nuggets.py``:

* ``nuggets.jsonl`` — nuggetizer's nugget file: ``{"qid", "query", "nuggets": [{"text",
  "importance"}]}``;
* ``nugget_assignments.jsonl`` — nuggetizer's assigner output: one line for the answer of the
  run ``vellmar-rag`` (``run_id``, ``answer_text``) and one per assessed passage (``docid``,
  ``candidate_text``), each nugget with its ``assignment``;
* ``rag_answers.jsonl`` — the answers in the TREC RAG (Ragnarök) format: ``references`` = the
  passages the answer was written from (the hybrid run's top 5), sentences citing them by index;
* ``citation_support.jsonl`` — the support of each sentence by each of its citations.

Run from the repository root: ``python scripts/make_example_nuggets.py`` (it needs nothing but
the shipped files; ``make_example_data.py`` runs it after rebuilding them).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from example_text.nuggets import NUGGETS, RUN_ID  # noqa: E402

OUT = HERE.parent / "src" / "ragmeter" / "data" / "example"
LABELS = {"S": "support", "P": "partial_support", "N": "not_support"}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


def assigned(nuggets: list[tuple[str, str]], letters: str) -> list[dict[str, str]]:
    assert len(letters) == len(nuggets), letters
    return [
        {"text": t, "importance": imp, "assignment": LABELS[c]}
        for (t, imp), c in zip(nuggets, letters, strict=True)
    ]


def main() -> None:
    corpus = {
        r["id"]: r["text"]
        for r in map(json.loads, (OUT / "corpus.jsonl").read_text("utf-8").splitlines())
    }
    by_text = {t: d for d, t in corpus.items()}
    samples = {s["id"]: s for s in json.loads((OUT / "answers.json").read_text("utf-8"))}
    nugget_rows, assignment_rows, answer_rows, support_rows = [], [], [], []
    for qid, nuggets, passages, answer, sentences in NUGGETS:
        sample = samples[qid]
        query = sample["query"]
        references = [by_text[t] for t in sample["retrieved"]]
        nugget_rows.append(
            {
                "qid": qid,
                "query": query,
                "nuggets": [{"text": t, "importance": i} for t, i in nuggets],
            }
        )
        text = " ".join(s for s, _, _ in sentences)
        assignment_rows.append(
            {
                "query": query,
                "qid": qid,
                "answer_text": text,
                "run_id": RUN_ID,
                "nuggets": assigned(nuggets, answer),
            }
        )
        assert set(references) <= set(passages), qid
        for doc, letters in passages.items():
            assignment_rows.append(
                {
                    "text": query,
                    "qid": qid,
                    "candidate_text": corpus[doc],
                    "docid": doc,
                    "nuggets": assigned(nuggets, letters),
                }
            )
        answer_rows.append(
            {
                "run_id": RUN_ID,
                "topic_id": qid,
                "topic": query,
                "references": references,
                "response_length": len(text.split()),
                "answer": [{"text": s, "citations": cited} for s, cited, _ in sentences],
            }
        )
        for i, (_, cited, letters) in enumerate(sentences):
            assert len(cited) == len(letters), (qid, i)
            support_rows.append(
                {
                    "run_id": RUN_ID,
                    "qid": qid,
                    "sentence": i,
                    "citations": [
                        {"docid": references[c], "support": LABELS[s]}
                        for c, s in zip(cited, letters, strict=True)
                    ],
                }
            )
    write_jsonl(OUT / "nuggets.jsonl", nugget_rows)
    write_jsonl(OUT / "nugget_assignments.jsonl", assignment_rows)
    write_jsonl(OUT / "rag_answers.jsonl", answer_rows)
    write_jsonl(OUT / "citation_support.jsonl", support_rows)


if __name__ == "__main__":
    main()
