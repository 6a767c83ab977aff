"""Evaluation of run files in blocks of queries: memory bounded by the block, not the file.

:func:`evaluate_run_files` evaluates runs given as paths, :class:`~ragmeter.core.data.Run`
objects or iterators of blocks (each a :class:`Run` of whole queries) and returns what
:func:`~ragmeter.evaluation.evaluate_inputs` returns for the whole runs, bit for bit:

* a plain (uncompressed) TREC run file is cut into byte ranges of about ``block_bytes`` that
  end where a query's lines begin; each range is read, parsed and evaluated on its own
  (:func:`~ragmeter.evaluation.blocks.evaluate_block`), in ``workers`` forked processes
  (default ``min(2, os.cpu_count())`` for a file of 64 MiB or more, else 1: in this process;
  ``RAGMETER_WORKERS`` or ``workers`` sets the number for every file),
  and the parent merges the per-query values in file order
  (:class:`~ragmeter.evaluation.blocks.BlockMerger`);
* a compressed TREC run file (gzip, bzip2, xz, zstd) is decompressed and evaluated block by
  block in this process (:class:`~ragmeter.io.trec_blocks.TrecRunBlocks`);
* a run in any other format, and every run when the inputs are not per query (sub-question
  judgments, answers, a separate candidate pool: :func:`~ragmeter.evaluation.block_support`),
  is read whole.

A run file must be grouped by query (each query's lines together, as TREC runs and ragmeter's
writers are). A judged query whose lines come back after other queries' in a later block is an
error (:class:`~ragmeter.evaluation.blocks.RepeatedQueryError`) naming the file and the line
where it comes back, and saying to sort the file (``sort -s -k1,1``); it is never read a second
way. Errors of a later block name the file's line, as reading the whole file does.

A streamed :class:`~ragmeter.evaluation.results.RunResult` does not hold its run
(``source`` is ``None``); ``run_file`` names the file, and a view that evaluates the run again
(:func:`~ragmeter.evaluation.sweep_evaluation`) streams it from there.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeAlias

from ragmeter import _accel
from ragmeter.core.data import Run
from ragmeter.errors import InputError
from ragmeter.evaluation.blocks import (
    BlockMerger,
    BlockValues,
    RepeatedQueryError,
    block_support,
    evaluate_block,
    evaluate_blocks,
    index_before_fork,
)
from ragmeter.evaluation.engine import evaluate_inputs, resolve_measures
from ragmeter.evaluation.forking import (
    PARALLEL_BYTES,
    WORKERS_ENV,
    default_workers,
    forked_map,
)
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.io._common import read_errors
from ragmeter.io.trec_blocks import newlines_before, query_starts
from ragmeter.measures import Measure

#: bytes of run file per block: about 0.45 M lines (4,500 queries × 100) of a typical run
BLOCK_BYTES = 16 << 20

RunPath: TypeAlias = str | os.PathLike[str]
RunSource: TypeAlias = RunPath | Run | Iterable[Run]


#: bytes of a typical TREC run line (``q123 Q0 d4567 12 3.5 tag``): the file's size over this
#: estimates its lines for the pure path's warning
_BYTES_PER_RUN_LINE = 40


def is_run_path(obj: object) -> bool:
    """Whether ``obj`` names a run file (a ``str`` or path-like)."""
    return isinstance(obj, str | os.PathLike)


def is_blocks(obj: object) -> bool:
    """Whether ``obj`` is an iterator of run blocks (not a run, a mapping, a list or a path)."""
    return isinstance(obj, Iterator) or hasattr(obj, "chunks")


def evaluate_run_files(
    runs: RunSource | Sequence[RunSource],
    inputs: EvalInputs,
    measures: Iterable[str | Measure] | str,
    *,
    names: Sequence[str | None] | None = None,
    workers: int | None = None,
    block_bytes: int | None = None,
) -> Evaluation:
    """Evaluate ``runs`` (paths, :class:`Run` objects, iterators of blocks) with ``inputs``,
    streaming what can be streamed (see the module docstring).

    Args:
        runs: one run source or a list of them.
        inputs: the qrels, side inputs and options.
        measures: names or measure objects.
        names: each run's name (``None``: the file name, as :func:`ragmeter.read_run`, or the
            first block's name).
        workers: processes that read and evaluate ranges of a plain TREC file (default
            :func:`default_workers` for a file of :data:`PARALLEL_BYTES` or more, else 1);
            1 evaluates in this process.
        block_bytes: bytes of run file per block (default :data:`BLOCK_BYTES`, 16 MiB:
            about 0.45 M lines of a typical run).
    """
    single = is_run_path(runs) or is_blocks(runs) or isinstance(runs, Run)
    sources: list[RunSource] = [runs] if single else list(runs)  # type: ignore[list-item,arg-type]
    given = list(names) if names is not None else [None] * len(sources)
    if len(given) != len(sources):
        raise ValueError(f"{len(given)} names for {len(sources)} runs")
    measure_list = resolve_measures(
        measures, default_k=inputs.default_k, context_k=inputs.context_cutoff
    )
    reason = block_support(inputs)
    if reason is not None:  # per-run inputs: every run whole
        whole = [_whole_run(s, n, reason) for s, n in zip(sources, given, strict=True)]
        return evaluate_inputs(whole, inputs, measure_list)
    # given (argument or environment): used as given; by default a small file stays in-process
    n_workers = workers if workers is not None else default_workers()
    explicit = workers is not None or bool(os.environ.get(WORKERS_ENV, "").strip())
    block_bytes = block_bytes if block_bytes is not None else BLOCK_BYTES
    if n_workers < 1:
        raise ValueError(f"workers={n_workers}: expected at least 1")
    warnings = list(inputs.input_warnings)
    results: list[RunResult] = []
    for source, name in zip(sources, given, strict=True):
        result, own = _evaluate_source(
            source,
            name,
            inputs,
            measure_list,
            workers=n_workers if explicit else -n_workers,
            block_bytes=block_bytes,
        )
        results.append(result)
        warnings.extend(own)
    return Evaluation(tuple(results), tuple(measure_list), tuple(warnings))


def _whole_run(source: RunSource, name: str | None, reason: str) -> Run:
    """``source`` read whole, for inputs that cannot be evaluated in blocks."""
    from ragmeter.io.readers import read_run

    if isinstance(source, Run):
        return source if name is None else replace(source, name=name)
    if is_run_path(source):
        return read_run(source, name=name)  # type: ignore[arg-type]
    raise ValueError(f"cannot evaluate a run given in blocks: {reason}; give the whole run")


def _evaluate_source(
    source: RunSource,
    name: str | None,
    inputs: EvalInputs,
    measures: list[Measure],
    *,
    workers: int,
    block_bytes: int,
) -> tuple[RunResult, list[str]]:
    """One run's result and its warnings (without the qrels')."""
    n_qrels = len(inputs.input_warnings)
    if isinstance(source, Run):
        run = source if name is None else replace(source, name=name)
        done = evaluate_inputs([run], inputs, measures)
        return done.run, list(done.warnings[n_qrels:])
    if not is_run_path(source):
        done = evaluate_blocks(source, inputs, measures, name=name)  # type: ignore[arg-type]
        return done.run, list(done.warnings[n_qrels:])
    from ragmeter.io._common import compression_of
    from ragmeter.io.readers import detect_format, read_run
    from ragmeter.io.trec_blocks import TrecRunBlocks

    path = Path(source)  # type: ignore[arg-type]
    if detect_format(path) != "trec":
        return _evaluate_source(
            read_run(path, name=name), None, inputs, measures, workers=1, block_bytes=block_bytes
        )
    head = _head(path)
    # blocks are each below the pure path's warning size: the file as a whole is checked
    _accel.check_large_input(path.stat().st_size // _BYTES_PER_RUN_LINE, f"{path} (estimated)")
    if compression_of(head) is not None:
        blocks = TrecRunBlocks(path, name=name, block_bytes=block_bytes)
        done = evaluate_blocks(blocks, inputs, measures, name=blocks.name)
        return replace(done.run, run_file=str(path)), list(done.warnings[n_qrels:])
    return _stream_plain(path, name or path.name, inputs, measures, workers, block_bytes)


def _head(path: Path) -> bytes:
    """The first bytes of ``path`` (its compression signature); errors name the file."""
    if path.is_dir():
        raise InputError("is a directory; expected a file", source=str(path))
    with read_errors(str(path)), path.open("rb") as fh:
        return fh.read(10)


@dataclass(frozen=True)
class _Job:
    """What a worker needs to evaluate a range of a run file (inherited through fork)."""

    path: str
    name: str
    inputs: EvalInputs
    measures: tuple[Measure, ...]


@dataclass(frozen=True)
class _Failed:
    """An input error of a worker, sent back as fields (the line already the file's)."""

    reason: str
    source: str | None
    line: int | None
    field: str | None


def _stream_plain(
    path: Path,
    name: str,
    inputs: EvalInputs,
    measures: list[Measure],
    workers: int,
    block_bytes: int,
) -> tuple[RunResult, list[str]]:
    """A plain TREC run file evaluated range by range, in ``workers`` processes (negative:
    the default number, used for a file of :data:`PARALLEL_BYTES` or more)."""
    size = path.stat().st_size
    if workers < 0:
        workers = -workers if size >= PARALLEL_BYTES else 1
    if size >= PARALLEL_BYTES:
        ranges = _ranges_while_indexing(path, size, block_bytes, workers, inputs)
    else:
        ranges = _ranges(path, size, block_bytes, workers)
        index_before_fork(inputs.qrels)
    job = _Job(str(path), name, inputs, tuple(measures))
    merger = BlockMerger(name, inputs, measures)
    mapped = forked_map(
        _evaluate_range, job, ranges, workers, what=str(path), prepare=_accel.keep_freed_heap
    )
    with closing(mapped) as done:
        _merge(merger, job, ranges, done)
    result, warnings = merger.result()
    return replace(result, run_file=str(path)), warnings


def _ranges_while_indexing(
    path: Path, size: int, block_bytes: int, workers: int, inputs: EvalInputs
) -> list[tuple[int, int]]:
    """:func:`_ranges`, while another thread builds the qrels' query index for the workers
    (:func:`index_before_fork`: its hash table is built in C without the GIL, a tenth of a
    second for a million queries, as long as finding the cuts; before the workers fork)."""
    import threading

    failed: list[BaseException] = []

    def index() -> None:
        try:
            index_before_fork(inputs.qrels)
        except BaseException as exc:  # raised below, in this thread
            failed.append(exc)

    indexing = threading.Thread(target=index, name="ragmeter-index")
    indexing.start()
    try:
        ranges = _ranges(path, size, block_bytes, workers)
    finally:
        indexing.join()
    if failed:
        raise failed[0]
    return ranges


def _merge(
    merger: BlockMerger,
    job: _Job,
    ranges: list[tuple[int, int]],
    done: Iterable[BlockValues | _Failed],
) -> None:
    """Add each range's values to ``merger`` in file order; raise a range's error."""
    for (start, end), block in zip(ranges, done, strict=True):
        if isinstance(block, _Failed):
            raise InputError(block.reason, source=block.source, line=block.line, field=block.field)
        try:
            merger.add(block)
        except RepeatedQueryError as exc:
            raise RepeatedQueryError(
                exc.query_id, source=job.path, line=_line_of(job.path, start, end, exc.query_id)
            ) from None


def _evaluate_range(job: _Job, span: tuple[int, int]) -> BlockValues | _Failed:
    """Read, parse and evaluate the bytes ``span`` of the job's file (in a worker)."""
    from ragmeter.evaluation.native_blocks import evaluate_block_bytes
    from ragmeter.io._common import check_line_lengths, max_line_bytes
    from ragmeter.io.trec import parse_trec_run

    start, end = span
    # within the line limit a range's lines are within it: no copy to check them on
    mappable = _accel.native is not None and 0 < end - start <= max_line_bytes()
    try:
        fast = _evaluate_mapped(job, start, end) if mappable else None
        if fast is not None:
            return fast
        with open(job.path, "rb") as fh:
            data = os.pread(fh.fileno(), end - start, start) if end > start else b""
        check_line_lengths(data, job.path)  # the limit of every reader, range by range
        fast = (
            None
            if mappable
            else evaluate_block_bytes(data, job.inputs, job.measures, source=job.path)
        )
        if fast is not None:
            return fast
        run = parse_trec_run(data, source=job.path, name=job.name)
        del data
        return evaluate_block(run, job.inputs, job.measures)
    except InputError as exc:
        line = exc.line
        if line is not None and start > 0:
            line += _lines_before(job.path, start)
        return _Failed(exc.reason, exc.source, line, exc.field)


def _evaluate_mapped(job: _Job, start: int, end: int) -> BlockValues | None:
    """The one-pass values of the bytes ``start:end`` (a non-empty range) of the job's file,
    parsed where the page cache holds them (a memory map: no copy of the range into the
    worker's memory, which cost a tenth of the workers' time), or ``None`` where the one-pass
    path declines the block or the file is now shorter (the general path then reads a copy,
    as it did before)."""
    import mmap

    from ragmeter.evaluation.native_blocks import evaluate_block_bytes

    base = start - start % mmap.ALLOCATIONGRANULARITY  # a map starts on a page boundary
    with open(job.path, "rb") as fh:
        try:
            mapped = mmap.mmap(fh.fileno(), end - base, access=mmap.ACCESS_READ, offset=base)
        except (OSError, ValueError):  # shorter than when the ranges were cut
            return None
    try:
        with memoryview(mapped)[start - base :] as view:
            return evaluate_block_bytes(view, job.inputs, job.measures, source=job.path)
    finally:
        mapped.close()


def _ranges(path: Path, size: int, block_bytes: int, workers: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``block_bytes`` (smaller, so that each worker gets one, for a file
    under ``workers`` blocks), each ending where a query's lines begin."""
    if size == 0:
        return [(0, 0)]
    n_blocks = -(-size // max(1, block_bytes))
    if workers > 1 and size >= PARALLEL_BYTES:
        n_blocks = max(n_blocks, workers)  # each worker gets a range
    step = -(-size // n_blocks)
    with path.open("rb") as fh:
        cuts = query_starts(fh, range(step, size, step))
    bounds = [0, *cuts, size]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _lines_before(path: str, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of ``path`` (for a line number; errors only)."""
    with open(path, "rb") as fh:
        return newlines_before(fh, offset)


def _line_of(path: str, start: int, end: int, query_id: str) -> int | None:
    """The file line where ``query_id``'s lines begin in the range ``start:end``."""
    from ragmeter.io.trec_blocks import first_field

    with open(path, "rb") as fh:
        data = os.pread(fh.fileno(), end - start, start)
    key = query_id.encode()
    for number, line in enumerate(data.split(b"\n")):
        if first_field(line) == key:
            return _lines_before(path, start) + number + 1
    return None
