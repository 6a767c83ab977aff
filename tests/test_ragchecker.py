"""RAGChecker's context metrics (claim_recall@K, context_precision@K, context_utilization@K)
from nugget assignments: hand cases, a port of RAGChecker's computation, properties.

The port below follows amazon-science/RAGChecker, ``ragchecker/computation.py``
(``evaluate_retrieval`` and ``evaluate_context_utilization``, commit 6091f08), Apache
License 2.0, Copyright Amazon.com, Inc. or its affiliates: ``retrieved2answer`` is the
(gold claim × retrieved chunk) entailment matrix, ``response2answer`` whether the response
entails each gold claim. RAGChecker scores 0 where ragmeter says NA (an empty denominator);
the comparison maps those cases to NaN.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import Run, evaluate
from ragmeter.core.nuggets import NuggetAssignments, Nuggets


def ragchecker_retrieval(retrieved2answer: np.ndarray) -> tuple[float, float]:
    """(claim_recall, context_precision) as ``evaluate_retrieval`` computes them."""
    if len(retrieved2answer) > 0 and len(retrieved2answer[0]) > 0:
        claim_recalled = np.max(retrieved2answer, axis=1)
        psg_useful = np.max(retrieved2answer, axis=0)
        return float(np.mean(claim_recalled)), float(np.mean(psg_useful))
    return 0.0, 0.0


def ragchecker_utilization(retrieved2answer: np.ndarray, response2answer: np.ndarray) -> float:
    """context_utilization as ``evaluate_context_utilization`` computes it."""
    if len(retrieved2answer) > 0 and len(retrieved2answer[0]) > 0:
        claim_recalled = np.max(retrieved2answer, axis=1)
        if np.sum(claim_recalled) > 0:
            claim_used = claim_recalled & response2answer
            return float(np.sum(claim_used) / np.sum(claim_recalled))
    return 0.0


S, P, N = 2, 1, 0


def _values(codes: list[list[int]], answer: list[int] | None, measures: list[str]) -> np.ndarray:
    """One query: nuggets 1.. (ids by position), passages d0.. in rank order with
    ``codes[d][n]``, the run's answer assessed with ``answer`` (None: not assessed)."""
    n_nuggets = len(answer) if answer is not None else (len(codes[0]) if codes else 1)
    nuggets = Nuggets.from_dict({"q": [(f"n{j}", "vital") for j in range(n_nuggets)]})
    passages = {
        ("q", f"d{i}"): {f"{j + 1}": c for j, c in enumerate(row)} for i, row in enumerate(codes)
    }
    answers = (
        {("run", "q"): {f"{j + 1}": c for j, c in enumerate(answer)}} if answer is not None else {}
    )
    run = Run.from_lists({"q": [f"d{i}" for i in range(len(codes))]}, name="run")
    result = evaluate(
        run,
        None,
        measures,
        nuggets=nuggets,
        nugget_assignments=NuggetAssignments(answers, passages),
    ).run
    return np.asarray(result.values)[0]


HAND = [[S, P, N], [N, N, N], [N, N, S]]


def test_hand_case() -> None:
    # top 2: only d1 fully supports a nugget (n1) → recall 1/3, precision 1/2, utilisation:
    # the answer supports n1 → 1/1; top 3 adds d3 (n3) → 2/3, 2/3, and the answer does not
    # support n3 → 1/2
    names = [
        "claim_recall@2", "context_precision@2", "context_utilization@2",
        "claim_recall@3", "context_precision@3", "context_utilization@3",
    ]  # fmt: skip
    values = _values(HAND, [S, S, N], names)
    assert values.tolist() == pytest.approx([1 / 3, 1 / 2, 1.0, 2 / 3, 2 / 3, 1 / 2])


def test_claim_recall_is_strict_nugget_coverage() -> None:
    values = _values(HAND, [S, S, N], ["claim_recall@2", "nugget_coverage@2(strict=1)"])
    assert values[0] == values[1] == pytest.approx(1 / 3)


def test_empty_denominators_are_na() -> None:
    # no passage supports anything: utilisation 0/0 → NA (RAGChecker: 0)
    values = _values([[P, N]], [S, S], ["claim_recall", "context_precision", "context_utilization"])
    assert values[:2].tolist() == [0.0, 0.0]
    assert np.isnan(values[2])
    # the answer not assessed: utilisation NA, the context measures defined
    values = _values([[S, N]], None, ["claim_recall", "context_utilization"])
    assert values[0] == 0.5
    assert np.isnan(values[1])


grids = st.integers(1, 4).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(st.sampled_from([S, P, N]), min_size=n, max_size=n), max_size=6),
        st.lists(st.sampled_from([S, P, N]), min_size=n, max_size=n),
    )
)


@given(data=grids, k=st.integers(1, 7))
@settings(max_examples=150, deadline=None)
def test_matches_the_ragchecker_port(data: tuple[list[list[int]], list[int]], k: int) -> None:
    codes, answer = data
    names = [f"claim_recall@{k}", f"context_precision@{k}", f"context_utilization@{k}"]
    ours = _values(codes, answer, names)
    top = np.array(codes[:k], dtype=np.int64).reshape(-1, len(answer))
    retrieved2answer = (top == S).T  # claims × chunks, as RAGChecker holds it
    response2answer = np.array(answer) == S
    recall, precision = ragchecker_retrieval(retrieved2answer)
    utilization = ragchecker_utilization(retrieved2answer, response2answer)
    if len(top) == 0:  # RAGChecker's 0 for an empty context
        assert ours[0] == 0.0
        assert np.isnan(ours[1]) and np.isnan(ours[2])
        return
    assert ours[0] == pytest.approx(recall)
    assert ours[1] == pytest.approx(precision)
    if retrieved2answer.any():
        assert ours[2] == pytest.approx(utilization)
    else:
        assert np.isnan(ours[2]) and utilization == 0.0
    # more context never recalls fewer claims
    wider = _values(codes, answer, [f"claim_recall@{k + 1}"])
    assert wider[0] >= ours[0]
