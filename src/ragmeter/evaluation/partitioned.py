"""Runs evaluated piece by piece: partitioned inputs, and the engines that evaluate them.

A run to evaluate is a *source*: a :class:`~ragmeter.core.data.Run` in memory, a file, or
partitions (a folder or glob, :class:`~ragmeter.io.partitions.Partitions`). A source is cut
into :class:`Piece` s, each a block of whole queries evaluated on its own
(:func:`~ragmeter.evaluation.blocks.evaluate_block`), and merged back in piece order
(:class:`PieceMerger`) into the :class:`~ragmeter.evaluation.results.RunResult` and warnings
of the whole run, bit for bit:

* partitions: one piece per partition file, read where the piece is evaluated;
* a TREC file, on a cluster: its byte blocks of whole queries
  (:class:`~ragmeter.io.trec_blocks.TrecRunBlocks`); another file: one piece;
* a run in memory, on a cluster: ``slices`` pieces of consecutive queries.

The ``local`` engine evaluates in this process: partitions one at a time (memory bounded by
the largest partition, plus the per-query values), other sources whole
(:func:`~ragmeter.evaluation.evaluate_inputs`). The ``ray`` engine
(:mod:`ragmeter.evaluation.distributed`) evaluates the pieces as Ray tasks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, TypeAlias

import numpy as np

from ragmeter import _accel
from ragmeter.core.data import Run
from ragmeter.errors import InputError
from ragmeter.evaluation.blocks import (
    BlockMerger,
    BlockValues,
    RepeatedQueryError,
    evaluate_block,
    index_before_fork,
)
from ragmeter.evaluation.forking import PARALLEL_BYTES, default_workers, forked_map
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.results import RunResult
from ragmeter.io.partitions import PartitionError, Partitions, is_partitioned
from ragmeter.measures import Measure

PathLike: TypeAlias = str | os.PathLike[str]
#: bytes of a TREC file per piece on a cluster (whole queries: about 300,000 lines of a run)
TREC_BLOCK_BYTES = 32 << 20
#: what ``evaluate`` takes as one run


@dataclass(frozen=True)
class Engine:
    """Where an evaluation runs.

    Attributes:
        kind: ``"local"`` (this process) or ``"ray"`` (Ray tasks).
        address: the Ray cluster: ``None`` starts one on this machine (or joins
            ``$RAY_ADDRESS`` when set), ``"auto"`` the cluster this machine belongs to,
            ``"ray://host:10001"`` a remote one through Ray Client.
        workers: CPUs of a cluster started here (default: all), and at most this many tasks
            in flight on any cluster (default: twice the cluster's CPUs).
    """

    kind: Literal["local", "ray"] = "local"
    address: str | None = None
    workers: int | None = None

    @classmethod
    def parse(cls, engine: str | Engine | None, *, workers: int | None = None) -> Engine:
        """``local``, ``ray``, ``ray=ADDRESS`` or ``ray://host:port`` as an :class:`Engine`."""
        if isinstance(engine, Engine):
            return engine if workers is None else replace(engine, workers=workers)
        if workers is not None and workers < 1:
            raise InputError(f"--workers {workers}: expected ≥ 1", field="workers")
        text = (engine or "local").strip()
        if text.lower() == "local":
            return cls("local", None, workers)
        if text.lower() == "ray":
            return cls("ray", None, workers)
        if text.startswith("ray://"):
            return cls("ray", text, workers)
        kind, sep, address = text.partition("=")
        if kind.lower() == "ray" and sep and address.strip():
            return cls("ray", address.strip(), workers)
        raise InputError(
            f"--engine {text!r}: expected local, ray, ray=ADDRESS (auto, host:port) or "
            "ray://host:port"
        )


@dataclass(frozen=True)
class RunFile:
    """A run file (not partitioned) and its run's name (by default the file's name, as the
    readers name it)."""

    path: Path
    name: str

    def read(self) -> Run:
        """The whole run."""
        from ragmeter.io.readers import read_run

        return read_run(self.path, name=self.name)


#: one run to evaluate
Source: TypeAlias = Run | Partitions | RunFile


@dataclass(frozen=True, eq=False)
class Piece:
    """Block ``index`` of whole queries of source ``number``, as a task receives it: the one
    partition file of ``partitions``, a byte block ``chunk`` of the TREC file ``path``
    (whose first line is ``first_line``), or the queries of ``run``."""

    number: int
    index: int
    partitions: Partitions | None = None
    path: str | None = None
    name: str | None = None
    chunk: bytes | None = None
    first_line: int = 1
    run: Run | None = None

    def read(self) -> Run:
        """The piece's run."""
        if self.partitions is not None:  # the one partition file of this piece
            return self.partitions.read_run(0)
        if self.chunk is not None and self.path is not None:
            from ragmeter.io.trec_blocks import TrecRunBlocks

            return TrecRunBlocks(self.path, name=self.name).parse(self.chunk, self.first_line)
        assert self.run is not None
        return self.run


def evaluate_piece(piece: Piece, inputs: EvalInputs, measures: list[Measure]) -> BlockValues:
    """The per-query values of one piece (what a task computes)."""
    return evaluate_block(piece.read(), inputs, measures)


def as_source(run: Run | PathLike, name: str | None = None) -> Source:
    """A run, a run file, or the partitions of a folder or glob, named ``name`` (``None``:
    its own name)."""
    if isinstance(run, Run):
        return run if name is None else replace(run, name=name)
    if is_partitioned(run):
        return Partitions.find(run, name=name)
    return RunFile(Path(run), name or Path(run).name)


def read_source(source: Source) -> Run:
    """The whole run of ``source``, in memory (partitions joined)."""
    if isinstance(source, Run):
        return source
    if isinstance(source, RunFile):
        return source.read()
    from ragmeter.io.partitions import join_runs

    return join_runs(source, list(source.runs()))


def run_slices(run: Run, n: int) -> Iterator[Run]:
    """``run`` cut into at most ``n`` runs of consecutive queries (rows copied); the reading
    warnings go with the first."""
    bounds = np.unique(np.linspace(0, run.n_queries, max(1, n) + 1).round().astype(np.int64))
    for k, (a, b) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)):
        lo, hi = int(run.offsets[a]), int(run.offsets[b])
        rows = np.arange(lo, hi, dtype=np.int64)
        yield replace(
            run,
            query_ids=run.query_ids[a:b],
            offsets=run.offsets[a : b + 1] - lo,
            doc_ids=_accel.take_strings(run.doc_ids, rows),
            scores=run.scores[lo:hi].copy(),
            cutoffs=run.cutoffs[a:b].copy() if run.cutoffs is not None else None,
            texts=_accel.take_strings(run.texts, rows) if run.texts is not None else None,
            warnings=run.warnings if k == 0 else (),
        )


def pieces(source: Source, number: int, *, slices: int) -> Iterator[Piece]:
    """The pieces of source ``number`` for a cluster (see the module docstring)."""
    if isinstance(source, Partitions):
        for i in range(len(source)):
            yield Piece(number, i, partitions=source.only(i))
    elif isinstance(source, Run):
        for i, part in enumerate(run_slices(source, slices)):
            yield Piece(number, i, run=part)
    else:
        from ragmeter.io.readers import detect_format

        path, fmt = source.path, detect_format(source.path)
        if fmt != "trec":
            yield Piece(number, 0, partitions=Partitions(str(path), (path,), fmt, source.name))
            return
        from ragmeter.io.trec_blocks import TrecRunBlocks

        blocks = TrecRunBlocks(path, name=source.name, block_bytes=TREC_BLOCK_BYTES)
        for i, (chunk, first_line) in enumerate(blocks.chunks()):
            yield Piece(
                number, i, path=str(path), name=source.name, chunk=chunk, first_line=first_line
            )


class PieceMerger:
    """Merges the values of one source's pieces, given in any order, in piece order.

    Pieces wait until those before them are merged (so warnings and errors come as the
    in-process evaluation gives them); a query in two partitions is a
    :class:`~ragmeter.io.partitions.PartitionError` naming both files.
    """

    def __init__(self, source: Source, inputs: EvalInputs, measures: list[Measure]) -> None:
        self.source = source
        self.merger = BlockMerger(source.name, inputs, measures)
        self._qrels_ids = inputs.qrels.query_ids
        self._owner = np.full(inputs.qrels.n_queries, -1, dtype=np.int64)
        self._unjudged: dict[str, int] = {}
        self._waiting: dict[int, BlockValues] = {}
        self._next = 0

    def add(self, index: int, block: BlockValues) -> None:
        """Add piece ``index``'s values; merged once the pieces before it are."""
        self._waiting[index] = block
        while self._next in self._waiting:
            self._merge(self._next, self._waiting.pop(self._next))
            self._next += 1

    def _merge(self, index: int, block: BlockValues) -> None:
        parts = self.source if isinstance(self.source, Partitions) else None
        if parts is not None:
            held = self._owner[block.query_index]
            again = np.flatnonzero(held >= 0)
            if len(again):  # the first in the qrels' order, whatever the block's
                i = int(again[np.argmin(block.query_index[again])])
                query = str(self._qrels_ids[int(block.query_index[i])])
                raise parts.repeated(query, int(held[i]), index)
            self._owner[block.query_index] = index
            for q in block.unjudged:
                first = self._unjudged.setdefault(q, index)
                if first != index:
                    raise parts.repeated(q, first, index)
        try:
            self.merger.add(block)
        except RepeatedQueryError as exc:  # a file's blocks: it is not grouped by query
            where = self.source.path if isinstance(self.source, RunFile) else None
            raise RepeatedQueryError(exc.query_id, source=str(where)) from None

    def result(self, pieces: int) -> tuple[RunResult, list[str]]:
        """The run's result and warnings, once its ``pieces`` pieces are merged."""
        if self._next != pieces or self._waiting:
            raise RuntimeError(f"{self._next} of {pieces} pieces merged")
        result, warnings = self.merger.result()
        if isinstance(self.source, Run):  # in memory: later views may evaluate it again
            result = replace(result, source=self.source)
        return result, warnings


def evaluate_partitions(
    partitions: Partitions,
    inputs: EvalInputs,
    measures: list[Measure],
    *,
    workers: int | None = None,
) -> tuple[RunResult, list[str]]:
    """The result and warnings of a partitioned run, evaluated on this machine one partition
    at a time in each of ``workers`` forked processes (default: :func:`default_workers` when
    the partitions hold :data:`PARALLEL_BYTES` or more, else 1: this process)."""
    if workers is None:
        size = sum(os.path.getsize(p) for p in partitions.paths)
        workers = default_workers() if size >= PARALLEL_BYTES else 1
    merger = PieceMerger(partitions, inputs, measures)
    index_before_fork(inputs.qrels)
    pieces = [Piece(0, i, partitions=partitions.only(i)) for i in range(len(partitions))]
    job = (inputs, measures)
    with closing(
        forked_map(_evaluate_job_piece, job, pieces, workers, what=partitions.source)
    ) as done:
        for i, block in enumerate(done):
            merger.add(i, block)
    return merger.result(len(partitions))


def _evaluate_job_piece(job: tuple[EvalInputs, list[Measure]], piece: Piece) -> BlockValues:
    inputs, measures = job
    return evaluate_piece(piece, inputs, measures)


__all__ = [
    "Engine",
    "PartitionError",
    "Piece",
    "PieceMerger",
    "RunFile",
    "Source",
    "as_source",
    "evaluate_partitions",
    "evaluate_piece",
    "pieces",
    "read_source",
    "run_slices",
]
