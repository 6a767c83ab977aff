"""Baseline retrievers: BM25 against a plain transcription of its formula, RRF and MMR by hand,
dense retrieval with a toy encoder (and with MiniLM when installed), the retrieve command."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter import Run
from ragmeter.errors import InputError, RagmeterError

pytest.importorskip("bm25s", reason="BM25 needs the baselines extra (bm25s)")

from ragmeter.pipeline.baselines import (
    BM25Retriever,
    CrossEncoderReranker,
    DenseRetriever,
    mmr_order,
    mmr_rerank,
    reciprocal_rank_fusion,
)

CORPUS = {
    "d1": "The harbour ferry runs every 40 minutes in winter and every 20 minutes in summer.",
    "d2": "Trams on Line 3 reach the airport in 28 minutes from Central Station.",
    "d3": "A monthly pass costs 58 euros; an annual pass costs 560 euros.",
    "d4": "The ferry to the island is cancelled when the wind exceeds 45 knots.",
    "d5": "Night buses leave Central Station every 30 minutes on weekend nights.",
    "d6": "Ferry ferry ferry: the word repeated, with nothing about timetables.",
}


def bm25_by_hand(
    query: str, docs: dict[str, list[str]], *, k1: float = 1.5, b: float = 0.75
) -> dict[str, float]:
    """Lucene BM25 (bm25s's default): idf = ln(1 + (N − df + 0.5)/(df + 0.5)),
    tf part = tf / (tf + k1·(1 − b + b·|d|/avgdl)); query terms summed with multiplicity."""
    n = len(docs)
    avgdl = sum(len(t) for t in docs.values()) / n
    scores = {}
    q_terms = query_tokens(query)
    for d, terms in docs.items():
        total = 0.0
        for t in q_terms:
            df = sum(t in other for other in docs.values())
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = terms.count(t)
            total += idf * tf / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        scores[d] = total
    return scores


def query_tokens(text: str) -> list[str]:
    """Lower-cased runs of two or more word characters, minus the English stopword list that
    bm25s documents (data, not part of the formula under test)."""
    import re

    from bm25s.stopwords import STOPWORDS_EN

    return [t for t in re.findall(r"\b\w\w+\b", text.lower()) if t not in set(STOPWORDS_EN)]


@pytest.fixture(scope="module")
def bm25() -> BM25Retriever:
    return BM25Retriever(CORPUS)


def test_bm25_tokens_drop_case_stopwords_and_single_characters(bm25: BM25Retriever) -> None:
    assert bm25.tokenize("The Ferry to a Island, I think") == ["ferry", "island", "think"]


def test_bm25_scores_match_the_formula(bm25: BM25Retriever) -> None:
    tokenized = {d: query_tokens(t) for d, t in CORPUS.items()}
    # the transcription's tokenizer agrees with bm25s's on these texts
    assert tokenized == {d: bm25.tokenize(t) for d, t in CORPUS.items()}
    for query in ("ferry winter", "ferry ferry wind", "airport tram minutes", "nothing matches"):
        expected = bm25_by_hand(query, tokenized)
        got = dict(zip(CORPUS, bm25.scores(query).tolist(), strict=True))
        for d in CORPUS:
            assert got[d] == pytest.approx(expected[d], rel=1e-5, abs=1e-6), (query, d)


def test_bm25_parameters_change_the_scores_as_the_formula_says() -> None:
    retriever = BM25Retriever(CORPUS, k1=0.9, b=0.4)
    tokenized = {d: query_tokens(t) for d, t in CORPUS.items()}
    expected = bm25_by_hand("ferry summer", tokenized, k1=0.9, b=0.4)
    got = retriever.scores("ferry summer").tolist()
    assert got == pytest.approx([expected[d] for d in CORPUS], rel=1e-5)


def test_bm25_finds_the_known_answer_and_leaves_out_unmatched_docs(bm25: BM25Retriever) -> None:
    run = bm25.search({"q1": "When is the ferry cancelled because of wind?", "q2": "zzz"}, depth=3)
    ranked = run.ranked()
    assert ranked["q1"][0] == "d4"
    assert "q2" not in ranked  # no document shares a term with it
    assert run.name == "bm25"
    assert len(ranked["q1"]) == 3


def test_bm25_search_row_by_row_equals_the_whole_matrix() -> None:
    """search scores one query at a time; the top-k and its tie order are those of the
    full (queries × docs) matrix, on random texts over a tiny vocabulary (many ties)."""
    from ragmeter.pipeline.baselines import _drop_zero_scores, _top_run

    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(12)]

    def text(n: int) -> str:
        return " ".join(rng.choice(vocab, size=n).tolist())

    corpus = {f"d{i:03d}": text(int(rng.integers(1, 8))) for i in range(300)}
    queries = {f"q{i}": text(int(rng.integers(1, 4))) for i in range(60)}
    queries["q-none"] = "nothing known"
    bm25 = BM25Retriever(corpus, stopwords=None)
    for depth in (1, 5, 37, 1000):
        matrix = np.stack([bm25.scores(t) for t in queries.values()])
        whole = _drop_zero_scores(_top_run(list(queries), list(corpus), matrix, depth, "bm25"))
        streamed = bm25.search(queries, depth=depth)
        assert streamed.ranked() == whole.ranked()
        assert streamed.to_dict() == whole.to_dict()


def test_bm25_rejects_bad_input() -> None:
    from ragmeter.pipeline.baselines import Texts

    with pytest.raises(InputError, match="'d1' given twice"):
        Texts(("d1", "d2", "d1"), ("a", "b", "c"))
    with pytest.raises(InputError, match="empty corpus"):
        BM25Retriever({})
    with pytest.raises(InputError, match="b="):
        BM25Retriever(CORPUS, b=1.5)


def test_rrf_by_hand() -> None:
    a = Run.from_lists({"q": ["d1", "d2", "d3"]})
    b = Run.from_lists({"q": ["d3", "d1"], "r": ["d9"]})
    fused = reciprocal_rank_fusion([a, b], k=60).to_dict()
    assert fused["q"] == pytest.approx({"d1": 1 / 61 + 1 / 62, "d3": 1 / 63 + 1 / 61, "d2": 1 / 62})
    assert fused["r"] == pytest.approx({"d9": 1 / 61})
    order = reciprocal_rank_fusion([a, b], k=60).ranked()["q"]
    assert order == ["d1", "d3", "d2"]  # 0.032523 > 0.032266 > 0.016129


def test_rrf_k_and_depth() -> None:
    a = Run.from_lists({"q": ["d1", "d2"]})
    b = Run.from_lists({"q": ["d2", "d1"]})
    # k = 0: d1 = 1/1 + 1/2 = d2, a tie, broken by doc id descending (TREC order)
    fused = reciprocal_rank_fusion([a, b], k=0, depth=1)
    assert fused.to_dict() == {"q": {"d2": 1.5}}
    with pytest.raises(InputError):
        reciprocal_rank_fusion([])


def test_mmr_by_hand_on_four_vectors() -> None:
    s = math.sqrt(0.5)
    q = np.array([1.0, 0.0, 0.0])
    docs = np.array(
        [
            [1.0, 0.0, 0.0],  # d0: sim(q) 1
            [0.96, 0.28, 0.0],  # d1: sim(q) 0.96, sim(d0) 0.96 — a near duplicate of d0
            [s, 0.0, s],  # d2: sim(q) 0.7071, sim(d0) 0.7071, sim(d1) 0.6788
            [0.0, 1.0, 0.0],  # d3: sim(q) 0, sim(d0) 0, sim(d1) 0.28, sim(d2) 0
        ]
    )
    # λ = 0.5. Step 1: argmax 0.5·sim(q) → d0.
    # Step 2: d1 0.5·0.96 − 0.5·0.96 = 0; d2 0.5·0.7071 − 0.5·0.7071 = 0; d3 0 − 0 = 0
    #   → a three-way tie, the earlier row wins: d1.
    # Step 3: d2: 0.35355 − 0.5·max(0.7071, 0.6788) = 0; d3: 0 − 0.5·0.28 = −0.14 → d2.
    assert mmr_order(q, docs, lambda_=0.5) == [0, 1, 2, 3]
    # λ = 0.3. Step 2: d1 0.288 − 0.7·0.96 = −0.384; d2 0.21213 − 0.7·0.7071 = −0.28284;
    #   d3 0 − 0 = 0 → d3. Step 3: d1 0.288 − 0.7·0.96 = −0.384;
    #   d2 0.21213 − 0.7·0.7071 = −0.28284 → d2.
    assert mmr_order(q, docs, lambda_=0.3) == [0, 3, 2, 1]
    # λ = 1 is pure relevance
    assert mmr_order(q, docs, lambda_=1.0) == [0, 1, 2, 3]
    assert mmr_order(q, docs, lambda_=0.3, k=2) == [0, 3]
    with pytest.raises(InputError):
        mmr_order(q, docs, lambda_=1.5)


class BagOfWords:
    """A toy encoder: normalised counts over a fixed vocabulary (no model needed)."""

    VOCAB = ("ferry", "winter", "summer", "wind", "tram", "airport", "pass", "night", "bus")

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        rows = np.array([[t.lower().count(w) for w in self.VOCAB] for t in texts], dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms > 0, norms, 1.0)


def test_dense_ranks_by_cosine_with_any_encoder() -> None:
    dense = DenseRetriever(CORPUS, encoder=BagOfWords())
    run = dense.search({"q": "airport tram"}, depth=2)
    scores = run.to_dict()["q"]
    assert run.ranked()["q"][0] == "d2"
    assert scores["d2"] == pytest.approx(1.0)  # d2 holds exactly "tram" and "airport"
    assert len(scores) == 2


def test_mmr_rerank_drops_the_near_duplicate() -> None:
    corpus = {"a": "ferry winter", "b": "ferry winter ferry winter", "c": "ferry wind"}
    dense = DenseRetriever(corpus, encoder=BagOfWords())
    first = Run.from_lists({"q": ["a", "b", "c"]})
    # relevance to "ferry winter": a 1, b 1, c 0.5; sim(a, b) = 1, sim(a, c) = 0.5
    # step 2 at λ = 0.5: b 0.5 − 0.5 = 0; c 0.25 − 0.25 = 0 → tie, earlier candidate b.
    # at λ = 0.4: b 0.4 − 0.6 = −0.2; c 0.2 − 0.3 = −0.1 → c
    rr = mmr_rerank(first, {"q": "ferry winter"}, dense, lambda_=0.4)
    assert rr.ranked() == {"q": ["a", "c", "b"]}
    assert rr.name == "run+mmr"
    assert rr.scores.tolist() == [3.0, 2.0, 1.0]
    with pytest.raises(InputError, match="no query text"):
        mmr_rerank(first, {"other": "x"}, dense)


def test_cross_encoder_needs_an_existing_model_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        CrossEncoderReranker(tmp_path / "missing")
    reranker = CrossEncoderReranker(tmp_path)
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(RagmeterError, match="sentence-transformers"):
            reranker.score("q", ["p"])
    else:  # installed but the directory holds no model: its own error, no download
        with pytest.raises(Exception):  # noqa: B017
            reranker.score("q", ["p"])


@pytest.fixture(scope="module")
def minilm() -> object:
    embeddings = pytest.importorskip(
        "ragmeter.pipeline.embeddings", reason="dense retrieval needs the models extra"
    )
    encoder = embeddings.MiniLMEncoder()
    try:
        encoder.encode(["probe"])
    except RagmeterError as exc:  # the model packages are missing
        pytest.skip(str(exc))
    return encoder


def test_minilm_dense_finds_a_paraphrase(minilm: object) -> None:
    corpus = {
        "plane": "To fly out of the city, take the purple tram from the main station.",
        "ferry": "The island boat leaves the pier every twenty minutes.",
        "pass": "Season tickets are personal and show the holder's photo.",
    }
    dense = DenseRetriever(corpus, encoder=minilm)  # type: ignore[arg-type]
    ranked = dense.search({"q": "How do I get to the airport?"}, depth=3).ranked()
    assert ranked["q"][0] == "plane"


def _write_jsonl(path: Path, rows: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in rows.items()))
    return path


def test_retrieve_command_writes_a_trec_run(tmp_path: Path) -> None:
    from ragmeter.cli import app
    from ragmeter.io.readers import read_run

    corpus = _write_jsonl(tmp_path / "c.jsonl", CORPUS)
    queries = _write_jsonl(tmp_path / "q.jsonl", {"q1": "ferry wind", "q2": "monthly pass"})
    out = tmp_path / "run.txt"
    result = CliRunner().invoke(
        app,
        ["retrieve", "--method", "bm25", "--corpus", str(corpus), "--queries", str(queries),
         "--depth", "2", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    run = read_run(out)
    assert run.ranked()["q1"][0] == "d4"
    assert run.ranked()["q2"][0] == "d3"
    assert all(len(v) <= 2 for v in run.ranked().values())
    assert out.read_text().split("\n")[0].split()[-1] == "bm25"


def test_retrieve_command_reports_bad_input(tmp_path: Path) -> None:
    from ragmeter.cli import app

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "d1"}\n')
    queries = _write_jsonl(tmp_path / "q.jsonl", {"q1": "x"})
    result = CliRunner().invoke(
        app,
        ["retrieve", "--method", "bm25", "--corpus", str(corpus), "--queries", str(queries),
         "--out", str(tmp_path / "run.txt")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "c.jsonl" in result.output and "line 1" in result.output
    assert not (tmp_path / "run.txt").exists()
    bad = CliRunner().invoke(
        app,
        ["retrieve", "--method", "bm25", "--rerank", "mmr", "--corpus", str(queries),
         "--queries", str(queries), "--out", str(tmp_path / "r.txt"), "--mmr-lambda", "2"],
    )  # fmt: skip
    assert bad.exit_code == 2
