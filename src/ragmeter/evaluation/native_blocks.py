"""A block of a TREC run file evaluated from its bytes in one pass of the C accelerator.

:func:`evaluate_block_bytes` gives what parsing the block
(:func:`~ragmeter.io.trec.parse_trec_run`) and evaluating it
(:func:`~ragmeter.evaluation.blocks.evaluate_block`) give, bit for bit, without building the
block's :class:`~ragmeter.core.data.Run`: ``ragmeter._native.block_align`` finds each query
among the qrels' (the :class:`~ragmeter.evaluation.blocks.QueryIndex` keys), orders each
judged query's lines as a run is ordered (score descending, doc id descending, line), drops a
repeated doc (counted for the reading warning), cuts at ``depth`` and finds the judgment of
each item, without gathering the doc ids into rank order and the qrels' into a subset. The
:class:`~ragmeter.core.align.Aligned` built from that is the one
:func:`~ragmeter.core.align.align` builds on the block's run and qrels subset, except that its
judgment rows are the whole qrels' (``qrels_doc_ids`` with them: the same doc ids) and its
``run_rows`` the block's lines; so it serves only measures that read neither the run nor
side inputs nor a pool (``needs`` only qrels). Anything else, a file the C parser declines,
or no accelerator (``RAGMETER_PURE=1``): ``None``, and the caller takes the general path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ragmeter import _accel
from ragmeter.core.align import NOT_JUDGED, Aligned
from ragmeter.evaluation.blocks import BlockValues, qrels_index
from ragmeter.evaluation.engine import compute, evaluation_options
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.side import side_options
from ragmeter.measures import Measure

_QRELS_ONLY = frozenset({"qrels"})


def supports(inputs: EvalInputs, measures: Sequence[Measure]) -> bool:
    """Whether the one-pass path can evaluate ``measures`` with ``inputs`` (see the module)."""
    return (
        _accel.native is not None
        and inputs.missing in ("zero", "skip")
        and all(
            m.needs == _QRELS_ONLY and not m.spec.uses_pool and not m.spec.reads_run
            for m in measures
        )
    )


def evaluate_block_bytes(
    data: bytes, inputs: EvalInputs, measures: Sequence[Measure], *, source: str
) -> BlockValues | None:
    """The values of the block of a TREC run file ``data`` (whole lines of whole queries), or
    ``None`` where the one-pass path does not apply (then parse and evaluate the block)."""
    native = _accel.native
    if native is None or not supports(inputs, measures):
        return None
    qrels = inputs.qrels
    keys = qrels_index(qrels).keys
    qrels_docs = _accel.string_buffers(qrels.doc_ids)
    if keys is None or qrels_docs is None or not len(keys):
        return None
    parsed = native.parse_trec(data, 0, False)
    if parsed is None:  # declined: the general path reads it (and warns or says what is wrong)
        return None
    qid_offsets, qid_data, qcode, doc_offsets, doc_data, scores, _tag, wide = parsed
    depth = -1 if inputs.depth is None else int(inputs.depth)
    qpos_buf, offsets_buf, rows_buf, matched_buf, dupes = native.block_align(
        qcode,
        qid_offsets,
        qid_data,
        scores,
        doc_offsets,
        doc_data,
        wide,
        keys,
        keys.dtype.itemsize,
        np.ascontiguousarray(qrels.offsets, dtype=np.int64),
        *qrels_docs,
        depth,
    )
    del parsed, qcode, doc_offsets, doc_data, scores
    qpos = np.frombuffer(qpos_buf, dtype=np.int64)
    judged = qpos >= 0
    codes = np.flatnonzero(judged)
    by_position = np.argsort(qpos[codes], kind="stable")
    positions = qpos[codes][by_position]
    names = _query_ids(qid_offsets, qid_data)
    aligned = _aligned(
        inputs,
        names[codes[by_position]],
        positions,
        np.frombuffer(offsets_buf, dtype=np.int64),
        np.frombuffer(rows_buf, dtype=np.int64),
        np.frombuffer(matched_buf, dtype=np.int64),
        n_unjudged=int(len(qpos) - len(codes)),
        options={**evaluation_options(inputs.grade_map), **side_options(measures)},
    )
    retrieved = len(aligned.grades)
    warnings: tuple[str, ...] = ()
    if dupes:
        warnings = (
            f"{source}: {dupes} duplicate (query, doc) row(s) dropped; "
            "each doc keeps its best-ranked occurrence",
        )
    unjudged = names[~judged]
    return BlockValues(
        query_index=positions,
        values=compute(aligned, measures),
        unjudged=tuple(sorted(unjudged.tolist(), key=str.encode)),
        warnings=warnings,
        retrieved=retrieved,
        judged=retrieved - int(np.count_nonzero(aligned.grades == NOT_JUDGED)),
    )


def _query_ids(offsets: bytearray, data: bytearray) -> np.ndarray:
    """The block's query ids (parse_trec's dictionary, in order of first line) as strings."""
    bounds = np.frombuffer(offsets, dtype=np.int64)
    strings = pa.Array.from_buffers(
        pa.large_string(), len(bounds) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    out = np.empty(len(bounds) - 1, dtype=object)
    out[:] = strings.to_pylist()
    return out


def _aligned(
    inputs: EvalInputs,
    query_ids: np.ndarray,
    positions: np.ndarray,
    offsets: np.ndarray,
    rows: np.ndarray,
    matched: np.ndarray,
    *,
    n_unjudged: int,
    options: dict[str, Any],
) -> Aligned:
    """The alignment of the judged queries at ``positions``, as :func:`align` builds it on the
    block's run and qrels subset (judgment rows the whole qrels', see the module docstring)."""
    qrels = inputs.qrels
    lab_start = qrels.offsets[positions]
    lab_len = qrels.offsets[positions + 1] - lab_start
    label_offsets = np.zeros(len(positions) + 1, dtype=np.int64)
    np.cumsum(lab_len, out=label_offsets[1:])
    n_labels = int(label_offsets[-1])
    label_rows = np.repeat(lab_start - label_offsets[:-1], lab_len) + np.arange(
        n_labels, dtype=np.int64
    )
    label_query = np.repeat(np.arange(len(positions), dtype=np.int64), lab_len)
    label_grades = qrels.grades[label_rows]
    # descending grade within each query, ties in row order (as align's stable lexsort)
    order = np.lexsort((-label_grades.astype(np.int64), label_query))
    hit = matched >= 0
    grades = np.full(len(matched), NOT_JUDGED, dtype=np.int32)
    grades[hit] = qrels.grades[matched[hit]]
    # an item's judgment: its row's place among the query's judgments, then in grade order
    item_query = np.repeat(np.arange(len(positions), dtype=np.int64), np.diff(offsets))
    index_dtype: Any = np.int32 if n_labels < np.iinfo(np.int32).max else np.int64
    sorted_at = np.empty(n_labels, dtype=index_dtype)
    sorted_at[order] = np.arange(n_labels, dtype=index_dtype)
    item_label = np.full(len(matched), -1, dtype=index_dtype)
    local = matched[hit] - lab_start[item_query[hit]] + label_offsets[item_query[hit]]
    item_label[hit] = sorted_at[local]
    run_rows: Any = rows.astype(np.int32) if len(rows) < np.iinfo(np.int32).max else rows
    return Aligned(
        query_ids=query_ids,
        offsets=offsets,
        grades=grades,
        run_rows=run_rows,
        label_offsets=label_offsets,
        label_grades=label_grades[order].astype(np.int32),
        in_run=np.ones(len(positions), dtype=bool),
        n_unjudged_queries=n_unjudged,
        rel_level=inputs.rel_level,
        label_rows=label_rows[order],
        item_label=item_label,
        qrels_doc_ids=qrels.doc_ids,
        options=options,
    )
