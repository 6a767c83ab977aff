"""ragmeter as an ir_measures provider: its measures in ``ir_measures.calc_aggregate``.

The plumbing is checked against an independent provider where one exists (ragmeter's
``precision`` and ``ndcg`` through this provider against ir_measures' own ``P`` and ``nDCG``
from pytrec_eval) and against ragmeter's own evaluation for the set-based measures.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from ragmeter import Qrels, Run, evaluate
from ragmeter.io.readers import read_run

ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")
irm_provider = pytest.importorskip("ragmeter.interop.irm_provider")


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(15)]
    qrels = {
        str(q): {d: rng.choice((0, 0, 1, 2, 3)) for d in rng.sample(docs, rng.randint(3, 12))}
        for q in range(1, 7)
    }
    run = {
        str(q): {d: float(rng.randint(0, 9)) for d in rng.sample(docs, rng.randint(1, 15))}
        for q in range(1, 7)
    }
    return qrels, run


@pytest.mark.parametrize("seed", range(3))
def test_same_numbers_as_pytrec_eval_through_the_provider(seed: int) -> None:
    qrels, run = _collection(seed)
    ours_p = irm_provider.measure("precision") @ 10
    ours_ndcg = irm_provider.measure("ndcg") @ 5
    result = ir_measures.calc_aggregate(
        [ours_p, ours_ndcg, ir_measures.P @ 10, ir_measures.nDCG @ 5], qrels, run
    )
    assert result[ours_p] == pytest.approx(result[ir_measures.P @ 10], abs=1e-12)
    assert result[ours_ndcg] == pytest.approx(result[ir_measures.nDCG @ 5], abs=1e-12)


GRADES = "0:1,1:3,2:4,3:5"


@pytest.mark.parametrize("seed", range(3))
def test_set_based_measures(seed: int, tmp_path: Path) -> None:
    qrels, run = _collection(seed)
    ra = irm_provider.RA_nWG(grade_map=GRADES) @ 10
    proc = irm_provider.PROC(grade_map=GRADES) @ 5
    result = ir_measures.calc_aggregate([ra, proc, ir_measures.AP], qrels, run)
    expected = evaluate(
        Run.from_dict(run),
        Qrels.from_dict(qrels),
        ["ra_nwg@10", "proc@5"],
        grade_map=GRADES,
    ).run
    assert result[ra] == pytest.approx(expected.aggregate("ra_nwg@10").value, abs=1e-12)
    assert result[proc] == pytest.approx(expected.aggregate("proc@5").value, abs=1e-12)
    # per query, and with a pool given as a run file
    pool_path = tmp_path / "pool.run"
    pool_path.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {10 - i} pool\n"
            for q, docs in qrels.items()
            for i, d in enumerate(sorted(docs))
        )
    )
    pooled = irm_provider.PROC(grade_map=GRADES, pool=str(pool_path)) @ 5
    per_query = {m.query_id: m.value for m in ir_measures.iter_calc([pooled], qrels, run)}
    expected_pooled = evaluate(
        Run.from_dict(run),
        Qrels.from_dict(qrels),
        ["proc@5"],
        grade_map=GRADES,
        pool=read_run(pool_path),
    ).run
    for q, value in zip(expected_pooled.query_ids, expected_pooled.column("proc@5"), strict=True):
        assert per_query[q] == pytest.approx(value, abs=1e-12) or (
            math.isnan(value) and math.isnan(per_query[q])
        )


def test_measures_needing_more_than_qrels_are_refused() -> None:
    with pytest.raises(ValueError, match="needs judgments"):
        irm_provider.measure("coverage")


def test_parsed_by_name_after_import() -> None:
    parsed = ir_measures.parse_measure("RA_nWG(grade_map='0:1,1:3,2:4,3:5')@10")
    assert parsed == irm_provider.RA_nWG(grade_map=GRADES) @ 10
