"""Answer metrics (SPEC §5, seed 001): hand-computed cases, the reader's errors, the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.io.answers import answer_samples_from_records, read_answer_samples
from ragmeter.metrics import answers as am


def test_keywords_lowercase_unicode_and_length() -> None:
    # "a" and "I" are single characters: dropped; "Café" -> "café"; "naïve" is one \w+ token
    assert am.keywords("A cat, I think: Café naïve!") == {"cat", "think", "café", "naïve"}
    # a run of CJK characters is one token; "x" is dropped
    assert am.keywords("東京 タワー x") == {"東京", "タワー"}
    assert am.keywords("") == frozenset()
    # stopwords compared in lower case
    assert am.keywords("The cat and THE dog", stopwords={"the", "AND"}) == {"cat", "dog"}


def test_answer_correct_is_strict() -> None:
    # kw(ref) = {paris, is, the, capital, of, france} (6); gen shares 5 of them
    ref = "Paris is the capital of France"
    gen = "the capital of France is Paris"  # 6/6 = 1.0
    assert am.keyword_overlap(ref, gen) == 1.0 and am.answer_correct(ref, gen)
    # gen keeps {paris, capital, france} = 3/6 = 0.5 -> not > 0.7
    assert am.keyword_overlap(ref, "Paris capital France") == 0.5
    assert not am.answer_correct(ref, "Paris capital France")
    # 7/10 = 0.7 exactly: not correct at 0.7 (strict), correct at 0.69
    ref10 = "aa bb cc dd ee ff gg hh ii jj"
    gen7 = "aa bb cc dd ee ff gg"
    assert am.keyword_overlap(ref10, gen7) == pytest.approx(0.7)
    assert not am.answer_correct(ref10, gen7)
    assert am.answer_correct(ref10, gen7, threshold=0.69)
    # a reference without keywords: overlap NA, not correct
    assert am.keyword_overlap("a ?", "anything") is None
    assert not am.answer_correct("a ?", "anything")
    # stopwords shrink both sets: ref {capital, france} vs gen {capital} = 1/2
    assert am.keyword_overlap(ref, "capital", stopwords={"paris", "is", "the", "of"}) == 0.5


def test_confusion_and_rates() -> None:
    # (label, pred): (1,1) (1,1) (1,0) (0,1) (0,0) (0,0) -> TP 2, FN 1, FP 1, TN 2
    c = am.confusion([1, 1, 1, 0, 0, 0], [True, True, False, True, False, False])
    assert c.to_dict() == {"tp": 2, "fp": 1, "tn": 2, "fn": 1}
    assert am.accuracy(c) == pytest.approx(4 / 6)  # (2 + 2) / 6
    assert am.precision(c) == pytest.approx(2 / 3)  # 2 / (2 + 1)
    assert am.recall(c) == pytest.approx(2 / 3)  # 2 / (2 + 1)
    assert am.f1(c) == pytest.approx(4 / 6)  # 2*2 / (2*2 + 1 + 1)
    with pytest.raises(ValueError):
        am.confusion([1], [True, False])


def test_all_true_and_all_false_labels() -> None:
    # all labels 0, all predicted 0: TN 3; precision 0/0, recall 0/0, f1 0/0 -> NA
    c = am.confusion([0, 0, 0], [0, 0, 0])
    assert c.to_dict() == {"tp": 0, "fp": 0, "tn": 3, "fn": 0}
    assert am.accuracy(c) == 1.0
    assert am.precision(c) is None and am.recall(c) is None and am.f1(c) is None
    # all labels 0, one predicted 1: FP 1, TN 2; precision 0/1 = 0, recall 0/0 NA, f1 0/1 = 0
    c = am.confusion([0, 0, 0], [1, 0, 0])
    assert am.precision(c) == 0.0 and am.recall(c) is None and am.f1(c) == 0.0
    # all labels 1, all predicted 0: FN 2; precision 0/0 NA, recall 0/2 = 0, f1 0/2 = 0
    c = am.confusion([1, 1], [0, 0])
    assert am.precision(c) is None and am.recall(c) == 0.0 and am.f1(c) == 0.0
    assert am.accuracy(c) == 0.0
    # nothing at all: every rate NA
    empty = am.confusion([], [])
    assert am.accuracy(empty) is None and am.f1(empty) is None


def test_context_coverage_both_denominators() -> None:
    context = ["Paris is in France", "the Eiffel tower"]  # {paris,is,in,france,the,eiffel,tower}
    gen = "The Eiffel tower is in Lyon"  # {the,eiffel,tower,is,in,lyon}: 5 of 6 in context
    assert am.context_coverage(context, gen) == pytest.approx(5 / 6)
    # reference {eiffel, tower, paris} (3): intersection ctx ∩ gen is still 5 -> 5/3
    ref = "Eiffel tower, Paris"
    assert am.context_coverage(context, gen, denominator="reference", reference=ref) == (
        pytest.approx(5 / 3)
    )
    assert am.context_coverage("anything", "a ?") is None  # kw(gen) = ∅
    with pytest.raises(ValueError):
        am.context_coverage(context, gen, denominator="reference")


def test_containment_whitespace_and_case() -> None:
    texts = ["nothing here", "The  answer\n is\t42 ."]
    assert am.containment("answer is 42", texts) == 1  # "the answer is 42 ." after collapsing
    assert am.containment("ANSWER   is 42", texts) == 1  # case folded
    assert am.containment("ANSWER is 42", texts, case_sensitive=True) == 0
    assert am.containment("answer is 42", texts, case_sensitive=True) == 1
    assert am.containment("answer is 42", texts, k=1) == 0  # only "nothing here"
    # nothing to look for: NA (an empty string would be in every text), not 0
    assert am.containment("  ", texts) is None
    assert am.containment("Straße", ["STRASSE"]) == 1  # casefold, not lower


def test_latency_percentiles_match_numpy() -> None:
    rng = np.random.default_rng(7)
    gen = rng.uniform(0.1, 2.0, 37)
    timings: list[dict[str, float | None] | None] = [
        {"embed": 0.01, "retrieve": 0.02, "generate": float(g)} for g in gen
    ]
    timings[3] = {"embed": 0.01, "retrieve": 0.02, "generate": None}  # unrecorded stage
    timings[5] = None  # no timings at all
    out = am.latency(timings)
    assert set(out) == {"embed", "retrieve", "generate", "total"}  # rerank never recorded
    kept = np.delete(gen, [3, 5])
    g = out["generate"]
    assert (g.n, g.n_defined) == (37, 35)
    assert g.mean == pytest.approx(kept.mean())
    for q, got in ((50, g.p50), (95, g.p95), (99, g.p99)):
        assert got == pytest.approx(np.percentile(kept, q))
    # total = sum of recorded stages: sample 3 = 0.03, sample 5 none
    totals = np.delete(gen + 0.03, [5])
    totals[3] = 0.03
    t = out["total"]
    assert t.n_defined == 36 and t.mean == pytest.approx(totals.mean())
    assert t.p95 == pytest.approx(np.percentile(totals, 95))
    # an explicit total wins; NaN never enters
    assert am.sample_total({"total": 1.5, "embed": 9.0}) == 1.5
    s = am.summarize_latency([1.0, math.nan, None, 3.0])
    assert (s.mean, s.p50, s.n, s.n_defined) == (2.0, 2.0, 4, 2)
    assert am.summarize_latency([None]).mean is None


def _write(tmp_path: Path, doc: Any, name: str = "samples.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


SAMPLES = [
    # kw(ref) = {paris, capital} ; gen has both: 2/2 = 1 > 0.7 -> pred 1; label 1 -> TP
    # coverage: kw(gen) = {paris, capital, france} (3), context has {paris, france}: 2/3
    {
        "id": "q1",
        "query": "capital of France?",
        "context": ["Paris, France"],
        "generated_answer": "Paris capital France",
        "reference_answer": "Paris capital",
        "label": 1,
        "retrieved": ["The capital is  PARIS capital"],
        "timings": {"embed": 0.1, "retrieve": 0.2, "rerank": 0.0, "generate": 1.0},
    },
    # kw(ref) = {berlin, germany}; gen {munich}: 0/2 -> pred 0; label 1 -> FN
    # coverage: kw(gen) = {munich}; context {munich}: 1/1
    {
        "id": "q2",
        "query": "capital of Germany?",
        "context": ["Munich"],
        "generated_answer": "Munich",
        "reference_answer": "Berlin Germany",
        "label": 1,
        "timings": {"embed": 0.1, "retrieve": 0.3, "rerank": 0.0, "generate": 2.0},
    },
    # kw(ref) = {rome}; gen {rome}: 1/1 -> pred 1; label 0 -> FP; coverage 0/1 = 0
    {
        "query": "capital of Italy?",
        "context": [],
        "generated_answer": "Rome",
        "reference_answer": "Rome",
        "label": 0,
    },
]


def test_cli_json(tmp_path: Path) -> None:
    path = _write(tmp_path, SAMPLES)
    out = CliRunner().invoke(app, ["answers", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert body["confusion"] == {"tp": 1, "fp": 1, "tn": 0, "fn": 1}
    m = body["metrics"]
    assert m["accuracy"] == pytest.approx(1 / 3)  # (1 + 0) / 3
    assert m["precision"] == pytest.approx(1 / 2)  # 1 / (1 + 1)
    assert m["recall"] == pytest.approx(1 / 2)  # 1 / (1 + 1)
    assert m["f1"] == pytest.approx(1 / 2)  # 2 / (2 + 1 + 1)
    assert m["context_coverage"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    # containment of "Paris capital" only where retrieved is given (q1): "paris capital" found
    assert m["containment"] == 1.0
    ids = [s["id"] for s in body["per_sample"]]
    assert ids == ["q1", "q2", "2"]
    assert body["per_sample"][2]["containment"] is None
    # totals 1.3 and 2.4; the third sample has none
    total = body["latency"]["total"]
    assert total["n_defined"] == 2 and total["mean"] == pytest.approx(1.85)
    assert total["p50"] == pytest.approx(np.percentile([1.3, 2.4], 50))
    table = CliRunner().invoke(app, ["answers", str(path)])
    assert table.exit_code == 0 and "accuracy" in table.stdout


def test_cli_all_false_labels_give_null(tmp_path: Path) -> None:
    # no labels in the file; --label 0 labels every sample incorrect; predictions 1, 0, 1
    rows = [{k: v for k, v in s.items() if k != "label"} for s in SAMPLES]
    path = _write(tmp_path, rows)
    out = CliRunner().invoke(app, ["answers", str(path), "--label", "0", "--format", "json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert body["confusion"] == {"tp": 0, "fp": 2, "tn": 1, "fn": 0}
    assert body["metrics"]["recall"] is None  # 0 / 0
    assert body["metrics"]["precision"] == 0.0  # 0 / 2
    # without labels at all: nothing labeled, every rate null
    out = CliRunner().invoke(app, ["answers", str(path), "--format", "json"])
    m = json.loads(out.stdout)["metrics"]
    assert m["n_labeled"] == 0 and m["accuracy"] is None and m["f1"] is None
    # --threshold 1.0: nothing is > 1, all predicted 0 -> TN 3 with --label 0
    out = CliRunner().invoke(
        app, ["answers", str(path), "--label", "0", "--threshold", "1", "-f", "json"]
    )
    body = json.loads(out.stdout)
    assert body["confusion"]["tn"] == 3 and body["metrics"]["precision"] is None


@pytest.mark.parametrize(
    ("mutate", "needles"),
    [
        (
            lambda s: s.pop("generated_answer"),
            ["sample [1]", "'q2'", "generated_answer", "missing"],
        ),
        (lambda s: s.update(context="Munich"), ["sample [1]", "'context'", "an array"]),
        (lambda s: s.update(context=["ok", 3]), ["'context[1]'", "a number"]),
        (lambda s: s.update(label=2), ["'label'", "0 or 1"]),
        (lambda s: s.update(reference_answer=None), ["'reference_answer'", "null"]),
        (lambda s: s.update(timings={"llm": 1.0}), ["'timings.llm'", "unknown stage"]),
        (lambda s: s.update(timings={"embed": -1}), ["'timings.embed'", "non-negative"]),
        (lambda s: s.update(id="q1"), ["duplicate id"]),
    ],
)
def test_reader_errors_name_file_sample_and_field(
    tmp_path: Path, mutate: Any, needles: list[str]
) -> None:
    rows = json.loads(json.dumps(SAMPLES))
    mutate(rows[1])
    path = _write(tmp_path, rows)
    with pytest.raises(InputError) as err:
        read_answer_samples(path)
    message = str(err.value)
    assert "samples.json" in message
    for needle in needles:
        assert needle in message, message


def test_reader_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="JSON list"):
        read_answer_samples(_write(tmp_path, {"query": "x"}))
    with pytest.raises(InputError, match="no samples"):
        read_answer_samples(_write(tmp_path, []))
    bad = tmp_path / "bad.json"
    bad.write_text("[{", encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON"):
        read_answer_samples(bad)
    with pytest.raises(InputError, match=r"sample \[0\]: expected an object"):
        answer_samples_from_records([3])
    with pytest.raises(InputError, match="no such file"):
        read_answer_samples(tmp_path / "absent.json")
    # the CLI turns them into exit status 2 with the message
    out = CliRunner().invoke(app, ["answers", str(bad)])
    assert out.exit_code == 2 and "invalid JSON" in out.output
    # {"samples": [...]} and boolean labels are accepted
    ok = read_answer_samples(_write(tmp_path, {"samples": [dict(SAMPLES[2], label=True)]}))
    assert ok[0].label == 1 and ok[0].id == "0" and ok[0].context == ()
