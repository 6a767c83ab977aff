"""Which queries people should label: ``ragmeter sample`` draws ``n`` queries of a run, by
one of the designs of :mod:`ragmeter.stats.sampling`, and makes the labelling queue
(:mod:`ragmeter.io.label_queue`) with each query's passages (the run's top ``depth``) and its
inclusion probability π_i.

The population is the queries the run is evaluated on against the LLM labels (those of the
LLM qrels; one the run lacks has no passage to label but can still be drawn). Run queries
the LLM qrels do not label are not in it; the command's message counts them.

* ``stratified``: strata are quantiles of the measure (default ``ndcg@10``) under the LLM
  labels — the very evaluation of ``ragmeter evaluate``; a query whose value is NA sorts last.
* ``active``: a query's uncertainty is the mean over its passages of:

  - with several label sets (``label_sets``: each judge's or each sample's own qrels), their
    **disagreement** on the pair: 1 − (votes for the most frequent grade) / (label sets that
    grade it);
  - else the LLM grade's **closeness to the binary threshold** T (relevant ⇔ grade ≥ T):
    2^−(|g − (T − ½)| − ½) — 1 for the two grades either side of the threshold, ½ one step
    further, ¼ the next…; T defaults to the middle of the labels' scale
    (lo + ⌈(hi − lo + 1)/2⌉: 4 on 1–5, 2 on 0–3).

  A pair no label set grades counts as fully uncertain (1). A query without passages has
  uncertainty 0 (only the floor probability).

**The learned judge's least certain pairs** (:func:`least_certain_pairs`, ``ragmeter sample
--strategy active --learned MODEL``) is another kind of design: not a sample of queries but,
for every topic, the ``per_topic`` unlabelled candidate pairs (the runs' top ``depth``,
pooled as ``ragmeter judge relevance --run`` pools them) whose grade the learned judge
(:mod:`ragmeter.judges.learned`) is least sure of — *uncertainty sampling* (Lewis & Gale, "A
sequential algorithm for training text classifiers", SIGIR 1994: ask for the label of the
example whose predicted class is closest to a coin flip). The learned judge cuts a score ŝ at
cut points c_lo|lo+1 … c_hi−1|hi; under any symmetric noise on ŝ (the ordinal probit or
logit models), P(grade > g) is ½ exactly at ŝ = c_g and moves away from ½ as |ŝ − c_g|
grows. So the pair least sure of its grade is the one whose score is nearest a cut:

    margin(pair) = min_g |ŝ − c_g|          (smaller: less sure)

ranked ascending, the same ranking as min_g |P(grade > g) − ½| whatever the noise's scale,
so no probability model has to be assumed or stored. Ties in the margin are broken by a
permutation of the pairs seeded by ``seed`` (deterministic). The pairs are *chosen*, not
drawn: they carry no inclusion probability, their labels are the judge's hardest pairs (its
agreement on them understates its agreement at large), and an estimate that treats them as
a sample is biased — the queue's strategy is ``active-learned``, and the PPI estimates
refuse it (:data:`ragmeter.io.label_queue.CHOSEN`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragmeter.errors import InputError, RagmeterError
from ragmeter.io.label_queue import LEARNED_STRATEGY, QueueEntry

if TYPE_CHECKING:
    import numpy.typing as npt

    from ragmeter.judges.learned import LearnedModel
    from ragmeter.pipeline.embeddings import MiniLMEncoder

Grades = Mapping[str, Mapping[str, int]]


@dataclass(frozen=True)
class QueueDraw:
    """The queue's entries (in population order) and how they were drawn, for the command's
    message."""

    entries: list[QueueEntry]
    population: int
    strategy: str
    uncertainty_from: str | None = None
    #: π_i of every query of the population (drawn or not), in population order
    probabilities: tuple[float, ...] = ()
    #: run queries without LLM labels, left out of the population
    unlabelled: int = 0

    def line(self) -> str:
        pis = self.probabilities or tuple(e.inclusion_probability or 0.0 for e in self.entries)
        text = (
            f"{len(self.entries)} of {self.population} queries drawn ({self.strategy}); "
            f"π from {min(pis):.4g} to {max(pis):.4g} over the {self.population}"
        )
        if self.uncertainty_from:
            text += f"; uncertainty: {self.uncertainty_from}"
        if self.unlabelled:
            text += f"; {self.unlabelled} run queries without LLM labels left out"
        return text


def default_threshold(labels: Grades) -> int:
    """The middle of the labels' scale: lo + ⌈(hi − lo + 1)/2⌉ over the grades ≥ 0."""
    seen = [g for docs in labels.values() for g in docs.values() if g >= 0]
    if not seen:
        return 1
    lo, hi = min(seen), max(seen)
    return lo + math.ceil((hi - lo + 1) / 2)


def pair_uncertainty(grades: Sequence[int | None], threshold: int) -> float:
    """The uncertainty of one pair from its grades (one per label set; ``None``: not graded)."""
    given = [g for g in grades if g is not None and g >= 0]
    if not given:
        return 1.0
    if len(grades) > 1:
        return 1.0 - Counter(given).most_common(1)[0][1] / len(given)
    return float(2.0 ** -(abs(given[0] - (threshold - 0.5)) - 0.5))


def query_uncertainty(
    docs: Mapping[str, Sequence[str]],
    label_sets: Sequence[Grades],
    threshold: int,
) -> dict[str, float]:
    """Per query, the mean pair uncertainty over its passages (0 without passages)."""
    out = {}
    for q, ds in docs.items():
        values = [
            pair_uncertainty([s.get(q, {}).get(d) for s in label_sets], threshold) for d in ds
        ]
        out[q] = sum(values) / len(values) if values else 0.0
    return out


def sample_queries(
    run: Any,
    llm_qrels: Any,
    *,
    n: int,
    strategy: str,
    seed: int = 0,
    measure: str = "ndcg@10",
    depth: int = 10,
    strata: int = 4,
    mix: float = 0.2,
    threshold: int | None = None,
    label_sets: Sequence[Grades] = (),
) -> QueueDraw:
    """Draw ``n`` queries of ``run`` (a :class:`~ragmeter.core.data.Run`) evaluated on
    ``llm_qrels`` (:class:`~ragmeter.core.data.Qrels`) by ``strategy`` (module docstring);
    ``label_sets``: several label sets for the active design's disagreement."""
    from ragmeter.evaluation.api import evaluate
    from ragmeter.stats.sampling import draw

    if depth < 1:
        raise ValueError(f"depth {depth} < 1; expected the passages per query")
    result = evaluate(run, llm_qrels, [measure]).run
    population = [str(q) for q in result.query_ids]
    values = [float(v) for v in result.column(measure)]
    ranked = run.ranked()
    docs = {q: list(ranked.get(q, []))[:depth] for q in population}
    labels = llm_qrels.to_dict()
    uncertainty: dict[str, float] | None = None
    how = None
    if strategy == "active":
        sets = list(label_sets) if len(label_sets) > 1 else [labels]
        t = threshold if threshold is not None else default_threshold(labels)
        uncertainty = query_uncertainty(docs, sets, t)
        how = (
            f"disagreement of {len(sets)} label sets"
            if len(sets) > 1
            else f"closeness of the LLM grade to the threshold {t}"
        )
    design = draw(
        strategy,
        n,
        size=len(population),
        seed=seed,
        values=values,
        strata=strata,
        uncertainty=None if uncertainty is None else [uncertainty[q] for q in population],
        mix=mix,
    )
    common = {"population": len(population), "n": n, "seed": seed, "measure": measure}
    entries = []
    for i in design.chosen:
        q = population[i]
        extra: dict[str, Any] = {**common, "value": None if math.isnan(values[i]) else values[i]}
        if uncertainty is not None:
            extra["uncertainty"] = round(uncertainty[q], 12)
        entries.append(
            QueueEntry(
                q,
                tuple(docs[q]),
                strategy,
                design.probabilities[i],
                None if design.strata is None else design.strata[i],
                extra,
            )
        )
    return QueueDraw(
        entries, len(population), strategy, how, design.probabilities, result.n_unjudged_queries
    )


def several_labels_note(provenance: Any, label_sets: int) -> str | None:
    """A note when the LLM labels' provenance (:class:`~ragmeter.core.provenance.
    LabelProvenance`) says they combine several samples or judges but their own labels were
    not given: the active design then falls back on the grade's closeness to the threshold."""
    if provenance is None or label_sets > 1:
        return None
    several = [s for s in provenance.judges().values() if s.samples > 1 or s.judges]
    if not several:
        return None
    return (
        f"the labels combine several samples or judges ({several[0].describe()}); give each "
        "one's own qrels with --judge-labels to use their disagreement"
    )


# -- the learned judge's least certain pairs --------------------------------------------------


def cut_margins(
    scores: npt.ArrayLike, cuts: Sequence[float], lowest: int
) -> tuple[list[float], list[int]]:
    """Each score's distance to the nearest cut point, ``min_g |ŝ − c_g|`` (the module
    docstring), and the grade g below that cut (the boundary g|g+1; on equal distances the
    lower one). No cut (a one-grade scale): every margin is infinite.

    >>> cut_margins([0.2, 1.25, 2.0], (1.0, 1.5), 1)   # 1.25: as near 1|2 as 2|3
    ([0.8, 0.25, 0.5], [1, 1, 2])
    """
    import numpy as np

    values = np.asarray(scores, dtype=np.float64)
    if not cuts:
        return [math.inf] * values.shape[0], [lowest] * values.shape[0]
    distance = np.abs(values[:, None] - np.asarray(cuts, dtype=np.float64)[None, :])
    nearest = np.argmin(distance, axis=1)  # the first (lowest) cut on ties
    return (
        [float(distance[i, k]) for i, k in enumerate(nearest)],
        [lowest + int(k) for k in nearest],
    )


@dataclass(frozen=True)
class UncertainPair:
    """A candidate pair and how sure the learned judge is of it: its score ŝ, its grade,
    ``margin`` (distance of ŝ to the nearest cut) and ``boundary`` g (that cut is g|g+1)."""

    query_id: str
    doc_id: str
    score: float
    grade: int
    margin: float
    boundary: int


@dataclass(frozen=True)
class PairDraw:
    """The least certain pairs (:func:`least_certain_pairs`): the queue's entries (one per
    topic with a chosen pair, in the runs' topic order), every candidate pair's
    :class:`UncertainPair` and what to tell the user."""

    entries: list[QueueEntry]
    candidates: tuple[UncertainPair, ...]
    per_topic: int
    labelled: int
    notes: tuple[str, ...] = ()

    @property
    def chosen(self) -> int:
        return sum(len(e.docs) for e in self.entries)

    def line(self) -> str:
        topics = len({p.query_id for p in self.candidates})
        return (
            f"{self.chosen} of {len(self.candidates)} unlabelled pairs chosen ({LEARNED_STRATEGY}:"
            f" the learned judge's least certain, at most {self.per_topic} per topic) in "
            f"{len(self.entries)} of {topics} topics; {self.labelled} labelled pairs skipped"
        )


def least_certain_pairs(
    model: LearnedModel,
    runs: Sequence[Any],
    labels: Grades,
    queries: Any,
    corpus: Any,
    *,
    per_topic: int,
    depth: int = 10,
    seed: int = 0,
    labels_source: str = "qrels",
    encoder: MiniLMEncoder | None = None,
) -> PairDraw:
    """For every topic of ``runs`` (:class:`~ragmeter.core.data.Run`), the ``per_topic``
    candidate pairs (their top ``depth``, pooled) without a label in ``labels`` (``{qid:
    {docid: grade}}``, named ``labels_source``; a grade < 0 is no label) whose grade the
    learned ``model`` is least sure of (the module docstring). ``queries``/``corpus``: the
    texts, as mappings or the readers' corpus objects. Raises :class:`InputError` when the
    labels' grades fall outside the model's scale, or a text is missing."""
    from ragmeter.judges.api import pair_items
    from ragmeter.judges.learned import grades_from_cuts, pair_features

    if per_topic < 1:
        raise ValueError(f"per_topic {per_topic} < 1; expected the pairs to ask per topic")
    if depth < 1:
        raise ValueError(f"depth {depth} < 1; expected the passages per query")
    _check_scale(model, labels, labels_source)
    items = pair_items(list(runs), queries, corpus, depth=depth)
    known = {(q, d) for q, docs in labels.items() for d, g in docs.items() if g >= 0}
    todo = [i for i in items if (str(i.ident[0]), str(i.ident[1])) not in known]
    if not todo:
        raise RagmeterError(
            f"every one of the {len(items)} candidate pairs (the runs' top {depth}) is labelled "
            "already: nothing to ask (a larger depth or more runs give more candidates)"
        )
    texts = [(i.inputs["query"], i.inputs["passage"]) for i in todo]
    scores = model.scores(pair_features(texts, encoder=encoder), [q for q, _ in texts])
    margins, boundaries = cut_margins(scores, model.cuts, model.scale[0])
    grades = grades_from_cuts(scores, model.cuts, model.scale[0])  # the judge's own grades
    pairs = tuple(
        UncertainPair(str(i.ident[0]), str(i.ident[1]), float(s), g, m, b)
        for i, s, g, m, b in zip(todo, scores, grades, margins, boundaries, strict=True)
    )
    entries = _entries(pairs, per_topic, seed, depth)
    return PairDraw(entries, pairs, per_topic, len(items) - len(todo), _notes(model, labels))


def _check_scale(model: LearnedModel, labels: Grades, source: str) -> None:
    seen = sorted({int(g) for docs in labels.values() for g in docs.values() if g >= 0})
    lo, hi = model.scale
    off = [g for g in seen if not lo <= g <= hi]
    if off:
        raise InputError(
            f"grades {seen[0]}..{seen[-1]}, but the learned judge was fitted on grades "
            f"{lo}..{hi}: a model of another scale cannot say which of these pairs it is "
            f"unsure of (fit it on these labels with 'ragmeter judge learn')",
            source=source,
            field="grade",
        )


def _notes(model: LearnedModel, labels: Grades) -> tuple[str, ...]:
    """Whether the model was fitted on exactly these labels (the training labels' SHA-256)."""
    import hashlib

    lines = sorted(
        f"{q} {d} {int(g)}\n" for q, docs in labels.items() for d, g in docs.items() if g >= 0
    )
    sha = hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()
    if sha == model.training_sha256:
        return ()
    return (
        f"the learned judge was fitted on {model.training_labels:,} labels, not on these "
        f"{len(lines):,}: refit it ('ragmeter judge learn') to learn from the labels since",
    )


def _entries(
    pairs: Sequence[UncertainPair], per_topic: int, seed: int, depth: int
) -> list[QueueEntry]:
    """Per topic, the ``per_topic`` smallest margins; equal margins in a seeded order."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(pairs))
    tiebreak = {(p.query_id, p.doc_id): int(order[i]) for i, p in enumerate(pairs)}
    topics: dict[str, list[UncertainPair]] = {}
    for p in pairs:
        topics.setdefault(p.query_id, []).append(p)
    entries = []
    for q, candidates in topics.items():
        chosen = sorted(candidates, key=lambda p: (p.margin, tiebreak[(p.query_id, p.doc_id)]))
        chosen = chosen[:per_topic]
        extra: dict[str, Any] = {
            "per_topic": per_topic,
            "depth": depth,
            "seed": seed,
            "candidates": len(candidates),
            "margins": [round(p.margin, 12) for p in chosen],
            "grades": [p.grade for p in chosen],
            "boundaries": [f"{p.boundary}|{p.boundary + 1}" for p in chosen],
        }
        entries.append(
            QueueEntry(q, tuple(p.doc_id for p in chosen), LEARNED_STRATEGY, None, None, extra)
        )
    return entries


__all__ = [
    "PairDraw",
    "QueueDraw",
    "UncertainPair",
    "cut_margins",
    "default_threshold",
    "least_certain_pairs",
    "pair_uncertainty",
    "query_uncertainty",
    "sample_queries",
    "several_labels_note",
]
