"""Evaluation on an engine: in this process, or as Ray tasks on a cluster (extra ``ray``).

:func:`evaluate_sources` is what :func:`ragmeter.evaluate` calls for files, partitioned
inputs and ``engine=``. On Ray:

* the evaluation inputs (qrels, options, per-document side inputs) and the measures are put
  into the object store **once** (``ray.put``); each worker process deserializes them once
  and keeps them for the tasks it runs;
* each piece of each run (a partition file, a byte block of a TREC file, a slice of a run in
  memory, :mod:`ragmeter.evaluation.partitioned`) is one task: it reads its piece where it
  runs and returns the per-query values (:class:`~ragmeter.evaluation.blocks.BlockValues`),
  a few bytes per query and measure;
* the driver keeps at most ``workers`` (default: twice the cluster's CPUs) tasks in flight
  and merges the values in piece order (:class:`~ragmeter.evaluation.partitioned.PieceMerger`),
  so the per-query values, the aggregates, the NA and missing-query rules and the warnings are
  those of the in-process evaluation, bit for bit.

Partition files are read by the workers: on a cluster of several machines they must be at the
same path on every node (a shared file system). Sub-question judgments, answers and a separate
candidate pool are joined per run, not per query, so they are evaluated in this process
(``local``) only.

Connecting: ``Engine(address=None)`` starts a Ray instance on this machine with ``workers``
CPUs (or joins ``$RAY_ADDRESS`` when it is set), ``"auto"`` joins the cluster this machine
belongs to, ``"ray://host:10001"`` a remote cluster through Ray Client; a Ray session already
open in the process is used as it is. What this module started, it shuts down.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragmeter.core.data import Run
from ragmeter.errors import InputError, MissingExtraError, RagmeterError
from ragmeter.evaluation.blocks import BlockValues, block_support
from ragmeter.evaluation.engine import evaluate_inputs, resolve_measures
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.partitioned import (
    Engine,
    Piece,
    PieceMerger,
    Source,
    as_source,
    evaluate_partitions,
    evaluate_piece,
    pieces,
    read_source,
)
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.io.partitions import Partitions
from ragmeter.measures import REGISTRY, Family, Measure

if TYPE_CHECKING:
    from ragmeter.evaluation.partitioned import PathLike


def evaluate_sources(
    runs: Sequence[Run | PathLike],
    inputs: EvalInputs,
    measures: Iterable[str | Measure] | str,
    *,
    engine: str | Engine | None = "local",
    names: Sequence[str | None] | None = None,
) -> Evaluation:
    """Evaluate ``runs`` (runs, files, folders or globs of partitions) on ``engine``: the
    :class:`Evaluation` of :func:`~ragmeter.evaluation.evaluate_inputs` on the same runs.
    ``names[i]``, when given and not ``None``, names run ``i`` instead of its own name."""
    eng = Engine.parse(engine)
    given = list(names) if names is not None else [None] * len(runs)
    sources = [as_source(r, n) for r, n in zip(runs, given, strict=True)]
    measure_list = resolve_measures(
        measures, default_k=inputs.default_k, context_k=inputs.context_cutoff
    )
    reason = whole_run_reason(inputs)
    if reason is not None:
        if eng.kind != "local":
            raise InputError(f"--engine {eng.kind} evaluates runs in pieces, and {reason}")
        return evaluate_inputs([read_source(s) for s in sources], inputs, measure_list)
    if eng.kind == "ray":
        outcomes = evaluate_on_ray(sources, inputs, measure_list, eng)
    else:
        outcomes = [_evaluate_here(s, inputs, measure_list, eng.workers) for s in sources]
    warnings = list(inputs.input_warnings)
    for _, w in outcomes:
        warnings.extend(w)
    return Evaluation(tuple(r for r, _ in outcomes), tuple(measure_list), tuple(warnings))


def whole_run_reason(inputs: EvalInputs) -> str | None:
    """Why ``inputs`` need each run whole (:func:`~ragmeter.evaluation.block_support`, or the
    nugget inputs, matched to the runs by name), or ``None``."""
    reason = block_support(inputs)
    nugget_inputs = (inputs.nuggets, inputs.nugget_assignments, inputs.citation_support)
    if reason is None and any(x is not None for x in nugget_inputs):
        reason = "nuggets and citation support are matched to whole runs"
    return reason


def _evaluate_here(
    source: Source, inputs: EvalInputs, measures: list[Measure], workers: int | None
) -> tuple[RunResult, list[str]]:
    if isinstance(source, Partitions):
        return evaluate_partitions(source, inputs, measures, workers=workers)
    done = evaluate_inputs([read_source(source)], inputs, measures)
    return done.runs[0], list(done.warnings[len(inputs.input_warnings) :])


# -- Ray ----------------------------------------------------------------------------------


def import_ray() -> Any:
    """The ``ray`` module; :class:`MissingExtraError` naming the ``ray`` extra without it."""
    try:
        import ray
    except ImportError:
        raise MissingExtraError("--engine ray", package="ray", extra="ray") from None
    return ray


@contextmanager
def ray_session(engine: Engine) -> Iterator[Any]:
    """A connected ``ray`` module: the process's open session, or one started (and shut
    down at the end) as ``engine`` says.

    While it is in use, what Ray prints on stdout goes to stderr: Ray's driver prints its
    cluster's messages (``(raylet) A worker died …``) on ``sys.stdout`` whatever
    ``log_to_driver`` says, and stdout carries the command's output (``-f json``)."""
    ray = import_ray()
    with redirect_stdout(RayMessages(sys.stderr)):
        if ray.is_initialized():
            yield ray
            return
        with _started(ray, engine):
            yield ray


class RayMessages(io.TextIOBase):
    """Where Ray's driver prints while ragmeter uses Ray: ``sink`` (stderr), with one line of
    ragmeter's own when Ray reports that this machine's Ray node died (its raylet killed, or
    out of memory): Ray then ends the process itself, which no exception of ours can report.
    """

    #: what Ray prints when the raylet of the node this process is attached to terminates
    NODE_DIED = "Raylet is terminated"

    def __init__(self, sink: Any) -> None:
        super().__init__()
        self._sink = sink
        self._said = False

    def write(self, text: str) -> int:
        self._sink.write(text)
        if not self._said and self.NODE_DIED in text:
            self._said = True
            self._sink.write(
                "\nragmeter: error: --engine ray: the Ray node of this machine died (its "
                "raylet was terminated: killed, or out of memory); the evaluation cannot "
                "finish\n"
            )
        return len(text)

    def flush(self) -> None:
        self._sink.flush()


@contextmanager
def _started(ray: Any, engine: Engine) -> Iterator[None]:
    """A Ray session started as ``engine`` says, shut down at the end."""
    import logging

    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if engine.address is None and not os.environ.get("RAY_ADDRESS"):
        ray.init(address="local", num_cpus=engine.workers, include_dashboard=False, **options)
    else:
        where = engine.address or f"$RAY_ADDRESS ({os.environ.get('RAY_ADDRESS')})"
        try:
            ray.init(address=engine.address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RagmeterError(
                f"--engine ray: cannot connect to the Ray cluster at {where}: {exc}"
            ) from None
    try:
        yield
    finally:
        ray.shutdown()


def ray_failure(exc: BaseException) -> RagmeterError:
    """A failure of the cluster itself (a worker or node lost after Ray's retries, an object
    lost) as one line: what failed and Ray's first line about it."""
    lines = str(exc).strip().splitlines()
    detail = f": {lines[0][:300]}" if lines else ""
    return RagmeterError(
        f"--engine ray: a task failed after Ray's retries ({type(exc).__name__}{detail})"
    )


#: what a worker process deserialized from the object store: ``{object id: value}``
_SHARED: dict[str, Any] = {}


def _shared(holder: list[Any]) -> Any:
    """The value of the object reference in ``holder``, fetched once per worker process; the
    measures defined outside ragmeter that it carries are registered in this process."""
    ref = holder[0]
    key = ref.hex()
    if key not in _SHARED:
        import ray

        _SHARED.clear()
        value = ray.get(ref)
        adopt_families(value[2])
        _SHARED[key] = value
    return _SHARED[key]


def _task(holder: list[Any], piece: Piece) -> tuple[int, int, BlockValues]:
    """A Ray task: the values of one piece (the inputs and measures from the store)."""
    inputs, measures, _families = _shared(holder)
    return piece.number, piece.index, evaluate_piece(piece, inputs, measures)


def defined_families(ray: Any, measures: Sequence[Measure]) -> tuple[Family, ...]:
    """The families of ``measures`` defined outside ragmeter (``define_measure``, plugins).

    A worker process imports ragmeter, not the driver's plugins: a plugin loaded from a file,
    a module only on the driver's path or ``__main__`` cannot be imported there. So these
    families travel with the measures, and the modules of their functions are pickled by
    value (Ray's cloudpickle), not by a reference the worker could not resolve.
    """
    families = {REGISTRY.family(m.family) for m in measures}
    defined = tuple(sorted((f for f in families if f.origin is not None), key=lambda f: f.name))
    for module in {f.origin for f in defined} - {"__main__"}:
        loaded = sys.modules.get(module or "")
        if loaded is not None:
            ray.cloudpickle.register_pickle_by_value(loaded)
    return defined


def adopt_families(families: Iterable[Family]) -> None:
    """Register in this process each family the driver defined and this process lacks."""
    for family in families:
        if REGISTRY.owner(family.name) is None:
            REGISTRY.add(family)


@dataclass
class _Run:
    """One source's merger and how many pieces it was cut into."""

    merger: PieceMerger
    pieces: int = 0


def evaluate_on_ray(
    sources: Sequence[Source], inputs: EvalInputs, measures: list[Measure], engine: Engine
) -> list[tuple[RunResult, list[str]]]:
    """The result and warnings of each source, its pieces evaluated as Ray tasks."""
    with ray_session(engine) as ray:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        window = engine.workers or 2 * cpus
        holder = [ray.put((inputs, measures, defined_families(ray, measures)))]
        task = ray.remote(_task)
        runs = [_Run(PieceMerger(s, inputs, measures)) for s in sources]
        queue = (p for n, s in enumerate(sources) for p in _counted(runs[n], s, n, cpus))
        pending: list[Any] = []
        try:
            for piece in queue:
                pending.append(task.remote(holder, piece))
                while len(pending) >= window:
                    pending = _collect(ray, pending, runs)
            while pending:
                pending = _collect(ray, pending, runs)
        except Exception:
            # The tasks in flight (at most a window) finish and their values are dropped:
            # ray.cancel on a task that is completing aborts this process (a failed check in
            # Ray's task manager, seen with Ray 2.x), which no error may do.
            if pending:
                ray.wait(pending, num_returns=len(pending), fetch_local=False)
            raise
        return [r.merger.result(r.pieces) for r in runs]


def _counted(run: _Run, source: Source, number: int, slices: int) -> Iterator[Piece]:
    for piece in pieces(source, number, slices=slices):
        run.pieces += 1
        yield piece


def _collect(ray: Any, pending: list[Any], runs: list[_Run]) -> list[Any]:
    """Merge the first task to finish; the tasks still pending. A task's error is raised as
    the error it raised (an :class:`InputError` naming the partition's file and line)."""
    ready, rest = ray.wait(pending, num_returns=1)
    try:
        number, index, block = ray.get(ready[0])
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, Exception):
            raise cause from None
        raise
    except ray.exceptions.RayError as exc:
        raise ray_failure(exc) from None
    runs[number].merger.add(index, block)
    return list(rest)
