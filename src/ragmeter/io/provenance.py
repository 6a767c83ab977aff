"""The label provenance sidecar: who made each label of a label file, bound to that file.

A label file ``PATH`` (TREC qrels, judgments JSONL …) written by ragmeter has beside it
``PATH.provenance.jsonl``:

- line 1, the header: ``{"ragmeter_label_provenance": 1, "sources": {ID: SOURCE, …},
  "default": ID or null, "labels": {"rows": "qrels", "n": N, "sha256": H}, "pairs": {"rows":
  "pairs", "n": M, "sha256": H2}}`` (and optionally ``"note"``) — each SOURCE as
  :meth:`ragmeter.core.provenance.LabelSource.to_json` writes it (``{"kind": "judge", "model":
  …, "host": …, "prompt_id": …, "prompt_sha256": …}`` or ``{"kind": "human", "annotator": …}``);
- then one line per pair whose source is not the default: ``{"query_id": Q, "doc_id": D,
  "source": ID}``.

``labels`` binds the sidecar to the label file: the count and
:func:`ragmeter.core.provenance.rows_digest` of its labels — ``rows`` says what was hashed:
``qrels``, the (query, doc, grade) triples (any qrels format), or ``records``, each non-blank
line of any other label file (sub-question ratings, nugget assignments, utilities) as
canonical JSON (keys sorted, no spaces) or, not JSON, with its whitespace collapsed.
``pairs`` is the digest of the pair lines that follow the header ((query, doc, source id)
rows), so a sidecar cut or edited after it was written is caught.

:func:`read_provenance` checks both against the file beside it. A sidecar without them
(written by hand or by an older ragmeter) or whose digests do not match gives a provenance
whose ``unverified`` says why: its claims are shown as such by every view and the
calibration gate refuses the labels (``docs/labels-in-outputs.md``).

A label file without a sidecar has labels of unknown origin (``None`` from
:func:`read_provenance`): ragmeter never claims they are human.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, atomic_write_text, is_special_file

if TYPE_CHECKING:
    from ragmeter.core.provenance import LabelProvenance, LabelSource, Pair, RowsDigest, RowsKind

# ragmeter.core.provenance (its dataclasses: ≈ 4 ms at every start) is imported where a
# sidecar is read or written: an evaluation of qrels without one never needs it

SUFFIX = ".provenance.jsonl"
FORMAT_KEY = "ragmeter_label_provenance"
FORMAT_VERSION = 1
#: what an old or hand-written sidecar lacks, said in the labels line
NO_DIGEST = "the sidecar records no hash of its labels: written by hand or by an older ragmeter"


def provenance_path(labels_path: PathLike) -> Path:
    """The sidecar of the label file ``labels_path``."""
    path = Path(labels_path)
    return path.with_name(path.name + SUFFIX)


def pairs_digest(provenance: LabelProvenance) -> RowsDigest:
    """The digest of the pair lines a sidecar of ``provenance`` holds (its pairs whose
    source is not the default)."""
    from ragmeter.core.provenance import rows_digest

    return rows_digest(
        "pairs",
        ((q, d, sid) for (q, d), sid in provenance.pairs.items() if sid != provenance.default),
    )


def label_rows(text: str, kind: RowsKind, source: str) -> Iterator[tuple[str | int, ...]]:
    """The rows of a label file's ``text`` that :func:`label_digest` hashes (module
    docstring): (query, doc, grade) for ``qrels`` (TREC text), one canonical line for
    ``records``."""
    if kind == "qrels":
        from ragmeter.io.trec import parse_trec_qrels

        qrels = parse_trec_qrels(text.encode("utf-8"), source=source, name=source)
        yield from _qrels_rows(qrels)
        return
    for line in text.splitlines():
        if line.strip():
            yield (_canonical_record(line),)


def _qrels_rows(qrels: Any) -> Iterator[tuple[str | int, ...]]:
    for q, docs in qrels.to_dict().items():
        for d, g in docs.items():
            yield (str(q), str(d), int(g))


def _canonical_record(line: str) -> str:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # not JSON: the line, whitespace collapsed
        return " ".join(line.split())
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


#: digests by (kind, SHA-256 of the file's bytes): a file read again is not parsed again
_DIGESTS: dict[tuple[str, str], RowsDigest] = {}
_MAX_REMEMBERED = 64


def label_digest(labels_path: PathLike, kind: RowsKind = "qrels") -> RowsDigest:
    """The digest of the labels in the file ``labels_path`` (read with
    :func:`ragmeter.io.readers.read_qrels` for ``qrels``, line by line for ``records``).
    Remembered by the hash of the file's bytes — not by its modification time, which two
    writes within one clock tick share — so only parsing is saved, never a change missed."""
    import hashlib  # here: OpenSSL loads only where a digest is made (not at every start)

    from ragmeter.core.provenance import rows_digest

    path = Path(labels_path)
    try:
        raw = path.read_bytes() if path.is_file() else None
    except OSError as exc:
        raise InputError(f"cannot read the labels: {exc.strerror}", source=str(path)) from None
    key = None if raw is None else (kind, hashlib.sha256(raw).hexdigest())
    if key is not None and key in _DIGESTS:
        return _DIGESTS[key]
    if raw is not None and not raw.strip():  # an empty label file (no pair labelled) holds none
        return rows_digest(kind, [])
    if kind == "qrels":
        from ragmeter.io.readers import read_qrels

        digest = rows_digest("qrels", _qrels_rows(read_qrels(path)))  # any format, a folder
    else:
        try:
            text = (raw if raw is not None else path.read_bytes()).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the labels: {exc}", source=str(path)) from None
        digest = rows_digest(kind, label_rows(text, kind, str(path)))
    if key is not None:
        if len(_DIGESTS) >= _MAX_REMEMBERED:
            _DIGESTS.clear()
        _DIGESTS[key] = digest
    return digest


def format_provenance(provenance: LabelProvenance, labels: RowsDigest) -> str:
    """The text of the sidecar of ``provenance`` for labels of digest ``labels`` (what
    :func:`write_provenance` writes)."""
    header: dict[str, Any] = {
        FORMAT_KEY: FORMAT_VERSION,
        "sources": {sid: src.to_json() for sid, src in provenance.sources.items()},
        "default": provenance.default,
        "labels": labels.to_json(),
        "pairs": pairs_digest(provenance).to_json(),
    }
    if provenance.note is not None:
        header["note"] = provenance.note
    lines = [json.dumps(header, ensure_ascii=False, sort_keys=True)]
    lines.extend(
        json.dumps({"query_id": q, "doc_id": d, "source": sid}, ensure_ascii=False)
        for (q, d), sid in provenance.pairs.items()
        if sid != provenance.default
    )
    return "\n".join(lines) + "\n"


def write_provenance(
    labels_path: PathLike, provenance: LabelProvenance, *, rows: RowsKind = "qrels"
) -> Path | None:
    """Write the sidecar of the label file ``labels_path`` (already written) atomically, with
    the digest of its labels (``rows``: what they are, module docstring); returns its path —
    ``None``, and nothing written, when the labels went to a device or FIFO (``-o
    /dev/null``, a pipe)."""
    if is_special_file(labels_path):
        return None
    target = provenance_path(labels_path)
    atomic_write_text(target, format_provenance(provenance, label_digest(labels_path, rows)))
    return target


def carry_provenance(
    source: PathLike, target: PathLike, *, rows: RowsKind = "qrels"
) -> Path | None:
    """Give the label file ``target``, derived label by label from ``source`` (the same
    (query, doc) pairs, e.g. CRUX qrels from sub-question ratings), the sidecar of
    ``source``; returns its path, or ``None`` when ``source`` has none (its labels, and so
    the derived ones, are of unknown origin: nothing is written, and a stale sidecar beside
    ``target`` is removed rather than left to claim otherwise). An unverified sidecar of
    ``source`` is refused (:func:`require_verified`): the derived file's would vouch for it."""
    provenance = read_provenance(source)
    if provenance is None:
        provenance_path(target).unlink(missing_ok=True)
        return None
    require_verified(provenance, source)
    return write_provenance(target, provenance, rows=rows)


def require_verified(provenance: LabelProvenance, labels_path: PathLike) -> None:
    """Refuse, naming the sidecar, a provenance whose sidecar does not prove it describes
    ``labels_path`` (before building on its claims: merging, deriving, calibrating)."""
    if provenance.unverified is not None:
        raise InputError(
            f"unverified provenance: {provenance.unverified}; write the labels again with "
            "ragmeter, or remove the sidecar (the labels are then of unknown origin)",
            source=str(provenance_path(labels_path)),
        )


def read_provenance(labels_path: PathLike) -> LabelProvenance | None:
    """The provenance of the label file ``labels_path``; ``None`` without a sidecar. Its
    ``unverified`` says why, when the sidecar does not prove it describes the file.

    Errors name the sidecar, the line and the field."""
    path = provenance_path(labels_path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the label provenance: {exc}", source=str(path)) from None
    from ragmeter.core.provenance import LabelProvenance

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
    default = _default(header.get("default"), sources, path, rows[0][0])
    note = header.get("note")
    if note is not None and not isinstance(note, str):
        raise InputError("expected a string", source=str(path), line=rows[0][0], field="note")
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
    claimed = LabelProvenance(sources=sources, pairs=pairs, default=default, note=note)
    why = _unverified(header, claimed, labels_path, path, rows[0][0])
    if why is None:
        return claimed
    return LabelProvenance(sources=sources, pairs=pairs, default=default, note=note, unverified=why)


def _unverified(
    header: dict[str, Any], claimed: LabelProvenance, labels: PathLike, path: Path, n: int
) -> str | None:
    """Why the sidecar does not prove it describes ``labels`` (``None``: it does)."""
    if "labels" not in header and "pairs" not in header:
        return NO_DIGEST
    recorded = _digest(header.get("labels"), "labels", path, n)
    lines = _digest(header.get("pairs"), "pairs", path, n)
    if lines.kind != "pairs":
        raise InputError("field 'rows': expected 'pairs'", source=str(path), line=n, field="pairs")
    held = pairs_digest(claimed)
    if held != lines:
        return (
            f"its header records {lines.short()}, {held.short()} follow: the sidecar was cut "
            "or edited after it was written"
        )
    if recorded.kind == "pairs":
        raise InputError(
            "field 'rows': expected 'qrels' or 'records'", source=str(path), line=n, field="labels"
        )
    if is_special_file(labels) or not os.path.exists(labels):
        return f"no label file {Path(labels).name} to check it against"
    actual = label_digest(labels, recorded.kind)
    if actual != recorded:
        return (
            f"it was written for {recorded.short()}, {Path(labels).name} holds {actual.short()}: "
            "the labels changed after their sidecar was written"
        )
    return None


def _digest(value: Any, key: str, path: Path, n: int) -> RowsDigest:
    """A digest object of the header (``labels`` or ``pairs``), checked field by field."""
    from ragmeter.core.provenance import ROWS_KINDS, RowsDigest

    if not isinstance(value, dict):
        raise InputError(
            "expected an object {rows, n, sha256}", source=str(path), line=n, field=key
        )
    kind, count, sha = value.get("rows"), value.get("n"), value.get("sha256")
    if kind not in ROWS_KINDS:
        raise InputError(
            f"expected one of {', '.join(ROWS_KINDS)}, got {kind!r}",
            source=str(path),
            line=n,
            field=f"{key}.rows",
        )
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InputError(
            f"expected a count, got {count!r}", source=str(path), line=n, field=f"{key}.n"
        )
    if not isinstance(sha, str) or len(sha) != 64:
        raise InputError("expected 64 hex digits", source=str(path), line=n, field=f"{key}.sha256")
    return RowsDigest(cast("RowsKind", kind), count, sha)


def _json(line: str, path: Path, n: int) -> dict[str, Any]:
    # imported here: qrels without a provenance sidecar (most) never read one
    from ragmeter.io._documents import loads_finite

    value = loads_finite(line, str(path), n)
    if not isinstance(value, dict):
        raise InputError("expected a JSON object", source=str(path), line=n)
    return value


def _string(record: dict[str, Any], key: str, path: Path, n: int) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise InputError(f"field {key!r}: expected a string", source=str(path), line=n)
    return value


def _default(value: Any, sources: dict[str, LabelSource], path: Path, n: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(
            f"expected a source id (a string) or null, got {type(value).__name__}",
            source=str(path),
            line=n,
            field="default",
        )
    if value not in sources:
        raise InputError(
            f"{value!r} is not among the sources", source=str(path), line=n, field="default"
        )
    return value


def _sources(value: Any, path: Path, n: int) -> dict[str, LabelSource]:
    """The header's sources; ``{}`` (labels of unknown origin, with a note) is allowed."""
    from ragmeter.core.provenance import LabelSource

    if not isinstance(value, dict):
        raise InputError("field 'sources': expected an object", source=str(path), line=n)
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
    "NO_DIGEST",
    "SUFFIX",
    "carry_provenance",
    "format_provenance",
    "label_digest",
    "label_rows",
    "pairs_digest",
    "provenance_path",
    "read_provenance",
    "require_verified",
    "write_provenance",
]
