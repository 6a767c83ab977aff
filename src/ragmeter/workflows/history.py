"""Comparing saved evaluations: what ``ragmeter history compare`` does between parsing and
printing ("this week's hybrid vs last week's", on the queries both define).

A REF is an id (``12`` or ``#12``) or a name (the latest evaluation saved with that name);
``REF:RUN`` picks a run of an evaluation that holds several.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragmeter.errors import StoreError
from ragmeter.workflows.compare import CompareSettings

if TYPE_CHECKING:
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.stats.comparison import Comparison
    from ragmeter.store import StoredEvaluation
    from ragmeter.store.sql import Store

#: saved settings that change the values; history compare warns when two evaluations differ
COMPARED_SETTINGS = (
    "missing",
    "rel_level",
    "depth",
    "default_k",
    "pool_depth",
    "grade_map",
    "context_k",
    "tau",
    "tokenizer",
)


def changed_settings(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``key old → new`` of each of :data:`COMPARED_SETTINGS` that both saved and that differ."""
    return [
        f"{key} {old[key]!r} → {new[key]!r}"
        for key in COMPARED_SETTINGS
        if key in old and key in new and old[key] != new[key]
    ]


def compare_saved(
    store: Store,
    baseline: str,
    candidate: str,
    *,
    run: str | None = None,
    measures: Sequence[str] | None = None,
    settings: CompareSettings | None = None,
) -> Comparison:
    """Compare a run of two saved evaluations (REF or REF:RUN each) on the queries both
    define; what differs between the two evaluations is in the comparison's warnings."""
    from ragmeter.stats.comparison import compare

    base_stored, base_run = pick(store, baseline, run)
    new_stored, new_run = pick(store, candidate, run)
    pair, shared, notes = paired(base_stored, base_run, new_stored, new_run, measures)
    options = (settings or CompareSettings()).options()
    comparison = compare(pair, baseline=0, measures=shared, **options)
    labels = {"baseline": base_stored.record.labels, "candidate": new_stored.record.labels}
    return replace(comparison, warnings=(*comparison.warnings, *notes), labels=labels)


def saved_label_lines(comparison: Comparison) -> list[str]:
    """What the labels of each side of :func:`compare_saved`'s comparison were, one line per
    fact, each naming its evaluation (``#3 bm25.txt: LLM labels (…): 8 of 8 pairs``)."""
    from ragmeter.analysis.calibration import recorded_label_lines

    sides = comparison.labels or {}
    names = dict(zip(("baseline", "candidate"), comparison.runs, strict=False))
    return [
        f"{names.get(side, side)}: {line}"
        for side in ("baseline", "candidate")
        for line in recorded_label_lines(sides.get(side))
    ]


def pick(store: Store, reference: str, run: str | None) -> tuple[StoredEvaluation, RunResult]:
    """The evaluation and run a REF or REF:RUN names."""
    try:
        evaluation_id = store.resolve(reference)
    except StoreError:
        head, sep, tail = reference.rpartition(":")
        if not sep or not head:
            raise
        evaluation_id, run = store.resolve(head), tail
    stored = store.load_evaluation(evaluation_id)
    runs = stored.evaluation.runs
    if run is not None:
        try:
            return stored, stored.evaluation[run]
        except KeyError:
            names = ", ".join(r.name for r in runs)
            raise StoreError(
                f"evaluation {stored.record.label} has no run {run!r} (runs: {names})"
            ) from None
    if len(runs) != 1:
        names = ", ".join(r.name for r in runs)
        raise StoreError(
            f"evaluation {stored.record.label} holds {len(runs)} runs ({names}); "
            f"choose one with --run NAME or {stored.id}:NAME"
        )
    return stored, runs[0]


def paired(
    base_stored: StoredEvaluation,
    base_run: RunResult,
    new_stored: StoredEvaluation,
    new_run: RunResult,
    measures: Sequence[str] | None,
) -> tuple[Evaluation, list[str], list[str]]:
    """Both runs in one Evaluation (named by their evaluation), the measures both have (or
    those asked for), and notes on what differs between the two evaluations."""
    from ragmeter.evaluation.results import Evaluation

    base_label = f"#{base_stored.id} {base_run.name}"
    new_label = f"#{new_stored.id} {new_run.name}"
    if base_label == new_label:
        raise StoreError(f"both sides are run {base_run.name!r} of #{base_stored.id}")
    base_names = [str(m) for m in base_run.measures]
    new_names = {str(m) for m in new_run.measures}
    shared = [m for m in base_names if m in new_names]
    notes: list[str] = []
    if measures:
        chosen = [base_run.measures[base_run._index(m)] for m in measures]
        for m in chosen:
            new_run._index(m)  # KeyError naming the measure when the later one lacks it
        shared = [str(m) for m in chosen]
    elif not shared:
        raise StoreError(
            f"{base_stored.record.label} and {new_stored.record.label} share no measure"
        )
    else:
        only = sorted(set(base_names) ^ new_names)
        if only:
            notes.append(f"measures in only one evaluation, left out: {', '.join(only)}")
    notes += _differences(base_stored, new_stored)
    pair = Evaluation(
        (replace(base_run, name=base_label), replace(new_run, name=new_label)),
        base_run.measures,
    )
    return pair, shared, notes


def _differences(base: StoredEvaluation, new: StoredEvaluation) -> list[str]:
    """Notes on the qrels and settings that differ between two saved evaluations."""
    notes: list[str] = []
    base_qrels, new_qrels = base.record.qrels_hash, new.record.qrels_hash
    if base_qrels and new_qrels and base_qrels != new_qrels:
        notes.append(
            "the qrels differ between the two evaluations (another sha256): the runs were "
            "judged against different relevance judgments"
        )
    base_labels, new_labels = base.record.labels, new.record.labels
    if base_labels and new_labels and base_labels.get("sources") != new_labels.get("sources"):
        notes.append(
            "the labels were made by others between the two evaluations (their provenance "
            "differs): see the labels lines"
        )
    changed = changed_settings(base.record.parameters, new.record.parameters)
    if changed:
        notes.append("the evaluations used other settings: " + ", ".join(changed))
    return notes
