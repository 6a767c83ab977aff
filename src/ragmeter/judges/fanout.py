"""An LLM judge's requests fanned out over a Ray cluster, one server per task (extra ``ray``).

The plan is made here, against the one judgment cache: an item whose judgment is cached is
never sent, and items with the same inputs are one request. The items still to judge are cut
into chunks, dealt to the judge's servers in turn (``--base-url`` URL1, URL2 …: chunk 1 to
URL1, chunk 2 to URL2, …), and each chunk is one Ray task that talks to its server only —
a vLLM server per GPU node, say — with the judge's concurrency, retries and limits, caching
its judgments in its own cache shard (an in-memory SQLite cache in the task). A server has
one task in flight at a time, so it sees the load a local run puts on it.

Each task returns its shard's judgments (and its failures); they are recorded into the one
cache here as each task ends, exactly as a local run records them, so an interrupted run
keeps every chunk that came back and a rerun asks only the rest. A server that refuses the
run (bad key or model) stops its own chunks; the others go on.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragmeter.evaluation.distributed import ray_session
from ragmeter.evaluation.partitioned import Engine
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.config import JudgeConfig, Price
from ragmeter.judges.llm import LLMJudge
from ragmeter.judges.runner import (
    JudgeRun,
    Progress,
    _finish,
    _Recorder,
    _start,
    run_judgments,
)
from ragmeter.judges.tasks import Task
from ragmeter.judges.types import JudgeItem, Judgment

#: items per task: enough to keep a server busy at the judge's concurrency between chunks
CHUNK_SIZE = 256


@dataclass(frozen=True)
class Shard:
    """What one task judged: ``(key, judgment)`` for every item it asked (failed ones with
    status ``error``), the retries its client made, and why it stopped, if it did."""

    judgments: tuple[tuple[str, Judgment], ...]
    retries: int = 0
    fatal: str | None = None


def judge_chunk(task: Task, config: JudgeConfig, items: Sequence[JudgeItem]) -> Shard:
    """A Ray task: judge ``items`` on the one server of ``config``, cached in a shard."""
    with JudgmentCache(":memory:") as shard:
        run = run_judgments(task, items, LLMJudge(config), cache=shard)
    failed = {m.ident: m.detail for m in run.missing if m.reason == "failed"}
    out: list[tuple[str, Judgment]] = []
    for item, key, judgment in zip(run.plan.items, run.plan.keys, run.results, strict=True):
        if judgment is not None:
            out.append((key, judgment))
        elif item.ident in failed:
            error = failed[item.ident] or "failed"
            out.append((key, Judgment(None, "error", model=config.model, error=error)))
    return Shard(tuple(out), run.summary.retries, run.summary.fatal)


def as_config(judge: Any) -> JudgeConfig:
    """The LLM judge's settings; another judge (the offline one) cannot be fanned out."""
    if isinstance(judge, JudgeConfig):
        return judge
    config = getattr(judge, "config", None)
    if isinstance(config, JudgeConfig):
        return config
    from ragmeter.errors import RagmeterError

    raise RagmeterError("--engine ray fans out an LLM judge's requests; this judge runs here")


def run_judgments_on_ray(
    task: Task,
    items: Sequence[JudgeItem],
    judge: Any,
    *,
    cache: JudgmentCache,
    engine: Engine,
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    retry_unparsed: bool = False,
    chunk_size: int = CHUNK_SIZE,
) -> JudgeRun:
    """:func:`~ragmeter.judges.runner.run_judgments`, with the requests made by Ray tasks, one
    server each (see the module docstring); the same cache rows, results and summary."""
    config = as_config(judge)
    local = judge if isinstance(judge, LLMJudge) else LLMJudge(config)
    plan, recorder = _start(task, items, local, cache, refresh, progress, retry_unparsed)
    started = time.perf_counter()
    todo = list(plan.todo.items())
    servers = config.base_urls
    queues: list[deque[list[tuple[str, JudgeItem]]]] = [deque() for _ in servers]
    for n, start in enumerate(range(0, len(todo), max(1, chunk_size))):
        queues[n % len(servers)].append(todo[start : start + chunk_size])
    if todo:
        retries = _dispatch(task, config, queues, recorder, engine)
        recorder.summary.retries = max(recorder.summary.retries, retries)
    return _finish(recorder, local, price, started)


def _dispatch(
    task: Task,
    config: JudgeConfig,
    queues: list[deque[list[tuple[str, JudgeItem]]]],
    recorder: _Recorder,
    engine: Engine,
) -> int:
    """Run the chunks, one task in flight per server; record each shard as it comes back.
    Returns the retries the tasks' clients made."""
    retries = 0
    with ray_session(engine) as ray:
        remote = ray.remote(judge_chunk)
        running: dict[Any, tuple[int, list[tuple[str, JudgeItem]]]] = {}

        def submit(server: int) -> None:
            if queues[server]:
                chunk = queues[server].popleft()
                one = replace(config, base_urls=(config.base_urls[server],))
                ref = remote.remote(task, one, [item for _, item in chunk])
                running[ref] = (server, chunk)

        try:
            for server in range(len(queues)):
                submit(server)
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                server, chunk = running.pop(ready[0])
                shard = _shard_of(ray, ready[0], chunk, config)
                _record(recorder, chunk, shard)
                retries += shard.retries
                if shard.fatal is None:
                    submit(server)
                else:  # this server refused the run: its chunks stay not judged
                    recorder.summary.fatal = recorder.summary.fatal or shard.fatal
                    queues[server].clear()
        except KeyboardInterrupt:
            for ref in running:
                ray.cancel(ref)
            recorder.summary.interrupted = True
    return retries


def _shard_of(ray: Any, ref: Any, chunk: list[tuple[str, JudgeItem]], config: JudgeConfig) -> Shard:
    """The task's shard; a task that died (its worker lost) fails its items: a rerun asks
    them again."""
    try:
        shard: Shard = ray.get(ref)
    except ray.exceptions.RayError as exc:
        error = f"Ray task failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        failed = Judgment(None, "error", model=config.model, error=error)
        return Shard(tuple((key, failed) for key, _ in chunk))
    return shard


def _record(recorder: _Recorder, chunk: list[tuple[str, JudgeItem]], shard: Shard) -> None:
    """Record a shard's judgments into the one cache (and the summary, the progress bar)."""
    asked = dict(chunk)
    for key, judgment in shard.judgments:
        item = asked.get(key)
        if item is None:  # the task keyed an item otherwise: never merge it blindly
            raise RuntimeError(f"a Ray task returned a judgment for key {key}, not asked")
        recorder.record(key, item, judgment)
