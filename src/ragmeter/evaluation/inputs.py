"""What an evaluation reads besides the runs and the measures, in one value.

An :class:`EvalInputs` travels with every :class:`~ragmeter.evaluation.results.RunResult` an
evaluation produces, so a later view of the same run (a sweep over K, a report's panels, a
diagnosis) evaluates with the very inputs and options of the numbers it sits beside: one name,
one number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Literal, TypedDict, cast

from ragmeter.core.align import Missing
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.measures import MAX_DEPTH

#: the largest grade (and relevance level): trec_eval keeps grades in 32-bit integers
MAX_GRADE = 2**31 - 1

if TYPE_CHECKING:
    from ragmeter.core.gold_answers import GoldAnswers
    from ragmeter.core.judgments import Answers, Corpus, Judgments, TokenCounter
    from ragmeter.core.nuggets import CitationSupport, NuggetAssignments, Nuggets
    from ragmeter.core.spans import SpanInputs
    from ragmeter.io.lengths import PassageLengths
    from ragmeter.io.utilities import Utilities

ContextK = int | Literal["oracle"] | None


@dataclass(frozen=True, eq=False, kw_only=True)
class SideInputs:
    """What some measures read besides the runs and the qrels, in one value: the side inputs
    of an evaluation (see :func:`ragmeter.evaluation.evaluate` for each field).

    A new kind of input is a field here (and a key of :class:`Options`, the keywords of
    :func:`~ragmeter.evaluation.evaluate`): the layers between the command line and the
    measures hand the whole value on, so they do not change.
    """

    judgments: Judgments | None = None
    corpus: Corpus | None = None
    answers: Answers | Sequence[Answers | None] | None = None
    token_counter: TokenCounter | None = None
    passage_lengths: PassageLengths | None = None
    utilities: Utilities | None = None
    nuggets: Nuggets | None = None
    nugget_assignments: NuggetAssignments | None = None
    citation_support: CitationSupport | None = None
    spans: SpanInputs | None = None
    gold_answers: GoldAnswers | None = None

    def given(self) -> Options:
        """The side inputs given (not ``None``), as keywords of
        :func:`~ragmeter.evaluation.evaluate`."""
        out = {f.name: getattr(self, f.name) for f in fields(SideInputs)}
        return cast("Options", {name: value for name, value in out.items() if value is not None})


@dataclass(frozen=True, eq=False)
class EvalInputs(SideInputs):
    """The labels, side inputs and options of an evaluation (see
    :func:`ragmeter.evaluation.evaluate` for each field).

    ``context_k`` fills in ``@K`` of the context families (coverage, density, alpha_ndcg)
    given without one: ``coverage`` becomes ``coverage@context_k``, under that name. It never
    changes the value of a measure whose name does not say so.
    """

    qrels: Qrels
    missing: Missing = "zero"
    rel_level: int = 1
    depth: int | None = None
    default_k: int = 5
    pool: Run | None = None
    pool_depth: int | None = None
    grade_map: str | None = None
    context_k: ContextK = None
    tau: int = 3

    def __post_init__(self) -> None:
        # refused, not read: below 0 an unjudged document would count as relevant while the
        # number of relevant documents counts judged ones only
        if self.rel_level < 0:
            raise InputError(
                f"must be at least 0 (relevant ⇔ grade ≥ it), got {self.rel_level}",
                field="rel_level",
            )
        # ranks and grades are counted in 32-bit integers: a larger number is a range error
        # here, not an OverflowError deep in the evaluation
        _check_range("rel_level", self.rel_level, 0, MAX_GRADE)
        for name in ("depth", "pool_depth", "default_k", "context_k"):
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                _check_range(name, value, 1, MAX_DEPTH)

    @property
    def input_warnings(self) -> tuple[str, ...]:
        """What reading the labels warned: the qrels', the sub-question judgments', the span
        labels' and chunk tables' (each evaluation reports them once, before the runs' own)."""
        judged = self.judgments.warnings if self.judgments is not None else ()
        spans = self.spans.warnings if self.spans is not None else ()
        return (*self.qrels.warnings, *judged, *spans)

    @property
    def context_cutoff(self) -> int | None:
        """``context_k`` as a cutoff (``None`` for the oracle / family default)."""
        if self.context_k is None or self.context_k == "oracle":
            return None
        return int(self.context_k)


class Options(TypedDict, total=False):
    """The keywords of :func:`ragmeter.evaluation.evaluate` besides ``workers`` and ``engine``:
    the fields of :class:`EvalInputs` but the qrels (a test holds the two lists equal)."""

    missing: Missing
    rel_level: int
    depth: int | None
    default_k: int
    pool: Run | None
    pool_depth: int | None
    grade_map: str | None
    context_k: ContextK
    tau: int
    judgments: Judgments | None
    corpus: Corpus | None
    answers: Answers | Sequence[Answers | None] | None
    token_counter: TokenCounter | None
    passage_lengths: PassageLengths | None
    utilities: Utilities | None
    nuggets: Nuggets | None
    nugget_assignments: NuggetAssignments | None
    citation_support: CitationSupport | None
    spans: SpanInputs | None
    gold_answers: GoldAnswers | None


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise InputError(f"must be ≥ {low} and ≤ {high}, got {value}", field=name)
