"""``ragmeter judge learn``: fit a learned judge (:mod:`ragmeter.judges.learned`) on human
labels and measure, honestly, how well it agrees with labels it never saw.

Validation is k-fold cross-validation *within each topic*: each topic's labels are shuffled
(seeded by ``seed`` and the topic id) and dealt to ``folds`` folds in turn; for fold f the
model — the same structure as the final one: the same topics get adapters — is fitted on
every label outside fold f and grades the labels in it. Every label is thus graded once by a
model that never saw it. On these held-out grades against the human ones: Cohen's κ
(quadratic-weighted and unweighted, over the training scale), Krippendorff's ordinal α, and
exact agreement, each with a 95 % percentile interval from ``resamples`` bootstrap draws of
whole topics (labels of one topic are not independent). With ``per_topic`` the pooled model's
held-out figures are printed beside, so you see whether the adapters pay.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragmeter.judges.learned import (
    DEFAULT_ADAPTER_ALPHA,
    DEFAULT_ALPHA,
    DEFAULT_MIN_LABELS,
    LearnedModel,
    TrainingSet,
    fit_model,
    pair_features,
)
from ragmeter.judges.learned_defaults import DEFAULT_FOLDS, DEFAULT_RESAMPLES

if TYPE_CHECKING:
    from ragmeter.pipeline.embeddings import MiniLMEncoder

__all__ = [
    "Figure",
    "LearnResult",
    "Validation",
    "agreement_figures",
    "cross_validate",
    "learn",
    "validation_figures",
    "write_held_out",
]


@dataclass(frozen=True)
class Figure:
    """A figure with its 95 % bootstrap interval (NaN when undefined)."""

    value: float
    low: float
    high: float

    def text(self) -> str:
        if not np.isfinite(self.value):
            return "n/a"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def to_dict(self) -> dict[str, float | None]:
        def clean(v: float) -> float | None:
            return float(v) if np.isfinite(v) else None

        return {"value": clean(self.value), "low": clean(self.low), "high": clean(self.high)}


@dataclass(frozen=True)
class Validation:
    """Held-out agreement of a learned judge with the human labels (see the module doc)."""

    what: str
    folds: int
    n: int
    topics: int
    kappa_quadratic: Figure
    kappa: Figure
    alpha_ordinal: Figure
    accuracy: Figure
    #: the held-out grade of every training pair
    predictions: dict[tuple[str, str], int] = field(repr=False, default_factory=dict)

    def lines(self) -> list[str]:
        """Two lines of figures under the model's name (fit for 80 columns)."""
        return [
            f"  {self.what}:",
            f"    κ quadratic {self.kappa_quadratic.text():<22}  κ {self.kappa.text()}",
            f"    ordinal α   {self.alpha_ordinal.text():<22}  exact {self.accuracy.text()}",
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "folds": self.folds,
            "n": self.n,
            "topics": self.topics,
            "kappa_quadratic": self.kappa_quadratic.to_dict(),
            "kappa": self.kappa.to_dict(),
            "alpha_ordinal": self.alpha_ordinal.to_dict(),
            "accuracy": self.accuracy.to_dict(),
        }


@dataclass(frozen=True)
class LearnResult:
    """The fitted model and its validations (the chosen model's first)."""

    model: LearnedModel
    validations: list[Validation]

    def lines(self) -> list[str]:
        m = self.model
        out = [
            f"learned judge: {m.training_labels:,} human labels of {m.topics} topics, grades "
            f"{m.scale[0]}..{m.scale[1]}",
            f"  learner: {m.learner}",
            f"  {m.scope}",
        ]
        if self.validations:
            v = self.validations[0]
            out.append(
                f"held-out agreement ({v.folds}-fold within topics, 95% intervals over topics):"
            )
        for v in self.validations:
            out += v.lines()
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "training_labels": self.model.training_labels,
            "training_sha256": self.model.training_sha256,
            "topics": self.model.topics,
            "scale": list(self.model.scale),
            "learner": self.model.learner,
            "scope": self.model.scope,
            "validation": [v.to_dict() for v in self.validations],
        }


def fold_of(topics: Sequence[str], folds: int, seed: int) -> npt.NDArray[np.int64]:
    """The fold of each row: within each topic, its rows shuffled (``random.Random`` seeded
    by ``seed`` and the topic) and dealt to folds 0, 1, …, folds−1 in turn."""
    members: dict[str, list[int]] = {}
    for i, t in enumerate(topics):
        members.setdefault(t, []).append(i)
    out = np.zeros(len(topics), dtype=np.int64)
    for topic, rows in members.items():
        shuffled = list(rows)
        random.Random(f"{seed}:{topic}").shuffle(shuffled)
        for k, row in enumerate(shuffled):
            out[row] = k % folds
    return out


def cross_validate(
    features: npt.NDArray[np.float64],
    data: TrainingSet,
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    **fit: Any,
) -> list[int]:
    """The held-out grade of every row of ``data`` (see the module doc); ``fit``: the
    keyword arguments of :func:`~ragmeter.judges.learned.fit_model`. The adapters are the
    final model's: a topic with ≥ ``min_labels`` labels in all gets one in every fold."""
    topics = [q for q, _ in data.pairs]
    queries = [q for q, _ in data.texts]
    counts: dict[str, int] = {}
    for t in topics:
        counts[t] = counts.get(t, 0) + 1
    min_labels = int(fit.pop("min_labels", DEFAULT_MIN_LABELS))
    # the fold's model gives adapters to the final model's topics, whatever their count here
    eligible = {t for t, n in counts.items() if n >= min_labels}
    fold = fold_of(topics, folds, seed)
    held_out = [0] * len(data)
    for f in range(folds):
        test = np.flatnonzero(fold == f)
        if test.size == 0:
            continue
        train = np.flatnonzero(fold != f)
        model = fit_model(
            features[train],
            [data.grades[i] for i in train],
            [topics[i] for i in train],
            [queries[i] for i in train],
            min_labels=min_labels,
            scale=data.scale,
            adapter_topics=eligible,
            **fit,
        )
        grades = model.grades(features[test], [queries[i] for i in test])
        for i, grade in zip(test, grades, strict=True):
            held_out[i] = grade
    return held_out


def validation_figures(
    human: Sequence[int],
    predicted: Sequence[int],
    topics: Sequence[str],
    scale: tuple[int, int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Figure]:
    """κ quadratic, κ, ordinal α and exact agreement of ``predicted`` against ``human``,
    with 95 % percentile intervals from bootstrap draws of whole topics (seeded)."""
    a = np.asarray(human, dtype=np.int64)
    b = np.asarray(predicted, dtype=np.int64)
    names = sorted(set(topics))
    index = {t: i for i, t in enumerate(names)}
    groups = [[] for _ in names]  # type: list[list[int]]
    for row, t in enumerate(topics):
        groups[index[t]].append(row)
    rows = [np.asarray(g, dtype=np.int64) for g in groups]
    point = agreement_figures(a, b, scale)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        picked = rng.integers(0, len(rows), len(rows))
        chosen = np.concatenate([rows[i] for i in picked])
        draws.append(agreement_figures(a[chosen], b[chosen], scale))
    out = {}
    for k, value in point.items():
        values = np.array([d[k] for d in draws])
        values = values[np.isfinite(values)]
        low, high = (
            (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)))
            if values.size
            else (float("nan"), float("nan"))
        )
        out[k] = Figure(value, low, high)
    return out


def agreement_figures(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], scale: tuple[int, int]
) -> dict[str, float]:
    """κ quadratic, unweighted κ (over the whole ``scale``), ordinal α and exact agreement
    of grades ``b`` against the reference ``a``."""
    from ragmeter.stats.agreement import confusion_matrix, krippendorff_alpha

    matrix = confusion_matrix(a, b, labels=range(scale[0], scale[1] + 1))
    return {
        "kappa_quadratic": matrix.kappa("quadratic"),
        "kappa": matrix.kappa(None),
        "alpha_ordinal": krippendorff_alpha(np.vstack([a, b]).astype(np.float64), "ordinal"),
        "accuracy": matrix.accuracy(),
    }


def _validation(
    what: str,
    data: TrainingSet,
    predicted: Sequence[int],
    folds: int,
    resamples: int,
    seed: int,
) -> Validation:
    topics = [q for q, _ in data.pairs]
    figures = validation_figures(
        data.grades, predicted, topics, data.scale, resamples=resamples, seed=seed
    )
    return Validation(
        what=what,
        folds=folds,
        n=len(data),
        topics=len(set(topics)),
        predictions=dict(zip(data.pairs, predicted, strict=True)),
        **figures,
    )


def learn(
    data: TrainingSet,
    *,
    per_topic: bool = True,
    min_labels: int = DEFAULT_MIN_LABELS,
    alpha: float = DEFAULT_ALPHA,
    adapter_alpha: float = DEFAULT_ADAPTER_ALPHA,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    encoder: MiniLMEncoder | None = None,
    features: npt.NDArray[np.float64] | None = None,
) -> LearnResult:
    """Fit the learned judge on ``data`` and cross-validate it (``folds`` ≥ 2; 0 or 1: no
    validation). ``features``: precomputed :func:`pair_features` of ``data.texts``."""
    if features is None:
        features = pair_features(list(data.texts), encoder=encoder)
    topics = [q for q, _ in data.pairs]
    queries = [q for q, _ in data.texts]
    common: dict[str, Any] = {"alpha": alpha, "adapter_alpha": adapter_alpha}
    model = fit_model(
        features,
        data.grades,
        topics,
        queries,
        per_topic=per_topic,
        min_labels=min_labels,
        training_sha256=data.sha256,
        **common,
    )
    validations: list[Validation] = []
    if folds >= 2:
        chosen = f"with {len(model.adapters)} topic adapters" if model.adapters else "pooled"
        variants = [(chosen, per_topic)]
        if per_topic and model.adapters:
            variants.append(("the pooled model alone", False))
        for what, topic_wise in variants:
            predicted = cross_validate(
                features,
                data,
                folds=folds,
                seed=seed,
                per_topic=topic_wise,
                min_labels=min_labels,
                **common,
            )
            validations.append(_validation(what, data, predicted, folds, resamples, seed))
    return LearnResult(model, validations)


def write_held_out(result: LearnResult, path: str | os.PathLike[str]) -> None:
    """Write the held-out grades of the first validation as TREC qrels (atomically), with a
    provenance sidecar naming the fitted judge (so ``ragmeter agreement HUMAN HELD_OUT
    --save-calibration`` records a calibration that ``check --calibration`` applies to the
    labels of ``judge relevance --learned``); the note says they are held-out grades."""
    from dataclasses import replace

    from ragmeter.core.provenance import LabelProvenance
    from ragmeter.io.provenance import write_provenance
    from ragmeter.judges.api import write_qrels
    from ragmeter.judges.learned import LearnedJudge

    if not result.validations:
        raise ValueError("no held-out grades: the judge was fitted without validation")
    v = result.validations[0]
    labels: dict[str, dict[str, int]] = {}
    for (q, d), grade in v.predictions.items():
        labels.setdefault(q, {})[d] = grade
    write_qrels(labels, path)
    note = f"held-out grades of {v.folds}-fold cross-validation within topics"
    source = replace(LearnedJudge(result.model).label_source, note=note)
    write_provenance(path, LabelProvenance.single(source, "learned"))


def read_training_set(
    labels: Mapping[str, Mapping[str, int]],
    queries: Any,
    corpus: Any,
    *,
    source: str,
) -> TrainingSet:
    """:func:`~ragmeter.judges.learned.training_set` of texts given as mappings or as the
    readers' corpus objects."""
    from ragmeter.judges.api import _texts
    from ragmeter.judges.learned import training_set

    return training_set(labels, _texts(queries), _texts(corpus), source=source)
