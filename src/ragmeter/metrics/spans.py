"""Span measures: how much of each query's evidence spans the top K chunks cover, in characters.

They read span labels (``--spans``: ``query_id, doc_id, start, end``, character offsets into
the document's text) and the chunk table of the run's chunking (``--chunks``: ``chunk_id,
doc_id, start, end``), so one set of labels scores any chunking (see
:mod:`ragmeter.core.spans`). Notation, per query: S its spans, C_K the top K retrieved
chunks (of any document), ``|·|`` a count of characters, ∪ a union within each document.

chunking_evaluation's definitions, quirks included (Smith & Troynikov, Chroma 2024;
``chunking_evaluation/evaluation_framework/base_evaluation.py``,
``_scores_from_dataset_and_retrievals`` and ``_full_precision_score``)::

    covered            = |∪S ∩ ∪C_K|
    span_recall@K      = covered / Σ_{s∈S} |s|
    span_precision@K   = covered / Σ_{c∈C_K} |c|
    span_iou@K         = covered / (Σ_{c∈C_K} |c| + Σ_{s∈S} |s \\ ∪C_K|)
    span_precision_omega = |∪S ∩ ∪T| / |∪S ∪ ∪T|,  T = every chunk of the table that
                           intersects a span of S in its document, a chunk that only touches
                           a span's boundary (chunk end = span start) included

The quirks, kept so the numbers match theirs: the denominators add lengths without a union,
so two overlapping retrieved chunks count their shared characters twice in precision and IoU,
and two overlapping spans count theirs twice in recall (whose numerator counts them once);
retrieved chunks of other documents count in the precision denominator; ``span_precision_omega``
reads the chunk table, not the run (it is the best precision the chunking allows), and counts
chunks that merely touch a span. Without ``@K`` the whole ranking is read (chunking_evaluation
always cuts at its ``retrieve`` K).

The set variants take unions everywhere (each character once)::

    span_set_recall@K    = covered / |∪S|
    span_set_precision@K = covered / |∪C_K|
    span_set_iou@K       = covered / |∪S ∪ ∪C_K|
    span_set_precision_omega = as span_precision_omega, T the chunks sharing ≥ 1 character

and a graded recall (grades of the span labels, 1 unless given)::

    span_graded_recall@K = Σ_{s∈S} g_s · |s ∩ ∪C_K| / Σ_{s∈S} g_s · |s|

A query without spans is NA (it has no evidence to cover); a precision with no retrieved
characters (an empty ranking) is 0. Every value lies in [0, 1].
"""

from __future__ import annotations

import numpy as np

from ragmeter.core.align import Aligned
from ragmeter.core.spans import OverlapSums, SpanView, overlap_sums, touching_chunks
from ragmeter.errors import MissingInputError
from ragmeter.measures import FloatArray, Measure, register
from ragmeter.metrics._segments import cutoff_per_query, within

_NEEDS = ("spans",)


def _view(al: Aligned) -> SpanView:
    view = al.side.get("spans")
    if not isinstance(view, SpanView):
        raise MissingInputError(
            "span measures need span labels and the run's chunk table: give --spans SPANS "
            "--chunks CHUNKS (spans=…, chunks=… in the library)"
        )
    return view


def _ratio(num: FloatArray, den: FloatArray, *, empty: float) -> FloatArray:
    """``num / den``, ``empty`` where ``den`` is 0."""
    out = np.full(len(num), empty, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _labelled(view: SpanView, values: FloatArray) -> FloatArray:
    """NA for the queries without spans."""
    values[np.diff(view.span_offsets) == 0] = np.nan
    return values


class _TopK:
    """The overlap sums of the top K chunks of each query, with the plain length sums."""

    def __init__(self, al: Aligned, m: Measure) -> None:
        view = _view(al)
        items = np.flatnonzero(within(al, cutoff_per_query(al, m)))
        query = al.query_of_item[items].astype(np.int64)
        starts, ends = view.item_start[items], view.item_end[items]
        self.view = view
        self.sums: OverlapSums = overlap_sums(
            view.n_queries,
            query,
            view.item_doc[items],
            starts,
            ends,
            view.query_of_span,
            view.span_doc,
            view.span_start,
            view.span_end,
            view.span_grade,
        )
        self.chunk_total = np.bincount(
            query, weights=ends - starts, minlength=view.n_queries
        ).astype(np.float64)
        lengths = view.span_end - view.span_start
        self.span_total = np.bincount(
            view.query_of_span, weights=lengths, minlength=view.n_queries
        ).astype(np.float64)
        self.graded_total = np.bincount(
            view.query_of_span, weights=lengths * view.span_grade, minlength=view.n_queries
        ).astype(np.float64)


def _top_k(al: Aligned, m: Measure) -> _TopK:
    return al._cached(("span_top_k", m.k), lambda: _TopK(al, m))


@register("span_recall", cutoff="optional", needs=_NEEDS)
def span_recall(al: Aligned, m: Measure) -> FloatArray:
    """Characters of the spans covered by the top K chunks / Σ span lengths
    (chunking_evaluation's recall)."""
    t = _top_k(al, m)
    return _labelled(t.view, _ratio(t.sums.both, t.span_total, empty=np.nan))


@register("span_precision", cutoff="optional", needs=_NEEDS)
def span_precision(al: Aligned, m: Measure) -> FloatArray:
    """Span characters covered by the top K chunks / Σ their lengths (chunking_evaluation's
    precision)."""
    t = _top_k(al, m)
    return _labelled(t.view, _ratio(t.sums.both, t.chunk_total, empty=0.0))


@register("span_iou", cutoff="optional", needs=_NEEDS)
def span_iou(al: Aligned, m: Measure) -> FloatArray:
    """Covered span characters / (Σ top-K chunk lengths + uncovered span characters)
    (chunking_evaluation's IoU)."""
    t = _top_k(al, m)
    den = t.chunk_total + t.sums.spans_outside
    return _labelled(t.view, _ratio(t.sums.both, den, empty=np.nan))


@register("span_set_recall", cutoff="optional", needs=_NEEDS)
def span_set_recall(al: Aligned, m: Measure) -> FloatArray:
    """|∪spans ∩ ∪top-K chunks| / |∪spans|: recall with each character counted once."""
    t = _top_k(al, m)
    return _labelled(t.view, _ratio(t.sums.both, t.sums.union_spans, empty=np.nan))


@register("span_set_precision", cutoff="optional", needs=_NEEDS)
def span_set_precision(al: Aligned, m: Measure) -> FloatArray:
    """|∪spans ∩ ∪top-K chunks| / |∪top-K chunks|: precision with each character counted
    once."""
    t = _top_k(al, m)
    return _labelled(t.view, _ratio(t.sums.both, t.sums.union_chunks, empty=0.0))


@register("span_set_iou", cutoff="optional", needs=_NEEDS)
def span_set_iou(al: Aligned, m: Measure) -> FloatArray:
    """|∪spans ∩ ∪top-K chunks| / |∪spans ∪ ∪top-K chunks|: the Jaccard index of the
    characters."""
    t = _top_k(al, m)
    return _labelled(t.view, _ratio(t.sums.both, t.sums.union_all, empty=np.nan))


@register("span_graded_recall", cutoff="optional", needs=_NEEDS)
def span_graded_recall(al: Aligned, m: Measure) -> FloatArray:
    """Σ_s grade_s · |s ∩ ∪top-K chunks| / Σ_s grade_s · |s|: recall with each span weighted
    by its grade."""
    t = _top_k(al, m)
    return _labelled(t.view, _ratio(t.sums.graded_covered, t.graded_total, empty=np.nan))


def _omega(al: Aligned, *, strict: bool) -> FloatArray:
    view = _view(al)
    query, rows = touching_chunks(view, strict=strict)
    sums = overlap_sums(
        view.n_queries,
        query,
        view.table_doc[rows],
        view.table_start[rows],
        view.table_end[rows],
        view.query_of_span,
        view.span_doc,
        view.span_start,
        view.span_end,
    )
    return _labelled(view, _ratio(sums.both, sums.union_all, empty=np.nan))


@register("span_precision_omega", needs=_NEEDS)
def span_precision_omega(al: Aligned, m: Measure) -> FloatArray:
    """Precision of every chunk of the chunking touching a span (chunking_evaluation's
    precision Ω: the best precision the chunking allows; reads the chunk table, not the run)."""
    return _omega(al, strict=False)


@register("span_set_precision_omega", needs=_NEEDS)
def span_set_precision_omega(al: Aligned, m: Measure) -> FloatArray:
    """Precision Ω of the chunks sharing at least one character with a span (a chunk that
    only touches a span's boundary does not count)."""
    return _omega(al, strict=True)
