"""RAGAS and DeepEval datasets, read as they are written.

A RAGAS row (``EvaluationDataset``'s single-turn sample, as ``to_jsonl``/``to_csv``/
``to_pandas`` writes it, or a Hugging Face dataset's row)::

    {"user_input": "...", "retrieved_contexts": ["...", ...], "retrieved_context_ids": [...],
     "reference_contexts": ["...", ...], "reference_context_ids": [...],
     "response": "...", "reference": "..."}

A DeepEval row (``LLMTestCase``'s fields)::

    {"input": "...", "actual_output": "...", "expected_output": "...",
     "retrieval_context": ["...", ...], "context": ["...", ...]}

Each row becomes one sample (:mod:`ragmeter.io.samples`), its id the row's ``id`` /
``query_id`` / ``qid`` / ``sample_id`` column when it has one, else its 1-based row number:

* **ids** (``retrieved_context_ids``, ``reference_context_ids``) are used directly: the
  retrieved ids in the given order are the ranking, the reference ids the relevant passages
  (grade 1); ``retrieved_contexts`` of the same length are their texts.
* **texts only** (``retrieved_contexts``, ``reference_contexts``; DeepEval's
  ``retrieval_context``, ``context``): a passage is identified by its text after
  normalisation (Unicode NFKC, case folded, runs of white space as one space, trimmed), so a
  retrieved passage is relevant when its text equals a reference passage's exactly. The
  reference passages no retrieved passage equals are counted in a warning: with texts, a
  relevant passage retrieved in another chunking counts as not retrieved.
* **answers**: ``user_input``/``input`` is the query, ``response``/``actual_output`` the
  generated answer, ``reference``/``expected_output`` the reference answer — the inputs of
  the answer metrics (``ragmeter answers``).

List columns may be lists (JSON, Parquet) or strings holding a JSON or Python list (what
``DataFrame.to_csv`` writes).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragmeter.errors import InputError

DatasetKind = Literal["ragas", "deepeval"]


def _norm_key(key: Any) -> str:
    return str(key).lower().replace("_", "").replace("-", "").replace(" ", "")


#: columns (normalised as sample keys are) that only RAGAS' single-turn samples have
RAGAS_MARKERS = frozenset(
    {"userinput", "retrievedcontexts", "retrievedcontextids", "referencecontexts",
     "referencecontextids"}
)  # fmt: skip
#: DeepEval's retrieval column: its actual_output/expected_output are answers, not ids
DEEPEVAL_MARKERS = frozenset({"retrievalcontext"})
ROW_ID_KEYS = ("id", "sampleid", "queryid", "qid")


def dataset_kind(record: Any) -> DatasetKind | None:
    """``"ragas"`` or ``"deepeval"`` when ``record`` is a row of such a dataset."""
    if not isinstance(record, Mapping):
        return None
    keys = {_norm_key(k) for k in record}
    if keys & DEEPEVAL_MARKERS:
        return "deepeval"
    if keys & RAGAS_MARKERS:
        return "ragas"
    return None


_SPACE = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    """The form texts are matched in: NFKC, case folded, white space runs as one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def text_id(text: str) -> str:
    """A passage id for a text: the first 16 hex digits of the SHA-1 of its normal form."""
    return "text:" + hashlib.sha1(normalise_text(text).encode("utf-8")).hexdigest()[:16]


@dataclass
class _Row:
    """Where a row is, for messages."""

    source: str
    line: int | None
    index: int

    def error(self, field: str, reason: str) -> InputError:
        return InputError(
            f"row {self.index}: {reason}", source=self.source, line=self.line, field=field
        )


def _field(record: Mapping[Any, Any], *names: str) -> tuple[str, Any] | None:
    keys = {_norm_key(k): k for k in record}
    for name in names:
        key = keys.get(_norm_key(name))
        if key is not None and record[key] is not None:
            return str(key), record[key]
    return None


def _strings(value: Any, field: str, row: _Row, *, ids: bool = False) -> list[str]:
    """A list column: a list, or a string holding a JSON or Python list."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise row.error(field, "is a string that is not a JSON or Python list") from None
        except RecursionError:
            raise row.error(field, "is a string of a list nested too deeply") from None
    if hasattr(value, "tolist"):  # a numpy array from a Parquet list column
        value = value.tolist()
    if not isinstance(value, list | tuple):
        raise row.error(field, f"is {type(value).__name__}; expected a list")
    out: list[str] = []
    for i, item in enumerate(value):
        if ids and isinstance(item, int) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str):
            raise row.error(f"{field}[{i}]", f"is {type(item).__name__}; expected a string")
        out.append(item)
    return out


def _text(record: Mapping[Any, Any], row: _Row, *names: str) -> str | None:
    found = _field(record, *names)
    if found is None:
        return None
    field, value = found
    if not isinstance(value, str):
        raise row.error(field, f"is {type(value).__name__}; expected a string")
    return value


@dataclass
class Adapted:
    """Rows as samples (:mod:`ragmeter.io.samples` records) and what matching texts found."""

    records: list[tuple[dict[str, Any], int | None]]
    references: int = 0
    unmatched: int = 0
    by_text: int = 0

    def warnings(self, source: str) -> list[str]:
        if not self.by_text or not self.unmatched:
            return []
        return [
            f"{source}: {self.unmatched} of {self.references} reference context(s) equal no "
            "retrieved context (texts matched exactly after normalising case and white "
            "space); they count as relevant passages not retrieved"
        ]


_COLUMNS: dict[DatasetKind, dict[str, tuple[str, ...]]] = {
    "ragas": {
        "query": ("user_input",),
        "retrieved_texts": ("retrieved_contexts",),
        "retrieved_ids": ("retrieved_context_ids",),
        "reference_texts": ("reference_contexts",),
        "reference_ids": ("reference_context_ids",),
        "answer": ("response",),
        "reference": ("reference",),
    },
    "deepeval": {
        "query": ("input",),
        "retrieved_texts": ("retrieval_context",),
        "retrieved_ids": ("retrieval_context_ids",),
        "reference_texts": ("context",),
        "reference_ids": ("context_ids",),
        "answer": ("actual_output",),
        "reference": ("expected_output",),
    },
}


def adapt_records(
    records: Sequence[tuple[Any, int | None]], *, source: str, need_retrieved: bool = True
) -> Adapted:
    """RAGAS or DeepEval rows (``(row, line)`` pairs) as sample records (``need_retrieved``:
    a row without retrieved passages is an error)."""
    kind = dataset_kind(records[0][0]) if records else None
    if kind is None:
        raise InputError("not a RAGAS or DeepEval dataset", source=source)
    out = Adapted(records=[])
    for index, (record, line) in enumerate(records, start=1):
        row = _Row(source, line, index)
        if not isinstance(record, Mapping):
            raise row.error("", f"is {type(record).__name__}; expected an object")
        out.records.append((_adapt(record, kind, row, out, need_retrieved), line))
    return out


def _list(
    record: Mapping[Any, Any], names: tuple[str, ...], row: _Row, *, ids: bool
) -> list[str] | None:
    found = _field(record, *names)
    return None if found is None else _strings(found[1], found[0], row, ids=ids)


def _adapt(
    record: Mapping[Any, Any], kind: DatasetKind, row: _Row, out: Adapted, need_retrieved: bool
) -> dict[str, Any]:
    cols = _COLUMNS[kind]
    found_id = _field(record, *ROW_ID_KEYS)
    sample: dict[str, Any] = {"id": found_id[1] if found_id else str(row.index)}
    ret_ids = _list(record, cols["retrieved_ids"], row, ids=True)
    ret_texts = _list(record, cols["retrieved_texts"], row, ids=False)
    ref_ids = _list(record, cols["reference_ids"], row, ids=True)
    ref_texts = _list(record, cols["reference_texts"], row, ids=False)
    if ret_ids is not None:
        texts = ret_texts if ret_texts is not None and len(ret_texts) == len(ret_ids) else None
        sample["retrieved"] = [
            {"id": d, **({"text": texts[i]} if texts else {})} for i, d in enumerate(ret_ids)
        ]
    elif ret_texts is not None:
        sample["retrieved"] = _unique([{"id": text_id(t), "text": t} for t in ret_texts])
    elif need_retrieved:
        name = cols["retrieved_ids"][0] + "' or '" + cols["retrieved_texts"][0]
        raise row.error(cols["retrieved_texts"][0], f"no retrieved passages; expected '{name}'")
    if ref_ids is not None:
        sample["expected_output"] = list(dict.fromkeys(ref_ids))
    elif ref_texts is not None:
        relevant = list(dict.fromkeys(text_id(t) for t in ref_texts))
        retrieved = {item["id"] for item in sample.get("retrieved", [])}
        out.by_text += 1
        out.references += len(relevant)
        out.unmatched += sum(1 for d in relevant if d not in retrieved)
        sample["expected_output"] = relevant
    for field, key in (("query", "question"), ("answer", "answer"), ("reference", "reference")):
        value = _text(record, row, *cols[field])
        if value is not None:
            sample[key] = value
    return sample


def _unique(items: list[dict[str, str]]) -> list[dict[str, str]]:
    """Drop a repeated passage (same normalised text), keeping its first rank."""
    seen: set[str] = set()
    out = []
    for item in items:
        if item["id"] not in seen:
            seen.add(item["id"])
            out.append(item)
    return out
