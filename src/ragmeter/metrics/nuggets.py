"""Nugget evaluation of answers and contexts, and citation support (TREC 2024 RAG track).

Per query, nuggets ``n ∈ N`` (``V ⊆ N`` the vital ones) and the assignment ``a(x, n) ∈
{support, partial_support, not_support}`` of each nugget to a text ``x`` (see
:mod:`ragmeter.core.nuggets`). With the weight ``w(support) = 1``, ``w(partial_support) =
0.5``, ``w(not_support) = 0`` and the strict weight ``s(a) = [a = support]``, the four scores
of the AutoNuggetizer (Pradeep et al. 2024, nuggetizer's ``calculate_nugget_scores``) of the
answer ``A`` of a run are

* ``nugget_all         = Σ_{n∈N} w(a(A,n)) / |N|``
* ``nugget_vital       = Σ_{n∈V} w(a(A,n)) / |V|``
* ``nugget_strict_all  = Σ_{n∈N} s(a(A,n)) / |N|``
* ``nugget_strict_vital = Σ_{n∈V} s(a(A,n)) / |V|``

and the run's score is their mean over queries (macro average). NA where the denominator is
0 (nuggetizer scores 0 there) or where the run's answer to the query is not assessed.

**Nugget coverage of the context** (nuggetizer's retrieval mode: each nugget assigned to each
retrieved passage): the context ``Z`` = the top K of the ranking (the whole ranking without
``@K``) supports a nugget as well as its best passage, ``a(Z, n) = max_{d∈Z} a(d, n)``
(not < partial < support; a passage without assignment supports nothing), and
``nugget_coverage@K = Σ_{n∈M} w(a(Z,n)) / |M|`` with ``M = V`` when ``vital=1`` else ``N``,
and ``s`` for ``w`` when ``strict=1``.

**Citation support** (the TREC 2024 RAG support evaluation, Thakur et al. 2025): each sentence
``s`` of the answer cites segments ``C(s)``, each judged ``a(s, c)``; with ``w`` as above,

* ``citation_precision = Σ_s Σ_{c∈C(s)} w(a(s,c)) / Σ_s |C(s)|`` — the weighted share of
  citations that support their sentence; NA without any citation;
* ``citation_recall = Σ_s max_{c∈C(s)} w(a(s,c)) / |S|`` — the weighted share of sentences
  supported by at least one citation (a sentence citing nothing counts 0); NA for an answer
  without sentences.

Reference (hand-computed): nuggets v1 v2 v3 vital, o1 o2 okay; assignments v1 support, v2
partial, v3 not, o1 support, o2 partial → all = (1+.5+0+1+.5)/5 = 0.6, vital = 1.5/3 = 0.5,
strict_all = 2/5 = 0.4, strict_vital = 1/3.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned
from ragmeter.core.nuggets import NuggetView
from ragmeter.errors import MissingInputError
from ragmeter.measures import FloatArray, Measure, Param, register

#: the weight of each code (not, partial, full support) and its strict variant
WEIGHTS = np.array([0.0, 0.5, 1.0])
STRICT_WEIGHTS = np.array([0.0, 0.0, 1.0])


def _flag(value: int) -> str | None:
    return None if value in (0, 1) else "must be 0 or 1"


STRICT = Param("strict", int, 0, "1: only full support counts (partial = 0)", _flag)
VITAL = Param("vital", int, 0, "1: over the vital nuggets only", _flag)


def _view(al: Aligned, m: Measure, *, passages: bool = False) -> NuggetView:
    view = al.side.get("nuggets")
    if not isinstance(view, NuggetView) or not view.has_nuggets:
        raise MissingInputError(
            f"{m} needs nuggets and their assignments (--nuggets, --assignments)"
        )
    retrieved = any(g is not None and len(g) for g in view.items)
    if passages and retrieved and not view.has_passages:
        raise MissingInputError(
            f"{m} needs assignments of the nuggets to the retrieved passages (nuggetizer's "
            "retrieval mode: lines with a docid)"
        )
    return view


def nugget_score(
    codes: npt.NDArray[np.int8], vital: npt.NDArray[np.bool_], *, strict: bool, vital_only: bool
) -> float:
    """``Σ_{n∈M} w(a_n) / |M|`` over the nuggets ``M`` (the vital ones with ``vital_only``);
    NaN when ``M`` is empty. ``w``: 1 / 0.5 / 0 (strict: 1 / 0 / 0)."""
    mask = vital if vital_only else np.ones(len(codes), dtype=bool)
    n = int(mask.sum())
    if n == 0:
        return float("nan")
    weights = STRICT_WEIGHTS if strict else WEIGHTS
    return float(weights[codes[mask].astype(np.int64)].sum() / n)


def _answer_scores(al: Aligned, m: Measure, *, strict: bool, vital_only: bool) -> FloatArray:
    view = _view(al, m)
    out = np.full(al.n_queries, np.nan, dtype=np.float64)
    for i, (codes, vital) in enumerate(zip(view.answer, view.vital, strict=True)):
        if codes is not None and vital is not None:
            out[i] = nugget_score(codes, vital, strict=strict, vital_only=vital_only)
    return out


@register(
    "nugget_all", summary="Nugget score of the answer, partial = 0.5 (TREC RAG)", needs=("nuggets",)
)
def nugget_all(al: Aligned, m: Measure) -> FloatArray:
    """nugget_all = Σ_{n∈N} w(a(A,n)) / |N|, w = 1 / 0.5 / 0; NA without nuggets or answer.

    Reference: v1 S, v2 P, v3 N, o1 S, o2 P → (1 + .5 + 0 + 1 + .5) / 5 = 0.6.
    """
    return _answer_scores(al, m, strict=False, vital_only=False)


@register(
    "nugget_vital", summary="Nugget score over the vital nuggets, partial = 0.5", needs=("nuggets",)
)
def nugget_vital(al: Aligned, m: Measure) -> FloatArray:
    """nugget_vital = Σ_{n∈V} w(a(A,n)) / |V|; NA if V = ∅ or no answer.

    Reference: v1 S, v2 P, v3 N → 1.5 / 3 = 0.5.
    """
    return _answer_scores(al, m, strict=False, vital_only=True)


@register(
    "nugget_strict_all", summary="Share of nuggets the answer fully supports", needs=("nuggets",)
)
def nugget_strict_all(al: Aligned, m: Measure) -> FloatArray:
    """nugget_strict_all = |{n ∈ N : a(A,n) = support}| / |N|; NA without nuggets or answer.

    Reference: v1 S, v2 P, v3 N, o1 S, o2 P → 2 / 5 = 0.4.
    """
    return _answer_scores(al, m, strict=True, vital_only=False)


@register(
    "nugget_strict_vital",
    summary="Share of vital nuggets the answer fully supports (TREC RAG's main score)",
    needs=("nuggets",),
)
def nugget_strict_vital(al: Aligned, m: Measure) -> FloatArray:
    """nugget_strict_vital = |{n ∈ V : a(A,n) = support}| / |V|; NA if V = ∅ or no answer.

    Reference: v1 S, v2 P, v3 N → 1 / 3.
    """
    return _answer_scores(al, m, strict=True, vital_only=True)


@register(
    "nugget_coverage",
    cutoff="optional",
    params=(STRICT, VITAL),
    needs=("nuggets",),
    summary="Nugget score of the context: each nugget as its best top-K passage supports it",
    context=True,
    default_context="the whole ranking",
)
def nugget_coverage(al: Aligned, m: Measure) -> FloatArray:
    """nugget_coverage@K = Σ_{n∈M} w(max_{d ∈ top K} a(d,n)) / |M| (M = V with vital=1, else
    N; strict weights with strict=1); a passage without assignment supports nothing; NA
    without nuggets. Reference: top 2 = [d1: n1 P, n2 N; d2: n1 S, n2 P] → n1 S, n2 P →
    (1 + 0.5) / 2 = 0.75."""
    view = _view(al, m, passages=True)
    strict, vital_only = bool(m.param("strict")), bool(m.param("vital"))
    out = np.full(al.n_queries, np.nan, dtype=np.float64)
    for i, (grid, vital) in enumerate(zip(view.items, view.vital, strict=True)):
        if grid is None or vital is None:
            continue
        k = len(grid) if m.k is None else int(m.k)
        if al.cutoffs is not None and al.cutoffs[i] >= 0:
            k = min(k, int(al.cutoffs[i]))
        best = grid[:k].max(axis=0) if k > 0 and len(grid) else np.zeros(len(vital), np.int8)
        out[i] = nugget_score(best, vital, strict=strict, vital_only=vital_only)
    return out


def _citation_sums(al: Aligned, m: Measure) -> tuple[FloatArray, ...]:
    """Per query: Σ citation weights, #citations, Σ sentence max weights, #sentences (NaN
    where the answer's citations are not judged)."""
    view = al.side.get("nuggets")
    if not isinstance(view, NuggetView) or not view.has_citations:
        raise MissingInputError(f"{m} needs citation support judgments (--citation-support)")
    sums = np.full((4, al.n_queries), np.nan, dtype=np.float64)
    for i, sentences in enumerate(view.sentences):
        if sentences is None:
            continue
        weights = [WEIGHTS[np.asarray(s.codes, dtype=np.int64)] for s in sentences]
        sums[0, i] = float(sum(w.sum() for w in weights))
        sums[1, i] = float(sum(len(w) for w in weights))
        sums[2, i] = float(sum(w.max() if len(w) else 0.0 for w in weights))
        sums[3, i] = float(len(sentences))
    return tuple(sums)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(len(num), np.nan, dtype=np.float64)
    ok = ~np.isnan(den) & (den > 0)
    out[ok] = num[ok] / den[ok]
    return out


@register(
    "citation_precision",
    needs=("citations",),
    summary="Weighted share of citations that support their sentence (full 1, partial 0.5)",
)
def citation_precision(al: Aligned, m: Measure) -> FloatArray:
    """citation_precision = Σ_s Σ_{c∈C(s)} w(a(s,c)) / Σ_s |C(s)|; NA without citations.

    Reference: s1 cites [S, N], s2 cites [P], s3 cites nothing → (1 + 0 + 0.5) / 3 = 0.5.
    """
    cited, n_cited, _, _ = _citation_sums(al, m)
    return _ratio(cited, n_cited)


@register(
    "citation_recall",
    needs=("citations",),
    summary="Weighted share of answer sentences supported by one of their citations",
)
def citation_recall(al: Aligned, m: Measure) -> FloatArray:
    """citation_recall = Σ_s max_{c∈C(s)} w(a(s,c)) / |S| (0 for a sentence citing nothing);
    NA for an answer without sentences.

    Reference: s1 cites [S, N], s2 cites [P], s3 cites nothing → (1 + 0.5 + 0) / 3 = 0.5.
    """
    _, _, best, n_sentences = _citation_sums(al, m)
    return _ratio(best, n_sentences)
