"""Answer containment (answer_recall@K, answer_precision@K): hand cases, a port of DPR's
``has_answer`` with SQuAD v1.1's normalisation written here independently, property tests,
the gold answers reader and the command line.

The port follows facebookresearch/DPR ``dpr/data/qa_validation.py`` (``has_answer``, string
mode: the answer's tokens compared with every window of the passage's tokens) and the
official SQuAD v1.1 evaluation script's ``normalize_answer`` (lower case, drop
``string.punctuation``, drop ``\\b(a|an|the)\\b``, split on white space). DPR's tokenizer
is replaced by the SQuAD normalisation, as FlashRAG and the issue define it; an answer that
normalises to no token is skipped here (DPR's loop would find the empty window everywhere).
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter import Run, evaluate
from ragmeter.cli import app
from ragmeter.core.gold_answers import GoldAnswers
from ragmeter.core.judgments import Corpus
from ragmeter.errors import InputError, MissingInputError
from ragmeter.io.gold_answers import read_gold_answers
from ragmeter.metrics.containment import answer_hits, has_answer


def squad_normalize(s: str) -> str:
    """SQuAD v1.1's normalize_answer, written from its definition."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def dpr_has_answer(text: str, answers: list[str]) -> bool:
    """DPR's has_answer (string mode) over SQuAD-normalised tokens."""
    words = squad_normalize(text).split()
    for answer in answers:
        tokens = squad_normalize(answer).split()
        if not tokens:
            continue
        for i in range(len(words) - len(tokens) + 1):
            if words[i : i + len(tokens)] == tokens:
                return True
    return False


PASSAGES = {
    "d1": "The tower of Eiffel",
    "d2": "the EIFFEL-tower",
    "d3": "Eiffel  tower, Paris",
    "d4": "Paris is the capital.",
}
MEASURES = ["answer_recall@2", "answer_recall@3", "answer_precision@3", "answer_precision@5"]


def _evaluate(ranking: dict[str, list[str]], gold: dict[str, list[str]]) -> np.ndarray:
    result = evaluate(
        Run.from_lists(ranking),
        None,
        MEASURES,
        gold_answers=GoldAnswers.from_dict(gold),
        corpus=Corpus.from_dict(PASSAGES),
    ).run
    return np.asarray(result.values)


def test_hand_case() -> None:
    # d1: "tower of eiffel" (wrong order), d2: "eiffeltower" (one token), d3: "eiffel tower
    # paris" → h = (0, 0, 1): recall@2 = 0, recall@3 = 1, precision@3 = 1/3, @5 = 1/5
    values = _evaluate({"q1": ["d1", "d2", "d3"]}, {"q1": ["Eiffel Tower"]})
    assert values[0].tolist() == pytest.approx([0.0, 1.0, 1 / 3, 1 / 5])


def test_two_answers_and_two_hits() -> None:
    # answers "paris" and "capital": d4 holds both (counted once), d3 holds "paris"
    # h = (1, 0, 1) → recall@2 = 1, recall@3 = 1, precision@3 = 2/3, precision@5 = 2/5
    values = _evaluate({"q1": ["d4", "d1", "d3"]}, {"q1": ["Paris", "the Capital!"]})
    assert values[0].tolist() == pytest.approx([1.0, 1.0, 2 / 3, 2 / 5])


def test_query_without_gold_answers_is_na_not_zero() -> None:
    # q2 listed with no answers, q3 whose only answer is an article: NA, counted
    values = _evaluate(
        {"q1": ["d3"], "q2": ["d3"], "q3": ["d1"]},
        {"q1": ["paris"], "q2": [], "q3": ["The"]},
    )
    assert values[0].tolist() == pytest.approx([1.0, 1.0, 1 / 3, 1 / 5])
    assert np.isnan(values[1:]).all()


def test_na_reported_as_n_of_N_on_the_command_line(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d3 1 2 r\nq1 Q0 d1 2 1 r\nq2 Q0 d1 1 1 r\n", encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in PASSAGES.items()),
        encoding="utf-8",
    )
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        '{"query_id": "q1", "answers": ["Paris"]}\n{"query_id": "q2", "answers": []}\n',
        encoding="utf-8",
    )
    args = ["evaluate", str(run), "--gold-answers", str(gold), "--corpus", str(corpus)]
    out = CliRunner().invoke(app, [*args, "-m", "answer_precision@2", "--format", "json"])
    assert out.exit_code == 0, out.output
    # q1: d3 holds "paris", d1 not → 1/2; q2 without gold answers: NA, counted in n
    metric = json.loads(out.output)["runs"][0]["metrics"]["answer_precision@2"]
    assert metric == {"mean": 0.5, "n": 2, "n_defined": 1}
    # the table's footnote names the reason: no gold answer (not "no relevant item")
    table = CliRunner().invoke(app, [*args, "-m", "answer_precision@2"], env={"COLUMNS": "100"})
    text = " ".join(table.output.split())
    assert "0.5000 (n=1/2)" in text
    assert "(the others are NA: no gold answer)" in text
    missing = CliRunner().invoke(app, [*args[:4], "-m", "answer_recall@2"])
    assert missing.exit_code == 2
    assert "--corpus" in missing.output


def test_a_retrieved_doc_without_text_is_an_error() -> None:
    with pytest.raises(InputError, match="no text for retrieved doc 'zz' of query 'q1'"):
        _evaluate({"q1": ["d1", "zz"]}, {"q1": ["paris"]})


def test_without_gold_answers_the_measure_says_what_it_needs() -> None:
    with pytest.raises(MissingInputError, match="--gold-answers"):
        evaluate(
            Run.from_lists({"q1": ["d1"]}),
            {"q1": ["d1"]},
            ["answer_recall@1"],
            corpus=Corpus.from_dict(PASSAGES),
        )


def test_with_qrels_a_query_outside_the_gold_file_is_na() -> None:
    result = evaluate(
        Run.from_lists({"q1": ["d3"], "q2": ["d3"]}),
        {"q1": ["d3"], "q2": ["d3"]},
        ["answer_recall@1"],
        gold_answers=GoldAnswers.from_dict({"q1": ["paris"]}),
        corpus=Corpus.from_dict(PASSAGES),
    ).run
    assert np.asarray(result.values)[:, 0].tolist()[0] == 1.0
    assert np.isnan(np.asarray(result.values)[1, 0])


WORDS = ["the", "a", "An", "Paris", "paris,", "tower", "Tower!", "eiffel", "of", "x-y", "xy"]
texts = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)


@given(text=texts, answers=st.lists(texts, min_size=1, max_size=3))
@settings(max_examples=300, deadline=None)
def test_has_answer_matches_the_dpr_port(text: str, answers: list[str]) -> None:
    assert has_answer(text, answers) == dpr_has_answer(text, answers)


@given(
    ranking=st.lists(texts, max_size=8),
    answers=st.lists(texts, min_size=1, max_size=3),
    k=st.integers(1, 10),
)
@settings(max_examples=100, deadline=None)
def test_recall_and_precision_properties(ranking: list[str], answers: list[str], k: int) -> None:
    docs = {f"d{i}": t for i, t in enumerate(ranking)}
    hits = answer_hits(list(docs.values()), answers)
    names = [f"answer_recall@{k}", f"answer_recall@{k + 1}", f"answer_precision@{k}"]
    result = evaluate(
        Run.from_lists({"q": list(docs)}),
        None,  # the queries of the gold answers
        names,
        gold_answers=GoldAnswers.from_dict({"q": answers}),
        corpus=Corpus.from_dict(docs or {"unused": ""}),
    ).run
    recall, recall_next, precision = np.asarray(result.values)[0]
    if hits is None:  # every answer normalises to nothing: NA
        assert np.isnan([recall, recall_next, precision]).all()
        return
    expected = [dpr_has_answer(t, answers) for t in ranking[:k]]
    assert recall == float(any(expected))
    assert precision == pytest.approx(sum(expected) / k)
    assert 0.0 <= precision <= recall <= recall_next <= 1.0


def test_read_gold_answers(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text('{"query_id": "q1", "answers": ["a", "b"]}\n{"qid": 2, "answers": []}\n')
    gold = read_gold_answers(path)
    assert gold.answers_of("q1") == ("a", "b")
    assert gold.answers_of("2") is None
    assert gold.query_qrels().query_ids.tolist() == ["2", "q1"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query_id": "q1"}', "line 1, field 'answers': missing field"),
        ('{"query_id": "q1", "answers": "x"}', "field 'answers': expected a list"),
        ('{"query_id": "q1", "answers": ["x", 3]}', "field 'answers[1]': expected a string"),
        ('{"answers": ["x"]}', "missing field (one of query_id, qid, id)"),
    ],
)
def test_bad_gold_answers_name_file_line_field(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError) as info:
        read_gold_answers(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_a_query_listed_twice_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text('{"id": "q1", "answers": ["x"]}\n{"id": "q1", "answers": ["y"]}\n')
    with pytest.raises(InputError, match="line 2: query 'q1' listed twice"):
        read_gold_answers(path)


def _files(tmp_path: Path) -> list[str]:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d3 1 2 r\nq1 Q0 d1 2 1 r\n", encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in PASSAGES.items()),
        encoding="utf-8",
    )
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"query_id": "q1", "answers": ["Paris"]}\n', encoding="utf-8")
    return ["evaluate", str(run), "--gold-answers", str(gold), "--corpus", str(corpus)]


def test_gold_answers_without_qrels_default_to_answer_containment(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, [*_files(tmp_path), "--format", "json"])
    assert out.exit_code == 0, out.output
    metrics = json.loads(out.output)["runs"][0]["metrics"]
    # h = (1, 0): recall 1 at 5 and 20, precision@5 = 1/5
    assert {m: v["mean"] for m, v in metrics.items()} == {
        "answer_recall@5": 1.0,
        "answer_recall@20": 1.0,
        "answer_precision@5": 0.2,
    }


def test_a_measure_needing_qrels_is_refused_without_them(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, [*_files(tmp_path), "-m", "ndcg@10", "-m", "answer_recall@1"])
    assert out.exit_code == 2
    assert "ndcg@10 needs qrels: give --qrels" in out.output


# -- one normalisation (issue #39, T11) ---------------------------------------------------------

NFC_ZURICH = "Z\u00fcrich"  # "ü" one code point
NFD_ZURICH = "Zu\u0308rich"  # "u" + combining diaeresis


def test_an_answer_matches_its_other_unicode_spelling() -> None:
    # the same word written NFC in the gold answer and NFD in the passage (and the reverse):
    # one string, so a hit either way
    assert has_answer(f"The ferry to {NFD_ZURICH} leaves.", [NFC_ZURICH])
    assert has_answer(f"The ferry to {NFC_ZURICH} leaves.", [NFD_ZURICH])
    # NFKC's compatibility folds: a no-break space and a ligature in extracted text
    assert has_answer("the harbour\u00a0station is \ufb01ne", ["harbour station", "fine"])


def test_answer_recall_on_an_nfd_passage() -> None:
    values = evaluate(
        Run.from_lists({"q1": ["d1"]}),
        None,
        ["answer_recall@1"],
        gold_answers=GoldAnswers.from_dict({"q1": [NFC_ZURICH]}),
        corpus=Corpus.from_dict({"d1": f"The ferry to {NFD_ZURICH} leaves at noon."}),
    ).run.values
    assert np.asarray(values).tolist() == [[1.0]]


def test_every_string_match_of_answers_agrees_on_empty_and_unicode() -> None:
    """answer_recall (has_answer), exact_match, token_f1, containment@k and eRAG's scoring
    read one normalisation: an answer that normalises to nothing is NA (never a match) in
    each, and NFC/NFD spellings of one word match in each."""
    from ragmeter.metrics import answers as am

    pytest.importorskip("aiohttp")
    from ragmeter.judges.erag import score_answer, usable_gold

    # gold "The": nothing is left, so nothing matches it — not even the empty answer "A"
    assert answer_hits(["A", "The", ""], ["The"]) is None
    assert am.exact_match("A", ["The"]) is None
    assert am.token_f1("A", ["The"]) is None
    assert am.containment(" ", ["The", ""]) is None
    assert usable_gold(["The", "a", "!"]) == []
    with pytest.raises(ValueError):
        score_answer("A", ["The"], "em")
    # NFD answer, NFC gold: a match for each
    assert am.exact_match(NFD_ZURICH, [NFC_ZURICH]) == 1
    assert am.token_f1(NFD_ZURICH, [NFC_ZURICH]) == 1.0
    assert am.containment(NFC_ZURICH, [f"to {NFD_ZURICH}"]) == 1
    assert score_answer(NFD_ZURICH, ["The", NFC_ZURICH], "em") == 1.0
    assert am.keywords(NFD_ZURICH) == am.keywords(NFC_ZURICH) == frozenset({"zürich"})
