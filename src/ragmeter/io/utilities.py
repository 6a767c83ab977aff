"""Per-passage utilities for UDCG (:mod:`ragmeter.metrics.udcg`).

``u(q, d) = 1 − P(no-response | q, d)``: how likely the LLM is to answer question q when
given passage d alone. Read from:

* whitespace text, one ``qid docid utility`` per line (``#`` starts a comment);
* JSON / JSONL rows ``{"query_id", "doc_id", "utility"}`` (also ``qid``/``docid``,
  ``no_res_prob`` instead of ``utility``: u = 1 − no_res_prob), or ``{qid: {doc: utility}}``;
* the reference implementation's data (Trappolini et al. 2025): ``[{"example_id",
  "question", "passages": [{"doc_id", "text", "is_relevant", "models_info": {MODEL:
  {"no_res_prob": p}}}]}]`` with ``model=MODEL``; the query id is ``example_id``. A passage
  without that model's ``no_res_prob`` gets no utility. :func:`reference_run_and_qrels` reads
  the passages (in order) as a run and ``is_relevant`` as qrels from the same file.

A utility must lie in [0, 1]; a (query, doc) pair given twice is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, decode, format_suffix, read_bytes

FloatArray = npt.NDArray[np.float64]
_SEP = "\x1f"


@dataclass(frozen=True, eq=False)
class Utilities:
    """Utility ``u(q, d)`` of (query, doc) pairs."""

    query_ids: pa.Array
    doc_ids: pa.Array
    values: FloatArray
    source: str = "<utilities>"

    @classmethod
    def from_rows(cls, rows: list[tuple[str, str, float]], *, source: str = "<rows>") -> Utilities:
        seen: set[tuple[str, str]] = set()
        for q, d, u in rows:
            if not (0.0 <= u <= 1.0):
                raise InputError(
                    f"query '{q}', doc '{d}': utility {u!r} is outside [0, 1]", source=source
                )
            if (q, d) in seen:
                raise InputError(f"query '{q}', doc '{d}': utility given twice", source=source)
            seen.add((q, d))
        return cls(
            pa.array([r[0] for r in rows], type=pa.string()),
            pa.array([r[1] for r in rows], type=pa.string()),
            np.array([r[2] for r in rows], dtype=np.float64),
            source,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, float]]) -> Utilities:
        """Utilities from ``{qid: {doc_id: utility}}``."""
        rows = [(str(q), str(d), float(u)) for q, docs in data.items() for d, u in docs.items()]
        return cls.from_rows(rows, source="<dict>")

    def lookup(self, query_ids: Any, doc_ids: pa.Array) -> FloatArray:
        """Utility of each (query, doc) pair; NaN where none is given."""
        import pyarrow.compute as pc

        if not len(doc_ids):
            return np.zeros(0, dtype=np.float64)
        queries = pa.array(list(query_ids), type=pa.large_string())
        sep = pa.scalar(_SEP, type=pa.large_string())
        keys = pc.binary_join_element_wise(queries, doc_ids.cast(pa.large_string()), sep)
        known = pc.binary_join_element_wise(
            self.query_ids.cast(pa.large_string()), self.doc_ids.cast(pa.large_string()), sep
        )
        pos = pc.index_in(keys, value_set=known)
        found = ~pos.is_null().to_numpy(zero_copy_only=False)
        out = np.full(len(doc_ids), np.nan, dtype=np.float64)
        out[found] = self.values[pos.to_numpy(zero_copy_only=False)[found].astype(np.int64)]
        return out


def read_utilities(path: PathLike, *, model: str | None = None) -> Utilities:
    """Read utilities (see the module docstring); ``model`` selects the reference format's
    ``no_res_prob``."""
    source = str(path)
    suffix = format_suffix(source)
    if suffix in (".json", ".jsonl"):
        from ragmeter.io._documents import load_json, load_jsonl

        doc = load_json(path) if suffix == ".json" else load_jsonl(path)
        if doc.records is None:
            if isinstance(doc.value, dict):
                return Utilities.from_rows(_nested_rows(doc.value, source), source=source)
            raise InputError("expected rows or {qid: {doc: utility}}", source=source)
        if doc.records and isinstance(doc.records[0][0], dict) and "passages" in doc.records[0][0]:
            return Utilities.from_rows(_reference_rows(doc.records, model, source), source=source)
        return Utilities.from_rows(_row_records(doc.records, source), source=source)
    text = decode(read_bytes(path), source)
    rows: list[tuple[str, str, float]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].split()
        if not body:
            continue
        if len(body) != 3:
            raise InputError(
                f"expected 'qid docid utility', got {len(body)} fields", source=source, line=n
            )
        rows.append((body[0], body[1], _number(body[2], source, n)))
    return Utilities.from_rows(rows, source=source)


def _number(value: Any, source: str, line: int | None, what: str = "utility") -> float:
    if isinstance(value, bool):
        raise InputError(f"{what} {value!r} is not a number", source=source, line=line)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} {value!r} is not a number", source=source, line=line) from None
    if not 0.0 <= number <= 1.0:  # here, where the line is known (NaN included)
        raise InputError(f"{what} {value!r} is outside [0, 1]", source=source, line=line)
    return number


def _nested_rows(value: dict[str, Any], source: str) -> list[tuple[str, str, float]]:
    rows: list[tuple[str, str, float]] = []
    for q, docs in value.items():
        if not isinstance(docs, dict):
            raise InputError(f"query '{q}': expected {{doc: utility}}", source=source)
        rows.extend((str(q), str(d), _number(u, source, None)) for d, u in docs.items())
    return rows


def _field(record: dict[str, Any], names: tuple[str, ...]) -> Any:
    for n in names:
        if n in record:
            return record[n]
    return None


def _row_records(
    records: list[tuple[Any, int | None]], source: str
) -> list[tuple[str, str, float]]:
    rows = []
    for record, line in records:
        if not isinstance(record, dict):
            raise InputError("expected an object per row", source=source, line=line)
        q = _field(record, ("query_id", "qid", "example_id"))
        d = _field(record, ("doc_id", "docid", "docno", "id"))
        if q is None or d is None:
            raise InputError("row without query_id or doc_id", source=source, line=line)
        if "utility" in record:
            u = _number(record["utility"], source, line)
        elif "no_res_prob" in record:
            u = 1.0 - _number(record["no_res_prob"], source, line, "no_res_prob")
        else:
            raise InputError("row without utility (or no_res_prob)", source=source, line=line)
        rows.append((str(q), str(d), u))
    return rows


def _examples(
    records: list[tuple[Any, int | None]], source: str
) -> list[tuple[str, list[dict[str, Any]], int | None]]:
    out = []
    for record, line in records:
        if not isinstance(record, dict) or not isinstance(record.get("passages"), list):
            raise InputError("expected an example with a 'passages' list", source=source, line=line)
        if record.get("example_id") is None:
            raise InputError("example without 'example_id'", source=source, line=line)
        passages = record["passages"]
        for i, p in enumerate(passages):
            if not isinstance(p, dict) or p.get("doc_id") is None:
                raise InputError(
                    f"example '{record['example_id']}', passage {i + 1}: no 'doc_id'",
                    source=source,
                    line=line,
                )
        out.append((str(record["example_id"]), passages, line))
    return out


def _reference_rows(
    records: list[tuple[Any, int | None]], model: str | None, source: str
) -> list[tuple[str, str, float]]:
    examples = _examples(records, source)
    models = sorted({m for _, ps, _ in examples for p in ps for m in (p.get("models_info") or {})})
    if model is None:
        raise InputError(
            f"reference-format utilities need a model (--udcg-model); found {models}",
            source=source,
        )
    if model not in models:
        raise InputError(f"no passage has model '{model}'; found {models}", source=source)
    rows = []
    for qid, passages, line in examples:
        for p in passages:
            info = (p.get("models_info") or {}).get(model) or {}
            if info.get("no_res_prob") is not None:
                rows.append(
                    (
                        qid,
                        str(p["doc_id"]),
                        1.0 - _number(info["no_res_prob"], source, line, "no_res_prob"),
                    )
                )
    return rows


def reference_run_and_qrels(path: PathLike) -> tuple[Run, Qrels]:
    """The reference format's passages as a run (given order) and ``is_relevant`` as qrels
    (grade 1 / 0), to reproduce its scores: ``udcg@K`` with K ≥ the number of passages."""
    from ragmeter.io._documents import load_json

    source = str(path)
    doc = load_json(path)
    if doc.records is None:
        raise InputError("expected a list of examples", source=source)
    examples = _examples(doc.records, source)
    run = Run.from_lists(
        {q: [str(p["doc_id"]) for p in ps] for q, ps, _ in examples}, source=source
    )
    qrels = Qrels.from_dict(
        {
            q: {str(p["doc_id"]): int(bool(p.get("is_relevant"))) for p in ps}
            for q, ps, _ in examples
        },
        source=source,
    )
    return run, qrels
