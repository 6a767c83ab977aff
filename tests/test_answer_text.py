"""Text metrics of answers (SQuAD token F1 / exact match, ROUGE-L, BLEU), stopwords and CJK
segmentation: every expected value computed by hand in the comments."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import MissingExtraError
from ragmeter.io.answers import answer_samples_from_records
from ragmeter.metrics import answers as am


@pytest.fixture
def text_extra() -> None:
    """ROUGE-L and BLEU need the extra 'text' (installed by the dev extra, so CI runs them)."""
    pytest.importorskip("rouge_score", reason="ROUGE-L needs the extra 'text' (rouge-score)")
    pytest.importorskip("sacrebleu", reason="BLEU needs the extra 'text' (sacrebleu)")


# -- SQuAD normalisation, token F1, exact match -----------------------------------------------


def test_normalize_answer_is_squads() -> None:
    # lower, ASCII punctuation removed (the hyphen too, joining the words), articles, spaces
    assert am.normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert am.normalize_answer("An apple a day; THE end") == "apple day end"
    # "theatre" keeps its "the": articles are whole words only
    assert am.normalize_answer("theatre") == "theatre"
    # SQuAD's punctuation is ASCII only; the CJK option drops every Unicode punctuation mark.
    # NFKC comes first: the full-width comma U+FF0C is ASCII's ",", the ideographic full
    # stop U+3002 has no compatibility form and stays
    assert am.normalize_answer("北京，中国。") == "北京中国。"
    assert am.normalize_answer("北京，中国。", cjk=True) == "北京中国"


def test_token_f1_hand_computed() -> None:
    # identical after normalisation: articles differ only
    assert am.token_f1("the cat sat on a mat", "a cat sat on the mat") == 1.0
    # G = [paris, france], R = [paris]: c = 1, P = 1/2, R = 1, F1 = 2·(1/2)·1 / (3/2) = 2/3
    assert am.token_f1("Paris, France", "Paris") == pytest.approx(2 / 3)
    # multisets: G = [red, red, blue], R = [red, blue, blue]: c = 1 + 1 = 2, P = R = 2/3
    assert am.token_f1("red red blue", "red blue blue") == pytest.approx(2 / 3)
    # no common token: 0
    assert am.token_f1("London", "Paris") == 0.0
    # a reference empty after normalisation (articles only) is no reference: NA (the SQuAD
    # script says 1 when the answer is empty too: two empty strings "match"); an empty
    # answer against a real reference: 0
    assert am.token_f1("the", "a") is None
    assert am.token_f1("the", "cat") == 0.0
    assert am.token_f1("cat", ["the", "cat"]) == 1.0  # "the" is dropped, "cat" matches
    # max over references: 0 against "London", 2/3 against "Paris France"
    assert am.token_f1("Paris", ["London", "Paris France"]) == pytest.approx(2 / 3)
    assert am.token_f1("Paris", []) is None


def test_exact_match_hand_computed() -> None:
    assert am.exact_match("The Eiffel Tower.", "eiffel tower") == 1
    assert am.exact_match("Eiffel Towers", "eiffel tower") == 0
    assert am.exact_match("Tour Eiffel", ["eiffel tower", "tour  eiffel!"]) == 1
    assert am.exact_match("x", []) is None


@given(st.text(max_size=30), st.text(max_size=30))
def test_token_f1_bounded_symmetric_and_reflexive(a: str, b: str) -> None:
    f = am.token_f1(a, b)
    if not am.normalize_answer(b):  # no reference left: NA, never a match
        assert f is None
        return
    assert f is not None and 0.0 <= f <= 1.0
    if am.normalize_answer(a):
        assert f == pytest.approx(am.token_f1(b, a))
    assert am.token_f1(b, b) == 1.0
    # exact match implies token F1 = 1
    if am.exact_match(a, b):
        assert f == 1.0


# -- ROUGE-L (rouge-score) ------------------------------------------------------------------


def test_rouge_l_hand_computed(text_extra: None) -> None:
    # LCS("the cat on mat", "the cat sat on the mat") = the cat on mat = 4:
    # P = 4/4, R = 4/6, F = 2·1·(2/3) / (5/3) = 0.8
    assert am.rouge_l("the cat on mat", "the cat sat on the mat") == pytest.approx(0.8)
    # Lin (2004): "police kill the gunman" vs "police killed the gunman": LCS = 3 of 4 (0.75);
    # with Porter stemming killed -> kill, LCS = 4 (1.0)
    ref = "police killed the gunman"
    assert am.rouge_l("police kill the gunman", ref) == pytest.approx(0.75)
    assert am.rouge_l("police kill the gunman", ref, stem=True) == pytest.approx(1.0)
    # "the gunman kill police": LCS = "the gunman" = 2 of 4 -> 0.5 (order matters, not a bag)
    assert am.rouge_l("the gunman kill police", ref) == pytest.approx(0.5)
    # max over references; none -> NA
    assert am.rouge_l("the cat on mat", ["dogs bark", "the cat on mat"]) == 1.0
    assert am.rouge_l("x", []) is None
    assert am.rouge_l("nothing shared", "at all") == 0.0


# -- BLEU (sacrebleu) -----------------------------------------------------------------------


def test_sentence_bleu_hand_computed(text_extra: None) -> None:
    # identical: every precision 1, BP 1
    assert am.sentence_bleu("the cat sat on the mat", "the cat sat on the mat") == (
        pytest.approx(1.0)
    )
    # "the cat sat on a mat" vs "the cat sat on the mat" (6 tokens each, BP = 1):
    # p1 = 5/6, p2 = 3/5 (the cat, cat sat, sat on), p3 = 2/4, p4 = 1/3 (the cat sat on)
    expected = (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert am.sentence_bleu("the cat sat on a mat", "the cat sat on the mat") == (
        pytest.approx(expected)
    )
    # "the cat sat" vs a 6-token reference: p1..p3 = 1, no 4-gram (effective order 3),
    # BP = exp(1 − 6/3) = e^-1
    assert am.sentence_bleu("the cat sat", "the cat sat on the mat") == pytest.approx(math.exp(-1))
    # exp smoothing: "a b c d" vs "a b x y": p1 = 2/4, p2 = 1/3, p3 = 0/2 -> 1/(2·2),
    # p4 = 0/1 -> 1/(4·1); BLEU = (1/2 · 1/3 · 1/4 · 1/4)^(1/4) = (1/96)^(1/4)
    assert am.sentence_bleu("a b c d", "a b x y") == pytest.approx((1 / 96) ** 0.25)
    # two references: the closest length (3) gives BP = 1
    assert am.sentence_bleu("the cat sat", ["the cat sat on the mat", "the cat sat"]) == (
        pytest.approx(1.0)
    )
    assert am.sentence_bleu("x", []) is None


def test_corpus_bleu_sums_counts_before_the_formula(text_extra: None) -> None:
    hyps = ["the cat sat on the mat", "the cat sat"]
    refs = ["the cat sat on the mat", "the cat sat on the mat"]
    # summed n-gram counts: 1-grams 9/9, 2-grams 7/7, 3-grams 5/5, 4-grams 3/3 -> all 1;
    # c = 9, r = 12: BP = exp(1 − 12/9) = exp(−1/3)
    assert am.corpus_bleu(hyps, refs) == pytest.approx(math.exp(-1 / 3))
    # ... which is not the mean of the sentence scores (1 + e^-1) / 2
    mean = (1 + math.exp(-1)) / 2
    assert am.corpus_bleu(hyps, refs) != pytest.approx(mean)
    # a sample without references is left out; a ragged number of references is padded
    assert am.corpus_bleu([*hyps, "zzz"], [*refs, []]) == pytest.approx(math.exp(-1 / 3))
    # with a second reference "the cat sat" for the short answer, r = 6 + 3 = c: BP = 1
    assert am.corpus_bleu(hyps, [refs[0], [refs[1], "the cat sat"]]) == pytest.approx(1.0)
    assert am.corpus_bleu(["x"], [[]]) is None
    with pytest.raises(ValueError):
        am.corpus_bleu(hyps, refs[:1])


# -- stopwords and CJK ------------------------------------------------------------------------


def test_stopwords_drop_function_words_only() -> None:
    kw = am.keywords(
        "What is the capital of France? It is not Lyon", stopwords=am.ENGLISH_STOPWORDS
    )
    assert kw == {"capital", "france", "not", "lyon"}  # negations are kept on purpose
    # overlap without stopwords: kw(ref) = {what, is, the, capital, of, france} (6),
    # gen "France's capital" -> {france, capital} (and "s" is 1 char): 2/6
    ref, gen = "What is the capital of France", "France's capital"
    assert am.keyword_overlap(ref, gen) == pytest.approx(2 / 6)
    # with stopwords: kw(ref) = {capital, france}: 2/2
    assert am.keyword_overlap(ref, gen, stopwords=am.ENGLISH_STOPWORDS) == 1.0


def test_cjk_segmentation_bigrams() -> None:
    assert am.cjk_bigrams("北京大学") == ["北京", "京大", "大学"]
    assert am.cjk_bigrams("水") == ["水"]
    # mixed token: the Latin run stays whole, the CJK run becomes bigrams
    assert am.segment("iphone手机壳", cjk=True) == ["iphone", "手机", "机壳"]
    assert am.segment("iphone手机壳") == ["iphone手机壳"]
    assert am.keywords("北京是中国的首都", cjk=True) == {
        "北京", "京是", "是中", "中国", "国的", "的首", "首都"
    }  # fmt: skip
    # a lone CJK character is a keyword although it is one character long
    assert am.keywords("水 a", cjk=True) == {"水"}
    # default: the seed's rule, one token per run
    assert am.keywords("北京是中国的首都") == {"北京是中国的首都"}


def test_chinese_answer_overlapping_its_reference_scores_above_zero(text_extra: None) -> None:
    ref, gen = "今天天气很好", "天气很好"
    # without segmentation both are one token each, different: nothing overlaps
    assert am.keyword_overlap(ref, gen) == 0.0
    assert am.token_f1(gen, ref) == 0.0
    assert am.rouge_l(gen, ref) == 0.0  # rouge-score keeps [a-z0-9] only: no token at all
    # bigrams: ref {今天, 天天, 天气, 气很, 很好} (5), gen {天气, 气很, 很好} (3)
    assert am.keyword_overlap(ref, gen, cjk=True) == pytest.approx(3 / 5)
    # token F1: c = 3, P = 3/3, R = 3/5 -> 2·(3/5) / (8/5) = 0.75; ROUGE-L: LCS = 3, the same
    assert am.token_f1(gen, ref, cjk=True) == pytest.approx(0.75)
    assert am.rouge_l(gen, ref, cjk=True) == pytest.approx(0.75)
    # BLEU on characters (sacrebleu "zh"): hyp 天 气 很 好 (4) is a substring of the 6-char
    # reference, p1..p4 = 1, BP = exp(1 − 6/4)
    assert am.sentence_bleu(gen, ref, cjk=True) == pytest.approx(math.exp(-0.5))
    # mixed text: Latin words go through rouge-score's own tokenizer
    assert am.rouge_l("iPhone 手机", "iphone 手机", cjk=True) == 1.0


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(am, "_STEMMING_ROUGE_SCORERS", {})
    monkeypatch.setattr(am, "_BLEUS", {})
    monkeypatch.setitem(sys.modules, "rouge_score.rouge_scorer", None)
    monkeypatch.setitem(sys.modules, "sacrebleu.metrics", None)
    # ROUGE-L is computed here; only stemming needs rouge-score (and its nltk stemmer)
    assert am.rouge_l("a b", "a c") == 0.5
    with pytest.raises(MissingExtraError, match=r"ROUGE-L with stemming needs the package rouge-"):
        am.rouge_l("a", "b", stem=True)
    with pytest.raises(MissingExtraError, match=r"BLEU needs the package sacrebleu"):
        am.sentence_bleu("a", "b")


# -- the report and the command ---------------------------------------------------------------

ALL_TRUE = [
    {
        "query": "capital of France?",
        "context": ["Paris is the capital of France"],
        "generated_answer": "Paris is the capital of France",
        "reference_answer": "Paris is the capital of France",
        "label": 1,
    },
    {
        "query": "largest planet?",
        "context": ["Jupiter"],
        "generated_answer": "Jupiter",
        "reference_answer": "Jupiter",
        "label": 1,
    },
]
ALL_FALSE = [
    {
        "query": "capital of France?",
        "context": ["Lyon"],
        "generated_answer": "Lyon",
        "reference_answer": "Paris is the capital of France",
        "label": 0,
    },
    {
        "query": "largest planet?",
        "context": ["Mars"],
        "generated_answer": "Mars",
        "reference_answer": "Jupiter",
        "label": 0,
    },
]


def test_seed_all_true_samples(text_extra: None) -> None:
    report = am.evaluate_answers(answer_samples_from_records(ALL_TRUE), text_metrics=["all"])
    m = report["metrics"]
    # every answer equals its reference: predicted correct, labelled correct -> TP 2
    assert report["confusion"] == {"tp": 2, "fp": 0, "tn": 0, "fn": 0}
    assert (m["accuracy"], m["precision"], m["recall"], m["f1"]) == (1.0, 1.0, 1.0, 1.0)
    for name in ("token_f1", "exact_match", "rouge_l", "bleu", "corpus_bleu"):
        assert m[name] == pytest.approx(1.0), name
    for row in report["per_sample"]:
        assert row["exact_match"] == 1 and row["token_f1"] == 1.0


def test_seed_all_false_samples(text_extra: None) -> None:
    report = am.evaluate_answers(answer_samples_from_records(ALL_FALSE), text_metrics=["all"])
    m = report["metrics"]
    # nothing shared: predicted incorrect, labelled incorrect -> TN 2; P, R, F1 are 0/0
    assert report["confusion"] == {"tp": 0, "fp": 0, "tn": 2, "fn": 0}
    assert m["accuracy"] == 1.0
    assert m["precision"] is None and m["recall"] is None and m["f1"] is None
    for name in ("token_f1", "exact_match", "rouge_l", "bleu", "corpus_bleu"):
        assert m[name] == 0.0, name


def test_cli_text_metrics_json(tmp_path: Path, text_extra: None) -> None:
    rows = [
        # token F1 2/3 (see above), EM 0, ROUGE-L: LCS 1 of (2, 1) -> P 1/2, R 1 -> 2/3
        {
            "id": "en",
            "query": "q",
            "context": [],
            "generated_answer": "Paris, France",
            "reference_answer": "Paris",
        },
        # Chinese: 0 without --cjk, 0.75 with it (see above)
        {
            "id": "zh",
            "query": "q",
            "context": [],
            "generated_answer": "天气很好",
            "reference_answer": "今天天气很好",
        },
    ]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    runner = CliRunner()
    out = runner.invoke(app, ["answers", str(path), "-f", "json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    # default: token F1 and exact match only
    assert body["metrics"]["token_f1"] == pytest.approx((2 / 3 + 0) / 2)
    assert body["metrics"]["exact_match"] == 0.0
    assert "rouge_l" not in body["metrics"] and "bleu" not in body["per_sample"][0]
    out = runner.invoke(
        app, ["answers", str(path), "-f", "json", "--cjk", "-t", "rouge_l", "-t", "token_f1"]
    )
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    per = {r["id"]: r for r in body["per_sample"]}
    assert per["en"]["rouge_l"] == pytest.approx(2 / 3)
    assert per["zh"]["rouge_l"] == pytest.approx(0.75)
    assert per["zh"]["token_f1"] == pytest.approx(0.75)
    assert per["zh"]["keyword_overlap"] == pytest.approx(3 / 5)
    assert body["metrics"]["rouge_l"] == pytest.approx((2 / 3 + 0.75) / 2)
    assert "exact_match" not in body["metrics"]
    # bleu adds both the mean sentence BLEU and the corpus BLEU
    out = runner.invoke(app, ["answers", str(path), "-f", "json", "-t", "bleu"])
    metrics = json.loads(out.stdout)["metrics"]
    assert {"bleu", "corpus_bleu"} <= set(metrics)
    # the table with one row per sample
    table = runner.invoke(app, ["answers", str(path), "-t", "all", "--per-sample"])
    assert table.exit_code == 0 and "rougeL" in table.stdout and "corpus_bleu" in table.stdout
    bad = runner.invoke(app, ["answers", str(path), "-t", "meteor"])
    assert bad.exit_code == 2 and "unknown text metric" in bad.output


def test_cli_stopwords(tmp_path: Path) -> None:
    rows = [
        {
            "query": "q",
            "context": [],
            "generated_answer": "France's capital",
            "reference_answer": "What is the capital of France",
        }
    ]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    runner = CliRunner()

    def overlap(*extra: str) -> float:
        out = runner.invoke(app, ["answers", str(path), "-f", "json", *extra])
        assert out.exit_code == 0, out.output
        value: float = json.loads(out.stdout)["per_sample"][0]["keyword_overlap"]
        return value

    assert overlap() == pytest.approx(2 / 6)
    assert overlap("--stopwords", "english") == 1.0
    # a file: one word per line, comments skipped, compared in lower case -> kw(ref) loses
    # "what" and "is": {the, capital, of, france} (4), gen shares 2
    words = tmp_path / "stop.txt"
    words.write_text("# mine\nWHAT\n\nis\n", encoding="utf-8")
    assert overlap("--stopwords", str(words)) == pytest.approx(2 / 4)
    out = runner.invoke(app, ["answers", str(path), "--stopwords", str(tmp_path / "nope.txt")])
    assert out.exit_code == 2 and "nope.txt" in out.output
