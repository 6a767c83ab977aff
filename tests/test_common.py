"""Checks every registered measure family must pass (in the spirit of scikit-learn's
test_common): the list of families comes from the registry, so a new family is covered
without touching this file.

Each family is run on a few fixed random inputs and on degenerate ones (empty runs, qrels
without relevant items, queries missing from the run, run queries missing from the qrels).
Its side inputs are built from what it declares it needs (``Family.needs``: judgments, corpus,
answers, utilities), so no family is skipped; and at every cutoff, a sweep gives the value a
single evaluation of ``m@K`` gives, bit for bit.

Measures defined through the public API (``ragmeter.define_measure``, as a user's plugin
does) are families too: those registered when this file is collected are checked, and so are
the ones ``tests/measure_plugin.py`` defines (each registered only while its own test runs).
"""

from __future__ import annotations

import importlib
import random
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

from ragmeter import Measure, Qrels, Run, evaluate
from ragmeter.core.gold_answers import GoldAnswers
from ragmeter.core.judgments import Answers, Corpus, Judgments
from ragmeter.core.nuggets import CitationSupport, NuggetAssignments, Nuggets, SentenceSupport
from ragmeter.core.spans import ChunkTable, SpanInputs, SpanLabels
from ragmeter.errors import MissingInputError
from ragmeter.evaluation import EvalInputs, evaluate_samples, prepare, sweep
from ragmeter.io.answers import AnswerSample
from ragmeter.io.utilities import Utilities
from ragmeter.measures import REGISTRY, Family
from ragmeter.stats.aggregate import aggregate

#: a family must not divide by zero or take the log of 0 silently (numpy RuntimeWarning)
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _user_families() -> list[Family]:
    """The families ``tests/measure_plugin.py`` defines through the public API, taken out of
    the registry again (the fixture below adds one back while its test runs, so that no other
    test file sees them)."""
    before = {f.name for f in REGISTRY.families()}
    sys.modules.pop("measure_plugin", None)
    importlib.import_module("measure_plugin")
    sys.modules.pop("measure_plugin", None)
    made = [f for f in REGISTRY.families() if f.name not in before]
    for family in made:
        REGISTRY.remove(family.name)
    assert made and all(f.origin == "measure_plugin" for f in made)
    return made


USER_FAMILIES = _user_families()
FAMILIES = REGISTRY.families() + USER_FAMILIES


@pytest.fixture(autouse=True)
def _user_family_defined(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test of a family of :data:`USER_FAMILIES` runs with that family defined."""
    callspec = getattr(request.node, "callspec", None)
    family = callspec.params.get("family") if callspec is not None else None
    if not any(family is f for f in USER_FAMILIES):
        yield
        return
    assert isinstance(family, Family)
    REGISTRY.add(family)
    try:
        yield
    finally:
        REGISTRY.remove(family.name)


DOCS = ["a", "aa", "b", "B", "c", "d", "e", "f", "g", "é"]
QUERIES = ["q1", "q2", "q3", "q4", "q5", "q6"]


def _scaled(family: Family) -> dict[str, Any]:
    """Evaluation options putting the random grades (-1..4) on the family's grade scale."""
    if family.grade_scale is None:
        return {}
    low, high = family.grade_scale
    pairs = ",".join(f"{g}:{min(max(g + 2, low), high)}" for g in range(-1, 5))
    return {"grade_map": pairs}


#: the side inputs this file can build, by the name a family's ``needs`` uses
BUILT = {
    "qrels", "judgments", "corpus", "answers", "utilities", "nuggets", "citations", "spans",
    "gold_answers",
}  # fmt: skip
#: per-sample families score answer samples, not runs: checked by the test_sample_* below
SAMPLE_FAMILIES = [f for f in FAMILIES if "samples" in f.needs]
RUN_FAMILIES = [f for f in FAMILIES if "samples" not in f.needs]


def _side_inputs(
    family: Family,
    run: Mapping[str, Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, int]],
    seed: int = 0,
) -> dict[str, Any]:
    """``evaluate`` keywords giving ``family`` every input it declares it needs, built at
    random from the run and qrels (sub-question ratings for the judged docs, texts for every
    doc, answers, utilities for every retrieved doc), plus the grade map of its scale."""
    unknown = set(family.needs) - BUILT
    assert not unknown, f"{family.name} needs {sorted(unknown)}: teach test_common to build it"
    rng = random.Random(seed + 1000)
    out = _scaled(family)
    needs = set(family.needs)
    if needs & {"judgments", "corpus", "answers"}:
        widths = {q: rng.randint(1, 3) for q in qrels}
        ratings = {
            q: {d: [rng.choice([-1, 0, 2, 3, 4, 5]) for _ in range(widths[q])] for d in docs}
            for q, docs in qrels.items()
            if docs
        }
        out["judgments"] = Judgments.from_dict(ratings)
        docs = sorted({d for r in run.values() for d in r} | {d for q in qrels.values() for d in q})
        out["corpus"] = Corpus.from_dict({d: "word " * rng.randint(1, 9) for d in docs})
        out["answers"] = Answers.from_dict(
            {q: [rng.choice([0, 3, 5]) for _ in range(widths[q])] for q in ratings}
        )
    if "utilities" in needs:
        out["utilities"] = Utilities.from_dict(
            {q: {d: rng.random() for d in docs} for q, docs in run.items()}
        )
    if needs & {"nuggets", "citations"}:
        out.update(_nugget_inputs(run, qrels, rng))
    if "spans" in needs:
        out.update(_span_inputs(run, qrels, rng))
    if "gold_answers" in needs:
        out.update(_gold_answer_inputs(run, qrels, rng))
    return out


def _gold_answer_inputs(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]], rng: Any
) -> dict[str, Any]:
    """Passage texts of a few words and gold answers for most queries (some listed without
    any, some answers only an article: both NA)."""
    words = ["the", "tower", "Paris", "a", "bridge", "river,"]
    docs = sorted(set(DOCS) | {d for r in run.values() for d in r})
    corpus = {d: " ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for d in docs}
    gold = {
        q: [" ".join(rng.choice(words) for _ in range(rng.randint(1, 2)))]
        for q in sorted(set(qrels) | set(run))
        if rng.random() < 0.8
    }
    return {"corpus": Corpus.from_dict(corpus), "gold_answers": GoldAnswers.from_dict(gold)}


def _span_inputs(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]], rng: Any
) -> dict[str, Any]:
    """A chunk table placing every doc id as a chunk of two documents (some empty, some
    overlapping) and spans for the judged queries (some none)."""
    table = []
    for d in sorted(set(DOCS) | {d for docs in run.values() for d in docs}):
        start = rng.randint(0, 40)
        table.append((d, rng.choice(["x", "y"]), start, start + rng.randint(0, 15)))
    spans = []
    for q in qrels:
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            start = rng.randint(0, 50)
            spans.append((q, rng.choice(["x", "y"]), start, start + rng.randint(1, 10)))
    return {"spans": SpanInputs(SpanLabels.from_rows(spans), ChunkTable.from_rows(table))}


def _nugget_inputs(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]], rng: Any
) -> dict[str, Any]:
    """Random nuggets (some queries none, some without vital ones), assignments of the answers
    of the run called "run" (some queries unassessed) and of its passages, citation support."""
    queries = sorted(set(qrels) | set(run))
    nuggets = Nuggets.from_dict(
        {
            q: [(f"n{i}", rng.choice(["vital", "okay"])) for i in range(rng.randint(1, 4))]
            for q in queries
            if rng.random() < 0.8
        }
    )
    answers = {
        ("run", q): {n.id: rng.randint(0, 2) for n in own}
        for q, own in nuggets.by_query.items()
        if rng.random() < 0.8
    }
    passages = {
        (q, d): {n.id: rng.randint(0, 2) for n in nuggets.by_query[q]}
        for q, docs in run.items()
        if q in nuggets.by_query
        for d in docs
        if rng.random() < 0.7
    }
    sentences = {}
    for q in queries:
        if rng.random() < 0.8:
            sentences[("run", q)] = tuple(
                SentenceSupport(
                    tuple(f"d{j}" for j in range(w)), tuple(rng.randint(0, 2) for _ in range(w))
                )
                for w in [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
            )
    return {
        "nuggets": nuggets,
        "nugget_assignments": NuggetAssignments(answers, passages),
        "citation_support": CitationSupport(sentences),
    }


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


@pytest.mark.parametrize("family", RUN_FAMILIES, ids=[f.name for f in RUN_FAMILIES])
@pytest.mark.parametrize("seed", SEEDS)
def test_one_float_per_query(family: Family, seed: int) -> None:
    run_dict, qrels_dict = _random_inputs(seed)
    run, qrels = Run.from_dict(run_dict), Qrels.from_dict(qrels_dict)
    side = _side_inputs(family, run_dict, qrels_dict, seed)
    for missing in ("zero", "skip"):
        inputs = EvalInputs(qrels, missing=missing, **side)  # type: ignore[arg-type]
        aligned = prepare(run, inputs, _measures(family)).aligned
        for m in _measures(family):
            values = np.asarray(family.compute(aligned, m))
            _check_values(values, aligned.n_queries, f"{m} ({missing})")
            agg = aggregate(values, family.aggregate)
            assert agg.n == aligned.n_queries
            assert agg.mean is None or np.isfinite(agg.mean), str(m)


@pytest.mark.parametrize("family", RUN_FAMILIES, ids=[f.name for f in RUN_FAMILIES])
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
    result = evaluate(
        Run.from_dict(run_dict),
        Qrels.from_dict(qrels_dict),
        _measures(family),
        missing=missing,  # type: ignore[arg-type]
        **_side_inputs(family, run_dict, qrels_dict),
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


@pytest.mark.parametrize("family", RUN_FAMILIES, ids=[f.name for f in RUN_FAMILIES])
@pytest.mark.parametrize("seed", SEEDS)
def test_invariant_under_query_permutation(family: Family, seed: int) -> None:
    run_dict, qrels_dict = _random_inputs(seed)
    measures = _measures(family)
    side = _side_inputs(family, run_dict, qrels_dict, seed)
    a = evaluate(Run.from_dict(run_dict), Qrels.from_dict(qrels_dict), measures, **side).run
    rng = random.Random(seed + 100)
    b = evaluate(
        Run.from_dict(_shuffled(run_dict, rng)),
        Qrels.from_dict(_shuffled(qrels_dict, rng)),
        list(reversed(measures)),
        **side,
    ).run
    assert sorted(a.query_ids) == sorted(b.query_ids)
    rows_b = {q: i for i, q in enumerate(b.query_ids)}
    order = [rows_b[q] for q in a.query_ids]
    for m in measures:
        np.testing.assert_array_equal(a.column(m), b.column(m)[order], err_msg=str(m))


@pytest.mark.parametrize("family", RUN_FAMILIES, ids=[f.name for f in RUN_FAMILIES])
def test_deterministic(family: Family) -> None:
    run_dict, qrels_dict = _random_inputs(7)
    run, qrels = Run.from_dict(run_dict), Qrels.from_dict(qrels_dict)
    measures = _measures(family)
    side = _side_inputs(family, run_dict, qrels_dict)
    first = evaluate(run, qrels, measures, **side).run
    again = evaluate(run, qrels, measures + measures, **side).run
    assert again.measures == first.measures, "a repeated measure is evaluated once"
    np.testing.assert_array_equal(first.values, again.values)
    for m in measures:
        # alone, it gives the same values as next to the others (no shared state leaks)
        alone = evaluate(run, qrels, [m], **side).run
        np.testing.assert_array_equal(alone.column(m), first.column(m), err_msg=str(m))


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_family_metadata(family: Family) -> None:
    assert family.summary.strip(), f"{family.name} has no summary"
    assert family.aggregate in ("mean", "sum", "gmean")
    assert family.cutoff in ("none", "optional", "required")
    assert REGISTRY.family(family.name) is family
    for m in _measures(family):
        assert m.spec is family


#: every family with a rank cutoff (a float cutoff is a recall level, not swept over K)
SWEPT = [f for f in RUN_FAMILIES if f.cutoff != "none" and f.cutoff_type is int]


@pytest.mark.parametrize("family", SWEPT, ids=[f.name for f in SWEPT])
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_sweep_at_k_is_the_single_k_evaluation(family: Family, seed: int) -> None:
    """One name, one number: ``m`` swept over K gives at each K exactly (bit for bit, per
    query) what an evaluation of ``m@K`` alone gives, for every family with a cutoff."""
    run_dict, qrels_dict = _random_inputs(seed)
    run, qrels = Run.from_dict(run_dict), Qrels.from_dict(qrels_dict)
    side = _side_inputs(family, run_dict, qrels_dict, seed)
    ks = [1, 2, 3, 5, 8]
    base = REGISTRY.make(family.name, None, {})
    swept = sweep(run, qrels, [base], ks, **side).evaluation.run
    for k in ks:
        m = REGISTRY.make(family.name, k, {})
        # context_k is the CLI's --k N: it must not change a measure whose name has @K
        single = evaluate(run, qrels, [m], context_k=1, **side).run
        assert single.measures == (m,)
        np.testing.assert_array_equal(swept.column(m), single.column(m), err_msg=str(m))
        assert swept.aggregate(m).value == single.aggregate(m).value, str(m)


WORDS = ["Paris", "is", "the", "capital", "of", "France", "a", "cat", "日本", "东京", "", "!"]


def _random_samples(seed: int) -> list[AnswerSample]:
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))

    return [
        AnswerSample(
            id=f"s{i}",
            query=text(),
            context=tuple(text() for _ in range(rng.randint(0, 3))),
            generated_answer=text(),
            reference_answer=text(),
            retrieved=None if rng.random() < 0.3 else tuple(text() for _ in range(3)),
        )
        for i in range(rng.randint(1, 8))
    ]


def _sample_measures(family: Family) -> list[Measure]:
    if family.name in ("rouge_l", "bleu"):
        pytest.importorskip("rouge_score" if family.name == "rouge_l" else "sacrebleu")
    return _measures(family)


@pytest.mark.parametrize("family", SAMPLE_FAMILIES, ids=[f.name for f in SAMPLE_FAMILIES])
@pytest.mark.parametrize("seed", SEEDS)
def test_sample_family_one_float_per_sample(family: Family, seed: int) -> None:
    samples = _random_samples(seed)
    result = evaluate_samples(samples, _sample_measures(family)).run
    assert list(result.query_ids) == [s.id for s in samples]
    for j, m in enumerate(result.measures):
        _check_values(result.values[:, j], len(samples), str(m))
        agg = result.aggregate(m)
        assert agg.n == len(samples)
        assert agg.n_defined == int((~np.isnan(result.values[:, j])).sum())


@pytest.mark.parametrize("family", SAMPLE_FAMILIES, ids=[f.name for f in SAMPLE_FAMILIES])
def test_sample_family_is_per_sample(family: Family) -> None:
    """A sample's value does not depend on the others, their order or the measures beside it,
    and a run is refused with a message naming the per-sample entry."""
    samples = _random_samples(11)
    measures = _sample_measures(family)
    together = evaluate_samples(samples, measures).run
    backwards = evaluate_samples(samples[::-1], list(reversed(measures))).run
    for m in measures:
        np.testing.assert_array_equal(together.column(m), backwards.column(m)[::-1], str(m))
        for i, s in enumerate(samples):
            alone = evaluate_samples([s], [m]).run.column(m)
            np.testing.assert_array_equal(alone, together.column(m)[i : i + 1], str(m))
    with pytest.raises(MissingInputError, match="evaluate_samples"):
        evaluate(Run.from_dict({"q": {"a": 1.0}}), Qrels.from_dict({"q": {"a": 1}}), measures)


@pytest.mark.parametrize("seed", SEEDS)
def test_sample_families_match_the_answers_report(seed: int) -> None:
    """The registered families give ``ragmeter answers``'s per-sample numbers."""
    from ragmeter.metrics.answers import evaluate_answers

    samples = _random_samples(seed)
    report = evaluate_answers(samples, k=1, text_metrics=("token_f1", "exact_match"))
    names = ["keyword_overlap", "context_coverage", "containment@1", "token_f1", "exact_match"]
    result = evaluate_samples(samples, names).run
    for row, values in zip(report["per_sample"], result.values.tolist(), strict=True):
        for name, value in zip(names, values, strict=True):
            want = row[name.split("@")[0]]
            assert (value != value and want is None) or value == want, (name, row["id"])
