"""Answer containment: retrieval measured against gold answers, without relevance labels.

DPR's ``has_answer`` (Karpukhin et al. 2020) and FlashRAG's ``retrieval_recall@k``: a passage
``d`` *contains* a gold answer ``a`` when the tokens of ``norm(a)`` appear as a contiguous
run of the tokens of ``norm(d)``, with ``norm`` SQuAD v1.1's answer normalisation on the
Unicode NFKC form (NFKC, then lower case, ASCII punctuation removed, the articles *a* / *an*
/ *the* removed, white space collapsed; :func:`ragmeter.metrics.answers.normalize_answer`,
the one normalisation eRAG and the answer metrics use too) and tokens split on white space.
With ``h_i = 1`` when the passage at rank ``i`` contains one of the query's gold answers
``A`` (else 0):

* ``answer_recall@K = max_{i ≤ K} h_i`` — 1 when one of the top K passages contains a gold
  answer (0 for an empty ranking);
* ``answer_precision@K = Σ_{i ≤ K} h_i / K`` — the share of the top K that contain one (a
  ranking shorter than K counts its missing ranks as not containing, like ``P@K``).

A query's own cutoff (``metadata.k`` of the run) caps K. NA — never 0 — for a query without
gold answers (absent from the gold answers file, or listed with none, or whose every answer
normalises to nothing, such as "The"): it is counted, and the mean says n = k/N.

Reference (hand-computed): gold answers ["Eiffel Tower"]; ranking d1 "The tower of Eiffel",
d2 "the EIFFEL-tower", d3 "Eiffel  tower, Paris" → h = (0, 0, 1) (d2 normalises to
"eiffeltower", one token) → answer_recall@2 = 0, answer_recall@3 = 1, answer_precision@3 =
1/3, answer_precision@5 = 1/5.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned
from ragmeter.errors import MissingInputError
from ragmeter.measures import FloatArray, Measure, register
from ragmeter.metrics.answers import answer_forms, normalize_answer

#: per evaluated query, h_i of each retrieved item in rank order; ``None``: no gold answer
AnswerHits = list[npt.NDArray[np.bool_] | None]


def _padded(text: str) -> str:
    # tokens never hold a space, so a run of tokens is a substring between spaces
    return f" {normalize_answer(text)} "


def answer_patterns(answers: Sequence[str]) -> list[str]:
    """The normalised answers as space-padded patterns; those normalising to nothing are
    dropped (:func:`~ragmeter.metrics.answers.answer_forms`: an empty run of tokens would be
    in every passage)."""
    return [f" {form} " for form in answer_forms(answers)]


def has_answer(text: str, answers: Sequence[str]) -> bool:
    """Whether ``text`` contains one of ``answers``: the normalised answer's tokens are a
    contiguous run of the normalised text's tokens.

    >>> has_answer("In 1889, the Eiffel Tower opened.", ["eiffel tower"])
    True
    >>> has_answer("Eiffel's towers", ["Eiffel tower"])
    False
    """
    return _contains(_padded(text), answer_patterns(answers))


def _contains(padded_text: str, patterns: Sequence[str]) -> bool:
    return any(p in padded_text for p in patterns)


def answer_hits(texts: Sequence[str], answers: Sequence[str]) -> npt.NDArray[np.bool_] | None:
    """``h_i`` of each of ``texts`` (rank order); ``None`` when no answer normalises to a
    token."""
    patterns = answer_patterns(answers)
    if not patterns:
        return None
    return np.array([_contains(_padded(t), patterns) for t in texts], dtype=bool)


def _hits(al: Aligned, m: Measure) -> AnswerHits:
    hits = al.side.get("answer_hits")
    if not isinstance(hits, list):
        raise MissingInputError(
            f"{m} needs gold answers (--gold-answers) and the passages' texts (--corpus)"
        )
    return hits


def _cutoff(al: Aligned, m: Measure, i: int) -> int:
    k = int(m.k) if m.k is not None else 0
    if al.cutoffs is not None and al.cutoffs[i] >= 0:
        k = min(k, int(al.cutoffs[i]))
    return k


def _per_query(al: Aligned, m: Measure, *, share: bool) -> FloatArray:
    out = np.full(al.n_queries, np.nan, dtype=np.float64)
    for i, hits in enumerate(_hits(al, m)):
        if hits is None:
            continue
        k = _cutoff(al, m, i)
        found = int(hits[:k].sum())
        if share:
            out[i] = found / k if k > 0 else 0.0
        else:
            out[i] = float(found > 0)
    return out


#: both measures read the gold answers in the top K passages, K required
_gold_answer_measure = partial(register, cutoff="required", needs=("gold_answers",))


@_gold_answer_measure(
    "answer_recall",
    summary="1 when one of the top K passages contains a gold answer (DPR, FlashRAG)",
)
def answer_recall(al: Aligned, m: Measure) -> FloatArray:
    """answer_recall@K = max_{i ≤ K} h_i, h_i = 1 when the passage at rank i contains a gold
    answer (SQuAD-normalised tokens as a contiguous run); NA without gold answers.

    Reference: h = (0, 0, 1) → answer_recall@2 = 0, answer_recall@3 = 1.
    """
    return _per_query(al, m, share=False)


@_gold_answer_measure(
    "answer_precision",
    summary="Share of the top K passages that contain a gold answer",
)
def answer_precision(al: Aligned, m: Measure) -> FloatArray:
    """answer_precision@K = Σ_{i ≤ K} h_i / K (missing ranks count 0); NA without gold
    answers.

    Reference: h = (0, 0, 1) → answer_precision@3 = 1/3, answer_precision@5 = 1/5.
    """
    return _per_query(al, m, share=True)
