"""The (query, doc id) join that gives aligned items their label rows.

Shared by the aligned view of a run against qrels (:mod:`ragmeter.core.align`) and the coverage
view of judgments (:mod:`ragmeter.core.judgments`): one join, one answer to "which label judges
this item", in a module below both so that neither imports the other.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ragmeter import _accel
from ragmeter.core.data import IntArray


def join_rows(
    item_doc_ids: pa.Array,
    label_doc_ids: pa.Array,
    run_rows: IntArray,
    offsets: IntArray,
    label_rows: IntArray,
    label_query: IntArray,
) -> IntArray:
    """The label row judging each aligned item (-1 if none), by one join on (query, doc id).

    ``run_rows`` are the items' rows in ``item_doc_ids``, segmented by ``offsets`` (one segment
    an evaluated query); ``label_rows`` are rows of ``label_doc_ids``, ``label_query`` the
    evaluated query of each. Returns, per item, the matching label row.
    """
    n = len(run_rows)
    matched_rows = np.full(n, -1, dtype=np.int64)
    if n == 0 or len(label_rows) == 0:
        return matched_rows
    native = _accel.native
    if native is not None:
        run_buffers = _accel.string_buffers(item_doc_ids)
        qrels_buffers = _accel.string_buffers(label_doc_ids)
        if run_buffers is not None and qrels_buffers is not None:
            label_offsets = np.concatenate(
                [[0], np.cumsum(np.bincount(label_query, minlength=len(offsets) - 1))]
            ).astype(np.int64)
            matched_buf = native.join(
                np.ascontiguousarray(offsets, dtype=np.int64),
                np.ascontiguousarray(run_rows, dtype=np.int64),
                label_offsets,
                np.ascontiguousarray(label_rows, dtype=np.int64),
                *run_buffers,
                *qrels_buffers,
            )
            matched: IntArray = np.frombuffer(matched_buf, dtype=np.int64)
            return matched
    item_query = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    run_docs = item_doc_ids.take(_accel.indices(run_rows))
    label_docs = label_doc_ids.take(_accel.indices(label_rows))
    if run_docs.type != label_docs.type:
        # Join keys must share one type; large_string holds either.
        run_docs = run_docs.cast(pa.large_string())
        label_docs = label_docs.cast(pa.large_string())
    left = pa.table({"q": item_query, "d": run_docs, "i": np.arange(n, dtype=np.int64)})
    right = pa.table({"q": label_query, "d": label_docs, "r": label_rows})
    joined = left.join(right, keys=["q", "d"], join_type="inner", use_threads=True)
    if joined.num_rows:
        matched_rows[joined["i"].to_numpy()] = joined["r"].to_numpy()
    return matched_rows


__all__ = ["join_rows"]
