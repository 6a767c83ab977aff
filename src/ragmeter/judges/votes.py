"""Several answers per pair: N samples of one judge (``--samples N``), and several judges
(an ensemble), each reduced to one grade by a vote.

**The vote** (:func:`vote`): the most frequent grade; a tie goes to the **lowest** of the tied
grades. For the samples of one judge this is the mode of the N grades, ties to the lower
grade (umbrela's own ``--num-sample`` takes ``statistics.mode``, whose tie goes to the grade
sampled first: ragmeter's rule does not depend on the order the answers arrived in). For
several judges it is umbrela's ``EnsembleJudge`` rule exactly: ``Counter(votes)
.most_common()``, then the smallest grade among those with the top count.

**What votes**: every sample, every member — a label is the vote of *all* N samples (all
the judges), never of the ones that happened to be read. A pair one of whose samples was
unparsed (or one of whose judges' replies could not be read) has **no label** (reason
``unparsed``; the run is incomplete, exit 1): the vote of the remaining grades could differ
from the vote a complete run gives, and it would be written as if it were one (umbrela counts
an unreadable reply as a vote for 0, another silent choice). ``--retry-unparsed`` asks the
unread samples again. A pair one of whose requests failed or was never made has no label
either (reason ``failed`` / ``not judged``): a rerun asks the missing request. So a label
written is always the one a fault-free run gives.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragmeter.judges.runner import Missing, MissingReason
from ragmeter.judges.types import SAMPLE_INPUT, JudgeItem, Judgment

#: ``LabelSource.aggregation`` of N samples of one judge
MODE = "mode, ties to the lowest grade"
#: ``LabelSource.aggregation`` of several judges
MAJORITY = "majority, ties to the lowest grade"

#: why a pair waits for a rerun: one of its requests failed, or was never made
_WAITING: tuple[MissingReason, ...] = ("failed", "not judged")


def vote(grades: Iterable[int]) -> int:
    """The most frequent of ``grades``; a tie goes to the lowest tied grade.

    vote(g) = min{ x : count(x) = max_y count(y) }. Raises ``ValueError`` when empty."""
    counts = Counter(grades)
    if not counts:
        raise ValueError("no grade to vote on")
    top = max(counts.values())
    return min(g for g, c in counts.items() if c == top)


def sampled_items(items: Sequence[JudgeItem], samples: int) -> list[JudgeItem]:
    """Each item ``samples`` times, as items ``ident + (s,)``: sample 0 with the item's own
    inputs (its cache key is the plain request's), sample s ≥ 1 with
    :data:`~ragmeter.judges.types.SAMPLE_INPUT` = s (its own cache key and seed)."""
    if samples < 1:
        raise ValueError(f"samples must be ≥ 1, got {samples}")
    return [
        JudgeItem(
            (*item.ident, s),
            item.inputs if s == 0 else {**item.inputs, SAMPLE_INPUT: str(s)},
            item.extra,
        )
        for item in items
        for s in range(samples)
    ]


def _read(j: Judgment | None) -> bool:
    return j is not None and j.status in ("ok", "lenient")


def vote_samples(
    items: Sequence[JudgeItem], results: Sequence[Judgment | None]
) -> dict[tuple[Any, ...], int]:
    """``{pair ident: grade}`` from the judgments of :func:`sampled_items`' items (the
    sample index last in each ident): the vote of the samples, for every pair whose samples
    were all read (a pair with an unparsed, failed or unasked sample has no label)."""
    by_pair: dict[tuple[Any, ...], list[Judgment | None]] = defaultdict(list)
    for item, j in zip(items, results, strict=True):
        by_pair[item.ident[:-1]].append(j)
    return {
        pair: vote(int(j.value) for j in answers if j is not None)
        for pair, answers in by_pair.items()
        if all(_read(j) for j in answers)
    }


def pair_missing(missing: Sequence[Missing], samples: int) -> list[Missing]:
    """The pairs without a label, from the samples without one (``missing`` of the run): a
    pair with a failed (or never asked) sample is ``failed`` (``not judged``); a pair with
    an unparsed sample (one of its ``samples`` or more) is ``unparsed``. Only a pair whose
    samples were all read is labelled."""
    by_pair: dict[tuple[Any, ...], list[Missing]] = {}
    for m in missing:
        by_pair.setdefault(m.ident[:-1], []).append(m)
    out = []
    for pair, ms in by_pair.items():
        reasons = {m.reason for m in ms}
        for reason in _WAITING:
            if reason in reasons:
                detail = next(m.detail for m in ms if m.reason == reason)
                out.append(Missing(pair, reason, detail))
                break
        else:
            detail = f"{len(ms)} of {samples} samples unreadable: {ms[0].detail}"
            out.append(Missing(pair, "unparsed", detail))
    return out


def unparsed_samples(missing: Sequence[Missing]) -> int:
    """How many samples were unparsed (their pairs have no label)."""
    return sum(m.reason == "unparsed" for m in missing)


def combine(
    members: Sequence[Mapping[str, Mapping[str, int]]],
    member_missing: Sequence[Sequence[Missing]],
    pairs: Sequence[tuple[str, str]],
) -> tuple[dict[str, dict[str, int]], list[Missing]]:
    """The ensemble's labels (``{qid: {docid: grade}}``, in ``pairs`` order) from its
    members' labels: each pair's :func:`vote` over **all** the members. A pair some member
    has no label for has none either, with that member's reason (a failed or unasked
    request first: a rerun asks it; then ``unparsed``) and the judges it lacks (1-based)."""
    lacking: dict[tuple[str, str], list[tuple[int, Missing]]] = defaultdict(list)
    for i, missing in enumerate(member_missing, start=1):
        for m in missing:
            lacking[(str(m.ident[0]), str(m.ident[1]))].append((i, m))
    labels: dict[str, dict[str, int]] = {}
    out: list[Missing] = []
    for q, d in pairs:
        grades = [m[q][d] for m in members if d in m.get(q, {})]
        if len(grades) == len(members):
            labels.setdefault(q, {})[d] = vote(grades)
            continue
        gaps = lacking.get((q, d)) or []
        judges = ", ".join(str(i) for i, _ in gaps) or "?"
        first = next((m for _, m in gaps if m.reason in _WAITING), gaps[0][1] if gaps else None)
        reason: MissingReason = first.reason if first is not None else "not judged"
        detail = f"no label from judge(s) {judges}" + (f": {first.detail}" if first else "")
        out.append(Missing((q, d), reason, detail))
    return labels, out


__all__ = [
    "MAJORITY",
    "MODE",
    "combine",
    "pair_missing",
    "sampled_items",
    "unparsed_samples",
    "vote",
    "vote_samples",
]
