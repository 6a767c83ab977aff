"""RAGChecker's retrieval (context) metrics, read off the nugget assignments.

RAGChecker (Ru et al., NeurIPS 2024 Datasets and Benchmarks; amazon-science/RAGChecker,
``ragchecker/computation.py``) checks each claim ``n`` of the gold answer against each
retrieved chunk ``d`` (``retrieved2answer``: entailed or not) and against the generated
response (``response2answer``). Here the claims are a query's nuggets ``N`` and the checks
are ragmeter's nugget assignments (:mod:`ragmeter.metrics.nuggets`): chunk ``d`` entails
nugget ``n`` when ``e(d, n) = [a(d, n) = support]`` — RAGChecker's entailment is yes/no, so
partial support does not count, and a passage without assignment entails nothing. Over the
context ``Z`` = the top K of the ranking (the whole ranking without ``@K``):

* ``claim_recall@K = |{n ∈ N : max_{d∈Z} e(d, n) = 1}| / |N|`` — the share of gold claims
  some chunk entails. It is **nugget coverage with strict support**:
  ``claim_recall@K = nugget_coverage@K(strict=1)``, the same number under RAGChecker's name.
* ``context_precision@K = |{d ∈ Z : max_{n∈N} e(d, n) = 1}| / |Z|`` — the share of the
  chunks that entail at least one gold claim.
* ``context_utilization@K = |{n : max_{d∈Z} e(d, n) = 1 ∧ e(A, n) = 1}| / |{n : max_{d∈Z}
  e(d, n) = 1}|`` — of the claims the context holds, the share the run's answer ``A`` holds
  too (``e(A, n)``: the nugget's assignment to the answer is support).

RAGChecker scores 0 where a denominator is 0 (no claim, no chunk, no claim recalled); here
that is NA, as for every nugget measure: counted, never averaged in as 0. NA too without
nuggets for the query, and (``context_utilization``) where the run's answer is not assessed.

RAGChecker's ``noise_sensitivity_in_relevant`` / ``_in_irrelevant`` (and hallucination,
self-knowledge, faithfulness) check the *response's* claims against the gold answer and the
chunks (``answer2response``, ``retrieved2response``); nugget assignments hold only the gold
nuggets' support, so they are not computed here.

Reference (hand-computed): nuggets n1 n2 n3; ranking d1 [n1 S, n2 P], d2 [n3 N], d3 [n3 S];
answer [n1 S, n2 S, n3 N]. Top 2: entailed claims {n1} → claim_recall@2 = 1/3,
context_precision@2 = 1/2 (d1 yes, d2 no), context_utilization@2 = 1/1. Top 3: {n1, n3} →
claim_recall@3 = 2/3, context_precision@3 = 2/3, context_utilization@3 = 1/2.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned
from ragmeter.measures import FloatArray, Measure, register
from ragmeter.metrics.nuggets import _view

#: the code of full support (not 0, partial 1, support 2)
SUPPORT = 2

#: the entailment of each nugget (column) by each chunk of the context (row)
Grid = npt.NDArray[np.bool_]


def _context(al: Aligned, m: Measure, i: int, grid: npt.NDArray[np.int8]) -> Grid:
    """Entailment of each nugget by each chunk of the context (rows: the top K)."""
    k = len(grid) if m.k is None else int(m.k)
    if al.cutoffs is not None and al.cutoffs[i] >= 0:
        k = min(k, int(al.cutoffs[i]))
    return np.equal(grid[: max(k, 0)], SUPPORT)


def _ratio(num: int, den: int) -> float:
    return num / den if den > 0 else float("nan")


def _per_query(al: Aligned, m: Measure, score: str) -> FloatArray:
    view = _view(al, m, passages=True)
    out = np.full(al.n_queries, np.nan, dtype=np.float64)
    for i, (grid, vital, answer) in enumerate(
        zip(view.items, view.vital, view.answer, strict=True)
    ):
        if grid is None or vital is None:
            continue
        entailed = _context(al, m, i, grid)
        recalled = entailed.any(axis=0) if len(entailed) else np.zeros(len(vital), dtype=bool)
        if score == "claim_recall":
            out[i] = _ratio(int(recalled.sum()), len(vital))
        elif score == "context_precision":
            out[i] = _ratio(int(entailed.any(axis=1).sum()), len(entailed))
        elif answer is not None:  # context_utilization
            used = recalled & (answer == SUPPORT)
            out[i] = _ratio(int(used.sum()), int(recalled.sum()))
    return out


#: each RAGChecker measure reads the nugget assignments of its context, cut at an optional K
_ragchecker_measure = partial(register, cutoff="optional", needs=("nuggets",), context=True)


@_ragchecker_measure(
    "claim_recall",
    summary="Share of gold nuggets a top-K chunk fully supports (RAGChecker; = "
    "nugget_coverage@K(strict=1))",
)
def claim_recall(al: Aligned, m: Measure) -> FloatArray:
    """claim_recall@K = |{n ∈ N : ∃ d ∈ top K, a(d,n) = support}| / |N| — RAGChecker's claim
    recall, the same number as nugget_coverage@K(strict=1); NA without nuggets.

    Reference: d1 [n1 S, n2 P], d2 [n3 N], d3 [n3 S] → @2 = 1/3, @3 = 2/3.
    """
    return _per_query(al, m, "claim_recall")


@_ragchecker_measure(
    "context_precision",
    summary="Share of the top-K chunks that fully support a gold nugget (RAGChecker)",
)
def context_precision(al: Aligned, m: Measure) -> FloatArray:
    """context_precision@K = |{d ∈ top K : ∃ n, a(d,n) = support}| / |top K| (RAGChecker);
    NA without nuggets or for an empty context.

    Reference: d1 [n1 S, n2 P], d2 [n3 N], d3 [n3 S] → @2 = 1/2, @3 = 2/3.
    """
    return _per_query(al, m, "context_precision")


@_ragchecker_measure(
    "context_utilization",
    summary="Of the nuggets the top-K context supports, the share the answer supports too "
    "(RAGChecker)",
)
def context_utilization(al: Aligned, m: Measure) -> FloatArray:
    """context_utilization@K = |{n : ∃ d ∈ top K, a(d,n) = S ∧ a(A,n) = S}| / |{n : ∃ d ∈
    top K, a(d,n) = S}| (RAGChecker); NA without nuggets, without an assessed answer, or
    when the context supports no nugget.

    Reference: context d1 [n1 S, n2 P], d2 [n3 N], d3 [n3 S], answer [n1 S, n2 S, n3 N] →
    @2 = 1/1, @3 = 1/2.
    """
    return _per_query(al, m, "context_utilization")
