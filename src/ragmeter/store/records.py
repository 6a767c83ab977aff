"""What the store hands back: plain records, independent of the database library."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.evaluation.results import Evaluation


@dataclass(frozen=True)
class RunRecord:
    """One stored run: its name, the hash of its input and its means.

    Attributes:
        name: the run's name when it was evaluated.
        content_hash: ``sha256:<hex>`` of the run file (or of its canonical content), if known.
        means: ``{measure: mean}`` as ``evaluate`` reported it (``None`` = NA).
        n_queries: evaluated queries.
    """

    name: str
    content_hash: str | None
    means: dict[str, float | None]
    n_queries: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "content_hash": self.content_hash,
            "n_queries": self.n_queries,
            "means": dict(self.means),
        }


@dataclass(frozen=True)
class EvaluationRecord:
    """The summary of one stored evaluation (what ``ragmeter history`` lists).

    Attributes:
        id: the store's number for it (increasing with time of saving).
        name: the user's label (``--name "hybrid wk47"``), or ``None``.
        created_at: when it was saved, timezone-aware UTC.
        command: what produced it: ``evaluate``, ``compare``, ``demo`` or ``api``.
        git_commit: ``HEAD`` of the working directory's repository, if there was one.
        git_dirty: whether tracked files differed from that commit (``None``: no repository).
        qrels_hash: ``sha256:<hex>`` of the relevance judgments, if known.
        parameters: the settings (measures, options, cutoffs, input paths...), JSON values.
        measures: the evaluated measures, in order.
        runs: the runs, in order.
        ragmeter_version: the version that saved it.
        warnings: the evaluation's warnings.
        labels: what the labels its numbers were computed on are (the ``to_json()`` of
            :class:`ragmeter.analysis.calibration.LabelsDescription`); ``None``: not
            described (saved without a qrels file, or by an older ragmeter).
    """

    id: int
    name: str | None
    created_at: datetime
    command: str
    git_commit: str | None
    git_dirty: bool | None
    qrels_hash: str | None
    parameters: dict[str, Any]
    measures: tuple[str, ...]
    runs: tuple[RunRecord, ...]
    ragmeter_version: str
    warnings: tuple[str, ...] = field(default=())
    labels: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        """``#id`` followed by the name when there is one: ``#12 hybrid wk47``."""
        return f"#{self.id} {self.name}" if self.name else f"#{self.id}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (ISO-8601 UTC time; NA means are ``None``)."""
        return {
            "id": self.id,
            "name": self.name,
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "command": self.command,
            "git_commit": self.git_commit,
            "git_dirty": self.git_dirty,
            "qrels_hash": self.qrels_hash,
            "parameters": self.parameters,
            "measures": list(self.measures),
            "runs": [r.to_dict() for r in self.runs],
            "ragmeter_version": self.ragmeter_version,
            "warnings": list(self.warnings),
            "labels": self.labels,
        }


@dataclass(frozen=True)
class StoredEvaluation:
    """A stored evaluation in full: its record and the per-query values as an Evaluation."""

    record: EvaluationRecord
    evaluation: Evaluation

    @property
    def id(self) -> int:
        return self.record.id

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        out = self.record.to_dict()
        if per_query:
            out["per_query"] = {r.name: r.per_query() for r in self.evaluation.runs}
        return out
