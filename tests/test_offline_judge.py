"""Offline judge: cosine → grade thresholds, batching, qrels output, and the real encoder."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.io.readers import read_qrels
from ragmeter.judges.offline import (
    ANSWERABILITY_THRESHOLDS,
    RELEVANCE_THRESHOLDS,
    OfflineJudge,
    cosine_pairs,
    grade_from_cosine,
    judge_relevance_offline,
    offline_judge,
    write_offline_qrels,
)


class AngleEncoder:
    """Texts 'q' → (1, 0); 'p:<c>' → the unit vector whose cosine with 'q' is c."""

    dimension = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            c = 1.0 if text == "q" else float(text.split(":")[1])
            rows.append([c, math.sqrt(max(0.0, 1.0 - c * c))])
        return np.asarray(rows, dtype=np.float32)


def test_relevance_thresholds_by_hand() -> None:
    assert RELEVANCE_THRESHOLDS == (0.35, 0.45, 0.55, 0.65)
    cases = {-1.0: 1, 0.0: 1, 0.3499: 1, 0.35: 2, 0.4499: 2, 0.45: 3, 0.55: 4, 0.6499: 4}
    cases |= {0.65: 5, 1.0: 5}
    for cosine, grade in cases.items():
        assert grade_from_cosine(cosine) == grade, cosine


def test_answerability_ratings_start_at_zero() -> None:
    cuts = ANSWERABILITY_THRESHOLDS
    assert [grade_from_cosine(c, cuts, lowest=0) for c in (0.0, 0.35, 0.5, 0.58, 0.6, 0.99)] == [
        0,
        1,
        2,
        3,
        4,
        5,
    ]


def test_nan_cosine_is_an_error_not_a_grade() -> None:
    with pytest.raises(ValueError, match="NaN"):
        grade_from_cosine(float("nan"))


@given(
    st.floats(-1, 1, allow_nan=False),
    st.floats(-1, 1, allow_nan=False),
)
def test_grades_are_monotone_and_in_range(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert 1 <= grade_from_cosine(lo) <= grade_from_cosine(hi) <= 5


def test_thresholds_must_ascend() -> None:
    with pytest.raises(ValueError, match="ascending"):
        OfflineJudge("relevance", thresholds=(0.5, 0.4, 0.6, 0.7))
    with pytest.raises(ValueError, match="relevance and answerability"):
        OfflineJudge("subquestions")


def test_model_name_says_weak_proxy_and_carries_thresholds() -> None:
    judge = OfflineJudge("relevance", thresholds=(0.1, 0.2, 0.3, 0.4))
    assert "weak proxy" in judge.model
    assert "0.1,0.2,0.3,0.4" in judge.model
    assert judge.model != OfflineJudge("relevance").model


def test_cosines_embed_each_distinct_text_once() -> None:
    encoder = AngleEncoder()
    pairs = [("q", "p:0.3"), ("q", "p:0.7"), ("q", "p:0.3")]
    cosines = cosine_pairs(pairs, encoder=encoder)  # type: ignore[arg-type]
    np.testing.assert_allclose(cosines, [0.3, 0.7, 0.3], atol=1e-6)
    assert encoder.calls == [["q", "p:0.3", "p:0.7"]]
    assert cosine_pairs([], encoder=encoder).shape == (0,)  # type: ignore[arg-type]


def test_judge_relevance_offline_grades_the_top_depth(tmp_path) -> None:  # type: ignore[no-untyped-def]
    judge = OfflineJudge("relevance", encoder=AngleEncoder())  # type: ignore[arg-type]
    corpus = {f"d{i}": f"p:{c}" for i, c in enumerate((0.1, 0.4, 0.5, 0.6, 0.9, 0.95))}
    rankings = {"q1": ["d4", "d0", "d2", "d3", "d1", "d5"], "q2": ["d1"]}
    labels = judge_relevance_offline(rankings, {"q1": "q", "q2": "q"}, corpus, depth=5, judge=judge)
    # cosines 0.9, 0.1, 0.5, 0.6, 0.4 → grades 5, 1, 3, 4, 2; d5 is below the depth
    assert labels == {"q1": {"d4": 5, "d0": 1, "d2": 3, "d3": 4, "d1": 2}, "q2": {"d1": 2}}
    path = tmp_path / "qrels.txt"
    write_offline_qrels(labels, path)
    assert read_qrels(path).to_dict() == labels


def test_unknown_ids_name_the_source() -> None:
    judge = OfflineJudge("relevance", encoder=AngleEncoder())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="query 'qx'"):
        judge_relevance_offline({"qx": ["d0"]}, {}, {"d0": "p:0.1"}, judge=judge)
    with pytest.raises(InputError, match="passage 'dx'"):
        judge_relevance_offline({"q1": ["dx"]}, {"q1": "q"}, {}, judge=judge)


def test_protocol_judgments_record_the_cosine() -> None:
    pytest.importorskip("ragmeter.judges.types", reason="the judge harness is not installed")
    judge = OfflineJudge("answerability", encoder=AngleEncoder())  # type: ignore[arg-type]
    task = type("Task", (), {"name": "answerability"})()
    out = judge.judge_many(task, [{"question": "q", "passage": "p:0.5"}])
    assert [(j.value, j.status, j.raw) for j in out] == [(2, "ok", "cosine=0.5000")]
    assert judge.judge(task, {"question": "q", "passage": "p:0.1"}).value == 0
    with pytest.raises(ValueError, match="grades answerability"):
        judge.judge(type("Task", (), {"name": "relevance"})(), {"query": "q", "passage": "x"})


def test_real_encoder_grades_a_relevant_passage_above_an_unrelated_one() -> None:
    pytest.importorskip("onnxruntime", reason="the models extra is not installed")
    judge = offline_judge("relevance")
    (relevant, cos_rel), (unrelated, cos_unrel) = judge.grade_texts(
        [
            (
                "How much does a monthly tram pass cost?",
                "A monthly pass for all tram and bus lines costs 49 euros.",
            ),
            (
                "How much does a monthly tram pass cost?",
                "Penguins live in the southern hemisphere.",
            ),
        ]
    )
    assert cos_rel > cos_unrel
    assert relevant > unrelated
    assert unrelated == 1


def test_cli_offline_relevance_writes_qrels_and_says_weak_proxy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("onnxruntime", reason="the models extra is not installed")
    from typer.testing import CliRunner

    from ragmeter.cli import app

    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "How much is a monthly pass?"}\n')
    (tmp_path / "c.jsonl").write_text(
        '{"id": "d1", "text": "The monthly pass costs 49 euros for all lines."}\n'
        '{"id": "d2", "text": "Penguins live in the south."}\n'
    )
    (tmp_path / "run.txt").write_text("q1 Q0 d2 1 2.0 s\nq1 Q0 d1 2 1.0 s\n")
    args = ["judge", "relevance", "--offline", "--run", str(tmp_path / "run.txt")]
    args += ["--queries", str(tmp_path / "q.jsonl"), "--corpus", str(tmp_path / "c.jsonl")]
    args += ["--out", str(tmp_path / "qrels.txt"), "--cache", str(tmp_path / "c.sqlite")]
    result = CliRunner().invoke(app, [*args, "--quiet"])
    assert result.exit_code == 0, result.output
    grades = {line.split()[2]: int(line.split()[3]) for line in (tmp_path / "qrels.txt").open()}
    assert set(grades) == {"d1", "d2"} and grades["d1"] > grades["d2"] == 1
    assert "weak proxy" in result.output
    assert read_qrels(tmp_path / "qrels.txt").to_dict() == {"q1": grades}
