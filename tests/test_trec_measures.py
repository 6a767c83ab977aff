"""Hand-computed values of the trec_eval measures added for trec_eval 10.0 parity.

One query, run ``[d1, d2, d3, d4, d5]``; qrels ``d1:1, d2:0, d3:2, d5:-1`` (pooled, unjudged),
``d6:1, d7:0``; d4 is not in the pool. Relevance by rank: ``1 0 2 - .``; relevant (grade ≥ 1)
``{d1, d3, d6}`` so R = 3, judged non-relevant ``{d2, d7}`` so N = 2, ret = 5, A = 2.
Every expected value below is derived by hand in its comment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter import Qrels, Run
from ragmeter.core.align import align
from ragmeter.errors import MeasureError
from ragmeter.measures import REGISTRY, parse_measure
from ragmeter.metrics.gains import parse_gains
from ragmeter.metrics.trec import expand, trec_label
from ragmeter.metrics.trec_measures import relstring_text

RUN = Run.from_lists({"q1": ["d1", "d2", "d3", "d4", "d5"]})
QRELS = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2, "d5": -1, "d6": 1, "d7": 0}})
LOG2_3 = math.log2(3)
IDCG = 2 + 1 / LOG2_3 + 1 / 2  # ideal gains [2, 1, 1]


def value(name: str, run: Run = RUN, qrels: Qrels = QRELS, **kw: object) -> float:
    al = align(run, qrels, **kw)  # type: ignore[arg-type]
    m = parse_measure(name)
    return float(m.spec.compute(al, m)[0])


CASES = [
    # infAP: rank 1 → 1; rank 3 (j = 2): s = 1, n = 1, u = 0 →
    # 1/3 + (2/3)·(2/2)·((1+ε)/(2+2ε)) = 1/3 + 1/3; (1 + 2/3) / 3 = 5/9
    ("infAP", 5 / 9),
    # Rprec_mult: c = ⌊x·3 + 0.9⌋; x=1 → c=3 → P@3 = 2/3; x=0.2 → c=1 → 1; x=2 → c=6 → 2/6
    ("Rprec_mult@1.0", 2 / 3),
    ("Rprec_mult@0.2", 1.0),
    ("Rprec_mult@2.0", 1 / 3),
    # utility 1·A − 1·(ret − A) = 2 − 3; with a=2,b=-1,c=-1: 4 − 3 − 1
    ("utility", -1.0),
    ("utility(a=2,b=-1,c=-1)", 0.0),
    # iprec at x: c = round(3x): c ≤ 1 (x ≤ .4, 5 levels) → 1; c = 2 (x = .5–.8, 4 levels) →
    # max P at ranks ≥ 3 = 2/3; c = 3 (x = .9, 1) → 0; mean = (5 + 8/3) / 11
    ("avg_iprec", (5 + 8 / 3) / 11),
    ("avg_iprec(levels='0.5,1.0')", (2 / 3 + 0) / 2),
    # binG: rank 1, 0 non-relevant above → 1/log2(2); rank 3, 1 above → 1/log2(3); / R
    ("binG", (1 + 1 / LOG2_3) / 3),
    # G: ideal [2,1,1] → costs max(I,1) = 2,1,1 then 1 → C = 2,3,4,5,6; gains 1,0,2,0,0 →
    # S = 1,1,3,3,3; G = (1/log2(2+2−1) + 2/log2(2+4−3)) / (2+1+1)
    ("G", (1 / LOG2_3 + 2 / LOG2_3) / 4),
    # ndcg: DCG = 1/log2(2) + 2/log2(4) = 2
    ("ndcg", 2 / IDCG),
    # gains 1=3,2=9: DCG = 3 + 9/2; ideal [9,3,3] → 9 + 3/log2(3) + 3/2
    ("ndcg(gains='1=3,2=9')", 7.5 / (9 + 3 / LOG2_3 + 1.5)),
    # gain −1 for grade 0: DCG = 1 − 1/log2(3) + 1; the ideal keeps the positive gains
    ("ndcg(gains='0=-1')", (2 - 1 / LOG2_3) / IDCG),
    ("idcg", IDCG),
    ("dcg(gains='0=-1')", 2 - 1 / LOG2_3),
    # ndcg_rel: rank 1: DCG@1/IDCG@1 = 1/2; rank 3: 2/IDCG; d6 missed: 2/IDCG; / 3
    ("ndcg_rel", (0.5 + 2 * (2 / IDCG)) / 3),
    # Rndcg: boundaries b=1 (ideal gain 2 → 1): 1/2; b = N⁺ = 3: 2/IDCG;
    # ret = 5 > N⁺ + 1 → one more point DCG@5/IDCG = 2/IDCG; mean of the three
    ("Rndcg", (0.5 + 2 * (2 / IDCG)) / 3),
    # relative_P@2 = 1/min(2,3); relative_P@5 = 2/min(5,3)
    ("relative_P@2", 0.5),
    ("relative_P@5", 2 / 3),
    # set measures: P = 2/5, recall = 2/3, relative = 2/min(5,3), map = 4/(5·3),
    # F1 = 2A/(ret+R) = 4/8; F with x = 2: 3·P·R/(2P + R) = 3·0.4·(2/3)/(0.8 + 2/3)
    ("set_P", 0.4),
    ("set_recall", 2 / 3),
    ("set_relative_P", 2 / 3),
    ("set_map", 4 / 15),
    ("set_F", 0.5),
    ("set_F(beta=2)", 3 * 0.4 * (2 / 3) / (0.8 + 2 / 3)),
    # judged non-relevant retrieved: d2
    ("num_nonrel_judged_ret", 1.0),
    ("num_unjudged_ret", 2.0),
    # unj: d4 (not pooled) and d5 (pooled, unjudged) at ranks 4, 5
    ("unj@5", 2 / 5),
    ("unj@2", 0.0),
    ("unj@10", 2 / 10),
    # rbp: levels 0..2 give gains 0..2 → max 2 > 1 → rescaled g/2: 0.5 at rank 1, 1 at rank 3
    # → 0.1·(0.5 + 1·0.9²)
    ("rbp", 0.1 * (0.5 + 0.81)),
    # rbp_resid: unjudged at ranks 4, 5 → 0.9^5 + 0.1·(0.9³ + 0.9⁴)
    ("rbp_resid", 0.9**5 + 0.1 * (0.9**3 + 0.9**4)),
    # bpref: rank 1 → 1; rank 3 → 1 − min(1,3)/min(2,3) = 1/2; (1.5)/3
    ("gm_bpref", 0.5),
]


@pytest.mark.parametrize(("name", "expected"), CASES)
def test_hand_computed(name: str, expected: float) -> None:
    assert value(name) == pytest.approx(expected, abs=1e-12)


def test_relstring_text() -> None:
    al = align(RUN, QRELS)
    assert relstring_text(al, 10) == ["102-."]
    assert relstring_text(al, 2) == ["10"]
    assert np.isnan(value("relstring"))


def test_empty_ranking_scores_zero() -> None:
    """A judged query absent from the run scores 0 (trec_eval -c), except where the
    definition says otherwise: utility's c·R term (R = 3) and the ideal DCG."""
    run = Run.from_lists({"other": ["d1"]})
    special = {"utility(a=2,b=-1,c=-1)": -3.0, "idcg": IDCG}
    for name, _ in CASES:
        assert value(name, run=run) == pytest.approx(special.get(name, 0.0)), name


def test_infap_counts_pooled_unjudged() -> None:
    """Ranking [u, r] with u pooled-but-unjudged: j = 1, s = 0, n = 0, u = 1 →
    1/2 + (1/2)·(1/1)·(ε/(2ε)) = 1/2 + 1/4; R = 1."""
    run = Run.from_lists({"q": ["u", "r"]})
    qrels = Qrels.from_dict({"q": {"u": -1, "r": 1}})
    assert value("infAP", run=run, qrels=qrels) == pytest.approx(0.75)


def test_rel_level_applies() -> None:
    # -l 2: only d3 relevant (R = 1): set_P = 1/5, binG at rank 3 with 2 non-rel above
    assert value("set_P", rel_level=2) == pytest.approx(0.2)
    assert value("binG", rel_level=2) == pytest.approx(1 / math.log2(4))


def test_gmean_aggregate_of_gm_bpref() -> None:
    """bpref 0.5 and 0 → exp((log 0.5 + log 1e-5)/2)."""
    from ragmeter import evaluate

    run = Run.from_lists({"q1": ["d1", "d2", "d3", "d4", "d5"], "q2": ["x"]})
    qrels = Qrels.from_dict({**QRELS.to_dict(), "q2": {"y": 1}})
    ev = evaluate(run, qrels, ["gm_bpref"])
    got = ev.run.aggregate("gm_bpref").mean
    assert got == pytest.approx(math.sqrt(0.5 * 1e-5))


def test_trec_names_expand() -> None:
    assert [lbl for lbl, _ in expand("Rprec_mult", "5.0,0.2,0.35")] == [
        "Rprec_mult_0.20",
        "Rprec_mult_0.35",
        "Rprec_mult_5.00",
    ]
    assert [lbl for lbl, _ in expand("ndcg_cut", "10,20,23.4")][-1] == "ndcg_cut_23"
    assert expand("utility", "2,-1,0,0")[0][0] == "utility_2,-1,0,0"
    assert expand("11pt_avg", ".25,.5,.75")[0][0] == "11pt_avg_.25,.5,.75"
    assert expand("relstring", "20")[0][1].param("length") == 20
    ((label, m),) = expand("ndcg", "1=3,2=9,4=4.5")
    assert label == "ndcg_1=3,2=9,4=4.5"
    assert parse_gains(m.param("gains")) == ((1, 3.0), (2, 9.0), (4, 4.5))
    assert [str(m) for m in REGISTRY.parse_trec("unj")] == [
        "unjudged@5",
        "unjudged@10",
        "unjudged@20",
    ]
    assert trec_label(parse_measure("relative_P@5")) == "relative_P_5"
    assert trec_label(parse_measure("infAP")) == "infAP"


@pytest.mark.parametrize("bad", ["P.0,5", "P.5,5", "utility.1,2", "ndcg.1=3=2", "Rprec_mult.abc"])
def test_bad_trec_parameters(bad: str) -> None:
    with pytest.raises(MeasureError):
        REGISTRY.parse_trec(bad)


def test_rbp_persistence_and_gain_map() -> None:
    # rbp.p=0.5,1=1,2=1: gains within [0, 1] → no rescaling: 0.5·(1 + 1·0.25)
    ((_, m),) = expand("rbp", "p=0.5,1=1,2=1")
    al = align(RUN, QRELS)
    assert float(m.spec.compute(al, m)[0]) == pytest.approx(0.5 * 1.25)
