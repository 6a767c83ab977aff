"""The judge data model: one :class:`Judgment` per (task, inputs), and the :class:`Judge`
protocol every judge implements (the LLM judge over HTTP, the offline embedding judge).

No third-party import here: an offline judge can implement the protocol without aiohttp.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

#: ``ok``: the strict parser read the output; ``lenient``: only the lenient fallback did;
#: ``unparsed``: nobody could (value −1 or None, raw text kept); ``error``: no output at all
#: (request failed after every retry) — never cached, retried on the next run.
ParseStatus = Literal["ok", "lenient", "unparsed", "error"]

#: the value an unparseable grade or rating is stored as (never 0, which is a real rating)
UNPARSED = -1

#: the input that tells the repeated samples of one prompt apart (``--samples N``): absent
#: for sample 0 (so its cache key is the plain request's), ``"i"`` for sample i ≥ 1. It
#: fills no placeholder; it makes each sample its own cached request, and an LLM judge adds
#: it to its seed.
SAMPLE_INPUT = "__sample__"


def sample_index(inputs: Mapping[str, str]) -> int:
    """The sample index of a judgment's inputs (0 when not sampled)."""
    return int(inputs.get(SAMPLE_INPUT, 0))


@dataclass(frozen=True)
class Judgment:
    """The outcome of one judgment.

    Attributes:
        value: the parsed label — an int grade/rating (``UNPARSED`` = −1 when unreadable), a
            list of sub-questions, ``{"correct": 0|1, "reason": …}``, or a probability.
        status: see :data:`ParseStatus`.
        raw: the judge's raw output text (kept for every status, for audit).
        model: the model that answered.
        latency_s: wall time of the successful request (0 for offline judges).
        input_tokens / output_tokens: from the server's ``usage``, else estimated.
        tokens_estimated: True when the token counts are the chars/4 estimate.
        retries: requests retried before this answer.
        error: why the judgment failed (status ``error``).
    """

    value: Any
    status: ParseStatus
    raw: str = ""
    model: str = ""
    latency_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_estimated: bool = False
    retries: int = 0
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == "error"


@dataclass(frozen=True)
class JudgeItem:
    """One thing to judge: ``ident`` names it in the output (e.g. ``(qid, docid)``), ``inputs``
    fill the task's prompt (e.g. ``{"query": …, "passage": …}``)."""

    ident: tuple[Any, ...]
    inputs: Mapping[str, str]
    extra: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Judge(Protocol):
    """What the runner calls. ``model`` names the judge in the cache key (two judges with the
    same ``model`` string share cached judgments).

    ``judge(task, inputs)`` returns one :class:`Judgment`; it may raise
    :class:`~ragmeter.judges.errors.FatalJudgeError` to stop the whole run (bad credentials,
    unknown model). A judge may also offer ``judge_many(task, inputs_list)`` (a batch, e.g.
    one embedding pass) and/or ``async ajudge(task, inputs)``; the runner prefers
    ``ajudge``, then ``judge_many``, then ``judge``.
    """

    @property
    def model(self) -> str: ...

    def judge(self, task: Any, inputs: Mapping[str, str]) -> Judgment: ...


def judge_many_default(
    judge: Judge, task: Any, inputs: Sequence[Mapping[str, str]]
) -> list[Judgment]:
    """``judge_many`` for judges that only have ``judge``."""
    return [judge.judge(task, i) for i in inputs]


__all__ = [
    "SAMPLE_INPUT",
    "UNPARSED",
    "Judge",
    "JudgeItem",
    "Judgment",
    "ParseStatus",
    "judge_many_default",
    "sample_index",
]
