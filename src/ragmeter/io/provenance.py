"""The label provenance sidecar: who made each label of a label file.

A label file ``PATH`` (TREC qrels, judgments JSONL …) written by ragmeter has beside it
``PATH.provenance.jsonl``:

- line 1, the header: ``{"ragmeter_label_provenance": 1, "sources": {ID: SOURCE, …},
  "default": ID or null}`` — each SOURCE as :meth:`ragmeter.core.provenance.LabelSource.to_json`
  writes it (``{"kind": "judge", "model": …, "host": …, "prompt_id": …, "prompt_sha256": …}``
  or ``{"kind": "human", "annotator": …}``);
- then one line per pair whose source is not the default: ``{"query_id": Q, "doc_id": D,
  "source": ID}``.

A label file without a sidecar has labels of unknown origin (``None`` from
:func:`read_provenance`): ragmeter never claims they are human.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragmeter.core.provenance import LabelProvenance, LabelSource, Pair
from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, atomic_write_text, is_special_file

SUFFIX = ".provenance.jsonl"
FORMAT_KEY = "ragmeter_label_provenance"
FORMAT_VERSION = 1


def provenance_path(labels_path: PathLike) -> Path:
    """The sidecar of the label file ``labels_path``."""
    path = Path(labels_path)
    return path.with_name(path.name + SUFFIX)


def format_provenance(provenance: LabelProvenance) -> str:
    """The text of the sidecar of ``provenance`` (what :func:`write_provenance` writes)."""
    header = {
        FORMAT_KEY: FORMAT_VERSION,
        "sources": {sid: src.to_json() for sid, src in provenance.sources.items()},
        "default": provenance.default,
    }
    lines = [json.dumps(header, ensure_ascii=False, sort_keys=True)]
    lines.extend(
        json.dumps({"query_id": q, "doc_id": d, "source": sid}, ensure_ascii=False)
        for (q, d), sid in provenance.pairs.items()
        if sid != provenance.default
    )
    return "\n".join(lines) + "\n"


def write_provenance(labels_path: PathLike, provenance: LabelProvenance) -> Path | None:
    """Write the sidecar of ``labels_path`` atomically; returns its path — ``None``, and
    nothing written, when the labels went to a device or FIFO (``-o /dev/null``, a pipe)."""
    if is_special_file(labels_path):
        return None
    target = provenance_path(labels_path)
    atomic_write_text(target, format_provenance(provenance))
    return target


def carry_provenance(source: PathLike, target: PathLike) -> Path | None:
    """Give the label file ``target``, derived label by label from ``source`` (the same
    (query, doc) pairs, e.g. CRUX qrels from sub-question ratings), the sidecar of
    ``source``; returns its path, or ``None`` when ``source`` has none (its labels, and so
    the derived ones, are of unknown origin: nothing is written, and a stale sidecar beside
    ``target`` is removed rather than left to claim otherwise)."""
    provenance = read_provenance(source)
    if provenance is None:
        provenance_path(target).unlink(missing_ok=True)
        return None
    return write_provenance(target, provenance)


def read_provenance(labels_path: PathLike) -> LabelProvenance | None:
    """The provenance of the label file ``labels_path``; ``None`` without a sidecar.

    Errors name the sidecar, the line and the field."""
    path = provenance_path(labels_path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the label provenance: {exc}", source=str(path)) from None
    rows = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not rows:
        raise InputError("empty label provenance file", source=str(path))
    header = _json(rows[0][1], path, rows[0][0])
    if header.get(FORMAT_KEY) != FORMAT_VERSION:
        raise InputError(
            f"field {FORMAT_KEY!r}: expected {FORMAT_VERSION} (a provenance file of this "
            f"version of ragmeter), got {header.get(FORMAT_KEY)!r}",
            source=str(path),
            line=rows[0][0],
        )
    sources = _sources(header.get("sources"), path, rows[0][0])
    pairs: dict[Pair, str] = {}
    for n, line in rows[1:]:
        record = _json(line, path, n)
        query_id, doc_id, sid = (
            _string(record, k, path, n) for k in ("query_id", "doc_id", "source")
        )
        if sid not in sources:
            raise InputError(
                f"field 'source': {sid!r} is not among the header's sources",
                source=str(path),
                line=n,
            )
        pairs[(query_id, doc_id)] = sid
    default = header.get("default")
    if default is not None and default not in sources:
        raise InputError(
            f"field 'default': {default!r} is not among the sources", source=str(path), line=1
        )
    return LabelProvenance(sources=sources, pairs=pairs, default=default)


def _json(line: str, path: Path, n: int) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", source=str(path), line=n) from None
    if not isinstance(value, dict):
        raise InputError("expected a JSON object", source=str(path), line=n)
    return value


def _string(record: dict[str, Any], key: str, path: Path, n: int) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise InputError(f"field {key!r}: expected a string", source=str(path), line=n)
    return value


def _sources(value: Any, path: Path, n: int) -> dict[str, LabelSource]:
    if not isinstance(value, dict) or not value:
        raise InputError("field 'sources': expected a non-empty object", source=str(path), line=n)
    out = {}
    for sid, raw in value.items():
        if not isinstance(raw, dict):
            raise InputError(f"field 'sources.{sid}': expected an object", source=str(path), line=n)
        try:
            out[sid] = LabelSource.from_json(raw)
        except (TypeError, ValueError) as exc:
            raise InputError(f"field 'sources.{sid}': {exc}", source=str(path), line=n) from None
    return out


__all__ = [
    "SUFFIX",
    "carry_provenance",
    "format_provenance",
    "provenance_path",
    "read_provenance",
    "write_provenance",
]
