"""The runner: plan (cache look-up, dry-run estimate), then judge what is not cached with
bounded concurrency, committing each judgment to the cache as it arrives.

The results are read back from the cache at the end, in the order of the items given, so an
interrupted and resumed run produces exactly what an uninterrupted run produces.

Nothing is lost silently: every item without a label at the end — unparsed (cached as −1,
this run or an earlier one), failed (no completion after every retry, not cached) or not
judged (the run stopped) — is listed in :attr:`JudgeRun.missing` and counted by reason in
:attr:`Summary.left_out`; ``retry_unparsed`` asks the cached unparsed ones again.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ragmeter.judges.cache import JudgmentCache, canonical, judgment_key
from ragmeter.judges.config import Price
from ragmeter.judges.errors import FatalJudgeError
from ragmeter.judges.progress import format_rate
from ragmeter.judges.tasks import Task
from ragmeter.judges.types import Judge, JudgeItem, Judgment

#: tokens a chat template adds around each message (role markers), for estimates
MESSAGE_OVERHEAD_TOKENS = 4

#: why an item has no label: its reply could not be read (cached as −1), its request failed
#: after every retry (not cached), or the run stopped before it was asked
MissingReason = Literal["unparsed", "failed", "not judged"]

_HINTS: dict[str, str] = {
    "unparsed": "the reply could not be read; cached as -1: --retry-unparsed asks again",
    "failed": "no completion after every retry; not cached: a rerun asks again",
    "not judged": "the run stopped first: a rerun continues",
}


@dataclass(frozen=True)
class Missing:
    """An item without a label: its ``ident``, why (:data:`MissingReason`), and the detail
    (the request's last error, or the start of the unread reply)."""

    ident: tuple[Any, ...]
    reason: MissingReason
    detail: str = ""


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
        return Estimate(
            len(self.todo),
            len(self.cached),
            tokens_in,
            tokens_out,
            cost,
            task=self.task.name,
            model=self.model,
            items=len(self.items),
            unique=self.n_unique,
        )


@dataclass(frozen=True)
class Estimate:
    """What a run would cost (a dry run): calls still to make, cache hits, estimated tokens
    and cost (None: no price known)."""

    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    task: str = ""
    model: str = ""
    items: int = 0
    unique: int = 0

    def line(self) -> str:
        """The dry run's one-line account."""
        cost = "unknown (no price)" if self.cost is None else f"${self.cost:.4f}"
        return (
            f"dry run: {self.task} with {self.model}: {self.items} items, "
            f"{self.unique} unique, {self.cached} cached, {self.calls} calls to make, "
            f"~{self.input_tokens:,} input + ~{self.output_tokens:,} output tokens "
            f"(estimated: chars/4), cost {cost}"
        )

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
    #: items without a label at the end, by reason (cache hits included)
    left_out: dict[str, int] = field(default_factory=dict)
    #: items whose cached judgment is unparsed (−1): left out unless asked again
    #: (``retry_unparsed``)
    cached_unparsed: int = 0

    @property
    def complete(self) -> bool:
        """Every item has a label (nothing unparsed, failed or left unjudged)."""
        return not any(self.left_out.values())

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "errors"} | {
            "complete": self.complete,
            "errors": self.errors[:20],
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
        missing = sum(self.left_out.values())
        out.append(f"labelled {self.items - missing} of {self.items} items")
        if missing:
            out[-1] = (
                f"INCOMPLETE: {missing} of {self.items} items have no label "
                "(left out of the output, or rated -1)"
            )
            for reason, n in self.left_out.items():
                cached = ""
                if reason == "unparsed" and self.cached_unparsed:
                    cached = f", {self.cached_unparsed} of them from the cache"
                out.append(f"  {reason} {n}{cached} ({_HINTS[reason]})")
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
    or was never judged; ``missing``: every item without a label, in item order."""

    plan: Plan
    results: list[Judgment | None]
    summary: Summary
    missing: list[Missing] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every item has a label."""
        return not self.missing


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
    retry_unparsed: bool = False,
) -> Plan:
    """Key every item, look the keys up in the cache (unless ``refresh``). ``params``: the
    request parameters of the key (default: the task's alone; see :func:`cache_params`).
    ``retry_unparsed``: cached unparsed judgments are asked again (and replaced)."""
    prompt = task.prompt.identity
    params = params if params is not None else task.cache_params()
    keys = [judgment_key(task.name, prompt, model, params, item.inputs) for item in items]
    todo: dict[str, JudgeItem] = {}
    for key, item in zip(keys, items, strict=True):
        todo.setdefault(key, item)
    cached = {} if refresh else cache.get_many(todo)
    if retry_unparsed:
        cached = {k: j for k, j in cached.items() if j.status != "unparsed"}
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
        self.failed: dict[str, str] = {}  # key -> why, for the items left out

    def stopped(self, key: str, item: JudgeItem, error: FatalJudgeError) -> None:
        """The request of ``item`` failed in a way that stops the run (the server is
        unreachable, or refuses the key or model): a failure like any other, so that the
        summary counts it instead of saying "failures 0"."""
        s = self.summary
        s.calls += 1
        s.failures += 1
        self.failed[key] = str(error)
        if len(s.errors) < 20:
            s.errors.append(f"{item.ident}: {error}")

    def record(self, key: str, item: JudgeItem, judgment: Judgment) -> None:
        s = self.summary
        s.calls += 1
        s.retries += judgment.retries
        if judgment.failed:
            self.failed[key] = judgment.error or "failed"
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
            try:
                judgment = await judge.ajudge(task, item.inputs)
            except FatalJudgeError as exc:
                recorder.stopped(key, item, exc)
                raise
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
        if many is not None:
            for (key, item), judgment in zip(chunk, many(plan.task, inputs), strict=True):
                recorder.record(key, item, judgment)
            continue
        for key, item in chunk:
            try:
                judgment = judge.judge(plan.task, item.inputs)
            except FatalJudgeError as exc:
                recorder.stopped(key, item, exc)
                raise
            recorder.record(key, item, judgment)


def _start(
    task: Task,
    items: Sequence[JudgeItem],
    judge: Judge,
    cache: JudgmentCache,
    refresh: bool,
    progress: Progress | None,
    retry_unparsed: bool = False,
) -> tuple[Plan, _Recorder]:
    plan = make_plan(
        task,
        items,
        model=judge.model,
        cache=cache,
        refresh=refresh,
        params=cache_params(task, judge),
        retry_unparsed=retry_unparsed,
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
    results = [stored.get(key) for key in plan.keys]
    missing = _missing(plan, results, recorder.failed)
    for m in missing:
        summary.left_out[m.reason] = summary.left_out.get(m.reason, 0) + 1
    summary.cached_unparsed = sum(
        key in plan.cached and j is not None and j.status == "unparsed"
        for key, j in zip(plan.keys, results, strict=True)
    )
    return JudgeRun(plan, results, summary, missing)


def _missing(
    plan: Plan, results: Sequence[Judgment | None], failed: dict[str, str]
) -> list[Missing]:
    """Every item without a label, and why."""
    out: list[Missing] = []
    for item, key, j in zip(plan.items, plan.keys, results, strict=True):
        if j is None:
            if key in failed:
                out.append(Missing(item.ident, "failed", failed[key]))
            else:
                out.append(Missing(item.ident, "not judged"))
        elif j.status == "unparsed":
            out.append(Missing(item.ident, "unparsed", j.raw[:200]))
    return out


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
    retry_unparsed: bool = False,
) -> JudgeRun:
    """Judge ``items`` (each unique input once), caching every judgment as it arrives.

    An async judge (``ajudge``) runs with ``concurrency`` (default: the judge's own) workers
    in its own event loop (inside a running loop, e.g. a notebook, ``await``
    :func:`arun_judgments` instead); a plain one runs in batches (``judge_many``, else
    ``judge``). A :class:`FatalJudgeError` stops the run (``summary.fatal``), and so does
    Ctrl-C (``summary.interrupted``); either way what was judged is cached and the results
    returned cover it. ``retry_unparsed``: ask the cached unparsed items again. The returned
    run lists every item left without a label (``missing``; ``summary.left_out`` counts
    them by reason, cache hits included).
    """
    plan, recorder = _start(task, items, judge, cache, refresh, progress, retry_unparsed)
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
    retry_unparsed: bool = False,
) -> JudgeRun:
    """:func:`run_judgments` in the running event loop. Cancelling it cancels the run (the
    cancellation propagates; what was judged is cached)."""
    plan, recorder = _start(task, items, judge, cache, refresh, progress, retry_unparsed)
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
    "Missing",
    "MissingReason",
    "Plan",
    "Progress",
    "Summary",
    "arun_judgments",
    "cache_params",
    "make_plan",
    "run_judgments",
]
