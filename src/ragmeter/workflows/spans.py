"""Span labels and chunk tables given as files: what ``--spans`` and ``--chunks`` of
``evaluate``, ``compare`` and ``report`` read (:mod:`ragmeter.metrics.spans`), and what
``ragmeter spans to-qrels`` writes.

``--chunks FILE`` is the chunk table of every run; given once per chunking (repeatable),
each run is scored on the one table that holds every chunk id it retrieved (the chunk ids
``ragmeter chunk`` writes name their chunking, so the match is unambiguous);
``--chunks RUN=FILE`` (repeatable) names a run's table outright. RUN is the run's path as
given, its file name or its run name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import InputError, MissingInputError
from ragmeter.io.spans import check_span_documents, read_chunks, read_spans

if TYPE_CHECKING:
    from ragmeter.core.spans import ChunkTable, SpanInputs

#: the span measures ``evaluate`` / ``compare`` print when none are asked for: K = 5, as
#: chunking_evaluation retrieves by default
SPAN_MEASURES = ("span_recall@5", "span_precision@5", "span_iou@5", "span_precision_omega")


@dataclass(frozen=True)
class SpanFiles:
    """``--spans`` and its ``--chunks`` (``FILE`` or ``RUN=FILE`` each), checked against
    ``corpus`` (the documents' texts) when one is given."""

    spans: Path
    chunks: Sequence[str] = ()
    corpus: Path | None = None

    def read(self, paths: Sequence[Path], run_names: Sequence[str]) -> SpanInputs:
        """The span inputs of the runs at ``paths`` (called ``run_names``)."""
        from ragmeter.core.spans import SpanInputs

        if not self.chunks:
            raise MissingInputError(
                "--spans needs the chunk table of the runs' chunking: --chunks FILE "
                "(or --chunks RUN=FILE for each run)"
            )
        corpus = None
        if self.corpus is not None:
            from ragmeter.io.judgments import read_corpus

            corpus = read_corpus(self.corpus)
        labels = read_spans(self.spans, corpus=corpus)
        plain = [c for c in self.chunks if not _keyed(c)]
        if plain:
            if len(plain) != len(self.chunks):
                raise InputError(
                    "give --chunks FILE (one per chunking, each run scored on the table that "
                    "has its chunk ids) or --chunks RUN=FILE for each run, not both",
                    field="--chunks",
                )
            read = [read_chunks(Path(file), corpus=corpus) for file in plain]
            for table in read:
                check_span_documents(labels, table)
            return SpanInputs(labels, read[0] if len(read) == 1 else tuple(read))
        tables: dict[str, ChunkTable] = {}
        for given in self.chunks:
            run, _, file = given.partition("=")
            name = _run_named(run, paths, run_names)
            if name in tables:
                raise InputError(f"two chunk tables for run '{name}'", field="--chunks")
            tables[name] = read_chunks(Path(file), corpus=corpus)
            check_span_documents(labels, tables[name])
        absent = [n for n in run_names if n not in tables]
        if absent:
            raise MissingInputError(f"--chunks: no chunk table for run(s) {', '.join(absent)}")
        return SpanInputs(labels, tables)

    def options(self, paths: Sequence[Path], run_names: Sequence[str]) -> dict[str, Any]:
        """The keyword arguments of :func:`ragmeter.evaluate` for the span measures."""
        return {"spans": self.read(paths, run_names)}

    def files(self) -> dict[str, Any]:
        """The input files a saved evaluation records (hashed)."""
        return {"spans": self.spans, "chunks": [_file_of(c) for c in self.chunks]}


def _keyed(given: str) -> bool:
    """Whether ``--chunks`` names its run (``RUN=FILE``): an ``=`` before any path
    separator, with something on both sides."""
    head, sep, tail = given.partition("=")
    return bool(sep and head and tail and "/" not in head)


def _file_of(given: str) -> Path:
    return Path(given.partition("=")[2] if _keyed(given) else given)


def _run_named(run: str, paths: Sequence[Path], run_names: Sequence[str]) -> str:
    for path, name in zip(paths, run_names, strict=True):
        if run in (str(path), path.name, name):
            return name
    raise InputError(f"{run!r} is none of the runs ({', '.join(run_names)})", field="--chunks")


@dataclass(frozen=True)
class ChunkQrelsOutcome:
    """What ``ragmeter spans to-qrels`` wrote: the qrels, their file and its provenance
    sidecar, and the rule in words."""

    qrels: Any
    path: Path
    sidecar: Path | None  # None: the qrels went to a device or pipe
    rule: str


def write_chunk_qrels(
    spans: Path,
    chunks: Path,
    output: Path,
    *,
    rule: str = "any",
    grade: str = "max",
    corpus: Path | None = None,
) -> ChunkQrelsOutcome:
    """Chunk qrels of the chunking ``chunks`` from the span labels ``spans`` by ``rule``
    (:class:`ragmeter.core.spans.ChunkRule`), written to ``output`` (TREC, JSONL, CSV …, by
    extension) with a provenance sidecar recording the rule and the files: the span labels'
    own sources when they have a sidecar, else labels of unknown origin."""
    from ragmeter.core.spans import ChunkRule, chunk_qrels
    from ragmeter.io.readers import write_qrels

    parsed = ChunkRule.parse(rule, grade)
    text = None
    if corpus is not None:
        from ragmeter.io.judgments import read_corpus

        text = read_corpus(corpus)
    labels = read_spans(spans, corpus=text)
    table = read_chunks(chunks, corpus=text)
    check_span_documents(labels, table)
    made = chunk_qrels(labels, table, parsed)
    write_qrels(made.qrels, output)
    note = f"chunk qrels from span labels {spans.name} on chunks {chunks.name}, rule {parsed}"
    provenance = _rule_provenance(labels, made.made_by, spans, note)
    from ragmeter.io.provenance import write_provenance

    sidecar = write_provenance(output, provenance)
    return ChunkQrelsOutcome(made.qrels, output, sidecar, str(parsed))


def _rule_provenance(
    labels: Any, made_by: Mapping[tuple[str, str], int], spans: Path, note: str
) -> Any:
    """Who made the chunk labels, the rule in each source's note: the person who marked the
    span that graded each chunk (the web app's export names them), else the span labels' own
    sidecar source, else nobody known (labels of unknown origin, the rule still recorded)."""
    from dataclasses import replace as copy

    from ragmeter.core.provenance import LabelProvenance, LabelSource
    from ragmeter.io.provenance import read_provenance, require_verified

    if labels.annotators is not None:
        sources: dict[str, LabelSource] = {}
        pairs: dict[tuple[str, str], str] = {}
        for pair, row in made_by.items():
            who = labels.annotators[row]
            if who is None:
                continue
            sid = f"human:{who}"
            sources.setdefault(sid, LabelSource(kind="human", annotator=who, note=note))
            pairs[pair] = sid
        if sources:
            return LabelProvenance(sources=sources, pairs=pairs)
    own = read_provenance(spans)
    if own is not None:
        require_verified(own, spans)  # the chunk qrels' sidecar would vouch for its claims
    if own is not None and own.default is not None and not own.pairs:
        source = copy(own.sources[own.default], note=note)
        return LabelProvenance.single(source, own.default)
    # who marked the spans is not known: no source at all (not a "human" one), the rule
    # in the sidecar's own note — its labels read "labels of unknown origin"
    return LabelProvenance(sources={}, note=f"{note}; span labels of unknown origin")


def write_chunking(
    corpus: Path,
    table: Path,
    texts: Path,
    *,
    size: int,
    overlap: int = 0,
    tokens: bool = False,
    recursive: bool = False,
) -> Any:
    """Chunk the documents of ``corpus`` (:func:`ragmeter.pipeline.chunking.chunk_corpus`) and
    write the chunk table and the chunk texts; returns the chunking."""
    from ragmeter.io.judgments import read_corpus
    from ragmeter.io.spans import write_chunks, write_texts
    from ragmeter.pipeline.chunking import chunk_corpus

    done = chunk_corpus(
        read_corpus(corpus), size=size, overlap=overlap, tokens=tokens, recursive=recursive
    )
    write_chunks(done.table, table)
    write_texts(done.rows(), texts)
    return done
