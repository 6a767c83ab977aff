"""Data shipped with ragmeter: the example collection of ``ragmeter demo``.

``example_path(name)`` gives the path of one of its files (see ``example/README.md``):

>>> example_path("qrels.txt").name
'qrels.txt'
"""

from __future__ import annotations

from pathlib import Path

from ragmeter.errors import InputError

EXAMPLE_DIR = Path(__file__).resolve().parent / "example"

#: the files of the example collection
EXAMPLE_FILES = (
    "corpus.jsonl",
    "queries.jsonl",
    "qrels.txt",
    "subquestions.jsonl",
    "judgments.jsonl",
    "references.jsonl",
    "answers.json",
    "answers_rated.jsonl",
    "nuggets.jsonl",
    "nugget_assignments.jsonl",
    "rag_answers.jsonl",
    "citation_support.jsonl",
    "documents.jsonl",
    "spans.jsonl",
)


def example_path(name: str) -> Path:
    """The path of a file of the example collection, e.g. ``example_path("corpus.jsonl")``.

    An unknown name is an error listing the files there are.
    """
    if name not in EXAMPLE_FILES:
        raise InputError(f"no example file {name!r}; the files are: {', '.join(EXAMPLE_FILES)}")
    path = EXAMPLE_DIR / name
    if not path.is_file():
        raise InputError("example file missing from the installation", source=str(path))
    return path


__all__ = ["EXAMPLE_DIR", "EXAMPLE_FILES", "example_path"]
