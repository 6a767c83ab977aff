"""SPEC §2 worked examples, values computed by hand (see each comment)."""

from __future__ import annotations

import math

import pytest

from ragmeter import Qrels, Run, evaluate


def _one(run: dict[str, list[str]], qrels: dict, measure: str) -> float:
    value = evaluate(Run.from_lists(run), Qrels.from_dict(qrels), [measure]).run.means()
    return value[next(iter(value))]  # type: ignore[return-value]


SEED2_RUN = {"q": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]}
SEED2_REL = {"q": ["doc-3", "doc-9"]}


def test_seed002_hit_recall_rr() -> None:
    assert _one(SEED2_RUN, SEED2_REL, "hit@5") == 1.0
    assert _one(SEED2_RUN, SEED2_REL, "recall@5") == 1.0
    assert _one(SEED2_RUN, SEED2_REL, "mrr") == 0.5


def test_seed002_ndcg() -> None:
    # DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert expected == pytest.approx(0.6509209298, abs=1e-10)
    assert _one(SEED2_RUN, SEED2_REL, "ndcg@5") == pytest.approx(expected, abs=1e-12)


SEED4_RUN = {"q": ["doc6", "doc2", "doc3", "doc4", "doc5"]}
SEED4_REL = {"q": ["doc2", "doc3", "doc7"]}


def test_seed004_precision_recall_f1() -> None:
    assert _one(SEED4_RUN, SEED4_REL, "P@5") == pytest.approx(0.4)
    assert _one(SEED4_RUN, SEED4_REL, "recall@5") == pytest.approx(2 / 3)
    assert _one(SEED4_RUN, SEED4_REL, "f1@5") == pytest.approx(0.5)


def test_seed004_mrr_two_queries() -> None:
    # first relevant at rank 2 (0.5) and rank 3 (1/3): mean 0.4166667
    run = Run.from_lists({"a": ["x", "r1"], "b": ["x", "y", "r2"]})
    qrels = Qrels.from_dict({"a": ["r1"], "b": ["r2"]})
    mean = evaluate(run, qrels, ["mrr"]).run.means()["mrr"]
    assert mean == pytest.approx(0.4166667, abs=1e-7)


def test_seed004_average_precision() -> None:
    run = {"q": ["doc1", "doc2", "doc3", "doc4", "doc5"]}
    rel = {"q": ["doc2", "doc3", "doc5"]}
    # (1/2 + 2/3 + 3/5) / 3
    assert _one(run, rel, "map") == pytest.approx(0.5888889, abs=1e-7)


def test_seed004_dcg_and_ndcg_at_3() -> None:
    run = {"q": ["a", "b", "c"]}
    gains = {"q": {"a": 3, "b": 2, "c": 3}}
    # DCG@3 = 3 + 2/log2(3) + 3/2; IDCG@3 = 3 + 3/log2(3) + 2/2
    assert _one(run, gains, "dcg@3") == pytest.approx(5.7618595071, abs=1e-10)
    assert _one(run, gains, "ndcg@3") == pytest.approx(0.9777813616, abs=1e-10)
