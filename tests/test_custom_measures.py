"""Measures defined through the public API (``ragmeter.define_measure``,
``ragmeter.define_measure_by_query``) and the plugins that bring them to the command line.

Expected values are computed by hand in the comments; the vectorised and the per-query
precision of ``tests/measure_plugin.py`` are checked against the built-in ``P@k`` on random
inputs. ``tests/test_common.py`` runs its common checks on every measure that plugin defines.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import ragmeter
from ragmeter import MeasureError, Param, Qrels, Run, evaluate
from ragmeter.evaluation import sweep
from ragmeter.measures import REGISTRY, parse_measure
from ragmeter.measures.plugins import env_plugins, load_plugin

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
EXAMPLES = REPO / "examples"
PLUGIN_FILE = TESTS / "measure_plugin.py"


def _user_names() -> set[str]:
    return {f.name for f in REGISTRY.families() if f.origin is not None}


@pytest.fixture(autouse=True)
def _no_measure_left_behind() -> Iterator[None]:
    """Every measure a test defines is removed after it (the registry is process-wide)."""
    before = _user_names()
    yield
    for name in _user_names() - before:
        REGISTRY.remove(name)
    sys.modules.pop("measure_plugin", None)


@pytest.fixture
def plugin() -> ModuleType:
    """tests/measure_plugin.py imported: its measures are defined."""
    sys.modules.pop("measure_plugin", None)
    return importlib.import_module("measure_plugin")


# the hand example: q1 ranks a b c d (b grade 1, d grade 2, z judged 1 not retrieved, c judged
# 0); q2 ranks x (unjudged; y relevant); q3 is judged (a: 1) and absent from the run
RUN = Run.from_lists({"q1": ["a", "b", "c", "d"], "q2": ["x"], "q9": ["a"]})
QRELS = Qrels.from_dict({"q1": {"b": 1, "c": 0, "d": 2, "z": 1}, "q2": {"y": 1}, "q3": {"a": 1}})


def test_hand_values(plugin: ModuleType) -> None:
    ev = evaluate(
        RUN,
        QRELS,
        ["vec_precision@3", "query_precision@3", "vec_precision@4", "vec_rbp(p=0.5)"],
    ).run
    assert list(ev.query_ids) == ["q1", "q2", "q3"]
    # P@3: q1 [a b c] holds b → 1/3; q2 and q3 hold nothing relevant → 0
    np.testing.assert_allclose(ev.column("vec_precision@3"), [1 / 3, 0, 0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(ev.column("query_precision@3"), [1 / 3, 0, 0], rtol=0, atol=1e-15)
    # P@4: b and d → 2/4
    assert ev.column("vec_precision@4")[0] == 0.5
    # RBP(p=0.5), relevant at ranks 2 and 4: 0.5 · (0.5 + 0.125) = 0.3125
    assert ev.column("vec_rbp(p=0.5)").tolist() == [0.3125, 0.0, 0.0]
    assert ev.means()["vec_precision@3"] == pytest.approx(1 / 9)


def test_default_k_and_rel_level(plugin: ModuleType) -> None:
    # a family that requires a cutoff gets the evaluation's default_k, and its name says so
    ev = evaluate(RUN, QRELS, ["vec_precision", "query_precision"], default_k=2).run
    assert [str(m) for m in ev.measures] == ["vec_precision@2", "query_precision@2"]
    assert ev.column("vec_precision@2")[0] == 0.5  # [a b]: b
    # --rel-level 2: only d is relevant; P@4 = 1/4 either way
    strict = evaluate(RUN, QRELS, ["vec_precision@4", "query_precision@4"], rel_level=2).run
    assert strict.column("vec_precision@4")[0] == 0.25
    assert strict.column("query_precision@4")[0] == 0.25


def test_na_follows_the_empty_query_policy(plugin: ModuleType) -> None:
    # Run.from_lists scores its rows 0, -1, -2, … in order: q1's first relevant (b) has -1;
    # q2 retrieves nothing relevant and q3 nothing at all: NA, left out of the mean
    zero = evaluate(RUN, QRELS, ["first_relevant_score"]).run
    values = zero.column("first_relevant_score")
    assert values[0] == -1.0 and math.isnan(values[1]) and math.isnan(values[2])
    agg = zero.aggregate(parse_measure("first_relevant_score"))
    assert (agg.mean, agg.n, agg.n_defined) == (-1.0, 3, 1)
    # q3, judged and not retrieved, is an empty ranking (missing="zero") or left out ("skip")
    skip = evaluate(RUN, QRELS, ["vec_precision@3", "judged_retrieved"], missing="skip").run
    assert list(skip.query_ids) == ["q1", "q2"]
    # judged_retrieved is a count: a b c d has b c d judged; summed over queries
    assert skip.aggregate(parse_measure("judged_retrieved")).value == 3.0


ids = st.sampled_from(["a", "b", "c", "d", "e", "f", "g"])


@st.composite
def inputs(draw: st.DrawFn) -> tuple[dict[str, list[str]], dict[str, dict[str, int]]]:
    queries = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), unique=True, min_size=1))
    run = {q: draw(st.lists(ids, unique=True, max_size=7)) for q in queries}
    judged = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), unique=True, min_size=1))
    qrels = {q: draw(st.dictionaries(ids, st.integers(-1, 3), min_size=1)) for q in judged}
    return run, qrels


@settings(max_examples=60, deadline=None)
@given(data=inputs(), k=st.integers(1, 9), rel_level=st.integers(0, 3))
def test_both_definitions_of_precision_are_the_builtin_p(
    data: tuple[dict[str, list[str]], dict[str, dict[str, int]]], k: int, rel_level: int
) -> None:
    if "vec_precision" not in _user_names():
        sys.modules.pop("measure_plugin", None)
        importlib.import_module("measure_plugin")
    run, qrels = data
    ev = evaluate(
        Run.from_lists(run),
        Qrels.from_dict(qrels),
        [f"P@{k}", f"vec_precision@{k}", f"query_precision@{k}"],
        rel_level=rel_level,
    ).run
    builtin = ev.column(f"precision@{k}")
    np.testing.assert_array_equal(ev.column(f"vec_precision@{k}"), builtin)
    np.testing.assert_array_equal(ev.column(f"query_precision@{k}"), builtin)


@settings(max_examples=40, deadline=None)
@given(
    data=inputs(),
    k=st.one_of(st.none(), st.integers(1, 9)),
    p=st.floats(0.0, 1.0),
)
def test_vectorised_rbp_is_its_formula_query_by_query(
    data: tuple[dict[str, list[str]], dict[str, dict[str, int]]], k: int | None, p: float
) -> None:
    """vec_rbp (parameters, cutoffs, the arrays of Rankings) against RBP written out for
    each query: (1 − p) Σ_{i ≤ k} [grade_i ≥ 1] · p^(i − 1)."""
    if "vec_rbp" not in _user_names():
        sys.modules.pop("measure_plugin", None)
        importlib.import_module("measure_plugin")
    run, qrels = data
    name = "vec_rbp" + ("" if k is None else f"@{k}") + f"(p={p!r})"
    ev = evaluate(Run.from_lists(run), Qrels.from_dict(qrels), [name]).run
    for qid, value in zip(ev.query_ids, ev.values[:, 0], strict=True):
        ranking = run.get(qid, [])[:k]
        want = (1 - p) * sum(
            p ** (i - 1) for i, d in enumerate(ranking, 1) if qrels[qid].get(d, 0) >= 1
        )
        assert value == pytest.approx(want, rel=1e-12, abs=1e-15), (qid, ranking)


def test_sweep_is_the_single_k_evaluation(plugin: ModuleType) -> None:
    swept = sweep(RUN, QRELS, ["vec_precision", "query_precision", "vec_rbp(p=0.5)"], "1:5")
    curves = swept.curves()["run"]
    # q1's P@1..5: 0, 1/2, 1/3, 2/4, 2/5; the mean over 3 queries
    want = [0.0, 1 / 6, 1 / 9, 1 / 6, 2 / 15]
    for name in ("vec_precision", "query_precision"):
        assert [p["mean"] for p in curves[name]] == pytest.approx(want, abs=1e-15)
    # RBP@k: the top k only; p = 0.5: rank 2 adds 0.5·0.5, rank 4 adds 0.5·0.125
    rbp = [p["mean"] * 3 for p in curves["vec_rbp(p=0.5)"]]
    assert rbp == pytest.approx([0, 0.25, 0.25, 0.3125, 0.3125], abs=1e-15)


def test_blocks_of_queries_give_the_whole_run(plugin: ModuleType) -> None:
    from ragmeter.evaluation import EvalInputs, evaluate_blocks, evaluate_inputs

    names = ["vec_precision@2", "query_precision@3", "first_relevant_score", "vec_rbp"]
    inputs = EvalInputs(QRELS)
    whole = evaluate_inputs([RUN], inputs, names).run
    # the same rankings and scores (0, -1, … by row), one block of queries at a time
    blocks = [
        Run.from_columns(["q1"] * 4, ["a", "b", "c", "d"], [0.0, -1.0, -2.0, -3.0]),
        Run.from_columns(["q2", "q9"], ["x", "a"], [-4.0, -5.0]),
    ]
    merged = evaluate_blocks(blocks, inputs, names, name="run").run
    assert list(merged.query_ids) == list(whole.query_ids)
    for m in whole.measures:
        np.testing.assert_array_equal(merged.column(m), whole.column(m), err_msg=str(m))


def test_compare_report_and_trec_output(plugin: ModuleType) -> None:
    from ragmeter.report.render import to_trec
    from ragmeter.stats import compare

    better = Run.from_lists({"q1": ["b", "d", "a"], "q2": ["y"], "q3": ["a"]}, name="better")
    ev = evaluate({"base": RUN, "better": better}, QRELS, ["vec_precision@2", "P@2"])
    comparison = compare(ev, baseline="base")
    diffs = {d.measure: d for d in comparison.differences}
    # P@2: base 1/2, 0, 0; better 1, 1/2, 1/2 → Δ = (1/2 + 1/2 + 1/2) / 3 = 1/2
    assert diffs["vec_precision@2"].difference == pytest.approx(0.5)
    assert diffs["vec_precision@2"].p_value == diffs["precision@2"].p_value
    lines = to_trec(ev, per_query=True).splitlines()
    assert "vec_precision@2\tq1\t0.5000" in lines
    assert "vec_precision@2\tall\t0.6667" in lines


def test_store_round_trip(plugin: ModuleType, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    from ragmeter.store import open_store

    ev = evaluate(RUN, QRELS, ["vec_rbp(p=0.5)", "first_relevant_score", "vec_precision@3"])
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as store:
        eid = store.save_evaluation(ev, git=None)
        loaded = store.load_evaluation(eid).evaluation
    assert loaded.measures == ev.measures
    np.testing.assert_array_equal(loaded.runs[0].values, ev.runs[0].values)
    assert loaded.runs[0].means() == ev.runs[0].means()
    # without the plugin, the stored values still load under their names
    for name in plugin.NAMES:
        REGISTRY.remove(name)
    with open_store(url) as store:
        bare = store.load_evaluation(eid).evaluation
    assert [str(m) for m in bare.measures] == [str(m) for m in ev.measures]
    np.testing.assert_array_equal(bare.runs[0].values, ev.runs[0].values)


# -- validation ------------------------------------------------------------------------------


def test_parameters_are_validated(plugin: ModuleType) -> None:
    assert str(parse_measure("vec_rbp(p=0.8)")) == "vec_rbp"  # the default is not stored
    assert str(parse_measure("VEC_RBP@10(p=0.5)")) == "vec_rbp@10(p=0.5)"
    with pytest.raises(MeasureError, match=r"parameter 'p' must be ≤ 1\.0, got '2'"):
        parse_measure("vec_rbp(p=2)")
    with pytest.raises(MeasureError, match="parameter 'p' must be float"):
        parse_measure("vec_rbp(p=high)")
    with pytest.raises(MeasureError, match="unknown parameter 'q'; valid: p"):
        parse_measure("vec_rbp(q=1)")
    with pytest.raises(MeasureError, match="judged_retrieved takes no cutoff"):
        parse_measure("judged_retrieved@5")
    with pytest.raises(MeasureError, match="cutoff must be ≥ 1"):
        parse_measure("vec_precision@0")
    with pytest.raises(MeasureError, match="did you mean vec_precision"):
        parse_measure("vec_precison@5")


def _noop(r: ragmeter.Rankings) -> np.ndarray:
    return np.zeros(r.n_queries)


def test_a_taken_name_is_an_error_unless_replaced(plugin: ModuleType) -> None:
    with pytest.raises(MeasureError, match="'ndcg' is ragmeter's own measure 'ndcg'"):
        ragmeter.define_measure("ndcg", _noop)
    with pytest.raises(MeasureError, match="'P' is ragmeter's own measure 'precision'"):
        ragmeter.define_measure("mine", _noop, aliases=("P",), replace=True)
    with pytest.raises(
        MeasureError,
        match=r"'VEC_RBP' is already defined \(measure 'vec_rbp' from measure_plugin\); pass "
        r"replace=True",
    ):
        ragmeter.define_measure("VEC_RBP", _noop)
    family = ragmeter.define_measure("vec_rbp", _noop, replace=True)
    assert REGISTRY.family("vec_rbp") is family
    assert evaluate(RUN, QRELS, ["vec_rbp"]).run.means()["vec_rbp"] == 0.0
    # a name another tool's spelling gives a meaning is taken too, in any case
    for name, meaning in [
        ("map_cut", "trec_eval's map_cut"),
        ("p_10", "trec_eval's P_10"),
        ("Recip_Rank", "trec_eval's recip_rank"),
        ("all_trec", "trec_eval's all_trec"),
        ("r", "ir_measures' R"),
        ("SetP", "ir_measures' SetP"),
    ]:
        with pytest.raises(MeasureError, match=f"'{name}' is {meaning}; choose another name"):
            ragmeter.define_measure(name, _noop)
    # … but not a name that only starts like one
    ragmeter.define_measure("recall_weighted", _noop)
    assert parse_measure("recall_weighted@3").family == "recall_weighted"
    assert parse_measure("recall_10") == parse_measure("recall@10")
    with pytest.raises(MeasureError, match="a measure name is a letter"):
        ragmeter.define_measure("my-measure", _noop)


def test_bad_definitions_are_refused_when_defined() -> None:
    with pytest.raises(MeasureError, match=r"parameter 'p' must be ≤ 1, got 3"):
        ragmeter.define_measure("m1", _noop, params=(Param("p", float, 3.0, high=1),))
    with pytest.raises(MeasureError, match="no argument for parameter 'p'"):
        ragmeter.define_measure("m1", _noop, params=(Param("p", float, 0.5),))
    with pytest.raises(MeasureError, match="parameter name 'k' is not allowed"):
        ragmeter.define_measure_by_query(
            "m1", lambda ranking, qrels, k: 0.0, params=(Param("k", int, 1),)
        )
    with pytest.raises(MeasureError, match="argument 'depth' is not a declared parameter"):
        ragmeter.define_measure_by_query("m1", lambda ranking, qrels, depth: 0.0)
    with pytest.raises(MeasureError, match=r"must take \(ranking, qrels\)"):
        ragmeter.define_measure_by_query("m1", lambda ranking: 0.0)
    with pytest.raises(MeasureError, match="cutoff must be 'none'"):
        ragmeter.define_measure("m1", _noop, cutoff="always")  # type: ignore[call-overload]
    assert "m1" not in _user_names()


def test_what_a_function_returns_is_checked() -> None:
    ragmeter.define_measure("shape", lambda r: np.zeros(r.n_queries + 1))
    ragmeter.define_measure_by_query("infinite", lambda ranking, qrels: math.inf)
    ragmeter.define_measure_by_query("text", lambda ranking, qrels: "high")
    ragmeter.define_measure_by_query("fails", lambda ranking, qrels: 1 / len(ranking))
    with pytest.raises(MeasureError, match=r"shape \(4,\); expected one value per query \(3,\)"):
        evaluate(RUN, QRELS, ["shape"])
    with pytest.raises(MeasureError, match="value inf for query 'q1' is infinite"):
        evaluate(RUN, QRELS, ["infinite"])
    with pytest.raises(MeasureError, match="returned str for query 'q1'"):
        evaluate(RUN, QRELS, ["text"])
    # q3 is judged and absent from the run: an empty ranking, and this function divides by 0
    with pytest.raises(MeasureError, match="failed on query 'q3': ZeroDivisionError"):
        evaluate(RUN, QRELS, ["fails"])
    # without q3: q1 1/4, q2 1/1
    assert evaluate(RUN, QRELS, ["fails"], missing="skip").run.means()["fails"] == 0.625


def test_the_per_query_function_sees_one_query(plugin: ModuleType) -> None:
    seen: list[tuple[object, ...]] = []

    def spy(
        ranking: list[str],
        qrels: dict[str, int],
        *,
        k: int | None,
        scores: list[float],
        query_id: str,
        rel_level: int,
    ) -> float:
        seen.append((query_id, ranking, qrels, k, scores, rel_level))
        return 0.0

    ragmeter.define_measure_by_query("spy", spy)
    evaluate(RUN, QRELS, ["spy@2"], rel_level=2)
    assert seen == [
        ("q1", ["a", "b"], {"d": 2, "b": 1, "z": 1, "c": 0}, 2, [0.0, -1.0], 2),
        ("q2", ["x"], {"y": 1}, 2, [-4.0], 2),
        ("q3", [], {"a": 1}, 2, [], 2),
    ]
    seen.clear()
    evaluate(RUN, QRELS, ["spy"])
    assert [s[3] for s in seen] == [None, None, None]


def test_higher_is_better_sets_the_comparison_direction() -> None:
    from ragmeter.stats.comparison import direction

    ragmeter.define_measure("cost", _noop, higher_is_better=False)
    ragmeter.define_measure("size", _noop, higher_is_better=None)
    ragmeter.define_measure("gain", _noop)
    assert [direction(parse_measure(n)) for n in ("cost", "size", "gain")] == [-1, 0, 1]


# -- plugins and the command line --------------------------------------------------------------


def test_env_plugins_are_comma_separated() -> None:
    assert env_plugins({"RAGMETER_PLUGINS": " a, pkg.b ,,c.py "}) == ["a", "pkg.b", "c.py"]
    assert env_plugins({}) == []


def test_a_plugin_by_path_and_by_name() -> None:
    module = load_plugin(str(PLUGIN_FILE))
    assert module.__name__ == "measure_plugin"
    assert load_plugin(str(PLUGIN_FILE)) is module  # once
    assert load_plugin("measure_plugin") is module
    assert REGISTRY.family("vec_precision").origin == "measure_plugin"


def test_a_missing_or_failing_plugin_is_one_clear_error(tmp_path: Path) -> None:
    from ragmeter.errors import PluginError

    with pytest.raises(PluginError, match="--plugin: no module named 'no_such_plugin_x'"):
        load_plugin("no_such_plugin_x")
    with pytest.raises(PluginError, match="plugin file not found"):
        load_plugin(str(tmp_path / "gone.py"))
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("import ragmeter\nragmeter.define_measure('ndcg', lambda r: r.k)\n")
    with pytest.raises(PluginError, match="'ndcg' is ragmeter's own measure"):
        load_plugin(str(broken), given_by="RAGMETER_PLUGINS")
    assert "broken_plugin" not in sys.modules


runner = CliRunner()
RUNS = [str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "run_dense.txt")]
QRELS_FILE = str(EXAMPLES / "qrels.txt")


def test_cli_evaluate_sweep_and_compare_with_a_plugin() -> None:
    from ragmeter.cli import app

    plugin = ["--plugin", str(PLUGIN_FILE)]
    done = runner.invoke(
        app,
        [
            *plugin,
            "evaluate",
            *RUNS,
            "--qrels",
            QRELS_FILE,
            "-m",
            "vec_precision@10",
            "-m",
            "query_precision@10",
            "-m",
            "P@10",
            "--format",
            "json",
        ],
    )
    assert done.exit_code == 0, done.output
    for run in json.loads(done.stdout)["runs"]:
        metrics = run["metrics"]
        assert metrics["vec_precision@10"] == metrics["precision@10"]
        assert metrics["query_precision@10"] == metrics["precision@10"]
    done = runner.invoke(
        app,
        [
            *plugin,
            "evaluate",
            RUNS[0],
            "--qrels",
            QRELS_FILE,
            *["-m", "vec_precision", "-m", "P", "--k", "1:20", "--format", "json"],
        ],
    )
    assert done.exit_code == 0, done.output
    metrics = json.loads(done.stdout)["runs"][0]["metrics"]
    assert len(metrics) == 40
    for k in range(1, 21):
        assert metrics[f"vec_precision@{k}"] == metrics[f"precision@{k}"]
    done = runner.invoke(
        app,
        [
            *plugin,
            "compare",
            *RUNS,
            "--qrels",
            QRELS_FILE,
            "-m",
            "vec_precision@10",
            "-m",
            "P@10",
            "--format",
            "json",
        ],
    )
    assert done.exit_code == 0, done.output
    diffs = {d["measure"]: d for d in json.loads(done.stdout)["differences"]}
    mine, builtin = diffs["vec_precision@10"], diffs["precision@10"]
    assert mine["difference"] == builtin["difference"] and mine["p_value"] == builtin["p_value"]


def test_cli_lists_the_measures_of_a_plugin() -> None:
    from ragmeter.cli import app

    done = runner.invoke(app, ["--plugin", str(PLUGIN_FILE), "measures"])
    assert done.exit_code == 0, done.output
    assert "vec_rbp" in done.stdout and "(from measure_plugin)" in done.stdout


def test_cli_names_a_missing_plugin() -> None:
    from ragmeter.cli import app

    done = runner.invoke(app, ["--plugin", "no_such_plugin_x", "measures"])
    assert done.exit_code == 2
    assert done.stderr.strip().startswith("ragmeter: error: --plugin: no module named")


def test_the_ragmeter_process_reads_ragmeter_plugins(tmp_path: Path) -> None:
    """The real entry point, with the plugin given by the environment variable, by name."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(TESTS)]),
        "RAGMETER_PLUGINS": "measure_plugin",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragmeter",
            "evaluate",
            RUNS[0],
            "--qrels",
            QRELS_FILE,
            *["-m", "vec_rbp@10(p=0.5)", "-m", "first_relevant_score", "--format", "trec"],
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    names = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert names == ["vec_rbp@10(p=0.5)", "first_relevant_score"]


def test_cli_report_with_a_plugin(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the HTML report draws its charts with matplotlib")
    from ragmeter.cli import app

    out = tmp_path / "report.html"
    done = runner.invoke(
        app,
        [
            "--plugin",
            str(PLUGIN_FILE),
            "report",
            *RUNS,
            "--qrels",
            QRELS_FILE,
            "-o",
            str(out),
            "-m",
            "vec_precision@10",
            "-m",
            "first_relevant_score",
            "--sweep",
            "1:5",
        ],
    )
    assert done.exit_code == 0, done.output
    page = out.read_text(encoding="utf-8")
    assert "vec_precision@10" in page and "first_relevant_score" in page
