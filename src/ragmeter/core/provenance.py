"""Who made each label: a person, or a judge (model, server, prompt id and hash, samples).

Every label file ragmeter writes (qrels from ``ragmeter judge``, merged qrels of hole filling,
labels exported from the web app) has a provenance sidecar read and written by
:mod:`ragmeter.io.provenance`. The data model here is plain and immutable:

- :class:`LabelSource` — one maker of labels. ``kind`` is ``"human"``, ``"judge"`` or
  ``"learned"`` (a judge fitted on human labels by ``ragmeter judge learn``: it names how
  many labels it learnt from and their SHA-256, its features, learner and scope); a judge
  names its ``model``, the ``host`` of its server (no path, no credentials), the ``prompt_id``
  (``relevance``, ``umbrela`` …) with the prompt's version and the SHA-256 of its template,
  how many ``samples`` were drawn per pair and at which ``temperature``, and, for an ensemble,
  its member ``judges`` and how they were combined (``aggregation``).
- :class:`LabelProvenance` — the sources by id, and for each (query, doc) pair the id of the
  source that labelled it; pairs not listed take ``default`` (``None``: unknown).

A number computed on labels any of which come from a judge is "computed on LLM labels";
:meth:`LabelProvenance.describe` says so in one line, for every view that prints numbers.

**Binding a sidecar to its labels.** A sidecar proves it describes its label file by the
:func:`rows_digest` of the labels (their count and SHA-256), and of its own pair lines,
recorded in its header. :func:`rows_digest` is the one hash of label rows: each row (for
qrels the ``(query, doc, grade)`` triple, grade an integer) is written as a compact JSON
array, the lines are sorted (so the order of the file's lines, its whitespace, its format —
TREC, CSV, JSONL … — do not change it; a changed grade, a pair added or removed does), and
hashed after a ``ragmeter-<kind>-v1`` line. A sidecar whose digests are missing (written by
hand or by an older ragmeter) or do not match (the labels were rewritten, the sidecar cut or
edited) gives :attr:`LabelProvenance.unverified`: every view says so, and the calibration
gate refuses such labels.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Literal

SourceKind = Literal["human", "judge", "learned"]
KINDS: tuple[SourceKind, ...] = ("human", "judge", "learned")
HUMAN = "human"

Pair = tuple[str, str]
#: what a digest's rows are: ``qrels`` (query, doc, grade), ``records`` (one canonical JSON
#: record or whitespace-normalised line of a label file that is not qrels), ``pairs`` (query,
#: doc, source id: a sidecar's own pair lines)
RowsKind = Literal["qrels", "records", "pairs"]
ROWS_KINDS: tuple[RowsKind, ...] = ("qrels", "records", "pairs")


@dataclass(frozen=True)
class RowsDigest:
    """How many rows, and the SHA-256 of their canonical text (see :func:`rows_digest`)."""

    kind: RowsKind
    n: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.kind, "n": self.n, "sha256": self.sha256}

    def short(self) -> str:
        """``1,233 labels (sha256 3f2a9c01b7e4…)``."""
        what = "pair lines" if self.kind == "pairs" else "labels"
        return f"{self.n:,} {what} (sha256 {self.sha256[:12]}…)"


def rows_digest(kind: RowsKind, rows: Iterable[Sequence[str | int]]) -> RowsDigest:
    """The one hash of label rows (module docstring): the rows as compact JSON arrays,
    sorted, one per line after ``ragmeter-<kind>-v1``; SHA-256 of that UTF-8 text.

    >>> a = rows_digest("qrels", [("q1", "d1", 1), ("q1", "d2", 0)])
    >>> a == rows_digest("qrels", [("q1", "d2", 0), ("q1", "d1", 1)])  # order: same
    True
    >>> a == rows_digest("qrels", [("q1", "d1", 2), ("q1", "d2", 0)])  # a grade: not
    False
    """
    import hashlib  # here: OpenSSL loads only where a digest is made (not at every start)

    lines = sorted(json.dumps(list(row), ensure_ascii=False, separators=(",", ":")) for row in rows)
    digest = hashlib.sha256(f"ragmeter-{kind}-v1\n".encode())
    for line in lines:
        digest.update(line.encode("utf-8") + b"\n")
    return RowsDigest(kind, len(lines), digest.hexdigest())


@dataclass(frozen=True)
class LabelSource:
    """One maker of labels: a person (``kind="human"``) or a judge (``kind="judge"``).

    ``identity()`` is what two sources must share to count as "the same judge" (a calibration
    made with one judge says nothing of another): kind, model, prompt id, version and hash,
    samples, temperature, aggregation and the member judges — not the server's host, which
    may change while the model stays the same, nor the free-text ``note``.
    """

    kind: SourceKind
    model: str | None = None
    host: str | None = None
    prompt_id: str | None = None
    prompt_version: str | None = None
    prompt_sha256: str | None = None
    samples: int = 1
    temperature: float | None = None
    aggregation: str | None = None
    judges: tuple[LabelSource, ...] = ()
    annotator: str | None = None
    note: str | None = None
    #: a learned judge (``kind="learned"``): how many human labels it was fitted on, their
    #: SHA-256, its feature names, its learner with its parameters, and per-topic or pooled
    training_labels: int | None = None
    training_sha256: str | None = None
    features: tuple[str, ...] = ()
    learner: str | None = None
    scope: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"label source kind {self.kind!r}: expected one of {KINDS}")
        if self.kind == "judge" and not (self.model or self.judges):
            raise ValueError("a judge label source needs a model (or member judges)")
        if self.kind == "learned" and not (self.model and self.training_labels is not None):
            raise ValueError("a learned label source needs a model and training_labels")
        object.__setattr__(self, "features", tuple(self.features))
        if self.samples < 1:
            raise ValueError(f"label source samples must be ≥ 1, got {self.samples}")

    @property
    def is_llm(self) -> bool:
        """Whether a machine made the labels (an LLM or other judge, or a learned judge):
        numbers on them say so, and calibration gates them like any judge's."""
        return self.kind != "human"

    def identity(self) -> dict[str, Any]:
        """The fields that identify the judge (see the class docstring), JSON-ready."""
        return {
            "kind": self.kind,
            "model": self.model,
            "prompt_id": self.prompt_id,
            "prompt_version": self.prompt_version,
            "prompt_sha256": self.prompt_sha256,
            "samples": self.samples,
            "temperature": self.temperature,
            "aggregation": self.aggregation,
            "judges": [j.identity() for j in self.judges],
            **(self._learned_identity() if self.kind == "learned" else {}),
        }

    def _learned_identity(self) -> dict[str, Any]:
        return {
            "training_labels": self.training_labels,
            "training_sha256": self.training_sha256,
            "features": list(self.features),
            "learner": self.learner,
            "scope": self.scope,
        }

    def same_judge(self, other: LabelSource) -> bool:
        return self.identity() == other.identity()

    def describe(self) -> str:
        """``umbrela, model M`` / ``3 judges (majority): a, b, c`` / ``human (alice)``."""
        if self.kind == "human":
            return f"human ({self.annotator})" if self.annotator else "human"
        if self.kind == "learned":
            how = ", ".join(p for p in (self.learner, self.scope) if p)
            return (
                f"learned judge trained on {self.training_labels:,} human labels"
                f"{f' ({how})' if how else ''}, model {self.model}"
            )
        if self.judges:
            names = ", ".join(j.model or "?" for j in self.judges)
            how = f" ({self.aggregation})" if self.aggregation else ""
            head = f"{self.prompt_id}, " if self.prompt_id else ""
            return f"{head}{len(self.judges)} judges{how}: {names}"
        parts = [p for p in (self.prompt_id, f"model {self.model}") if p]
        if self.samples > 1:
            parts.append(f"{self.samples} samples")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """Non-default fields only, member judges nested."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "kind" or value == f.default:
                continue
            if f.name == "judges":
                value = [j.to_json() for j in value]
            out[f.name] = list(value) if f.name == "features" else value
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> LabelSource:
        """Inverse of :meth:`to_json`; raises ``ValueError``/``TypeError`` on a bad field."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}")
        kwargs = dict(value)
        for name, item in kwargs.items():
            _check_type(name, item)
        kwargs["judges"] = tuple(
            cls.from_json(j) if isinstance(j, Mapping) else _bad("judges", "objects")
            for j in kwargs.get("judges", ())
        )
        kwargs["features"] = tuple(kwargs.get("features", ()))
        return cls(**kwargs)


def _bad(name: str, expected: str) -> Any:
    raise TypeError(f"field {name!r}: expected {expected}")


def _check_type(name: str, value: Any) -> None:
    """A :class:`LabelSource` field read from JSON has its type (else ``TypeError``)."""
    if name == "samples":
        if isinstance(value, bool) or not isinstance(value, int):
            _bad(name, "a whole number ≥ 1")
    elif name == "temperature":
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            _bad(name, "a number or null")
    elif name == "judges":
        if not isinstance(value, list):
            _bad(name, "a list of judges")
    elif name == "features":
        if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
            _bad(name, "a list of strings")
    elif name == "training_labels":
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            _bad(name, "a whole number or null")
    elif value is not None and not isinstance(value, str):
        _bad(name, "a string or null")


def human_source(annotator: str | None = None) -> LabelSource:
    return LabelSource(kind="human", annotator=annotator)


@dataclass(frozen=True)
class LabelProvenance:
    """The sources of a label file's labels: ``sources`` by id, ``pairs`` maps a (query, doc)
    pair to its source id, the pairs not listed take ``default`` (``None`` = unknown).

    ``note``: a free-text note on the whole file (how the labels were derived, e.g. a chunk
    rule), which says nothing of who made them. ``unverified``: ``None`` when the sidecar
    proved it describes the label file it was read with (its digests matched); else why not
    — the sources are then only what the sidecar claims (see the module docstring)."""

    sources: Mapping[str, LabelSource]
    pairs: Mapping[Pair, str] = field(default_factory=dict)
    default: str | None = None
    note: str | None = None
    unverified: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        object.__setattr__(self, "pairs", MappingProxyType(dict(self.pairs)))
        if self.default is not None and self.default not in self.sources:
            raise ValueError(f"default source {self.default!r} is not among the sources")
        for pair, source in self.pairs.items():
            if source not in self.sources:
                raise ValueError(f"pair {pair}: source {source!r} is not among the sources")

    @classmethod
    def single(cls, source: LabelSource, source_id: str | None = None) -> LabelProvenance:
        """Every label made by ``source``."""
        sid = source_id or ("human" if source.kind == "human" else "judge")
        return cls(sources={sid: source}, default=sid)

    def source_of(self, query_id: str, doc_id: str) -> LabelSource | None:
        sid = self.pairs.get((query_id, doc_id), self.default)
        return None if sid is None else self.sources[sid]

    def counts(self, pairs: Iterable[Pair]) -> Counter[str | None]:
        """How many of ``pairs`` each source id made (``None``: unknown)."""
        return Counter(self.pairs.get(p) or self.default for p in pairs)

    @property
    def has_llm(self) -> bool:
        """Whether any label may come from a judge."""
        used = set(self.pairs.values()) | ({self.default} if self.default else set())
        return any(self.sources[s].is_llm for s in used)

    def judges(self) -> dict[str, LabelSource]:
        """The judge sources, by id."""
        return {sid: s for sid, s in self.sources.items() if s.is_llm}

    @property
    def verified(self) -> bool:
        """Whether the sidecar proved it describes its label file (``unverified`` is None)."""
        return self.unverified is None

    def describe(self, pairs: Iterable[Pair] | None = None) -> str:
        """One line for the views: ``LLM labels (umbrela, model M): 460 of 500 pairs; human:
        40``; without ``pairs``, the listed pairs (or, when none is listed, the default source).
        An unverified sidecar's line starts ``unverified provenance (why): `` before what the
        sidecar claims."""
        claim = self._claim(pairs)
        if self.unverified is None:
            return claim
        return f"unverified provenance ({self.unverified}); the sidecar claims: {claim}"

    def _claim(self, pairs: Iterable[Pair] | None) -> str:
        if pairs is None:
            if not self.pairs:
                only = None if self.default is None else self.sources[self.default]
                return _line(only, None, None)
            pairs = self.pairs.keys()
        counts = self.counts(pairs)
        total = sum(counts.values())
        parts = []
        for sid, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            src = None if sid is None else self.sources[sid]
            parts.append(_line(src, n, total))
        return "; ".join(parts)

    def merged_with(self, other: LabelProvenance, pairs: Iterable[Pair]) -> LabelProvenance:
        """This provenance, with ``pairs`` taken from ``other`` (hole filling: human labels
        kept, the holes' labels from the judge). Source ids of ``other`` that collide with
        different sources here are renamed ``<id>-2``, ``<id>-3`` …"""
        sources = dict(self.sources)
        rename: dict[str, str] = {}
        for sid, src in other.sources.items():
            new, k = sid, 2
            while new in sources and sources[new] != src:
                new, k = f"{sid}-{k}", k + 1
            sources[new] = src
            rename[sid] = new
        merged = dict(self.pairs)
        for pair in pairs:
            made_by = other.pairs.get(pair) or other.default
            if made_by is None:
                raise ValueError(f"pair {pair}: no source in the provenance merged in")
            merged[pair] = rename[made_by]
        return LabelProvenance(sources=sources, pairs=merged, default=self.default, note=self.note)


def labels_head(source: LabelSource | None) -> str:
    """What the views call labels made by ``source``: ``LLM labels (umbrela, model M)``,
    ``labels from a learned judge trained on N human labels (…)``, ``human labels``."""
    if source is None:
        return "labels of unknown origin"
    if source.kind == "learned":
        return f"labels from a {source.describe()}"
    if source.is_llm:
        return f"LLM labels ({source.describe()})"
    return f"{source.describe()} labels"


def _line(source: LabelSource | None, n: int | None, total: int | None) -> str:
    head = labels_head(source)
    if n is None or total is None:
        return head
    return f"{head}: {n:,} of {total:,} pairs"


__all__ = [
    "HUMAN",
    "KINDS",
    "ROWS_KINDS",
    "LabelProvenance",
    "LabelSource",
    "Pair",
    "RowsDigest",
    "RowsKind",
    "SourceKind",
    "human_source",
    "labels_head",
    "rows_digest",
]
