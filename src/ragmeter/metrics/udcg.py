"""UDCG: utility- and distraction-aware cumulative gain (Trappolini et al. 2025,
"Redefining Retrieval Evaluation in the Era of LLMs", arXiv 2510.21440), position-free form.

Over the context ``C`` = the top K of the run::

    udcg@K = σ( (1/|C|) Σ_{p∈C} [ w_rel·rel(p)·u(p) + w_irr·(1 − rel(p))·u(p) ] )

``σ(x) = 1 / (1 + e^(−x))``; ``u(p) = 1 − P(no-response | question, p)``, the per-passage
utility (an input: ``utilities=`` / ``--utilities``); ``rel(p) = 1`` iff the qrels grade
≥ ``rel_level`` (an unjudged passage is not relevant); ``w_rel = 1``, ``w_irr = −1/3`` by
default. An empty context (no retrieved item) scores 0, not σ(0). ``|C| = min(K, retrieved)``.

This follows the released reference code (``compute_udcg_score``: sum over the passages,
divided by their number, then the sigmoid; empty → 0.0). One deliberate difference: the
reference skips a passage without a score but still counts it in ``|C|``; here a passage of
the context without a utility is an error naming it, never a silent zero.

Example: relevant u = 0.9 and irrelevant u = 0.6 → σ((0.9 − 0.6/3) / 2) = σ(0.35).
"""

from __future__ import annotations

import numpy as np

from ragmeter.core.align import Aligned
from ragmeter.errors import InputError, MissingInputError
from ragmeter.measures import FloatArray, Measure, Param, register
from ragmeter.metrics._segments import cutoff_per_query, within
from ragmeter.metrics.ranking import REL_LEVEL, rel_level


def _finite(value: float) -> str | None:
    return None if np.isfinite(value) else "must be finite"


@register(
    "udcg",
    summary="UDCG@K: sigmoid of the mean utility, distractors weighted w_irr",
    cutoff="required",
    params=(
        Param("w_irr", float, -1 / 3, "weight of an irrelevant passage's utility", _finite),
        Param("w_rel", float, 1.0, "weight of a relevant passage's utility", _finite),
        REL_LEVEL,
    ),
    needs=("qrels", "utilities"),
)
def udcg(al: Aligned, m: Measure) -> FloatArray:
    """udcg@K = σ((1/|C|) Σ_{p∈C} [w_rel·rel(p)·u(p) + w_irr·(1 − rel(p))·u(p)]); 0 if C = ∅."""
    utility = al.side.get("item_utility")
    if utility is None:
        raise MissingInputError(f"{m} needs per-passage utilities; pass --utilities")
    inside = within(al, cutoff_per_query(al, m))
    lacking = np.flatnonzero(inside & np.isnan(utility))
    if len(lacking):
        i = int(lacking[0])
        doc_ids = al.side.get("item_doc_ids")
        doc = doc_ids[i].as_py() if doc_ids is not None else "?"
        more = f" (and {len(lacking) - 1} more)" if len(lacking) > 1 else ""
        raise InputError(
            f"{m}: query '{al.query_ids[al.query_of_item[i]]}', doc '{doc}' (rank "
            f"{int(al.ranks[i])}) has no utility{more}"
        )
    relevant = al.relevant(rel_level(al, m))
    weight = np.where(relevant, float(m.param("w_rel")), float(m.param("w_irr")))
    terms = np.where(inside, weight * np.nan_to_num(utility), 0.0)
    total = np.bincount(al.query_of_item, weights=terms, minlength=al.n_queries)
    size = np.bincount(al.query_of_item, weights=inside, minlength=al.n_queries)
    mean = np.divide(total, size, out=np.zeros(al.n_queries), where=size > 0)
    score: FloatArray = np.where(size > 0, 1.0 / (1.0 + np.exp(-mean)), 0.0)
    return score
