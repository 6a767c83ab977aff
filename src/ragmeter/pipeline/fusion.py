"""Fusing runs: CombSUM, CombMNZ, weighted sum and reciprocal rank fusion.

Each run's scores are first normalised per query, over the documents that run retrieved for
it (``s`` a score, ``S`` the run's scores of the query):

* ``none``: s;
* ``min-max``: (s − min S) / (max S − min S);
* ``z-score``: (s − mean S) / sd S (population standard deviation);
* ``sum``: (s − min S) / Σ_{t ∈ S} (t − min S);

and a score whose denominator is 0 (every score equal) becomes 0. Then, for a document d of a
query, over the runs ``r`` that retrieved it:

* ``combsum``: Σ_r n_r(d) (Fox & Shaw 1994);
* ``combmnz``: Σ_r n_r(d) · |{r : d ∈ r}|;
* ``wsum``: Σ_r w_r · n_r(d) with the given weights;
* ``rrf``: Σ_r 1 / (k + rank_r(d)), ranks from 1 in each run's order, k = 60 (Cormack et al.
  2009; the normalisation does not change it).

The fused run ranks the documents by fused score, descending, ties by doc id descending (as
trec_eval orders ties). These are ranx's definitions (``ranx.fuse`` with norm ``min-max``,
``zmuv``, ``sum`` and methods ``sum``, ``mnz``, ``wsum``, ``rrf``), except that ranx floors a
zero denominator at 1e-9 where ragmeter sets the score to 0 — equal wherever the scores of a
run differ by more than 1e-9 — and ranx needs every run to hold the same queries, where a run
that lacks a query here adds nothing to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.core.data import Run
from ragmeter.errors import InputError

Method = Literal["combsum", "combmnz", "wsum", "rrf"]
Norm = Literal["none", "min-max", "z-score", "sum"]
METHODS: tuple[str, ...] = ("combsum", "combmnz", "wsum", "rrf")
NORMS: tuple[str, ...] = ("none", "min-max", "z-score", "sum")
RRF_K = 60

FloatArray = npt.NDArray[np.float64]


def normalise(scores: FloatArray, norm: Norm) -> FloatArray:
    """One query's scores of one run, normalised (see the module docstring)."""
    if norm == "none" or not len(scores):
        return scores.astype(np.float64)
    if norm == "min-max":
        shifted, den = scores - scores.min(), float(scores.max() - scores.min())
    elif norm == "z-score":
        shifted, den = scores - scores.mean(), float(scores.std())
    elif norm == "sum":
        shifted = scores - scores.min()
        den = float(shifted.sum())
    else:
        raise InputError(f"unknown normalisation {norm!r}; expected one of {', '.join(NORMS)}")
    out: FloatArray = shifted / den if den > 0 else np.zeros(len(scores))
    return out


def fuse(
    runs: Sequence[Run],
    *,
    method: Method = "combsum",
    norm: Norm = "min-max",
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
    depth: int | None = None,
    name: str = "fused",
) -> Run:
    """Fuse ``runs`` (see the module docstring); ``depth`` keeps each query's top ``depth``.

    >>> a = Run.from_dict({"q": {"d1": 3.0, "d2": 1.0}})
    >>> b = Run.from_dict({"q": {"d2": 5.0, "d3": 4.0}})
    >>> fuse([a, b], method="combmnz").ranked()
    {'q': ['d2', 'd1', 'd3']}
    """
    _check(runs, method, norm, weights, k)
    w = list(weights) if weights is not None else [1.0] * len(runs)
    fused: dict[str, dict[str, float]] = {}
    hits: dict[str, dict[str, int]] = {}
    for run, weight in zip(runs, w, strict=True):
        ranked = run.ranked()
        scored = run.to_dict()
        for q, docs in ranked.items():
            values = np.array([scored[q][d] for d in docs], dtype=np.float64)
            if method == "rrf":
                terms = 1.0 / (k + np.arange(1, len(docs) + 1, dtype=np.float64))
            else:
                terms = normalise(values, norm) * (weight if method == "wsum" else 1.0)
            into, count = fused.setdefault(q, {}), hits.setdefault(q, {})
            for d, term in zip(docs, terms.tolist(), strict=True):
                into[d] = into.get(d, 0.0) + term
                count[d] = count.get(d, 0) + 1
    if method == "combmnz":
        fused = {q: {d: s * hits[q][d] for d, s in docs.items()} for q, docs in fused.items()}
    return _as_run(fused, depth, name)


def _check(
    runs: Sequence[Run], method: str, norm: str, weights: Sequence[float] | None, k: int
) -> None:
    if len(runs) < 2:
        raise InputError(f"fusing needs two runs or more, got {len(runs)}")
    if method not in METHODS:
        raise InputError(f"unknown fusion method {method!r}; expected one of {', '.join(METHODS)}")
    if norm not in NORMS:
        raise InputError(f"unknown normalisation {norm!r}; expected one of {', '.join(NORMS)}")
    if method == "wsum":
        if weights is None or len(weights) != len(runs):
            given = 0 if weights is None else len(weights)
            raise InputError(f"wsum needs one weight per run: {len(runs)} runs, {given} weights")
    elif weights is not None:
        raise InputError(f"weights are for wsum, not {method}")
    if method == "rrf" and k < 0:
        raise InputError(f"rrf's k must be ≥ 0, got {k}")


def _as_run(fused: dict[str, dict[str, float]], depth: int | None, name: str) -> Run:
    queries: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    for q in sorted(fused):
        # score descending, then doc id descending (byte order), as trec_eval ranks ties
        ordered = sorted(fused[q].items(), key=lambda x: x[0].encode(), reverse=True)
        ordered.sort(key=lambda x: -x[1])
        for d, s in ordered[:depth]:
            queries.append(q)
            docs.append(d)
            scores.append(s)
    return Run.from_columns(
        pa.array(queries, type=pa.string()),
        pa.array(docs, type=pa.string()),
        np.asarray(scores, dtype=np.float64),
        name=name,
        source=name,
    )
