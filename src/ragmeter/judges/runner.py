"""The runner: plan (cache look-up, dry-run estimate), then judge what is not cached with
bounded concurrency, committing each judgment to the cache as it arrives.

The results are read back from the cache at the end, in the order of the items given, so an
interrupted and resumed run produces exactly what an uninterrupted run produces.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragmeter.judges.cache import JudgmentCache, canonical, judgment_key
from ragmeter.judges.config import Price
from ragmeter.judges.errors import FatalJudgeError
from ragmeter.judges.progress import format_rate
from ragmeter.judges.tasks import Task
from ragmeter.judges.types import Judge, JudgeItem, Judgment

#: tokens a chat template adds around each message (role markers), for estimates
MESSAGE_OVERHEAD_TOKENS = 4


class Progress(Protocol):
    """What the runner reports to (the CLI's rich bar implements it)."""

    def start(self, *, total: int, cached: int) -> None: ...

    def advance(self, judgment: Judgment) -> None: ...

    def stop(self) -> None: ...


@dataclass
class Plan:
    """What a run will do: one key per item, the unique keys still to judge, the cached hits."""

    task: Task
    model: str
    items: Sequence[JudgeItem]
    keys: list[str]
    todo: dict[str, JudgeItem]
    cached: dict[str, Judgment]
    params: dict[str, Any]

    @property
    def n_unique(self) -> int:
        return len(self.todo) + len(self.cached)

    def estimate(self, price: Price | None) -> Estimate:
        """Tokens of the calls still to make: ⌈prompt characters / 4⌉ + 4 per message in,
        the task's typical reply length out (an estimate; the server's counts replace it)."""
        tokens_in = 0
        for item in self.todo.values():
            messages = self.task.messages(item.inputs)
            chars = sum(len(m["content"]) for m in messages)
            tokens_in += math.ceil(chars / 4) + MESSAGE_OVERHEAD_TOKENS * len(messages)
        tokens_out = self.task.expected_output_tokens * len(self.todo)
        cost = price.cost(tokens_in, tokens_out) if price is not None else None
        return Estimate(len(self.todo), len(self.cached), tokens_in, tokens_out, cost)


@dataclass(frozen=True)
class Estimate:
    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "estimated_input_tokens": self.input_tokens,
            "estimated_output_tokens": self.output_tokens,
            "estimated_cost_usd": self.cost,
        }


@dataclass
class Summary:
    """A run's account. ``cost`` is None when no price is known (shown as "unknown")."""

    task: str
    model: str
    items: int = 0
    unique: int = 0
    cached: int = 0
    calls: int = 0
    judged: int = 0
    failures: int = 0
    unparsed: int = 0
    lenient: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_estimated: bool = False
    cost: float | None = None
    elapsed_s: float = 0.0
    interrupted: bool = False
    fatal: str | None = None
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "errors"} | {
            "errors": self.errors[:20]
        }

    def lines(self) -> list[str]:
        rate = self.judged / self.elapsed_s if self.elapsed_s > 0 else 0.0
        tokens = f"{self.input_tokens:,} in / {self.output_tokens:,} out"
        if self.tokens_estimated:
            tokens += " (partly estimated: chars/4)"
        cost = (
            "unknown (no price: --price IN,OUT per 1M tokens)"
            if self.cost is None
            else (f"${self.cost:.4f}")
        )
        out = [
            f"{self.task} with {self.model}: {self.items} items, {self.unique} unique",
            f"cache hits {self.cached}, calls {self.calls}, judged {self.judged} "
            f"({format_rate(rate)}/s in {self.elapsed_s:.1f} s)",
            f"retries {self.retries}, failures {self.failures}, unparsed {self.unparsed} "
            f"(stored as -1 with the raw text), lenient parses {self.lenient}",
            f"tokens {tokens}, cost {cost}",
        ]
        if self.failures:
            out.append(f"{self.failures} judgment(s) failed and were not cached: rerun to retry")
            out.extend(f"  {e}" for e in self.errors[:5])
        if self.interrupted:
            out.append("interrupted: every judgment so far is cached; rerun to continue")
        if self.fatal:
            out.append(f"stopped: {self.fatal}")
        return out


@dataclass
class JudgeRun:
    """A finished (or stopped) run: ``results[i]`` is item i's judgment, None when it failed
    or was never judged."""

    plan: Plan
    results: list[Judgment | None]
    summary: Summary


def cache_params(task: Task, judge: Any) -> dict[str, Any]:
    """The request parameters in the cache key: the task's (``n``, ``max_tokens``,
    ``top_logprobs``) and the judge's sampling parameters (``temperature``, ``seed``)."""
    return {**task.cache_params(), **dict(getattr(judge, "request_params", {}) or {})}


def make_plan(
    task: Task,
    items: Sequence[JudgeItem],
    *,
    model: str,
    cache: JudgmentCache,
    refresh: bool = False,
    params: dict[str, Any] | None = None,
) -> Plan:
    """Key every item, look the keys up in the cache (unless ``refresh``). ``params``: the
    request parameters of the key (default: the task's alone; see :func:`cache_params`)."""
    prompt = task.prompt.identity
    params = params if params is not None else task.cache_params()
    keys = [judgment_key(task.name, prompt, model, params, item.inputs) for item in items]
    todo: dict[str, JudgeItem] = {}
    for key, item in zip(keys, items, strict=True):
        todo.setdefault(key, item)
    cached = {} if refresh else cache.get_many(todo)
    for key in cached:
        del todo[key]
    return Plan(task, model, items, keys, todo, cached, params)


class _Recorder:
    def __init__(self, plan: Plan, cache: JudgmentCache, summary: Summary, progress: Any) -> None:
        self.plan = plan
        self.cache = cache
        self.summary = summary
        self.progress = progress
        self.prompt = plan.task.prompt.identity
        self.params = canonical(plan.params)  # once, not per judgment

    def record(self, key: str, item: JudgeItem, judgment: Judgment) -> None:
        s = self.summary
        s.calls += 1
        s.retries += judgment.retries
        if judgment.failed:
            s.failures += 1
            if len(s.errors) < 20:
                s.errors.append(f"{item.ident}: {judgment.error}")
        else:
            self.cache.put(
                key,
                task=self.plan.task.name,
                prompt=self.prompt,
                model=self.plan.model,
                params=self.params,
                inputs=item.inputs,
                judgment=judgment,
            )
            s.judged += 1
            s.input_tokens += judgment.input_tokens
            s.output_tokens += judgment.output_tokens
            s.tokens_estimated |= judgment.tokens_estimated
            if judgment.status == "unparsed":
                s.unparsed += 1
            elif judgment.status == "lenient":
                s.lenient += 1
        if self.progress is not None:
            self.progress.advance(judgment)


async def _run_async(judge: Any, plan: Plan, recorder: _Recorder, concurrency: int) -> None:
    pending: Iterator[tuple[str, JudgeItem]] = iter(list(plan.todo.items()))
    task = plan.task

    async def worker() -> None:
        for key, item in pending:
            judgment = await judge.ajudge(task, item.inputs)
            recorder.record(key, item, judgment)

    entered = hasattr(judge, "__aenter__")
    if entered:
        await judge.__aenter__()
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, len(plan.todo)))):
                group.create_task(worker())
    finally:
        if entered:
            await judge.__aexit__(None, None, None)


def _run_sync(judge: Any, plan: Plan, recorder: _Recorder, batch: int = 256) -> None:
    todo = list(plan.todo.items())
    many = getattr(judge, "judge_many", None)
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        inputs = [item.inputs for _, item in chunk]
        judgments = many(plan.task, inputs) if many else [judge.judge(plan.task, i) for i in inputs]
        for (key, item), judgment in zip(chunk, judgments, strict=True):
            recorder.record(key, item, judgment)


def _start(
    task: Task,
    items: Sequence[JudgeItem],
    judge: Judge,
    cache: JudgmentCache,
    refresh: bool,
    progress: Progress | None,
) -> tuple[Plan, _Recorder]:
    plan = make_plan(
        task,
        items,
        model=judge.model,
        cache=cache,
        refresh=refresh,
        params=cache_params(task, judge),
    )
    summary = Summary(task.name, judge.model, items=len(items), unique=plan.n_unique)
    summary.cached = len(plan.cached)
    if progress is not None:
        progress.start(total=plan.n_unique, cached=len(plan.cached))
    return plan, _Recorder(plan, cache, summary, progress)


def _finish(recorder: _Recorder, judge: Judge, price: Price | None, started: float) -> JudgeRun:
    summary, plan = recorder.summary, recorder.plan
    if recorder.progress is not None:
        recorder.progress.stop()
    summary.elapsed_s = time.perf_counter() - started
    stats = getattr(judge, "stats", None)
    if stats is not None and hasattr(stats, "retries"):
        # retries of requests that finally failed are counted by the client, not the judgment
        summary.retries = max(summary.retries, int(stats.retries))
    if price is not None:
        summary.cost = price.cost(summary.input_tokens, summary.output_tokens)
    stored = recorder.cache.get_many(dict.fromkeys(plan.keys))
    return JudgeRun(plan, [stored.get(key) for key in plan.keys], summary)


def run_judgments(
    task: Task,
    items: Sequence[JudgeItem],
    judge: Judge,
    *,
    cache: JudgmentCache,
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    concurrency: int | None = None,
) -> JudgeRun:
    """Judge ``items`` (each unique input once), caching every judgment as it arrives.

    An async judge (``ajudge``) runs with ``concurrency`` (default: the judge's own) workers
    in its own event loop (inside a running loop, e.g. a notebook, ``await``
    :func:`arun_judgments` instead); a plain one runs in batches (``judge_many``, else
    ``judge``). A :class:`FatalJudgeError` stops the run (``summary.fatal``), and so does
    Ctrl-C (``summary.interrupted``); either way what was judged is cached and the results
    returned cover it.
    """
    plan, recorder = _start(task, items, judge, cache, refresh, progress)
    started = time.perf_counter()
    try:
        if plan.todo:
            if hasattr(judge, "ajudge"):
                workers = concurrency or int(getattr(judge, "concurrency", 1))
                asyncio.run(_run_async(judge, plan, recorder, workers))
            else:
                _run_sync(judge, plan, recorder)
    except* FatalJudgeError as group:
        recorder.summary.fatal = str(group.exceptions[0])
    except* (KeyboardInterrupt, asyncio.CancelledError):
        recorder.summary.interrupted = True
    return _finish(recorder, judge, price, started)


async def arun_judgments(
    task: Task,
    items: Sequence[JudgeItem],
    judge: Judge,
    *,
    cache: JudgmentCache,
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    concurrency: int | None = None,
) -> JudgeRun:
    """:func:`run_judgments` in the running event loop. Cancelling it cancels the run (the
    cancellation propagates; what was judged is cached)."""
    plan, recorder = _start(task, items, judge, cache, refresh, progress)
    started = time.perf_counter()
    try:
        if plan.todo:
            if hasattr(judge, "ajudge"):
                workers = concurrency or int(getattr(judge, "concurrency", 1))
                await _run_async(judge, plan, recorder, workers)
            else:
                _run_sync(judge, plan, recorder)
    except* FatalJudgeError as group:
        recorder.summary.fatal = str(group.exceptions[0])
    return _finish(recorder, judge, price, started)


__all__ = [
    "Estimate",
    "JudgeRun",
    "Plan",
    "Progress",
    "Summary",
    "arun_judgments",
    "cache_params",
    "make_plan",
    "run_judgments",
]
