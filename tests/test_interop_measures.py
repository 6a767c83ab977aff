"""Hand cases of the measures with ir_measures' definitions (ERR, nERR, Compat, Judged, NumQ,
IPrec), computed from their formulas by hand; the side-by-side checks against ir_measures
are in test_irm_names.py."""

from __future__ import annotations

import math

import pytest

from ragmeter import Qrels, Run, evaluate
from ragmeter.errors import MeasureError


def _value(run: dict[str, float], qrels: dict[str, int], name: str) -> float:
    result = evaluate(Run.from_dict({"q": run}), Qrels.from_dict({"q": qrels}), [name])
    return float(result.run.column(name)[0])


def _ranked(*docs: str) -> dict[str, float]:
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


def test_err_by_hand() -> None:
    # grades [4, 0, 2]: R = 15/16, 0, 3/16 → 15/16 + (1/16)·(3/16)/3
    run = _ranked("a", "b", "c")
    qrels = {"a": 4, "b": 0, "c": 2}
    assert _value(run, qrels, "err@3") == pytest.approx(15 / 16 + (1 / 16) * (3 / 16) / 3)
    assert _value(run, qrels, "err@1") == pytest.approx(15 / 16)
    # max_grade 2: R(2) = 3/4 at rank 3, R(4) would exceed 1 → refused
    with pytest.raises(MeasureError, match="max_grade"):
        _value(run, qrels, "err@3(max_grade=2)")


def test_nerr_by_hand() -> None:
    run = _ranked("x", "a")
    assert _value(run, {"a": 4}, "nerr@2") == pytest.approx((15 / 32) / (15 / 16))
    assert _value(run, {"a": 0}, "nerr@2") == 0.0  # no relevant item: ideal ERR 0


def test_compat_by_hand() -> None:
    # p = 0.5, run [a, b], ideal [b]: RBO = (0 + 0.5·½)/1.5 = 1/6, ideal's own 5/6
    run = _ranked("a", "b")
    assert _value(run, {"b": 1}, "compat(p=0.5,normalize=false)") == pytest.approx(1 / 6)
    assert _value(run, {"b": 1}, "compat(p=0.5)") == pytest.approx(0.2)
    assert _value(_ranked("b", "a"), {"b": 1, "a": 0}, "compat(p=0.5)") == pytest.approx(1.0)
    # equal grades keep the run's order in the ideal: a perfect run is 1 whatever its order
    assert _value(_ranked("c", "b"), {"b": 2, "c": 2}, "compat") == pytest.approx(1.0)


def test_judged_rate_divides_by_what_was_shown() -> None:
    run = _ranked("a", "b", "c")
    qrels = {"a": -1, "b": 0, "z": 1}
    assert _value(run, qrels, "Judged@10") == pytest.approx(2 / 3)  # min(10, 3) shown
    assert _value(run, qrels, "judged@10") == pytest.approx(1 / 10)  # ragmeter's: /k, grade ≥ 0


def test_iprec_rounds_as_trec_eval_9() -> None:
    # R = 2, one relevant at rank 1: x = 0.6 needs ⌊1.2 + 0.9⌋ = 2 relevant (trec_eval 9)
    # and round(1.2) = 1 in trec_eval 10.0
    run = _ranked("a", "b")
    qrels = {"a": 1, "z": 1}
    assert _value(run, qrels, "IPrec@0.6") == 0.0
    assert _value(run, qrels, "iprec_at_recall@0.6") == 1.0


def test_num_queries_sums() -> None:
    result = evaluate(
        Run.from_dict({"1": {"a": 1.0}, "2": {"b": 1.0}}),
        Qrels.from_dict({"1": {"a": 1}, "2": {"a": 1}}),
        ["NumQ"],
    )
    assert result.run.aggregate("NumQ").value == 2


def test_sdcg_by_hand() -> None:
    # max_rel = 2, grades [2, 0, 1] → gains [1, 0, 0.5]
    run = _ranked("a", "b", "c")
    value = _value(run, {"a": 2, "b": 0, "c": 1}, "sdcg@3(max_rel=2)")
    assert value == pytest.approx((1 + 0.5 / 2) / (1 + 1 / math.log2(3) + 1 / 2))


def test_binary_rbp_by_hand() -> None:
    run = _ranked("a", "b", "c")
    qrels = {"a": 1, "b": 3, "c": 2}
    assert _value(run, qrels, "rbp(p=0.5,rel_level=2)") == pytest.approx(0.5 * (0.5 + 0.25))
    with pytest.raises(MeasureError, match="not both"):
        _value(run, qrels, "rbp(gains='1=2',rel_level=2)")


def test_accuracy_by_hand() -> None:
    # [n, r, n, r, n]: 1 and 2 non-relevant items above the two relevant → 1 − 3/(3·2)
    run = _ranked("n1", "r1", "n2", "r2", "n3")
    qrels = {"r1": 1, "r2": 2, "n1": 0}
    assert _value(run, qrels, "Accuracy") == pytest.approx(0.5)
    assert _value(run, qrels, "accuracy@2") == pytest.approx(0.0)  # [n, r]: 1 − 1/1
    # rel=2: [n, n, n, r, n] → 3 of the 4 non-relevant items above the relevant one
    assert _value(run, qrels, "Accuracy(rel=2)") == pytest.approx(1 - 3 / 4)
    # no pair: NA
    assert math.isnan(_value(_ranked("r1", "r2"), qrels, "Accuracy"))
    assert math.isnan(_value(_ranked("n1"), qrels, "Accuracy"))


def test_bpm_and_nerr_by_hand() -> None:
    # gains (max_rel 1) [0, 1, 1]; C/W/L: W_i = reach_i / Σ reach, value Σ W_i g_i
    run = _ranked("a", "b", "c")
    qrels = {"a": 0, "b": 1, "c": 1}
    # BPM T=1, K=10: C = (1, 0, 0…) → reach (1, 1, 0…) → (0 + 1) / 2
    assert _value(run, qrels, "BPM(T=1,max_rel=1)@10") == pytest.approx(0.5)
    # NERR8@10: C_i = 1 − g_i → C = (1, 0, …) → the same 1/2
    assert _value(run, qrels, "NERR8(max_rel=1)@10") == pytest.approx(0.5)
    # NERR9@10: C_1 = 1/2 · 1 → reach (1, 1/2) → (1/2) / (3/2)
    assert _value(run, qrels, "NERR9(max_rel=1)@10") == pytest.approx(1 / 3)
    # NERR10(p=0.5): C_1 = 0.5 → reach (1, 0.5) → 1/3
    assert _value(run, qrels, "NERR10(p=0.5,max_rel=1)") == pytest.approx(1 / 3)
    # NERR11(T=1): C_1 = (2/3)² → reach (1, 4/9) → (4/9) / (13/9)
    assert _value(run, qrels, "NERR11(T=1,max_rel=1)") == pytest.approx(4 / 13)
    # BPM's K: at K = 1 the user reads one item only
    assert _value(run, qrels, "BPM(T=5,max_rel=1)@1") == pytest.approx(0.0)
