"""Columnar runs and qrels.

Both are stored the same way: the distinct query ids in segment order, CSR ``offsets`` of
length ``n_queries + 1``, and one row per (query, doc) in contiguous per-query segments.
Doc ids stay in one Arrow string array (no Python object per row); scores and grades are
numpy arrays. A candidate pool is a :class:`Run` too.

Ordering rules (SPEC §1):

* ``order="score"`` (TREC runs, ``{qid: {doc: score}}`` dicts): score descending, ties broken
  by doc id descending in byte order (trec_eval's convention); queries in byte order.
* ``order="given"`` (ordered lists from JSON samples): the given order within a query, queries
  in order of first appearance.
* A doc id repeated within one query keeps its first (best) occurrence; the rest are dropped and
  counted in :attr:`Run.warnings`.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter import _accel
from ragmeter._accel import LazyModule
from ragmeter.errors import InputError

if TYPE_CHECKING:
    import pyarrow.compute as pc
else:
    # pyarrow.compute takes ≈0.1 s to import; only the pure (non-C) paths need it.
    pc = LazyModule("pyarrow.compute")

Order = Literal["score", "given"]

IntArray = npt.NDArray[np.int64]
CodeArray = npt.NDArray[np.integer[Any]]
FloatArray = npt.NDArray[np.float64]


def _as_id_array(values: Any, source: str, field_name: str) -> pa.Array:
    """Ids as one contiguous Arrow string array; a missing (null) id is an error."""
    if not isinstance(values, pa.Array | pa.ChunkedArray):
        values = list(values)
        for i, v in enumerate(values):
            if v is None:
                raise InputError(f"row {i + 1}: missing id", source=source, field=field_name)
    arr = _as_string_array(values)
    if arr.null_count:
        i = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(f"row {i + 1}: missing id", source=source, field=field_name)
    return arr


def _as_string_array(values: Any) -> pa.Array:
    """Return ``values`` as one contiguous Arrow string array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        if pa.types.is_large_string(values.type) or pa.types.is_string(values.type):
            return values
        if pa.types.is_string_view(values.type):
            return values.cast(pa.large_string())
        return pc.cast(values, pa.string())
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        values = values.tolist()
    return pa.array([str(v) for v in values], type=pa.string())


def _string_ranks(dictionary: pa.Array) -> IntArray:
    """Rank of each dictionary entry in byte order (strcmp order, as trec_eval sorts)."""
    fast = _accel.byte_order(dictionary)
    order = fast if fast is not None else pc.sort_indices(dictionary).to_numpy()
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order), dtype=np.int64)
    return ranks


def _encode(values: pa.Array) -> tuple[IntArray, pa.Array]:
    """Dictionary-encode strings: per-row codes and the dictionary of distinct values.

    The dictionary is in order of first appearance (both paths).
    """
    native = _accel.native
    buffers = _accel.string_buffers(values) if native is not None else None
    if native is not None and buffers is not None:
        code_buf, first_buf = native.encode(*buffers, len(values))
        first = np.frombuffer(first_buf, dtype=np.int64)
        return np.frombuffer(code_buf, dtype=np.int64), values.take(_accel.indices(first))
    encoded = pc.dictionary_encode(values)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return codes, encoded.dictionary


def _segments(sorted_codes: IntArray, n: int) -> tuple[IntArray, IntArray]:
    """Offsets of runs of equal codes and the code of each run."""
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.diff(sorted_codes)) + 1
    starts = np.concatenate([[0], starts]).astype(np.int64)
    offsets = np.concatenate([starts, [n]]).astype(np.int64)
    return offsets, sorted_codes[starts]


def _first_occurrences(query_codes: IntArray, docs: pa.Array) -> IntArray | None:
    """Positions to keep so that each (query, doc) pair appears once, at its first position.

    Returns ``None`` when there is no duplicate (the common case, checked without sorting).
    """
    n = len(docs)
    if n == 0:
        return None
    table = pa.table({"q": query_codes, "d": docs, "i": np.arange(n, dtype=np.int64)})
    grouped = table.group_by(["q", "d"], use_threads=False).aggregate([("i", "min")])
    if grouped.num_rows == n:
        return None
    keep: IntArray = np.sort(grouped["i_min"].to_numpy())
    return keep


def _break_ties(
    perm: IntArray, query_rank: IntArray, scores: FloatArray, docs: pa.Array
) -> IntArray:
    """Within equal (query, score) groups of ``perm``, order doc ids descending (byte order)."""
    q = query_rank[perm]
    s = scores[perm]
    same = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not same.any():
        return perm
    in_tie = np.zeros(len(perm), dtype=bool)
    in_tie[1:] |= same
    in_tie[:-1] |= same
    positions = np.flatnonzero(in_tie)
    # A new tie group starts where the previous position is not tied to this one.
    starts_group = np.ones(len(positions), dtype=bool)
    starts_group[1:] = ~same[positions[1:] - 1]
    group = np.cumsum(starts_group)
    sub = pa.table({"g": group, "d": docs.take(_accel.indices(perm[positions]))})
    within = pc.sort_indices(sub, sort_keys=[("g", "ascending"), ("d", "descending")])
    perm = perm.copy()
    perm[positions] = perm[positions][within.to_numpy()]
    return perm


def _check_finite(scores: FloatArray, source: str, lines: IntArray | None) -> None:
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        i = int(bad[0])
        line = int(lines[i]) if lines is not None else None
        where = "" if lines is not None else f" (row {i + 1})"
        raise InputError(
            f"score is {float(scores[i])}{where}; expected a finite number",
            source=source,
            line=line,
            field="score",
        )


@dataclass(frozen=True, eq=False)
class Run:
    """A ranked list of documents per query.

    Attributes:
        query_ids: distinct query ids, in segment order.
        offsets: CSR offsets, ``offsets[i]:offsets[i+1]`` is query ``i``'s segment, rank order.
        doc_ids: Arrow string array of doc ids, one per row.
        scores: float64 scores, one per row (for given-order runs, a decreasing sequence).
        name: the run's name (TREC ``tag`` column, file stem, or given).
        cutoffs: optional per-query cutoff override (``metadata.k`` of a sample; -1 = none).
        texts: optional Arrow string array of passage texts, one per row.
        warnings: notes produced while reading (e.g. duplicate doc ids dropped).
        tag: the TREC run tag of the file's last line (trec_eval's ``runid``), if read from one.
        stage: the stage of a run read from traces (``retriever``, ``reranker``, ``step:N``,
            ``gathered``, ``default``; :mod:`ragmeter.io.trace_stages`), ``None`` otherwise.
        candidates: what each query's ranking was chosen from (a reranker's input): the
            candidate pool of pool-based measures (``proc@K``) when no ``pool`` is given.
    """

    query_ids: npt.NDArray[np.object_]
    offsets: IntArray
    doc_ids: pa.Array
    scores: FloatArray
    name: str = "run"
    cutoffs: IntArray | None = None
    texts: pa.Array | None = None
    warnings: tuple[str, ...] = field(default=())
    tag: str | None = None
    stage: str | None = None
    candidates: Run | None = None

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_columns(
        cls,
        query_ids: Any,
        doc_ids: Any,
        scores: Any | None = None,
        *,
        name: str = "run",
        order: Order = "score",
        source: str = "<run>",
        lines: IntArray | None = None,
        cutoffs: Mapping[str, int] | None = None,
        texts: Any | None = None,
    ) -> Run:
        """Build a run from parallel columns (one row per retrieved item).

        ``order="score"`` sorts by score descending with ties broken by doc id descending;
        ``order="given"`` keeps the row order within each query (``scores`` optional).
        ``lines`` (1-based line numbers of the rows) makes error messages point at lines.
        """
        qids = _as_id_array(query_ids, source, "query_id")
        docs = _as_id_array(doc_ids, source, "doc_id")
        n = len(qids)
        if len(docs) != n:
            raise InputError(f"{len(docs)} doc ids for {n} query ids", source=source)
        text_arr = _as_string_array(texts) if texts is not None else None
        if order == "score":
            if scores is None:
                raise InputError("order='score' needs scores", source=source, field="score")
            score_arr = np.asarray(scores, dtype=np.float64)
        else:
            score_arr = (
                np.asarray(scores, dtype=np.float64)
                if scores is not None
                else np.zeros(n, dtype=np.float64)
            )
        if len(score_arr) != n:
            raise InputError(f"{len(score_arr)} scores for {n} rows", source=source)
        _check_finite(score_arr, source, lines)

        codes, dictionary = _encode(qids)
        return cls._from_encoded(
            codes,
            dictionary,
            docs,
            score_arr,
            name=name,
            order=order,
            source=source,
            cutoffs=cutoffs,
            texts=text_arr,
        )

    @classmethod
    def _from_encoded(
        cls,
        codes: CodeArray,
        dictionary: pa.Array,
        docs: pa.Array,
        score_arr: FloatArray,
        *,
        name: str,
        order: Order,
        source: str,
        cutoffs: Mapping[str, int] | None = None,
        texts: pa.Array | None = None,
    ) -> Run:
        """Build from query codes (into ``dictionary``), doc ids and finite scores."""
        text_arr = texts
        native = _accel.native
        buffers = _accel.string_buffers(docs) if native is not None else None
        if order == "score" and native is not None and buffers is not None:
            ranks = _string_ranks(dictionary)
            qrank = np.ascontiguousarray(ranks[codes], dtype=np.int64)
            perm_buf, offsets_buf, dropped = native.order(
                qrank, len(dictionary), np.ascontiguousarray(score_arr), *buffers, True
            )
            perm = np.frombuffer(perm_buf, dtype=np.int64)
            offsets = np.frombuffer(offsets_buf, dtype=np.int64)
            query_order = np.empty(len(ranks), dtype=np.int64)
            query_order[ranks] = np.arange(len(ranks), dtype=np.int64)
            all_qids = dictionary.to_pylist()
            qid_values = [all_qids[i] for i in query_order.tolist()]
        else:
            perm, offsets, dropped, qid_values = _order_rows(
                codes, dictionary, docs, score_arr, order
            )
        return cls._assemble(
            qid_values,
            offsets,
            perm,
            docs,
            score_arr,
            dropped,
            name=name,
            source=source,
            cutoffs=cutoffs,
            texts=text_arr,
        )

    @classmethod
    def _assemble(
        cls,
        qid_values: list[Any],
        offsets: IntArray,
        perm: IntArray,
        docs: pa.Array,
        score_arr: FloatArray,
        dropped: int,
        *,
        name: str,
        source: str,
        cutoffs: Mapping[str, int] | None,
        texts: pa.Array | None,
    ) -> Run:
        """The run of rows ``perm`` (final order), segmented by ``offsets``."""
        warnings: list[str] = []
        if dropped:
            warnings.append(
                f"{source}: {dropped} duplicate (query, doc) row(s) dropped; "
                "each doc keeps its best-ranked occurrence"
            )
        query_array = np.array(qid_values, dtype=object)
        per_query_k = None
        if cutoffs:
            per_query_k = np.array([int(cutoffs.get(q, -1)) for q in qid_values], dtype=np.int64)
        identity = _is_identity(perm) and len(perm) == len(docs)
        sorted_docs = docs if identity else _accel.take_strings(docs, perm)
        sorted_texts = None
        if texts is not None:
            sorted_texts = texts if identity else _accel.take_strings(texts, perm)
        return cls(
            query_ids=query_array,
            offsets=offsets,
            doc_ids=sorted_docs,
            scores=score_arr[perm],
            name=name,
            cutoffs=per_query_k,
            texts=sorted_texts,
            warnings=tuple(warnings),
        )

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, float]], *, name: str = "run", source: str = "<dict>"
    ) -> Run:
        """Build a run from ``{qid: {doc_id: score}}`` (the pytrec_eval / ranx shape)."""
        qids, docs, scores = _flatten_nested(data, source, "score")
        return cls.from_columns(
            qids, docs, np.asarray(scores, dtype=np.float64), name=name, source=source
        )

    @classmethod
    def from_lists(
        cls,
        data: Mapping[str, Sequence[str]],
        *,
        name: str = "run",
        source: str = "<lists>",
        cutoffs: Mapping[str, int] | None = None,
    ) -> Run:
        """Build a run from ``{qid: [doc_id, ...]}`` ordered lists, rank 1 first."""
        qids: list[str] = []
        docs: list[str] = []
        for q, ranked in data.items():
            for d in ranked:
                qids.append(str(q))
                docs.append(str(d))
        n = len(docs)
        scores = -np.arange(n, dtype=np.float64)
        return cls.from_columns(
            qids, docs, scores, name=name, order="given", source=source, cutoffs=cutoffs
        )

    # -- access -----------------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def lengths(self) -> IntArray:
        return np.diff(self.offsets)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {doc_id: score}}``."""
        docs = self.doc_ids.to_pylist()
        out: dict[str, dict[str, float]] = {}
        for i, q in enumerate(self.query_ids):
            a, b = int(self.offsets[i]), int(self.offsets[i + 1])
            out[str(q)] = dict(zip(docs[a:b], self.scores[a:b].tolist(), strict=True))
        return out

    def ranked(self) -> dict[str, list[str]]:
        """``{qid: [doc_id, ...]}`` in rank order."""
        docs = self.doc_ids.to_pylist()
        return {
            str(q): docs[int(self.offsets[i]) : int(self.offsets[i + 1])]
            for i, q in enumerate(self.query_ids)
        }


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded relevance judgments ``g(q, d)``; an unjudged pair has no row.

    Queries are in byte order, docs in byte order within a query. Grades are integers; a
    negative grade means "in the pool but not judged" (trec_eval's convention) and is never
    relevant.
    """

    query_ids: npt.NDArray[np.object_]
    offsets: IntArray
    doc_ids: pa.Array
    grades: npt.NDArray[np.int32]
    name: str = "qrels"
    warnings: tuple[str, ...] = field(default=())

    @classmethod
    def from_columns(
        cls,
        query_ids: Any,
        doc_ids: Any,
        grades: Any,
        *,
        name: str = "qrels",
        source: str = "<qrels>",
        lines: IntArray | None = None,
    ) -> Qrels:
        """Build qrels from parallel columns; conflicting duplicates are an error."""
        qids = _as_id_array(query_ids, source, "query_id")
        docs = _as_id_array(doc_ids, source, "doc_id")
        grade_arr = np.asarray(grades)
        n = len(qids)
        if len(docs) != n or len(grade_arr) != n:
            raise InputError("query, doc and grade columns differ in length", source=source)
        if n and grade_arr.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(grade_arr) | (grade_arr != np.round(grade_arr)))
            if len(bad):
                i = int(bad[0])
                raise InputError(
                    f"grade {grade_arr[i]!r} is not an integer",
                    source=source,
                    line=int(lines[i]) if lines is not None else None,
                    field="grade",
                )
        if n and grade_arr.dtype.kind not in "iuf":
            raise InputError("grades must be integers", source=source, field="grade")
        grade_arr = grade_arr.astype(np.int32)
        codes, dictionary = _encode(qids)
        return cls._from_encoded(
            codes, dictionary, docs, grade_arr, name=name, source=source, lines=lines
        )

    @classmethod
    def _from_encoded(
        cls,
        codes: CodeArray,
        dictionary: pa.Array,
        docs: pa.Array,
        grade_arr: npt.NDArray[np.int32],
        *,
        name: str,
        source: str,
        lines: IntArray | None = None,
    ) -> Qrels:
        """Build from query codes (into ``dictionary``), doc ids and int32 grades."""
        fast = cls._native_from_encoded([codes, dictionary, docs, grade_arr], name=name)
        if fast is not None:
            return fast
        n = len(codes)
        qrank = _string_ranks(dictionary)[codes]
        table = pa.table({"q": qrank, "d": docs, "i": np.arange(n, dtype=np.int64)})
        perm = pc.sort_indices(
            table, sort_keys=[("q", "ascending"), ("d", "ascending"), ("i", "ascending")]
        ).to_numpy()
        sorted_rank = qrank[perm]
        sorted_docs = docs.take(_accel.indices(perm))
        sorted_grades = grade_arr[perm]
        warnings: list[str] = []
        if n > 1:
            dup = (sorted_rank[1:] == sorted_rank[:-1]) & pc.equal(
                sorted_docs[1:], sorted_docs[:-1]
            ).to_numpy(zero_copy_only=False)
            if dup.any():
                where = np.flatnonzero(dup)
                conflict = where[sorted_grades[where] != sorted_grades[where + 1]]
                if len(conflict):
                    j = int(conflict[0])
                    a, b = int(perm[j]), int(perm[j + 1])
                    first_line = int(lines[a]) if lines is not None else a + 1
                    second_line = int(lines[b]) if lines is not None else b + 1
                    raise InputError(
                        f"query '{dictionary[int(codes[b])].as_py()}' doc '{docs[b].as_py()}' "
                        f"judged "
                        f"{grade_arr[b]} here but {grade_arr[a]} on line {first_line}; "
                        "expected one grade per (query, doc)",
                        source=source,
                        line=second_line,
                        field="grade",
                    )
                keep = np.ones(n, dtype=bool)
                keep[where + 1] = False
                warnings.append(
                    f"{source}: {int((~keep).sum())} repeated identical judgment(s) ignored"
                )
                perm = perm[keep]
                sorted_rank = sorted_rank[keep]
                sorted_docs = sorted_docs.filter(pa.array(keep))
                sorted_grades = sorted_grades[keep]
        offsets, _ = _segments(sorted_rank, len(perm))
        seg_codes = codes[perm[offsets[:-1]]] if len(perm) else np.zeros(0, np.int64)
        query_array = np.array(dictionary.take(_accel.indices(seg_codes)).to_pylist(), dtype=object)
        return cls(
            query_ids=query_array,
            offsets=offsets,
            doc_ids=sorted_docs,
            grades=sorted_grades,
            name=name,
            warnings=tuple(warnings),
        )

    @classmethod
    def _native_from_encoded(
        cls,
        columns: list[Any],
        *,
        name: str,
        text: bytes | mmap.mmap | None = None,
    ) -> Qrels | None:
        """The C path of :meth:`_from_encoded` over ``columns`` = ``[codes, dictionary, docs,
        grades]``; None when not built or judgments repeat (the Python path then warns or
        raises with line numbers, from the caller's columns).

        The list is emptied and each column let go as soon as it has been used, so a caller
        that keeps no other reference to them (``read_qrels``) does not hold every column
        twice. With ``text``, the TREC text the columns were parsed from, the doc ids are
        not gathered into sorted order (which holds them twice: file order and sorted order)
        but dropped and read again from the text straight into their sorted places.
        """
        native = _accel.native
        codes, dictionary, docs, grade_arr = columns
        buffers = _accel.string_buffers(docs) if native is not None else None
        if native is None or buffers is None:
            return None
        columns.clear()
        ranks = _string_ranks(dictionary)
        # int32 keys and permutation: codes are int32, so there are fewer than 2**31 queries
        keys = ranks.astype(np.int32)[codes]
        del codes
        perm_buf, offsets_buf, dupes = native.order(keys, len(ranks), None, *buffers, False, True)
        del keys, buffers
        if dupes:
            return None
        perm: npt.NDArray[np.signedinteger[Any]] = np.frombuffer(
            perm_buf, dtype=np.int32 if len(docs) < 2**31 else np.int64
        )
        grades = grade_arr[perm]
        del grade_arr
        identity = _is_identity(perm)
        if identity or text is None:
            if not identity:
                docs = _accel.take_strings(docs, perm)
            del perm, perm_buf
        else:
            n, wide = len(docs), pa.types.is_large_string(docs.type)
            old_offsets, base = docs.buffers()[1], docs.offset
            del docs  # the doc bytes go: read again from the text below
            offsets_out, inverse_buf, wide_out = native.permute_offsets(
                old_offsets, wide, base, n, perm
            )
            inverse = np.frombuffer(inverse_buf, dtype=perm.dtype)  # the C side reads its width
            del old_offsets, perm, perm_buf, inverse_buf
            docs = _docs_from_text(text, inverse, offsets_out, wide_out)
            del inverse
        return cls._placed(dictionary, ranks, offsets_buf, docs, grades, name=name)

    @classmethod
    def _placed(
        cls,
        dictionary: pa.Array,
        ranks: IntArray,
        offsets_buf: Any,
        docs: pa.Array,
        grades: npt.NDArray[Any],
        *,
        name: str,
    ) -> Qrels:
        """The qrels of rows the C paths ordered: ``offsets_buf`` the int64 query segments,
        the query ids read from ``dictionary`` by rank — made last, as their strings would
        add to the peak of the steps before."""
        return cls(
            query_ids=_ids_by_rank(dictionary, ranks),
            offsets=np.frombuffer(offsets_buf, dtype=np.int64),
            doc_ids=docs,
            grades=grades,
            name=name,
            warnings=(),
        )

    @classmethod
    def _native_listed(
        cls,
        dictionary: pa.Array,
        stretches: list[Any],
        *,
        text: bytes | mmap.mmap,
        name: str,
        split_at: int = -1,
    ) -> Qrels | Literal["declined", "repeated"]:
        """The qrels of a TREC text whose queries ``native.qrels_stretches`` found each on one
        stretch of lines (``dictionary`` their ids, ``stretches`` a list of where each is,
        emptied once used): every judgment read again from ``text`` into its final row
        (``native.qrels_place``). ``"declined"`` where a grade is one the C parser declines,
        ``"repeated"`` where a (query, doc) repeats: the other paths report them.
        """
        native = _accel.native
        assert native is not None
        ranks = _string_ranks(dictionary)
        placed = native.qrels_place(
            text, isinstance(text, mmap.mmap), stretches.pop(), ranks, 2**31 - 1, split_at
        )
        if placed is None:
            return "declined"
        if placed == 1:
            return "repeated"
        offsets_buf, doc_offsets, doc_data, grades_buf, wide = placed
        del placed
        docs = pa.Array.from_buffers(
            pa.large_string() if wide else pa.string(),
            len(grades_buf) // 4,
            [None, pa.py_buffer(doc_offsets), pa.py_buffer(doc_data)],
        )
        grades = np.frombuffer(grades_buf, dtype=np.int32)
        return cls._placed(dictionary, ranks, offsets_buf, docs, grades, name=name)

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Mapping[str, int] | Iterable[str]],
        *,
        name: str = "qrels",
        source: str = "<dict>",
    ) -> Qrels:
        """Build qrels from ``{qid: {doc_id: grade}}`` or ``{qid: [relevant doc ids]}``."""
        qids: list[str] = []
        docs: list[str] = []
        grades: list[Any] = []
        for q, judged in data.items():
            if isinstance(judged, Mapping):
                for d, g in judged.items():
                    qids.append(str(q))
                    docs.append(str(d))
                    grades.append(g)
            else:
                for d in judged:
                    qids.append(str(q))
                    docs.append(str(d))
                    grades.append(1)
        arr = _numeric_column(grades, source, "grade")
        return cls.from_columns(qids, docs, arr, name=name, source=source)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {doc_id: grade}}``."""
        docs = self.doc_ids.to_pylist()
        out: dict[str, dict[str, int]] = {}
        for i, q in enumerate(self.query_ids):
            a, b = int(self.offsets[i]), int(self.offsets[i + 1])
            out[str(q)] = dict(zip(docs[a:b], self.grades[a:b].tolist(), strict=True))
        return out


def _docs_from_text(
    text: bytes | mmap.mmap, rows: npt.NDArray[Any], offsets: Any, wide: bool
) -> pa.Array:
    """The doc ids of the qrels text ``text`` read again into their new rows (line i's doc id
    to row ``rows[i]``; ``offsets`` the new rows' offsets, int64 when ``wide``)."""
    native = _accel.native
    assert native is not None
    data = native.scatter_docs(text, isinstance(text, mmap.mmap), rows, offsets, wide)
    return pa.Array.from_buffers(
        pa.large_string() if wide else pa.string(),
        len(rows),
        [None, pa.py_buffer(offsets), pa.py_buffer(data)],
    )


def _ids_by_rank(dictionary: pa.Array, ranks: IntArray) -> npt.NDArray[np.object_]:
    """The strings of ``dictionary`` as an object array, entry i at ``ranks[i]`` (a
    permutation); the C path reads them from the Arrow buffers, without ``to_pylist``'s cost
    per string."""
    native = _accel.native
    buffers = _accel.string_buffers(dictionary) if native is not None else None
    if native is None or buffers is None:
        query_order = np.empty(len(ranks), dtype=np.int64)
        query_order[ranks] = np.arange(len(ranks), dtype=np.int64)
        return np.array(dictionary.to_pylist(), dtype=object)[query_order]
    return np.array(native.strings_placed(*buffers, ranks), dtype=object)


def _numeric_column(values: list[Any], source: str, field_name: str) -> npt.NDArray[Any]:
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise InputError(
                f"value {v!r} (item {i + 1}) is not a number", source=source, field=field_name
            )
    return np.asarray(values) if values else np.zeros(0, dtype=np.int32)


def _flatten_nested(
    data: Mapping[str, Mapping[str, Any]], source: str, field_name: str
) -> tuple[list[str], list[str], npt.NDArray[Any]]:
    qids: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    for q, inner in data.items():
        if not isinstance(inner, Mapping):
            raise InputError(
                f"query '{q}' maps to {type(inner).__name__}; expected {{doc_id: {field_name}}}",
                source=source,
            )
        for d, v in inner.items():
            qids.append(str(q))
            docs.append(str(d))
            values.append(v)
    return qids, docs, _numeric_column(values, source, field_name)


def _order_rows(
    codes: Any, dictionary: pa.Array, docs: pa.Array, score_arr: FloatArray, order: Order
) -> tuple[IntArray, IntArray, int, list[str]]:
    """The numpy/pyarrow ordering of run rows: permutation, CSR offsets, duplicates dropped
    and the query id of each segment (the C path's twin in ``Run._from_encoded``)."""
    n = len(codes)
    if order == "score":
        qrank = _string_ranks(dictionary)[codes]
        perm = _score_order(qrank, score_arr)
        perm = _break_ties(perm, qrank, score_arr, docs)
    else:
        # Rank queries by first appearance; a stable sort keeps the given row order.
        first = np.full(len(dictionary), n, dtype=np.int64)
        np.minimum.at(first, codes, np.arange(n, dtype=np.int64))
        qrank = _dense_rank(first)[codes]
        perm = np.argsort(qrank, kind="stable")
    sorted_rank = qrank[perm]
    sorted_docs = docs.take(_accel.indices(perm)) if not _is_identity(perm) else docs
    keep = _first_occurrences(sorted_rank, sorted_docs)
    dropped = 0
    if keep is not None:
        dropped = len(perm) - len(keep)
        perm = perm[keep]
        sorted_rank = sorted_rank[keep]
    offsets, _ = _segments(sorted_rank, len(perm))
    # Map each segment back to its query string through any row of the segment.
    seg_codes = codes[perm[offsets[:-1]]] if len(perm) else np.zeros(0, np.int64)
    qid_values: list[str] = dictionary.take(_accel.indices(seg_codes)).to_pylist()
    return perm, offsets, dropped, qid_values


def _dense_rank(values: IntArray) -> IntArray:
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(len(values), dtype=np.int64)
    return ranks


def _is_identity(perm: npt.NDArray[np.signedinteger[Any]]) -> bool:
    n = len(perm)
    if n == 0:
        return True
    if perm[0] != 0 or perm[-1] != n - 1 or perm[n // 2] != n // 2:
        return False
    return bool(np.all(np.diff(perm) == 1))


def _score_order(query_rank: IntArray, scores: FloatArray) -> IntArray:
    """Row order by (query rank ascending, score descending); skips the sort if in order."""
    n = len(scores)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    dq = np.diff(query_rank)
    in_order = bool(np.all((dq > 0) | ((dq == 0) & (scores[1:] <= scores[:-1]))))
    if in_order:
        return np.arange(n, dtype=np.int64)
    return np.lexsort((-scores, query_rank)).astype(np.int64)
