"""ir_measures' measure names give ir_measures' numbers.

Twenty strings people commonly pass to ir_measures (:data:`COMMON`) — plus the rest of the
names ragmeter reads (:data:`MORE`) — are evaluated by ragmeter and by
``ir_measures.calc_aggregate`` side by side on random qrels (grades −1…3) and runs with tied
scores. Where ir_measures computes a measure with pytrec_eval, both see the tied run as it is
(both order ties as trec_eval does: doc id descending). Its other providers (compat, judged,
msmarco, gdeval) order ties otherwise (doc id ascending for some), so they get the same
ranking with the ties resolved into distinct scores — the one convention where ragmeter
keeps trec_eval's.
"""

from __future__ import annotations

import json
import random

import pytest

from ragmeter import Qrels, Run, evaluate
from ragmeter.errors import MeasureError
from ragmeter.measures import parse_measure

ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")

#: the 20 common ir_measures strings of the issue that asked for them
COMMON = (
    "P@10",
    "P(rel=2)@10",
    "R@50",
    "R@1000",
    "AP",
    "AP(rel=2)",
    "AP@100",
    "RR",
    "RR@10",
    "nDCG@10",
    "nDCG@20",
    "nDCG",
    "Rprec",
    "Bpref",
    "Success@10",
    "Judged@10",
    "SetP",
    "NumRel",
    "IPrec@0.2",
    "Compat(p=0.8)",
)

#: the other spellings ragmeter reads, checked the same way
MORE = (
    "NumRet",
    "NumRelRet",
    "NumQ",
    "SetR",
    "SetF",
    "SetF(beta=0.5)",
    "SetAP",
    "SetP(relative=True)",
    "infAP",
    "P(rel=2)@5",
    "Success(rel=2)@3",
    "RR(rel=2)",
    "IPrec@0.0",
    "IPrec@0.7",
    "IPrec@1.0",
    "Compat",
    "Compat(p=0.5,normalize=False)",
    "Judged@3",
    "nDCG(gains={0:0,1:1,2:5,3:10})@10",
    "Rprec(rel=2)",
    # judged_only=True: trec_eval's -J inside pytrec_eval
    "P(judged_only=True)@5",
    "R(judged_only=True)@10",
    "AP(judged_only=True)",
    "AP(rel=2,judged_only=True)@5",
    "RR(judged_only=True)",
    "Rprec(judged_only=True)",
    "nDCG(judged_only=True)@10",
    "nDCG(judged_only=True)",
    "Success(judged_only=True)@3",
    "SetP(judged_only=True)",
    "SetAP(judged_only=True)",
    "SetF(judged_only=True)",
    "IPrec(judged_only=True)@0.5",
)

DOCS = tuple(f"d{i}" for i in range(14))
SCORES = (0.0, 0.5, 1.0, 1.0, 2.0, 2.5, 3.25)


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels and run: every query judged and ranked, with ties and unjudged docs."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(1, 9):
        judged = rng.sample(DOCS, rng.randint(2, 10))
        qrels[str(q)] = {d: rng.choice((-1, 0, 0, 1, 1, 2, 3)) for d in judged}
        ranked = rng.sample(DOCS, rng.randint(1, len(DOCS)))
        run[str(q)] = {d: rng.choice(SCORES) + rng.choice((0.0, 0.0, 0.125)) for d in ranked}
    return qrels, run


def _untied(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The same rankings (trec_eval's order: score descending, doc id descending) with
    distinct scores."""
    out = {}
    for q, docs in run.items():
        order = sorted(docs, key=lambda d: d.encode(), reverse=True)
        order.sort(key=lambda d: -docs[d])
        out[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


def _theirs(name: str, qrels: dict, run: dict) -> float:
    measure = ir_measures.parse_measure(name)
    pytrec = ir_measures.providers.registry["pytrec_eval"]
    if pytrec.supports(measure):
        return float(ir_measures.pytrec_eval.calc_aggregate([measure], qrels, run)[measure])
    return float(ir_measures.calc_aggregate([measure], qrels, _untied(run))[measure])


def _ours(name: str, qrels: dict, run: dict) -> float:
    result = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), [name])
    value = result.run.aggregate(name).value
    assert value is not None
    return value


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", COMMON + MORE)
def test_ir_measures_value(name: str, seed: int) -> None:
    qrels, run = _collection(seed)
    if name.startswith("IPrec(judged_only=True)"):
        qrels, run = _iprec_defined(qrels, run)
    assert _ours(name, qrels, run) == pytest.approx(_theirs(name, qrels, run), abs=1e-12)


def _iprec_defined(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The queries where pytrec_eval's IPrec(judged_only=True) is a number: trec_eval 9
    divides 0 by 0 where no relevant item exists and no judged one was retrieved (NaN, which
    ragmeter scores 0, as every measure with R = 0; test_iprec_judged_only_nan below)."""
    keep = [
        q
        for q in qrels
        if any(g > 0 for g in qrels[q].values()) or _judged_retrieved(qrels, run, q)
    ]
    return {q: qrels[q] for q in keep}, {q: run[q] for q in keep}


def _judged_retrieved(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], q: str
) -> bool:
    return any(qrels[q].get(d, -1) >= 0 for d in run[q])


def test_iprec_judged_only_nan() -> None:
    """Where pytrec_eval gives NaN, no relevant item exists and nothing judged was
    retrieved: ragmeter's 0 (R = 0 → 0)."""
    qrels = {"q": {"a": -1, "b": -1}}
    run = {"q": {"x": 2.0, "a": 1.0}}
    measure = ir_measures.parse_measure("IPrec(judged_only=True)@0.5")
    theirs = next(iter(ir_measures.pytrec_eval.iter_calc([measure], qrels, run))).value
    assert theirs != theirs  # NaN
    assert _ours("IPrec(judged_only=True)@0.5", qrels, run) == 0.0


def test_common_table_is_twenty_names_all_new_or_ours() -> None:
    assert len(set(COMMON)) == 20
    for name in COMMON:
        assert ir_measures.parse_measure(name) is not None
        parse_measure(name)  # every one is read


def test_err_and_exp_ndcg_against_gdeval() -> None:
    """ERR@k and nDCG(dcg='exp-log2')@k come from gdeval (perl), which prints 5 decimals and
    skips queries without a relevant document."""
    import shutil

    if shutil.which("perl") is None:
        pytest.skip("perl is not installed (ir_measures' gdeval provider needs it)")
    for seed in range(4):
        qrels, run = _collection(seed)
        qrels = {q: docs for q, docs in qrels.items() if any(g > 0 for g in docs.values())}
        run = {q: run[q] for q in qrels}
        for name in ("ERR@10", "ERR@3", "nDCG(dcg='exp-log2')@10"):
            ours = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), [name]).run
            measure = ir_measures.parse_measure(name)
            theirs = {
                m.query_id: m.value
                for m in ir_measures.gdeval.iter_calc([measure], qrels, _untied(run))
            }
            for q, value in zip(ours.query_ids, ours.column(name), strict=True):
                assert value == pytest.approx(theirs[q], abs=6e-6), (name, q)


def test_spelling_is_kept_and_mapped_in_json() -> None:
    qrels, run = _collection(0)
    result = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), ["P(rel=2)@10", "ndcg@10"])
    assert [str(m) for m in result.measures] == ["P(rel=2)@10", "ndcg@10"]
    payload = result.to_dict()
    assert set(payload["runs"][0]["metrics"]) == {"P(rel=2)@10", "ndcg@10"}
    assert payload["measure_names"] == {"P(rel=2)@10": "precision@10(rel_level=2)"}
    json.dumps(payload)
    # the canonical name and the spelling denote one measure: one column, one number
    assert result.run.column("precision@10(rel_level=2)") is not None
    assert parse_measure("P(rel=2)@10") == parse_measure("precision@10(rel_level=2)")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Rprec@10", "takes no parameter cutoff"),
        ("P(foo=1)@10", "takes no parameter foo"),
        ("ERR_IA(judged_only=True)@5", "judged_only=True is not supported"),
        ("IPrec(rel=2)", "needs a recall level"),
        ("nDCG(dcg='log10')@5", "dcg must be"),
        ("P(rel=x)@10", "not a literal"),
    ],
)
def test_bad_ir_measures_names_are_refused(name: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        parse_measure(name)


#: cwl_eval's measures (RBP with binary gains, SDCG, INST, INSQ): ragmeter's families
#: ``rbp(rel_level=…)``, ``sdcg``, ``inst``, ``insq``
CWL = (
    "RBP(rel=1)",
    "RBP(rel=2,p=0.9)",
    "RBP(rel=1,p=0.5)",
    "SDCG(max_rel=3)@10",
    "SDCG(max_rel=3)@3",
    "SDCG(min_rel=1,max_rel=2)@5",
    "INST(max_rel=3)",
    "INST(T=2,max_rel=3)",
    "INSQ(max_rel=3)",
    "INSQ(T=3,max_rel=2)",
    "BPM(T=1,max_rel=1)@10",
    "BPM(T=2,max_rel=3)@5",
    "BPM(T=0.5,min_rel=1,max_rel=2)@20",
    "NERR8(max_rel=3)@10",
    "NERR8(max_rel=1)@3",
    "NERR9(max_rel=3)@10",
    "NERR9(min_rel=1,max_rel=2)@5",
    "NERR10(max_rel=3)",
    "NERR10(p=0.5,max_rel=2)",
    "NERR11(max_rel=3)",
    "NERR11(T=2,max_rel=1)",
)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", CWL)
def test_cwl_eval_value(name: str, seed: int) -> None:
    pytest.importorskip("cwl", reason="cwl-eval (dev extra) is needed")
    qrels, run = _collection(seed)
    measure = ir_measures.parse_measure(name)
    theirs = ir_measures.cwl_eval.calc_aggregate([measure], qrels, _untied(run))[measure]
    assert _ours(name, qrels, run) == pytest.approx(float(theirs), abs=1e-12)


@pytest.mark.parametrize(
    ("name", "shown", "canonical"),
    [
        ("nDCG@10", "ndcg@10", "ndcg@10"),  # ragmeter's own alias: its name
        ("NDCG@10", "ndcg@10", "ndcg@10"),
        ("P@10", "precision@10", "precision@10"),
        ("P.5", "precision@5", "precision@5"),  # trec_eval's spelling, not ir_measures' P
        ("AP", "AP", "map"),  # ir_measures' spelling of a ragmeter measure: kept
        ("ERR@10", "ERR@10", "err@10"),
        ("IPrec@0.2", "IPrec@0.2", "iprec@0.20"),
        ("Judged@10", "Judged@10", "judged_rate@10"),
        ("RBP", "RBP", "rbp(p=0.8)"),
    ],
)
def test_which_spelling_is_shown(name: str, shown: str, canonical: str) -> None:
    m = parse_measure(name)
    assert (str(m), m.canonical) == (shown, canonical)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", ["Accuracy", "Accuracy(rel=2)", "Accuracy@5", "Accuracy(rel=2)@3"])
def test_accuracy_against_ir_measures(name: str, seed: int) -> None:
    """ir_measures' accuracy provider divides by zero where every retrieved item is relevant,
    so each ranking here ends with an unjudged item; its per-query values are compared
    (ragmeter's NA where it reports none) and so is the mean."""
    qrels, run = _collection(seed)
    run = {q: {**docs, "zz": -1.0} for q, docs in run.items()}
    untied = _untied(run)
    measure = ir_measures.parse_measure(name)
    theirs = {m.query_id: m.value for m in ir_measures.accuracy.iter_calc([measure], qrels, untied)}
    result = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), [name]).run
    for q, value in zip(result.query_ids, result.column(name), strict=True):
        if q in theirs:
            assert value == pytest.approx(theirs[q], abs=1e-12), q
        else:
            assert value != value, q  # NA
    aggregate = evaluate(Run.from_dict(run), Qrels.from_dict(qrels), [name]).run.aggregate(name)
    if not theirs:  # no query with a pair: ir_measures' mean is NaN, ragmeter's NA
        assert aggregate.value is None
        return
    mean = ir_measures.accuracy.calc_aggregate([measure], qrels, untied)[measure]
    assert aggregate.value == pytest.approx(float(mean), abs=1e-12)
