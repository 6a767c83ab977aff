"""The result objects: JSON shape, NA handling, DataFrames, indexing and warnings."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ragmeter import Evaluation, Qrels, Run, RunResult, evaluate, parse_measures

# q1 ranks d1 d2 d3 (d2, d3 relevant); q2 retrieves only x (its relevant doc is y);
# q3 is judged but absent from the run; q9 is retrieved but not judged.
RUN = Run.from_lists({"q1": ["d1", "d2", "d3"], "q2": ["x"], "q9": ["d1"]}, name="A")
QRELS = Qrels.from_dict({"q1": {"d2": 1, "d3": 2, "d4": 0}, "q2": {"y": 1}, "q3": {"z": 1}})


def test_to_dict_shape_and_values() -> None:
    ev = evaluate(RUN, QRELS, ["P@2", "num_ret"])
    out = ev.to_dict()
    assert set(out) == {"runs", "warnings"}
    assert isinstance(out["warnings"], list)
    [run] = out["runs"]
    assert set(run) == {"name", "metrics"}
    assert run["name"] == "A"
    assert list(run["metrics"]) == ["precision@2", "num_ret"]
    # P@2: q1 1/2, q2 0, q3 (missing, empty run) 0 → mean 1/6
    p2 = run["metrics"]["precision@2"]
    assert {"mean", "n", "n_defined"} <= set(p2)
    assert p2["mean"] == pytest.approx(1 / 6, abs=1e-15)
    assert (p2["n"], p2["n_defined"]) == (3, 3)
    # num_ret: 3 + 1 + 0 = 4 (a count: the sum is reported beside the mean)
    nr = run["metrics"]["num_ret"]
    assert nr["sum"] == 4
    assert nr["mean"] == pytest.approx(4 / 3)
    assert ev.means() == {"A": {"precision@2": pytest.approx(1 / 6), "num_ret": 4.0}}
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_to_dict_per_query() -> None:
    out = evaluate(RUN, QRELS, ["P@2", "mrr"]).to_dict(per_query=True)
    [run] = out["runs"]
    assert set(run) == {"name", "metrics", "per_query"}
    # mrr: q1 first relevant at rank 2 → 0.5; q2 and q3 → 0
    assert run["per_query"] == {
        "q1": {"precision@2": 0.5, "mrr": 0.5},
        "q2": {"precision@2": 0.0, "mrr": 0.0},
        "q3": {"precision@2": 0.0, "mrr": 0.0},
    }
    assert "per_query" not in evaluate(RUN, QRELS, ["mrr"]).to_dict()["runs"][0]


def _with_na() -> Evaluation:
    """A hand-built result where some values are NA (NaN)."""
    measures = tuple(parse_measures(["mrr", "map", "num_ret"]))
    values = np.array(
        [
            [0.5, math.nan, 2.0],
            [math.nan, math.nan, 1.0],
            [1.0, math.nan, math.nan],
        ]
    )
    result = RunResult("R", np.array(["a", "b", "c"], dtype=object), measures, values)
    return Evaluation((result,), measures, ("a warning",))


def test_na_is_none_in_json() -> None:
    ev = _with_na()
    out = ev.to_dict(per_query=True)
    text = json.dumps(out, allow_nan=False)  # raises on NaN
    assert "NaN" not in text
    metrics = out["runs"][0]["metrics"]
    # mrr: mean over the 2 defined values (0.5 + 1) / 2; NA never enters the mean
    assert metrics["mrr"] == {"mean": 0.75, "n": 3, "n_defined": 2}
    # map: nothing defined → mean None
    assert metrics["map"]["mean"] is None
    assert (metrics["map"]["n"], metrics["map"]["n_defined"]) == (3, 0)
    # num_ret: sum of the defined values 2 + 1
    assert metrics["num_ret"]["sum"] == 3.0
    assert metrics["num_ret"]["n_defined"] == 2
    assert out["runs"][0]["per_query"]["b"] == {"mrr": None, "map": None, "num_ret": 1.0}
    assert out["warnings"] == ["a warning"]
    assert ev.means() == {"R": {"mrr": 0.75, "map": None, "num_ret": 3.0}}


def test_to_pandas_shapes() -> None:
    pd = pytest.importorskip("pandas")
    ev = evaluate({"A": RUN, "B": RUN}, QRELS, ["P@2", "mrr", "num_ret"])
    wide = ev["A"].to_pandas()
    assert list(wide.columns) == ["query_id", "precision@2", "mrr", "num_ret"]
    assert list(wide["query_id"]) == ["q1", "q2", "q3"]
    assert wide.shape == (3, 4)
    long = ev.to_pandas()
    assert list(long.columns) == ["run", "query_id", "measure", "value"]
    assert long.shape == (2 * 3 * 3, 4)  # runs × queries × measures
    assert set(long["run"]) == {"A", "B"}
    row = long[(long.run == "B") & (long.query_id == "q1") & (long.measure == "mrr")]
    assert row["value"].tolist() == [0.5]
    na = _with_na().to_pandas()
    assert int(pd.isna(na["value"]).sum()) == 5


def test_indexing_runs() -> None:
    ev = evaluate({"A": RUN, "B": RUN}, QRELS, ["mrr"])
    assert len(ev) == 2
    assert [r.name for r in ev] == ["A", "B"]
    assert ev["B"] is ev[1]
    assert [r["name"] for r in ev.to_dict()["runs"]] == ["A", "B"]
    with pytest.raises(KeyError, match="no run named 'C'"):
        ev["C"]
    with pytest.raises(ValueError, match="2 runs"):
        _ = ev.run
    with pytest.raises(KeyError, match="measure 'ndcg@3' was not evaluated"):
        ev["A"].column("ndcg@3")
    # by canonical name or by Measure
    assert ev["A"].column("mrr").tolist() == [0.5, 0.0, 0.0]
    assert ev["A"].column(parse_measures("mrr")[0]).tolist() == [0.5, 0.0, 0.0]


def test_lookup_by_any_spelling() -> None:
    result = evaluate(RUN, QRELS, ["P@2"]).run
    assert result.column("P@2").tolist() == [0.5, 0.0, 0.0]
    assert result.aggregate("P_2").mean == pytest.approx(1 / 6)


def test_runs_given_as_dicts_are_named_in_order() -> None:
    a = {"q1": {"d2": 2.0, "d1": 1.0}}
    b = {"q1": {"d1": 2.0, "d2": 1.0}}
    ev = evaluate([a, b], {"q1": ["d2"]}, ["mrr"])
    assert [r.name for r in ev] == ["run1", "run2"]
    assert ev.means() == {"run1": {"mrr": 1.0}, "run2": {"mrr": 0.5}}


def test_warnings_for_missing_and_unjudged_queries() -> None:
    zero = evaluate(RUN, QRELS, ["mrr"])
    assert zero.run.n_missing == 1 and zero.run.n_skipped == 0
    assert zero.run.n_unjudged_queries == 1
    text = " | ".join(zero.warnings)
    assert "run 'A': 1 judged query absent from the run, scored as empty runs" in text
    assert "run 'A': 1 query without judgments, not evaluated" in text

    skip = evaluate(RUN, QRELS, ["mrr"], missing="skip")
    assert skip.run.n_missing == 0 and skip.run.n_skipped == 1
    assert list(skip.run.query_ids) == ["q1", "q2"]
    assert any("skipped (missing='skip')" in w for w in skip.warnings)

    # plurals
    run = Run.from_lists({"u1": ["a"], "u2": ["a"]}, name="P")
    many = evaluate(run, {"m1": ["a"], "m2": ["a"]}, ["mrr"])
    assert any("2 judged queries absent from the run" in w for w in many.warnings)
    assert any("2 queries without judgments" in w for w in many.warnings)


def test_no_warnings_when_everything_lines_up() -> None:
    run = Run.from_lists({"q1": ["a", "b"]})
    assert evaluate(run, {"q1": ["b"]}, ["mrr"]).warnings == ()


def test_input_warnings_are_collected() -> None:
    run = Run.from_lists({"q1": ["a", "b", "a"]})
    qrels = Qrels.from_columns(["q1", "q1"], ["a", "a"], [1, 1])
    ev = evaluate(run, qrels, ["mrr"])
    assert any("1 duplicate (query, doc) row(s) dropped" in w for w in ev.warnings)
    assert any("1 repeated identical judgment(s) ignored" in w for w in ev.warnings)


def test_aggregates_match_the_column() -> None:
    result = evaluate(RUN, QRELS, ["P@2", "gm_map", "num_rel"]).run
    aggs = result.aggregates()
    assert list(aggs) == ["precision@2", "gm_map", "num_rel"]
    # gm_map: AP q1 = (1/2 + 2/3) / 2 = 7/12; q2, q3 = 0 → clamped to 1e-5
    expected = math.exp((math.log(7 / 12) + 2 * math.log(1e-5)) / 3)
    assert aggs["gm_map"].mean == pytest.approx(expected, rel=1e-12)
    # num_rel: 2 + 1 + 1 (d4 has grade 0)
    assert aggs["num_rel"].sum == 4.0
    assert result.aggregate("num_rel").value == 4.0
    assert aggs["precision@2"].value == aggs["precision@2"].mean
