"""Build the span files of the example collection: longer documents and span labels.

Reads the shipped ``corpus.jsonl`` and ``qrels.txt`` and writes:

* ``documents.jsonl`` — ``{"id", "text"}``: the 302 passages joined in id order into
  documents of 50 passages (``vellmar-1`` … ``vellmar-7``), one passage per paragraph
  (separated by a blank line), so that chunkers have something to cut;
* ``spans.jsonl`` — ``{"query_id", "doc_id", "start", "end", "grade", "text"}``: for every
  passage graded 4 or 5 for a query (substantial or decisive, by hand), its place in its
  document (character offsets, end exclusive) with its grade and text.

The spans are the hand grades moved onto the documents, so they score any chunking of them
(``ragmeter demo`` compares 200-, 400- and 800-token chunkings). Run from the repository root:
``python scripts/make_example_spans.py`` (``make_example_data.py`` runs it too).
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "ragmeter" / "data" / "example"
PER_DOCUMENT = 50
MIN_GRADE = 4


def main() -> None:
    passages = [json.loads(line) for line in (OUT / "corpus.jsonl").open(encoding="utf-8")]
    passages.sort(key=lambda p: p["id"])
    place: dict[str, tuple[str, int, int]] = {}
    documents = []
    for n in range(0, len(passages), PER_DOCUMENT):
        doc_id = f"vellmar-{n // PER_DOCUMENT + 1}"
        text = ""
        for p in passages[n : n + PER_DOCUMENT]:
            if text:
                text += "\n\n"
            place[p["id"]] = (doc_id, len(text), len(text) + len(p["text"]))
            text += p["text"]
        documents.append({"id": doc_id, "text": text})
    texts = {d["id"]: d["text"] for d in documents}
    spans = []
    for line in (OUT / "qrels.txt").open(encoding="utf-8"):
        qid, _, doc, grade = line.split()
        if int(grade) >= MIN_GRADE:
            doc_id, start, end = place[doc]
            spans.append(
                {
                    "query_id": qid,
                    "doc_id": doc_id,
                    "start": start,
                    "end": end,
                    "grade": int(grade),
                    "text": texts[doc_id][start:end],
                }
            )
    for name, rows in (("documents.jsonl", documents), ("spans.jsonl", spans)):
        (OUT / name).write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    print(f"{len(documents)} documents, {len(spans)} spans -> {OUT}")


if __name__ == "__main__":
    main()
