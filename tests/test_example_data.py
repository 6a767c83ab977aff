"""The example collection shipped as package data: every file reads with ragmeter's own
readers and holds what the metric families need."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ragmeter.data import EXAMPLE_DIR, EXAMPLE_FILES, example_path
from ragmeter.errors import InputError
from ragmeter.io.answers import read_answer_samples
from ragmeter.io.judgments import read_answers, read_corpus, read_judgments, read_questions
from ragmeter.io.readers import read_qrels


def test_every_file_is_there_and_small() -> None:
    total = sum(example_path(name).stat().st_size for name in EXAMPLE_FILES)
    assert total < 1_000_000


def test_unknown_name_lists_the_files() -> None:
    with pytest.raises(InputError, match=r"corpus\.jsonl"):
        example_path("nope.txt")


def test_corpus_and_queries() -> None:
    corpus = read_corpus(example_path("corpus.jsonl"))
    queries = read_corpus(example_path("queries.jsonl"))
    assert 280 <= len(corpus.doc_ids) <= 320
    assert len(queries.doc_ids) == 30
    assert all(text.strip() for text in corpus.texts.to_pylist())


def test_qrels_grade_every_judged_pair_on_the_utility_scale() -> None:
    qrels = read_qrels(example_path("qrels.txt"))
    queries = {json.loads(line)["id"] for line in example_path("queries.jsonl").open()}
    graded = qrels.to_dict()
    assert set(graded) == queries
    docs = set(read_corpus(example_path("corpus.jsonl")).doc_ids.to_pylist())
    for qid, labels in graded.items():
        assert set(labels) <= docs, qid
        grades = Counter(labels.values())
        assert set(grades) <= {1, 2, 3, 4, 5}, qid
        assert grades[5] >= 1, f"{qid} has no decisive passage"


def test_judgments_cover_the_qrels_with_two_to_four_subquestions() -> None:
    questions = read_questions(example_path("subquestions.jsonl"))
    judgments = read_judgments(example_path("judgments.jsonl"), questions=questions)
    assert all(2 <= len(q) <= 4 for q in questions.values())
    qrels = read_qrels(example_path("qrels.txt")).to_dict()
    pairs = {(q, d) for q, labels in qrels.items() for d in labels}
    rows = judgments.row_query
    qids = judgments.query_ids.tolist()
    docs = judgments.doc_ids.to_pylist()
    assert {(qids[rows[i]], docs[i]) for i in range(len(docs))} == pairs
    assert (judgments.n_answerable(3) >= 2).all()


def test_references_and_rated_answers_one_per_query() -> None:
    refs = [json.loads(line) for line in example_path("references.jsonl").open()]
    assert [r["id"] for r in refs] == [f"q{i:02d}" for i in range(1, 31)]
    rated = read_answers(example_path("answers_rated.jsonl"))
    assert len(rated.query_ids) == 30


def test_answer_samples_have_labels_and_timings() -> None:
    samples = read_answer_samples(example_path("answers.json"))
    assert len(samples) == 30
    assert {s.label for s in samples} == {0, 1}
    for s in samples:
        assert s.timings is not None
        assert set(s.timings) == {"embed", "retrieve", "rerank", "generate"}
        assert s.context and s.retrieved


def test_the_readme_ships_beside_the_data() -> None:
    assert (EXAMPLE_DIR / "README.md").is_file()
