"""ir_measures' own asserted test values, reproduced by ragmeter.

:mod:`tests.irm_asserted` holds every value ir_measures' tests assert for a measure (per query
or aggregated), with the qrels and run it was asserted on. ragmeter evaluates each one from
the same TREC files, read by its own readers, and must give the asserted value within the
test's tolerance. :data:`LEFT` lists the values ragmeter does not reproduce, each with its
reason (docs/interop.md states the count and the reasons); a second test runs ir_measures
itself on every case, so the transcription is checked too.
"""

from __future__ import annotations

import functools
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from irm_asserted import ASSERTED, DATA, FILES, QRELS, RUNS, Asserted
from ragmeter import evaluate
from ragmeter.io.judgments import read_judgments
from ragmeter.io.trec import read_trec_qrels, read_trec_run

#: the values ragmeter leaves, by (test, measure): the reason (docs/interop.md repeats it)
LEFT: dict[tuple[str, str], str] = {
    ("test_ranx.py::test_P", "SetP(rel=2)@5"): (
        "a cutoff on a set measure: ir_measures ignores it, ragmeter refuses it"
    ),
    ("test_ranx.py::test_P", "SetR(rel=2)@5"): (
        "a cutoff on a set measure: ir_measures ignores it, ragmeter refuses it"
    ),
}

#: how many of ir_measures' asserted values ragmeter reproduces (docs/interop.md says so)
REPRODUCED = len(ASSERTED) - sum(1 for c in ASSERTED if (c.test, c.measure) in LEFT)


def _close(ours: float, case: Asserted) -> bool:
    expected, tolerance = case.expected, case.tolerance
    if math.isnan(ours):
        return False
    if tolerance == "exact":
        return abs(ours - expected) <= 1e-12
    if tolerance == "places4":
        return round(ours - expected, 4) == 0
    if tolerance == "gdeval":  # gdeval prints 5 decimals
        return abs(ours - expected) <= 5e-6 + 1e-12
    assert isinstance(tolerance, float)
    return abs(ours - expected) <= tolerance


@functools.cache
def _paths(tmp: Path, collection: str, qrels_key: str, run_key: str) -> tuple[Path, Path]:
    if collection in FILES:
        qrels_name, run_name = FILES[collection]
        if DATA is None or not (DATA / qrels_name).is_file():
            pytest.skip(
                f"ir_measures' {qrels_name} and {run_name} are not in this repository: set "
                "RAGMETER_IR_MEASURES_TESTS to the tests/ folder of an ir_measures checkout"
            )
        return DATA / qrels_name, DATA / run_name
    qrels_path, run_path = tmp / f"{qrels_key}.qrels", tmp / f"{run_key}.run"
    qrels_path.write_text(QRELS[qrels_key])
    run_path.write_text(RUNS[run_key])
    return qrels_path, run_path


def _ours(case: Asserted, tmp: Path) -> float:
    qrels_path, run_path = _paths(tmp, case.collection, case.qrels_key, case.run_key)
    run = read_trec_run(run_path)
    if case.provider == "pyndeval":
        judgments = read_judgments(qrels_path, format="diversity")
        result = evaluate(run, None, [case.measure], judgments=judgments).run
    else:
        result = evaluate(run, read_trec_qrels(qrels_path), [case.measure]).run
    if case.query is None:
        value = result.aggregate(case.measure).value
        return math.nan if value is None else value
    row = list(result.query_ids).index(case.query)
    return float(result.column(case.measure)[row])


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("irm")


def _id(case: Asserted) -> str:
    return f"{case.test.split('::')[1]}-{case.measure}-{case.query or 'all'}"


@pytest.mark.parametrize("case", ASSERTED, ids=_id)
def test_asserted_value(case: Asserted, tmp: Path) -> None:
    left = LEFT.get((case.test, case.measure))
    if left is not None:
        pytest.xfail(left)
    ours = _ours(case, tmp)
    assert _close(ours, case), (ours, case.expected)


def test_the_count() -> None:
    assert len(ASSERTED) == 266
    assert REPRODUCED == 264
    assert all(any((c.test, c.measure) == key for c in ASSERTED) for key in LEFT)


def test_left_values_without_the_cutoff(tmp: Path) -> None:
    """The two values left are a set measure given a cutoff: without it ragmeter gives them."""
    for case in ASSERTED:
        if (case.test, case.measure) in LEFT:
            plain = Asserted(**{**case.__dict__, "measure": case.measure.removesuffix("@5")})
            assert _close(_ours(plain, tmp), plain), plain


def _theirs(case: Asserted, tmp: Path) -> float:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")
    qrels_path, run_path = _paths(tmp, case.collection, case.qrels_key, case.run_key)
    if case.provider == "gdeval" and shutil.which("perl") is None:
        pytest.skip("perl is not installed (ir_measures' gdeval provider needs it)")
    provider = ir_measures.providers.registry[case.provider]
    if not provider.is_available():
        pytest.skip(f"{case.provider} is not installed")
    measure = ir_measures.parse_measure(case.measure.replace("dcg='exp-log2'", "dcg='log2'"))
    if case.provider != "gdeval":
        measure = ir_measures.parse_measure(case.measure)
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    if case.provider == "ranx":
        # ranx wants object-typed id columns, which pandas 3 no longer infers
        pandas = pytest.importorskip("pandas")
        with pandas.option_context("future.infer_string", False):
            return _calc(provider, measure, qrels, run, case.query)
    return _calc(provider, measure, qrels, run, case.query)


def _calc(
    provider: Any, measure: Any, qrels: list[Any], run: list[Any], query: str | None
) -> float:
    if query is None:
        return float(provider.calc_aggregate([measure], qrels, run)[measure])
    values = {m.query_id: m.value for m in provider.iter_calc([measure], qrels, run)}
    return float(values[query])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", ASSERTED, ids=_id)
def test_transcribed_as_ir_measures_computes(case: Asserted, tmp: Path) -> None:
    """Each transcribed value is what ir_measures itself gives today."""
    assert _close(_theirs(case, tmp), case)
