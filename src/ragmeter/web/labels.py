"""The label database of the web app: append-only label events in SQLite (WAL).

Every label a person makes is one row of ``events``, committed before the request returns,
so a closed tab, a killed server or a power cut after the reply loses nothing
(``synchronous=FULL``). Nothing is ever updated or deleted:

* ``grade`` — a graded relevance label 1–5 of (query, passage);
* ``rating`` — a rating 0–5 of how well a passage answers sub-question ``question`` (1-based)
  of a query;
* ``nugget`` — how far a text supports nugget ``question`` (1-based) of a query: 0 not,
  1 partial, 2 full support (TREC RAG's assignment); the text is a passage (its doc id) or the
  answer of a run (``answer:RUN``);
* ``undo`` — takes back the event named in ``undoes``.

Evidence **spans** (characters ``[start, end)`` of a passage a person selected, with a grade)
go to their own append-only table ``spans``; a row with ``removes`` set takes back the span it
names. They are exported as span labels (:mod:`ragmeter.io.spans`).

An annotator's *current* label of an item is their latest event for it that was not undone;
undo takes back the annotator's latest label event not yet undone (so repeated undos walk
back through their history). Several annotators label independently; :func:`aggregate`
combines their current labels with a documented rule.

Only the standard library is used (``sqlite3``); the module does not import the web stack.
"""

from __future__ import annotations

import queue
import secrets
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

LabelKind = Literal["grade", "rating", "nugget"]
#: how the current labels of several annotators become one label per item
AggregationRule = Literal["latest", "majority"]

GRADE_RANGE = (1, 5)
RATING_RANGE = (0, 5)
NUGGET_RANGE = (0, 2)
#: the kinds whose label names a numbered item of the query (a sub-question, a nugget)
NUMBERED: frozenset[str] = frozenset({"rating", "nugget"})
#: 2: the ``nugget`` kind (a version-1 file is migrated when opened)
SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    annotator TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('grade', 'rating', 'nugget', 'undo')),
    query_id TEXT,
    doc_id TEXT,
    question INTEGER,
    value INTEGER,
    undoes INTEGER REFERENCES events (id)
);
CREATE INDEX IF NOT EXISTS events_annotator ON events (annotator, kind, id);
CREATE UNIQUE INDEX IF NOT EXISTS events_undone ON events (undoes) WHERE undoes IS NOT NULL;
CREATE TABLE IF NOT EXISTS spans (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    annotator TEXT NOT NULL,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    start INTEGER NOT NULL,
    stop INTEGER NOT NULL,
    grade INTEGER NOT NULL,
    removes INTEGER REFERENCES spans (id)
);
CREATE INDEX IF NOT EXISTS spans_item ON spans (annotator, query_id, doc_id);
CREATE INDEX IF NOT EXISTS spans_removed ON spans (removes) WHERE removes IS NOT NULL;
"""

#: a label event that no ``undo`` event takes back
_LIVE = "kind = ? AND NOT EXISTS (SELECT 1 FROM events u WHERE u.undoes = events.id)"

#: (query id, doc id, sub-question or nugget number, or 0 for a grade)
ItemKey = tuple[str, str, int]
#: what a take-back returns: the span or label event taken back
_Taken = TypeVar("_Taken")


@dataclass(frozen=True)
class SpanRow:
    """One evidence span a person selected: characters ``[start, end)`` of a passage."""

    id: int
    at: str
    annotator: str
    query_id: str
    doc_id: str
    start: int
    end: int
    grade: int


@dataclass(frozen=True)
class LabelEvent:
    """One row of the event log."""

    id: int
    at: str
    annotator: str
    kind: str
    query_id: str | None
    doc_id: str | None
    question: int | None
    value: int | None
    undoes: int | None
    undone: bool = False

    @property
    def key(self) -> ItemKey:
        return (self.query_id or "", self.doc_id or "", self.question or 0)


def value_range(kind: LabelKind) -> tuple[int, int]:
    """Inclusive range of the values of a label kind."""
    return {"grade": GRADE_RANGE, "rating": RATING_RANGE, "nugget": NUGGET_RANGE}[kind]


def _migrate(cur: sqlite3.Cursor) -> None:
    """Bring a version-1 file (no ``nugget`` kind in the CHECK) to the current schema: the
    events are copied, ids and all, into a table with the new CHECK."""
    row = cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None or int(row[0]) >= SCHEMA_VERSION:
        return
    table = cur.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'"
    ).fetchone()
    if table is not None and "'nugget'" not in str(table[0]):
        new = _SCHEMA.split("CREATE TABLE IF NOT EXISTS events (", 1)[1].split(");", 1)[0]
        cur.execute(f"CREATE TABLE events_v2 ({new})")
        cur.execute("INSERT INTO events_v2 SELECT * FROM events")
        cur.execute("DROP TABLE events")
        cur.execute("ALTER TABLE events_v2 RENAME TO events")
        for statement in _SCHEMA.split(";"):
            if "CREATE" in statement and "INDEX" in statement:
                cur.execute(statement)
    cur.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


class LabelDB:
    """The label database file (created on first use).

    Writes go through one writer thread with its own connection, which commits whatever
    labels are waiting in one transaction (group commit): a label is acknowledged only after
    the transaction holding it is committed (``synchronous=FULL``), but a crowd of annotators
    shares one disk flush instead of queueing for one each. Reads use a second connection
    (WAL: they never wait for the writer). Each annotator's current labels are kept in memory
    once read and updated as their labels commit, so that a page or a progress count does not
    scan the event log; the server is the only writer of its file.
    """

    #: the most labels committed in one transaction
    BATCH = 512

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = self._connect()
        self._conn.executescript(_SCHEMA)
        self._conn.execute("PRAGMA foreign_keys=OFF")  # the migration re-creates events
        self._run_in_transaction(self._conn, _migrate)
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._run_in_transaction(
            self._conn,
            lambda cur: (
                cur.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                ),
                # the CSRF signing key lives with the labels, so that open pages keep working
                # across server restarts
                cur.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('secret', ?)",
                    (secrets.token_hex(32),),
                ),
            ),
        )
        self._lock = threading.Lock()  # the reading connection
        self._read = self._connect()
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._writer_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._current: dict[tuple[str, str], dict[ItemKey, int]] = {}
        self._annotators: list[str] | None = None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @staticmethod
    def _run_in_transaction(conn: sqlite3.Connection, work: Callable[[sqlite3.Cursor], Any]) -> Any:
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            result = work(cur)
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")
        return result

    def close(self) -> None:
        with self._writer_lock:
            if self._writer is not None:
                self._jobs.put(None)
                self._writer.join()
                self._writer = None
        with self._lock:
            self._read.close()
        self._conn.close()

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._read.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    # -- writing ------------------------------------------------------------------------
    def _submit(self, job: _Job) -> Future[Any]:
        with self._writer_lock:
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_loop, name="ragmeter-labels", daemon=True
                )
                self._writer.start()
            self._jobs.put(job)
        return job.future

    def _write_loop(self) -> None:
        """Commit the waiting jobs in batches until :meth:`close`."""
        while True:
            first = self._jobs.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while len(batch) < self.BATCH:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    stop = True
                    break
                batch.append(job)
            self._commit(batch)
            if stop:
                return

    def _commit(self, batch: list[_Job]) -> None:
        """One transaction for ``batch``; a job that fails is undone alone (savepoint)."""
        results: list[tuple[_Job, Any, BaseException | None]] = []

        def work(cur: sqlite3.Cursor) -> None:
            for job in batch:
                cur.execute("SAVEPOINT job")
                try:
                    results.append((job, job.work(cur), None))
                except Exception as exc:  # this job's failure is its caller's to see
                    cur.execute("ROLLBACK TO job")
                    results.append((job, None, exc))
                cur.execute("RELEASE job")

        try:
            self._run_in_transaction(self._conn, work)
        except Exception as exc:  # nothing of the batch is stored: every caller hears it
            for job in batch:
                job.future.set_exception(exc)
            return
        for job, result, error in results:
            if error is None:
                self._remember(result)
                job.future.set_result(result)
            else:
                job.future.set_exception(error)

    def _remember(self, event: LabelEvent | None) -> None:
        """Bring the cached current labels up to a committed event."""
        if not isinstance(event, LabelEvent):  # nothing cached of spans
            return
        with self._cache_lock:
            if self._annotators is not None and event.annotator not in self._annotators:
                self._annotators.append(event.annotator)
            key = (event.kind, event.annotator)
            if event.undone:  # an undo: the item's label is an earlier one; read it again
                self._current.pop(key, None)
            elif key in self._current:
                self._current[key][event.key] = int(event.value or 0)

    def submit_record(
        self,
        annotator: str,
        kind: LabelKind,
        query_id: str,
        doc_id: str,
        value: int,
        *,
        question: int | None = None,
    ) -> Future[LabelEvent]:
        """Queue one label; the future resolves once it is committed."""
        low, high = value_range(kind)
        if not low <= value <= high:
            raise ValueError(f"{kind} {value} is outside {low}..{high}")
        if (kind in NUMBERED) != (question is not None):
            raise ValueError(
                "a rating names its sub-question and a nugget label its nugget; a grade neither"
            )
        at = _now()

        def work(cur: sqlite3.Cursor) -> LabelEvent:
            values = (at, annotator, kind, query_id, doc_id, question, value)
            event_id = _insert(cur, "events", _EVENT_COLUMNS, values)
            return LabelEvent(event_id, *values, None)

        return self._submit(_Job(work))

    def record(
        self,
        annotator: str,
        kind: LabelKind,
        query_id: str,
        doc_id: str,
        value: int,
        *,
        question: int | None = None,
    ) -> LabelEvent:
        """Append (and commit) one label; the caller has validated ids and ``value``."""
        future = self.submit_record(annotator, kind, query_id, doc_id, value, question=question)
        return future.result()

    def submit_span(
        self, annotator: str, query_id: str, doc_id: str, start: int, end: int, grade: int
    ) -> Future[SpanRow]:
        """Queue one evidence span (the caller has checked the offsets against the text)."""
        if not 0 <= start < end or not GRADE_RANGE[0] <= grade <= GRADE_RANGE[1]:
            raise ValueError(f"span [{start}, {end}) grade {grade}: expected 0 ≤ start < end")
        at = _now()

        def work(cur: sqlite3.Cursor) -> SpanRow:
            values = (at, annotator, query_id, doc_id, start, end, grade)
            return SpanRow(_insert(cur, "spans", _SPAN_COLUMNS, values), *values)

        return self._submit(_Job(work))

    def _submit_take_back(
        self,
        find: str,
        args: tuple[object, ...],
        take_back: Callable[[sqlite3.Cursor, sqlite3.Row], _Taken],
    ) -> Future[_Taken | None]:
        """Queue taking back a live row of the append-only log: the row ``find`` selects
        (with ``args``); ``take_back`` appends the row that takes it back and returns what
        was taken back. Resolves to that, or ``None`` when ``find`` selects nothing."""

        def work(cur: sqlite3.Cursor) -> _Taken | None:
            row = cur.execute(find, args).fetchone()
            return None if row is None else take_back(cur, row)

        return self._submit(_Job(work))

    def submit_span_removal(self, annotator: str, span_id: int) -> Future[SpanRow | None]:
        """Queue taking back the annotator's span ``span_id``; resolves to it, or ``None``
        when the annotator has no such live span."""

        def remove(cur: sqlite3.Cursor, row: sqlite3.Row) -> SpanRow:
            removal = (_now(), annotator, row["query_id"], row["doc_id"], 0, 0, 0, span_id)
            _insert(cur, "spans", (*_SPAN_COLUMNS, "removes"), removal)
            return _span(row)

        find = f"SELECT * FROM spans WHERE id = ? AND annotator = ? AND {_LIVE_SPAN}"
        return self._submit_take_back(find, (span_id, annotator), remove)

    def spans(
        self,
        annotator: str | None = None,
        *,
        query_id: str | None = None,
        doc_id: str | None = None,
    ) -> list[SpanRow]:
        """The live spans (not taken back), of one annotator or of all, of one query (and
        passage) or of all, in the order made."""
        where = f"removes IS NULL AND {_LIVE_SPAN}"
        args: list[str] = []
        for column, value in (("annotator", annotator), ("query_id", query_id), ("doc_id", doc_id)):
            if value is not None:
                where += f" AND {column} = ?"
                args.append(value)
        with self._lock:
            rows = self._read.execute(f"SELECT * FROM spans WHERE {where} ORDER BY id", args)
            return [_span(r) for r in rows.fetchall()]

    def submit_undo(self, annotator: str, kind: LabelKind) -> Future[LabelEvent | None]:
        """Queue an :meth:`undo`; the future resolves once it is committed."""

        def undo(cur: sqlite3.Cursor, row: sqlite3.Row) -> LabelEvent:
            values = (_now(), annotator, "undo", row["id"])
            _insert(cur, "events", ("at", "annotator", "kind", "undoes"), values)
            return _event(row, undone=True)

        find = f"SELECT * FROM events WHERE annotator = ? AND {_LIVE} ORDER BY id DESC LIMIT 1"
        return self._submit_take_back(find, (annotator, kind), undo)

    def undo(self, annotator: str, kind: LabelKind) -> LabelEvent | None:
        """Take back the annotator's latest ``kind`` label not yet undone; ``None`` when
        there is nothing to undo. Returns the event taken back."""
        return self.submit_undo(annotator, kind).result()

    # -- reading ------------------------------------------------------------------------
    def current(
        self, kind: LabelKind, *, annotator: str | None = None
    ) -> dict[str, dict[ItemKey, int]]:
        """``{annotator: {(query, doc, question): value}}``: each annotator's current labels."""
        if annotator is not None:
            with self._cache_lock:  # held while reading, so no commit is applied twice
                mine = self._current.get((kind, annotator))
                if mine is None:
                    mine = self._query_current(kind, annotator).get(annotator, {})
                    self._current[(kind, annotator)] = mine
                return {annotator: dict(mine)} if mine else {}
        return self._query_current(kind, None)

    def _query_current(
        self, kind: LabelKind, annotator: str | None
    ) -> dict[str, dict[ItemKey, int]]:
        sql = f"SELECT annotator, query_id, doc_id, question, value FROM events WHERE {_LIVE}"
        params: list[object] = [kind]
        if annotator is not None:
            sql += " AND annotator = ?"
            params.append(annotator)
        sql += " ORDER BY id"
        out: dict[str, dict[ItemKey, int]] = {}
        with self._lock:
            rows = self._read.execute(sql, params).fetchall()
        for r in rows:  # later events overwrite earlier ones
            key = (r["query_id"], r["doc_id"], r["question"] or 0)
            out.setdefault(r["annotator"], {})[key] = int(r["value"])
        return out

    def latest_times(self, kind: LabelKind) -> dict[tuple[str, ItemKey], int]:
        """Event id of each annotator's current label (a clock for the ``latest`` rule)."""
        sql = (
            f"SELECT id, annotator, query_id, doc_id, question FROM events WHERE {_LIVE} "
            "ORDER BY id"
        )
        with self._lock:
            rows = self._read.execute(sql, (kind,)).fetchall()
        return {
            (r["annotator"], (r["query_id"], r["doc_id"], r["question"] or 0)): int(r["id"])
            for r in rows
        }

    def annotators(self) -> list[str]:
        """Everyone who has made a label, in order of their first one."""
        with self._cache_lock:
            if self._annotators is None:
                with self._lock:
                    rows = self._read.execute(
                        "SELECT annotator, MIN(id) AS first FROM events GROUP BY annotator "
                        "ORDER BY first"
                    ).fetchall()
                self._annotators = [str(r["annotator"]) for r in rows]
            return list(self._annotators)

    def history(
        self, *, query_id: str | None = None, doc_id: str | None = None, limit: int = 200
    ) -> list[LabelEvent]:
        """The latest events, newest first (optionally of one query / passage), each
        flagged ``undone`` when an undo took it back."""
        sql = (
            "SELECT e.*, EXISTS (SELECT 1 FROM events u WHERE u.undoes = e.id) AS undone "
            "FROM events e"
        )
        where: list[str] = []
        params: list[object] = []
        if query_id is not None:
            where.append(
                "(e.query_id = ? OR e.undoes IN (SELECT id FROM events WHERE query_id = ?))"
            )
            params += [query_id, query_id]
        if doc_id is not None:
            where.append("(e.doc_id = ? OR e.undoes IN (SELECT id FROM events WHERE doc_id = ?))")
            params += [doc_id, doc_id]
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY e.id DESC LIMIT ?"
        params.append(limit)
        with self._lock:
            rows = self._read.execute(sql, params).fetchall()
        return [_event(r, undone=bool(r["undone"])) for r in rows]


@dataclass
class _Job:
    """A unit of work for the writer thread and the future its caller waits on."""

    work: Callable[[sqlite3.Cursor], Any]
    future: Future[Any] = field(default_factory=Future)


def aggregate(
    labels: Mapping[str, Mapping[ItemKey, int]],
    rule: AggregationRule,
    *,
    clock: Mapping[tuple[str, ItemKey], int] | None = None,
) -> dict[ItemKey, int]:
    """One label per item from several annotators' current labels.

    * ``latest``: the most recent current label of anyone (``clock`` gives each label's
      event id; :meth:`LabelDB.latest_times`).
    * ``majority``: the most frequent value among the annotators; a tie goes to the *lower*
      of the tied values (the conservative choice for relevance).

    >>> aggregate({"ann": {("q", "d", 0): 4}, "bob": {("q", "d", 0): 2}}, "majority")
    {('q', 'd', 0): 2}
    """
    if rule == "latest":
        if clock is None:
            raise ValueError("the 'latest' rule needs the labels' event clock")
        best: dict[ItemKey, tuple[int, int]] = {}
        for annotator, items in labels.items():
            for key, value in items.items():
                t = clock[(annotator, key)]
                if key not in best or t > best[key][0]:
                    best[key] = (t, value)
        return {key: value for key, (_, value) in best.items()}
    if rule == "majority":
        votes: dict[ItemKey, Counter[int]] = {}
        for items in labels.values():
            for key, value in items.items():
                votes.setdefault(key, Counter())[value] += 1
        return {key: min(c, key=lambda v: (-c[v], v)) for key, c in votes.items()}
    raise ValueError(f"unknown aggregation rule {rule!r}; expected 'latest' or 'majority'")


#: a span no later row takes back
_LIVE_SPAN = "NOT EXISTS (SELECT 1 FROM spans r WHERE r.removes = spans.id)"


def _span(row: sqlite3.Row) -> SpanRow:
    return SpanRow(
        int(row["id"]),
        str(row["at"]),
        str(row["annotator"]),
        str(row["query_id"]),
        str(row["doc_id"]),
        int(row["start"]),
        int(row["stop"]),
        int(row["grade"]),
    )


#: the columns of a label event and of a span, in the order of their dataclasses' fields
_EVENT_COLUMNS = ("at", "annotator", "kind", "query_id", "doc_id", "question", "value")
_SPAN_COLUMNS = ("at", "annotator", "query_id", "doc_id", "start", "stop", "grade")


def _insert(
    cur: sqlite3.Cursor, table: str, columns: Sequence[str], values: Sequence[object]
) -> int:
    """Append one row to ``table`` (``values`` of ``columns``, names of ours, never a
    caller's); the new row's id."""
    marks = ", ".join("?" * len(values))
    cur.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", values)
    return int(cur.lastrowid or 0)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _event(row: sqlite3.Row, *, undone: bool) -> LabelEvent:
    return LabelEvent(
        id=int(row["id"]),
        at=str(row["at"]),
        annotator=str(row["annotator"]),
        kind=str(row["kind"]),
        query_id=row["query_id"],
        doc_id=row["doc_id"],
        question=row["question"],
        value=row["value"],
        undoes=row["undoes"],
        undone=undone,
    )


def items_of(labels: Mapping[ItemKey, int], query_ids: Iterable[str]) -> dict[str, int]:
    """Number of labelled items per query (progress)."""
    counts = Counter(key[0] for key in labels)
    return {q: counts.get(q, 0) for q in query_ids}
