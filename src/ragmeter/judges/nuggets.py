"""The TREC RAG judge tasks (AutoNuggetizer's steps, with ragmeter's own prompts): nuggets
from judged passages, their importance, their assignment to answers and to retrieved
passages, and the support of each answer sentence by its citations.

Each ``*_job`` builds a :class:`~ragmeter.judges.api.Job` (cached, resumable, costed like every
judge task; one judgment per item, so a rerun asks only what is missing). Their outputs are the
files :mod:`ragmeter.io.nuggets` reads:

* :func:`nuggets_job` → ``{qid: [nugget text]}`` (one call per query: its passages graded
  ≥ ``rel_level``, best first, at most ``max_passages``);
* :func:`importance_job` → ``{qid: [(text, "vital" | "okay")]}`` (one call per nugget);
  :func:`write_nuggets` writes nuggetizer's nugget file;
* :func:`assignment_job` → nuggetizer's assigner lines: one per answer of a TREC RAG answer
  file, or one per (query, passage) of the top ``depth`` of runs, each nugget with its label
  (one call per nugget and text);
* :func:`citation_support_job` → one line per answer sentence with the label of each citation.

An item whose reply cannot be read is left out of the output (its nugget, label or citation),
listed in ``missing``, and makes the output incomplete; it is never given a default.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.core.nuggets import Nuggets, RagAnswer, RagAnswers
from ragmeter.errors import InputError
from ragmeter.io._common import atomic_write_text
from ragmeter.judges.api import (
    Job,
    _ok,
    _rankings,
    _require,
    _source,
    _texts,
    values_by_query,
)
from ragmeter.judges.tasks import make_task
from ragmeter.judges.types import JudgeItem, Judgment


def _query_texts(queries: Any) -> Mapping[str, str]:
    return _texts(queries) if queries is not None else {}


def nuggets_job(
    queries: Any,
    qrels: Any,
    corpus: Any,
    *,
    n: int = 30,
    rel_level: int = 1,
    max_passages: int = 20,
    max_tokens: int | None = None,
) -> Job:
    """Nuggets of each query of ``qrels`` from its passages graded ≥ ``rel_level`` (best
    first, ties in qrels order, at most ``max_passages``). Labels: ``{qid: [texts]}``."""
    task = make_task("nuggets", n=n, max_tokens=max_tokens)
    qtext, ptext = _texts(queries), _texts(corpus)
    judged = qrels.to_dict() if hasattr(qrels, "to_dict") else qrels
    items = []
    for q, grades in judged.items():
        relevant = [d for d, g in grades.items() if g >= rel_level]
        relevant = sorted(relevant, key=lambda d: -grades[d])[:max_passages]
        if not relevant:
            continue
        _require([q], qtext, "query", _source(queries, "queries"))
        _require(relevant, ptext, "passage", _source(corpus, "corpus"))
        joined = "\n".join(f"[{i}] {ptext[d]}" for i, d in enumerate(relevant, start=1))
        items.append(JudgeItem((q,), {"query": qtext[q], "passages": joined}))

    return Job(task, items, values_by_query)


def importance_job(
    nuggets: Mapping[str, Sequence[str]], queries: Any, *, max_tokens: int | None = None
) -> Job:
    """``vital`` / ``okay`` of each nugget. Labels: ``{qid: [(text, importance)]}`` (a nugget
    whose reply cannot be read is left out)."""
    task = make_task("nugget_importance", max_tokens=max_tokens)
    qtext = _texts(queries)
    _require(list(nuggets), qtext, "query", _source(queries, "queries"))
    items = [
        JudgeItem((q, i), {"query": qtext[q], "nugget": text})
        for q, texts in nuggets.items()
        for i, text in enumerate(texts)
    ]

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        out: dict[str, list[tuple[str, str]]] = {q: [] for q in nuggets}
        for item, j in zip(items, results, strict=True):
            if j is not None and _ok(j):
                q, i = item.ident
                out[q].append((nuggets[q][i], str(j.value)))
        return out

    return Job(task, items, shape)


def _answer_query(a: RagAnswer, qtext: Mapping[str, str], source: str) -> str:
    """The text of the query answer ``a`` answers: from ``--queries``, else its own topic."""
    query = qtext.get(a.query_id) or a.query
    if not query:
        raise InputError(
            f"no text for query '{a.query_id}' (give --queries, or a 'topic' per answer)",
            source=source,
            line=a.line,
        )
    return query


def _answer_targets(
    nuggets: Nuggets, answers: RagAnswers, qtext: Mapping[str, str]
) -> list[tuple[dict[str, Any], str, str]]:
    """(record head, query text, answer text) of each answer to a query with nuggets."""
    out = []
    for a in answers.answers:
        if a.query_id not in nuggets.by_query:
            continue
        query = _answer_query(a, qtext, answers.source)
        head = {"query": query, "qid": a.query_id, "answer_text": a.text, "run_id": a.run_id}
        out.append((head, query, a.text))
    return out


def _passage_targets(
    nuggets: Nuggets, runs: Sequence[Any], corpus: Any, qtext: Mapping[str, str], depth: int | None
) -> list[tuple[dict[str, Any], str, str]]:
    ptext = _texts(corpus)
    pairs: dict[str, dict[str, None]] = {}
    for run in runs:
        for q, docs in _rankings(run).items():
            if q in nuggets.by_query:
                pairs.setdefault(q, {}).update(
                    dict.fromkeys(docs if depth is None else docs[:depth])
                )
    _require(list(pairs), qtext, "query", "queries")
    _require([d for ds in pairs.values() for d in ds], ptext, "passage", _source(corpus, "corpus"))
    return [
        (
            {"text": qtext[q], "qid": q, "candidate_text": ptext[d], "docid": d},
            qtext[q],
            ptext[d],
        )
        for q, docs in pairs.items()
        for d in docs
    ]


def assignment_job(
    nuggets: Nuggets,
    *,
    queries: Any = None,
    answers: RagAnswers | None = None,
    runs: Sequence[Any] | None = None,
    corpus: Any = None,
    depth: int | None = 20,
    max_tokens: int | None = None,
) -> Job:
    """Assign every nugget of a query to each answer of ``answers`` (answers mode), or to each
    passage in the top ``depth`` of ``runs`` (retrieval mode, needs ``corpus``). Labels:
    nuggetizer's assigner lines (see :mod:`ragmeter.io.nuggets`)."""
    task = make_task("nugget_support", max_tokens=max_tokens)
    qtext = _query_texts(queries)
    if (answers is None) == (runs is None):
        raise ValueError("assign nuggets to answers, or to the passages of runs")
    if answers is not None:
        targets = _answer_targets(nuggets, answers, qtext)
    else:
        assert runs is not None
        if corpus is None:
            raise ValueError("assigning nuggets to passages needs the corpus")
        targets = _passage_targets(nuggets, runs, corpus, qtext, depth)
    items = [
        JudgeItem((t, i), {"query": query, "text": text, "nugget": nugget.text})
        for t, (_, query, text) in enumerate(targets)
        for i, nugget in enumerate(nuggets.by_query[targets[t][0]["qid"]])
    ]

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        rows = [dict(head, nuggets=[]) for head, _, _ in targets]
        for item, j in zip(items, results, strict=True):
            if j is not None and _ok(j):
                t, i = item.ident
                nugget = nuggets.by_query[rows[t]["qid"]][i]
                rows[t]["nuggets"].append(
                    {
                        "nugget_id": nugget.id,
                        "text": nugget.text,
                        "importance": nugget.importance,
                        "assignment": str(j.value),
                    }
                )
        return rows

    return Job(task, items, shape)


def citation_support_job(
    answers: RagAnswers, corpus: Any, *, queries: Any = None, max_tokens: int | None = None
) -> Job:
    """The support of each answer sentence by each segment it cites. Labels: one line per
    sentence ``{"run_id", "qid", "sentence", "text", "citations": [{"docid", "support"}]}``."""
    task = make_task("citation_support", max_tokens=max_tokens)
    qtext, ptext = _query_texts(queries), _texts(corpus)
    heads: list[dict[str, Any]] = []
    items: list[JudgeItem] = []
    for a in answers.answers:
        query = _answer_query(a, qtext, answers.source)
        for s, sentence in enumerate(a.sentences):
            _require(list(sentence.citations), ptext, "passage", _source(corpus, "corpus"))
            heads.append(
                {"run_id": a.run_id, "qid": a.query_id, "sentence": s, "text": sentence.text}
            )
            items.extend(
                JudgeItem(
                    (len(heads) - 1, doc),
                    {"query": query, "sentence": sentence.text, "passage": ptext[doc]},
                )
                for doc in dict.fromkeys(sentence.citations)
            )

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        rows = [dict(head, citations=[]) for head in heads]
        for item, j in zip(items, results, strict=True):
            if j is not None and _ok(j):
                h, doc = item.ident
                rows[h]["citations"].append({"docid": doc, "support": str(j.value)})
        return rows

    return Job(task, items, shape)


# -- writers ---------------------------------------------------------------------------------


def write_rows(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """JSONL, one row a line, atomically."""
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def write_nugget_texts(
    labels: Mapping[str, Sequence[str]], path: str | os.PathLike[str], queries: Any = None
) -> None:
    """Created nuggets without importance: ``{"qid", "query"?, "nuggets": [{"text"}]}``."""
    qtext = _query_texts(queries)
    write_rows(
        [
            {
                "qid": q,
                **({"query": qtext[q]} if q in qtext else {}),
                "nuggets": [{"text": t} for t in ts],
            }
            for q, ts in labels.items()
        ],
        path,
    )


def write_nuggets(
    labels: Mapping[str, Sequence[tuple[str, str]]], path: str | os.PathLike[str]
) -> None:
    """nuggetizer's nugget file: ``{"qid", "nuggets": [{"text", "importance"}]}``."""
    write_rows(
        [
            {"qid": q, "nuggets": [{"text": t, "importance": imp} for t, imp in scored]}
            for q, scored in labels.items()
        ],
        path,
    )


__all__ = [
    "assignment_job",
    "citation_support_job",
    "importance_job",
    "nuggets_job",
    "write_nugget_texts",
    "write_nuggets",
    "write_rows",
]
