"""Cutoff sweeps: every measure at every K in one pass, equal to single-K evaluations."""

from __future__ import annotations

import csv
import io
import json
import random

import numpy as np
import pytest

from ragmeter import MeasureError, Qrels, Run, evaluate
from ragmeter.evaluation import sweep
from ragmeter.sweep import parse_ks

SET = [
    "ra_nwg",
    "proc",
    "pct_proc",
    "n_recall4p",
    "n_recall5",
    "precision4p",
    "harm",
    "proc_n_recall4p",
    "harm(harm_max_grade=2)",
]


def _random(seed: int) -> tuple[Run, Qrels, Run]:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(40)]
    run, qrels, pool = {}, {}, {}
    for q in range(30):
        ranked = rng.sample(docs, rng.randint(0, 30))
        if ranked:
            run[f"q{q}"] = ranked
        qrels[f"q{q}"] = {d: rng.randint(1, 5) for d in rng.sample(docs, rng.randint(1, 15))}
        pool[f"q{q}"] = rng.sample(docs, rng.randint(1, 40))
    return Run.from_lists(run), Qrels.from_dict(qrels), Run.from_lists(pool)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sweep_equals_single_k_exactly(seed: int) -> None:
    run, qrels, pool = _random(seed)
    result = sweep(run, qrels, [*SET, "ndcg", "P"], "1:35", pool=pool, pool_depth=25)
    swept = result.evaluation.run
    for k in (1, 2, 7, 8, 9, 10, 20, 35):
        names = [f"{m.split('(')[0]}@{k}" + (m[m.index("(") :] if "(" in m else "") for m in SET]
        names += [f"ndcg@{k}", f"P@{k}"]
        single = evaluate(run, qrels, names, pool=pool, pool_depth=25).run
        for name in names:
            a, b = swept.column(name), single.column(name)
            # bit for bit: same values, NaN in the same places
            assert np.array_equal(a, b, equal_nan=True), name


def test_curves_shape_and_files() -> None:
    run = Run.from_lists({"q1": ["a", "b", "c"], "q2": ["x"]})
    qrels = Qrels.from_dict({"q1": {"a": 3, "c": 5}, "q2": {"y": 2}})
    result = sweep(run, qrels, ["precision4p", "n_recall5"], [1, 3])
    curves = result.curves()["run"]
    # precision4p: q1 top-1 [a:3] → 0, q2 → 0; top-3 [3, -, 5] → 1/3, q2 → 0
    assert [p["mean"] for p in curves["precision4p"]] == [0.0, pytest.approx(1 / 6)]
    # n_recall5: q1 R5 = 1 → 0 at K=1, 1 at K=3; q2 has no 5 → NA
    assert curves["n_recall5"] == [
        {"k": 1, "mean": 0.0, "n": 2, "n_defined": 1},
        {"k": 3, "mean": 1.0, "n": 2, "n_defined": 1},
    ]
    body = json.loads(result.to_json())
    assert body["ks"] == [1, 3] and "precision4p" in body["runs"]["run"]
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert rows[0] == {
        "run": "run",
        "measure": "precision4p",
        "k": "1",
        "mean": "0.0",
        "n": "2",
        "n_defined": "2",
    }
    assert len(rows) == 4


def test_parse_ks_and_errors() -> None:
    assert parse_ks("1:5") == [1, 2, 3, 4, 5]
    assert parse_ks("1,5,10") == [1, 5, 10]
    assert parse_ks("10:30:10, 1") == [1, 10, 20, 30]
    for bad in ("0:3", "a", "5:1", "1:2:3:4", ""):
        with pytest.raises(MeasureError):
            parse_ks(bad)
    run, qrels, _ = _random(0)
    with pytest.raises(MeasureError, match="without a cutoff"):
        sweep(run, qrels, ["ra_nwg@5"], "1:3")
    with pytest.raises(MeasureError, match="takes no cutoff"):
        sweep(run, qrels, ["rprec"], "1:3")
