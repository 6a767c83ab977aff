"""Baseline retrievers and rerankers to try side by side on your own data (extra ``baselines``).

Every retriever returns a :class:`ragmeter.Run` (``name`` = the method), ready for every metric
family; :func:`ragmeter.io.trec.write_trec_run` writes it as a TREC run.

* :class:`BM25Retriever` — lexical BM25 through the ``bm25s`` package. Scores follow bm25s's
  default ``method="lucene"`` variant (Kamphuis et al., ECIR 2020), per query term ``t`` in
  document ``d``::

      idf(t)   = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
      score    = Σ_t idf(t) · tf(t, d) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))

  with ``k1 = 1.5`` and ``b = 0.75`` by default; query terms count once each (a repeated query
  term adds its contribution again, as bm25s does). Tokens: lower-cased ``\\w\\w+`` runs
  (scikit-learn's pattern, so one-character tokens are dropped), English stopwords removed
  (bm25s's list; ``stopwords=None`` keeps them, or give your own list), no stemming.
* :class:`DenseRetriever` — cosine similarity of sentence embeddings (all-MiniLM-L6-v2 by
  default, :class:`ragmeter.pipeline.embeddings.MiniLMEncoder`; any object with
  ``encode(texts, batch_size=...)`` returning L2-normalised rows will do).
* :func:`reciprocal_rank_fusion` — hybrid retrieval: ``RRF(d) = Σ_runs 1 / (k + rank_run(d))``
  with ranks from 1 and ``k = 60`` (Cormack, Clarke & Büttcher, SIGIR 2009); a document absent
  from a run adds nothing for that run.
* :func:`mmr_rerank` — maximal marginal relevance (Carbonell & Goldstein 1998) on the same
  embeddings: repeatedly pick ``argmax_d λ·sim(q, d) − (1 − λ)·max_{s ∈ S} sim(d, s)`` among the
  candidates not yet selected (the first pick is the candidate most similar to the query),
  ``sim`` = cosine, ``λ = 0.5`` by default (λ = 1: pure relevance; λ = 0: pure novelty).
* :class:`CrossEncoderReranker` — rescoring (query, passage) pairs with a local cross-encoder
  model directory (``sentence-transformers`` must be installed; no model ships with ragmeter).

Reranked runs keep their new order in the scores: the item at rank ``i`` (from 1) of a list
of ``n`` scores ``n − i + 1``, so a TREC file of the run reads back in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from ragmeter.core.data import Run
from ragmeter.errors import InputError, MissingExtraError, RagmeterError

if TYPE_CHECKING:
    from ragmeter.core.judgments import Corpus

FloatMatrix = npt.NDArray[np.float32]

#: RRF's constant k (Cormack et al. 2009 found 60 near-optimal across collections)
RRF_K = 60
#: MMR's trade-off λ between relevance and novelty
MMR_LAMBDA = 0.5
#: bm25s's default BM25 parameters
BM25_K1 = 1.5
BM25_B = 0.75


class Encoder(Protocol):
    """What the dense retriever needs of an embedding model."""

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> Any:
        """One L2-normalised row per text (float32, shape ``(len(texts), dim)``)."""
        ...


@dataclass(frozen=True)
class Texts:
    """Ids and texts, in parallel (a corpus or a query set)."""

    ids: tuple[str, ...]
    texts: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.texts):
            raise InputError(f"{len(self.ids)} ids for {len(self.texts)} texts")
        seen: set[str] = set()
        for ident in self.ids:
            if ident in seen:
                raise InputError(f"id '{ident}' given twice")
            seen.add(ident)

    @classmethod
    def from_mapping(cls, data: Mapping[str, str]) -> Texts:
        return cls(tuple(map(str, data)), tuple(data.values()))

    @classmethod
    def from_corpus(cls, corpus: Corpus) -> Texts:
        """From a :class:`ragmeter.core.judgments.Corpus` (``read_corpus`` of ``{id, text}``
        JSONL; queries files have the same shape)."""
        return cls(tuple(corpus.doc_ids.to_pylist()), tuple(corpus.texts.to_pylist()))

    def __len__(self) -> int:
        return len(self.ids)


TextsLike = Texts | Mapping[str, str]


def _texts(value: TextsLike) -> Texts:
    return value if isinstance(value, Texts) else Texts.from_mapping(value)


def _top_run(
    query_ids: Sequence[str],
    doc_ids: Sequence[str],
    scores: Iterable[npt.NDArray[np.float64]],
    depth: int,
    name: str,
) -> Run:
    """The top ``depth`` documents of each score row (one per query, docs in corpus order) as
    a run, ties broken by doc id descending (the TREC ordering convention).

    ``scores`` may be a (queries × docs) matrix or any iterable of rows, e.g. rows computed
    a block of queries at a time: each row is reduced to its top ``depth`` as it comes, so
    the whole matrix never needs to exist at once.
    """
    n_docs = len(doc_ids)
    depth = min(depth, n_docs)
    qcol: list[str] = []
    dcol: list[str] = []
    scol: list[float] = []
    for q, row in zip(query_ids, scores, strict=True):
        top = np.argpartition(-row, depth - 1)[:depth] if depth < n_docs else np.arange(n_docs)
        qcol.extend([q] * len(top))
        dcol.extend(doc_ids[j] for j in top.tolist())
        scol.extend(row[top].tolist())
    return Run.from_columns(qcol, dcol, np.asarray(scol, dtype=np.float64), name=name)


def _check_depth(depth: int) -> None:
    if depth < 1:
        raise InputError(f"depth {depth}: expected ≥ 1")


# -- BM25 -------------------------------------------------------------------------------


class BM25Retriever:
    """BM25 over a corpus with ``bm25s`` (see the module docstring for the formula).

    >>> bm25 = BM25Retriever({"d1": "tram fares", "d2": "ferry times"})  # doctest: +SKIP
    >>> bm25.search({"q1": "tram"}, depth=10).ranked()  # doctest: +SKIP
    {'q1': ['d1']}
    """

    def __init__(
        self,
        corpus: TextsLike,
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
        stopwords: str | Sequence[str] | None = "en",
    ) -> None:
        try:
            import bm25s  # type: ignore[import-untyped]
        except ImportError:
            raise MissingExtraError("BM25", package="bm25s", extra="baselines") from None
        if k1 < 0 or not 0 <= b <= 1:
            raise InputError(f"BM25 k1={k1}, b={b}: expected k1 ≥ 0 and 0 ≤ b ≤ 1")
        self.corpus = _texts(corpus)
        if not len(self.corpus):
            raise InputError("empty corpus: nothing to retrieve")
        self.k1 = k1
        self.b = b
        self.stopwords: str | list[str] | None = (
            stopwords if stopwords is None or isinstance(stopwords, str) else list(stopwords)
        )
        self._bm25s = bm25s
        tokens = bm25s.tokenize(
            list(self.corpus.texts), stopwords=self.stopwords, show_progress=False
        )
        self._vocab: dict[str, int] = dict(tokens.vocab)
        self._model = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._model.index(tokens, show_progress=False)

    def tokenize(self, text: str) -> list[str]:
        """The tokens BM25 sees for ``text`` (lower-cased, stopwords removed)."""
        out = self._bm25s.tokenize(
            [text], stopwords=self.stopwords, return_ids=False, show_progress=False
        )
        return list(out[0])

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        """BM25 score of every corpus document (in corpus order) for ``query``."""
        known = [t for t in self.tokenize(query) if t in self._vocab]
        if not known:
            return np.zeros(len(self.corpus), dtype=np.float64)
        return np.asarray(self._model.get_scores(known), dtype=np.float64)

    def search(self, queries: TextsLike, *, depth: int = 100, name: str = "bm25") -> Run:
        """The top ``depth`` documents per query; documents sharing no term are left out."""
        _check_depth(depth)
        qs = _texts(queries)
        # one query's scores at a time: 1,000 queries × 50,000 documents as one float64
        # matrix took 400 MB (760 MiB at the peak); the top-k of each row is the same
        rows = (self.scores(t) for t in qs.texts)
        run = _top_run(qs.ids, self.corpus.ids, rows, depth, name)
        return _drop_zero_scores(run) if len(run) else run


def _drop_zero_scores(run: Run) -> Run:
    """A run without its zero-score rows (documents that share no term with the query)."""
    keep = run.scores > 0
    if bool(keep.all()):
        return run
    ranked = run.to_dict()
    return Run.from_dict(
        {q: {d: s for d, s in docs.items() if s > 0} for q, docs in ranked.items()},
        name=run.name,
    )


# -- dense ------------------------------------------------------------------------------


def default_encoder() -> Encoder:
    """The all-MiniLM-L6-v2 encoder of :mod:`ragmeter.pipeline.embeddings` (extra ``models``)."""
    from ragmeter.pipeline.embeddings import MiniLMEncoder

    encoder: Encoder = MiniLMEncoder()
    return encoder


def _normalised(matrix: Any, n: int, what: str) -> FloatMatrix:
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2 or out.shape[0] != n:
        raise RagmeterError(f"the encoder returned shape {out.shape} for {n} {what}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    safe: FloatMatrix = np.where(norms > 0, norms, 1.0).astype(np.float32)
    result: FloatMatrix = (out / safe).astype(np.float32)
    return result


class DenseRetriever:
    """Exact cosine-similarity search over sentence embeddings of the corpus.

    ``encoder`` defaults to all-MiniLM-L6-v2; the corpus is encoded once, at construction
    (``embeddings`` holds the rows, corpus order).
    """

    def __init__(
        self, corpus: TextsLike, *, encoder: Encoder | None = None, batch_size: int = 64
    ) -> None:
        self.corpus = _texts(corpus)
        if not len(self.corpus):
            raise InputError("empty corpus: nothing to retrieve")
        self.encoder = encoder if encoder is not None else default_encoder()
        self.batch_size = batch_size
        self.embeddings = self.encode(self.corpus.texts, "passages")
        self._index = {d: i for i, d in enumerate(self.corpus.ids)}

    def encode(self, texts: Sequence[str], what: str = "texts") -> FloatMatrix:
        """L2-normalised embeddings of ``texts`` (one row each)."""
        raw = self.encoder.encode(list(texts), batch_size=self.batch_size)
        return _normalised(raw, len(texts), what)

    def doc_embeddings(self, doc_ids: Sequence[str]) -> FloatMatrix:
        """The stored embeddings of corpus documents (an unknown id is an error)."""
        try:
            rows = [self._index[d] for d in doc_ids]
        except KeyError as exc:
            raise InputError(f"doc id {exc.args[0]!r} is not in the corpus") from None
        return self.embeddings[rows]

    def search(
        self,
        queries: TextsLike,
        *,
        depth: int = 100,
        name: str = "dense",
        query_embeddings: FloatMatrix | None = None,
    ) -> Run:
        """The ``depth`` most similar documents per query (cosine)."""
        _check_depth(depth)
        qs = _texts(queries)
        q_emb = query_embeddings if query_embeddings is not None else self.encode(qs.texts)
        scores = (q_emb @ self.embeddings.T).astype(np.float64)
        return _top_run(qs.ids, self.corpus.ids, scores, depth, name)


# -- fusion and reranking ---------------------------------------------------------------


def reciprocal_rank_fusion(
    runs: Sequence[Run], *, k: int = RRF_K, depth: int | None = None, name: str = "hybrid"
) -> Run:
    """Fuse runs by ``Σ_runs 1 / (k + rank)`` (ranks from 1; see the module docstring).

    >>> a = Run.from_lists({"q": ["d1", "d2"]})
    >>> b = Run.from_lists({"q": ["d2", "d3"]})
    >>> reciprocal_rank_fusion([a, b], k=60).ranked()
    {'q': ['d2', 'd1', 'd3']}
    """
    if not runs:
        raise InputError("reciprocal rank fusion needs at least one run")
    if k < 0:
        raise InputError(f"RRF k={k}: expected ≥ 0")
    fused: dict[str, dict[str, float]] = {}
    for run in runs:
        for q, docs in run.ranked().items():
            scores = fused.setdefault(q, {})
            for rank, d in enumerate(docs, start=1):
                scores[d] = scores.get(d, 0.0) + 1.0 / (k + rank)
    if depth is not None:
        _check_depth(depth)
        fused = {q: dict(_best(scores, depth)) for q, scores in fused.items()}
    return Run.from_dict(fused, name=name)


def _best(scores: Mapping[str, float], depth: int) -> list[tuple[str, float]]:
    """The ``depth`` best (doc, score) pairs, ties to the larger doc id (TREC order)."""
    return sorted(scores.items(), key=lambda kv: (-kv[1], _desc(kv[0])))[:depth]


def _desc(doc: str) -> tuple[int, ...]:
    return (*(-b for b in doc.encode("utf-8")), 1)


def mmr_order(
    query: npt.NDArray[np.floating[Any]],
    docs: npt.NDArray[np.floating[Any]],
    *,
    lambda_: float = MMR_LAMBDA,
    k: int | None = None,
) -> list[int]:
    """Maximal marginal relevance: the order in which MMR selects the rows of ``docs``.

    ``query`` (dim,) and ``docs`` (n, dim) are L2-normalised; sim = dot product. At each step
    the unselected row maximising ``λ·sim(q, d) − (1 − λ)·max_{s ∈ S} sim(d, s)`` is taken
    (the max over an empty S is 0, so the first pick is the most similar to the query); a tie
    goes to the earlier row. Returns ``k`` (default: all) row indices.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); docs = np.array([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
    >>> mmr_order(q, docs, lambda_=0.5)
    [0, 2, 1]
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise InputError(f"MMR λ={lambda_}: expected 0 ≤ λ ≤ 1")
    n = len(docs)
    take = n if k is None else min(k, n)
    if take <= 0:
        return []
    relevance = np.asarray(docs @ query, dtype=np.float64)
    pairwise = np.asarray(docs @ docs.T, dtype=np.float64)
    redundancy = np.zeros(n, dtype=np.float64)  # max sim to the selected set so far
    available = np.ones(n, dtype=bool)
    order: list[int] = []
    for step in range(take):
        objective = lambda_ * relevance - (1.0 - lambda_) * (redundancy if step else 0.0)
        objective = np.where(available, objective, -np.inf)
        pick = int(np.argmax(objective))
        order.append(pick)
        available[pick] = False
        redundancy = np.maximum(redundancy, pairwise[pick])
    return order


def _reordered(ranked: Mapping[str, Sequence[str]], name: str) -> Run:
    """A run in the given order, with scores n − i + 1 so a TREC file keeps the order."""
    qcol: list[str] = []
    dcol: list[str] = []
    scol: list[float] = []
    for q, docs in ranked.items():
        n = len(docs)
        qcol.extend([q] * n)
        dcol.extend(docs)
        scol.extend(float(n - i) for i in range(n))
    return Run.from_columns(qcol, dcol, np.asarray(scol, dtype=np.float64), name=name)


def mmr_rerank(
    run: Run,
    queries: TextsLike,
    retriever: DenseRetriever,
    *,
    lambda_: float = MMR_LAMBDA,
    candidates: int | None = None,
    depth: int | None = None,
    name: str | None = None,
    query_embeddings: Mapping[str, npt.NDArray[np.float32]] | None = None,
) -> Run:
    """Rerank the top ``candidates`` of each query of ``run`` (default: all) by MMR on the
    dense retriever's embeddings; keep the first ``depth`` (default: all) of the new order.

    Documents below ``candidates`` are dropped. ``query_embeddings`` (``{qid: row}``) saves
    encoding the queries again.
    """
    qs = _texts(queries)
    texts = dict(zip(qs.ids, qs.texts, strict=True))
    ranked = run.ranked()
    missing = [q for q in ranked if q not in texts]
    if missing:
        raise InputError(f"no query text for {len(missing)} run queries, e.g. '{missing[0]}'")
    if query_embeddings is None:
        order_q = list(ranked)
        rows = retriever.encode([texts[q] for q in order_q], "queries")
        query_embeddings = dict(zip(order_q, rows, strict=True))
    out: dict[str, list[str]] = {}
    for q, docs in ranked.items():
        pool = docs[:candidates] if candidates is not None else docs
        picks = mmr_order(
            query_embeddings[q], retriever.doc_embeddings(pool), lambda_=lambda_, k=depth
        )
        out[q] = [pool[i] for i in picks]
    return _reordered(out, name or f"{run.name}+mmr")


class CrossEncoderReranker:
    """Rescore (query, passage) pairs with a local cross-encoder model directory.

    Needs ``sentence-transformers`` (``pip install sentence-transformers``) and a model saved
    on disk (e.g. a ``cross-encoder/ms-marco-MiniLM-L-6-v2`` directory); nothing is
    downloaded. The model is loaded on first use.
    """

    def __init__(self, model_path: str | Path, *, batch_size: int = 32) -> None:
        path = Path(model_path)
        if not path.exists():
            raise InputError("cross-encoder model directory not found", source=str(path))
        self.model_path = path
        self.batch_size = batch_size
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                from sentence_transformers import (  # type: ignore[import-not-found]
                    CrossEncoder,
                )
            except ImportError:
                raise RagmeterError(
                    "the cross-encoder reranker needs sentence-transformers: "
                    "pip install sentence-transformers"
                ) from None
            self._model = CrossEncoder(str(self.model_path), local_files_only=True)
        return self._model

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]:
        """One relevance score per passage."""
        if not passages:
            return np.zeros(0, dtype=np.float64)
        model = self._load()
        pairs = [(query, p) for p in passages]
        return np.asarray(model.predict(pairs, batch_size=self.batch_size), dtype=np.float64)

    def rerank(
        self,
        run: Run,
        queries: TextsLike,
        corpus: TextsLike,
        *,
        candidates: int | None = None,
        name: str | None = None,
    ) -> Run:
        """Reorder the top ``candidates`` of each query by the cross-encoder's scores."""
        qs = dict(zip(_texts(queries).ids, _texts(queries).texts, strict=True))
        docs_text = dict(zip(_texts(corpus).ids, _texts(corpus).texts, strict=True))
        out: dict[str, dict[str, float]] = {}
        for q, docs in run.ranked().items():
            pool = docs[:candidates] if candidates is not None else docs
            try:
                passages = [docs_text[d] for d in pool]
            except KeyError as exc:
                raise InputError(f"doc id {exc.args[0]!r} is not in the corpus") from None
            out[q] = dict(zip(pool, self.score(qs[q], passages).tolist(), strict=True))
        return Run.from_dict(out, name=name or f"{run.name}+ce")


Method = Literal["bm25", "dense", "hybrid"]
Rerank = Literal["mmr", "cross-encoder"]


def retrieve(
    corpus: TextsLike,
    queries: TextsLike,
    *,
    method: Method = "bm25",
    depth: int = 100,
    rerank: Rerank | None = None,
    candidates: int | None = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
    stopwords: str | Sequence[str] | None = "en",
    rrf_k: int = RRF_K,
    mmr_lambda: float = MMR_LAMBDA,
    cross_encoder: str | Path | None = None,
    encoder: Encoder | None = None,
    name: str | None = None,
) -> Run:
    """One baseline system end to end: retrieve with ``method``, optionally rerank.

    ``hybrid`` fuses BM25 and dense runs (each to ``max(depth, candidates)``) by RRF.
    A reranker reorders the first ``candidates`` (default ``depth``) of the retrieved list;
    the result keeps the first ``depth``. ``name`` defaults to ``method[+rerank]``.
    """
    _check_depth(depth)
    if candidates is not None and candidates < 1:
        raise InputError(f"candidates {candidates}: expected ≥ 1")
    if rerank == "cross-encoder" and cross_encoder is None:
        raise InputError("the cross-encoder reranker needs a local model directory")
    if not 0.0 <= mmr_lambda <= 1.0:
        raise InputError(f"MMR λ={mmr_lambda}: expected 0 ≤ λ ≤ 1")
    docs = _texts(corpus)
    qs = _texts(queries)
    pool_depth = max(depth, candidates or 0)
    label = name or (method if rerank is None else f"{method}+{rerank}")
    dense: DenseRetriever | None = None
    if method in ("dense", "hybrid") or rerank == "mmr":
        dense = DenseRetriever(docs, encoder=encoder)
    if method == "bm25":
        run = BM25Retriever(docs, k1=k1, b=b, stopwords=stopwords).search(qs, depth=pool_depth)
    elif method == "dense":
        assert dense is not None
        run = dense.search(qs, depth=pool_depth)
    elif method == "hybrid":
        assert dense is not None
        lexical = BM25Retriever(docs, k1=k1, b=b, stopwords=stopwords).search(qs, depth=pool_depth)
        run = reciprocal_rank_fusion(
            [lexical, dense.search(qs, depth=pool_depth)], k=rrf_k, depth=pool_depth
        )
    else:
        raise InputError(f"unknown method {method!r}; expected bm25, dense or hybrid")
    if rerank == "mmr":
        assert dense is not None
        run = mmr_rerank(
            run, qs, dense, lambda_=mmr_lambda, candidates=candidates or depth, depth=depth
        )
    elif rerank == "cross-encoder":
        assert cross_encoder is not None
        run = CrossEncoderReranker(cross_encoder).rerank(
            run, qs, docs, candidates=candidates or depth
        )
    elif rerank is not None:
        raise InputError(f"unknown reranker {rerank!r}; expected mmr or cross-encoder")
    return _cut(run, depth, label)


def _cut(run: Run, depth: int, name: str) -> Run:
    """The first ``depth`` of each query, named ``name``."""
    from dataclasses import replace

    if int(run.lengths().max(initial=0)) <= depth:
        return replace(run, name=name)
    ranked = run.to_dict()
    return Run.from_dict({q: dict(_best(scores, depth)) for q, scores in ranked.items()}, name=name)


__all__ = [
    "BM25_B",
    "BM25_K1",
    "MMR_LAMBDA",
    "RRF_K",
    "BM25Retriever",
    "CrossEncoderReranker",
    "DenseRetriever",
    "Encoder",
    "Texts",
    "default_encoder",
    "mmr_order",
    "mmr_rerank",
    "reciprocal_rank_fusion",
    "retrieve",
]
