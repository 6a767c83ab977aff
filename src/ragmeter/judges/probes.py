"""Bias probes of a relevance judge (``ragmeter judge probe``), on a seeded sample of the
(query, passage) pairs of a run's top ``depth``:

* **length**: each passage is judged as it is and padded with neutral text (:data:`FILLER`
  repeated to ``pad_words`` words, after a blank line); a *flip* is a pair whose grade
  changes. The report also counts the flips up (the padded passage graded higher) and down.
* **self-consistency** (``samples`` ≥ 2, temperature > 0): each pair is asked ``samples``
  times; a *flip* is a pair whose grades read are not all the same (pairs with fewer than
  two grades read are left out and counted). With samples, the length probe compares the
  mode of the samples (ties to the lowest grade) of the plain and the padded passage — read
  its flip rate against the self-consistency rate, the noise floor.
* **position** (the order of the passages where a prompt holds several): of the relevance
  prompts only ``umbrela-fewshot`` holds several — its four worked examples, graded 0, 1, 2,
  3 in that order. The probe asks each pair again with the examples in reverse order
  (:data:`~ragmeter.judges.umbrela.REVERSED_EXAMPLES`; nothing else changes); a *flip* is a
  pair whose grade changes (up and down counted). ``relevance`` and ``umbrela`` hold one
  passage each: there is no order to change, and the report says so instead of a number.

Each flip rate k/n comes with its 95% **Wilson score interval** (:func:`wilson_interval`).
Every request is an ordinary cached judgment (the plain passages share the cache with
``ragmeter judge relevance``; the padded ones are their own keys): a rerun asks nothing.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from ragmeter.judges.api import Job, TaskResult, pair_items
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.config import JudgeConfig, Price
from ragmeter.judges.errors import JudgeConfigError
from ragmeter.judges.runner import Progress
from ragmeter.judges.tasks import Task, make_task
from ragmeter.judges.types import Judge, JudgeItem, Judgment
from ragmeter.judges.umbrela import REVERSED_EXAMPLES

#: the neutral sentence a padded passage is extended with
FILLER = "This sentence is neutral filler text and says nothing about any topic."

#: why the position probe has no number for a one-passage prompt
POSITION_NA = "not applicable: the prompt holds one passage (no order to change)"


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n:

    (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), p̂ = k/n, z the standard normal
    quantile of (1 + confidence)/2 (Wilson 1927; Brown, Cai & DasGupta 2001). NaN, NaN for
    n = 0."""
    if n == 0:
        return math.nan, math.nan
    if not 0 <= k <= n:
        raise ValueError(f"need 0 ≤ k ≤ n, got k={k}, n={n}")
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class FlipRate:
    """``flips`` of ``n`` pairs, with the 95% Wilson interval."""

    flips: int
    n: int

    @property
    def rate(self) -> float:
        return self.flips / self.n if self.n else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.flips, self.n)

    def text(self) -> str:
        if not self.n:
            return "NA (no pair to compare)"
        low, high = self.interval
        return f"{self.rate:.1%} ({self.flips} of {self.n} pairs; 95% Wilson {low:.1%}–{high:.1%})"

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval
        fine = self.n > 0
        return {
            "flips": self.flips,
            "n": self.n,
            "rate": self.rate if fine else None,
            "ci95": [low, high] if fine else None,
        }


def pad(passage: str, words: int) -> str:
    """``passage``, a blank line, then :data:`FILLER` repeated and cut to ``words`` words."""
    filler = FILLER.split()
    repeated = (filler * (words // len(filler) + 1))[:words]
    return f"{passage}\n\n{' '.join(repeated)}"


@dataclass
class ProbeJob:
    """The probe's two jobs: the sampled pairs as they are, and padded."""

    plain: Job
    padded: Job
    samples: int
    pad_words: int
    pairs: list[tuple[str, str]]
    #: the pairs with the prompt's examples reordered (None: the prompt holds one passage)
    reordered: Job | None = None


def probe_job(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    *,
    depth: int | None = 20,
    pairs: int = 50,
    seed: int = 0,
    prompt: str = "relevance",
    samples: int = 1,
    pad_words: int = 200,
    max_tokens: int | None = None,
) -> ProbeJob:
    """Sample ``pairs`` (query, passage) pairs of the run(s)' top ``depth`` (seeded; kept in
    run order) and prepare their plain and padded judgments (``samples`` each)."""
    from ragmeter.judges import votes
    from ragmeter.judges.api import RELEVANCE_PROMPTS

    if prompt not in RELEVANCE_PROMPTS:
        raise JudgeConfigError(
            f"unknown prompt {prompt!r}; expected one of {', '.join(RELEVANCE_PROMPTS)}"
        )
    if min(pairs, pad_words, samples) < 1:
        raise JudgeConfigError(
            f"--pairs, --pad-words and --samples must be ≥ 1, got {pairs}, {pad_words}, {samples}"
        )
    items = pair_items(runs, queries, corpus, depth=depth)
    chosen = sorted(random.Random(seed).sample(range(len(items)), min(pairs, len(items))))
    plain = [items[i] for i in chosen]
    padded = [
        JudgeItem(i.ident, {**i.inputs, "passage": pad(i.inputs["passage"], pad_words)})
        for i in plain
    ]
    task = make_task(prompt, max_tokens=max_tokens)

    def jobs(its: list[JudgeItem], on: Task = task) -> Job:
        return Job(on, votes.sampled_items(its, samples), _grades_by_item, samples=samples)

    reordered = None
    if prompt == "umbrela-fewshot":
        reordered = jobs(plain, make_task(REVERSED_EXAMPLES, max_tokens=max_tokens))
    pair_ids = [(i.ident[0], i.ident[1]) for i in plain]
    return ProbeJob(jobs(plain), jobs(padded), samples, pad_words, pair_ids, reordered)


def _grades_by_item(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
    """``{(qid, docid, sample): grade}`` of the judgments read."""
    return {
        item.ident: int(j.value)
        for item, j in zip(items, results, strict=True)
        if j is not None and j.status in ("ok", "lenient")
    }


@dataclass
class ProbeReport:
    """The probes' flip rates, and the two runs behind them (their summaries)."""

    pairs: int
    samples: int
    pad_words: int
    length: FlipRate
    length_up: int
    length_down: int
    consistency: FlipRate | None
    plain: TaskResult
    padded: TaskResult
    #: the position probe (None: not applicable, :data:`POSITION_NA`), flips up and down
    position: FlipRate | None = None
    position_up: int = 0
    position_down: int = 0
    reordered: TaskResult | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def results(self) -> list[TaskResult]:
        """The runs behind the probes: plain, padded, and reordered where there is one."""
        return [self.plain, self.padded, *([self.reordered] if self.reordered else [])]

    @property
    def complete(self) -> bool:
        return all(r.complete for r in self.results)

    def lines(self) -> list[str]:
        out = [
            f"probes on {self.pairs} pairs ({self.samples} sample(s) per prompt)",
            f"length (+{self.pad_words} neutral words): flip rate {self.length.text()}; "
            f"{self.length_up} up, {self.length_down} down",
        ]
        if self.consistency is not None:
            out.append(f"self-consistency ({self.samples} samples): flip rate "
                       f"{self.consistency.text()}")  # fmt: skip
        else:
            out.append("self-consistency: not measured (--samples N ≥ 2 at --temperature > 0)")
        if self.position is None:
            out.append(f"position: {POSITION_NA}")
        else:
            out.append(
                f"position (examples reversed): flip rate {self.position.text()}; "
                f"{self.position_up} up, {self.position_down} down"
            )
        return out + self.notes

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "samples": self.samples,
            "length": {
                **self.length.to_dict(),
                "pad_words": self.pad_words,
                "up": self.length_up,
                "down": self.length_down,
            },
            "self_consistency": (
                self.consistency.to_dict() if self.consistency is not None else None
            ),
            "position": (
                {"applicable": False, "why": POSITION_NA}
                if self.position is None
                else {
                    "applicable": True,
                    **self.position.to_dict(),
                    "up": self.position_up,
                    "down": self.position_down,
                }
            ),
            "interval": "Wilson score, 95%",
            "complete": self.complete,
            "judged": {
                name: r.summary.to_dict()
                for name, r in zip(("plain", "padded", "reordered"), self.results, strict=False)
            },
        }


def run_probes(
    job: ProbeJob,
    judge: Judge | JudgeConfig,
    *,
    cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
    price: Price | None = None,
    refresh: bool = False,
    retry_unparsed: bool = False,
    progress: Progress | None = None,
    engine: str | None = None,
) -> ProbeReport:
    """Judge the probe's plain and padded pairs (cached) and measure the flip rates
    (``engine``: as :meth:`Job.execute`'s)."""
    opened = cache if isinstance(cache, JudgmentCache) else JudgmentCache(cache)
    options: dict[str, Any] = {
        "cache": opened,
        "price": price,
        "refresh": refresh,
        "retry_unparsed": retry_unparsed,
        "engine": engine,
    }
    try:
        plain = job.plain.execute(judge, progress=progress, **options)
        padded = job.padded.execute(judge, **options)
        reordered = job.reordered.execute(judge, **options) if job.reordered else None
    finally:
        if opened is not cache:
            opened.close()
    length, up, down = _flips(plain.labels, padded.labels, job.pairs, job.samples)
    consistency = (
        _consistency_flips(plain.labels, job.pairs, job.samples) if job.samples > 1 else None
    )
    report = ProbeReport(
        len(job.pairs), job.samples, job.pad_words, length, up, down, consistency, plain, padded
    )
    if reordered is not None:
        report.reordered = reordered
        report.position, report.position_up, report.position_down = _flips(
            plain.labels, reordered.labels, job.pairs, job.samples
        )
    return report


def _votes(
    grades: Mapping[tuple[Any, ...], int], pairs: Sequence[tuple[str, str]], samples: int
) -> dict[tuple[str, str], int]:
    from ragmeter.judges.votes import vote

    out = {}
    for q, d in pairs:
        read = [grades[(q, d, s)] for s in range(samples) if (q, d, s) in grades]
        if read:
            out[(q, d)] = vote(read)
    return out


def _flips(
    plain: Mapping[tuple[Any, ...], int],
    changed: Mapping[tuple[Any, ...], int],
    pairs: Sequence[tuple[str, str]],
    samples: int,
) -> tuple[FlipRate, int, int]:
    """The pairs whose grade (the vote of the samples) differs between ``plain`` and
    ``changed``, of those both graded; and how many went up, and down."""
    a, b = _votes(plain, pairs, samples), _votes(changed, pairs, samples)
    both = [p for p in pairs if p in a and p in b]
    up = sum(b[p] > a[p] for p in both)
    down = sum(b[p] < a[p] for p in both)
    return FlipRate(up + down, len(both)), up, down


def _consistency_flips(
    grades: Mapping[tuple[Any, ...], int], pairs: Sequence[tuple[str, str]], samples: int
) -> FlipRate:
    flips = n = 0
    for q, d in pairs:
        read = [grades[(q, d, s)] for s in range(samples) if (q, d, s) in grades]
        if len(read) >= 2:
            n += 1
            flips += len(set(read)) > 1
    return FlipRate(flips, n)


__all__ = [
    "FILLER",
    "POSITION_NA",
    "FlipRate",
    "ProbeJob",
    "ProbeReport",
    "pad",
    "probe_job",
    "run_probes",
    "wilson_interval",
]
