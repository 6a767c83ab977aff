"""UDCG@K (Trappolini et al. 2025), position-free released form: hand values and a plain
transcription of the formula."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import InputError, Qrels, Run, evaluate
from ragmeter.errors import MissingInputError
from ragmeter.io.utilities import Utilities, read_utilities, reference_run_and_qrels


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _udcg(ranked: list[str], relevant: set[str], u: dict[str, float], k: int, w_irr: float):
    """The formula, written out: σ(mean of rel·u + w_irr·(1 − rel)·u over the top k)."""
    context = ranked[:k]
    if not context:
        return 0.0
    total = sum(u[d] if d in relevant else w_irr * u[d] for d in context)
    return _sigmoid(total / len(context))


def _values(ranked, judged, utilities, names, **kw):
    return (
        evaluate(
            Run.from_lists({"q": ranked}),
            Qrels.from_dict({"q": judged}),
            names,
            utilities=Utilities.from_dict({"q": utilities}),
            **kw,
        )
        .run.values[0]
        .tolist()
    )


def test_hand_values() -> None:
    u = {"a": 0.9, "b": 0.6, "c": 0.3}
    # relevant a (0.9), irrelevant b (0.6): σ((0.9 − 0.6/3) / 2) = σ(0.35)
    k2, k1, k5 = _values(["a", "b", "c"], {"a": 1}, u, ["udcg@2", "udcg@1", "udcg@5"])
    assert k2 == pytest.approx(1 / (1 + math.exp(-0.35)))
    assert k1 == pytest.approx(1 / (1 + math.exp(-0.9)))
    # K = 5 over 3 items: |C| = 3 → σ((0.9 − 0.2 − 0.1) / 3) = σ(0.2)
    assert k5 == pytest.approx(1 / (1 + math.exp(-0.2)))
    # w_irr = −1: σ((0.9 − 0.6) / 2) = σ(0.15); grade 1 below rel_level 2 is irrelevant
    (v,) = _values(["a", "b"], {"a": 1}, u, ["udcg@2(w_irr=-1)"])
    assert v == pytest.approx(1 / (1 + math.exp(-0.15)))
    (v,) = _values(["a", "b"], {"a": 1}, u, ["udcg@2(rel_level=2)"])
    assert v == pytest.approx(1 / (1 + math.exp(-(-0.3 - 0.2) / 2)))


def test_empty_context_scores_zero_and_missing_utilities() -> None:
    ev = evaluate(
        Run.from_lists({"other": ["a"]}),
        Qrels.from_dict({"q": ["a"]}),
        ["udcg@3"],
        utilities=Utilities.from_dict({"q": {"a": 0.5}}),
    )
    assert ev.run.values[0].tolist() == [0.0]
    with pytest.raises(InputError, match=r"query 'q', doc 'b' \(rank 2\) has no utility"):
        _values(["a", "b"], {"a": 1}, {"a": 0.5}, ["udcg@2"])
    # outside the cutoff a missing utility does not matter
    assert _values(["a", "b"], {"a": 1}, {"a": 0.5}, ["udcg@1"]) == [pytest.approx(_sigmoid(0.5))]
    with pytest.raises(MissingInputError, match="--utilities"):
        evaluate(Run.from_lists({"q": ["a"]}), Qrels.from_dict({"q": ["a"]}), ["udcg@1"])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefgh"), max_size=8, unique=True),
    st.sets(st.sampled_from("abcdefgh")),
    st.lists(st.floats(0, 1), min_size=8, max_size=8),
    st.integers(1, 10),
    st.floats(-2, 0),
)
def test_agrees_with_the_formula(
    ranked: list[str], relevant: set[str], us: list[float], k: int, w_irr: float
) -> None:
    u = dict(zip("abcdefgh", us, strict=True))
    judged = {d: (1 if d in relevant else 0) for d in "abcdefgh"}
    (v,) = _values(ranked, judged, u, [f"udcg@{k}(w_irr={w_irr!r})"])
    assert v == pytest.approx(_udcg(ranked, relevant, u, k, w_irr), rel=1e-12, abs=1e-12)


def test_reader_formats(tmp_path: Path) -> None:
    text = tmp_path / "u.txt"
    text.write_text("# qid doc utility\nq1 a 0.25\nq1 b 1\n")
    rows = tmp_path / "u.jsonl"
    rows.write_text(
        '{"qid": "q1", "docid": "a", "utility": 0.25}\n'
        '{"query_id": "q1", "doc_id": "b", "no_res_prob": 0.0}\n'
    )
    for path in (text, rows):
        got = read_utilities(path)
        assert got.lookup(["q1", "q1", "q2"], _ids(["a", "b", "a"])).tolist()[:2] == [0.25, 1.0]
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 a 1.5\n")
    with pytest.raises(InputError, match=r"outside \[0, 1\]"):
        read_utilities(bad)
    dup = tmp_path / "dup.txt"
    dup.write_text("q1 a 0.5\nq1 a 0.5\n")
    with pytest.raises(InputError, match="given twice"):
        read_utilities(dup)


def _ids(values: list[str]):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.array(values, type=pa.string())


def test_reference_format_reproduces_its_scores(tmp_path: Path) -> None:
    model = "meta-llama/Llama-3.2-3B-Instruct"
    data = [
        {
            "example_id": "ex1",
            "question": "What is the capital of France?",
            "passages": [
                {
                    "doc_id": "d1",
                    "text": "...",
                    "is_relevant": True,
                    "models_info": {model: {"no_res_prob": 0.1}},
                },
                {
                    "doc_id": "d2",
                    "text": "...",
                    "is_relevant": False,
                    "models_info": {model: {"no_res_prob": 0.4}},
                },
                {
                    "doc_id": "d3",
                    "text": "...",
                    "is_relevant": False,
                    "models_info": {model: {"no_res_prob": 0.7}},
                },
            ],
        },
        {"example_id": "ex2", "question": "?", "passages": []},
    ]
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(data))
    run, qrels = reference_run_and_qrels(path)
    ev = evaluate(run, qrels, ["udcg@10"], utilities=read_utilities(path, model=model))
    # the reference: σ((0.9·1 + 0.6·(−1/3) + 0.3·(−1/3)) / 3) = σ(0.2); ex2 has no passage:
    # not a query of the qrels, so not evaluated
    assert ev.run.values[:, 0].tolist() == [pytest.approx(_sigmoid((0.9 - 0.3) / 3))]
    with pytest.raises(InputError, match="need a model"):
        read_utilities(path)
    with pytest.raises(InputError, match="no passage has model 'x'"):
        read_utilities(path, model="x")
