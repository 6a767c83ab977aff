"""Run your own RAG pipeline over a query set and record it as ragmeter objects.

You give the stages you have as plain callables, sync or async (any subset):

* ``embed(query) -> embedding`` (anything; handed to ``retrieve``)
* ``retrieve(query) -> hits``, or ``retrieve(query, embedding)`` when ``embed`` is given
* ``rerank(query, hits) -> hits`` (gets ``retrieve``'s output as it returned it)
* ``generate(query, hits) -> str`` (gets ``rerank``'s output, else ``retrieve``'s, else ``[]``)

Hits are a list of doc ids, ``(id, score)`` / ``(id, score, text)`` tuples, ``{"id", "score",
"text"}`` mappings, :class:`Hit` objects, or objects with ``id`` (and optionally ``score``,
``text``) attributes; each stage receives the previous stage's output unchanged, so your
functions see exactly what they would see without ragmeter.

:func:`run_pipeline` (or ``await`` :func:`arun_pipeline`) runs the queries with at most
``concurrency`` of them in flight, times every call with :func:`time.perf_counter`, and
returns a :class:`PipelineResult`:

* ``pool``: the retrieve output as a :class:`~ragmeter.Run` (the candidate pool, PROC's ``P(q)``);
* ``selection``: the rerank output as a :class:`~ragmeter.Run` (what the LLM is given);
* ``samples``: the answers as seed-001 :class:`~ragmeter.io.answers.AnswerSample` objects,
  with their context, references, labels and timings (for :mod:`ragmeter.metrics.answers`);
* ``timings``: seconds per query and stage; ``errors``: every failed call.

A call that raises, returns something unusable or exceeds ``timeout`` is recorded as a
:class:`StageError` (query, stage, exception type and message) and ends that query's pipeline;
the other queries go on.

>>> def retrieve(query):
...     return [("d1", 2.0, "Paris is the capital of France."), ("d2", 1.0, "Lyon is big.")]
>>> def generate(query, hits):
...     return "Paris"
>>> result = run_pipeline({"q1": "capital of France?"}, retrieve=retrieve, generate=generate)
>>> result.pool.ranked()
{'q1': ['d1', 'd2']}
>>> result.evaluate({"q1": {"d1": 1}}, ["mrr"]).run.means()
{'mrr': 1.0}
>>> result.samples[0].generated_answer, result.errors
('Paris', [])
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any, Literal

from ragmeter.core.data import Qrels, Run

if TYPE_CHECKING:
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.answers import AnswerSample
    from ragmeter.metrics.answers import LatencySummary

Stage = Literal["embed", "retrieve", "rerank", "generate"]
StageFn = Callable[..., Any]

#: the stages in pipeline order
STAGES: tuple[Stage, ...] = ("embed", "retrieve", "rerank", "generate")


@dataclass(frozen=True)
class Hit:
    """One retrieved item: a doc id, optionally its score and text."""

    id: str
    score: float | None = None
    text: str | None = None


@dataclass(frozen=True)
class StageError:
    """A failed call: which query and stage, the exception's type name and message, and the
    seconds from the call to the failure."""

    query_id: str
    stage: Stage
    type: str
    message: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Trace:
    """What one query's pipeline produced (filled in as the stages run)."""

    query_id: str
    text: str
    timings: dict[str, float | None] = field(default_factory=dict)
    embedding: Any = None
    pool: list[Hit] | None = None
    selection: list[Hit] | None = None
    answer: str | None = None
    error: StageError | None = None


@dataclass(frozen=True, eq=False)
class PipelineResult:
    """Everything a pipeline run recorded, as ragmeter objects.

    Attributes:
        name: the name given to the runs.
        queries: ``{query_id: text}`` in input order.
        pool: the retrieve output (given order, rank 1 first), ``None`` without ``retrieve``;
            queries whose retrieve failed or returned nothing are absent.
        selection: the rerank output, ``None`` without ``rerank``.
        samples: one seed-001 answer sample per query whose answer was generated.
        timings: ``{query_id: {stage: seconds}}``; a failed stage is ``None``.
        errors: every failed call, in input order of the queries.
        answers: ``{query_id: generated answer}``.
        embeddings: ``{query_id: what embed returned}``.
        pool_hits, selection_hits: the normalised hits per query.
        wall_seconds: the wall time of the whole run.
        concurrency: the bound on queries in flight.
    """

    name: str
    queries: dict[str, str]
    pool: Run | None
    selection: Run | None
    samples: list[AnswerSample]
    timings: dict[str, dict[str, float | None]]
    errors: list[StageError]
    answers: dict[str, str]
    embeddings: dict[str, Any]
    pool_hits: dict[str, list[Hit]]
    selection_hits: dict[str, list[Hit]]
    wall_seconds: float
    concurrency: int

    @property
    def run(self) -> Run | None:
        """What the LLM saw: the selection if there was a rerank stage, else the pool."""
        return self.selection if self.selection is not None else self.pool

    def latency(self) -> dict[str, LatencySummary]:
        """Mean, p50, p95, p99 per stage and in total (:func:`ragmeter.metrics.answers.latency`);
        failed stages are left out."""
        from ragmeter.metrics.answers import latency

        return latency([self.timings.get(q) for q in self.queries])

    def evaluate(
        self,
        qrels: Qrels | Mapping[str, Any],
        measures: Iterable[str] | str,
        *,
        on: Literal["run", "selection", "pool"] = "run",
        **options: Any,
    ) -> Evaluation:
        """:func:`ragmeter.evaluate` of :attr:`run` (or the ``selection`` / the ``pool``).

        When the selection is evaluated and a pool was recorded, the pool is passed as
        ``pool=`` so that the pool-based measures (``proc@K``, ``pct_proc@K``…) use it.
        ``options`` go to :func:`ragmeter.evaluate` (``judgments=``, ``default_k=``…).
        """
        from ragmeter.evaluation import evaluate

        target = {"run": self.run, "selection": self.selection, "pool": self.pool}[on]
        if target is None:
            stage = {"run": "retrieve or rerank", "selection": "rerank", "pool": "retrieve"}[on]
            raise ValueError(f"nothing to evaluate: the pipeline recorded no {on} (no {stage})")
        if target is self.selection and self.pool is not None:
            options.setdefault("pool", self.pool)
        return evaluate(target, qrels, measures, **options)

    def evaluate_answers(self, **options: Any) -> dict[str, Any]:
        """The ``ragmeter answers`` report of :attr:`samples`
        (:func:`ragmeter.metrics.answers.evaluate_answers`; ``options`` go to it)."""
        from ragmeter.metrics.answers import evaluate_answers

        if not self.samples:
            raise ValueError("no answers to evaluate: the pipeline generated none")
        return evaluate_answers(self.samples, **options)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record: per query its pool, selection, answer, timings and error."""
        errors = {e.query_id: e.to_dict() for e in self.errors}
        rows = []
        for qid, text in self.queries.items():
            row: dict[str, Any] = {"id": qid, "query": text}
            if qid in self.pool_hits:
                row["retrieved"] = [_hit_dict(h) for h in self.pool_hits[qid]]
            if qid in self.selection_hits:
                row["selected"] = [_hit_dict(h) for h in self.selection_hits[qid]]
            if qid in self.answers:
                row["answer"] = self.answers[qid]
            row["timings"] = self.timings.get(qid, {})
            if qid in errors:
                row["error"] = errors[qid]
            rows.append(row)
        return {
            "name": self.name,
            "concurrency": self.concurrency,
            "wall_seconds": self.wall_seconds,
            "n_errors": len(self.errors),
            "queries": rows,
        }


def _hit_dict(hit: Hit) -> dict[str, Any]:
    out: dict[str, Any] = {"id": hit.id}
    if hit.score is not None:
        out["score"] = hit.score
    if hit.text is not None:
        out["text"] = hit.text
    return out


# -- normalising what the user's callables return ---------------------------------------------

_HITS_EXPECTED = (
    "a list of doc ids, (id, score[, text]) tuples, {'id', 'score', 'text'} mappings or Hit objects"
)


def _as_id(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TypeError(f"doc id {value!r} is {type(value).__name__}; expected a string or int")
    return str(value)


def _as_score(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            value = float(value)  # numpy scalars
        except (TypeError, ValueError):
            raise TypeError(f"score {value!r} is not a number") from None
    score = float(value)
    if not math.isfinite(score):
        raise TypeError(f"score {score} is not finite")
    return score


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"text {value!r} is {type(value).__name__}; expected a string")


def _as_hit(item: Any) -> Hit:
    if isinstance(item, Hit):
        return item
    if isinstance(item, str | int) and not isinstance(item, bool):
        return Hit(str(item))
    if isinstance(item, tuple) and 1 <= len(item) <= 3:
        doc, score, text = (*item, None, None)[:3]
        return Hit(_as_id(doc), _as_score(score), _as_text(text))
    if isinstance(item, Mapping):
        doc = item.get("id", item.get("doc_id"))
        if doc is None:
            raise TypeError(f"hit {item!r} has no 'id'")
        return Hit(_as_id(doc), _as_score(item.get("score")), _as_text(item.get("text")))
    if hasattr(item, "id"):
        return Hit(
            _as_id(item.id),
            _as_score(getattr(item, "score", None)),
            _as_text(getattr(item, "text", None)),
        )
    raise TypeError(f"hit {item!r} is {type(item).__name__}; expected {_HITS_EXPECTED}")


def as_hits(value: Any) -> list[Hit]:
    """A stage's output as :class:`Hit` objects; ``TypeError`` naming what was wrong."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise TypeError(f"returned {type(value).__name__}; expected {_HITS_EXPECTED}")
    return [_as_hit(item) for item in value]


def _as_queries(queries: Mapping[str, str] | Iterable[Any]) -> dict[str, str]:
    """``{id: text}``, ``[(id, text), ...]``, ``[{"id", "text"}, ...]`` (also ``query``) or a
    list of strings (ids ``"0"``, ``"1"``…) as an ordered ``{id: text}``."""
    items = queries.items() if isinstance(queries, Mapping) else queries
    out: dict[str, str] = {}
    for i, item in enumerate(items):
        if isinstance(item, str):
            qid, text = str(i), item
        elif isinstance(item, Mapping):
            qid = item.get("id", item.get("query_id", i))
            text = item.get("text", item.get("query"))
        elif isinstance(item, tuple) and len(item) == 2:
            qid, text = item
        else:
            raise TypeError(
                f"query [{i}] is {type(item).__name__}; expected {{id: text}}, (id, text) "
                'pairs, {"id", "text"} mappings or strings'
            )
        if not isinstance(text, str):
            raise TypeError(f"query [{i}] has no text (a string); got {text!r}")
        key = _as_id(qid)
        if key in out:
            raise ValueError(f"duplicate query id {key!r}")
        out[key] = text
    return out


# -- running ----------------------------------------------------------------------------------


def _is_async(fn: StageFn) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with an async __call__
    )


class _Caller:
    """Calls the user's callables: async ones on the loop, sync ones on a thread pool as wide
    as the concurrency bound (so a slow sync call never blocks the loop), each timed with
    :func:`time.perf_counter` and bounded by ``timeout``."""

    def __init__(self, executor: ThreadPoolExecutor, timeout: float | None) -> None:
        self.executor = executor
        self.timeout = timeout

    async def __call__(self, fn: StageFn, *args: Any) -> tuple[Any, float]:
        work: Awaitable[tuple[Any, float]]
        if _is_async(fn):
            work = self._timed_async(fn, args)
        else:
            loop = asyncio.get_running_loop()
            work = loop.run_in_executor(self.executor, functools.partial(_timed_sync, fn, args))
        if self.timeout is None:
            result, seconds = await work
        else:
            result, seconds = await asyncio.wait_for(work, self.timeout)
        if inspect.isawaitable(result):  # a sync callable that returned a coroutine
            start = perf_counter()
            result = await (
                result if self.timeout is None else asyncio.wait_for(result, self.timeout)
            )
            seconds += perf_counter() - start
        return result, seconds

    @staticmethod
    async def _timed_async(fn: StageFn, args: tuple[Any, ...]) -> tuple[Any, float]:
        start = perf_counter()
        result = await fn(*args)
        return result, perf_counter() - start


def _timed_sync(fn: StageFn, args: tuple[Any, ...]) -> tuple[Any, float]:
    start = perf_counter()
    result = fn(*args)
    return result, perf_counter() - start


class _StageFailed(Exception):
    """Internal: a stage failed and its error is recorded; the query stops there."""


async def _stage(
    trace: _Trace, stage: Stage, fn: StageFn, args: tuple[Any, ...], call: _Caller
) -> Any:
    start = perf_counter()
    try:
        result, seconds = await call(fn, *args)
        if stage in ("retrieve", "rerank"):
            hits = as_hits(result)
            if stage == "retrieve":
                trace.pool = hits
            else:
                trace.selection = hits
        elif stage == "generate":
            if not isinstance(result, str):
                raise TypeError(f"returned {type(result).__name__}; expected the answer (a str)")
            trace.answer = result
        else:
            trace.embedding = result
    except Exception as exc:
        trace.timings[stage] = None
        message = str(exc)
        if isinstance(exc, TimeoutError) and call.timeout is not None:
            message = message or f"no result within {call.timeout:g} s"
        trace.error = StageError(
            trace.query_id, stage, type(exc).__name__, message, perf_counter() - start
        )
        raise _StageFailed from exc
    trace.timings[stage] = seconds
    return result


async def _run_query(trace: _Trace, stages: Mapping[Stage, StageFn], call: _Caller) -> None:
    query = trace.text
    try:
        embedding = None
        if "embed" in stages:
            embedding = await _stage(trace, "embed", stages["embed"], (query,), call)
        hits: Any = []
        if "retrieve" in stages:
            args = (query, embedding) if "embed" in stages else (query,)
            hits = await _stage(trace, "retrieve", stages["retrieve"], args, call)
        if "rerank" in stages:
            hits = await _stage(trace, "rerank", stages["rerank"], (query, hits), call)
        if "generate" in stages:
            await _stage(trace, "generate", stages["generate"], (query, hits), call)
    except _StageFailed:
        pass


async def arun_pipeline(
    queries: Mapping[str, str] | Iterable[Any],
    *,
    embed: StageFn | None = None,
    retrieve: StageFn | None = None,
    rerank: StageFn | None = None,
    generate: StageFn | None = None,
    references: Mapping[str, str] | None = None,
    labels: Mapping[str, int] | None = None,
    concurrency: int = 8,
    timeout: float | None = None,
    name: str = "pipeline",
) -> PipelineResult:
    """Run the given stages over ``queries`` (see the module docstring); the async form of
    :func:`run_pipeline`, for code that already runs an event loop (e.g. a notebook)."""
    query_map = _as_queries(queries)
    given = {"embed": embed, "retrieve": retrieve, "rerank": rerank, "generate": generate}
    stages: dict[Stage, StageFn] = {s: fn for s, fn in given.items() if fn is not None}  # type: ignore[misc]
    if not stages:
        raise ValueError("no stage given; pass at least one of embed, retrieve, rerank, generate")
    for stage, fn in stages.items():
        if not callable(fn):
            raise TypeError(f"{stage} is {type(fn).__name__}; expected a callable")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, not {concurrency!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be positive seconds, not {timeout!r}")

    traces = [_Trace(qid, text) for qid, text in query_map.items()]
    semaphore = asyncio.Semaphore(concurrency)
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="ragmeter")
    call = _Caller(executor, timeout)

    async def bounded(trace: _Trace) -> None:
        async with semaphore:
            await _run_query(trace, stages, call)

    start = perf_counter()
    try:
        await asyncio.gather(*(bounded(t) for t in traces))
    finally:
        # a sync call that timed out keeps its thread until it returns; don't wait for it
        executor.shutdown(wait=False, cancel_futures=True)
    wall = perf_counter() - start
    return _result(
        traces,
        name=name,
        stages=stages,
        references=references or {},
        labels=labels or {},
        wall=wall,
        concurrency=concurrency,
    )


def run_pipeline(
    queries: Mapping[str, str] | Iterable[Any],
    *,
    embed: StageFn | None = None,
    retrieve: StageFn | None = None,
    rerank: StageFn | None = None,
    generate: StageFn | None = None,
    references: Mapping[str, str] | None = None,
    labels: Mapping[str, int] | None = None,
    concurrency: int = 8,
    timeout: float | None = None,
    name: str = "pipeline",
) -> PipelineResult:
    """Run your pipeline's stages over ``queries`` and record pool, selection, answers,
    timings and errors.

    Args:
        queries: ``{id: text}``, ``[(id, text), ...]``, ``[{"id", "text"}, ...]`` or a list of
            texts (ids ``"0"``, ``"1"``…).
        embed: your callables, sync or async (any subset of embed, retrieve, rerank and
            generate; see the module docstring for what each receives and returns).
        retrieve: as ``embed``.
        rerank: as ``embed``.
        generate: as ``embed``.
        references: reference answers by query id, for the answer samples (a query without
            one gets ``""``: no keyword to match, token F1 0).
        labels: human labels (1 correct, 0 incorrect) by query id, for the answer samples.
        concurrency: at most this many queries in flight at once (and so at most this many of
            your calls running at once). Sync callables run on that many threads.
        timeout: seconds allowed per call; a call that takes longer is recorded as a
            ``TimeoutError``. An async call is cancelled; a sync call cannot be interrupted, so
            its thread runs on until the call returns (and holds one of the ``concurrency``
            slots of the thread pool until then).
        name: the name of the recorded runs.

    Works from inside a running event loop too (the run then uses a loop of its own on a
    helper thread); there, ``await arun_pipeline(...)`` is the direct way.
    """
    coro = arun_pipeline(
        queries,
        embed=embed,
        retrieve=retrieve,
        rerank=rerank,
        generate=generate,
        references=references,
        labels=labels,
        concurrency=concurrency,
        timeout=timeout,
        name=name,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as helper:
        return helper.submit(asyncio.run, coro).result()


# -- assembling the result --------------------------------------------------------------------


def _hits_run(hits: Mapping[str, list[Hit]], *, name: str, source: str) -> Run | None:
    """The hits as a given-order run (scores: decreasing rank positions, since rerankers
    reorder without rescoring); texts kept when any hit has one."""
    qids: list[str] = []
    docs: list[str] = []
    texts: list[str | None] = []
    for qid, items in hits.items():
        for hit in items:
            qids.append(qid)
            docs.append(hit.id)
            texts.append(hit.text)
    n = len(docs)
    has_text = any(t is not None for t in texts)
    return Run.from_columns(
        qids,
        docs,
        [float(n - i) for i in range(n)],
        name=name,
        order="given",
        source=source,
        texts=texts if has_text else None,
    )


def _result(
    traces: list[_Trace],
    *,
    name: str,
    stages: Mapping[Stage, StageFn],
    references: Mapping[str, str],
    labels: Mapping[str, int],
    wall: float,
    concurrency: int,
) -> PipelineResult:
    from ragmeter.io.answers import AnswerSample

    pool_hits = {t.query_id: t.pool for t in traces if t.pool is not None}
    selection_hits = {t.query_id: t.selection for t in traces if t.selection is not None}
    samples = []
    for t in traces:
        if t.answer is None:
            continue
        context_hits = t.selection if "rerank" in stages else t.pool
        samples.append(
            AnswerSample(
                id=t.query_id,
                query=t.text,
                context=tuple(h.text for h in context_hits or () if h.text is not None),
                generated_answer=t.answer,
                reference_answer=references.get(t.query_id, ""),
                label=labels.get(t.query_id),
                retrieved=_texts(t.pool),
                timings=dict(t.timings),
            )
        )
    return PipelineResult(
        name=name,
        queries={t.query_id: t.text for t in traces},
        pool=_hits_run(pool_hits, name=name, source="<retrieve>") if "retrieve" in stages else None,
        selection=(
            _hits_run(selection_hits, name=name, source="<rerank>") if "rerank" in stages else None
        ),
        samples=samples,
        timings={t.query_id: dict(t.timings) for t in traces},
        errors=[t.error for t in traces if t.error is not None],
        answers={t.query_id: t.answer for t in traces if t.answer is not None},
        embeddings={t.query_id: t.embedding for t in traces if t.timings.get("embed") is not None},
        pool_hits=pool_hits,
        selection_hits=selection_hits,
        wall_seconds=wall,
        concurrency=concurrency,
    )


def _texts(hits: Sequence[Hit] | None) -> tuple[str, ...] | None:
    if not hits or any(h.text is None for h in hits):
        return None
    return tuple(h.text for h in hits if h.text is not None)


# -- seed 004's entry point -------------------------------------------------------------------

#: the measures of seed 004 (at the config's ``k``): Precision@k, Recall@k, F1@k, MRR, MAP,
#: DCG@k, NDCG@k
SEED_004_MEASURES: tuple[str, ...] = (
    "precision@{k}",
    "recall@{k}",
    "f1@{k}",
    "mrr",
    "map",
    "dcg@{k}",
    "ndcg@{k}",
)
_CONFIG_KEYS = ("metrics", "k", "rel_level", "missing", "output")


class RetrievalEvaluator:
    """Evaluate retrieval results against labelled queries, in the style of seed 004::

        evaluator = RetrievalEvaluator(config, prompts_queries)
        results_with_evals = evaluator.run(results_with_or_without_evals)

    ``config`` (a mapping; every key optional):

    * ``metrics``: measure names (default: Precision@k, Recall@k, F1@k, MRR, MAP, DCG@k,
      NDCG@k — :data:`SEED_004_MEASURES`); any name ``ragmeter measures`` lists;
    * ``k``: the cutoff of measures given without one (default 5);
    * ``rel_level``: relevant ⇔ grade ≥ this (default 1);
    * ``missing``: ``"zero"`` (default: a labelled query without results scores as an empty
      ranking) or ``"skip"``;
    * ``output``: a JSON file to write ``{"config", "metrics", "results", "warnings"}`` to.

    ``queries``: a list of ``{"id", "query", "expected"}`` records (or the path of a
    JSON/JSONL/YAML file of them), ``expected`` being the relevant doc ids (grade 1 each; their
    order does not matter) or an ``{id: grade}`` map for the graded measures (DCG, nDCG). The
    field names of :mod:`ragmeter.io.samples` are accepted (``expected_output``, ``relevant``…).

    ``run(results)`` takes a list of ``{"id", "retrieved": [...]}`` records (ids or
    ``{"id", "text"}`` items in rank order; a record without an id is matched to a query by its
    ``query`` text; records may already carry ``evals``), a :class:`PipelineResult` (its
    :attr:`~PipelineResult.run`), a :class:`~ragmeter.Run`, or ``{qid: [doc ids]}``. It returns
    the result records, each with ``evals`` = ``{measure: value}`` (``None`` for NA) added, and
    keeps the :class:`~ragmeter.Evaluation` in :attr:`evaluation`.
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None,
        queries: Sequence[Mapping[str, Any]] | str | os.PathLike[str],
    ) -> None:
        from ragmeter.io.samples import (
            load_document,
            sample_format,
            samples_from_document,
            samples_from_records,
        )

        self.config = dict(config or {})
        unknown = sorted(set(self.config) - set(_CONFIG_KEYS))
        if unknown:
            raise ValueError(
                f"unknown config key(s) {', '.join(unknown)}; expected {', '.join(_CONFIG_KEYS)}"
            )
        k = self.config.get("k", 5)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"config 'k' must be a positive integer, not {k!r}")
        self.k: int = k
        metrics = self.config.get("metrics") or [m.format(k=k) for m in SEED_004_MEASURES]
        self.measures: list[str] = [metrics] if isinstance(metrics, str) else list(metrics)
        if isinstance(queries, Sequence) and not isinstance(queries, str):
            records: list[tuple[Any, int | None]] = [(dict(q), None) for q in queries]
            labelled = samples_from_records(records, source="<queries>", need_run=False)
        else:
            doc = load_document(queries, sample_format(queries))
            labelled = samples_from_document(doc, need_run=False)
        self.qrels: Qrels = labelled.qrels
        self.queries: dict[str, str] = dict(labelled.queries)
        self.evaluation: Evaluation | None = None

    def run(self, results: Any) -> list[dict[str, Any]]:
        """Evaluate ``results``; return the result records with ``evals`` added (and write
        the JSON file when the config names one)."""
        from ragmeter.evaluation import evaluate

        records, ids, run = self._records_and_run(results)
        evaluation = evaluate(
            run,
            self.qrels,
            self.measures,
            default_k=self.k,
            rel_level=int(self.config.get("rel_level", 1)),
            missing=self.config.get("missing", "zero"),
        )
        self.evaluation = evaluation
        per_query = evaluation.run.per_query()
        out = []
        for record, qid in zip(records, ids, strict=True):
            evals = dict(record.get("evals") or {})
            evals.update(per_query.get(qid, {}))
            out.append({**record, "evals": evals})
        output = self.config.get("output")
        if output is not None:
            self._write(output, out)
        return out

    def _records_and_run(self, results: Any) -> tuple[list[dict[str, Any]], list[str], Run]:
        from ragmeter.io.samples import samples_from_records

        if isinstance(results, PipelineResult):
            if results.run is None:
                raise ValueError("the pipeline recorded no retrieval (no retrieve or rerank)")
            hits = results.selection_hits if results.selection is not None else results.pool_hits
            records = [
                {"id": qid, "query": text, "retrieved": [h.id for h in hits.get(qid, [])]}
                for qid, text in results.queries.items()
            ]
            return records, list(results.queries), results.run
        if isinstance(results, Run):
            ranked = results.ranked()
            records = [{"id": q, "retrieved": docs} for q, docs in ranked.items()]
            return records, list(ranked), results
        if isinstance(results, Mapping):
            records = [{"id": str(q), "retrieved": list(docs)} for q, docs in results.items()]
        else:
            records = [self._with_id(dict(r), i) for i, r in enumerate(results)]
        samples = samples_from_records(
            [(r, None) for r in records], source="<results>", need_qrels=False
        )
        return records, list(samples.ids), samples.run

    def _with_id(self, record: dict[str, Any], index: int) -> dict[str, Any]:
        if any(k in record for k in ("id", "query_id", "qid", "sample_id")):
            return record
        text = record.get("query")
        by_text = {t: q for q, t in self.queries.items()}
        if isinstance(text, str) and text in by_text:
            return {"id": by_text[text], **record}
        raise ValueError(f"result [{index}] has no 'id' and its 'query' matches no labelled query")

    def _write(self, output: Any, results: list[dict[str, Any]]) -> None:
        import json

        from ragmeter.io._common import atomic_write_text

        assert self.evaluation is not None
        doc = {
            "config": {**self.config, "metrics": self.measures, "k": self.k},
            "metrics": self.evaluation.run.to_dict()["metrics"],
            "results": results,
            "warnings": list(self.evaluation.warnings),
        }
        atomic_write_text(output, json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")
