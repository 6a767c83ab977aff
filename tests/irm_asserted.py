"""The values ir_measures' own tests assert, transcribed as data.

Source: ir_measures 0.4.3 (https://github.com/terrierteam/ir_measures, commit dc04a88),
``tests/test_*.py``, Apache License 2.0, Copyright the ir_measures authors (Sean MacAvaney
and contributors). The qrels and runs below are those tests' inline collections; the files
they read (``cwl.qrels``, ``cwl.run``, ``compat.qrels``, ``compat.run``) are not copied into
this repository (data from elsewhere stays outside it): ``$RAGMETER_IR_MEASURES_TESTS`` names
the ``tests/`` folder of an ir_measures checkout that holds them; without it the 61 values
asserted on those files are skipped, and pytest says why.

Every value that a test there asserts for a measure on a qrels and a run — per query or
aggregated over queries — is one :class:`Asserted`, in the order of the tests: 266 values from
test_pytrec_eval (with its judged_only test: each ``measure(judged_only=True)`` equals the
measure on the run without unjudged documents, values worked out by hand below),
test_gdeval, test_cwl_eval, test_compat, test_judged, test_accuracy, test_pyndeval, test_ranx
and test_aggregate. Left out: test_measures (compares providers with each other, asserts no
value), test_runtime (measures defined at run time by the test itself), test_providers
(empty and missing inputs) and test_util (readers).

``tolerance`` is the test's: ``exact`` (``assertEqual``: compared to 1e-12 here), ``places4``
(``assertAlmostEqual(places=4)``: ``round(a - b, 4) == 0``), or an absolute ``delta``; gdeval
prints 5 decimals, so its values are compared to half a unit of the 5th (``gdeval``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: the ``tests/`` folder of an ir_measures checkout (its cwl and compat files), or None
DATA = (
    Path(os.environ["RAGMETER_IR_MEASURES_TESTS"])
    if os.environ.get("RAGMETER_IR_MEASURES_TESTS")
    else None
)


def _lines(*rows: str) -> str:
    return "\n".join(rows) + "\n"


#: inline qrels of ir_measures' tests (``qid iteration doc grade``)
QRELS: dict[str, str] = {
    # test_NumRet, test_NumQ, test_gdeval, test_judged, test_aggregate
    "base": _lines(
        "0 0 D0 0", "0 0 D1 1", "0 0 D2 1", "0 0 D3 2", "0 0 D4 0",
        "1 0 D0 1", "1 0 D3 2", "1 0 D5 2",
    ),
    "numrel": _lines(
        "0 0 D0 0", "0 0 D1 1", "0 0 D2 1", "0 0 D3 2", "0 0 D4 0",
        "1 0 D0 1", "1 0 D3 2", "1 0 D5 0",
    ),
    # test_Success, test_SetP, test_SetR, test_SetAP, test_SetF
    "sets": _lines(
        "0 0 D0 0", "0 0 D1 1", "0 0 D2 2", "0 0 D3 2", "0 0 D4 0",
        "1 0 D0 1", "1 0 D3 2", "1 0 D5 0",
    ),
    "iprec": _lines(
        "0 0 D0 1", "0 0 D1 1", "0 0 D2 2", "0 0 D3 2", "0 0 D4 0",
        "1 0 D0 1", "1 0 D3 2", "1 0 D5 0",
    ),
    # test_infAP, test_nDCG: negative grades
    "negative": _lines(
        "0 0 D0 1", "0 0 D1 -1", "0 0 D2 0", "0 0 D3 2", "0 0 D4 0",
        "1 0 D0 1", "1 0 D3 2", "1 0 D4 -1", "1 0 D5 0",
    ),
    "p": _lines(
        "0 0 D0 -1", "0 0 D1 1", "0 0 D3 2", "0 0 D4 1",
        "1 0 D0 1", "1 0 D3 0", "1 0 D4 -1",
    ),
    "judged_only": _lines("0 0 D0 -1", "0 0 D1 1", "0 0 D3 2", "0 0 D4 1"),
    # test_ranx: one query
    "one": _lines("0 0 D0 0", "0 0 D1 1", "0 0 D2 1", "0 0 D3 2", "0 0 D4 0"),
    "accuracy": _lines(
        "0 0 C0_1 0", "0 0 B0_1 1", "0 0 A0_1 2",
        "1 0 A1_1 2", "1 0 A1_2 2", "1 0 B1_1 1", "1 0 C1_2 0",
        "2 0 B1_1 1",
    ),
    # test_pyndeval: diversity qrels, the second column is the subtopic
    "diversity": _lines(
        "0 0 D0 0", "0 0 D1 1", "0 0 D2 1", "0 1 D2 1", "0 1 D3 2", "0 0 D4 0",
        "1 0 D0 1", "1 0 D3 2", "1 1 D5 2",
    ),
}  # fmt: skip

#: inline runs of ir_measures' tests (``qid Q0 doc rank score tag``)
RUNS: dict[str, str] = {
    "base": _lines(
        "0 0 D0 1 0.8 run", "0 0 D2 2 0.7 run", "0 0 D1 3 0.3 run", "0 0 D3 4 0.4 run",
        "0 0 D4 5 0.1 run",
        "1 0 D1 1 0.8 run", "1 0 D3 2 0.7 run", "1 0 D4 3 0.3 run", "1 0 D2 4 0.4 run",
    ),
    "aggregate": _lines(
        "0 0 D0 1 0.8 run", "0 0 D2 2 0.7 run", "0 0 D1 3 0.3 run", "0 0 D3 4 0.4 run",
        "0 0 D4 5 0.1 run",
        "1 0 D1 1 0.8 run", "1 0 D3 2 0.7 run", "1 0 D4 3 0.3 run", "1 0 D2 4 0.4 run",
        "1 0 D0 5 0.1 run",
    ),
    "sets": _lines(
        "0 0 D0 1 0.8 run", "0 0 D2 2 0.7 run", "0 0 D1 3 0.3 run", "0 0 D3 4 0.4 run",
        "0 0 D4 5 0.1 run",
        "1 0 D1 1 0.8 run", "1 0 D4 2 0.7 run", "1 0 D3 3 0.3 run", "1 0 D2 4 0.4 run",
    ),
    "p": _lines(
        "0 0 D0 1 0.8 run", "0 0 D2 2 0.7 run", "0 0 D1 3 0.3 run", "0 0 D3 4 0.4 run",
        "0 0 D4 5 0.1 run",
        "1 0 D1 1 0.8 run", "1 0 D0 2 0.7 run", "1 0 D3 3 0.3 run", "1 0 D2 4 0.4 run",
    ),
    "one": _lines(
        "0 0 D0 1 0.8 run", "0 0 D2 2 0.7 run", "0 0 D1 3 0.3 run", "0 0 D3 4 0.4 run",
        "0 0 D4 5 0.1 run",
    ),
    "accuracy": _lines(
        "0 0 C0_1 1 0.4 run", "0 0 A0_1 2 0.3 run", "0 0 C0_2 3 0.2 run", "0 0 C0_3 4 0.1 run",
        "1 0 C1_1 1 0.8 run", "1 0 A1_1 2 0.7 run", "1 0 C1_2 3 0.6 run", "1 0 B1_1 4 0.5 run",
        "1 0 C1_3 5 0.4 run",
        "2 0 B1_1 2 0.2 run", "2 0 C1_1 3 0.1 run",
    ),
}  # fmt: skip

#: the collections read from files: name → (qrels file, run file)
FILES: dict[str, tuple[str, str]] = {
    "cwl": ("cwl.qrels", "cwl.run"),
    "compat": ("compat.qrels", "compat.run"),
}


@dataclass(frozen=True)
class Asserted:
    """One value an ir_measures test asserts."""

    test: str  #: ``file::test`` in ir_measures' tests
    provider: str  #: the ir_measures provider the test calls
    measure: str  #: the measure as ir_measures spells it
    collection: str  #: a key of QRELS/RUNS (the run's key after ``/`` when it differs) or FILES
    query: str | None  #: the query, or None for the aggregate over queries
    expected: float
    tolerance: str | float = "exact"

    @property
    def qrels_key(self) -> str:
        return self.collection.split("/")[0]

    @property
    def run_key(self) -> str:
        return self.collection.split("/")[-1]


def _block(
    test: str,
    provider: str,
    collection: str,
    measure: str,
    values: tuple[object, ...],
    queries: tuple[str | None, ...] = ("0", "1", None),
) -> list[Asserted]:
    """One measure's asserted values over ``queries``; a value may be ``(value, tolerance)``."""
    out = []
    for query, value in zip(queries, values, strict=True):
        expected, tolerance = value if isinstance(value, tuple) else (value, "exact")
        out.append(Asserted(test, provider, measure, collection, query, float(expected), tolerance))  # type: ignore[arg-type]
    return out


def _p4(value: float) -> tuple[float, str]:
    return (value, "places4")


PT = "test_pytrec_eval.py::"
_pt = "pytrec_eval"


def _pytrec_eval() -> list[Asserted]:
    cases: list[Asserted] = []
    for measure, values in (
        ("NumRet", (5, 4, 9)),
        ("NumRet(rel=1)", (3, 1, 4)),
        ("NumRet(rel=2)", (1, 1, 2)),
        ("NumRet(rel=3)", (0, 0, 0)),
    ):
        cases += _block(PT + "test_NumRet", _pt, "base", measure, values)
    cases += _block(PT + "test_NumQ", _pt, "base", "NumQ", (1, 1, 2))
    cases += _block(PT + "test_NumRel", _pt, "numrel/base", "NumRel", (3, 2, 5))
    for measure, values in (
        ("Success@2", (1, 0, 0.5)),
        ("Success(rel=2)@2", (1, 0, 0.5)),
        ("Success(rel=3)@2", (0, 0, 0)),
    ):
        cases += _block(PT + "test_Success", _pt, "sets", measure, values)
    for measure, values in (
        ("SetP(rel=1)", (0.6, 0.25, 0.425)),
        ("SetRelP(rel=1)", (1.0, 0.5, 0.75)),
        ("SetP(rel=2)", (0.4, 0.25, 0.325)),
        ("SetRelP(rel=2)", (1.0, 1.0, 1.0)),
        ("SetP(rel=3)", (0, 0, 0)),
    ):
        cases += _block(PT + "test_SetP", _pt, "sets", measure, values)
    for measure, values in (
        ("SetR(rel=1)", (1.0, 0.5, 0.75)),
        ("SetR(rel=2)", (1.0, 1.0, 1.0)),
        ("SetR(rel=3)", (0, 0, 0)),
    ):
        cases += _block(PT + "test_SetR", _pt, "sets", measure, values)
    for measure, values in (
        ("SetAP(rel=1)", (0.6, 0.125, 0.3625)),
        ("SetAP(rel=2)", (0.4, 0.25, 0.325)),
        ("SetAP(rel=3)", (0, 0, 0)),
    ):
        cases += _block(PT + "test_SetAP", _pt, "sets", measure, values)
    for measure, values in (
        ("SetF(rel=1)", (_p4(0.75), _p4(0.33333), _p4(0.5417))),
        ("SetF(rel=1,beta=0.5)", (_p4(0.6923), 0.3, _p4(0.49615))),
        ("SetF(rel=1,beta=2.0)", (_p4(0.81818), 0.375, _p4(0.59659))),
        ("SetF(rel=3)", (0, 0, 0)),
    ):
        cases += _block(PT + "test_SetF", _pt, "sets", measure, values)
    # the same four again, evaluated together ("multiple invocations")
    for measure, value in (
        ("SetF(rel=1)", _p4(0.5417)),
        ("SetF(rel=1,beta=0.5)", _p4(0.49615)),
        ("SetF(rel=1,beta=2.0)", _p4(0.59659)),
        ("SetF(rel=3)", 0),
    ):
        cases += _block(PT + "test_SetF", _pt, "sets", measure, (value,), (None,))
    iprec_rel2 = (_p4(0.6666666), 0.25, _p4(0.4583))
    for measure, values in (
        ("IPrec@0.25", (1.0, 0.25, 0.625)),
        ("IPrec@0.5", (1.0, 0.25, 0.625)),
        ("IPrec@0.75", (1.0, 0, 0.5)),
        ("IPrec(rel=2)@0.1", iprec_rel2),
        ("IPrec(rel=2)@0.25", iprec_rel2),
        ("IPrec(rel=2)@0.5", iprec_rel2),
        ("IPrec(rel=2)@0.75", iprec_rel2),
    ):
        cases += _block(PT + "test_IPrec", _pt, "iprec/sets", measure, values)
    for measure, values in (
        ("AP", (_p4(0.8333), 0.125, _p4(0.47916666666666663))),
        ("infAP", (_p4(0.8333), 0.1875, _p4(0.510416))),
        ("AP(rel=2)", (_p4(0.33333), _p4(0.25), _p4(0.2917))),
        ("infAP(rel=2)", (_p4(0.33333), _p4(0.375), _p4(0.3542))),
    ):
        cases += _block(PT + "test_infAP", _pt, "negative/sets", measure, values)
    for measure, values in (
        ("nDCG", (_p4(0.76018), _p4(0.32739))),
        ("nDCG@3", (_p4(0.76018), _p4(0.0))),
        ("nDCG(gains={0:1,1:4})", (_p4(0.97177), _p4(0.14949))),
    ):
        cases += _block(PT + "test_nDCG", _pt, "negative/sets", measure, values, ("0", "1"))
    for measure, values in (
        ("P@4", (_p4(0.5), _p4(0.25))),
        ("P(judged_only=True)@4", (_p4(0.75), _p4(0.25))),
    ):
        cases += _block(PT + "test_P", _pt, "p", measure, values, ("0", "1"))
    # test_judged_only asserts measure(judged_only=True) = the measure on the run without its
    # unjudged documents (D2) and its negatively judged one (D0, which trec_eval's -J drops
    # too): D3 (2), D1 (1), D4 (1), all relevant with R = 3 — every value by hand
    for measure, value in (
        ("P(judged_only=True)@4", 3 / 4),
        ("RR(judged_only=True)", 1.0),
        ("Rprec(judged_only=True)", 1.0),
        ("AP(judged_only=True)", 1.0),
        ("AP(judged_only=True)@4", 1.0),
        ("nDCG(judged_only=True)", 1.0),
        ("nDCG(judged_only=True)@4", 1.0),
        ("R(judged_only=True)@2", 2 / 3),
        ("SetP(judged_only=True)", 1.0),
        ("SetAP(judged_only=True)", 1.0),
        ("SetF(judged_only=True)", 1.0),
        ("Success(judged_only=True)@2", 1.0),
        ("IPrec(judged_only=True)@0.5", 1.0),
    ):
        cases += _block(
            PT + "test_judged_only", _pt, "judged_only/one", measure, (_p4(value),), ("0",)
        )
    return cases


def _gdeval() -> list[Asserted]:
    """gdeval computes nDCG with exponential gains (2^g − 1) whatever ``dcg`` says."""
    t, g = "test_gdeval.py::", "gdeval"
    ndcg20, ndcg2 = "nDCG(dcg='exp-log2')@20", "nDCG(dcg='exp-log2')@2"
    values = (0.6201, 0.35099, 0.485545, 0.485545)
    cases = _block(t + "test_nDCG", g, "base", ndcg20, values, ("0", "1", None, None))
    cases += _block(t + "test_nDCG", g, "base", ndcg2, (0.17377, 0.38685, 0.28031))
    for _ in range(2):  # one evaluator, asked twice
        cases += _block(t + "test_nDCG", g, "base", ndcg20, (0.485545,), (None,))
        cases += _block(t + "test_nDCG", g, "base", ndcg2, (0.28031,), (None,))
    cases += _block(t + "test_ERR", g, "base", "ERR@20", (0.10175, 0.09375, 0.09775))
    cases += _block(t + "test_ERR", g, "base", "ERR@2", (0.03125, 0.09375, 0.0625))
    return [
        Asserted(c.test, c.provider, c.measure, c.collection, c.query, c.expected, "gdeval")
        for c in cases
    ]


def _cwl_eval() -> list[Asserted]:
    """test_cwl_eval: "based on a manual execution of cwl-eval", to 1e-4."""
    table = (
        ("AP", (0.7087, 0.7438, 0.3068)),
        ("BPM(T=1.0,max_rel=1)@20", (1.0000, 1.0000, 0.1667)),
        ("BPM(T=2.0,max_rel=1)@10", (0.6667, 1.0000, 0.2857)),
        ("INSQ(T=1.0,max_rel=1)", (0.5872, 0.6629, 0.0880)),
        ("INSQ(T=2.0,max_rel=1)", (0.4513, 0.5068, 0.1292)),
        ("INST(T=1.0,max_rel=1)", (0.7934, 0.9226, 0.0888)),
        ("INST(T=2.0,max_rel=1)", (0.5994, 0.6924, 0.1397)),
        ("SDCG(max_rel=1)@10", (0.5645, 0.6531, 0.2848)),
        ("NERR8(max_rel=1)@10", (1.0000, 1.0000, 0.1667)),
        ("NERR9(max_rel=1)@10", (1.0000, 1.0000, 0.0680)),
        ("NERR10(p=0.8,max_rel=1)", (1.0000, 1.0000, 0.0888)),
        ("NERR11(T=2.0,max_rel=1)", (1.0000, 1.0000, 0.0691)),
        ("P@1", (1.0000, 1.0000, 0.0000)),
        ("P@10", (0.5000, 0.6000, 0.4000)),
        ("P@20", (0.2500, 0.3000, 0.2000)),
        ("P@5", (0.6000, 0.6000, 0.0000)),
        ("RBP(p=0.9,rel=1)", (0.3501, 0.3996, 0.1988)),
        ("RR", (1.0000, 1.0000, 0.1667)),
    )
    cases: list[Asserted] = []
    for measure, values in table:
        queries: tuple[str | None, ...] = ("T1", "T2", "T3")
        cases += _block(
            "test_cwl_eval.py::test_measures", "cwl_eval", "cwl", measure,
            tuple((v, 1e-4) for v in values), queries,
        )  # fmt: skip
    return cases


def _compat() -> list[Asserted]:
    """test_compat: "based on a manual execution of github.com/claclark/Compatibility"."""
    t, queries = "test_compat.py::test_measures", ("31_1", "31_2")
    cases: list[Asserted] = []
    for measure, values in (
        ("Compat(p=0.95)", (0.51779512165509, 0.018400100569017922)),
        ("Compat(p=0.9)", (0.3761334522946854, 0.004344079941789211)),
        ("Compat(p=0.8)", (0.16723008845234535, 0.00022806427320561776)),
    ):
        cases += _block(t, "compat", "compat", measure, tuple((v, 1e-9) for v in values), queries)
    cases += _block(t, "compat", "compat", "Compat(p=0.95)", ((0.268097611, 1e-9),), (None,))
    return cases


def _judged() -> list[Asserted]:
    t = "test_judged.py::test_judged"
    cases: list[Asserted] = []
    for measure, values in (
        ("Judged", (1.0, 1 / 4)),
        ("Judged(cutoff=1000)", (1.0, 1 / 4)),
        ("Judged(cutoff=10)", (1.0, 1 / 4)),
        ("Judged(cutoff=3)", (1.0, 1 / 3)),
        ("Judged(cutoff=1)", (1.0, 0.0)),
    ):
        values_ = tuple((v, 1e-4) for v in values)
        cases += _block(t, "judged", "base", measure, values_, ("0", "1"))
    return cases


def _accuracy() -> list[Asserted]:
    t, a = "test_accuracy.py::test_accuracy", "accuracy"
    rel1 = (2 / 3, 0.5 * (2 / 3 + 1 / 3), 1.0)
    cases = _block(
        t, a, "accuracy", "Accuracy(rel=1)", tuple((v, 1e-9) for v in rel1), ("0", "1", "2")
    )
    cases += _block(t, a, "accuracy", "Accuracy(rel=2)", ((2 / 3, 1e-9), (0.75, 1e-9)), ("0", "1"))
    cases += _block(t, a, "accuracy", "Accuracy(rel=1)", ((sum(rel1) / 3, 1e-9),), (None,))
    return cases


def _pyndeval() -> list[Asserted]:
    return _block(
        "test_pyndeval.py::test_ERR_IA", "pyndeval", "diversity/base", "ERR_IA@20",
        (_p4(0.4659), _p4(0.1803), _p4(0.3231)),
    )  # fmt: skip


def _ranx() -> list[Asserted]:
    table = (
        ("P@5", 0.6), ("P(rel=2)@5", 0.2), ("SetP", 0.6), ("SetP(rel=2)@5", 0.2),
        ("R@5", 1.0), ("R(rel=2)@5", 1.0), ("R@2", 1 / 3), ("R(rel=2)@2", 0.0),
        ("SetR", 1.0), ("SetR(rel=2)@5", 1.0),
        ("RR", 0.5), ("RR(rel=2)", 1 / 3), ("RR@10", 0.5), ("RR(rel=2)@10", 1 / 3),
        ("RR@2", 0.5), ("RR(rel=2)@2", 0.0),
        ("AP", 0.6388888888888888), ("AP(rel=2)", 1 / 3), ("AP@10", 0.6388888888888888),
        ("AP(rel=2)@10", 1 / 3), ("AP@2", 1 / 6), ("AP(rel=2)@2", 0.0),
        ("Success@10", 1.0), ("Success(rel=2)@10", 1.0), ("Success@2", 1.0),
        ("Success(rel=2)@2", 0.0),
        ("NumRet(rel=1)", 3.0),
        ("nDCG", 0.6584645692843067), ("nDCG@5", 0.6584645692843067),
        ("nDCG@2", 0.23981246656813146),
        ("nDCG(dcg='exp-log2')", 0.6201040599710453),
        ("nDCG(dcg='exp-log2')@5", 0.6201040599710453),
        ("nDCG(dcg='exp-log2')@2", 0.17376534287144002),
        ("Rprec", 2 / 3), ("Rprec(rel=2)", 0.0),
    )  # fmt: skip
    cases: list[Asserted] = []
    for measure, value in table:
        cases += _block("test_ranx.py::test_P", "ranx", "one", measure, (value,), ("0",))
    return cases


def _aggregate() -> list[Asserted]:
    # measure.calc_aggregate and measure.calc, with the default provider
    return _block(
        "test_aggregate.py::test_P", "pytrec_eval", "base/aggregate", "P@5",
        (0.5, 0.5), (None, None),
    )  # fmt: skip


ASSERTED: tuple[Asserted, ...] = (
    *_pytrec_eval(),
    *_gdeval(),
    *_cwl_eval(),
    *_compat(),
    *_judged(),
    *_accuracy(),
    *_pyndeval(),
    *_ranx(),
    *_aggregate(),
)
