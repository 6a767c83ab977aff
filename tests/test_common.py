"""Checks every registered measure family must pass (in the spirit of scikit-learn's
test_common): the list of families comes from the registry, so a new family is covered
without touching this file.

Each family is run on a few fixed random inputs and on degenerate ones (empty runs, qrels
without relevant items, queries missing from the run, run queries missing from the qrels).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from ragmeter import Measure, Qrels, Run, evaluate
from ragmeter.core.align import align
from ragmeter.measures import REGISTRY, Family
from ragmeter.stats.aggregate import aggregate

#: a family must not divide by zero or take the log of 0 silently (numpy RuntimeWarning)
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

FAMILIES = REGISTRY.families()
DOCS = ["a", "aa", "b", "B", "c", "d", "e", "f", "g", "é"]
QUERIES = ["q1", "q2", "q3", "q4", "q5", "q6"]


def _scaled(family: Family) -> dict[str, Any]:
    """Evaluation options putting the random grades (-1..4) on the family's grade scale."""
    if family.grade_scale is None:
        return {}
    low, high = family.grade_scale
    pairs = ",".join(f"{g}:{min(max(g + 2, low), high)}" for g in range(-1, 5))
    return {"grade_map": pairs}


def _skip_unless_qrels_only(family: Family) -> None:
    other = set(family.needs) - {"qrels"}
    if other:
        pytest.skip(f"{family.name} needs {', '.join(sorted(other))}, not built here")


def _measures(family: Family) -> list[Measure]:
    """The family at its default parameters, with and without a cutoff where it has one."""
    if family.cutoff_type is float:
        cutoffs: list[int | float | None] = [0.5, 1.0]
    else:
        cutoffs = [1, 3, 20]
    if family.cutoff == "none":
        cutoffs = [None]
    elif family.cutoff == "optional":
        cutoffs = [None, *cutoffs]
    return [REGISTRY.make(family.name, k, {}) for k in cutoffs]


def _random_inputs(
    seed: int,
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in QUERIES:
        if rng.random() < 0.8:  # some judged queries are missing from the run
            docs = rng.sample(DOCS, rng.randint(1, len(DOCS)))
            run[q] = {d: float(rng.choice([0, 1, 1, 2, 3])) for d in docs}  # score ties
        if rng.random() < 0.8:  # some run queries are not judged
            docs = rng.sample(DOCS, rng.randint(1, len(DOCS)))
            qrels[q] = {d: rng.randint(-1, 4) for d in docs}
    if not qrels:
        qrels["q1"] = {"a": 1}
    if not run:
        run["q1"] = {"a": 1.0}
    return run, qrels


SEEDS = [0, 1, 2, 3]

#: degenerate cases: (name, run, qrels, missing)
DEGENERATE: list[tuple[str, dict[str, dict[str, float]], dict[str, dict[str, int]], str]] = [
    ("no relevant item", {"q1": {"a": 1.0, "b": 0.5}}, {"q1": {"a": 0, "c": -1}}, "zero"),
    ("only unjudged retrieved", {"q1": {"x": 1.0, "y": 1.0}}, {"q1": {"a": 2}}, "zero"),
    ("query missing from run", {"q1": {"a": 1.0}}, {"q1": {"a": 1}, "q2": {"b": 1}}, "zero"),
    ("query missing, skipped", {"q1": {"a": 1.0}}, {"q1": {"a": 1}, "q2": {"b": 1}}, "skip"),
    ("run query not judged", {"q1": {"a": 1.0}, "q9": {"a": 1.0}}, {"q1": {"b": 1}}, "zero"),
    ("empty run, skipped", {}, {"q1": {"a": 1}}, "skip"),
    ("empty qrels", {"q1": {"a": 1.0}}, {}, "zero"),
    ("one item", {"q1": {"a": 1.0}}, {"q1": {"a": 4}}, "zero"),
    ("only in-pool-unjudged", {"q1": {"a": 1.0}}, {"q1": {"a": -1}}, "zero"),
]


def _check_values(values: np.ndarray, n_queries: int, where: str) -> None:
    assert values.shape == (n_queries,), where
    assert values.dtype == np.float64, where
    assert not np.isinf(values).any(), f"{where}: infinite value"


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
@pytest.mark.parametrize("seed", SEEDS)
def test_one_float_per_query(family: Family, seed: int) -> None:
    _skip_unless_qrels_only(family)
    run_dict, qrels_dict = _random_inputs(seed)
    run, qrels = Run.from_dict(run_dict), Qrels.from_dict(qrels_dict)
    for missing in ("zero", "skip"):
        aligned = align(run, qrels, missing=missing)  # type: ignore[arg-type]
        aligned = dataclasses.replace(aligned, options=_scaled(family))
        for m in _measures(family):
            values = np.asarray(family.compute(aligned, m))
            _check_values(values, aligned.n_queries, f"{m} ({missing})")
            agg = aggregate(values, family.aggregate)
            assert agg.n == aligned.n_queries
            assert agg.mean is None or np.isfinite(agg.mean), str(m)


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
@pytest.mark.parametrize(
    ("case", "run_dict", "qrels_dict", "missing"),
    DEGENERATE,
    ids=[c[0] for c in DEGENERATE],
)
def test_degenerate_inputs(
    family: Family,
    case: str,
    run_dict: dict[str, dict[str, float]],
    qrels_dict: dict[str, dict[str, int]],
    missing: str,
) -> None:
    _skip_unless_qrels_only(family)
    result = evaluate(
        Run.from_dict(run_dict),
        Qrels.from_dict(qrels_dict),
        _measures(family),
        missing=missing,  # type: ignore[arg-type]
        **_scaled(family),
    ).run
    judged = {q for q, g in qrels_dict.items() if g}
    expected = judged if missing == "zero" else judged & {q for q, r in run_dict.items() if r}
    assert sorted(result.query_ids) == sorted(expected), case
    for j, m in enumerate(result.measures):
        _check_values(result.values[:, j], len(expected), f"{m} on {case}")
        agg = result.aggregate(m)
        assert agg.n == len(expected)
        assert agg.n_defined == int((~np.isnan(result.values[:, j])).sum())


def _shuffled(
    data: Mapping[str, Mapping[str, Any]], rng: random.Random
) -> dict[str, dict[str, Any]]:
    keys = list(data)
    rng.shuffle(keys)
    out: dict[str, dict[str, Any]] = {}
    for q in keys:
        items = list(data[q].items())
        rng.shuffle(items)
        out[q] = dict(items)
    return out


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
@pytest.mark.parametrize("seed", SEEDS)
def test_invariant_under_query_permutation(family: Family, seed: int) -> None:
    _skip_unless_qrels_only(family)
    run_dict, qrels_dict = _random_inputs(seed)
    measures = _measures(family)
    a = evaluate(
        Run.from_dict(run_dict), Qrels.from_dict(qrels_dict), measures, **_scaled(family)
    ).run
    rng = random.Random(seed + 100)
    b = evaluate(
        Run.from_dict(_shuffled(run_dict, rng)),
        Qrels.from_dict(_shuffled(qrels_dict, rng)),
        list(reversed(measures)),
        **_scaled(family),
    ).run
    assert sorted(a.query_ids) == sorted(b.query_ids)
    rows_b = {q: i for i, q in enumerate(b.query_ids)}
    order = [rows_b[q] for q in a.query_ids]
    for m in measures:
        np.testing.assert_array_equal(a.column(m), b.column(m)[order], err_msg=str(m))


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_deterministic(family: Family) -> None:
    _skip_unless_qrels_only(family)
    run_dict, qrels_dict = _random_inputs(7)
    run, qrels = Run.from_dict(run_dict), Qrels.from_dict(qrels_dict)
    measures = _measures(family)
    first = evaluate(run, qrels, measures, **_scaled(family)).run
    again = evaluate(run, qrels, measures + measures, **_scaled(family)).run
    assert again.measures == first.measures, "a repeated measure is evaluated once"
    np.testing.assert_array_equal(first.values, again.values)
    for m in measures:
        # alone, it gives the same values as next to the others (no shared state leaks)
        alone = evaluate(run, qrels, [m], **_scaled(family)).run
        np.testing.assert_array_equal(alone.column(m), first.column(m), err_msg=str(m))


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_family_metadata(family: Family) -> None:
    assert family.summary.strip(), f"{family.name} has no summary"
    assert family.aggregate in ("mean", "sum", "gmean")
    assert family.cutoff in ("none", "optional", "required")
    assert REGISTRY.family(family.name) is family
    for m in _measures(family):
        assert m.spec is family
