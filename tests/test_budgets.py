"""Token budgets for the set-based measures (SPEC §3): ``ra_nwg@Bt``, ``proc@Bt``.

The selection is the longest prefix of the run within B tokens; the ideal is the best subset
of the labelled pool within B (0/1 knapsack). Expected values are computed by hand or by a
brute force over all subsets, never from ragmeter's output.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import InputError, MeasureError, Qrels, Run, evaluate
from ragmeter.errors import MissingInputError
from ragmeter.io.lengths import PassageLengths, make_token_counter, read_passage_lengths
from ragmeter.measures import parse_measure

# grades [5, 4, 4, 3]: p5 = 1/4, p4 = 1/2, p3 = 1/4 → r5 = 4, r4 = 1, r3 = 0.4
# → w4 = min(1/4, 1) = 0.25, w3 = min(0.4/4, 0.25) = 0.1
JUDGED = {"a5": 5, "b4": 4, "c4": 4, "d3": 3}
LENGTHS = {"a5": 300, "b4": 100, "c4": 100, "d3": 50, "zz": 10}


def _values(ranked: list[str], names: list[str], lengths: dict[str, int] = LENGTHS, **kw: object):
    result = evaluate(
        Run.from_lists({"q": ranked}),
        Qrels.from_dict({"q": JUDGED}),
        names,
        passage_lengths=PassageLengths.from_dict(lengths),
        **kw,
    )
    return result.run.values[0].tolist()


def test_hand_computed_budgets() -> None:
    # B = 300: the knapsack takes a5 alone (1.0) over b4 + c4 + d3 (0.6, 250 tokens).
    # Run [b4, d3, a5]: 100 + 50 fit, + 300 does not → G_obs = 0.25 + 0.1 = 0.35.
    ra, proc = _values(["b4", "d3", "a5"], ["ra_nwg@300t", "proc@300t"])
    assert ra == pytest.approx(0.35 / 1.0)
    assert proc == 1.0  # the run (its own pool) holds a5
    # B = 299: a5 never fits; the best is b4 + c4 + d3 = 0.6 (250 tokens)
    ra, proc, pct = _values(["b4", "d3", "a5"], ["ra_nwg@299t", "proc@299t", "pct_proc@299t"])
    assert ra == pytest.approx(0.35 / 0.6)
    assert proc == pytest.approx(0.35 / 0.6)  # pool's best within 299: b4 + d3 (c4 not pooled)
    assert pct == pytest.approx(1.0)


def test_prefix_stops_at_the_first_passage_that_does_not_fit() -> None:
    # [a5, zz, b4] with B = 305: a5 (300) fits, a5 + zz = 310 > 305 does not,
    # so the prefix is [a5]: later passages are not considered; G_obs = 1.
    (ra,) = _values(["a5", "zz", "b4"], ["ra_nwg@305t"])
    assert ra == pytest.approx(1.0 / 1.0)  # ideal within 305: a5 (1.0) vs b4+c4+d3 (0.6)
    # a first passage longer than B leaves an empty selection
    (ra,) = _values(["a5", "b4"], ["ra_nwg@200t"])
    assert ra == 0.0  # ideal within 200: b4 + c4 = 0.5 > 0


def test_zero_length_passages_and_na() -> None:
    lengths = {**LENGTHS, "d3": 0}
    # B = 100: ideal = b4 (or c4) + d3 (free) = 0.35; run [d3, b4] → 0.35
    assert _values(["d3", "b4"], ["ra_nwg@100t"], lengths) == [pytest.approx(1.0)]
    # nothing with weight fits in B = 10 except d3 when it is free; with d3 = 50: NA
    (ra,) = _values(["zz"], ["ra_nwg@10t"])
    assert math.isnan(ra)


def test_budget_names_round_trip() -> None:
    m = parse_measure("ra_nwg@512t")
    assert m.budget == 512 and m.k is None and str(m) == "ra_nwg@512t"
    assert parse_measure("ra_nwg(budget=512)") == m
    assert parse_measure(str(m)) == m
    m2 = parse_measure("proc@64t(alpha=0)")
    assert str(m2) == "proc@64t(alpha=0.0)" and parse_measure(str(m2)) == m2
    with pytest.raises(MeasureError, match="either a cutoff"):
        parse_measure("ra_nwg@5(budget=10)")
    with pytest.raises(MeasureError, match="takes no token budget"):
        parse_measure("n_recall4p@10t")
    with pytest.raises(MeasureError, match="≥ 1"):
        parse_measure("ra_nwg@0t")


def test_missing_lengths_are_errors() -> None:
    with pytest.raises(InputError, match="no length for retrieved doc 'new' of query 'q'"):
        _values(["b4", "new"], ["ra_nwg@300t"])
    with pytest.raises(InputError, match="judged doc 'd3'"):
        _values(["b4"], ["ra_nwg@300t"], {"b4": 1, "a5": 1, "c4": 1})
    with pytest.raises(MissingInputError, match="passage lengths"):
        evaluate(Run.from_lists({"q": ["a5"]}), Qrels.from_dict({"q": JUDGED}), ["ra_nwg@9t"])


# -- a brute force reference ------------------------------------------------------------------

BASE = {5: 1.0, 4: 0.5, 3: 0.1, 2: 0.0, 1: 0.0}


def _weights(grades: list[int]) -> dict[int, float]:
    n = len(grades)
    count = {g: grades.count(g) for g in range(1, 6)}
    if count[5] == 0:
        return {5: 1.0, 4: 1.0, 3: 0.2, 2: 0.0, 1: 0.0}
    r = {g: (BASE[g] / (count[g] / n) if count[g] else 0.0) for g in range(1, 6)}
    return {5: 1.0, 4: min(r[4] / r[5], 1.0), 3: min(r[3] / r[5], 0.25), 2: 0.0, 1: 0.0}


def _brute_best(items: list[tuple[float, int]], budget: int) -> float:
    best = 0.0
    for n in range(len(items) + 1):
        for subset in itertools.combinations(items, n):
            if sum(t for _, t in subset) <= budget:
                best = max(best, sum(w for w, _ in subset))
    return best


DOCS = [f"d{i}" for i in range(9)]


@st.composite
def budget_case(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, int], list[str], int]:
    judged_docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
    judged = {d: draw(st.integers(1, 5)) for d in judged_docs}
    lengths = {d: draw(st.integers(0, 60)) for d in DOCS}
    run = draw(st.lists(st.sampled_from(DOCS), max_size=9, unique=True))
    return judged, lengths, run, draw(st.integers(1, 150))


@settings(max_examples=150, deadline=None)
@given(budget_case())
def test_knapsack_agrees_with_brute_force(
    case: tuple[dict[str, int], dict[str, int], list[str], int],
) -> None:
    judged, lengths, run, budget = case
    w = _weights(list(judged.values()))
    ideal = _brute_best([(w[g], lengths[d]) for d, g in judged.items()], budget)
    pooled = _brute_best([(w[g], lengths[d]) for d, g in judged.items() if d in run], budget)
    observed, used = 0.0, 0
    for d in run:
        if used + lengths[d] > budget:
            break
        used += lengths[d]
        observed += w[judged[d]] if d in judged else 0.0
    ra, proc = (
        evaluate(
            Run.from_lists({"q": run}),
            Qrels.from_dict({"q": judged}),
            [f"ra_nwg@{budget}t", f"proc@{budget}t"],
            passage_lengths=PassageLengths.from_dict(lengths),
        )
        .run.values[0]
        .tolist()
    )
    if ideal == 0:
        assert math.isnan(ra) and math.isnan(proc)
    else:
        assert ra == pytest.approx(observed / ideal, rel=1e-12, abs=1e-12)
        assert proc == pytest.approx(pooled / ideal, rel=1e-12, abs=1e-12)
        assert ra <= proc + 1e-12  # the selection is a subset of its own pool within B


# -- reading lengths ---------------------------------------------------------------------------


def test_read_lengths_from_files(tmp_path: Path) -> None:
    rows = [{"id": "a", "text": "one two  three"}, {"id": "b", "length": 7}]
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    tsv = tmp_path / "corpus.tsv"
    tsv.write_text("id\ttext\na\tone two  three\nb\tx y z w v u t\n")
    csv_file = tmp_path / "corpus.csv"
    csv_file.write_text("doc_id,length\na,3\nb,7\n")
    for path in (jsonl, tsv, csv_file):
        corpus = read_passage_lengths(path)
        assert corpus.lookup(corpus.doc_ids).tolist() == [3, 7]
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["one two  three", ""]}), parquet)
    assert read_passage_lengths(parquet).lengths.tolist() == [3, 0]


def test_read_lengths_errors(tmp_path: Path) -> None:
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "a", "length": 1}\n{"id": "a", "length": 2}\n')
    with pytest.raises(InputError, match="doc 'a' appears twice"):
        read_passage_lengths(dup)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "length": -1}\n')
    with pytest.raises(InputError, match="whole number"):
        read_passage_lengths(bad)
    none = tmp_path / "none.jsonl"
    none.write_text('{"id": "a", "title": "t"}\n')
    with pytest.raises(InputError, match="no text or length"):
        read_passage_lengths(none)


def test_token_counters() -> None:
    assert make_token_counter()(["a b\tc\n d", "", "  "]).tolist() == [4, 0, 0]
    with pytest.raises(MissingInputError, match="unknown tokenizer"):
        make_token_counter("bpe")
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        with pytest.raises(MissingInputError, match="pip install tiktoken"):
            make_token_counter("tiktoken:cl100k_base")
