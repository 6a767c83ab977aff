"""Evaluation in blocks of queries: the seam of streaming and partitioned evaluation.

Every measure's value for a query depends only on that query's ranking and judgments, so a
block of queries evaluated on its own gives those queries the values the whole run gives them.
:func:`evaluate_block` evaluates one block (a :class:`~ragmeter.core.data.Run` holding some
queries, each with all its lines) to per-query values, a :class:`BlockValues`;
:class:`BlockMerger` (or :func:`merge_blocks`) puts the blocks' values in the qrels' query
order, scores the judged queries that no block held (as empty rankings, or skipped, by
``missing``) and returns the :class:`~ragmeter.evaluation.results.RunResult` and warnings of
the whole-run evaluation, bit for bit: the aggregates add the per-query values in query order
(:mod:`ragmeter.core.sums`), whichever block each came from.

A query may be in one block only (a run grouped by query, as TREC runs and ragmeter's writers
are): :class:`RepeatedQueryError` when a judged query comes back in a later block. A run query
without judgments may repeat; it is counted once.

Blocks are independent: they can be evaluated in any order, in other processes or on other
machines, and merged in any order. The inputs must be per-query (qrels, options, per-doc side
inputs); :func:`block_support` says why an evaluation's inputs are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter import _accel
from ragmeter.core.data import IntArray, Qrels, Run
from ragmeter.errors import InputError
from ragmeter.evaluation.engine import (
    alignment_warnings,
    compute,
    judged_share,
    pool_warning,
    prepare,
    resolve_measures,
)
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import Measure

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class BlockValues:
    """The per-query values of one block of queries.

    Attributes:
        query_index: position of each evaluated query in the qrels' queries (each once; in
            the block's order on the one-pass path, ascending on the others).
        values: float64 values (query × measure), NaN where NA.
        unjudged: the block's run queries without judgments (not evaluated).
        warnings: the block run's own warnings (from reading it).
        pool_outside: judged items of the top ``pool_selection`` the pool lacks.
        pool_selection: the largest cutoff of the pool-based measures (``None``: none asked).
    """

    query_index: IntArray
    values: FloatArray
    unjudged: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    pool_outside: int = 0
    pool_selection: int | None = None
    retrieved: int = 0
    judged: int = 0


class RepeatedQueryError(InputError):
    """A judged query is in two blocks: the run is not grouped by query."""

    def __init__(self, query_id: str, source: str | None = None, line: int | None = None):
        self.query_id = query_id
        super().__init__(
            f"query '{query_id}' appears again after other queries; evaluation in blocks "
            "needs a run grouped by query (each query's lines together, as in TREC runs): "
            "sort it first (e.g. `sort -s -k1,1`) or evaluate it in memory",
            source=source,
            line=line,
        )


def block_support(inputs: EvalInputs) -> str | None:
    """Why ``inputs`` cannot be evaluated in blocks, or ``None`` when they can.

    Sub-question judgments, answers, nugget and citation inputs and a separate candidate
    pool are joined per run, not per query, so they need the whole run in memory.
    """
    if inputs.judgments is not None:
        return "sub-question judgments (coverage measures) need the whole run"
    if inputs.answers is not None:
        return "answers need the whole run"
    if inputs.pool is not None:
        return "a separate candidate pool needs the whole run"
    if any(x is not None for x in (inputs.nuggets, inputs.nugget_assignments)):
        return "nuggets and their assignments need the whole run"
    if inputs.citation_support is not None:
        return "citation support needs the whole run"
    if inputs.spans is not None and not inputs.spans.one_table:
        return "chunk tables given per run are matched to whole runs"
    return None


class QueryIndex:
    """Positions of query ids among the qrels' queries (which are in byte order).

    The ids are held as one fixed-width byte array (NUL-padded: its order is the ids' byte
    order), searched by bisection: a few bytes per query where a ``{query id: position}``
    dict of Python strings costs about 100 (10 M queries: 0.1 GB against 1 GB). Qrels whose
    ids hold a NUL, or whose longest id would make the array more than 4 times their
    bytes, use a dict.
    """

    def __init__(self, query_ids: npt.NDArray[np.object_]) -> None:
        self.query_ids = query_ids
        self._keys = _fixed_width(query_ids)
        self._slots: bytearray | None = None
        self._dict: dict[str, int] | None = None
        if self._keys is None:
            self._dict = {q: i for i, q in enumerate(query_ids.tolist())}

    def positions(self, query_ids: Sequence[str]) -> IntArray:
        """The position of each of ``query_ids`` (-1: not a qrels query)."""
        if self._dict is not None:
            index = self._dict
            return np.fromiter(
                (index.get(q, -1) for q in query_ids), dtype=np.int64, count=len(query_ids)
            )
        keys = self._keys
        assert keys is not None
        n, width = len(keys), keys.dtype.itemsize
        out = np.full(len(query_ids), -1, dtype=np.int64)
        if n == 0 or not len(query_ids):
            return out
        encoded = [q.encode() for q in query_ids]
        # NUL-padded bytes compare equal only if the ids are (neither holds a NUL). The ids'
        # Python strings are not touched: in a forked worker that would copy their pages.
        fits = np.fromiter(
            (len(b) <= width and b"\0" not in b for b in encoded), dtype=bool, count=len(encoded)
        )
        asked = np.array(encoded, dtype=keys.dtype)
        found = np.minimum(np.searchsorted(keys, asked), n - 1)
        match = fits & (keys[found] == asked)
        out[match] = found[match]
        return out

    @property
    def keys(self) -> npt.NDArray[np.bytes_] | None:
        """The ids as one NUL-padded fixed-width byte array (ascending), or ``None`` when
        they are held in a dict."""
        return self._keys

    def slots(self) -> bytearray | None:
        """The accelerator's hash table of :attr:`keys` (``_native.key_slots``), built on
        first use, or ``None`` without keys or accelerator."""
        native = _accel.native
        if self._slots is None and self._keys is not None and native is not None:
            self._slots = native.key_slots(self._keys, self._keys.dtype.itemsize)
        return self._slots

    def get(self, query_id: str, default: int = -1) -> int:
        """The position of ``query_id``, or ``default``."""
        pos = int(self.positions([query_id])[0])
        return pos if pos >= 0 else default


def _fixed_width(query_ids: npt.NDArray[np.object_]) -> npt.NDArray[np.bytes_] | None:
    """``query_ids`` UTF-8 encoded in one NUL-padded fixed-width array, if ascending, NUL-free
    and at most 4 times their bytes (plus 8 per id); else ``None``."""
    native = _accel.native
    if native is not None:
        # the C twin reads ASCII ids' bytes in place (numpy converts each id: 0.13 s at a
        # million ids); None: an id it does not read, for the lines below
        fast = native.fixed_width(query_ids.tolist())
        if fast is False:
            return None
        if fast is not None:
            data, width = fast
            keys: npt.NDArray[np.bytes_] = np.frombuffer(data, dtype=f"S{width}")
            return keys
    n = len(query_ids)
    # numpy encodes ASCII str objects itself; other ids are encoded here first. (Not
    # ``pa.array``: it imports pandas, when installed, to check for pandas inputs: 0.2 s.)
    items = query_ids
    if not all(map(str.isascii, query_ids)):
        items = np.empty(n, dtype=object)
        items[:] = [q.encode() for q in query_ids]
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=n)
    total = int(lengths.sum())
    width = max(1, int(lengths.max()) if n else 1)
    if width * n > 4 * total + 8 * n:
        return None
    keys = items.astype(f"S{width}")
    # NUL padding holds no other bytes: fewer non-NUL bytes than the ids' means an id has a NUL
    if np.count_nonzero(keys.view(np.uint8)) != total:
        return None
    if n > 1 and not bool((keys[1:] > keys[:-1]).all()):
        return None
    return keys


_INDEX: dict[int, tuple[Qrels, QueryIndex]] = {}

#: judged queries absent from a run are scored as empty runs this many at a time
ABSENT_BLOCK = 100_000


def qrels_index(qrels: Qrels) -> QueryIndex:
    """The :class:`QueryIndex` of ``qrels``, kept for the last qrels asked (one per process:
    every block of an evaluation uses the same qrels)."""
    held = _INDEX.get(0)
    if held is None or held[0] is not qrels:
        _INDEX[0] = held = (qrels, QueryIndex(qrels.query_ids))
    return held[1]


def index_before_fork(qrels: Qrels) -> None:
    """Build the query index of ``qrels`` (with its hash table, where the accelerator is
    loaded) in this process before workers are forked, so that they inherit it, and give the
    heap's free pages back first and after (what reading the qrels and building the index
    freed would otherwise stay resident in every worker)."""
    _accel.release_free_heap()
    qrels_index(qrels).slots()
    _accel.release_free_heap()


def qrels_subset(
    qrels: Qrels, positions: IntArray, query_ids: npt.NDArray[np.object_] | None = None
) -> Qrels:
    """The qrels of the queries at ``positions`` (ascending), in the same (byte) order.

    ``query_ids``, when given, are the ids at ``positions`` (equal strings held elsewhere: a
    forked worker that indexed the qrels' own would copy the pages of every id it touched).
    """
    positions = np.asarray(positions, dtype=np.int64)
    starts = qrels.offsets[positions]
    lengths = qrels.offsets[positions + 1] - starts
    offsets = np.zeros(len(positions) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    rows = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]), dtype=np.int64)
    return Qrels(
        query_ids=qrels.query_ids[positions] if query_ids is None else query_ids,
        offsets=offsets,
        doc_ids=_accel.take_strings(qrels.doc_ids, rows),
        grades=qrels.grades[rows],
        name=qrels.name,
    )


def empty_run(name: str) -> Run:
    """A run without lines named ``name``."""
    docs = pa.Array.from_buffers(
        pa.string(), 0, [None, pa.py_buffer(np.zeros(1, dtype=np.int32)), pa.py_buffer(b"")]
    )
    return Run(
        query_ids=np.zeros(0, dtype=object),
        offsets=np.zeros(1, dtype=np.int64),
        doc_ids=docs,
        scores=np.zeros(0, dtype=np.float64),
        name=name,
    )


def _values_on(
    run: Run, qrels: Qrels, positions: IntArray, inputs: EvalInputs, measures: Sequence[Measure]
) -> BlockValues:
    """Values of ``run`` on the qrels queries at ``positions`` (``qrels`` is their subset)."""
    prepared = prepare(run, replace(inputs, qrels=qrels), measures)
    return BlockValues(
        query_index=positions,
        values=compute(prepared.aligned, measures),
        pool_outside=prepared.pool_outside,
        pool_selection=prepared.pool_selection,
        retrieved=prepared.retrieved,
        judged=prepared.judged,
    )


def evaluate_block(run: Run, inputs: EvalInputs, measures: Sequence[Measure]) -> BlockValues:
    """Per-query values of one block of queries ``run`` (each with all its lines).

    ``measures`` are resolved (:func:`~ragmeter.evaluation.resolve_measures` with
    ``inputs.default_k`` and ``inputs.context_cutoff``), the same for every block. Only the
    judged queries the block holds are evaluated; merging (:class:`BlockMerger`) adds the
    judged queries no block held.
    """
    reason = block_support(inputs)
    if reason is not None:
        raise ValueError(f"cannot evaluate in blocks: {reason}")
    qids = run.query_ids.tolist()
    pos = qrels_index(inputs.qrels).positions(qids)
    judged = pos >= 0
    by_position = np.argsort(pos[judged], kind="stable")
    positions = pos[judged][by_position]
    subset = qrels_subset(inputs.qrels, positions, run.query_ids[judged][by_position])
    result = _values_on(run, subset, positions, inputs, measures)
    unjudged = tuple(str(q) for q, j in zip(qids, judged.tolist(), strict=True) if not j)
    return replace(result, unjudged=unjudged, warnings=run.warnings)


class BlockMerger:
    """Merges the :class:`BlockValues` of one run, added in any order, into its result.

    ``result()`` returns the :class:`RunResult` and the run's warnings exactly as
    :func:`~ragmeter.evaluation.evaluate_inputs` gives them for the whole run (reading
    warnings of the blocks merged by :func:`merge_reading_warnings`).
    """

    def __init__(self, name: str, inputs: EvalInputs, measures: Sequence[Measure]) -> None:
        self.name = name
        self.inputs = inputs
        self.measures = tuple(measures)
        n = inputs.qrels.n_queries
        self._seen = np.zeros(n, dtype=bool)
        # not filled: a row is read only once a block wrote it, or result() scored it as an
        # empty ranking, or dropped it (a 10 M-query fill took 0.04 s before the workers began)
        self._values = np.empty((n, len(self.measures)), dtype=np.float64, order="F")
        self._unjudged: set[str] = set()
        self._warnings: list[str] = []
        self._outside = 0
        self._selection: int | None = None
        self._retrieved = 0
        self._judged = 0

    def add(self, block: BlockValues) -> None:
        """Add one block's values; :class:`RepeatedQueryError` if it repeats a query."""
        pos = block.query_index
        again = pos[self._seen[pos]]
        if len(again):  # the first in the qrels' order, whatever the block's
            raise RepeatedQueryError(str(self.inputs.qrels.query_ids[int(again.min())]))
        self._seen[pos] = True
        # column by column: a column's scattered writes go up one contiguous array (one
        # 2-D fancy assignment of the rows into the column-major array took 1.6 times as long)
        for j in range(block.values.shape[1]):
            self._values[pos, j] = block.values[:, j]
        self._unjudged.update(block.unjudged)
        self._warnings.extend(block.warnings)
        self._outside += block.pool_outside
        self._retrieved += block.retrieved
        self._judged += block.judged
        self._selection = (
            block.pool_selection if block.pool_selection is not None else (self._selection)
        )

    def result(self) -> tuple[RunResult, list[str]]:
        """The run's result and warnings (the qrels' own warnings not included)."""
        qrels = self.inputs.qrels
        absent = np.flatnonzero(~self._seen)
        n_missing = n_skipped = 0
        keep: IntArray | slice = slice(None)
        if len(absent) and self.inputs.missing == "zero":
            # in blocks too: a run holding few of 10 M judged queries must not align them all
            # at once
            for lo in range(0, len(absent), ABSENT_BLOCK):
                part = absent[lo : lo + ABSENT_BLOCK]
                empty = _values_on(
                    empty_run(self.name),
                    qrels_subset(qrels, part),
                    part,
                    self.inputs,
                    self.measures,
                )
                self._values[part] = empty.values
            n_missing = len(absent)
        elif len(absent):
            keep = np.flatnonzero(self._seen)
            n_skipped = len(absent)
        warnings = merge_reading_warnings(self._warnings)
        warnings += alignment_warnings(self.name, n_missing, n_skipped, len(self._unjudged))
        if self._outside:
            warnings.append(pool_warning(self.name, self._outside, self._selection))
        if len(self.inputs.qrels.doc_ids):  # qrels naming queries only judge no document
            warnings += judged_share(self.name, self._judged, self._retrieved)
        values = self._values if isinstance(keep, slice) else np.asfortranarray(self._values[keep])
        result = RunResult(
            name=self.name,
            query_ids=qrels.query_ids[keep],
            measures=self.measures,
            values=values,
            n_missing=n_missing,
            n_skipped=n_skipped,
            n_unjudged_queries=len(self._unjudged),
            source=None,
            inputs=self.inputs,
        )
        return result, warnings


def merge_blocks(
    name: str, blocks: Iterable[BlockValues], inputs: EvalInputs, measures: Sequence[Measure]
) -> tuple[RunResult, list[str]]:
    """The result and warnings of the run whose blocks are ``blocks`` (see :class:`BlockMerger`)."""
    merger = BlockMerger(name, inputs, measures)
    for block in blocks:
        merger.add(block)
    return merger.result()


# A reading warning that counts: "SOURCE: N what". Blocks of one file give one each; the
# whole file gives one with the total.
_COUNTED = re.compile(r"^(?P<source>.*): (?P<n>\d+) (?P<what>.*)$", re.S)
# The order the readers write them in (line endings, extra fields, then the run's own).
_KINDS = ("CRLF line endings", "line(s) with fields after")


def merge_reading_warnings(warnings: Iterable[str]) -> list[str]:
    """The reading warnings of several blocks of one file as the whole file gives them.

    Identical warnings are kept once; counted ones (``f: 3 duplicate … dropped``) are summed
    into one; the readers' order (line endings, extra fields, duplicates) is kept.
    """
    merged: dict[tuple[str, ...], int] = {}
    for w in warnings:
        m = _COUNTED.match(w)
        if m is None:
            merged.setdefault((w,), 0)
        else:
            key = (m["source"], m["what"])
            merged[key] = merged.get(key, 0) + int(m["n"])
    out = [k[0] if len(k) == 1 else f"{k[0]}: {n} {k[1]}" for k, n in merged.items()]

    def kind(w: str) -> int:
        return next((i for i, k in enumerate(_KINDS) if k in w), len(_KINDS))

    return sorted(out, key=kind)


def evaluate_blocks(
    blocks: Iterable[Run],
    inputs: EvalInputs,
    measures: Iterable[str | Measure] | str,
    *,
    name: str | None = None,
) -> Evaluation:
    """Evaluate the run whose blocks of queries are ``blocks`` (an iterator of :class:`Run`,
    e.g. :class:`~ragmeter.io.trec_blocks.TrecRunBlocks`): the :class:`Evaluation` that
    :func:`~ragmeter.evaluation.evaluate_inputs` gives for the whole run, holding one block
    at a time. ``name`` defaults to the first block's."""
    measure_list = resolve_measures(
        measures, default_k=inputs.default_k, context_k=inputs.context_cutoff
    )
    merger: BlockMerger | None = None
    for run in blocks:
        if merger is None:
            merger = BlockMerger(name or run.name, inputs, measure_list)
        try:
            merger.add(evaluate_block(run, inputs, measure_list))
        except RepeatedQueryError as exc:
            line_of = getattr(blocks, "line_of", None)
            raise RepeatedQueryError(
                exc.query_id,
                source=getattr(blocks, "source", None),
                line=line_of(exc.query_id) if line_of is not None else None,
            ) from None
    if merger is None:
        merger = BlockMerger(name or "run", inputs, measure_list)
    result, warnings = merger.result()
    return Evaluation((result,), tuple(measure_list), (*inputs.input_warnings, *warnings))
