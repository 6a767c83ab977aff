"""Measures defined by their users: the public way to add a measure to ragmeter.

Two ways to define one; either gives a measure family that then works by name everywhere a
built-in one does (``evaluate``, ``--k 1:20`` sweeps, ``compare``, ``report``, the store,
``--format trec``), with validated parameters and cutoffs:

* :func:`define_measure`: a **vectorised** function ``f(r: Rankings, **params)`` returning
  one number per query, computed on flat NumPy arrays of every query's ranking at once
  (:class:`Rankings`), as ragmeter's own families are;
* :func:`define_measure_by_query`: a **plain function of one query**
  ``f(ranking: list[str], qrels: dict[str, int], **params) -> float | None``, for prototypes
  (a Python call per query: slower, but nothing to learn).

``m@K`` is the measure on the top K of each ranking: both kinds of function see each ranking
already cut at K (and a sample's own ``metadata.k`` where it has one), like every family.

The project's rules for a value hold here too: a function returns ``None`` or NaN where the
value is undefined (NA: counted in ``n``, left out of the mean, reported as ``n_defined``);
an infinite value, a value that is not a number or an exception raised by the function is a
:class:`~ragmeter.errors.MeasureError` naming the measure (and the query). A query judged in
the qrels but absent from the run is scored as an empty ranking (``missing="zero"``, the
default) or left out (``missing="skip"``), as for every family; unjudged retrieved docs have
grade 0.

Example (precision@k, twice)::

    import ragmeter

    @ragmeter.define_measure("vprec", cutoff="required")
    def vprec(r):
        "relevant in the top k / k (vectorised)"
        return r.count(r.relevant) / r.k

    @ragmeter.define_measure_by_query("qprec", cutoff="required")
    def qprec(ranking, qrels, *, k, rel_level):
        "relevant in the top k / k (one query at a time)"
        return sum(qrels.get(d, 0) >= rel_level for d in ranking) / k

The command line finds measures defined in a module with ``ragmeter --plugin MODULE`` or
``RAGMETER_PLUGINS=MODULE[,MODULE]`` (see :mod:`ragmeter.measures.plugins`).
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import NOT_JUDGED, Aligned
from ragmeter.errors import MeasureError
from ragmeter.measures import (
    BUDGET,
    REGISTRY,
    Aggregation,
    CutoffKind,
    Family,
    FloatArray,
    Measure,
    Param,
    parse_measure,
)
from ragmeter.metrics._segments import (
    BoolArray,
    IntArray,
    cutoff_per_query,
    first_ranks,
    within,
)

#: what a per-query function may ask for by naming it as a parameter
CONTEXT = ("k", "scores", "query_id", "rel_level")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_KINDS = (int, float, str, bool)
_NO_CUTOFF = np.iinfo(np.int64).max


@dataclass(frozen=True, eq=False)
class Rankings:
    """Every evaluated query's ranking, cut at the measure's cutoff, as flat arrays in rank
    order: what a vectorised measure (:func:`define_measure`) reads.

    The items of query ``i`` (``query_ids[i]``) are ``offsets[i]:offsets[i + 1]`` of every
    per-item array; its judgments are ``label_offsets[i]:label_offsets[i + 1]`` of the
    per-judgment arrays. A query judged but absent from the run has no items.

    Attributes:
        query_ids: the evaluated queries.
        offsets: CSR offsets of each query's items (``n_queries + 1``).
        query: per item, the index of its query.
        rank: per item, its 1-based rank.
        grade: per item, its grade; 0 when it has no judgment (SPEC: unjudged is grade 0).
        judged: per item, whether the qrels judge it.
        relevant: per item, whether grade ≥ ``rel_level`` (an unjudged or negative grade
            never is).
        num_relevant: per query, R: its judgments with grade ≥ ``rel_level`` (all of them,
            not only the retrieved ones).
        label_offsets: CSR offsets of each query's judgments.
        label_grades: every judged grade of each query, sorted descending (the ideal ranking).
        k: per query, the cutoff (``m@K``'s K, or a sample's ``metadata.k``), and the length
            of the ranking where a query has none; ``None`` when no query has one.
        rel_level: the relevance threshold: the measure's ``rel_level`` parameter when it
            declares one and it is set, else the evaluation's (``--rel-level``, default 1).
    """

    query_ids: npt.NDArray[np.object_]
    offsets: IntArray
    query: IntArray
    rank: IntArray
    grade: IntArray
    judged: BoolArray
    relevant: BoolArray
    num_relevant: IntArray
    label_offsets: IntArray
    label_grades: IntArray
    k: IntArray | None
    rel_level: int
    _aligned: Aligned = field(repr=False)
    _items: IntArray | None = field(repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def lengths(self) -> IntArray:
        """Per query, its number of items (within the cutoff)."""
        out: IntArray = np.diff(self.offsets)
        return out

    @cached_property
    def doc_ids(self) -> npt.NDArray[np.object_]:
        """Per item, its doc id (a NumPy array of ``str``)."""
        docs = _item_doc_ids(self._aligned)
        return docs if self._items is None else docs[self._items]

    @cached_property
    def scores(self) -> FloatArray:
        """Per item, the run's score."""
        scores = self._aligned.side.get("item_scores")
        if scores is None:
            raise MeasureError(_NOT_JOINED)
        out: FloatArray = np.asarray(scores, dtype=np.float64)
        return out if self._items is None else out[self._items]

    @cached_property
    def label_doc_ids(self) -> npt.NDArray[np.object_]:
        """Per judgment, its doc id (in ``label_grades`` order)."""
        al = self._aligned
        docs = al.qrels_doc_ids
        if docs is None:
            raise MeasureError(_NOT_JOINED)
        return al._cached(
            ("custom", "label_doc_ids"),
            lambda: docs.take(al.label_rows).to_numpy(zero_copy_only=False),
        )

    def sum(self, values: npt.ArrayLike) -> FloatArray:
        """Per query, the sum of per-item ``values``, added in rank order."""
        return np.bincount(self.query, weights=values, minlength=self.n_queries).astype(np.float64)

    def count(self, mask: npt.ArrayLike) -> FloatArray:
        """Per query, how many items of the per-item boolean ``mask`` it has."""
        return self.sum(np.asarray(mask, dtype=np.float64))

    def first_rank(self, mask: npt.ArrayLike) -> IntArray:
        """Per query, the rank of its first item in ``mask``; 0 where it has none."""
        return first_ranks(self.n_queries, self.query, self.rank, np.asarray(mask, dtype=bool))


_NOT_JOINED = (
    "this alignment carries no doc ids; a measure defined with ragmeter.define_measure is "
    "evaluated through ragmeter.evaluate (or the command line), which joins them"
)


def _item_doc_ids(al: Aligned) -> npt.NDArray[np.object_]:
    docs = al.side.get("item_doc_ids")
    if docs is None:
        raise MeasureError(_NOT_JOINED)
    return al._cached(("custom", "doc_ids"), lambda: docs.to_numpy(zero_copy_only=False))


def _rel_level(al: Aligned, m: Measure) -> int:
    if any(p.name == "rel_level" for p in m.spec.params):
        value = m.param("rel_level")
        if value is not None:
            return int(value)
    return al.rel_level


def rankings(al: Aligned, m: Measure) -> Rankings:
    """The :class:`Rankings` of ``al`` cut at ``m``'s cutoff."""
    cut = cutoff_per_query(al, m)
    level = _rel_level(al, m)
    items: IntArray | None = None
    lengths = al.lengths
    k = None
    if cut is not None:
        items = np.flatnonzero(within(al, cut)).astype(np.int64)
        lengths = np.minimum(al.lengths, cut)
        k = np.where(cut == _NO_CUTOFF, al.lengths, cut).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    raw = al.grades if items is None else al.grades[items]
    judged = raw != NOT_JUDGED
    return Rankings(
        query_ids=al.query_ids,
        offsets=offsets,
        query=(al.query_of_item if items is None else al.query_of_item[items]).astype(np.int64),
        rank=(al.ranks if items is None else al.ranks[items]).astype(np.int64),
        grade=np.where(judged, raw, 0).astype(np.int64),
        judged=judged,
        relevant=raw >= max(level, 0),
        num_relevant=al.num_relevant(level),
        label_offsets=al.label_offsets,
        label_grades=al.label_grades.astype(np.int64),
        k=k,
        rel_level=level,
        _aligned=al,
        _items=items,
    )


# -- checks of a definition ----------------------------------------------------------------


def _check_name(what: str, name: str) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise MeasureError(
            f"{what} {name!r}: a measure name is a letter then letters, digits or '_' "
            "(it is written as name@K(param=value) on the command line)"
        )


def _check_params(name: str, params: Sequence[Param], reserved: Sequence[str]) -> None:
    seen: set[str] = set()
    for p in params:
        if not isinstance(p, Param):
            raise MeasureError(f"{name}: params must be ragmeter.Param objects, got {p!r}")
        if not _NAME.fullmatch(p.name) or p.name in (*reserved, BUDGET):
            taken = ", ".join((*reserved, BUDGET))
            raise MeasureError(
                f"{name}: parameter name {p.name!r} is not allowed (an identifier, not {taken})"
            )
        if p.name in seen:
            raise MeasureError(f"{name}: parameter '{p.name}' declared twice")
        seen.add(p.name)
        if p.kind not in _KINDS:
            raise MeasureError(
                f"{name}: parameter '{p.name}' has kind {p.kind!r}; use int, float, str or bool"
            )
        if p.default is not None:
            p.coerce(f"{name} (its default)", p.default)


def _signature_names(
    name: str, fn: Callable[..., Any], positional: tuple[str, ...], params: Sequence[Param]
) -> set[str]:
    """The keyword names ``fn`` accepts besides its positional arguments; an error when it
    cannot take its arguments or a declared parameter."""
    if not callable(fn):
        raise MeasureError(f"{name}: the measure's function must be callable, got {fn!r}")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {p.name for p in params}
    kinds = inspect.Parameter
    args = list(sig.parameters.values())
    var_kw = any(a.kind is kinds.VAR_KEYWORD for a in args)
    takes = [a for a in args if a.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    if len(takes) < len(positional) and not any(a.kind is kinds.VAR_POSITIONAL for a in args):
        raise MeasureError(
            f"{name}: the function must take ({', '.join(positional)}) as its first arguments"
        )
    keywords = {a.name for a in takes[len(positional) :]} | {
        a.name for a in args if a.kind is kinds.KEYWORD_ONLY
    }
    declared = {p.name for p in params}
    for p in declared - keywords:
        if not var_kw:
            raise MeasureError(f"{name}: the function has no argument for parameter '{p}'")
    offered = declared | set(CONTEXT if positional == ("ranking", "qrels") else ())
    for a in args[len(positional) :]:
        required = a.default is kinds.empty and a.kind not in (
            kinds.VAR_POSITIONAL,
            kinds.VAR_KEYWORD,
        )
        if required and a.name not in offered:
            raise MeasureError(
                f"{name}: the function's argument '{a.name}' is not a declared parameter"
                + (f" nor one of {', '.join(CONTEXT)}" if offered - declared else "")
            )
    return keywords


# -- registration ----------------------------------------------------------------------------


def _register(family: Family, replace: bool) -> Family:
    existing = REGISTRY.owner(family.name)
    for key in (family.name, *family.aliases):
        owner = REGISTRY.owner(key)
        if owner is None:
            taken = REGISTRY.is_reserved(key)
            if taken is not None:
                raise MeasureError(f"measure name '{key}' is {taken}; choose another name")
            continue
        if owner.origin is None:
            raise MeasureError(
                f"measure name '{key}' is ragmeter's own measure '{owner.name}'; "
                "choose another name"
            )
        if owner.name.lower() != family.name.lower() or not replace:
            raise MeasureError(
                f"measure name '{key}' is already defined (measure '{owner.name}' from "
                f"{owner.origin}); pass replace=True to replace it"
            )
    if existing is not None:
        REGISTRY.remove(existing.name)
    REGISTRY.add(family)
    try:
        for key in (family.name, *family.aliases):
            for text in (key, f"{key}@5") if family.cutoff != "none" else (key,):
                parsed = parse_measure(text)
                if parsed.family != family.name:
                    raise MeasureError(f"'{text}' is read as another measure ({parsed})")
    except MeasureError as exc:
        REGISTRY.remove(family.name)
        if existing is not None:
            REGISTRY.add(existing)
        raise MeasureError(
            f"measure name '{family.name}' cannot be used: {exc}; choose another name"
        ) from None
    return family


def _family(
    name: str,
    compute: Callable[[Aligned, Measure], FloatArray],
    fn: Callable[..., Any],
    *,
    cutoff: CutoffKind,
    params: Sequence[Param],
    summary: str | None,
    aggregate: Aggregation,
    higher_is_better: bool | None,
    aliases: Sequence[str],
) -> Family:
    if cutoff not in ("none", "optional", "required"):
        raise MeasureError(f"{name}: cutoff must be 'none', 'optional' or 'required'")
    if aggregate not in ("mean", "sum", "gmean"):
        raise MeasureError(f"{name}: aggregate must be 'mean', 'sum' or 'gmean'")
    if higher_is_better not in (True, False, None):
        raise MeasureError(f"{name}: higher_is_better must be True, False or None")
    for alias in aliases:
        _check_name("alias", alias)
    doc = inspect.cleandoc(fn.__doc__ or "").splitlines()
    return Family(
        name=name,
        compute=compute,
        summary=summary or (doc[0] if doc and doc[0].strip() else f"{name} (user-defined)"),
        cutoff=cutoff,
        params=tuple(params),
        aliases=tuple(aliases),
        aggregate=aggregate,
        reads_run=True,
        higher_is_better=higher_is_better,
        origin=getattr(fn, "__module__", None) or "__main__",
    )


def _param_values(al: Aligned, m: Measure, params: Sequence[Param]) -> dict[str, Any]:
    values = {p.name: m.param(p.name) for p in params}
    if "rel_level" in values:
        values["rel_level"] = _rel_level(al, m)
    return values


def _failed(m: Measure, fn: Callable[..., Any], exc: Exception, where: str = "") -> MeasureError:
    qualname = getattr(fn, "__qualname__", repr(fn))
    return MeasureError(
        f"measure '{m}': {getattr(fn, '__module__', '?')}.{qualname} failed{where}: "
        f"{type(exc).__name__}: {exc}"
    )


def _checked(out: Any, r: Rankings, m: Measure) -> FloatArray:
    try:
        values = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        raise MeasureError(
            f"measure '{m}': the function returned {type(out).__name__}, not numbers"
        ) from None
    if values.shape != (r.n_queries,):
        raise MeasureError(
            f"measure '{m}': the function returned shape {values.shape}; expected one value "
            f"per query ({r.n_queries},)"
        )
    bad = np.flatnonzero(np.isinf(values))
    if len(bad):
        i = int(bad[0])
        raise MeasureError(
            f"measure '{m}': value {values[i]} for query '{r.query_ids[i]}' is infinite; "
            "return None or NaN where the value is undefined"
        )
    return values


def _value(out: Any, m: Measure, query_id: str) -> float:
    if out is None:
        return math.nan
    if isinstance(out, bool | int | float | np.number) and not isinstance(out, complex):
        value = float(out)
        if math.isinf(value):
            raise MeasureError(
                f"measure '{m}': value {value} for query '{query_id}' is infinite; "
                "return None or NaN where the value is undefined"
            )
        return value
    raise MeasureError(
        f"measure '{m}': the function returned {type(out).__name__} for query '{query_id}'; "
        "expected a number, or None where the value is undefined"
    )


# -- the two ways to define a measure ----------------------------------------------------------

VectorFn = Callable[..., Any]
QueryFn = Callable[..., Any]
_F = TypeVar("_F", bound=Callable[..., Any])


def _vectorised(fn: VectorFn, params: Sequence[Param]) -> Callable[[Aligned, Measure], FloatArray]:
    @functools.wraps(fn)
    def compute(al: Aligned, m: Measure) -> FloatArray:
        r = rankings(al, m)
        try:
            out = fn(r, **_param_values(al, m, params))
        except MeasureError:
            raise
        except Exception as exc:
            raise _failed(m, fn, exc) from exc
        return _checked(out, r, m)

    return compute


def _by_query(
    fn: QueryFn, params: Sequence[Param], wants: set[str]
) -> Callable[[Aligned, Measure], FloatArray]:
    context = [c for c in CONTEXT if c in wants and c not in {p.name for p in params}]

    @functools.wraps(fn)
    def compute(al: Aligned, m: Measure) -> FloatArray:
        r = rankings(al, m)
        kwargs = _param_values(al, m, params)
        docs = r.doc_ids.tolist()
        scores = r.scores.tolist() if "scores" in context else None
        label_docs = r.label_doc_ids.tolist()
        label_grades = r.label_grades.tolist()
        cut = cutoff_per_query(al, m)
        out = np.empty(r.n_queries, dtype=np.float64)
        for i in range(r.n_queries):
            a, b = int(r.offsets[i]), int(r.offsets[i + 1])
            la, lb = int(r.label_offsets[i]), int(r.label_offsets[i + 1])
            qid = str(r.query_ids[i])
            extra: dict[str, Any] = {}
            if "k" in context:
                extra["k"] = None if cut is None or cut[i] == _NO_CUTOFF else int(cut[i])
            if scores is not None:
                extra["scores"] = scores[a:b]
            if "query_id" in context:
                extra["query_id"] = qid
            if "rel_level" in context:
                extra["rel_level"] = r.rel_level
            qrels = dict(zip(label_docs[la:lb], label_grades[la:lb], strict=True))
            try:
                value = fn(docs[a:b], qrels, **kwargs, **extra)
            except MeasureError:
                raise
            except Exception as exc:
                raise _failed(m, fn, exc, f" on query '{qid}'") from exc
            out[i] = _value(value, m, qid)
        return out

    return compute


def _define(
    name: str,
    fn: Callable[..., Any] | None,
    compile_fn: Callable[[Any], Callable[[Aligned, Measure], FloatArray]],
    replace: bool,
    **options: Any,
) -> Family | Callable[[_F], _F]:
    """Register ``fn`` as the measure ``name`` (``compile_fn`` checks it and makes its compute
    function; ``options`` are :func:`_family`'s), or, with ``fn`` left out, the decorator that
    does (and returns the function)."""

    def define(f: Callable[..., Any]) -> Family:
        return _register(_family(name, compile_fn(f), f, **options), replace)

    if fn is not None:
        return define(fn)

    def decorator(f: _F) -> _F:
        define(f)
        return f

    return decorator


@overload
def define_measure(
    name: str,
    fn: None = None,
    *,
    cutoff: CutoffKind = "optional",
    params: Sequence[Param] = (),
    summary: str | None = None,
    aggregate: Aggregation = "mean",
    higher_is_better: bool | None = True,
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> Callable[[_F], _F]: ...


@overload
def define_measure(
    name: str,
    fn: VectorFn,
    *,
    cutoff: CutoffKind = "optional",
    params: Sequence[Param] = (),
    summary: str | None = None,
    aggregate: Aggregation = "mean",
    higher_is_better: bool | None = True,
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> Family: ...


def define_measure(
    name: str,
    fn: VectorFn | None = None,
    *,
    cutoff: CutoffKind = "optional",
    params: Sequence[Param] = (),
    summary: str | None = None,
    aggregate: Aggregation = "mean",
    higher_is_better: bool | None = True,
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> Family | Callable[[_F], _F]:
    """Define a measure by a vectorised function, usable by ``name`` everywhere.

    ``fn(r, **params)`` gets the :class:`Rankings` ``r`` of every evaluated query (cut at
    the measure's cutoff) and the measure's parameters as keywords, and returns one number
    per query (a sequence or array of ``r.n_queries`` floats; NaN where undefined). With
    ``fn`` left out, ``define_measure(name, ...)`` is a decorator (returning the function).

    Args:
        name: the measure's name: a letter, then letters, digits or ``_``; matched without
            regard to case, as every measure name.
        fn: the function.
        cutoff: ``"optional"`` (``name`` is the whole ranking, ``name@K`` its top K),
            ``"required"`` (``name`` alone gets the evaluation's ``--default-k``) or
            ``"none"`` (``name@K`` is an error).
        params: its parameters (:class:`~ragmeter.measures.Param`: name, type, default,
            bounds), written ``name@10(alpha=0.5)``. A parameter named ``rel_level`` with
            default ``None`` means the evaluation's ``--rel-level`` until set.
        summary: one line for ``ragmeter measures`` (default: the docstring's first line).
        aggregate: ``"mean"`` over the defined values, ``"sum"`` (counts) or ``"gmean"``.
        higher_is_better: the direction ``compare`` marks ▲ / ▼ by (``None``: neither).
        aliases: other names of it.
        replace: replace a measure of that name defined earlier through this API (a name of
            ragmeter's own measures is always an error).

    Returns:
        the registered :class:`~ragmeter.measures.Family` (or the decorator).

    Raises:
        MeasureError: a name that is taken, malformed or read as another measure; a
            parameter that is malformed or whose default breaks its own bounds; a function
            that cannot take ``(r, **params)``.
    """
    _check_name("measure name", name)
    _check_params(name, params, ("k",))

    def compile_fn(f: VectorFn) -> Callable[[Aligned, Measure], FloatArray]:
        _signature_names(name, f, ("r",), params)
        return _vectorised(f, params)

    return _define(
        name,
        fn,
        compile_fn,
        replace,
        cutoff=cutoff,
        params=params,
        summary=summary,
        aggregate=aggregate,
        higher_is_better=higher_is_better,
        aliases=aliases,
    )


@overload
def define_measure_by_query(
    name: str,
    fn: None = None,
    *,
    cutoff: CutoffKind = "optional",
    params: Sequence[Param] = (),
    summary: str | None = None,
    aggregate: Aggregation = "mean",
    higher_is_better: bool | None = True,
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> Callable[[_F], _F]: ...


@overload
def define_measure_by_query(
    name: str,
    fn: QueryFn,
    *,
    cutoff: CutoffKind = "optional",
    params: Sequence[Param] = (),
    summary: str | None = None,
    aggregate: Aggregation = "mean",
    higher_is_better: bool | None = True,
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> Family: ...


def define_measure_by_query(
    name: str,
    fn: QueryFn | None = None,
    *,
    cutoff: CutoffKind = "optional",
    params: Sequence[Param] = (),
    summary: str | None = None,
    aggregate: Aggregation = "mean",
    higher_is_better: bool | None = True,
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> Family | Callable[[_F], _F]:
    """Define a measure by a plain function of one query, usable by ``name`` everywhere.

    ``fn(ranking, qrels, **params)`` is called once per evaluated query with ``ranking`` the
    retrieved doc ids in rank order (``list[str]``, cut at the cutoff; empty for a judged
    query the run does not answer) and ``qrels`` that query's judgments
    (``dict[str, int]``, every grade, also 0 and negative ones), and returns a number, or
    ``None`` / NaN where the value is undefined. It may also ask, by naming them as
    arguments, for ``k`` (the cutoff, ``None`` without one), ``scores`` (the run's scores,
    parallel to ``ranking``), ``query_id`` and ``rel_level`` (the relevance threshold, as
    :attr:`Rankings.rel_level`).

    The options are :func:`define_measure`'s; with ``fn`` left out it is a decorator.
    """
    _check_name("measure name", name)
    _check_params(name, params, tuple(c for c in CONTEXT if c != "rel_level"))

    def compile_fn(f: QueryFn) -> Callable[[Aligned, Measure], FloatArray]:
        wants = _signature_names(name, f, ("ranking", "qrels"), params)
        return _by_query(f, params, wants)

    return _define(
        name,
        fn,
        compile_fn,
        replace,
        cutoff=cutoff,
        params=params,
        summary=summary,
        aggregate=aggregate,
        higher_is_better=higher_is_better,
        aliases=aliases,
    )


__all__ = [
    "CONTEXT",
    "Rankings",
    "define_measure",
    "define_measure_by_query",
    "rankings",
]
