"""Which queries to label: the sampling designs' inclusion probabilities (by hand, and the
empirical inclusion frequency over many seeds), the queue file, and ``ragmeter sample``."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.data import example_path
from ragmeter.errors import InputError
from ragmeter.io.label_queue import QueueEntry, read_label_queue, write_label_queue
from ragmeter.stats.sampling import (
    active_probabilities,
    draw,
    proportional_allocation,
    quantile_strata,
)


def test_active_probabilities_by_hand() -> None:
    # share = (.75, .25, 0, 0); π = 2·(½·share + ½/4)
    assert active_probabilities([3, 1, 0, 0], 2, 0.5) == pytest.approx([1.0, 0.5, 0.25, 0.25])
    # 2·(0.8·(1, 0, 0, 0) + 0.2/4) = (1.7, .1, .1, .1): the first capped at 1, the one left
    # spread over the others in proportion: 1/3 each
    assert active_probabilities([10, 0, 0, 0], 2, 0.2) == pytest.approx([1.0, 1 / 3, 1 / 3, 1 / 3])
    assert active_probabilities([0, 0, 0], 1, 0.1) == pytest.approx([1 / 3] * 3)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 100, allow_nan=False), min_size=2, max_size=40),
    st.floats(0.01, 1.0),
    st.data(),
)
def test_active_probabilities_sum_to_n_above_the_floor(
    u: list[float], mix: float, data: st.DataObject
) -> None:
    n = data.draw(st.integers(1, len(u)))
    pi = active_probabilities(u, n, mix)
    assert sum(pi) == pytest.approx(n)
    assert all(mix * n / len(u) - 1e-9 <= p <= 1.0 for p in pi)


def test_allocation_and_strata_by_hand() -> None:
    # 8·(8, 8, 7, 7)/30 = (2.13, 2.13, 1.87, 1.87): floors (2, 2, 1, 1), the two largest
    # remainders (strata 2 and 3) get one more
    assert proportional_allocation([8, 8, 7, 7], 8) == [2, 2, 2, 2]
    # 3·(10, 5, 5)/20 = (1.5, .75, .75): floors (1, 0, 0), remainders (.5, .75, .75)
    assert proportional_allocation([10, 5, 5], 3) == [1, 1, 1]
    # 2·(1, 1, 1, 1)/4 = .5 each: floors 0, ties to the lower strata, (1, 1, 0, 0): strata 2
    # and 3 could never be drawn, refused
    with pytest.raises(ValueError, match="stratum 2 would get no draw"):
        proportional_allocation([1, 1, 1, 1], 2)
    # ranks: 0.1, 0.3, 0.5, NaN → strata (rank·2)//4 = 0, 0, 1, 1
    assert quantile_strata([0.5, 0.1, math.nan, 0.3], 2) == [1, 0, 1, 0]


@pytest.mark.parametrize("strategy", ["random", "stratified", "active"])
def test_probabilities_sum_to_n_and_draws_have_size_n(strategy: str) -> None:
    rng = random.Random(5)
    values = [rng.random() for _ in range(23)]
    unc = [rng.random() ** 3 for _ in range(23)]
    for seed in range(20):
        d = draw(strategy, 7, size=23, seed=seed, values=values, uncertainty=unc, strata=3)
        assert len(d.chosen) == len(set(d.chosen)) == 7
        assert sum(d.probabilities) == pytest.approx(7)


@pytest.mark.parametrize("strategy", ["random", "stratified", "active"])
def test_inclusion_frequency_matches_pi(strategy: str) -> None:
    """Over 4,000 seeds each unit is drawn a share of times within 4.5 standard errors of
    its π_i (binomial), for every design."""
    values = [0.9, 0.1, 0.4, 0.4, 0.7, 0.2, 0.8, 0.3, 0.6, 0.5, 0.05, 0.95]
    unc = [5.0, 0.0, 0.1, 2.0, 0.0, 1.0, 0.3, 0.0, 4.0, 0.2, 0.0, 0.7]
    runs = 4000
    counts = np.zeros(len(values))
    pi = None
    for seed in range(runs):
        d = draw(strategy, 4, size=12, seed=seed, values=values, uncertainty=unc, strata=3)
        counts[list(d.chosen)] += 1
        pi = np.asarray(d.probabilities)
    assert pi is not None
    freq = counts / runs
    se = np.sqrt(pi * (1 - pi) / runs)
    assert np.all(np.abs(freq - pi) <= 4.5 * se + 1e-12), (freq, pi)


def test_same_seed_same_draw() -> None:
    unc = [float(i % 5) for i in range(30)]
    a = draw("active", 6, size=30, seed=11, uncertainty=unc)
    assert a == draw("active", 6, size=30, seed=11, uncertainty=unc)
    assert a.chosen != draw("active", 6, size=30, seed=12, uncertainty=unc).chosen


def test_pair_uncertainty_by_hand() -> None:
    from ragmeter.analysis.label_sampling import default_threshold, pair_uncertainty

    # threshold 4: the boundary between 3 and 4 is at 3.5
    assert pair_uncertainty([3], 4) == 1.0 and pair_uncertainty([4], 4) == 1.0
    assert pair_uncertainty([5], 4) == 0.5 and pair_uncertainty([1], 4) == 0.25
    assert pair_uncertainty([None], 4) == 1.0
    assert pair_uncertainty([3, 3, 5], 4) == pytest.approx(1 - 2 / 3)  # disagreement
    assert pair_uncertainty([2, 2, None], 4) == 0.0
    assert default_threshold({"q": {"a": 1, "b": 5}}) == 4
    assert default_threshold({"q": {"a": 0, "b": 3, "c": -1}}) == 2


def test_queue_round_trip_and_refusals(tmp_path: Path) -> None:
    entries = [
        QueueEntry("q1", ("a", "b"), "active", 0.25, None, {"uncertainty": 0.5}),
        QueueEntry("q2", ("c",), "active", 1.0),
    ]
    path = tmp_path / "queue.jsonl"
    write_label_queue(entries, path)
    queue = read_label_queue(path)
    assert queue.entries == tuple(entries)
    assert queue.probabilities() == {"q1": 0.25, "q2": 1.0}
    path.write_text('{"query_id": "q1", "docs": ["a"], "strategy": "active"}\n')
    with pytest.raises(InputError) as err:
        read_label_queue(path)
    text = str(err.value)
    assert "line 1" in text and "inclusion_probability" in text and "1/π" in text
    path.write_text('{"query_id": "q1", "docs": ["a"], "strategy": "random"}\n')
    assert read_label_queue(path).probabilities() == {"q1": None}
    for bad, field in [
        (
            '{"query_id": "q1", "docs": ["a"], "strategy": "random", "inclusion_probability": 0}',
            "inclusion_probability",
        ),
        ('{"query_id": "q1", "docs": "a", "strategy": "random"}', "docs"),
        ('{"docs": [], "strategy": "random"}', "query_id"),
    ]:
        path.write_text('{"query_id": "q0", "docs": [], "strategy": "random"}\n' + bad + "\n")
        with pytest.raises(InputError, match=f"line 2.*{field}"):
            read_label_queue(path)


def example_run(tmp: Path) -> Path:
    queries = [json.loads(x)["id"] for x in example_path("queries.jsonl").open()]
    docs = [json.loads(x)["id"] for x in example_path("corpus.jsonl").open()]
    rng = random.Random(2)
    run = tmp / "run.txt"
    with run.open("w") as f:
        for q in queries:
            for r, d in enumerate(rng.sample(docs, 15), start=1):
                f.write(f"{q} Q0 {d} {r} {100 - r} sys\n")
    return run


@pytest.mark.parametrize("strategy", ["random", "stratified", "active"])
def test_sample_command_writes_the_queue(tmp_path: Path, strategy: str) -> None:
    run = example_run(tmp_path)
    out = tmp_path / "queue.jsonl"
    argv = ["sample", str(run), "--qrels", str(example_path("qrels.txt")), "--n", "8"]
    argv += ["--strategy", strategy, "--seed", "3", "--depth", "5", "--out", str(out)]
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "of 30 queries drawn" in result.output
    queue = read_label_queue(out)
    assert len(queue.entries) == 8
    ranked: dict[str, list[str]] = {}
    for line in run.open():
        q, _, d, *_ = line.split()
        ranked.setdefault(q, []).append(d)
    for e in queue.entries:
        assert list(e.docs) == ranked[e.query_id][:5]
        assert e.strategy == strategy and e.inclusion_probability is not None
        assert (e.stratum is not None) == (strategy == "stratified")
    if strategy == "random":
        assert all(e.inclusion_probability == pytest.approx(8 / 30) for e in queue.entries)
    first = out.read_text()
    assert CliRunner().invoke(app, argv).exit_code == 0
    assert out.read_text() == first  # the seed reproduces the queue


def test_sample_command_refuses_bad_n(tmp_path: Path) -> None:
    run = example_run(tmp_path)
    argv = ["sample", str(run), "--qrels", str(example_path("qrels.txt")), "--n", "31"]
    result = CliRunner().invoke(app, [*argv, "--out", str(tmp_path / "q.jsonl")])
    assert result.exit_code == 2 and "n = 31" in result.output


def test_several_labels_note() -> None:
    from ragmeter.analysis.label_sampling import several_labels_note
    from ragmeter.core.provenance import LabelProvenance, LabelSource, human_source

    judge = LabelSource(kind="judge", model="m", samples=3)
    assert "--judge-labels" in (several_labels_note(LabelProvenance.single(judge), 1) or "")
    assert several_labels_note(LabelProvenance.single(judge), 3) is None
    assert several_labels_note(LabelProvenance.single(human_source()), 1) is None
    assert several_labels_note(None, 1) is None


def test_active_with_label_sets_uses_their_disagreement(tmp_path: Path) -> None:
    qrels = example_path("qrels.txt")
    lines = qrels.read_text().splitlines()
    run = tmp_path / "run.txt"  # each query's judged passages: both label sets grade them all
    run.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {1000 - i} s\n"
            for i, (q, _, d, g) in enumerate(x.split() for x in lines)
        )
    )
    other = tmp_path / "other.txt"
    # a second judge that disagrees with the first on q01 only (grade 6 − g)
    other.write_text(
        "".join(
            (f"{q} 0 {d} {6 - int(g)}\n" if q == "q01" else f"{q} 0 {d} {g}\n")
            for q, _, d, g in (x.split() for x in lines)
        )
    )
    out = tmp_path / "queue.jsonl"
    argv = ["sample", str(run), "--qrels", str(qrels), "--n", "5", "--strategy", "active"]
    argv += ["--judge-labels", str(qrels), "--judge-labels", str(other), "--out", str(out)]
    argv += ["--mix", "0.5"]
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "disagreement of 2 label sets" in result.output
    # every query's uncertainty but q01's is 0: π = 5·(½·[q = q01] + ½/30): q01's 2.58 is
    # capped at 1, the other 29 share the 4 left evenly: 4/29 each
    entries = {e.query_id: e for e in read_label_queue(out).entries}
    for q, e in entries.items():
        expected = 1.0 if q == "q01" else 4 / 29
        assert e.inclusion_probability == pytest.approx(expected)


def test_a_queue_is_a_labelled_queries_file_with_its_probabilities(tmp_path: Path) -> None:
    """``evaluate --ppi --labelled-queries QUEUE.jsonl``: the queue's queries in its order,
    weighted by the π it gives; a queue with π on some lines only is refused."""
    from ragmeter.io.labelled import read_labelled_queries

    path = tmp_path / "queue.jsonl"
    write_label_queue(
        [QueueEntry("q2", ("a",), "active", 0.5), QueueEntry("q1", ("b",), "active", 0.125)],
        path,
    )
    assert read_labelled_queries(path) == (("q2", "q1"), {"q2": 0.5, "q1": 0.125})
    write_label_queue(
        [QueueEntry("q2", ("a",), "random"), QueueEntry("q1", ("b",), "random")], path
    )
    assert read_labelled_queries(path) == (("q2", "q1"), None)
    write_label_queue(
        [QueueEntry("q2", ("a",), "random", 0.5), QueueEntry("q1", ("b",), "random")], path
    )
    with pytest.raises(InputError, match="'q1' has no inclusion probability"):
        read_labelled_queries(path)
