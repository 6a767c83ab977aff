"""Answer samples (the seed-001 format) for ``ragmeter answers``.

A JSON file holds a list of samples (or ``{"samples": [...]}``), each::

    {"query": "user question",
     "context": ["RAG chunk 1", "Memory short 1", ...],
     "generated_answer": "the LLM's answer",
     "reference_answer": "the ground truth answer",
     "label": 1,                        # optional: human label, 1 = correct, 0 = incorrect
     "id": "q-1",                       # optional: string or integer
     "retrieved": ["text", ...],        # optional: ranked texts (strings or {"text": ...})
     "timings": {"embed": 0.01, "retrieve": 0.02, "rerank": 0.0, "generate": 0.9}}
                                        # optional: seconds per stage (and "total")

A missing required field or a wrong type is an :class:`~ragmeter.errors.InputError` naming
the file, the sample (its 0-based index and its id when it has one) and the field.

A RAGAS or DeepEval dataset (JSON, JSONL, CSV, TSV or Parquet; :mod:`ragmeter.io.ragas`) is
read too: ``user_input``/``input`` is the query, ``response``/``actual_output`` the generated
answer, ``reference``/``expected_output`` the reference answer and the retrieved contexts the
context.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io._common import check_text, decode, describe, read_bytes
from ragmeter.io._documents import too_deep
from ragmeter.io.ragas import adapt_records, dataset_kind

#: the pipeline stages a sample's timings may record (seconds)
STAGES: tuple[str, ...] = ("embed", "retrieve", "rerank", "generate")
_REQUIRED_TEXT = ("query", "generated_answer", "reference_answer")
_TIMING_KEYS = (*STAGES, "total")


@dataclass(frozen=True)
class AnswerSample:
    """One sample; ``id`` is the given id or the 0-based index as a string."""

    id: str
    query: str
    context: tuple[str, ...]
    generated_answer: str
    reference_answer: str
    label: int | None = None
    retrieved: tuple[str, ...] | None = None
    timings: dict[str, float | None] | None = None


class _Where:
    def __init__(self, source: str, index: int, sample_id: str | None) -> None:
        self.source = source
        self.index = index
        self.sample_id = sample_id

    def error(self, field: str, reason: str) -> InputError:
        who = f"sample [{self.index}]"
        if self.sample_id is not None:
            who += f" (id {self.sample_id!r})"
        return InputError(f"{who}: {reason}", source=self.source, field=field)


#: extensions read as RAGAS/DeepEval tables or lines rather than one JSON document
_ROW_FILES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv"}
_ROW_FILES |= {".parquet": "parquet", ".pq": "parquet"}


def read_answer_samples(path: str | os.PathLike[str]) -> list[AnswerSample]:
    """Read and validate an answer samples file (or a RAGAS/DeepEval dataset)."""
    source = str(path)
    kind = _ROW_FILES.get(os.path.splitext(source)[1].lower())
    if kind is not None:
        return _dataset_answer_samples(path, kind)
    data = read_bytes(path, lines=False)  # one JSON document
    check_text(data, source, what="a JSON list of answer samples")
    text = decode(data, source)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", source=source, line=exc.lineno) from None
    except RecursionError:
        raise too_deep(source, expected="a JSON list of answer samples") from None
    rows = doc["samples"] if isinstance(doc, dict) and "samples" in doc else doc
    if isinstance(rows, list) and rows and dataset_kind(rows[0]) is not None:
        return answer_samples_from_dataset([(r, None) for r in rows], source=source)
    return answer_samples_from_records(doc, source=source)


def _dataset_answer_samples(path: str | os.PathLike[str], kind: str) -> list[AnswerSample]:
    source = str(path)
    if kind == "jsonl":
        from ragmeter.io._documents import load_jsonl

        records = load_jsonl(path).records or []
    else:
        from ragmeter.io.tabular import _rag_rows

        found = _rag_rows(path, kind)  # type: ignore[arg-type]
        if found is None:
            raise InputError(
                "not a RAGAS or DeepEval dataset (no user_input / retrieved_contexts / "
                "retrieval_context column); answer samples in a table must be one",
                source=source,
            )
        records = found
    if not records or dataset_kind(records[0][0]) is None:
        raise InputError(
            "not a RAGAS or DeepEval dataset; JSON Lines answer samples must be one",
            source=source,
        )
    return answer_samples_from_dataset(records, source=source)


def answer_samples_from_dataset(
    records: list[tuple[Any, int | None]], *, source: str
) -> list[AnswerSample]:
    """Answer samples from RAGAS or DeepEval rows (``(row, line)`` pairs)."""
    adapted = adapt_records(records, source=source, need_retrieved=False)
    out: list[AnswerSample] = []
    for index, (sample, line) in enumerate(adapted.records):
        texts: dict[str, str] = {}
        for key, what in (
            ("question", "user_input/input (the query)"),
            ("answer", "response/actual_output (the generated answer)"),
            ("reference", "reference/expected_output (the reference answer)"),
        ):
            if key not in sample:
                raise InputError(
                    f"row {index + 1}: no {what}", source=source, line=line, field=what.split()[0]
                )
            texts[key] = sample[key]
        context = tuple(item["text"] for item in sample.get("retrieved", []) if "text" in item)
        out.append(
            AnswerSample(
                id=str(sample["id"]),
                query=texts["question"],
                context=context,
                generated_answer=texts["answer"],
                reference_answer=texts["reference"],
                retrieved=context or None,
            )
        )
    return out


def answer_samples_from_records(doc: Any, *, source: str = "<records>") -> list[AnswerSample]:
    """Validate parsed JSON (a list of samples or ``{"samples": [...]}``)."""
    if isinstance(doc, dict) and "samples" in doc:
        doc = doc["samples"]
    if not isinstance(doc, list):
        raise InputError(f"expected a JSON list of samples, got {describe(doc)}", source=source)
    if not doc:
        raise InputError("no samples; expected at least one", source=source)
    samples = [_sample(rec, i, source) for i, rec in enumerate(doc)]
    seen: dict[str, int] = {}
    for i, s in enumerate(samples):
        if s.id in seen:
            raise _Where(source, i, s.id).error("id", f"duplicate id (also sample [{seen[s.id]}])")
        seen[s.id] = i
    return samples


def _sample(rec: Any, index: int, source: str) -> AnswerSample:
    if not isinstance(rec, dict):
        raise InputError(
            f"sample [{index}]: expected an object, got {describe(rec)}", source=source
        )
    raw_id = rec.get("id")
    where = _Where(source, index, None)
    if raw_id is not None:
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            raise where.error("id", f"expected a string or an integer, got {describe(raw_id)}")
        where = _Where(source, index, str(raw_id))
    texts: dict[str, str] = {}
    for name in _REQUIRED_TEXT:
        if name not in rec:
            raise where.error(name, "missing; expected a string")
        value = rec[name]
        if not isinstance(value, str):
            raise where.error(name, f"expected a string, got {describe(value)}")
        texts[name] = value
    if "context" not in rec:
        raise where.error("context", "missing; expected an array of strings")
    context = _strings(rec["context"], "context", where)
    label = _label(rec.get("label"), where)
    retrieved = None
    if rec.get("retrieved") is not None:
        retrieved = _strings(rec["retrieved"], "retrieved", where, allow_objects=True)
    timings = _timings(rec.get("timings"), where)
    return AnswerSample(
        id=where.sample_id if where.sample_id is not None else str(index),
        query=texts["query"],
        context=context,
        generated_answer=texts["generated_answer"],
        reference_answer=texts["reference_answer"],
        label=label,
        retrieved=retrieved,
        timings=timings,
    )


def _strings(
    value: Any, field: str, where: _Where, *, allow_objects: bool = False
) -> tuple[str, ...]:
    expected = "an array of strings" + (' or of {"text": ...} objects' if allow_objects else "")
    if not isinstance(value, list):
        raise where.error(field, f"expected {expected}, got {describe(value)}")
    out: list[str] = []
    for j, item in enumerate(value):
        if allow_objects and isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(item["text"])
        elif isinstance(item, str):
            out.append(item)
        else:
            raise where.error(f"{field}[{j}]", f"expected {expected}, got {describe(item)}")
    return tuple(out)


def _label(value: Any, where: _Where) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    raise where.error("label", f"expected 0 or 1, got {json.dumps(value)}")


def _timings(value: Any, where: _Where) -> dict[str, float | None] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise where.error("timings", f"expected an object of seconds, got {describe(value)}")
    out: dict[str, float | None] = {}
    for key, v in value.items():
        if key not in _TIMING_KEYS:
            raise where.error(
                f"timings.{key}", f"unknown stage; expected one of {', '.join(_TIMING_KEYS)}"
            )
        if v is None:
            out[key] = None
            continue
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise where.error(f"timings.{key}", f"expected seconds (a number), got {describe(v)}")
        if not math.isfinite(v) or v < 0:
            raise where.error(f"timings.{key}", f"expected non-negative seconds, got {v}")
        out[key] = float(v)
    return out
