"""The judgment cache: SQLite in WAL mode, one row per judgment, committed as it arrives.

The key is ``sha256`` of the canonical JSON of (task, prompt identity, model, request
parameters, inputs) — so a changed prompt, model, temperature/seed or ``n`` never reuses an
old answer, and the same question asked again (another run, a rerun after a crash) is never
sent twice. Each row also records the raw output, parse status, latency, tokens and retries.

Durability: every :meth:`JudgmentCache.put` is its own transaction. In WAL mode with
``synchronous=NORMAL`` a committed row survives the process being killed (``kill -9``, Ctrl-C);
only an operating-system crash can lose the last few commits. Failed requests (status
``error``) are never stored, so a rerun asks them again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ragmeter.io._common import Closing
from ragmeter.judges.types import Judgment

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    prompt TEXT NOT NULL,
    model TEXT NOT NULL,
    params TEXT NOT NULL,
    inputs TEXT NOT NULL,
    value TEXT NOT NULL,
    status TEXT NOT NULL,
    raw TEXT NOT NULL,
    answered_by TEXT NOT NULL,
    latency_s REAL NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    tokens_estimated INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    created_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

_COLUMNS = (
    "value, status, raw, answered_by, latency_s, input_tokens, output_tokens, "
    "tokens_estimated, retries"
)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def judgment_key(
    task: str, prompt: str, model: str, params: Mapping[str, Any], inputs: Mapping[str, Any]
) -> str:
    """sha256 of the canonical JSON ``[task, prompt, model, params, inputs]``."""
    text = canonical([task, prompt, model, dict(params), dict(inputs)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgmentCache(Closing):
    """The cache at ``path`` (created with its folder when missing). ``":memory:"`` for a
    throw-away cache."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.executescript(_SCHEMA)
        self._db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM judgments").fetchone()[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, Judgment]:
        """The cached judgments among ``keys``."""
        out: dict[str, Judgment] = {}
        batch: list[str] = []

        def flush() -> None:
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT key, {_COLUMNS} FROM judgments WHERE key IN ({marks})", batch
            )
            for row in rows:
                out[row[0]] = _judgment(row[1:])
            batch.clear()

        for key in keys:
            batch.append(key)
            if len(batch) >= 500:
                flush()
        if batch:
            flush()
        return out

    def put(
        self,
        key: str,
        *,
        task: str,
        prompt: str,
        model: str,
        params: Mapping[str, Any] | str,
        inputs: Mapping[str, Any] | str,
        judgment: Judgment,
    ) -> None:
        """Store (or replace) one judgment and commit at once. Failed judgments are refused.
        ``params`` and ``inputs`` may be given already as canonical JSON."""
        if judgment.failed:
            raise ValueError("a failed judgment is not cached")
        self._db.execute(
            "INSERT OR REPLACE INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                key,
                task,
                prompt,
                model,
                params if isinstance(params, str) else canonical(dict(params)),
                inputs if isinstance(inputs, str) else canonical(dict(inputs)),
                json.dumps(judgment.value, ensure_ascii=False),
                judgment.status,
                judgment.raw,
                judgment.model or model,
                judgment.latency_s,
                judgment.input_tokens,
                judgment.output_tokens,
                int(judgment.tokens_estimated),
                judgment.retries,
                time.time(),
            ),
        )

    def rows(self, task: str | None = None) -> list[dict[str, Any]]:
        """Every row (of one task) as a dict, oldest first — for audits and exports."""
        cur = self._db.execute(
            "SELECT * FROM judgments"
            + (" WHERE task = ?" if task else "")
            + " ORDER BY created_at, key",
            (task,) if task else (),
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]


def _judgment(row: tuple[Any, ...]) -> Judgment:
    value, status, raw, model, latency, tin, tout, est, retries = row
    return Judgment(
        value=json.loads(value),
        status=status,
        raw=raw,
        model=model,
        latency_s=latency,
        input_tokens=tin,
        output_tokens=tout,
        tokens_estimated=bool(est),
        retries=retries,
    )


__all__ = ["JudgmentCache", "canonical", "judgment_key"]
