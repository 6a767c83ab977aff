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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.io.label_queue import QueueEntry

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


__all__ = [
    "QueueDraw",
    "default_threshold",
    "pair_uncertainty",
    "query_uncertainty",
    "sample_queries",
    "several_labels_note",
]
