"""The history of a gate re-checked on every commit (``ragmeter check --sequential
--history STORE``): what the gate is, and one row per look.

A store holds one such history (tables ``check_history`` and ``check_looks``,
:mod:`ragmeter.store.schema`). Every function takes a connection of a write transaction
(:meth:`ragmeter.store.sql.Store.transaction`), so that reading how many looks there were and
recording the next one happen at once: on SQLite the transaction holds the write lock from its
start, and on PostgreSQL a second check numbering the same look is refused by the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from ragmeter.errors import StoreError
from ragmeter.store import schema


@dataclass(frozen=True)
class GateIdentity:
    """What a history's looks are checks of: the baseline as given and the sha256 of its
    per-query values on the rules' measures, the qrels' sha256, the rules as written, α and
    the evaluation settings."""

    baseline: str
    baseline_sha256: str
    qrels_sha256: str
    rules: tuple[str, ...]
    alpha: float
    settings: Mapping[str, Any] = field(default_factory=dict)

    def differences(self, other: GateIdentity) -> list[str]:
        """What differs from ``other`` (the history's), one phrase each, as ``this → that``."""
        out = []
        if self.baseline_sha256 != other.baseline_sha256:
            out.append(
                f"the baseline's per-query values (it was {other.baseline}, sha256 "
                f"{other.baseline_sha256[:12]}…; now {self.baseline}, "
                f"{self.baseline_sha256[:12]}…)"
            )
        if self.qrels_sha256 != other.qrels_sha256:
            out.append(f"the qrels (sha256 {other.qrels_sha256[:12]}… → {self.qrels_sha256[:12]}…)")
        if sorted(self.rules) != sorted(other.rules):
            out.append(f"the rules ({_listed(other.rules)} → {_listed(self.rules)})")
        if self.alpha != other.alpha:
            out.append(f"--alpha ({other.alpha:g} → {self.alpha:g})")
        changed = [
            f"{k} {other.settings.get(k)!r} → {self.settings.get(k)!r}"
            for k in sorted(set(self.settings) | set(other.settings))
            if self.settings.get(k) != other.settings.get(k)
        ]
        if changed:
            out.append("the settings (" + ", ".join(changed) + ")")
        return out


def _listed(rules: Sequence[str]) -> str:
    return "; ".join(repr(r) for r in rules)


@dataclass(frozen=True)
class LookRow:
    """One recorded look: its number, the run checked (name, sha256, git commit), whether the
    gate failed, and the rules' readings (the JSON of each rule's outcome)."""

    look: int
    run: str
    run_sha256: str
    git_commit: str | None
    failed: bool
    readings: list[dict[str, Any]]
    created_at: datetime | None = None


def read_identity(conn: sa.Connection) -> GateIdentity | None:
    """The gate the store's history belongs to (``None``: no look recorded yet)."""
    t = schema.check_history
    row = conn.execute(sa.select(t).where(t.c.id == 1)).mappings().first()
    if row is None:
        return None
    return GateIdentity(
        baseline=row["baseline"],
        baseline_sha256=row["baseline_sha256"],
        qrels_sha256=row["qrels_sha256"],
        rules=tuple(json.loads(row["rules"])),
        alpha=float(row["alpha"]),
        settings=json.loads(row["settings"]),
    )


def start_history(
    conn: sa.Connection, identity: GateIdentity, baseline_values: Mapping[str, Any]
) -> None:
    """Record the gate of a new history, with the baseline's per-query values (a
    :class:`StoreError` when another check started it meanwhile)."""
    try:
        _insert_identity(conn, identity, baseline_values)
    except sa.exc.IntegrityError:
        raise StoreError(
            "another check started this history at the same time; run the check again"
        ) from None


def _insert_identity(
    conn: sa.Connection, identity: GateIdentity, baseline_values: Mapping[str, Any]
) -> None:
    conn.execute(
        sa.insert(schema.check_history).values(
            id=1,
            baseline=identity.baseline,
            baseline_sha256=identity.baseline_sha256,
            baseline_values=json.dumps(baseline_values, sort_keys=True),
            qrels_sha256=identity.qrels_sha256,
            rules=json.dumps(list(identity.rules)),
            alpha=identity.alpha,
            settings=json.dumps(dict(identity.settings), sort_keys=True, default=str),
            created_at=datetime.now(UTC),
        )
    )


def read_looks(conn: sa.Connection) -> list[LookRow]:
    """Every recorded look, in order."""
    t = schema.check_looks
    rows = conn.execute(sa.select(t).order_by(t.c.look)).mappings()
    return [
        LookRow(
            look=r["look"],
            run=r["run"],
            run_sha256=r["run_sha256"],
            git_commit=r["git_commit"],
            failed=bool(r["failed"]),
            readings=json.loads(r["readings"]),
            created_at=r["created_at"],
        )
        for r in rows
    ]


def add_look(conn: sa.Connection, row: LookRow, run_values: Mapping[str, Any]) -> None:
    """Record a look with the run's per-query values; a :class:`StoreError` when another
    check recorded a look of that number meanwhile (its transaction is then rolled back)."""
    try:
        _insert_look(conn, row, run_values)
    except sa.exc.IntegrityError:
        raise StoreError(
            f"another check recorded look {row.look} of this history at the same time; "
            "run the check again (it becomes the next look)"
        ) from None


def _insert_look(conn: sa.Connection, row: LookRow, run_values: Mapping[str, Any]) -> None:
    conn.execute(
        sa.insert(schema.check_looks).values(
            look=row.look,
            run=row.run,
            run_sha256=row.run_sha256,
            git_commit=row.git_commit,
            failed=row.failed,
            readings=json.dumps(row.readings, allow_nan=False),
            run_values=json.dumps(run_values, sort_keys=True),
            created_at=row.created_at or datetime.now(UTC),
        )
    )


__all__ = ["GateIdentity", "LookRow", "add_look", "read_identity", "read_looks", "start_history"]
