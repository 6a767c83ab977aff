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
from ragmeter.core.join import join_rows
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


def _bounds(offsets: IntArray, segments: IntArray) -> IntArray:
    bounds = np.empty(2 * len(segments), dtype=np.int64)
    bounds[0::2] = offsets[segments]
    bounds[1::2] = offsets[segments + 1]
    return bounds


def segment_max(values: IntArray, offsets: IntArray, segments: IntArray) -> IntArray:
    """Maximum of ``values`` over each of ``segments`` (non-empty, CSR ``offsets``)."""
    padded = np.concatenate([values, values[:1]])
    out: IntArray = np.maximum.reduceat(padded, _bounds(offsets, segments))[0::2]
    return out


def segment_argmax(
    values: FloatArray, offsets: IntArray, segments: IntArray
) -> tuple[FloatArray, IntArray]:
    """Maximum of each of ``segments`` (non-empty) and the index of its first occurrence."""
    top = np.maximum.reduceat(np.concatenate([values, values[:1]]), _bounds(offsets, segments))
    top = top[0::2]
    lengths = offsets[segments + 1] - offsets[segments]
    whole = len(segments) == len(offsets) - 1 and int(offsets[0]) == 0
    idx = np.arange(len(values), dtype=np.int64) if whole else ranges(offsets[segments], lengths)
    hit = (values if whole else values[idx]) == np.repeat(top, lengths)
    local = np.where(hit, np.arange(len(idx), dtype=np.int64), len(idx))
    first = np.minimum.reduceat(local, _offsets(lengths)[:-1])
    return top, idx[first]


def distinct(values: IntArray, size: int) -> IntArray:
    """Sorted distinct ``values`` (all in ``0..size-1``) by marking, not hashing or sorting."""
    mark = np.zeros(size, dtype=bool)
    mark[values] = True
    return np.flatnonzero(mark)


def _int_ratings(values: Sequence[Any], source: str, line: int | None, row: int) -> list[int]:
    """Validate one ratings vector: integers in −1..5."""
    out = []
    for v in values:
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        problem = None
        if isinstance(v, bool) or not isinstance(v, int):
            problem = f"rating {v!r} is not an integer; expected −1..5 (−1 = unparseable)"
        elif not RATING_MIN <= v <= RATING_MAX:
            problem = f"rating {v} is outside −1..5 (−1 = unparseable judge output)"
        if problem is not None:
            where = "" if line is not None else f"row {row + 1}: "
            raise InputError(where + problem, source=source, line=line, field="ratings")
        out.append(v)
    return out


def _drop_repeats(
    codes: IntArray,
    docs: pa.Array,
    row_ratings: Callable[[int], list[int]],
    qnames: list[Any],
    line_of: Callable[[int], int | None],
    source: str,
) -> tuple[npt.NDArray[np.bool_], list[str]]:
    """Rows to keep of repeated (query, doc) pairs: an identical repeat is dropped (with a
    warning), a different rating vector is an error naming both lines."""
    n = len(codes)
    keep = np.ones(n, dtype=bool)
    warnings: list[str] = []
    if n < 2:
        return keep, warnings
    table = pa.table({"q": codes, "d": docs, "i": np.arange(n, dtype=np.int64)})
    grouped = table.group_by(["q", "d"], use_threads=False).aggregate([("i", "list")])
    if grouped.num_rows == n:
        return keep, warnings
    for rows in grouped["i_list"].to_pylist():
        if len(rows) < 2:
            continue
        rows = sorted(rows)
        for r in rows[1:]:
            if row_ratings(r) != row_ratings(rows[0]):
                first = line_of(rows[0])
                at = f"line {first}" if first is not None else f"row {rows[0] + 1}"
                raise InputError(
                    f"query '{qnames[int(codes[r])]}' doc '{docs[r].as_py()}' "
                    f"rated {row_ratings(r)} here but {row_ratings(rows[0])} on {at}; "
                    "expected one rating vector per (query, doc)",
                    source=source,
                    line=line_of(r),
                    field="ratings",
                )
            keep[r] = False
    warnings.append(f"{source}: {int((~keep).sum())} repeated identical judgment(s) ignored")
    return keep, warnings


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
    _cache: dict[object, object] = field(default_factory=dict, init=False, repr=False)

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
        qids = _as_id_array([str(q) for q in query_ids], source, "query_id")
        return cls.from_flat(
            qids,
            doc_ids,
            lengths,
            flat,
            questions=questions,
            name=name,
            source=source,
            lines=lines,
        )

    @classmethod
    def from_flat(
        cls,
        query_ids: Any,
        doc_ids: Any,
        lengths: IntArray,
        ratings: npt.NDArray[np.integer[Any]],
        *,
        questions: Mapping[str, Sequence[str] | int] | None = None,
        name: str = "judgments",
        source: str = "<judgments>",
        lines: Sequence[int] | None = None,
    ) -> Judgments:
        """:meth:`from_rows` with the ratings already checked (integers in −1..5) and flat.

        ``lengths[i]`` is row ``i``'s number of ratings, its ratings
        ``ratings[sum(lengths[:i]) : sum(lengths[:i + 1])]``; ids are Arrow string arrays
        or sequences of strings. Readers that validate whole columns at once (Arrow's JSON
        reader) build judgments here without a Python object per rating.
        """
        n = len(lengths)
        if len(query_ids) != n or len(doc_ids) != n:
            raise InputError("query, doc and ratings columns differ in length", source=source)
        line_of = (lambda i: int(lines[i])) if lines is not None else (lambda i: None)
        lengths = np.asarray(lengths, dtype=np.int64)
        flat = np.asarray(ratings, dtype=np.int8)
        row_offsets = _offsets(lengths)

        def row_ratings(r: int) -> list[int]:
            return flat[row_offsets[r] : row_offsets[r + 1]].tolist()  # type: ignore[no-any-return]

        q_extra: list[str] = [str(q) for q in questions] if questions else []
        qids = _as_id_array(query_ids, source, "query_id")
        if q_extra:
            qids = pa.concat_arrays([qids.cast(pa.string()), pa.array(q_extra, pa.string())])
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

        keep, warnings = _drop_repeats(codes, docs, row_ratings, qnames, line_of, source)
        ranks = _string_ranks(dictionary)
        rows = np.flatnonzero(keep)
        perm = rows[np.argsort(ranks[codes[rows]], kind="stable")]
        query_order = np.argsort(ranks, kind="stable")
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
            shift = self.question_offsets[self.row_query] - self.rating_offsets[:-1]
            out: IntArray = np.repeat(shift, np.diff(self.rating_offsets))
            out += np.arange(len(self.ratings), dtype=np.int64)
            return out

        return self._cached("cell_question", compute)

    def rows_of(self, cells: IntArray) -> IntArray:
        """Row of each of ``cells`` (sorted or not), by binary search: no per-cell array of
        the whole rating matrix."""
        out: IntArray = np.searchsorted(self.rating_offsets, cells, side="right") - 1
        return out

    def questions_of(self, cells: IntArray, rows: IntArray | None = None) -> IntArray:
        """Global question index of each of ``cells`` (``rows``: their rows, if known)."""
        if rows is None:
            rows = self.rows_of(cells)
        out: IntArray = (
            cells - self.rating_offsets[rows] + self.question_offsets[self.row_query[rows]]
        )
        return out

    def at_least(self, tau: int) -> tuple[IntArray, IntArray, IntArray]:
        """The cells rated ≥ τ: ``(cells, rows, global questions)``, in cell order."""

        def compute() -> tuple[IntArray, IntArray, IntArray]:
            cells = np.flatnonzero(self.ratings >= tau)
            rows = self.rows_of(cells)
            return cells, rows, self.questions_of(cells, rows)

        return self._cached(("at_least", tau), compute)

    def _answered(self, rows: IntArray, tau: int) -> IntArray:
        """Global questions that ``rows`` answer (rating ≥ τ), with repeats."""
        widths = np.diff(self.rating_offsets)[rows]
        cells = ranges(self.rating_offsets[rows], widths)
        cell_rows = np.repeat(rows, widths)
        hit = self.ratings[cells] >= tau
        return self.questions_of(cells[hit], cell_rows[hit])

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
            native = _accel.native
            if native is not None:
                flags = native.answerable(*self._native_args(), tau)
                return np.frombuffer(flags, dtype=np.bool_)
            hit = self.at_least(tau)[2]
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

    # -- required subset --------------------------------------------------------------
    def required(self, tau: int = DEFAULT_TAU) -> tuple[IntArray, IntArray]:
        """``P*`` per query as CSR ``(offsets, rows)``, rows in greedy selection order.

        Greedy (SPEC §4): while an answerable question is uncovered, score each passage
        ``#{uncovered i: r ≥ τ} + 0.1·[∃ uncovered i: r > 0]`` and take the first maximum in
        input order (compared exactly as ``10·count + [any positive]``).
        """
        return self._cached(("required", tau), lambda: self._greedy_required(tau))

    def _greedy_required(self, tau: int) -> tuple[IntArray, IntArray]:
        """The greedy of :meth:`required` on sparse cells, all queries at once.

        For τ ≥ 1 the +0.1 term never separates candidates that cover something new (a
        passage answering an uncovered question rates it > 0), so the first maximum of the
        count is the first maximum of the score; τ < 1 is refused.
        """
        if tau < 1:
            raise ValueError(f"tau must be ≥ 1, got {tau}")
        native = _accel.native
        if native is not None:
            offs_buf, rows_buf = native.required(*self._native_args(), tau)
            return np.frombuffer(offs_buf, dtype=np.int64), np.frombuffer(rows_buf, dtype=np.int64)
        n_q = self.n_queries
        cells, cell_row, cell_q = self.at_least(tau)  # answerable cells, all uncovered
        uncovered = self.answerable(tau).copy()
        row_query = self.row_query
        pos_in_query = np.arange(len(self), dtype=np.int64) - self.offsets[row_query]
        n_max = int(np.diff(self.offsets).max(initial=0)) + 1
        picked_q: list[IntArray] = []
        picked_row: list[IntArray] = []
        while len(cells):
            counts = np.bincount(cell_row, minlength=len(self)).astype(np.int64)
            queries = distinct(row_query[cell_row], n_q)
            # one key per row: count first, then earlier input position
            key = counts * n_max + (n_max - 1 - pos_in_query)
            best_key = segment_max(key, self.offsets, queries)
            best = self.offsets[queries] + (n_max - 1 - best_key % n_max)
            picked_q.append(queries)
            picked_row.append(best)
            uncovered[self._answered(best, tau)] = False
            keep = uncovered[cell_q]
            cells, cell_row, cell_q = cells[keep], cell_row[keep], cell_q[keep]
        if not picked_q:
            return np.zeros(n_q + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        q = np.concatenate(picked_q)
        r = np.concatenate(picked_row)
        order = np.argsort(q, kind="stable")  # steps were appended in order
        return _offsets(np.bincount(q, minlength=n_q)), r[order]

    def _native_args(self) -> tuple[IntArray, IntArray, IntArray, RatingArray]:
        """The rating blocks as the C greedies take them: contiguous int64 / int8 arrays."""
        return (
            np.ascontiguousarray(self.offsets, dtype=np.int64),
            np.ascontiguousarray(self.widths, dtype=np.int64),
            np.ascontiguousarray(self.rating_offsets, dtype=np.int64),
            np.ascontiguousarray(self.ratings, dtype=np.int8),
        )

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
            np.maximum.at(best, self.questions_of(cells), self.ratings[cells])
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
        native = _accel.native
        buffers = _accel.string_buffers(self.doc_ids) if native is not None else None
        if native is not None and buffers is not None:
            # the discounts as the numpy loop computes them, so both paths agree to the bit
            discounts = np.array([np.log2(rank + 1.0) for rank in range(1, depth + 1)])
            out_buf = native.ideal_alpha_dcg(
                *self._native_args(), tau, 1.0 - alpha, discounts, *buffers
            )
            return np.frombuffer(out_buf, dtype=np.float64)
        n_q = self.n_queries
        out = np.zeros(n_q, dtype=np.float64)
        _, cell_rows, cell_q = self.at_least(tau)
        rows = distinct(cell_rows, len(self))
        if not len(rows):
            return out
        # doc id descending (byte order) within each query: the first maximum of a segment
        # is then ndeval's tie-break to the larger docno
        doc_rank = _string_ranks(self.doc_ids.take(_accel.indices(rows)))
        rows = rows[np.lexsort((-doc_rank, self.row_query[rows]))]
        slot_of_row = np.full(len(self), -1, dtype=np.int64)
        slot_of_row[rows] = np.arange(len(rows), dtype=np.int64)
        slot_offsets = _offsets(np.bincount(self.row_query[rows], minlength=n_q))
        # cells in (row, question) order; grouped by slot, each slot's cells stay in
        # question order, so a slot's gain is summed as ndeval sums it
        cell_slot = slot_of_row[cell_rows]
        by_slot = np.argsort(cell_slot, kind="stable")
        slot_cells_q = cell_q[by_slot]
        slot_cell_offsets = _offsets(np.bincount(cell_slot, minlength=len(rows)))
        # question → slots answering it
        by_question = np.argsort(cell_q, kind="stable")
        question_slots = cell_slot[by_question]
        question_offsets = _offsets(np.bincount(cell_q, minlength=int(self.question_offsets[-1])))
        weight = np.ones(int(self.question_offsets[-1]), dtype=np.float64)
        gain: FloatArray = np.asarray(
            np.bincount(cell_slot, weights=weight[cell_q], minlength=len(rows)), dtype=np.float64
        )
        queries = np.flatnonzero(np.diff(slot_offsets) > 0)
        decay = 1.0 - alpha
        for rank in range(1, depth + 1):
            if not len(queries):
                break
            top, best = segment_argmax(gain, slot_offsets, queries)
            live = top > 0
            queries, top, best = queries[live], top[live], best[live]
            out[queries] += top / np.log2(rank + 1.0)
            gain[best] = -1.0  # taken
            hit = distinct(self._answered(rows[best], tau), len(weight))
            weight[hit] *= decay
            # exact re-sum of the slots answering a question whose weight changed
            lengths = np.diff(question_offsets)[hit]
            touched = distinct(question_slots[ranges(question_offsets[hit], lengths)], len(rows))
            touched = touched[gain[touched] >= 0]
            widths = np.diff(slot_cell_offsets)[touched]
            cells_t = ranges(slot_cell_offsets[touched], widths)
            local = np.repeat(np.arange(len(touched), dtype=np.int64), widths)
            gain[touched] = np.bincount(
                local, weights=weight[slot_cells_q[cells_t]], minlength=len(touched)
            )
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
        qids = pa.array(self.query_ids.tolist(), type=pa.string())
        return Qrels.from_columns(
            qids.take(_accel.indices(self.row_query[idx])),
            self.doc_ids.take(_accel.indices(idx)),
            labels[idx],
            name=self.name,
            source=self.name,
        )

    def query_qrels(self) -> Qrels:
        """Qrels naming the judged queries without any judgment: what an evaluation of
        coverage measures alone aligns against (no qrels join of every passage)."""
        from ragmeter.core.data import Qrels

        return Qrels(
            query_ids=self.query_ids.copy(),
            offsets=np.zeros(self.n_queries + 1, dtype=np.int64),
            doc_ids=pa.array([], type=pa.string()),
            grades=np.zeros(0, dtype=np.int32),
            name=self.name,
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
    _cache: dict[object, object] = field(default_factory=dict, init=False, repr=False)

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
        native = _accel.native
        if native is not None:
            values_buf = _accel.string_buffers(self.doc_ids)
            query_buf = _accel.string_buffers(doc_ids)
            if values_buf is not None and query_buf is not None:
                # the hash table of the corpus ids is built once per corpus
                table = self._cache.get("doc_index")
                if table is None:
                    table = native.doc_index(*values_buf, len(self.doc_ids))
                    self._cache["doc_index"] = table
                found_buf = native.doc_lookup(table, *values_buf, *query_buf, len(doc_ids))
                return np.frombuffer(found_buf, dtype=np.int64)
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
        fast = _ascii_tokens(texts)
        if fast is not None:
            return fast
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


#: Python's ``str.split()`` white space among ASCII bytes (\t \n \v \f \r, \x1c-\x1f, space)
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


def _ascii_tokens(texts: pa.Array) -> IntArray | None:
    """Whitespace tokens per text from the raw bytes (numpy); ``None`` unless every text is
    ASCII and the array is a plain string array (the Arrow path handles the rest)."""
    if not pa.types.is_string(texts.type) or len(texts) == 0:
        return None
    buffers = texts.buffers()
    if buffers[2] is None:
        return np.zeros(len(texts), dtype=np.int64)
    native = _accel.native
    plain = _accel.string_buffers(texts) if native is not None else None
    if native is not None and plain is not None:
        counted = native.ascii_tokens(*plain, len(texts))
        return None if counted is None else np.frombuffer(counted, dtype=np.int64)
    raw = np.frombuffer(buffers[1], dtype=np.int32)[texts.offset : texts.offset + len(texts) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8)[int(raw[0]) : int(raw[-1])]
    if len(data) and int(data.max()) >= 0x80:
        return None
    offsets = raw.astype(np.int64) - int(raw[0])
    space = _ASCII_SPACE[data]
    # a token starts at a non-space byte that begins a text or follows a space
    starts = ~space
    starts[1:] &= space[:-1]
    begins = offsets[:-1][offsets[:-1] < len(data)]
    starts[begins] = ~space[begins]
    lengths = np.diff(offsets)
    counts: IntArray = np.zeros(len(texts), dtype=np.int64)
    filled = lengths > 0
    if filled.any():
        sums = np.add.reduceat(starts, offsets[:-1][filled], dtype=np.int64)
        counts[filled] = sums
    if texts.null_count:
        counts[texts.is_null().to_numpy(zero_copy_only=False)] = 0
    return counts


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
    plus what the coverage measures need: τ, texts and answers (the context size is each
    measure's own: its ``@K``, else its family's default).

    Attributes:
        judgments: the judgments.
        query: per evaluated query, its index in ``judgments`` (−1 when not judged).
        item_row: per aligned item, its judgment row (−1 when the passage is not judged).
        item_doc_ids: per aligned item, its doc id (for corpus look-ups).
        item_texts: per aligned item, the run's own text (or ``None``).
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
    tau: int = DEFAULT_TAU
    corpus: Corpus | None = None
    answers: Answers | None = None
    token_counter: TokenCounter | None = None
    _cache: dict[object, object] = field(default_factory=dict, init=False, repr=False)

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
    """Join aligned items (``offsets`` over ``query_ids``, doc ids per item) to judgment rows,
    with the (query, doc id) join of :func:`~ragmeter.core.align.align`."""
    index = judgments.index()
    query = np.fromiter(
        (index.get(str(q), -1) for q in query_ids.tolist()), dtype=np.int64, count=len(query_ids)
    )
    n_items = len(item_doc_ids)
    item_row = np.full(n_items, -1, dtype=np.int64)
    if n_items and len(judgments):
        # the qrels join of align(): per evaluated query, its judgment rows
        known = np.maximum(query, 0)
        lengths = np.where(query >= 0, np.diff(judgments.offsets)[known], 0)
        label_rows = ranges(judgments.offsets[known], lengths)
        label_query = np.repeat(np.arange(len(query), dtype=np.int64), lengths)
        item_row = join_rows(
            item_doc_ids,
            judgments.doc_ids,
            np.arange(n_items, dtype=np.int64),
            offsets,
            label_rows,
            label_query,
        )
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
