"""Sub-question judgments for coverage of the retrieval context (SPEC §4; seed 003, CRUX).

Per query: sub-questions ``1..n`` (optionally their text) and a rating matrix passage ×
sub-question with ratings ``r(d, i) ∈ {0..5}``; ``-1`` marks an unparseable judge output and is
never answerable. Answerable ⇔ ``r ≥ τ`` (τ = 3 by default).

Storage is columnar, as :class:`~ragmeter.core.data.Qrels`: queries in byte order, CSR
``offsets`` over passage rows (rows keep their input order within a query: the greedy selection
of ``P*`` breaks ties by input order), doc ids in one Arrow string array, and one flat ``int8``
rating array where row ``p`` holds ``ratings[rating_offsets[p] : rating_offsets[p + 1]]``, one
rating per sub-question of its query (``widths[q]`` of them). A sub-question has a global index
``question_offsets[q] + i`` (0-based ``i``), so every per-question quantity is a flat array.

Derived structures (all vectorized over queries; the greedy procedures loop over steps only):

* **required subset** ``P*`` (:meth:`Judgments.required`): repeat while an answerable question
  is uncovered: score every passage ``#{uncovered i: r(d,i) ≥ τ} + 0.1·[∃ uncovered i:
  r(d,i) > 0]``, take the first maximum in input order, add it (it always covers something
  new). ``Q_ans`` = the questions some passage of ``P*`` answers = the questions any judged
  passage answers.
* **redundancy labels** (:meth:`Judgments.labels`): required (3); outside ``P*``: fully
  redundant (1) when its rating is strictly below ``P*``'s maximum on every question, else
  partially redundant (2). This is the released CRUX code's mapping onto graded qrels
  (``create_diversity_qrels.py``: useful 3, neutral 2, redundant 1). A query without any
  answerable question has no ``P*``; its passages get 0.
* **ideal α-DCG** (:meth:`Judgments.ideal_alpha_dcg`): ndeval's greedy ideal ranking over all
  judged passages, ties to the larger doc id (byte order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter import _accel
from ragmeter.core.data import (
    FloatArray,
    IntArray,
    _as_id_array,
    _as_string_array,
    _encode,
    _string_ranks,
)
from ragmeter.errors import InputError, MissingInputError

if TYPE_CHECKING:
    from ragmeter.core.data import Qrels

RATING_MIN, RATING_MAX = -1, 5
#: the answerability threshold of the paper
DEFAULT_TAU = 3

#: graded-qrels labels of the passages (the released CRUX code's mapping)
REQUIRED, PARTLY_REDUNDANT, FULLY_REDUNDANT, NO_ANSWERABLE = 3, 2, 1, 0

#: counts the tokens of one text (a pluggable tokenizer)
TokenCounter = Callable[[str], int]

#: upper bound on the cells of one dense (queries × passages × questions) block
_BLOCK_CELLS = 1 << 22

_T = TypeVar("_T")
RatingArray = npt.NDArray[np.int8]
BoolArray = npt.NDArray[np.bool_]


def ranges(starts: IntArray, lengths: IntArray) -> IntArray:
    """Concatenated ``arange(s, s + n)`` for each ``(s, n)``, without a Python loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    out: IntArray = np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths)
    out += np.arange(total, dtype=np.int64)
    return out


def _offsets(lengths: npt.ArrayLike) -> IntArray:
    return np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64))]).astype(np.int64)


def _int_ratings(values: Sequence[Any], source: str, line: int | None, row: int) -> list[int]:
    """Validate one ratings vector: integers in −1..5."""
    out = []
    for v in values:
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            where = "" if line is not None else f"row {row + 1}: "
            raise InputError(
                f"{where}rating {v!r} is not an integer; expected −1..5 (−1 = unparseable)",
                source=source,
                line=line,
                field="ratings",
            )
        if not RATING_MIN <= v <= RATING_MAX:
            where = "" if line is not None else f"row {row + 1}: "
            raise InputError(
                f"{where}rating {v} is outside −1..5 (−1 = unparseable judge output)",
                source=source,
                line=line,
                field="ratings",
            )
        out.append(v)
    return out


@dataclass(frozen=True, eq=False)
class Judgments:
    """Ratings of passages against the sub-questions of each query.

    Attributes:
        query_ids: distinct query ids in byte order.
        offsets: CSR offsets of each query's passage rows (input order within the query).
        doc_ids: Arrow string array, one doc id per row.
        widths: number of sub-questions of each query.
        ratings: flat int8 ratings, row after row (``widths[q]`` per row of query ``q``).
        rating_offsets: CSR offsets of each row's ratings in ``ratings``.
        questions: per query, the sub-question texts (``None`` where not given); or ``None``.
        name: a name for messages.
        warnings: notes produced while reading (repeated identical judgments dropped).
    """

    query_ids: npt.NDArray[np.object_]
    offsets: IntArray
    doc_ids: pa.Array
    widths: IntArray
    ratings: RatingArray
    rating_offsets: IntArray
    questions: tuple[tuple[str, ...] | None, ...] | None = None
    name: str = "judgments"
    warnings: tuple[str, ...] = field(default=())
    _cache: dict[object, object] = field(default_factory=dict, repr=False)

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_rows(
        cls,
        query_ids: Sequence[Any],
        doc_ids: Sequence[Any],
        ratings: Sequence[Sequence[Any]],
        *,
        questions: Mapping[str, Sequence[str] | int] | None = None,
        name: str = "judgments",
        source: str = "<judgments>",
        lines: Sequence[int] | None = None,
    ) -> Judgments:
        """Build judgments from one row per judged passage.

        ``questions`` maps a query to its sub-question texts (or just their number); a query
        listed there without rows has no judged passage. Every row of a query must have one
        rating per sub-question; a (query, doc) judged twice with different ratings is an
        error, an identical repeat is dropped with a warning.
        """
        n = len(query_ids)
        if len(doc_ids) != n or len(ratings) != n:
            raise InputError("query, doc and ratings columns differ in length", source=source)
        line_of = (lambda i: int(lines[i])) if lines is not None else (lambda i: None)
        checked = [_int_ratings(r, source, line_of(i), i) for i, r in enumerate(ratings)]
        lengths = np.fromiter((len(r) for r in checked), dtype=np.int64, count=n)
        flat = np.fromiter((v for r in checked for v in r), dtype=np.int8, count=int(lengths.sum()))
        q_extra: list[str] = [str(q) for q in questions] if questions else []
        qids = _as_id_array([*(str(q) for q in query_ids), *q_extra], source, "query_id")
        docs = _as_id_array(doc_ids, source, "doc_id")
        codes, dictionary = _encode(qids)
        extra_codes, codes = codes[n:], codes[:n]
        n_q = len(dictionary)
        qnames = dictionary.to_pylist()

        # expected width per query: its questions, else its first row
        expected = np.full(n_q, -1, dtype=np.int64)
        first_row = np.full(n_q, n, dtype=np.int64)
        np.minimum.at(first_row, codes, np.arange(n, dtype=np.int64))
        has_row = first_row < n
        expected[has_row] = lengths[first_row[has_row]]
        question_texts: dict[int, tuple[str, ...]] = {}
        if questions:
            for code, q in zip(extra_codes.tolist(), q_extra, strict=True):
                spec = questions[q]
                if isinstance(spec, int):
                    expected[code] = spec
                else:
                    question_texts[code] = tuple(str(t) for t in spec)
                    expected[code] = len(question_texts[code])
        bad = np.flatnonzero(lengths != expected[codes])
        if len(bad):
            i = int(bad[0])
            q = qnames[int(codes[i])]
            if questions and q in questions:
                why = f"query '{q}' has {int(expected[codes[i]])} sub-questions"
            else:
                j = int(first_row[codes[i]])
                at = f"line {line_of(j)}" if lines is not None else f"row {j + 1}"
                why = f"query '{q}' has {int(expected[codes[i]])} ratings on {at}"
            raise InputError(
                f"{int(lengths[i])} ratings for doc '{docs[i].as_py()}', but {why}; expected "
                "one rating per sub-question",
                source=source,
                line=line_of(i),
                field="ratings",
            )
        expected[expected < 0] = 0

        # repeated (query, doc): identical → dropped, different → error
        keep = np.ones(n, dtype=bool)
        warnings: list[str] = []
        if n > 1:
            table = pa.table({"q": codes, "d": docs, "i": np.arange(n, dtype=np.int64)})
            grouped = table.group_by(["q", "d"], use_threads=False).aggregate([("i", "list")])
            if grouped.num_rows != n:
                for rows in grouped["i_list"].to_pylist():
                    if len(rows) < 2:
                        continue
                    rows = sorted(rows)
                    for r in rows[1:]:
                        if checked[r] != checked[rows[0]]:
                            first = line_of(rows[0])
                            at = f"line {first}" if first is not None else f"row {rows[0] + 1}"
                            raise InputError(
                                f"query '{qnames[int(codes[r])]}' doc '{docs[r].as_py()}' "
                                f"rated {checked[r]} here but {checked[rows[0]]} on {at}; "
                                "expected one rating vector per (query, doc)",
                                source=source,
                                line=line_of(r),
                                field="ratings",
                            )
                        keep[r] = False
                warnings.append(
                    f"{source}: {int((~keep).sum())} repeated identical judgment(s) ignored"
                )

        ranks = _string_ranks(dictionary)
        rows = np.flatnonzero(keep)
        perm = rows[np.argsort(ranks[codes[rows]], kind="stable")]
        query_order = np.argsort(ranks, kind="stable")
        row_offsets = _offsets(lengths)
        new_lengths = lengths[perm]
        flat_sorted = flat[ranges(row_offsets[perm], new_lengths)]
        counts = np.bincount(ranks[codes[perm]], minlength=n_q)
        qtexts: tuple[tuple[str, ...] | None, ...] | None = None
        if question_texts:
            qtexts = tuple(question_texts.get(int(c)) for c in query_order)
        return cls(
            query_ids=np.array([qnames[int(c)] for c in query_order], dtype=object),
            offsets=_offsets(counts),
            doc_ids=docs.take(_accel.indices(perm)) if n else docs,
            widths=expected[query_order],
            ratings=flat_sorted.astype(np.int8),
            rating_offsets=_offsets(new_lengths),
            questions=qtexts,
            name=name,
            warnings=tuple(warnings),
        )

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, Sequence[int]]], *, name: str = "judgments"
    ) -> Judgments:
        """Build from ``{qid: {doc_id: [r_1, …, r_n]}}`` (rows in the mapping's order)."""
        qids: list[str] = []
        docs: list[str] = []
        ratings: list[Sequence[int]] = []
        for q, inner in data.items():
            for d, r in inner.items():
                qids.append(str(q))
                docs.append(str(d))
                ratings.append(r)
        return cls.from_rows(qids, docs, ratings, name=name, source="<dict>")

    # -- access -----------------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def _cached(self, key: object, compute: Callable[[], _T]) -> _T:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]  # type: ignore[return-value]

    @property
    def question_offsets(self) -> IntArray:
        """CSR offsets of each query's sub-questions in the global question index."""
        return self._cached("question_offsets", lambda: _offsets(self.widths))

    @property
    def row_query(self) -> IntArray:
        """Query index of every passage row."""
        return self._cached(
            "row_query",
            lambda: np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.offsets)),
        )

    @property
    def cell_row(self) -> IntArray:
        """Row of every rating cell."""
        return self._cached(
            "cell_row",
            lambda: np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.rating_offsets)),
        )

    @property
    def cell_question(self) -> IntArray:
        """Global question index of every rating cell."""

        def compute() -> IntArray:
            rows = self.cell_row
            local = np.arange(len(self.ratings), dtype=np.int64) - self.rating_offsets[rows]
            out: IntArray = self.question_offsets[self.row_query[rows]] + local
            return out

        return self._cached("cell_question", compute)

    @property
    def question_query(self) -> IntArray:
        """Query index of every global question."""
        return self._cached(
            "question_query",
            lambda: np.repeat(np.arange(self.n_queries, dtype=np.int64), self.widths),
        )

    def index(self) -> dict[str, int]:
        """``{query_id: query index}``."""
        return self._cached(
            "index", lambda: {str(q): i for i, q in enumerate(self.query_ids.tolist())}
        )

    def answerable(self, tau: int = DEFAULT_TAU) -> BoolArray:
        """``Q_ans`` as a mask over global questions: some judged passage rates it ≥ τ."""

        def compute() -> BoolArray:
            hit = self.cell_question[self.ratings >= tau]
            return np.bincount(hit, minlength=int(self.question_offsets[-1])) > 0

        return self._cached(("answerable", tau), compute)

    def n_answerable(self, tau: int = DEFAULT_TAU) -> IntArray:
        """``|Q_ans|`` per query."""
        return self._cached(
            ("n_answerable", tau),
            lambda: np.bincount(
                self.question_query, weights=self.answerable(tau), minlength=self.n_queries
            ).astype(np.int64),
        )

    # -- dense blocks -----------------------------------------------------------------
    def _blocks(
        self, rows: IntArray, row_offsets: IntArray, queries: IntArray
    ) -> list[tuple[IntArray, IntArray, RatingArray]]:
        """Dense rating blocks of ``queries``: ``(queries, row index, R[b, p, i])``.

        ``rows``/``row_offsets`` give, per query (CSR over all queries), the rows to lay out
        in order. Queries are grouped by size so that padding stays small; padding rates −2
        (never answerable, never positive) and has row index −1.
        """
        sizes = np.diff(row_offsets)[queries]
        widths = self.widths[queries]
        order = np.lexsort((widths, sizes))
        out = []
        start = 0
        n = len(order)
        while start < n:
            p_max = max(int(sizes[order[start]]), 1)
            end = start + 1
            w_max = max(int(widths[order[start]]), 1)
            while end < n:
                p = max(int(sizes[order[end]]), 1)
                w = max(w_max, int(widths[order[end]]))
                if (end - start + 1) * p * w > _BLOCK_CELLS and end > start:
                    break
                p_max, w_max = p, w
                end += 1
            # sizes are sorted: the last query of the block has the most rows
            qs = queries[order[start:end]]
            out.append(self._dense(qs, rows, row_offsets, p_max, w_max))
            start = end
        return out

    def _dense(
        self, qs: IntArray, rows: IntArray, row_offsets: IntArray, p_max: int, w_max: int
    ) -> tuple[IntArray, IntArray, RatingArray]:
        b = len(qs)
        counts = np.diff(row_offsets)[qs]
        picked = rows[ranges(row_offsets[qs], counts)]
        slot = np.repeat(np.arange(b, dtype=np.int64), counts)
        pos = np.arange(len(picked), dtype=np.int64) - np.repeat(_offsets(counts)[:-1], counts)
        row_index = np.full((b, p_max), -1, dtype=np.int64)
        row_index[slot, pos] = picked
        dense = np.full((b, p_max, w_max), -2, dtype=np.int8)
        row_w = np.diff(self.rating_offsets)[picked]
        cells = ranges(self.rating_offsets[picked], row_w)
        base = np.repeat((slot * p_max + pos) * w_max, row_w)
        local = np.arange(len(cells), dtype=np.int64) - np.repeat(_offsets(row_w)[:-1], row_w)
        dense.reshape(-1)[base + local] = self.ratings[cells]
        return qs, row_index, dense

    # -- required subset --------------------------------------------------------------
    def required(self, tau: int = DEFAULT_TAU) -> tuple[IntArray, IntArray]:
        """``P*`` per query as CSR ``(offsets, rows)``, rows in greedy selection order.

        Greedy (SPEC §4): while an answerable question is uncovered, score each passage
        ``#{uncovered i: r ≥ τ} + 0.1·[∃ uncovered i: r > 0]`` and take the first maximum in
        input order (compared exactly as ``10·count + [any positive]``).
        """
        return self._cached(("required", tau), lambda: self._greedy_required(tau))

    def _greedy_required(self, tau: int) -> tuple[IntArray, IntArray]:
        n_q = self.n_queries
        queries = np.flatnonzero(self.n_answerable(tau) > 0)
        all_rows = np.arange(len(self), dtype=np.int64)
        picked_q: list[IntArray] = []
        picked_row: list[IntArray] = []
        picked_step: list[IntArray] = []
        for qs, row_index, dense in self._blocks(all_rows, self.offsets, queries):
            ans: BoolArray = np.greater_equal(dense, tau)
            pos: BoolArray = np.greater(dense, 0)
            uncovered: BoolArray = np.any(ans, axis=1)
            active = np.flatnonzero(uncovered.any(axis=1))
            step = 0
            while len(active):
                a = ans[active]
                u = uncovered[active][:, None, :]
                score = 10 * (a & u).sum(axis=2, dtype=np.int32)
                score += (pos[active] & u).any(axis=2)
                best = score.argmax(axis=1)
                picked_q.append(qs[active])
                picked_row.append(row_index[active, best])
                picked_step.append(np.full(len(active), step, dtype=np.int64))
                uncovered[active] &= ~a[np.arange(len(active)), best]
                active = active[uncovered[active].any(axis=1)]
                step += 1
        if not picked_q:
            return np.zeros(n_q + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        q = np.concatenate(picked_q)
        r = np.concatenate(picked_row)
        s = np.concatenate(picked_step)
        order = np.lexsort((s, q))
        return _offsets(np.bincount(q, minlength=n_q)), r[order]

    def required_size(self, tau: int = DEFAULT_TAU) -> IntArray:
        """``|P*|`` per query (0 where no question is answerable)."""
        return np.diff(self.required(tau)[0])

    def labels(self, tau: int = DEFAULT_TAU) -> npt.NDArray[np.int32]:
        """Per row: 3 required, 2 partially redundant, 1 fully redundant, 0 no ``P*``.

        Fully redundant ⇔ the rating is strictly below ``P*``'s maximum on every question.
        """

        def compute() -> npt.NDArray[np.int32]:
            _, req = self.required(tau)
            n_questions = int(self.question_offsets[-1])
            best = np.full(n_questions, RATING_MIN - 1, dtype=np.int64)
            cells = ranges(self.rating_offsets[req], np.diff(self.rating_offsets)[req])
            np.maximum.at(best, self.cell_question[cells], self.ratings[cells])
            not_below = self.ratings.astype(np.int64) >= best[self.cell_question]
            partly = np.bincount(self.cell_row, weights=not_below, minlength=len(self)) > 0
            out = np.where(partly, PARTLY_REDUNDANT, FULLY_REDUNDANT).astype(np.int32)
            out[req] = REQUIRED
            out[self.n_answerable(tau)[self.row_query] == 0] = NO_ANSWERABLE
            return out

        return self._cached(("labels", tau), compute)

    # -- ideal α-DCG ------------------------------------------------------------------
    def ideal_alpha_dcg(self, alpha: float, depth: int, tau: int = DEFAULT_TAU) -> FloatArray:
        """Ideal α-DCG@depth per query: ndeval's greedy over all judged passages.

        At each rank take the passage of largest gain ``Σ_i J(d,i)·(1−α)^{c_i}`` (``c_i`` =
        passages already taken that answer ``i``), ties to the larger doc id (byte order);
        discount ``1/log2(rank + 1)``. Passages answering nothing add 0 wherever they go, so
        only answering passages are laid out.
        """
        return self._cached(
            ("ideal_alpha_dcg", alpha, depth, tau),
            lambda: self._greedy_ideal(alpha, depth, tau),
        )

    def _greedy_ideal(self, alpha: float, depth: int, tau: int) -> FloatArray:
        n_q = self.n_queries
        out = np.zeros(n_q, dtype=np.float64)
        answering = np.bincount(self.cell_row, weights=self.ratings >= tau, minlength=len(self))
        rows = np.flatnonzero(answering > 0)
        # doc id descending (byte order) within each query: argmax's first maximum is then
        # ndeval's tie-break to the larger docno
        doc_rank = _string_ranks(self.doc_ids.take(_accel.indices(rows))) if len(rows) else rows
        rows = rows[np.lexsort((-doc_rank, self.row_query[rows]))]
        row_offsets = _offsets(np.bincount(self.row_query[rows], minlength=n_q))
        queries = np.flatnonzero(np.diff(row_offsets) > 0)
        decay = 1.0 - alpha
        for qs, row_index, dense in self._blocks(rows, row_offsets, queries):
            judged = (dense >= tau).astype(np.float64)
            b, p_max, w_max = judged.shape
            weight = np.ones((b, w_max), dtype=np.float64)
            taken = np.zeros((b, p_max), dtype=bool)
            taken[row_index < 0] = True
            total = np.zeros(b, dtype=np.float64)
            arange = np.arange(b)
            for rank in range(1, min(depth, p_max) + 1):
                gain = np.matmul(judged, weight[:, :, None])[:, :, 0]
                gain[taken] = -1.0
                best = gain.argmax(axis=1)
                top = gain[arange, best]
                if not (top > 0).any():
                    break
                total += np.maximum(top, 0.0) / np.log2(rank + 1.0)
                taken[arange, best] = True
                weight = np.where(judged[arange, best] > 0, weight * decay, weight)
            out[qs] = total
        return out

    # -- as qrels ---------------------------------------------------------------------
    def graded_qrels(self, tau: int = DEFAULT_TAU, *, skip_unanswerable: bool = False) -> Qrels:
        """Graded qrels: required 3, partially redundant 2, fully redundant 1 (0 for every
        passage of a query without answerable question, or no row with ``skip_unanswerable``).
        """
        from ragmeter.core.data import Qrels

        labels = self.labels(tau)
        keep = np.ones(len(self), dtype=bool)
        if skip_unanswerable:
            keep = self.n_answerable(tau)[self.row_query] > 0
        idx = np.flatnonzero(keep)
        qids = pa.array(self.query_ids[self.row_query[idx]].tolist(), type=pa.string())
        return Qrels.from_columns(
            qids,
            self.doc_ids.take(_accel.indices(idx)),
            labels[idx],
            name=self.name,
            source=self.name,
        )

    def diversity_rows(self, tau: int = DEFAULT_TAU) -> tuple[IntArray, IntArray, BoolArray]:
        """Every cell as ``(row, sub-question number 1..n, answerable)`` (diversity qrels)."""
        rows = self.cell_row
        local = self.cell_question - self.question_offsets[self.row_query[rows]]
        return rows, local + 1, self.ratings >= tau


@dataclass(frozen=True, eq=False)
class Corpus:
    """Passage texts by doc id (``{"id", "text"}`` rows), for token counts."""

    doc_ids: pa.Array
    texts: pa.Array
    name: str = "corpus"
    _cache: dict[object, object] = field(default_factory=dict, repr=False)

    @classmethod
    def from_columns(
        cls, doc_ids: Any, texts: Any, *, name: str = "corpus", source: str = "<corpus>"
    ) -> Corpus:
        ids = _as_id_array(doc_ids, source, "id")
        text_arr = _as_string_array(texts)
        if len(ids) != len(text_arr):
            raise InputError("id and text columns differ in length", source=source)
        return cls(ids, text_arr, name=name)

    @classmethod
    def from_dict(cls, data: Mapping[str, str], *, name: str = "corpus") -> Corpus:
        return cls.from_columns(list(data), list(data.values()), name=name, source="<dict>")

    def lookup(self, doc_ids: pa.Array) -> IntArray:
        """Position of each doc id in the corpus; −1 where absent."""
        import pyarrow.compute as pc

        if len(doc_ids) == 0:
            return np.zeros(0, dtype=np.int64)
        values = self.doc_ids
        if values.type != doc_ids.type:
            values = values.cast(pa.large_string())
            doc_ids = doc_ids.cast(pa.large_string())
        found = pc.index_in(doc_ids, value_set=values)
        out: IntArray = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        return out

    def token_counts(self, positions: IntArray, counter: TokenCounter | None = None) -> IntArray:
        """Tokens of the texts at ``positions`` (whitespace tokens unless ``counter``)."""
        texts = self.texts.take(_accel.indices(positions))
        return count_tokens(texts, counter)


def count_tokens(texts: pa.Array, counter: TokenCounter | None = None) -> IntArray:
    """Token count of each text: whitespace-separated tokens (``len(text.split())``) by
    default, computed in Arrow; ``counter`` (one call per text) otherwise. A null text has 0.
    """
    if counter is None:
        import pyarrow.compute as pc

        # trimmed first: Arrow yields an empty token for leading/trailing white space
        trimmed = pc.utf8_trim_whitespace(texts)
        lengths = pc.list_value_length(pc.utf8_split_whitespace(trimmed)).fill_null(0)
        empty = pc.equal(pc.utf8_length(trimmed), 0).fill_null(False)
        out: IntArray = lengths.to_numpy(zero_copy_only=False).astype(np.int64)
        out -= empty.to_numpy(zero_copy_only=False).astype(np.int64)
        return out
    return np.fromiter(
        (counter(t) if t is not None else 0 for t in texts.to_pylist()),
        dtype=np.int64,
        count=len(texts),
    )


@dataclass(frozen=True, eq=False)
class Answers:
    """Generated answers rated against the sub-questions: one row per query.

    Attributes:
        query_ids: the answered queries (input order).
        ratings: flat int8 ratings; row ``i`` holds ``ratings[offsets[i]:offsets[i+1]]``.
        offsets: CSR offsets of each answer's ratings.
        texts: Arrow string array of the answer texts (null where not given).
        lines: 1-based line of each answer in its file (for messages), or ``None``.
        source: the file (for messages).
    """

    query_ids: npt.NDArray[np.object_]
    ratings: RatingArray
    offsets: IntArray
    texts: pa.Array
    lines: IntArray | None = None
    source: str = "<answers>"

    @classmethod
    def from_rows(
        cls,
        query_ids: Sequence[Any],
        ratings: Sequence[Sequence[Any]],
        texts: Sequence[str | None] | None = None,
        *,
        source: str = "<answers>",
        lines: Sequence[int] | None = None,
    ) -> Answers:
        n = len(query_ids)
        line_of = (lambda i: int(lines[i])) if lines is not None else (lambda i: None)
        seen: dict[str, int] = {}
        for i, q in enumerate(query_ids):
            if str(q) in seen:
                first = line_of(seen[str(q)])
                at = f"line {first}" if first is not None else f"row {seen[str(q)] + 1}"
                raise InputError(
                    f"query '{q}' answered twice (first on {at}); expected one answer per query",
                    source=source,
                    line=line_of(i),
                    field="query_id",
                )
            seen[str(q)] = i
        checked = [_int_ratings(r, source, line_of(i), i) for i, r in enumerate(ratings)]
        lengths = [len(r) for r in checked]
        text_list = list(texts) if texts is not None else [None] * n
        return cls(
            query_ids=np.array([str(q) for q in query_ids], dtype=object),
            ratings=np.array([v for r in checked for v in r], dtype=np.int8),
            offsets=_offsets(lengths),
            texts=pa.array(text_list, type=pa.string()),
            lines=np.asarray(lines, dtype=np.int64) if lines is not None else None,
            source=source,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Sequence[int]]) -> Answers:
        """``{qid: [r_1, …, r_n]}`` (no texts)."""
        return cls.from_rows(list(data), list(data.values()), source="<dict>")


@dataclass(frozen=True, eq=False)
class CoverageView:
    """The coverage side of an :class:`~ragmeter.core.align.Aligned` view.

    The aligned items (a run's ranking, per evaluated query) joined to the judgment rows,
    plus what the coverage measures need: the context size, τ, texts and answers.

    Attributes:
        judgments: the judgments.
        query: per evaluated query, its index in ``judgments`` (−1 when not judged).
        item_row: per aligned item, its judgment row (−1 when the passage is not judged).
        item_doc_ids: per aligned item, its doc id (for corpus look-ups).
        item_texts: per aligned item, the run's own text (or ``None``).
        context_k: default context size (``None`` = oracle, ``|P*|`` per query).
        tau: default answerability threshold.
        corpus: passage texts, for density.
        answers: generated answers, for ``answer_*``.
        token_counter: tokenizer of density (``None`` = whitespace tokens).
    """

    judgments: Judgments
    query: IntArray
    item_row: IntArray
    item_doc_ids: pa.Array
    item_texts: pa.Array | None = None
    context_k: int | None = None
    tau: int = DEFAULT_TAU
    corpus: Corpus | None = None
    answers: Answers | None = None
    token_counter: TokenCounter | None = None
    _cache: dict[object, object] = field(default_factory=dict, repr=False)

    def cached(self, key: object, compute: Callable[[], _T]) -> _T:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]  # type: ignore[return-value]

    def need_corpus(self, what: str) -> Corpus:
        if self.corpus is None:
            raise MissingInputError(f"{what} needs passage texts: give a corpus (--corpus)")
        return self.corpus

    def need_answers(self, what: str) -> Answers:
        if self.answers is None:
            raise MissingInputError(f"{what} needs generated answers (--answers)")
        return self.answers


def coverage_view(
    judgments: Judgments,
    query_ids: npt.NDArray[np.object_],
    offsets: IntArray,
    item_doc_ids: pa.Array,
    **options: Any,
) -> CoverageView:
    """Join aligned items (``offsets`` over ``query_ids``, doc ids per item) to judgment rows.

    One Arrow hash join on (query, doc id), as the qrels join of :func:`~ragmeter.core.align.align`.
    """
    index = judgments.index()
    query = np.fromiter(
        (index.get(str(q), -1) for q in query_ids.tolist()), dtype=np.int64, count=len(query_ids)
    )
    n_items = len(item_doc_ids)
    item_row = np.full(n_items, -1, dtype=np.int64)
    lengths = np.diff(offsets)
    if n_items and len(judgments):
        item_query = np.repeat(query, lengths)
        left_docs = item_doc_ids
        right_docs = judgments.doc_ids
        if left_docs.type != right_docs.type:
            left_docs = left_docs.cast(pa.large_string())
            right_docs = right_docs.cast(pa.large_string())
        left = pa.table({"q": item_query, "d": left_docs, "i": np.arange(n_items, dtype=np.int64)})
        right = pa.table(
            {"q": judgments.row_query, "d": right_docs, "r": np.arange(len(judgments))}
        )
        joined = left.join(right, keys=["q", "d"], join_type="inner", use_threads=True)
        if joined.num_rows:
            item_row[joined["i"].to_numpy()] = joined["r"].to_numpy()
    return CoverageView(
        judgments=judgments, query=query, item_row=item_row, item_doc_ids=item_doc_ids, **options
    )


__all__ = [
    "DEFAULT_TAU",
    "FULLY_REDUNDANT",
    "PARTLY_REDUNDANT",
    "REQUIRED",
    "Answers",
    "Corpus",
    "CoverageView",
    "Judgments",
    "TokenCounter",
    "count_tokens",
    "coverage_view",
    "ranges",
]
