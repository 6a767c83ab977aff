"""Tuning a fusion: a grid search over weighted-sum weights or RRF's k, chosen on training
queries and scored on held-out ones.

The grid is ranx's (``ranx.optimize_fusion``):

* ``wsum``: every weight vector w = (c_1, …, c_n) · step with whole c_r ≥ 0 and Σ_r c_r · step
  = 1 — the points of the simplex at spacing ``step`` (1/step must be a whole number) — in
  lexicographic order (the first run's weight changes slowest); ``w_r = c_r / (1/step)``;
* ``rrf``: every k of ``ks`` (by default 10, 20, …, 100), in the order given.

Each grid point fuses the runs (:func:`ragmeter.pipeline.fusion.fuse`'s definitions) and
evaluates the fused run once; its score on a set of queries Q is the measure's aggregate (the
mean, NA values left out as everywhere) of its per-query values over Q. The chosen point has
the best training score — the highest, or the lowest for a measure where lower is better;
scores within 1e-12 of the best count as equal, and among equal ones the **last** in grid order
wins, as ranx's ``score >= best_score`` does (for wsum the largest weight of the first run,
then of the second…; for rrf the last k).

The queries are the qrels' queries (one that no run retrieves for scores as an empty ranking,
as in every ragmeter evaluation). ``train_queries`` tunes on those; the held-out queries are
``test_queries``, or else the other qrels queries. ``split=f`` draws ``round(f · n)`` training
queries at random (``numpy.random.default_rng(seed).permutation`` of the sorted query ids)
and holds out the rest. With neither, or when the held-out queries overlap the training ones,
the held-out score is not held out: a :class:`FusionTuningWarning` says so, once per call.

ranx keeps only the weight vectors whose floating-point weights add up to exactly 1.0, which
leaves out a few points for three runs or more (for step 0.1 and three runs (0.2, 0.7, 0.1),
(0.3, 0.6, 0.1), (0.6, 0.3, 0.1), (0.7, 0.2, 0.1)); here every point of the simplex is tried.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Literal

import numpy as np
import pyarrow as pa

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.measures import Measure
from ragmeter.pipeline.fusion import RRF_K, FloatArray, Norm, fuse, normalise

TuneMethod = Literal["wsum", "rrf"]
TUNE_METHODS: tuple[str, ...] = ("wsum", "rrf")
#: ranx's default k grid of RRF
RRF_KS: tuple[int, ...] = tuple(range(10, 101, 10))
#: training scores this close to the best are ties
TIE_TOLERANCE = 1e-12


class FusionTuningWarning(UserWarning):
    """The fusion was tuned and evaluated on (some of) the same queries."""


@dataclass(frozen=True)
class FusionTrial:
    """One grid point: its weights (wsum) or k (rrf), its training and held-out scores."""

    weights: tuple[float, ...] | None
    k: int | None
    train: float | None
    test: float | None

    @property
    def label(self) -> str:
        """``0.6,0.4`` or ``k=60``."""
        if self.weights is not None:
            return ",".join(f"{w:g}" for w in self.weights)
        return f"k={self.k}"


@dataclass(frozen=True)
class FusionTuning:
    """The result of :func:`tune_fusion`.

    Attributes:
        method, norm, metric: what was tuned and on which measure.
        weights: the chosen weights (wsum), else None.
        k: the chosen k (rrf), else None.
        train_score: the chosen point's score on the training queries.
        test_score: its score on the held-out queries.
        train_queries, test_queries: the two query sets (sorted).
        trials: every grid point, in grid order.
        run: the runs fused with the chosen parameters (every query of the runs, each cut at
            ``depth`` when one is given).
        warnings: what the caller should read (the same-queries warning).
    """

    method: str
    norm: str
    metric: str
    weights: tuple[float, ...] | None
    k: int | None
    train_score: float
    test_score: float | None
    train_queries: tuple[str, ...]
    test_queries: tuple[str, ...]
    trials: tuple[FusionTrial, ...]
    run: Run = field(repr=False)
    warnings: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The chosen point, as :attr:`FusionTrial.label` writes it."""
        return FusionTrial(self.weights, self.k, None, None).label

    def table(self) -> list[dict[str, object]]:
        """The grid: one row per point, ``{"params", "train", "test", "chosen"}``."""
        return [
            {
                "params": t.label,
                "train": t.train,
                "test": t.test,
                "chosen": t.weights == self.weights and t.k == self.k,
            }
            for t in self.trials
        ]


def weight_grid(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """The simplex grid of ``n_runs`` weights at spacing ``step``, in lexicographic order.

    >>> weight_grid(2, 0.5)
    [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]
    """
    if not 0 < step <= 1:
        raise InputError(f"the weight step must be in (0, 1], got {step}", field="step")
    m = round(1 / step)
    if abs(m * step - 1) > 1e-9:
        raise InputError(f"1/step must be a whole number, got step {step}", field="step")
    return [
        tuple(c / m for c in counts)
        for counts in product(range(m + 1), repeat=n_runs)
        if sum(counts) == m
    ]


@dataclass(frozen=True)
class _Union:
    """Every (query, doc) row of the runs once, with each run's normalised score and rank."""

    queries: pa.Array
    docs: pa.Array
    scores: FloatArray  # rows × runs, 0 where the run lacks the row
    ranks: FloatArray  # rows × runs, inf where the run lacks the row

    def fused(self, weights: Sequence[float] | None, k: int | None, name: str) -> Run:
        """The fused run: Σ_r w_r · n_r(d), or Σ_r 1 / (k + rank_r(d)), added run by run."""
        total = np.zeros(len(self.scores))
        for r in range(self.scores.shape[1]):
            if k is not None:
                total = total + 1.0 / (k + self.ranks[:, r])
            else:
                assert weights is not None
                total = total + self.scores[:, r] * weights[r]
        return Run.from_columns(self.queries, self.docs, total, name=name, source=name)


def _union(runs: Sequence[Run], norm: Norm) -> _Union:
    q_parts, d_parts, s_parts, r_parts, which = [], [], [], [], []
    for i, run in enumerate(runs):
        lengths = np.diff(run.offsets)
        q_parts.append(np.repeat(run.query_ids.astype(str), lengths))
        d_parts.append(run.doc_ids)
        s_parts.append(
            np.concatenate(
                [
                    normalise(run.scores[a:b], norm)
                    for a, b in zip(run.offsets[:-1], run.offsets[1:], strict=True)
                ]
                or [np.zeros(0)]
            )
        )
        r_parts.append(np.arange(len(run.scores)) - np.repeat(run.offsets[:-1], lengths) + 1.0)
        which.append(np.full(len(run.scores), i))
    queries = pa.array(np.concatenate(q_parts), type=pa.string())
    docs = pa.chunked_array([d.cast(pa.string()) for d in d_parts]).combine_chunks()
    q_codes = queries.dictionary_encode().indices.to_numpy(zero_copy_only=False)
    d_enc = docs.dictionary_encode()
    d_codes = d_enc.indices.to_numpy(zero_copy_only=False)
    key = q_codes.astype(np.int64) * len(d_enc.dictionary) + d_codes
    first_rows, inverse = np.unique(key, return_index=True, return_inverse=True)[1:]
    run_of = np.concatenate(which)
    scores = np.zeros((len(first_rows), len(runs)))
    ranks = np.full((len(first_rows), len(runs)), np.inf)
    scores[inverse, run_of] = np.concatenate(s_parts)
    ranks[inverse, run_of] = np.concatenate(r_parts)
    take = pa.array(first_rows)
    return _Union(queries.take(take), docs.take(take), scores, ranks)


def _query_sets(
    qrels: Qrels,
    train_queries: Iterable[str] | None,
    test_queries: Iterable[str] | None,
    split: float | None,
    seed: int,
) -> tuple[list[str], list[str], str | None]:
    """Training and held-out queries, and the warning when they overlap."""
    known = sorted(str(q) for q in qrels.query_ids)
    if split is not None and train_queries is not None:
        raise InputError("give either training queries or a split, not both")
    if split is not None:
        if not 0 < split < 1:
            raise InputError(f"split must be in (0, 1), got {split}", field="split")
        n_train = round(split * len(known))
        if not 0 < n_train < len(known):
            raise InputError(
                f"a split of {split} over {len(known)} queries leaves no training or no "
                "held-out query",
                field="split",
            )
        order = np.random.default_rng(seed).permutation(len(known))
        train = sorted(known[i] for i in order[:n_train])
    else:
        train = _known(train_queries, known, "training") if train_queries is not None else known
    if test_queries is not None:
        test = _known(test_queries, known, "held-out")
    else:
        test = sorted(set(known) - set(train)) or train
    shared = len(set(train) & set(test))
    if not shared:
        return train, test, None
    return (
        train,
        test,
        f"fusion tuned and evaluated on the same queries ({shared} of the {len(test)} "
        "evaluation queries were tuning queries): the held-out score is optimistic; hold "
        "queries out with --split or --train-queries (split= or train_queries= in Python)",
    )


def _known(given: Iterable[str], known: list[str], what: str) -> list[str]:
    ids = sorted({str(q) for q in given})
    if not ids:
        raise InputError(f"no {what} queries given")
    unknown = sorted(set(ids) - set(known))
    if unknown:
        shown = ", ".join(unknown[:5]) + (" …" if len(unknown) > 5 else "")
        raise InputError(f"{len(unknown)} {what} queries are not in the qrels: {shown}")
    return ids


def _measure(metric: str | Measure) -> tuple[Measure, int]:
    from ragmeter.evaluation import resolve_measures
    from ragmeter.stats.comparison import direction

    measures = resolve_measures([metric], default_k=5)
    if len(measures) != 1:
        raise InputError(f"tune on one measure, got {len(measures)} from {metric!r}")
    m = measures[0]
    if set(m.needs) - {"qrels"}:
        raise InputError(f"{m} needs more than qrels; tune on a qrels measure (ndcg@10, map …)")
    sign = direction(m)
    if sign == 0:
        raise InputError(f"{m} is neither better high nor low; tune on a quality measure")
    return m, sign


def tune_fusion(
    runs: Sequence[Run],
    qrels: Qrels,
    *,
    method: TuneMethod = "wsum",
    norm: Norm = "min-max",
    metric: str | Measure = "ndcg@10",
    step: float = 0.1,
    ks: Sequence[int] = RRF_KS,
    train_queries: Iterable[str] | None = None,
    test_queries: Iterable[str] | None = None,
    split: float | None = None,
    seed: int = 0,
    rel_level: int = 1,
    depth: int | None = None,
    name: str = "fused",
) -> FusionTuning:
    """Grid-search the weights (``wsum``) or k (``rrf``) of a fusion (see the module docstring).

    Args:
        runs: the runs to fuse, two or more.
        qrels: the judgments; their queries are the ones split into training and held-out.
        method: ``wsum`` (weights on the simplex grid) or ``rrf`` (k of ``ks``).
        norm: the per-query normalisation of wsum (``min-max``, ``z-score``, ``sum``,
            ``none``); RRF reads ranks only.
        metric: the one measure tuned on (qrels-only: ``ndcg@10``, ``map``, ``recall@100`` …).
        step: the spacing of the weight grid (1/step a whole number).
        ks: RRF's k grid.
        train_queries: tune on these (qrels) queries; without them, on every qrels query.
        test_queries: score the chosen point on these; default: the qrels queries not trained on.
        split: draw this fraction of the qrels queries for training, hold out the rest.
        seed: the seed of the split's draw.
        rel_level: relevant ⇔ grade ≥ rel_level.
        depth: cut every fused run at its top ``depth`` of each query (scored as written).
        name: the name of the fused run.

    A warning (:class:`FusionTuningWarning`, also in ``warnings`` of the result) says when the
    held-out queries overlap the training ones.

    >>> a = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 2.0, "d4": 1.0}})
    >>> b = Run.from_dict({"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d4": 2.0, "d3": 1.0}})
    >>> qrels = Qrels.from_dict({"q1": ["d2"], "q2": ["d4"]})
    >>> tuned = tune_fusion([a, b], qrels, metric="P@1", step=0.5, train_queries=["q1"])
    >>> [t.train for t in tuned.trials]  # weights (0, 1), (0.5, 0.5), (1, 0)
    [1.0, 1.0, 0.0]
    >>> tuned.weights, tuned.train_score, tuned.test_queries, tuned.test_score
    ((0.5, 0.5), 1.0, ('q2',), 1.0)
    """
    from ragmeter.evaluation import EvalInputs, evaluate_inputs
    from ragmeter.stats.aggregate import aggregate

    if method not in TUNE_METHODS:
        raise InputError(f"tuning is for {' or '.join(TUNE_METHODS)}, not {method!r}")
    if len(runs) < 2:
        raise InputError(f"fusing needs two runs or more, got {len(runs)}")
    measure, sign = _measure(metric)
    train, test, warning = _query_sets(qrels, train_queries, test_queries, split, seed)
    if warning:
        warnings.warn(warning, FusionTuningWarning, stacklevel=2)
    grid: list[tuple[tuple[float, ...] | None, int | None]]
    if method == "wsum":
        grid = [(w, None) for w in weight_grid(len(runs), step)]
    else:
        if not ks or min(ks) < 0:
            raise InputError(f"rrf's k grid must hold values ≥ 0, got {list(ks)}", field="ks")
        grid = [(None, int(k)) for k in ks]
    union = _union(runs, norm)
    inputs = EvalInputs(qrels=qrels, rel_level=rel_level, depth=depth)
    trials: list[FusionTrial] = []
    for weights, k in grid:
        result = evaluate_inputs([union.fused(weights, k, name)], inputs, [measure]).run
        ids = [str(q) for q in result.query_ids]
        values = dict(zip(ids, result.column(measure).tolist(), strict=True))
        score = [
            aggregate(np.array([values[q] for q in qs]), measure.spec.aggregate).value
            for qs in (train, test)
        ]
        trials.append(FusionTrial(weights, k, score[0], score[1]))
    best = _choose(trials, sign, measure)
    assert best.train is not None
    return FusionTuning(
        method=method,
        norm="none" if method == "rrf" else norm,
        metric=str(measure),
        weights=best.weights,
        k=best.k,
        train_score=best.train,
        test_score=best.test,
        train_queries=tuple(train),
        test_queries=tuple(test),
        trials=tuple(trials),
        run=fuse(
            runs,
            method=method,
            norm=norm,
            weights=best.weights,
            k=RRF_K if best.k is None else best.k,
            depth=depth,
            name=name,
        ),
        warnings=(warning,) if warning else (),
    )


def _choose(trials: Sequence[FusionTrial], sign: int, measure: Measure) -> FusionTrial:
    """The best training score; within :data:`TIE_TOLERANCE`, the last in grid order."""
    scored = [t for t in trials if t.train is not None]
    if not scored:
        raise InputError(f"{measure} is NA on every training query; nothing to tune on")
    top = max(sign * t.train for t in scored if t.train is not None)
    return [t for t in scored if t.train is not None and sign * t.train >= top - TIE_TOLERANCE][-1]


__all__ = [
    "RRF_KS",
    "FusionTrial",
    "FusionTuning",
    "FusionTuningWarning",
    "tune_fusion",
    "weight_grid",
]
