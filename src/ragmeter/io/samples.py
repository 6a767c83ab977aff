"""Evaluation samples in JSON, JSONL or YAML (the seed-002 input contract).

A file holds a list of samples, or ``{"samples": [...]}``; a JSONL file holds one sample per
line. Each sample::

    id: q-1                                   # also: sample_id, query_id, qid
    input: {question: "What is our refund window?"}   # or a plain string; optional
    actual_output: {"retrieved": [{"id": "doc-7", "text": "..."}, ...]}
    expected_output: ["doc-3", "doc-9"]       # or {"doc-3": 3, "doc-9": 1}
    metadata: {k: 5}                          # optional per-sample cutoff

Field names are matched ignoring case, ``_`` and ``-`` (``actualOutput`` = ``actual_output``):

* retrieved list: ``actual_output`` (or ``actual``), else ``retrieved`` / ``retrieved_ids`` /
  ``results``. Its value is ``{"retrieved": [...]}`` (also ``results``, ``documents``,
  ``docs``), a bare array, or either of those encoded as a JSON string (what a system under
  test emits). Array items are ids (strings or integers) or objects with ``id`` (also
  ``doc_id``, ``document_id``, ``passage_id``, ``pid``, ``chunk_id``) and optionally ``text``
  (also ``content``, ``contents``, ``passage``, ``page_content``). The given order is the rank
  order (rank 1 first).
* relevant ground truth: ``expected_output`` (also ``expected``, ``ground_truth``,
  ``relevant``, ``relevant_ids``): a list of relevant ids (grade 1 each) or an ``{id: gain}``
  map with integer gains (also as a JSON string).
* ``metadata.k``: a positive integer cutoff for this sample (SPEC §1: it overrides ``@k``).
* query text: ``input`` (a string, or an object with ``question`` / ``query`` / ``text``),
  else ``question`` or ``query``; generated answer: ``generated_answer`` / ``answer`` /
  ``response``; reference answer: ``reference_answer`` / ``expected_answer`` / ``reference``.

RAGAS and DeepEval rows (``user_input``, ``retrieved_contexts``, ``reference_context_ids``…;
``input``, ``retrieval_context``, ``context``…) are read as they are written: see
:mod:`ragmeter.io.ragas`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io._common import describe, format_suffix
from ragmeter.io._documents import TOO_DEEP, Document, load_json, load_jsonl, load_yaml
from ragmeter.io.ragas import adapt_records, dataset_kind

SampleFormat = Literal["json", "jsonl", "yaml"]

ID_KEYS = ("id", "sampleid", "queryid", "qid")
ACTUAL_KEYS = ("actualoutput", "actual", "retrieved", "retrievedids", "results")
EXPECTED_KEYS = ("expectedoutput", "expected", "groundtruth", "relevant", "relevantids")
METADATA_KEYS = ("metadata", "meta")
INPUT_KEYS = ("input", "question", "query")
ANSWER_KEYS = ("generatedanswer", "answer", "response")
REFERENCE_KEYS = ("referenceanswer", "expectedanswer", "reference")
LIST_KEYS = ("retrieved", "results", "documents", "docs")
ITEM_ID_KEYS = ("id", "docid", "documentid", "passageid", "pid", "chunkid")
ITEM_TEXT_KEYS = ("text", "content", "contents", "passage", "pagecontent")
QUESTION_KEYS = ("question", "query", "text", "input", "content")

#: Normalized keys that mark a record as a sample (rather than a run or qrels row).
SAMPLE_MARKERS = frozenset(ACTUAL_KEYS + EXPECTED_KEYS + METADATA_KEYS + ("input",))


def _norm(key: Any) -> str:
    return str(key).lower().replace("_", "").replace("-", "").replace(" ", "")


def is_sample(record: Any) -> bool:
    """Whether ``record`` looks like a sample (it has a retrieved, expected or input field, or
    is a RAGAS or DeepEval row)."""
    if dataset_kind(record) is not None:
        return True
    return isinstance(record, Mapping) and any(_norm(k) in SAMPLE_MARKERS for k in record)


@dataclass(frozen=True, eq=False)
class Samples:
    """Samples read from one file: the run and qrels they define, and their texts.

    Attributes:
        run: the retrieved lists in given order (``order="given"``), per-sample ``metadata.k``
            as :attr:`Run.cutoffs`, passage texts as :attr:`Run.texts` when given.
        qrels: the relevant ground truth (a list means grade 1 each; a map gives gains).
        ids: sample ids in file order.
        queries: query text of each sample that has one.
        answers: generated answer of each sample that has one.
        references: reference answer of each sample that has one.
        metadata: each sample's ``metadata`` mapping (empty mappings omitted).
        source: the file read.
        warnings: notes produced while reading (e.g. duplicate retrieved ids dropped).
    """

    run: Run
    qrels: Qrels
    ids: tuple[str, ...]
    queries: Mapping[str, str] = field(default_factory=dict)
    answers: Mapping[str, str] = field(default_factory=dict)
    references: Mapping[str, str] = field(default_factory=dict)
    metadata: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    source: str = "<samples>"
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.ids)


def sample_format(path: str | os.PathLike[str]) -> SampleFormat:
    """The sample format a file name implies (``.jsonl``/``.ndjson``, ``.yaml``/``.yml``,
    otherwise JSON)."""
    suffix = format_suffix(path)
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    return "json"


def load_document(path: str | os.PathLike[str], fmt: SampleFormat) -> Document:
    """Load a JSON, JSONL or YAML document."""
    if fmt == "jsonl":
        return load_jsonl(path)
    if fmt == "yaml":
        return load_yaml(path)
    return load_json(path)


def read_samples(
    path: str | os.PathLike[str],
    *,
    format: SampleFormat | None = None,
    name: str | None = None,
) -> Samples:
    """Read samples from a JSON, JSONL or YAML file (format from the extension by default).

    Every sample needs an id, a retrieved list and ``expected_output``; see the module
    docstring for the accepted field names.
    """
    doc = load_document(path, format or sample_format(path))
    return samples_from_document(doc, name=name or Path(path).name)


@dataclass
class _Collected:
    """The columns of the run and the qrels, and the per-sample fields, as the records are
    read (:func:`samples_from_records` builds them into :class:`Samples` at the end)."""

    run_q: list[str] = field(default_factory=list)
    run_d: list[str] = field(default_factory=list)
    run_s: list[float] = field(default_factory=list)
    run_t: list[str | None] = field(default_factory=list)
    run_lines: list[int] = field(default_factory=list)
    has_text: bool = False
    rel_q: list[str] = field(default_factory=list)
    rel_d: list[str] = field(default_factory=list)
    rel_g: list[int] = field(default_factory=list)
    rel_lines: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    seen: dict[str, int | None] = field(default_factory=dict)
    cutoffs: dict[str, int] = field(default_factory=dict)
    queries: dict[str, str] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    references: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    no_relevant: int = 0

    def retrieved(self, sid: str, value: Any, key: str, ctx: _Context, line: int) -> None:
        """The sample's retrieved list: scores n..1 keep the given order."""
        items = _retrieved(value, key, ctx)
        n = len(items)
        for pos, (doc, text) in enumerate(items):
            self.run_q.append(sid)
            self.run_d.append(doc)
            self.run_s.append(float(n - pos))
            self.run_t.append(text)
            self.run_lines.append(line)
            self.has_text = self.has_text or text is not None

    def expected(self, sid: str, value: Any, key: str, ctx: _Context, line: int) -> None:
        """The sample's relevant ground truth (ids or an {id: gain} map)."""
        judged = _expected(value, key, ctx)
        if not any(g > 0 for _, g in judged):
            self.no_relevant += 1
        for doc, grade in judged:
            self.rel_q.append(sid)
            self.rel_d.append(doc)
            self.rel_g.append(grade)
            self.rel_lines.append(line)

    def extras(
        self, sid: str, record: Mapping[Any, Any], keys: dict[str, Any], ctx: _Context
    ) -> None:
        """Metadata (with its cutoff ``k``), query text, answer and reference."""
        mkey = _one_key(keys, METADATA_KEYS, ctx, "metadata")
        if mkey is not None and record[mkey] is not None:
            meta = record[mkey]
            if not isinstance(meta, Mapping):
                raise ctx.error(str(mkey), f"is {describe(meta)}; expected an object")
            if meta:
                self.metadata[sid] = dict(meta)
            if "k" in meta and meta["k"] is not None:
                self.cutoffs[sid] = _cutoff(meta["k"], f"{mkey}.k", ctx)
        text = _query_text(record, keys, ctx)
        if text is not None:
            self.queries[sid] = text
        for store, candidates in ((self.answers, ANSWER_KEYS), (self.references, REFERENCE_KEYS)):
            k = _key(keys, candidates)
            if k is not None and record[k] is not None:
                if not isinstance(record[k], str):
                    raise ctx.error(str(k), f"is {describe(record[k])}; expected a string")
                store[sid] = record[k]

    def build(self, *, source: str, name: str, need_qrels: bool) -> Samples:
        warnings: list[str] = []
        if self.no_relevant and need_qrels:
            warnings.append(
                f"{source}: {self.no_relevant} sample(s) list no relevant id; they have no "
                "relevance judgments and are not evaluated by qrels-based metrics"
            )
        texts = pa.array(self.run_t, type=pa.string()) if self.has_text else None
        run = Run.from_columns(
            pa.array(self.run_q, type=pa.string()),
            pa.array(self.run_d, type=pa.string()),
            np.asarray(self.run_s, dtype=np.float64),
            name=name,
            order="given",
            source=source,
            lines=np.asarray(self.run_lines, dtype=np.int64),
            cutoffs=self.cutoffs or None,
            texts=texts,
        )
        qrels = Qrels.from_columns(
            pa.array(self.rel_q, type=pa.string()),
            pa.array(self.rel_d, type=pa.string()),
            np.asarray(self.rel_g, dtype=np.int64),
            name=name,
            source=source,
            lines=np.asarray(self.rel_lines, dtype=np.int64),
        )
        return Samples(
            run=run,
            qrels=qrels,
            ids=tuple(self.ids),
            queries=self.queries,
            answers=self.answers,
            references=self.references,
            metadata=self.metadata,
            source=source,
            warnings=(*warnings, *run.warnings, *qrels.warnings),
        )


@dataclass(frozen=True)
class _Part:
    """A list a sample gives: the keys it may stand under (normalised), what it is (for the
    message on two of them), and the field and message of the error when it is missing
    where it is needed."""

    keys: tuple[str, ...]
    role: str
    field_name: str
    missing: str


_RETRIEVED = _Part(
    ACTUAL_KEYS,
    "retrieved list",
    "actual_output",
    "no retrieved list; expected 'actual_output' (or 'retrieved') holding "
    '{"retrieved": [...]} or an array of ids',
)
_EXPECTED = _Part(
    EXPECTED_KEYS,
    "expected output",
    "expected_output",
    "missing; expected 'expected_output': a list of relevant ids or an {id: gain} map",
)


def samples_from_records(
    records: list[tuple[Any, int | None]],
    *,
    source: str,
    name: str = "run",
    need_run: bool = True,
    need_qrels: bool = True,
) -> Samples:
    """Build :class:`Samples` from ``(sample, line)`` pairs.

    ``need_run`` / ``need_qrels`` say whether a missing retrieved list / ``expected_output`` is
    an error (reading only qrels from a samples file does not need the retrieved lists).
    """
    if not records:
        raise InputError("no samples; expected a list of samples", source=source)
    notes: list[str] = []
    if dataset_kind(records[0][0]) is not None:  # RAGAS / DeepEval rows, as they are written
        adapted = adapt_records(records, source=source)
        records, notes = list(adapted.records), adapted.warnings(source)
    out = _Collected()
    # each list a sample gives, who collects it, and whether a sample may leave it out
    parts = ((_RETRIEVED, out.retrieved, need_run), (_EXPECTED, out.expected, need_qrels))
    for index, (record, line) in enumerate(records, start=1):
        ctx = _Context(source, line, index)
        if not isinstance(record, Mapping):
            raise ctx.error(None, f"sample is {describe(record)}; expected an object")
        keys = {_norm(k): k for k in record}
        sid = _sample_id(record, keys, ctx)
        ctx.sid = sid
        if sid in out.seen:
            where = f" on line {out.seen[sid]}" if out.seen[sid] is not None else ""
            raise ctx.error(
                _key(keys, ID_KEYS),
                f"duplicate sample id {sid!r} (also{where}); expected unique ids",
            )
        out.seen[sid] = line
        out.ids.append(sid)
        row_line = line if line is not None else index
        for part, take, needed in parts:
            key = _one_key(keys, part.keys, ctx, part.role)
            if key is not None:
                take(sid, record[key], str(key), ctx, row_line)
            elif needed:
                raise ctx.error(part.field_name, part.missing)
        out.extras(sid, record, keys, ctx)
    samples = out.build(source=source, name=name, need_qrels=need_qrels)
    return replace(samples, warnings=(*notes, *samples.warnings)) if notes else samples


def samples_from_document(
    doc: Document, *, name: str = "run", need_run: bool = True, need_qrels: bool = True
) -> Samples:
    """Samples from a loaded document: a list of samples or ``{"samples": [...]}``."""
    if doc.records is None:
        what = describe(doc.value)
        if isinstance(doc.value, Mapping):
            what = "an object without a 'samples' list"
        raise InputError(
            f'document is {what}; expected a list of samples or {{"samples": [...]}}',
            source=doc.source,
        )
    return samples_from_records(
        doc.records, source=doc.source, name=name, need_run=need_run, need_qrels=need_qrels
    )


# -- field parsing -------------------------------------------------------------------------


class _Context:
    """Where a sample is, for error messages."""

    def __init__(self, source: str, line: int | None, index: int) -> None:
        self.source = source
        self.line = line
        self.index = index
        self.sid: str | None = None

    def error(self, field_name: str | None, reason: str) -> InputError:
        label = f"sample {self.index}"
        if self.sid is not None:
            label += f" (id {self.sid!r})"
        return InputError(
            f"{label}: {reason}", source=self.source, line=self.line, field=field_name
        )


def _key(keys: Mapping[str, Any], candidates: tuple[str, ...]) -> Any:
    for c in candidates:
        if c in keys:
            return keys[c]
    return None


def _one_key(keys: Mapping[str, Any], candidates: tuple[str, ...], ctx: _Context, role: str) -> Any:
    present = [keys[c] for c in candidates if c in keys]
    if len(present) > 1:
        raise ctx.error(
            str(present[0]),
            f"both {' and '.join(repr(str(p)) for p in present)} give the {role}; expected one",
        )
    return present[0] if present else None


def _as_id(value: Any, field_name: str, ctx: _Context) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        hint = (
            " (YAML reads yes/no/on/off as booleans: quote it)" if isinstance(value, bool) else ""
        )
        raise ctx.error(
            field_name, f"id is {describe(value)}; expected a string or an integer{hint}"
        )
    text = str(value)
    if not text or text != text.strip():
        raise ctx.error(
            field_name,
            f"id {text!r} is empty or padded with white space; expected a non-empty trimmed string",
        )
    return text


def _sample_id(record: Mapping[Any, Any], keys: Mapping[str, Any], ctx: _Context) -> str:
    key = _key(keys, ID_KEYS)
    if key is None:
        raise ctx.error("id", "no id; expected an 'id' field naming the sample (query)")
    return _as_id(record[key], str(key), ctx)


def _decode_json_string(value: str, field_name: str, ctx: _Context, expected: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ctx.error(
            field_name,
            f"is a string that is not valid JSON ({exc.msg} at column {exc.colno}); "
            f"expected {expected}",
        ) from None
    except RecursionError:
        raise ctx.error(field_name, f"is a string of {TOO_DEEP}; expected {expected}") from None


def _retrieved(value: Any, field_name: str, ctx: _Context) -> list[tuple[str, str | None]]:
    expected = '{"retrieved": [...]} or an array of ids'
    if isinstance(value, str):
        value = _decode_json_string(value, field_name, ctx, expected)
    path = field_name
    if isinstance(value, Mapping):
        keys = {_norm(k): k for k in value}
        lkey = _one_key(keys, LIST_KEYS, ctx, "retrieved list")
        if lkey is None:
            raise ctx.error(
                field_name,
                f"object has no 'retrieved' list (keys: "
                f"{', '.join(map(str, value)) or 'none'}); expected {expected}",
            )
        path = f"{field_name}.{lkey}"
        value = value[lkey]
    if not isinstance(value, list | tuple):
        raise ctx.error(path, f"is {describe(value)}; expected {expected}")
    out: list[tuple[str, str | None]] = []
    for i, item in enumerate(value):
        item_path = f"{path}[{i}]"
        if isinstance(item, Mapping):
            keys = {_norm(k): k for k in item}
            ikey = _one_key(keys, ITEM_ID_KEYS, ctx, "document id")
            if ikey is None:
                raise ctx.error(item_path, 'item has no \'id\'; expected {"id": ..., "text": ...}')
            doc = _as_id(item[ikey], f"{item_path}.{ikey}", ctx)
            tkey = _one_key(keys, ITEM_TEXT_KEYS, ctx, "passage text")
            text = None
            if tkey is not None and item[tkey] is not None:
                text = item[tkey]
                if not isinstance(text, str):
                    raise ctx.error(
                        f"{item_path}.{tkey}", f"is {describe(text)}; expected a string"
                    )
            out.append((doc, text))
        else:
            out.append((_as_id(item, item_path, ctx), None))
    return out


def _expected(value: Any, field_name: str, ctx: _Context) -> list[tuple[str, int]]:
    expected = "a list of relevant ids or an {id: gain} map"
    if isinstance(value, str):
        value = _decode_json_string(value, field_name, ctx, expected)
    if isinstance(value, Mapping):
        out = []
        for doc, gain in value.items():
            doc_id = _as_id(doc, f"{field_name}.{doc}", ctx)
            out.append((doc_id, _gain(gain, f"{field_name}.{doc_id}", ctx)))
        return out
    if isinstance(value, list | tuple):
        return [(_as_id(d, f"{field_name}[{i}]", ctx), 1) for i, d in enumerate(value)]
    raise ctx.error(field_name, f"is {describe(value)}; expected {expected}")


def _gain(value: Any, field_name: str, ctx: _Context) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ctx.error(field_name, f"gain is {describe(value)}; expected an integer")
    if isinstance(value, float) and not (np.isfinite(value) and value == int(value)):
        raise ctx.error(field_name, f"gain {value!r} is not an integer; expected an integer")
    gain = int(value)
    if abs(gain) >= 2**31 - 1:
        raise ctx.error(field_name, f"gain {gain} out of range; expected a 32-bit integer")
    return gain


def _cutoff(value: Any, field_name: str, ctx: _Context) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ctx.error(field_name, f"is {describe(value)}; expected a positive integer cutoff")
    return value


def _query_text(record: Mapping[Any, Any], keys: Mapping[str, Any], ctx: _Context) -> str | None:
    key = _key(keys, INPUT_KEYS)
    if key is None or record[key] is None:
        return None
    value = record[key]
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        inner = {_norm(k): k for k in value}
        qkey = _key(inner, QUESTION_KEYS)
        if qkey is None:
            return None
        text = value[qkey]
        if not isinstance(text, str):
            raise ctx.error(f"{key}.{qkey}", f"is {describe(text)}; expected a string")
        return text
    raise ctx.error(
        str(key), f"is {describe(value)}; expected a string or an object with 'question'"
    )
