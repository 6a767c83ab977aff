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
    data: bytes | memoryview, inputs: EvalInputs, measures: Sequence[Measure], *, source: str
) -> BlockValues | None:
    """The values of the block of a TREC run file ``data`` (whole lines of whole queries), or
    ``None`` where the one-pass path does not apply (then parse and evaluate the block)."""
    native = _accel.native
    if native is None or not supports(inputs, measures):
        return None
    qrels = inputs.qrels
    index = qrels_index(qrels)
    keys, slots = index.keys, index.slots()
    joined = join_arguments(inputs)
    if keys is None or slots is None or joined is None or not len(keys):
        return None
    scanned = native.scan_block(data, keys, keys.dtype.itemsize, slots, *joined)
    if scanned is not None:  # the judged queries in the block's order
        qid_offsets, qid_data, *out = scanned
    else:  # the lines of a query not together, or a block the scan declines
        parsed = native.parse_trec(data, 0, False)
        if parsed is None:  # declined: the general path reads it (and warns or says what is wrong)
            return None
        qid_offsets, qid_data, qcode, doc_offsets, doc_data, scores, _tag, wide = parsed
        out = native.block_align(
            qcode,
            qid_offsets,
            qid_data,
            scores,
            doc_offsets,
            doc_data,
            wide,
            keys,
            keys.dtype.itemsize,
            *joined,
        )
        del parsed, qcode, doc_offsets, doc_data, scores
    qpos = np.frombuffer(out[0], dtype=np.int64)
    judged = qpos >= 0
    codes = np.flatnonzero(judged)
    # the ids' strings (4,500 a block) are made for the unjudged queries' names and for
    # measures that read the judged ones' ids; the classical ones read only their number
    ids_read = any(m.spec.reads_query_ids for m in measures)
    names = _query_ids(qid_offsets, qid_data) if ids_read or len(codes) < len(qpos) else None
    # block_align gives the judged queries by position, the scan in the block's order (it
    # checked that each is there once), which the block's values keep: a merge puts each
    # query's row where its position says
    if scanned is None:
        codes = codes[np.argsort(qpos[codes], kind="stable")]
    positions = qpos[codes]
    aligned = Aligned(
        query_ids=names[codes] if names is not None and ids_read else unread_ids(len(codes)),
        offsets=np.frombuffer(out[1], dtype=np.int64),
        grades=np.frombuffer(out[3], dtype=np.int32),
        run_rows=np.frombuffer(out[2], dtype=np.int32),  # type: ignore[arg-type]
        label_offsets=np.frombuffer(out[5], dtype=np.int64),
        label_grades=np.frombuffer(out[7], dtype=np.int32),
        in_run=np.ones(len(positions), dtype=bool),
        n_unjudged_queries=int(len(qpos) - len(codes)),
        rel_level=inputs.rel_level,
        label_rows=np.frombuffer(out[6], dtype=np.int64),
        item_label=np.frombuffer(out[4], dtype=np.int64),
        qrels_doc_ids=qrels.doc_ids,
        options={**evaluation_options(inputs.grade_map), **side_options(measures)},
    )
    dupes = int(out[8])
    retrieved = len(aligned.grades)
    warnings: tuple[str, ...] = ()
    if dupes:
        warnings = (
            f"{source}: {dupes} duplicate (query, doc) row(s) dropped; "
            "each doc keeps its best-ranked occurrence",
        )
    unjudged = [] if names is None else names[~judged].tolist()
    return BlockValues(
        query_index=positions,
        values=compute(aligned, measures),
        unjudged=tuple(sorted(unjudged, key=str.encode)),
        warnings=warnings,
        retrieved=retrieved,
        judged=retrieved - int(np.count_nonzero(aligned.grades == NOT_JUDGED)),
    )


class UnreadId:
    """The id of a query in an alignment whose measures read no id (their families say
    ``reads_query_ids=False``): using it as text is an error, never a wrong id."""

    __slots__ = ()

    def _refuse(self) -> str:
        raise RuntimeError(
            "a query id was read by a measure whose family says reads_query_ids=False"
        )

    def __str__(self) -> str:
        return self._refuse()

    def __repr__(self) -> str:
        return self._refuse()

    def __format__(self, spec: str) -> str:
        return self._refuse()


_UNREAD = UnreadId()


def unread_ids(n: int) -> np.ndarray:
    """``n`` :class:`UnreadId` (one object, ``n`` references: no string made)."""
    return np.full(n, _UNREAD, dtype=object)


def join_arguments(inputs: EvalInputs) -> tuple[object, ...] | None:
    """What ``scan_block`` and ``block_align`` take of the qrels after the keys: offsets per
    query, the doc ids' buffers, the grades and the depth (-1: none); ``None`` where the doc
    ids are not plain Arrow strings."""
    qrels = inputs.qrels
    docs = _accel.string_buffers(qrels.doc_ids)
    if docs is None:
        return None
    return (
        np.ascontiguousarray(qrels.offsets, dtype=np.int64),
        *docs,
        np.ascontiguousarray(qrels.grades, dtype=np.int32),
        -1 if inputs.depth is None else int(inputs.depth),
    )


def _query_ids(offsets: bytearray, data: bytearray) -> np.ndarray:
    """The block's query ids (parse_trec's dictionary, in order of first line) as strings."""
    bounds = np.frombuffer(offsets, dtype=np.int64)
    strings = pa.Array.from_buffers(
        pa.large_string(), len(bounds) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    # fromiter: assigning the list to an empty object array looks for nested sequences in it
    return np.fromiter(strings.to_pylist(), dtype=object, count=len(bounds) - 1)
