"""Saving a command's evaluation in the store, with the hashes of the files it read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.store import SavedEvaluation


def input_files(**paths: Path | Sequence[Path] | None) -> dict[str, Any]:
    """``{role: {"path": ..., "sha256": ...}}`` (a list for several files) of the inputs
    given, for the saved parameters; roles without a file are left out."""
    from ragmeter.io.irds import PREFIX, is_irds
    from ragmeter.store import file_sha256

    def describe(path: Path) -> dict[str, str]:
        if is_irds(path):  # a dataset ir_datasets keeps: its id names it, no file to hash
            return {"path": str(path), "ir_datasets": str(path)[len(PREFIX) :]}
        from ragmeter.io.partitions import Partitions, is_partitioned

        described = {"path": str(path), "sha256": file_sha256(path)}
        if is_partitioned(path):  # the hash of its list of partitions, and how many
            described["partitions"] = str(len(Partitions.find(path)))
        return described

    out: dict[str, Any] = {}
    for role, value in paths.items():
        if value is None:
            continue
        if isinstance(value, Path):
            out[role] = describe(value)
        elif value:
            out[role] = [describe(p) for p in value]
    return out


def save_files_evaluation(
    evaluation: Evaluation,
    *,
    store: str | None,
    name: str | None,
    command: str,
    parameters: Mapping[str, Any],
    qrels: Path | None,
    runs: Sequence[Path] | None,
) -> SavedEvaluation:
    """Save the evaluation of files; the run files are hashed only when there is one per run
    of the evaluation (a samples file may hold several runs)."""
    from ragmeter.store import save_evaluation

    if runs is not None and len(runs) != len(evaluation.runs):
        runs = None
    return save_evaluation(
        evaluation,
        url=store,
        name=name,
        command=command,
        parameters=parameters,
        qrels=qrels,
        runs=runs,
    )
