"""Span labels, chunk tables and the interval arithmetic of the span measures.

A **span label** marks evidence once, as characters ``[start, end)`` of a source document's
text (Python string indexes, end exclusive), so it survives re-chunking. A **chunk table**
says where each chunk of one chunking lies: ``chunk_id → (doc_id, start, end)``. A run over
that chunking is an ordinary run whose ids are chunk ids; :func:`span_view` joins its items
to their extents and each evaluated query to its spans, and the families of
:mod:`ragmeter.metrics.spans` measure the overlap.

Overlaps are measured without a per-character loop: every interval becomes two events (its
start and its end) keyed by (query, document, position); one sort and two cumulative sums give
the depth of the spans and of the chunks between consecutive events, and each per-query
quantity is a weighted count of those segments (:func:`overlap_sums`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.errors import InputError

IntArray = npt.NDArray[np.int64]

#: the largest character offset read (2^40 − 1, a trillion characters: no document is that
#: long), so that the interval arithmetic's combined keys stay within int64
MAX_OFFSET = 2**40 - 1
#: the largest span grade (grades are int32, as qrels grades)
MAX_GRADE = 2**31 - 1
FloatArray = npt.NDArray[np.float64]
ObjArray = npt.NDArray[np.object_]


@dataclass(frozen=True, eq=False)
class SpanLabels:
    """Evidence spans: per row a query, a document, ``[start, end)`` and a grade (1 unless
    given). ``texts`` holds each span's text where the file gave one (``None`` otherwise)."""

    query_ids: ObjArray
    doc_ids: ObjArray
    starts: IntArray
    ends: IntArray
    grades: npt.NDArray[np.int32]
    texts: tuple[str | None, ...] | None = None
    source: str = "<spans>"
    #: the line (or row) of the file each span came from, for messages
    lines: IntArray | None = None
    warnings: tuple[str, ...] = ()
    #: who marked each span, where the file says (the web app's export does)
    annotators: tuple[str | None, ...] | None = None

    def where(self, i: int) -> int | None:
        """The line of span ``i`` in its file (``None`` when unknown)."""
        return None if self.lines is None else int(self.lines[i])

    def __len__(self) -> int:
        return len(self.query_ids)

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[tuple[str, str, int, int] | tuple[str, str, int, int, int]],
        *,
        source: str = "<rows>",
    ) -> SpanLabels:
        """Spans from ``(query_id, doc_id, start, end[, grade])`` tuples (checked)."""
        for n, row in enumerate(rows, start=1):
            check_extent(int(row[2]), int(row[3]), source, n, span=True)
            if len(row) > 4 and not 1 <= int(row[4]) <= MAX_GRADE:  # type: ignore[misc]
                raise InputError(
                    f"a span's grade must be ≥ 1 and ≤ {MAX_GRADE:,}",
                    source=source,
                    line=n,
                    field="grade",
                )
        return cls(
            np.array([str(r[0]) for r in rows], dtype=object),
            np.array([str(r[1]) for r in rows], dtype=object),
            np.array([int(r[2]) for r in rows], dtype=np.int64),
            np.array([int(r[3]) for r in rows], dtype=np.int64),
            np.array([int(r[4]) if len(r) > 4 else 1 for r in rows], dtype=np.int32),  # type: ignore[misc]
            None,
            source,
        )

    def queries(self) -> list[str]:
        """The labelled queries, in byte order."""
        return sorted(set(self.query_ids.tolist()))

    def query_qrels(self) -> Any:
        """Qrels naming the labelled queries without any judgment: what an evaluation of span
        measures alone aligns against."""
        from ragmeter.core.data import Qrels

        queries = self.queries()
        return Qrels(
            query_ids=np.array(queries, dtype=object),
            offsets=np.zeros(len(queries) + 1, dtype=np.int64),
            doc_ids=pa.array([], type=pa.string()),
            grades=np.zeros(0, dtype=np.int32),
            name=self.source,
        )


@dataclass(frozen=True, eq=False)
class ChunkTable:
    """Where each chunk of one chunking lies: ``chunk_id → (doc_id, [start, end))``."""

    chunk_ids: ObjArray
    doc_ids: ObjArray
    starts: IntArray
    ends: IntArray
    source: str = "<chunks>"
    warnings: tuple[str, ...] = ()
    #: the line (or row) of the file each chunk came from, for messages
    lines: IntArray | None = None
    #: the chunking's record where the table has one (``ragmeter chunk`` writes it): the
    #: chunker's parameters, the documents' hash, ``id`` (the chunking's identity, the
    #: suffix of its chunk ids) and ``rows`` (the SHA-256 of the rows, :meth:`rows_digest`)
    chunking: Mapping[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def rows_digest(self) -> str:
        """``sha256:`` of the rows ``chunk_id, doc_id, start, end`` in order: what the
        chunking's record holds, so that rows edited after writing are noticed."""
        import hashlib

        digest = hashlib.sha256()
        for row in zip(
            self.chunk_ids.tolist(),
            self.doc_ids.tolist(),
            self.starts.tolist(),
            self.ends.tolist(),
            strict=True,
        ):
            digest.update("\t".join(map(str, row)).encode("utf-8") + b"\n")
        return "sha256:" + digest.hexdigest()

    def with_chunking(self, record: Mapping[str, Any]) -> ChunkTable:
        """This table carrying the chunking's ``record`` (its rows' digest added)."""
        from dataclasses import replace

        return replace(self, chunking={**record, "rows": self.rows_digest()})

    @property
    def chunking_id(self) -> str | None:
        """The chunking's identity (``None`` for a table without a record)."""
        found = None if self.chunking is None else self.chunking.get("id")
        return None if found is None else str(found)

    def describe(self) -> str:
        """The table in words: its file, and its chunking where it is known."""
        chunking = self.chunking_words()
        return self.source if chunking is None else f"{self.source} ({chunking})"

    def chunking_words(self) -> str | None:
        """``chunking ID (tokens, size 200, overlap 0, recursive)``; ``None`` without a
        record."""
        if self.chunking is None:
            return None
        c = self.chunking
        how = f"{c.get('unit')}, size {c.get('size')}, overlap {c.get('overlap')}"
        how += ", recursive" if c.get("recursive") else ""
        return f"chunking {self.chunking_id} ({how})"

    def where(self, i: int) -> int | None:
        """The line of chunk ``i`` in its file (``None`` when unknown)."""
        return None if self.lines is None else int(self.lines[i])

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[tuple[str, str, int, int]],
        *,
        source: str = "<rows>",
        lines: Sequence[int] | None = None,
    ) -> ChunkTable:
        """A table from ``(chunk_id, doc_id, start, end)`` tuples (from the file's
        ``lines``, for messages); a chunk given twice with the same extent is kept once, with
        two extents it is an error."""
        seen: dict[str, tuple[str, int, int]] = {}
        kept: list[tuple[str, str, int, int]] = []
        kept_lines: list[int] = []
        for i, (chunk, doc, start, end) in enumerate(rows):
            n = lines[i] if lines is not None else i + 1
            check_extent(int(start), int(end), source, n, span=False)
            extent = (str(doc), int(start), int(end))
            before = seen.get(str(chunk))
            if before is None:
                seen[str(chunk)] = extent
                kept.append((str(chunk), *extent))
                kept_lines.append(n)
            elif before != extent:
                raise InputError(
                    f"chunk '{chunk}' given twice with different extents: {before[0]} "
                    f"[{before[1]}, {before[2]}) and {extent[0]} [{extent[1]}, {extent[2]})",
                    source=source,
                    line=n,
                    field="chunk_id",
                )
        return cls(
            np.array([r[0] for r in kept], dtype=object),
            np.array([r[1] for r in kept], dtype=object),
            np.array([r[2] for r in kept], dtype=np.int64),
            np.array([r[3] for r in kept], dtype=np.int64),
            source,
            lines=np.array(kept_lines, dtype=np.int64),
        )

    def locate(self, chunk_ids: pa.Array) -> IntArray:
        """Row of each of ``chunk_ids`` in this table, -1 where it has none."""
        import pyarrow.compute as pc

        if not len(chunk_ids):
            return np.zeros(0, dtype=np.int64)
        known = pa.array(self.chunk_ids.tolist(), type=pa.large_string())
        pos = pc.index_in(chunk_ids.cast(pa.large_string()), value_set=known)
        return np.asarray(pos.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def combine_spans(spans: SpanLabels) -> SpanLabels:
    """The evidence of ``spans`` with each character counted once where it was marked twice.

    * The same span given twice (same query, document, start and end) is one span, with the
      larger grade: a duplicate row is never a second piece of evidence.
    * When the spans name their annotators (the web app's export has one row per annotator),
      the spans of each (query, document) are combined as the **union** of their character
      ranges: spans that overlap or touch become one span ``[min start, max end)`` with the
      largest grade among them, marked by every annotator who marked a part of it
      (``"alice+bob"``). Evidence is what anyone marked, once.
    * Otherwise overlapping spans stay as given (chunking_evaluation's references; the
      ``span_set_*`` measures count their characters once).

    Rows keep the file order of the first row each span came from; a note in ``warnings``
    says how many rows were combined. ``spans`` itself is returned when nothing merges.
    """
    if len(spans) < 2:
        return spans
    union = spans.annotators is not None
    _, query = np.unique(spans.query_ids.astype(str), return_inverse=True)
    _, doc = np.unique(spans.doc_ids.astype(str), return_inverse=True)
    order = np.lexsort((spans.ends, spans.starts, doc, query))
    q, d = query[order], doc[order]
    start, end = spans.starts[order], spans.ends[order]
    new_pair = np.ones(len(order), dtype=bool)
    new_pair[1:] = (q[1:] != q[:-1]) | (d[1:] != d[:-1])
    if union:
        reach = _running_max(end, np.cumsum(new_pair))
        new = new_pair.copy()
        new[1:] |= start[1:] > reach[:-1]  # a gap after everything before it in the pair
    else:
        new = new_pair.copy()
        new[1:] |= (start[1:] != start[:-1]) | (end[1:] != end[:-1])
    if new.all():
        return spans
    return _merged(spans, order, np.flatnonzero(new), union)


def _running_max(values: IntArray, group: IntArray) -> IntArray:
    """The running maximum of ``values`` restarted at each new ``group`` (non-decreasing
    integers): one accumulate over ``group · width + value`` where that fits in int64."""
    width = int(values.max()) + 1
    if int(group.max()) * width < 2**62:
        key = group.astype(np.int64) * width + values
        out: IntArray = np.maximum.accumulate(key) - group.astype(np.int64) * width
        return out
    out = values.copy()
    for i in range(1, len(out)):
        if group[i] == group[i - 1]:
            out[i] = max(out[i], out[i - 1])
    return out


def _merged(spans: SpanLabels, order: IntArray, heads: IntArray, union: bool) -> SpanLabels:
    """``spans`` with the rows ``order[heads[k]:heads[k + 1]]`` as the k-th span (see
    :func:`combine_spans`), in the order of each span's first row."""
    first = np.minimum.reduceat(order, heads)
    starts = np.minimum.reduceat(spans.starts[order], heads)
    ends = np.maximum.reduceat(spans.ends[order], heads)
    grades = np.maximum.reduceat(spans.grades[order], heads)
    keep = np.argsort(first, kind="stable")
    members = np.split(order, heads[1:])
    members = [members[k] for k in keep.tolist()]
    annotators = None
    if spans.annotators is not None:
        names = spans.annotators
        annotators = tuple(
            "+".join(sorted({str(names[i]) for i in g if names[i] is not None})) or None
            for g in members
        )
    texts = None
    if spans.texts is not None:  # a combined span's text is no one row's text
        texts = tuple(spans.texts[int(g[0])] if len(g) == 1 else None for g in members)
    how = (
        "the union of the characters marked for each (query, document), by any annotator"
        if union
        else "the same query, document and characters given more than once"
    )
    note = (
        f"{spans.source}: {len(spans)} span rows combined into {len(heads)} span(s) ({how}; "
        "each character counted once, a combined span with its largest grade)"
    )
    first = first[keep]
    return SpanLabels(
        spans.query_ids[first],
        spans.doc_ids[first],
        starts[keep].astype(np.int64),
        ends[keep].astype(np.int64),
        grades[keep].astype(np.int32),
        texts,
        spans.source,
        None if spans.lines is None else spans.lines[first],
        (*spans.warnings, note),
        annotators,
    )


def check_extent(start: int, end: int, source: str, line: int | None, *, span: bool) -> None:
    """A span must be non-empty (``start < end``), a chunk may be empty; both start at 0 or
    later."""
    if start < 0:
        raise InputError(f"start {start} is negative", source=source, line=line, field="start")
    for name, value in (("start", start), ("end", end)):
        if value > MAX_OFFSET:
            raise InputError(
                f"{name} {value} is too large (an offset is at most {MAX_OFFSET:,})",
                source=source,
                line=line,
                field=name,
            )
    if end < start or (span and end == start):
        need = "start < end" if span else "start ≤ end"
        raise InputError(
            f"end {end} is before start {start}"
            if end < start
            else f"empty span at {start} ({need})",
            source=source,
            line=line,
            field="end",
        )


# -- the joined view ----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SpanView:
    """A run's items joined to their chunk extents, each evaluated query to its spans, and the
    whole chunk table (for ``span_precision_omega``), documents as dense integer codes.

    ``item_*`` follow the alignment's items; ``span_offsets`` is CSR over the evaluated
    queries; ``table_*`` is the chunk table sorted by (doc, start).
    """

    n_queries: int
    item_doc: IntArray
    item_start: IntArray
    item_end: IntArray
    span_offsets: IntArray
    span_doc: IntArray
    span_start: IntArray
    span_end: IntArray
    span_grade: npt.NDArray[np.int32]
    #: the row of each span in the span labels
    span_rows: IntArray
    table_doc: IntArray
    table_start: IntArray
    table_end: IntArray

    @property
    def query_of_span(self) -> IntArray:
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.span_offsets))


def span_view(
    spans: SpanLabels,
    chunks: ChunkTable,
    query_ids: Sequence[str] | ObjArray,
    item_chunk_ids: pa.Array,
    *,
    run_name: str,
    item_texts: pa.Array | None = None,
) -> SpanView:
    """Join a run's retrieved chunk ids (in alignment order) and the evaluated queries' spans.

    A retrieved chunk id the table lacks is an error naming the run and the chunk table (and
    both chunkings, where the ids and the table say); so is, where the run carries the
    chunks' texts (``item_texts``), a text whose length is not its chunk's in the table.
    """
    rows = chunks.locate(item_chunk_ids)
    missing = np.flatnonzero(rows < 0)
    if len(missing):
        raise InputError(
            _absent_message(item_chunk_ids, missing, chunks, run_name), source=chunks.source
        )
    if item_texts is not None:
        check_text_lengths(item_chunk_ids, item_texts, chunks, rows, run_name)
    docs, codes = np.unique(np.concatenate([spans.doc_ids, chunks.doc_ids]), return_inverse=True)
    del docs
    span_codes = codes[: len(spans)].astype(np.int64)
    table_codes = codes[len(spans) :].astype(np.int64)
    evaluated = {q: i for i, q in enumerate(list(query_ids))}
    query_of = np.array([evaluated.get(q, -1) for q in spans.query_ids.tolist()], dtype=np.int64)
    keep = np.flatnonzero(query_of >= 0)
    order = keep[np.argsort(query_of[keep], kind="stable")]
    counts = np.bincount(query_of[keep], minlength=len(evaluated))
    table_order = np.lexsort((chunks.starts, table_codes))
    return SpanView(
        n_queries=len(evaluated),
        item_doc=table_codes[rows],
        item_start=chunks.starts[rows],
        item_end=chunks.ends[rows],
        span_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        span_doc=span_codes[order],
        span_start=spans.starts[order],
        span_end=spans.ends[order],
        span_grade=spans.grades[order],
        span_rows=order.astype(np.int64),
        table_doc=table_codes[table_order],
        table_start=chunks.starts[table_order],
        table_end=chunks.ends[table_order],
    )


def _absent_message(ids: pa.Array, missing: IntArray, chunks: ChunkTable, run_name: str) -> str:
    first = str(ids[int(missing[0])].as_py())
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    said = f"run '{run_name}' retrieved chunk '{first}'{more}, absent from this chunk table"
    _, at, theirs = first.rpartition("@")
    ours = chunks.chunking_id
    if at and ours is not None and theirs != ours:
        table = chunks.chunking_words()
        said += f": the run's chunk ids are of chunking {theirs}, the table's of {table}"
    return (
        f"{said}; give each run the chunk table of its chunking (--chunks FILE once per "
        "chunking: each run is scored on the table that has its chunk ids; or --chunks "
        "RUN=FILE)"
    )


def check_text_lengths(
    ids: pa.Array, texts: pa.Array, chunks: ChunkTable, rows: IntArray, run_name: str
) -> None:
    """Each retrieved chunk's text (where the run carries it) must be as long as its extent
    in the table: a run of another chunking with the same chunk ids (``DOC#N`` of an older
    table) is caught here. An error naming the first chunk that differs."""
    import pyarrow.compute as pc

    lengths = pc.utf8_length(texts.cast(pa.large_string())).to_numpy(zero_copy_only=False)
    known = ~np.asarray(pc.is_null(texts).to_numpy(zero_copy_only=False), dtype=bool)
    extent = chunks.ends[rows] - chunks.starts[rows]
    bad = np.flatnonzero(known & (np.nan_to_num(lengths.astype(np.float64), nan=-1) != extent))
    if not len(bad):
        return
    i = int(bad[0])
    row = int(rows[i])
    raise InputError(
        f"run '{run_name}' retrieved chunk '{ids[i].as_py()}' with a text of "
        f"{int(lengths[i])} characters, but the chunk table puts it at "
        f"[{chunks.starts[row]}, {chunks.ends[row]}) ({int(extent[i])} characters)"
        f"{f' (and {len(bad) - 1} more)' if len(bad) > 1 else ''}: the run is of another "
        "chunking; give the chunk table of the run's chunking",
        source=chunks.source,
        line=chunks.where(row),
    )


# -- interval arithmetic -----------------------------------------------------------------


@dataclass(frozen=True)
class OverlapSums:
    """Per-query character counts of chunks C and spans S (both within one query's documents):

    ``both`` = |∪S ∩ ∪C|, ``spans_outside`` = Σ_s |s \\ ∪C| (each span on its own),
    ``union_spans`` = |∪S|, ``union_chunks`` = |∪C|, ``union_all`` = |∪S ∪ ∪C|,
    ``graded_covered`` = Σ_s w_s · |s ∩ ∪C| (w: the spans' weights, 1 unless given).
    """

    both: FloatArray
    spans_outside: FloatArray
    union_spans: FloatArray
    union_chunks: FloatArray
    union_all: FloatArray
    graded_covered: FloatArray


def overlap_sums(
    n_queries: int,
    chunk_query: IntArray,
    chunk_doc: IntArray,
    chunk_start: IntArray,
    chunk_end: IntArray,
    span_query: IntArray,
    span_doc: IntArray,
    span_start: IntArray,
    span_end: IntArray,
    span_weight: npt.NDArray[Any] | None = None,
) -> OverlapSums:
    """The :class:`OverlapSums` of each query, by one sweep over all intervals' end points.

    Each interval adds +1 to its kind's depth at its start and -1 at its end; sorted by
    (query, doc, position), the cumulative sums are the depths on each segment between
    consecutive events. A (query, doc) group's events cancel out, so the depths are 0 between
    groups, where every integrand below is 0: no segment is counted across groups.
    """
    nc, ns = len(chunk_query), len(span_query)
    query = np.concatenate([chunk_query, chunk_query, span_query, span_query])
    doc = np.concatenate([chunk_doc, chunk_doc, span_doc, span_doc])
    pos = np.concatenate([chunk_start, chunk_end, span_start, span_end])
    step_c = np.concatenate([np.ones(nc), -np.ones(nc), np.zeros(2 * ns)]).astype(np.int64)
    step_s = np.concatenate([np.zeros(2 * nc), np.ones(ns), -np.ones(ns)]).astype(np.int64)
    weight = np.ones(ns, dtype=np.int64) if span_weight is None else span_weight.astype(np.int64)
    step_w = np.concatenate([np.zeros(2 * nc, dtype=np.int64), weight, -weight])
    order = _event_order(query, doc, pos)
    query, pos = query[order], pos[order]
    depth_c = np.cumsum(step_c[order])
    depth_s = np.cumsum(step_s[order])
    depth_w = np.cumsum(step_w[order])
    seg = np.zeros(len(pos), dtype=np.int64)
    seg[:-1] = np.diff(pos)
    in_c, in_s = depth_c > 0, depth_s > 0

    def total(weights: npt.NDArray[Any]) -> FloatArray:
        # in float64: a grade times a length may pass int64 (both are bounded, not small)
        product = seg.astype(np.float64) * weights
        return np.bincount(query, weights=product, minlength=n_queries).astype(np.float64)

    return OverlapSums(
        both=total(in_c & in_s),
        spans_outside=total(depth_s * ~in_c),
        union_spans=total(in_s),
        union_chunks=total(in_c),
        union_all=total(in_c | in_s),
        graded_covered=total(depth_w * in_c),
    )


def _event_order(query: IntArray, doc: IntArray, pos: IntArray) -> IntArray:
    """The order of events by (query, doc, position): one argsort of a combined int64 key
    where it fits (the order of events at one position does not matter: the segments
    between them are empty), else a lexsort."""
    if not len(pos):
        return np.zeros(0, dtype=np.int64)
    n_docs = int(doc.max()) + 1
    width = int(pos.max()) + 1
    if (int(query.max()) + 1) * n_docs * width < 2**62:
        return np.argsort((query * n_docs + doc) * width + pos)
    return np.lexsort((pos, doc, query))


def touching_chunks(view: SpanView, *, strict: bool) -> tuple[IntArray, IntArray]:
    """Every (query, table row) whose chunk intersects one of the query's spans in the same
    document: with ``strict=False`` a chunk that only touches a span's boundary counts
    (chunking_evaluation's ``intersect_two_ranges`` keeps ``start == end``), with
    ``strict=True`` only a shared character does. Each pair once."""
    span_query = view.query_of_span
    span, rows = span_chunk_pairs(view, strict=strict)
    if not len(span):
        return span, rows
    n_rows = len(view.table_doc)
    pairs = np.unique(span_query[span] * n_rows + rows)  # each (query, row) once
    return pairs // n_rows, pairs % n_rows


def span_chunk_pairs(view: SpanView, *, strict: bool) -> tuple[IntArray, IntArray]:
    """Every (span, table row) of one document whose intervals intersect (``strict``: share
    a character; else touching counts), found by binary search on the table sorted by
    (doc, start): no all-pairs product."""
    empty = np.zeros(0, dtype=np.int64)
    if not len(view.table_doc) or not len(view.span_doc):
        return empty, empty
    t_start, t_end, s_start, s_end = _search_positions(view)
    width = int(max(t_end.max(), s_end.max())) + 2
    start_key = view.table_doc * width + t_start
    # ends need not grow with starts (nested chunks): search the running maximum of the ends
    # (within a document: keys of later documents are larger), then check each candidate
    end_key = np.maximum.accumulate(view.table_doc * width + t_end)
    span_low = view.span_doc * width + s_start
    span_high = view.span_doc * width + s_end
    side_hi, side_lo = ("left", "right") if strict else ("right", "left")
    hi = np.searchsorted(start_key, span_high, side=side_hi)  # type: ignore[call-overload]
    lo = np.searchsorted(end_key, span_low, side=side_lo)  # type: ignore[call-overload]
    counts = np.maximum(hi - lo, 0)
    owner = np.repeat(np.arange(len(view.span_doc), dtype=np.int64), counts)
    rows = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    rows += np.repeat(lo, counts)
    ends, starts = view.table_end[rows], view.table_start[rows]
    same_doc = view.table_doc[rows] == view.span_doc[owner]
    if strict:
        ok = same_doc & (ends > view.span_start[owner]) & (starts < view.span_end[owner])
    else:
        ok = same_doc & (ends >= view.span_start[owner]) & (starts <= view.span_end[owner])
    return owner[ok], rows[ok]


def _search_positions(view: SpanView) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """The chunk and span end points as :func:`span_chunk_pairs` combines them with the
    documents into one int64 key: as they are where ``documents × largest offset`` fits,
    else replaced by their ranks among all end points (the same order, ties kept), so that
    no key overflows."""
    points = (view.table_start, view.table_end, view.span_start, view.span_end)
    width = int(max(view.table_end.max(), view.span_end.max())) + 2
    n_docs = int(max(view.table_doc.max(), view.span_doc.max())) + 1
    if n_docs * width < 2**62:
        return points
    values = np.unique(np.concatenate(points))
    ranks = tuple(np.searchsorted(values, p).astype(np.int64) for p in points)
    return ranks[0], ranks[1], ranks[2], ranks[3]


# -- spans to chunk qrels ----------------------------------------------------------------

GRADINGS = ("max", "overlap")


@dataclass(frozen=True)
class ChunkRule:
    """Which overlap makes a chunk relevant to a query, as ``--rule`` spells it:

    * ``any``: the chunk shares at least one character with one of the query's spans;
    * ``span=F``: the chunk holds at least the fraction F of one span's characters;
    * ``chunk=F``: at least the fraction F of the chunk's characters are evidence (lie in
      the union of the query's spans).

    ``grade``: ``max`` gives a relevant chunk the largest grade of the spans that make it
    relevant — with ``any`` and ``chunk=F`` every span it shares a character with, with
    ``span=F`` the spans it holds the fraction F of (not a span it merely grazes);
    ``overlap`` grades it by the share of its characters that are evidence,
    ``ceil(3 · |c ∩ ∪S| / |c|)`` (1, 2 or 3).
    """

    kind: str = "any"
    fraction: float = 0.0
    grade: str = "max"

    @classmethod
    def parse(cls, text: str, grade: str = "max") -> ChunkRule:
        name, sep, value = text.strip().partition("=")
        if grade not in GRADINGS:
            raise InputError(f"{grade!r}: expected max or overlap", field="--grade")
        if name == "any" and not sep:
            return cls("any", 0.0, grade)
        if name in ("span", "chunk") and sep:
            try:
                fraction = float(value)
            except ValueError:
                fraction = -1.0
            if 0.0 < fraction <= 1.0:
                return cls(name, fraction, grade)
        raise InputError(
            f"{text!r}: expected any, span=F or chunk=F with 0 < F ≤ 1", field="--rule"
        )

    def __str__(self) -> str:
        rule = self.kind if self.kind == "any" else f"{self.kind}={self.fraction:g}"
        return f"{rule}, grade {self.grade}"


@dataclass(frozen=True)
class ChunkQrels:
    """Chunk qrels made from span labels, and for each (query, chunk) the row of the span
    labels whose span gave it its grade (for the labels' provenance)."""

    qrels: Any
    made_by: Mapping[tuple[str, str], int]


def chunk_qrels(spans: SpanLabels, chunks: ChunkTable, rule: ChunkRule) -> ChunkQrels:
    """Chunk qrels of one chunking from span labels, by ``rule`` (:class:`ChunkRule`), so
    that every family keyed by doc id (nDCG, RA-nWG, coverage …) runs on any chunking.

    A query no chunk passes has no qrels row (TREC qrels cannot name a query without one).
    """
    from ragmeter.core.data import Qrels

    queries = spans.queries()
    view = span_view(spans, chunks, queries, pa.array([], type=pa.string()), run_name="")
    span, rows = span_chunk_pairs(view, strict=True)
    query = view.query_of_span[span]
    shared = np.minimum(view.span_end[span], view.table_end[rows]) - np.maximum(
        view.span_start[span], view.table_start[rows]
    )
    length = view.table_end[rows] - view.table_start[rows]
    evidence = _evidence_in_chunks(view, query, rows)
    # every rule needs a shared character: an empty chunk inside a span holds no evidence
    # (and has no share of evidence to grade)
    passes = shared > 0
    if rule.kind == "span":
        passes &= shared >= rule.fraction * (view.span_end[span] - view.span_start[span])
    elif rule.kind == "chunk":
        passes &= evidence >= rule.fraction * length
    grades: dict[tuple[int, int], tuple[int, int]] = {}  # (query, row) → (grade, span row)
    for q, r, g, source, ev, n, ok in zip(
        query.tolist(),
        rows.tolist(),
        view.span_grade[span].tolist(),
        view.span_rows[span].tolist(),
        evidence.tolist(),
        length.tolist(),
        passes.tolist(),
        strict=True,
    ):
        if not ok:
            continue
        grade = g if rule.grade == "max" else max(1, -(-3 * ev // n))
        if (q, r) not in grades or grade > grades[(q, r)][0]:
            grades[(q, r)] = (grade, source)
    table_ids = chunks.chunk_ids[np.lexsort((chunks.starts, _codes(chunks, spans)))]
    labelled: dict[str, dict[str, int]] = {q: {} for q in queries}
    made_by: dict[tuple[str, str], int] = {}
    for (q, r), (g, source) in grades.items():
        labelled[queries[q]][str(table_ids[r])] = int(g)
        made_by[(queries[q], str(table_ids[r]))] = source
    return ChunkQrels(Qrels.from_dict(labelled, name=f"{spans.source} ({rule})"), made_by)


def _codes(chunks: ChunkTable, spans: SpanLabels) -> IntArray:
    """The document codes of :func:`span_view` for the chunk table's rows."""
    _, codes = np.unique(np.concatenate([spans.doc_ids, chunks.doc_ids]), return_inverse=True)
    return codes[len(spans) :].astype(np.int64)


def _evidence_in_chunks(view: SpanView, query: IntArray, rows: IntArray) -> IntArray:
    """|c ∩ ∪S_q| of each (query, chunk row) pair: the evidence characters in the chunk."""
    if not len(query):
        return np.zeros(0, dtype=np.int64)
    pair_query, pair_row = np.unique(np.stack([query, rows], axis=1), axis=0).T
    pair_of = {
        (q, r): i
        for i, (q, r) in enumerate(zip(pair_query.tolist(), pair_row.tolist(), strict=True))
    }
    group = np.array([pair_of[(q, r)] for q, r in zip(query.tolist(), rows.tolist(), strict=True)])
    # each pair a group of its own: the chunk against the query's spans of its document (a
    # one-off conversion, not an evaluation's hot path)
    owners, spans_idx = [], []
    for i, (q, r) in enumerate(zip(pair_query.tolist(), pair_row.tolist(), strict=True)):
        for s in range(int(view.span_offsets[q]), int(view.span_offsets[q + 1])):
            if view.span_doc[s] == view.table_doc[r]:
                owners.append(i)
                spans_idx.append(s)
    owner = np.array(owners, dtype=np.int64)
    chosen = np.array(spans_idx, dtype=np.int64)
    sums = overlap_sums(
        len(pair_query),
        np.arange(len(pair_query), dtype=np.int64),
        view.table_doc[pair_row],
        view.table_start[pair_row],
        view.table_end[pair_row],
        owner,
        view.span_doc[chosen],
        view.span_start[chosen],
        view.span_end[chosen],
    )
    out: IntArray = sums.both.astype(np.int64)[group]
    return out


@dataclass(frozen=True, eq=False)
class SpanInputs:
    """What the span measures read besides the run: the span labels and the chunk table of
    the runs' chunking; ``{run name: table}`` for runs over different chunkings; or a tuple
    of tables, each run scored on the one table that holds every chunk id it retrieved
    (:meth:`table_for`)."""

    labels: SpanLabels
    chunks: ChunkTable | Mapping[str, ChunkTable] | tuple[ChunkTable, ...]

    @property
    def one_table(self) -> bool:
        return isinstance(self.chunks, ChunkTable)

    def tables(self) -> list[ChunkTable]:
        if isinstance(self.chunks, ChunkTable):
            return [self.chunks]
        if isinstance(self.chunks, tuple):
            return list(self.chunks)
        return list(self.chunks.values())

    @property
    def warnings(self) -> tuple[str, ...]:
        return (*self.labels.warnings, *(w for t in self.tables() for w in t.warnings))

    def table_of(self, run_name: str) -> ChunkTable:
        """The chunk table of the run called ``run_name`` (one table, or a mapping)."""
        if isinstance(self.chunks, ChunkTable):
            return self.chunks
        if isinstance(self.chunks, tuple):
            raise InputError(
                f"run '{run_name}': several chunk tables, matched to runs by their chunk ids "
                "(table_for)",
                field="chunks",
            )
        if run_name in self.chunks:
            return self.chunks[run_name]
        raise InputError(
            f"no chunk table for run '{run_name}' (tables given for: "
            f"{', '.join(sorted(self.chunks))})",
            field="chunks",
        )

    def table_for(self, run_name: str, chunk_ids: pa.Array) -> ChunkTable:
        """The chunk table of the run called ``run_name`` that retrieved ``chunk_ids``: with
        several tables and no names, the one that holds every id the run retrieved; none or
        more than one is an error (give ``RUN=FILE``)."""
        if not isinstance(self.chunks, tuple):
            return self.table_of(run_name)
        holding = [t for t in self.chunks if len(chunk_ids) and (t.locate(chunk_ids) >= 0).all()]
        if len(holding) == 1:
            return holding[0]
        names = ", ".join(t.describe() for t in (holding or self.chunks))
        if not holding:
            first = np.flatnonzero(self.chunks[0].locate(chunk_ids) < 0)
            some = f" (such as '{chunk_ids[int(first[0])].as_py()}')" if len(first) else ""
            why = f"no chunk table holds every chunk id it retrieved{some}; tables: {names}"
        else:
            why = f"its chunk ids are in {len(holding)} of the chunk tables ({names})"
        raise InputError(
            f"run '{run_name}': {why}; give its table with --chunks RUN=FILE", field="--chunks"
        )
