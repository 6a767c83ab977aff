"""Readers of nuggets, nugget assignments, TREC RAG answers and citation support (JSONL).

**Nuggets** (:func:`read_nuggets`), one JSON object per line, either as nuggetizer writes them
(one line per query) or one line per nugget::

    {"qid": "q1", "query": "...", "nuggets": [{"text": "...", "importance": "vital"}, ...]}
    {"qid": "q1", "nugget_id": "n1", "text": "...", "importance": "okay"}

A nugget without ``nugget_id`` (or ``id``) gets its 1-based position in its query's list.

**Assignments** (:func:`read_assignments`), as nuggetizer's assigner writes them (answers
mode: ``run_id``, ``qid`` and the nuggets with their ``assignment``; retrieval mode: the same
with the passage's ``docid``) or one line per assignment::

    {"run_id": "r1", "qid": "q1", "nuggets": [{"text": "...", "assignment": "support"}, ...]}
    {"qid": "q1", "docid": "d7", "nuggets": [...]}
    {"run_id": "r1", "qid": "q1", "nugget_id": "n1", "assignment": "partial_support"}

A nugget of a nuggetizer line is matched to the query's nugget by ``nugget_id`` when it has
one, else by its exact text. Labels: ``support``, ``partial_support``, ``not_support``.

**TREC RAG answers** (:func:`read_rag_answers`; Ragnarök's JSONL, the TREC 2024 RAG
submission format), one answer per line::

    {"run_id": "r1", "topic_id": "q1", "topic": "...", "references": ["d3", "d7"],
     "answer": [{"text": "First sentence.", "citations": [0, 1]}, ...]}

A citation is an index into ``references`` (0-based) or a segment id. :func:`read_rag_run`
reads the references of each answer as a ranked run (the context the answer was written from).

**Citation support** (:func:`read_citation_support`), one line per answer sentence, its
cited segments each with a label (a sentence citing nothing has an empty list)::

    {"run_id": "r1", "qid": "q1", "sentence": 0,
     "citations": [{"docid": "d3", "support": "support"}, {"docid": "d7", ...}]}

When the evaluated run is a TREC RAG answer file, :func:`check_citation_support` holds the
support to the answers: each line judges exactly the doc ids its sentence cites.

Query ids are read from ``qid``, ``query_id`` or ``topic_id``; doc ids from ``docid``,
``doc_id`` or ``segment_id``. Every error names the file, the line and the field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.core.data import Run
from ragmeter.core.nuggets import (
    AnswerSentence,
    CitationSupport,
    Nugget,
    NuggetAssignments,
    Nuggets,
    RagAnswer,
    RagAnswers,
    SentenceSupport,
    check_importance,
    check_label,
)
from ragmeter.errors import InputError
from ragmeter.io._common import PathLike

QUERY_FIELDS = ("qid", "query_id", "topic_id")
DOC_FIELDS = ("docid", "doc_id", "segment_id")
NUGGET_ID_FIELDS = ("nugget_id", "id")


def _records(path: PathLike) -> tuple[list[tuple[Any, int | None]], str]:
    from ragmeter.io._documents import load_json, load_jsonl

    source = str(path)
    doc = load_json(path) if source.lower().endswith(".json") else load_jsonl(path)
    if doc.records is None:
        raise InputError("expected one JSON object per line (or an array of them)", source=source)
    for record, line in doc.records:
        if not isinstance(record, dict):
            raise InputError(
                f"expected a JSON object, got {type(record).__name__}", source=source, line=line
            )
    return doc.records, source


def _text(record: Mapping[str, Any], names: Sequence[str], source: str, line: int | None) -> str:
    """The first of ``names`` present in ``record``, as a non-empty id text."""
    for name in names:
        if name in record:
            value = record[name]
            if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
                raise InputError(
                    f"expected a non-empty string, got {value!r}",
                    source=source,
                    line=line,
                    field=name,
                )
            return str(value)
    raise InputError(f"missing field (one of {', '.join(names)})", source=source, line=line)


def _optional(
    record: Mapping[str, Any], names: Sequence[str], source: str, line: int | None
) -> str:
    if not any(n in record for n in names):
        return ""
    return _text(record, names, source, line)


def _list(record: Mapping[str, Any], name: str, source: str, line: int | None) -> list[Any]:
    value = record.get(name)
    if not isinstance(value, list):
        raise InputError(
            f"expected a list, got {type(value).__name__}", source=source, line=line, field=name
        )
    return value


def _string(value: Any, source: str, line: int | None, field: str) -> str:
    if not isinstance(value, str):
        raise InputError(
            f"expected a string, got {type(value).__name__}", source=source, line=line, field=field
        )
    return value


# -- nuggets ---------------------------------------------------------------------------------


def read_nuggets(path: PathLike) -> Nuggets:
    """Read nuggets (see the module docstring)."""
    records, source = _records(path)
    by_query: dict[str, list[Nugget]] = {}
    listed: set[str] = set()
    for record, line in records:
        q = _text(record, QUERY_FIELDS, source, line)
        if "nuggets" in record:
            if q in listed:
                raise InputError(f"query '{q}' listed twice", source=source, line=line)
            listed.add(q)
            own = by_query.setdefault(q, [])
            for i, item in enumerate(_list(record, "nuggets", source, line)):
                own.append(_nugget(item, len(own) + 1, source, line, f"nuggets[{i}]"))
        else:
            own = by_query.setdefault(q, [])
            own.append(_nugget(record, len(own) + 1, source, line, ""))
    nuggets = Nuggets({q: tuple(n) for q, n in by_query.items()}, source)
    nuggets.check()
    return nuggets


def _nugget(item: Any, position: int, source: str, line: int | None, where: str) -> Nugget:
    prefix = f"{where}." if where else ""
    if not isinstance(item, dict):
        raise InputError("expected a nugget object", source=source, line=line, field=where or None)
    nid = str(position)
    for name in NUGGET_ID_FIELDS:
        if name in item:
            nid = _text(item, (name,), source, line)
            break
    text_field = "nugget" if "nugget" in item and "text" not in item else "text"
    text = _string(item.get(text_field), source, line, prefix + text_field)
    if "importance" not in item:
        raise InputError(
            "missing importance", source=source, line=line, field=prefix + "importance"
        )
    try:
        importance = check_importance(item["importance"], source, line)
    except InputError as exc:
        raise InputError(
            exc.reason, source=source, line=line, field=prefix + "importance"
        ) from None
    return Nugget(nid, text, importance)


def read_nugget_texts(path: PathLike) -> dict[str, list[str]]:
    """Nugget texts per query, importance not needed (what ``ragmeter judge nuggets create``
    writes): nuggetizer-style lines whose ``nuggets`` are objects with a ``text`` or strings."""
    records, source = _records(path)
    out: dict[str, list[str]] = {}
    for record, line in records:
        q = _text(record, QUERY_FIELDS, source, line)
        if q in out:
            raise InputError(f"query '{q}' listed twice", source=source, line=line)
        texts = []
        for i, item in enumerate(_list(record, "nuggets", source, line)):
            value = item.get("text") if isinstance(item, dict) else item
            texts.append(_string(value, source, line, f"nuggets[{i}].text"))
        out[q] = texts
    return out


# -- assignments -----------------------------------------------------------------------------


def read_assignments(path: PathLike, nuggets: Nuggets) -> NuggetAssignments:
    """Read nugget assignments (see the module docstring) of the queries of ``nuggets``."""
    records, source = _records(path)
    answers: dict[tuple[str, str], dict[str, int]] = {}
    passages: dict[tuple[str, str], dict[str, int]] = {}
    for record, line in records:
        q = _text(record, QUERY_FIELDS, source, line)
        own = nuggets.by_query.get(q)
        if own is None:
            raise InputError(
                f"query '{q}' has no nuggets in {nuggets.source}", source=source, line=line
            )
        doc = _optional(record, DOC_FIELDS, source, line)
        key = (q, doc) if doc else (_optional(record, ("run_id",), source, line), q)
        target = (passages if doc else answers).setdefault(key, {})
        if "nuggets" in record:
            found = _list(record, "nuggets", source, line)
            pairs = [_assigned(item, own, source, line, i) for i, item in enumerate(found)]
        else:
            nid = _text(record, NUGGET_ID_FIELDS, source, line)
            if nid not in {n.id for n in own}:
                raise InputError(
                    f"query '{q}' has no nugget '{nid}'",
                    source=source,
                    line=line,
                    field="nugget_id",
                )
            pairs = [(nid, _label(record, source, line, "assignment"))]
        for nid, code in pairs:
            if nid in target:
                raise InputError(
                    f"nugget '{nid}' of query '{q}' assigned twice", source=source, line=line
                )
            target[nid] = code
    return NuggetAssignments(answers, passages, source)


def _label(
    item: Mapping[str, Any], source: str, line: int | None, key: str, *, where: str = ""
) -> int:
    if key not in item:
        raise InputError("missing support label", source=source, line=line, field=where + key)
    try:
        return check_label(item[key], source, line, what="label")
    except InputError as exc:
        raise InputError(exc.reason, source=source, line=line, field=where + key) from None


def _assigned(
    item: Any, own: tuple[Nugget, ...], source: str, line: int | None, i: int
) -> tuple[str, int]:
    where = f"nuggets[{i}]"
    if not isinstance(item, dict):
        raise InputError("expected a nugget object", source=source, line=line, field=where)
    code = _label(item, source, line, "assignment", where=f"{where}.")
    for name in NUGGET_ID_FIELDS:
        if name in item:
            nid = str(item[name])
            if nid not in {n.id for n in own}:
                raise InputError(
                    f"no nugget '{nid}' for this query", source=source, line=line, field=where
                )
            return nid, code
    text = _string(item.get("text"), source, line, f"{where}.text")
    matches = [n.id for n in own if n.text.strip() == text.strip()]
    if not matches:
        raise InputError(
            f"nugget text {text[:60]!r} is not a nugget of this query",
            source=source,
            line=line,
            field=f"{where}.text",
        )
    return matches[0], code


# -- TREC RAG answers ------------------------------------------------------------------------


def read_rag_answers(path: PathLike) -> RagAnswers:
    """Read a TREC RAG answer file (Ragnarök's JSONL; see the module docstring)."""
    records, source = _records(path)
    out: list[RagAnswer] = []
    seen: set[tuple[str, str]] = set()
    for record, line in records:
        q = _text(record, QUERY_FIELDS, source, line)
        run = _optional(record, ("run_id",), source, line)
        if (run, q) in seen:
            raise InputError(f"run '{run}' answers query '{q}' twice", source=source, line=line)
        seen.add((run, q))
        refs = record.get("references", [])
        if not isinstance(refs, list) or not all(isinstance(r, str | int) for r in refs):
            raise InputError(
                "expected a list of segment ids", source=source, line=line, field="references"
            )
        references = tuple(str(r) for r in refs)
        sentences = [
            _sentence(item, references, source, line, i)
            for i, item in enumerate(_list(record, "answer", source, line))
        ]
        topic = record.get("topic", "")
        out.append(
            RagAnswer(
                run,
                q,
                tuple(sentences),
                references,
                topic if isinstance(topic, str) else "",
                line,
            )
        )
    return RagAnswers(tuple(out), source)


def _sentence(
    item: Any, references: tuple[str, ...], source: str, line: int | None, i: int
) -> AnswerSentence:
    where = f"answer[{i}]"
    if not isinstance(item, dict):
        raise InputError("expected {text, citations}", source=source, line=line, field=where)
    text = _string(item.get("text"), source, line, f"{where}.text")
    cited = item.get("citations", [])
    if not isinstance(cited, list):
        raise InputError("expected a list", source=source, line=line, field=f"{where}.citations")
    docs = []
    for c in cited:
        if isinstance(c, int) and not isinstance(c, bool):
            if not 0 <= c < len(references):
                raise InputError(
                    f"citation {c} is not an index into the {len(references)} references",
                    source=source,
                    line=line,
                    field=f"{where}.citations",
                )
            docs.append(references[c])
        elif isinstance(c, str) and c:
            docs.append(c)
        else:
            raise InputError(
                f"citation {c!r}: expected a reference index or a segment id",
                source=source,
                line=line,
                field=f"{where}.citations",
            )
    return AnswerSentence(text, tuple(docs))


def is_rag_answer(record: Any) -> bool:
    """Whether a JSON record is a TREC RAG answer (``topic_id`` and an ``answer`` list)."""
    return (
        isinstance(record, dict)
        and "answer" in record
        and isinstance(record["answer"], list)
        and any(k in record for k in QUERY_FIELDS)
    )


def rag_run(answers: RagAnswers, *, name: str | None = None) -> Run:
    """The references of each answer as a ranked run (rank 1 = the first reference); its name
    is the file's one ``run_id`` (else ``name``). Several runs in one file are an error."""
    runs = answers.run_ids
    if len(runs) > 1:
        raise InputError(
            f"{len(runs)} runs in one answer file ({', '.join(runs[:3])}…); give one file per run",
            source=answers.source,
        )
    lists = {a.query_id: list(dict.fromkeys(a.references)) for a in answers.answers}
    run_name = runs[0] if runs and runs[0] else (name or answers.source)
    return Run.from_lists(lists, name=run_name, source=answers.source)


def read_rag_run(path: PathLike, *, name: str | None = None) -> Run:
    """A TREC RAG answer file read as the run of its references (see :func:`rag_run`)."""
    return rag_run(read_rag_answers(path), name=name)


# -- citation support ------------------------------------------------------------------------


def read_citation_support(path: PathLike) -> CitationSupport:
    """Read citation support judgments (see the module docstring)."""
    records, source = _records(path)
    sentences: dict[tuple[str, str], dict[int, SentenceSupport]] = {}
    for record, line in records:
        q = _text(record, QUERY_FIELDS, source, line)
        run = _optional(record, ("run_id",), source, line)
        index = record.get("sentence")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise InputError(
                f"expected a sentence index ≥ 0, got {index!r}",
                source=source,
                line=line,
                field="sentence",
            )
        own = sentences.setdefault((run, q), {})
        if index in own:
            raise InputError(
                f"sentence {index} of query '{q}' given twice",
                source=source,
                line=line,
                field="sentence",
            )
        docs, codes = [], []
        for i, item in enumerate(_list(record, "citations", source, line)):
            if not isinstance(item, dict):
                raise InputError(
                    "expected {docid, support}", source=source, line=line, field=f"citations[{i}]"
                )
            docs.append(_text(item, DOC_FIELDS, source, line))
            codes.append(_label(item, source, line, "support", where=f"citations[{i}]."))
        own[index] = SentenceSupport(tuple(docs), tuple(codes), line)
    out: dict[tuple[str, str], tuple[SentenceSupport, ...]] = {}
    for key, own in sentences.items():
        if sorted(own) != list(range(len(own))):
            raise InputError(
                f"query '{key[1]}': sentences {sorted(own)}; expected 0..{len(own) - 1}",
                source=source,
                field="sentence",
            )
        out[key] = tuple(own[i] for i in range(len(own)))
    return CitationSupport(out, source)


def check_citation_support(support: CitationSupport, answers: RagAnswers) -> None:
    """Refuse citation support that does not judge the answers' own citations.

    The citation measures count the support file's rows: a row naming a passage its sentence
    does not cite, or leaving out one it cites, would move citation_precision and
    citation_recall without a word. Every judged answer of ``answers``' runs (rows naming the
    run, or naming none) must be an answer of the file, every judged sentence one of its
    sentences, and the judged doc ids exactly the sentence's citations (in any order, each as
    often as cited). An error names the support file, its line and the doc id.
    """
    runs = set(answers.run_ids)
    by_key = {(a.run_id, a.query_id): a for a in answers.answers}
    for (run, q), sentences in support.answers.items():
        for answer_run in sorted(runs) if run == "" else [run] if run in runs else []:
            answer = by_key.get((answer_run, q))
            for i, sentence in enumerate(sentences):
                _check_sentence(support.source, answers.source, answer, answer_run, q, i, sentence)


def _check_sentence(
    source: str,
    answers_source: str,
    answer: RagAnswer | None,
    run: str,
    q: str,
    index: int,
    judged: SentenceSupport,
) -> None:
    def error(message: str, field: str) -> InputError:
        return InputError(message, source=source, line=judged.line, field=field)

    if answer is None:
        raise error(f"run '{run}' has no answer to query '{q}' in {answers_source}", "qid")
    where = f"run '{run}', {answers_source}"
    where += f", line {answer.line}" if answer.line else ""
    if index >= len(answer.sentences):
        raise error(
            f"sentence {index} of query '{q}': the answer has {len(answer.sentences)} "
            f"sentences ({where})",
            "sentence",
        )
    cited = Counter(answer.sentences[index].citations)
    given = Counter(judged.citations)
    cites = f"sentence {index} of the answer to query '{q}'"
    # a doc judged but not cited, then one cited but not judged
    for surplus, wrong in (
        (
            given - cited,
            f"is not cited by {cites} ({where}: it cites {_ids(cited)}); "
            "judge the sentence's citations only",
        ),
        (
            cited - given,
            f"is cited by {cites} ({where}) but not judged on this line; judge every citation",
        ),
    ):
        doc = next(surplus.elements(), None)
        if doc is not None:
            raise error(f"doc '{doc}' {wrong}", "citations")


def _ids(docs: Counter[str]) -> str:
    return ", ".join(f"'{d}'" for d in docs.elements()) or "nothing"


def rag_answers_in(path: PathLike) -> RagAnswers | None:
    """The TREC RAG answers of a run file, ``None`` for a run of another kind (the answers'
    citations are what citation support is checked against)."""
    from pathlib import Path

    from ragmeter.io._common import format_suffix, read_bytes
    from ragmeter.io._documents import first_jsonl_value

    if not Path(path).is_file() or format_suffix(path) != ".jsonl":
        return None
    data = read_bytes(path)
    if not data.strip() or not is_rag_answer(first_jsonl_value(data, str(path))):
        return None
    return read_rag_answers(path)


__all__ = [
    "check_citation_support",
    "is_rag_answer",
    "rag_answers_in",
    "rag_run",
    "read_assignments",
    "read_citation_support",
    "read_nugget_texts",
    "read_nuggets",
    "read_rag_answers",
    "read_rag_run",
]
