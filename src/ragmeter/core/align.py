"""The aligned view of a run against qrels, computed once per evaluation.

One vectorized join of (query, doc) keys gives every retrieved item its grade (or
:data:`NOT_JUDGED`); per-query label statistics come from the qrels segments. Every metric is a
function of these arrays, so ten metrics cost one alignment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.core.data import IntArray, Qrels, Run
from ragmeter.core.join import join_rows

if TYPE_CHECKING:
    from ragmeter.core.judgments import CoverageView

#: Grade of a retrieved item that has no qrels entry ("not in the pool").
NOT_JUDGED = np.int32(np.iinfo(np.int32).min)

Missing = Literal["zero", "skip"]
_T = TypeVar("_T")


@dataclass(frozen=True, eq=False)
class Aligned:
    """A run's items with their grades, segmented by evaluated query.

    Attributes:
        query_ids: the evaluated queries (those of the qrels, in byte order).
        offsets: CSR offsets of each query's retrieved items, rank order.
        grades: grade of each retrieved item, :data:`NOT_JUDGED` when it has no judgment.
        run_rows: row of each item in the source run (to reach doc ids, scores, texts).
        label_offsets: CSR offsets of each query's judgments.
        label_grades: every judged grade of each query, sorted descending within the query.
        in_run: whether the query appears in the run at all.
        cutoffs: per-query cutoff override (``metadata.k``), -1 where none; or ``None``.
        n_missing: evaluated queries absent from the run (scored as empty runs).
        n_skipped: qrels queries absent from the run and dropped (``missing="skip"``).
        n_unjudged_queries: run queries with no judgments, not evaluated.
        rel_level: the evaluation's default relevance threshold (grade ≥ rel_level).
        label_rows: the qrels row of each judgment (in ``label_grades`` order).
        item_label: for each retrieved item, the index of its judgment in the label arrays,
            -1 when it has none.
        label_in_pool: for each judgment, whether the candidate pool holds that doc (set by
            the evaluation for pool-based measures; ``None`` until then).
        options: evaluation-wide defaults of measure parameters (e.g. ``grade_map``).
        qrels_doc_ids: the qrels' doc ids (indexed by ``label_rows``), for messages.
        side: arrays joined from side inputs by the evaluation: ``item_tokens`` /
            ``label_tokens`` (token length of each retrieved item / judgment, from a corpus),
            ``item_utility`` (UDCG utility of each retrieved item, NaN where none),
            ``item_doc_ids`` (the retrieved doc ids, for messages).
        coverage: the items joined to sub-question judgments, for the coverage measures
            (set by the evaluation when judgments are given; see :mod:`ragmeter.core.judgments`).
    """

    query_ids: npt.NDArray[np.object_]
    offsets: IntArray
    grades: npt.NDArray[np.int32]
    run_rows: IntArray
    label_offsets: IntArray
    label_grades: npt.NDArray[np.int32]
    in_run: npt.NDArray[np.bool_]
    cutoffs: IntArray | None = None
    n_missing: int = 0
    n_skipped: int = 0
    n_unjudged_queries: int = 0
    rel_level: int = 1
    label_rows: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    item_label: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    label_in_pool: npt.NDArray[np.bool_] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    qrels_doc_ids: pa.Array | None = None
    coverage: CoverageView | None = None
    side: Mapping[str, Any] = field(default_factory=dict)
    # Derived arrays, computed on first use. Not an init field: ``dataclasses.replace`` gives
    # the copy an empty cache, so a copy with other grades, options or pool never reads
    # arrays derived from the original's.
    _cache: dict[object, object] = field(default_factory=dict, init=False, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def lengths(self) -> IntArray:
        return self._cached("lengths", lambda: np.diff(self.offsets))

    @property
    def label_lengths(self) -> IntArray:
        return self._cached("label_lengths", lambda: np.diff(self.label_offsets))

    # Per-item index arrays are int32 whenever the sizes allow: at 100 M retrieved items each
    # one is 400 MB instead of 800 MB, and numpy indexes and counts with either.

    @property
    def query_of_item(self) -> IntArray:
        """Index of the evaluated query each retrieved item belongs to."""
        return self._cached(
            "query_of_item",
            lambda: np.repeat(_index_range(self.n_queries), self.lengths),
        )

    @property
    def query_of_label(self) -> IntArray:
        return self._cached(
            "query_of_label",
            lambda: np.repeat(_index_range(self.n_queries), self.label_lengths),
        )

    @property
    def ranks(self) -> IntArray:
        """1-based rank of every retrieved item within its query."""
        return self._cached("ranks", lambda: _segment_ranks(self.offsets, self.lengths))

    @property
    def label_ranks(self) -> IntArray:
        """1-based rank of each judgment in its query's descending grade order (ideal order)."""
        return self._cached(
            "label_ranks", lambda: _segment_ranks(self.label_offsets, self.label_lengths)
        )

    def label_doc_id(self, i: int) -> str:
        """Doc id of judgment ``i`` (for messages); ``?`` when unknown."""
        if self.qrels_doc_ids is None or not len(self.label_rows):
            return "?"
        return str(self.qrels_doc_ids[int(self.label_rows[i])].as_py())

    def relevant(self, rel_level: int) -> npt.NDArray[np.bool_]:
        """Mask of retrieved items with grade ≥ ``rel_level`` (a negative grade never is)."""
        floor = max(rel_level, 0)
        return self._cached(("relevant", floor), lambda: self.grades >= floor)

    def num_relevant(self, rel_level: int) -> IntArray:
        """R per query: judgments with grade ≥ ``rel_level`` (a negative grade never is)."""
        floor = max(rel_level, 0)

        def count() -> IntArray:
            # a prefix count read at the segment bounds: no per-judgment query index
            prefix = np.zeros(len(self.label_grades) + 1, dtype=np.int64)
            np.cumsum(self.label_grades >= floor, out=prefix[1:])
            out: IntArray = prefix[self.label_offsets[1:]] - prefix[self.label_offsets[:-1]]
            return out

        return self._cached(("num_relevant", floor), count)

    def _cached(self, key: object, compute: Callable[[], _T]) -> _T:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]  # type: ignore[return-value]


def judged_only(al: Aligned) -> Aligned:
    """``al`` with only its judged items, the ranks closing up: trec_eval's ``-J`` (and so
    ir_measures' ``judged_only=True``), which drops a negatively judged item too (trec_eval
    reads a grade below 0 as "not in the pool")."""
    keep = al.grades >= 0
    if keep.all():
        return al
    n_items = len(keep)
    lengths = np.bincount(al.query_of_item[keep], minlength=al.n_queries)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(al.offsets.dtype)
    side = {
        key: value[keep] if _per_item(key, value, n_items) else value
        for key, value in al.side.items()
    }
    item_label = al.item_label[keep] if len(al.item_label) == n_items else al.item_label
    return replace(
        al,
        offsets=offsets,
        grades=al.grades[keep],
        run_rows=al.run_rows[keep],
        item_label=item_label,
        side=side,
    )


def _per_item(key: str, value: object, n_items: int) -> bool:
    """Whether a side array holds one value per retrieved item (``item_tokens``…)."""
    return key.startswith("item_") and isinstance(value, np.ndarray) and len(value) == n_items


def _index_dtype(size: int) -> type[np.signedinteger[Any]]:
    return np.int32 if size < np.iinfo(np.int32).max else np.int64


def _index_range(n: int) -> IntArray:
    return np.arange(n, dtype=_index_dtype(n))  # type: ignore[return-value]


def _segment_ranks(offsets: IntArray, lengths: IntArray) -> IntArray:
    """1-based position of every element within its CSR segment."""
    n = int(offsets[-1])
    dtype = _index_dtype(n)
    out = np.arange(1, n + 1, dtype=dtype)
    out -= np.repeat(offsets[:-1].astype(dtype), lengths)
    return out  # type: ignore[return-value]


def align(
    run: Run,
    qrels: Qrels,
    *,
    missing: Missing = "zero",
    depth: int | None = None,
    rel_level: int = 1,
) -> Aligned:
    """Align ``run`` with ``qrels``.

    Evaluated queries are the qrels' queries. A qrels query absent from the run is scored as
    an empty run (``missing="zero"``) or dropped (``missing="skip"``); run queries without
    judgments are not evaluated. ``depth`` truncates each query's ranking (trec_eval ``-M``).
    """
    if missing not in ("zero", "skip"):
        raise ValueError(f"missing must be 'zero' or 'skip', not {missing!r}")
    run_index = {q: i for i, q in enumerate(run.query_ids.tolist())}
    run_pos = np.fromiter(
        (run_index.get(q, -1) for q in qrels.query_ids.tolist()),
        dtype=np.int64,
        count=len(qrels.query_ids),
    )
    present = run_pos >= 0
    n_unjudged = int(run.n_queries - present.sum())

    keep_q = present if missing == "skip" else np.ones(len(present), dtype=bool)
    evaluated = np.flatnonzero(keep_q)
    n_missing = int((~present[evaluated]).sum())
    n_skipped = int((~present).sum()) if missing == "skip" else 0

    # Retrieved segments of the evaluated queries, truncated to depth.
    # Sentinel entries let absent queries (-1) index safely, even into an empty run.
    run_lengths = np.append(np.diff(run.offsets), 0)
    run_starts = np.append(run.offsets[:-1], 0)
    rpos = run_pos[evaluated]
    seg_len = run_lengths[rpos]
    if depth is not None:
        seg_len = np.minimum(seg_len, depth)
    seg_start = run_starts[rpos]
    offsets = np.concatenate([[0], np.cumsum(seg_len)]).astype(np.int64)
    total = int(offsets[-1])
    run_rows = np.repeat(seg_start - offsets[:-1], seg_len) + np.arange(total, dtype=np.int64)
    if len(run) < np.iinfo(np.int32).max:
        run_rows = run_rows.astype(np.int32)

    # Judgments of the evaluated queries, grades sorted descending within each query.
    lab_start = qrels.offsets[evaluated]
    lab_len = np.diff(qrels.offsets)[evaluated]
    label_offsets = np.concatenate([[0], np.cumsum(lab_len)]).astype(np.int64)
    label_rows = np.repeat(lab_start - label_offsets[:-1], lab_len) + np.arange(
        int(label_offsets[-1]), dtype=np.int64
    )
    label_query = np.repeat(np.arange(len(evaluated), dtype=np.int64), lab_len)
    label_grades = qrels.grades[label_rows]
    order = np.lexsort((-label_grades.astype(np.int64), label_query))
    label_grades_sorted = label_grades[order]
    label_rows_sorted = label_rows[order]

    matched = join_rows(run.doc_ids, qrels.doc_ids, run_rows, offsets, label_rows, label_query)
    hit = matched >= 0
    grades = np.full(len(matched), NOT_JUDGED, dtype=np.int32)
    grades[hit] = qrels.grades[matched[hit]]
    label_of_row = np.full(len(qrels.grades), -1, dtype=_index_dtype(len(qrels.grades)))
    label_of_row[label_rows_sorted] = np.arange(len(label_rows_sorted))
    item_label = np.full(len(matched), -1, dtype=label_of_row.dtype)
    item_label[hit] = label_of_row[matched[hit]]

    cutoffs = None
    if run.cutoffs is not None:
        cutoffs = np.append(run.cutoffs, -1)[rpos].astype(np.int64)

    return Aligned(
        query_ids=qrels.query_ids[evaluated],
        offsets=offsets,
        grades=grades,
        run_rows=run_rows,
        label_offsets=label_offsets,
        label_grades=label_grades_sorted.astype(np.int32),
        in_run=present[evaluated],
        cutoffs=cutoffs,
        n_missing=n_missing,
        n_skipped=n_skipped,
        n_unjudged_queries=n_unjudged,
        rel_level=rel_level,
        label_rows=label_rows_sorted.astype(np.int64),
        item_label=item_label,
        qrels_doc_ids=qrels.doc_ids,
    )


def pool_membership(
    al: Aligned,
    pool: Run,
    qrels: Qrels,
    *,
    depth: int | None = None,
    selection: int | None = None,
) -> tuple[npt.NDArray[np.bool_], int]:
    """Which judgments of ``al`` the candidate ``pool`` holds (within ``depth``).

    Also returns how many judged items of ``al``'s top ``selection`` the pool lacks: a
    selection drawn from the pool has none, and when it has some, RA-nWG can exceed PROC.
    """
    pooled = align(pool, qrels, missing="zero", depth=depth)
    in_rows = np.zeros(len(qrels.grades), dtype=bool)
    in_rows[pooled.label_rows[pooled.item_label[pooled.item_label >= 0]]] = True
    label_in_pool = in_rows[al.label_rows]
    judged = al.item_label >= 0
    if selection is not None:
        judged &= al.ranks <= selection
    outside = int((judged & ~label_in_pool[np.maximum(al.item_label, 0)]).sum())
    return label_in_pool, outside
