"""The store on SQLAlchemy: SQLite files (embedded default) and PostgreSQL servers.

Every save is one transaction: an evaluation, its runs, query ids and values appear together
or not at all, whatever interrupts the save (an exception, a killed process, a lost
connection). SQLite runs in WAL mode with a busy timeout, and write transactions start with
``BEGIN IMMEDIATE`` so that concurrent writers queue instead of failing half-way; PostgreSQL
serialises schema migrations with an advisory lock.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import sqlalchemy as sa

from ragmeter.errors import MissingExtraError, StoreError
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.io._common import Closing
from ragmeter.measures import Measure
from ragmeter.store import schema
from ragmeter.store.provenance import GitState, git_state
from ragmeter.store.records import EvaluationRecord, RunRecord, StoredEvaluation

#: seconds a SQLite writer waits for another one before giving up
SQLITE_BUSY_TIMEOUT_S = 30.0
#: key of the PostgreSQL advisory lock held while migrating (any constant bigint)
_MIGRATION_LOCK = 0x7261676D65746572  # "ragmeter"
#: rows per INSERT batch of the value cells
_BATCH = 10_000


class Store(Closing):
    """A database of past evaluations. Open with :func:`ragmeter.store.open_store`.

    >>> import ragmeter
    >>> from ragmeter.store import open_store
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> run = ragmeter.Run.from_lists({"q1": ["d1"], "q2": ["d3", "d2"]}, name="bm25")
    >>> with open_store("sqlite://") as store:
    ...     eid = store.save_evaluation(ragmeter.evaluate(run, qrels, ["mrr"]), name="wk47")
    ...     store.load_evaluation(eid).evaluation["bm25"].means()
    {'mrr': 0.75}
    """

    def __init__(self, engine: sa.Engine, *, url: str) -> None:
        self._engine = engine
        self.url = url
        self._migrate()

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        """Release the connections."""
        self._engine.dispose()

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    def schema_version(self) -> int:
        """The applied schema version (0 for an empty database)."""
        with self._engine.connect() as conn:
            return _current_version(conn)

    # -- writing ----------------------------------------------------------------------------
    def save_evaluation(
        self,
        evaluation: Evaluation,
        *,
        name: str | None = None,
        command: str = "api",
        parameters: Mapping[str, Any] | None = None,
        qrels_hash: str | None = None,
        run_hashes: Sequence[str | None] | None = None,
        git: GitState | Literal["auto"] | None = "auto",
        created_at: datetime | None = None,
        labels: Mapping[str, Any] | None = None,
    ) -> int:
        """Store an evaluation with its provenance, in one transaction; returns its id.

        Args:
            evaluation: what :func:`ragmeter.evaluate` returned.
            name: a label to find it again (``"hybrid wk47"``).
            command: what produced it (``evaluate``, ``compare``, ``demo``; default ``api``).
            parameters: the settings (measures, options, cutoffs, input paths), JSON values.
            qrels_hash: ``sha256:<hex>`` of the relevance judgments
                (:func:`~ragmeter.store.provenance.file_sha256` or ``content_sha256``).
            run_hashes: one hash (or ``None``) per run, in the evaluation's order.
            git: the commit to record; ``"auto"`` reads the working directory's, ``None``
                records none.
            created_at: the time to record (default: now); stored in UTC.
            labels: what the labels are (default: the evaluation's ``labels``, see
                :class:`~ragmeter.evaluation.results.Evaluation`).
        """
        from ragmeter import __version__

        if run_hashes is not None and len(run_hashes) != len(evaluation.runs):
            raise ValueError(
                f"{len(run_hashes)} run hashes for {len(evaluation.runs)} runs; give one per run"
            )
        state = git_state() if git == "auto" else git
        labels = labels if labels is not None else evaluation.labels
        when = (created_at or datetime.now(UTC)).astimezone(UTC)
        row = {
            "name": name,
            "created_at": when,
            "command": command,
            "git_commit": state.commit if state is not None else None,
            "git_dirty": state.dirty if state is not None else None,
            "qrels_hash": qrels_hash,
            "parameters": _dumps(dict(parameters or {}), "parameters"),
            "measures": _dumps([str(m) for m in evaluation.measures], "measures"),
            "warnings": _dumps(list(evaluation.warnings), "warnings"),
            "ragmeter_version": __version__,
            "labels": None if labels is None else _dumps(dict(labels), "labels"),
        }
        hashes = list(run_hashes) if run_hashes is not None else [None] * len(evaluation.runs)
        try:
            with self._write() as conn:
                inserted = conn.execute(sa.insert(schema.evaluations).values(row))
                evaluation_id = _primary_key(inserted)
                for position, (run, content_hash) in enumerate(
                    zip(evaluation.runs, hashes, strict=True)
                ):
                    self._insert_run(conn, evaluation_id, position, run, content_hash)
        except sa.exc.DBAPIError as exc:
            # a full disk, the file size limit, a lost server: the transaction is rolled back
            raise StoreError(
                f"cannot save the evaluation to {self.url}: {exc.orig}; nothing was saved "
                "and the store is intact (the save was rolled back)"
            ) from exc
        return evaluation_id

    def _insert_run(
        self,
        conn: sa.Connection,
        evaluation_id: int,
        position: int,
        run: RunResult,
        content_hash: str | None,
    ) -> None:
        """One run's row, query ids and value cells (inside the save's transaction)."""
        inserted = conn.execute(
            sa.insert(schema.runs).values(
                evaluation_id=evaluation_id,
                position=position,
                name=run.name,
                content_hash=content_hash,
                n_queries=len(run.query_ids),
                n_missing=run.n_missing,
                n_skipped=run.n_skipped,
                n_unjudged_queries=run.n_unjudged_queries,
                means=_dumps(_finite_means(run), "means"),
            )
        )
        run_id = _primary_key(inserted)
        query_rows = [(run_id, i, str(q)) for i, q in enumerate(run.query_ids)]
        _bulk_insert(conn, schema.run_queries, query_rows)
        _bulk_insert(conn, schema.query_values, _value_cells(run_id, run.values))

    def delete_evaluation(self, evaluation_id: int) -> None:
        """Remove an evaluation and everything stored with it."""
        self._check_id(evaluation_id)
        with self._write() as conn:
            run_ids = sa.select(schema.runs.c.id).where(
                schema.runs.c.evaluation_id == evaluation_id
            )
            # explicit deletes: SQLite enforces ON DELETE CASCADE only with foreign_keys=ON,
            # which a connection made by another tool may not have set
            conn.execute(
                sa.delete(schema.query_values).where(schema.query_values.c.run_id.in_(run_ids))
            )
            conn.execute(
                sa.delete(schema.run_queries).where(schema.run_queries.c.run_id.in_(run_ids))
            )
            conn.execute(sa.delete(schema.runs).where(schema.runs.c.evaluation_id == evaluation_id))
            done = conn.execute(
                sa.delete(schema.evaluations).where(schema.evaluations.c.id == evaluation_id)
            )
            if done.rowcount == 0:
                raise StoreError(f"no evaluation #{evaluation_id} in {self.url}")

    # -- reading ----------------------------------------------------------------------------
    def list_evaluations(
        self, *, limit: int | None = None, name: str | None = None
    ) -> list[EvaluationRecord]:
        """Stored evaluations, newest first (optionally only those called ``name``)."""
        query = sa.select(schema.evaluations).order_by(schema.evaluations.c.id.desc())
        if name is not None:
            query = query.where(schema.evaluations.c.name == name)
        if limit is not None:
            query = query.limit(limit)
        with self._engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
            ids = [int(r["id"]) for r in rows]
            run_rows = conn.execute(
                sa.select(schema.runs)
                .where(schema.runs.c.evaluation_id.in_(ids))
                .order_by(schema.runs.c.evaluation_id, schema.runs.c.position)
            ).mappings()
            runs_of: dict[int, list[RunRecord]] = {i: [] for i in ids}
            for r in run_rows:
                runs_of[int(r["evaluation_id"])].append(_run_record(r))
        return [_evaluation_record(r, runs_of[int(r["id"])]) for r in rows]

    def _check_id(self, evaluation_id: int) -> None:
        """An id no SQL integer holds (the web app's ``/evaluations/<huge>``) names no
        evaluation: said so, before the database driver overflows on it."""
        if not _is_id(evaluation_id):
            raise StoreError(f"no evaluation #{evaluation_id} in {self.url}")

    def get_record(self, evaluation_id: int) -> EvaluationRecord:
        """The summary of one evaluation."""
        self._check_id(evaluation_id)
        with self._engine.connect() as conn:
            row, run_rows = self._rows(conn, evaluation_id)
        return _evaluation_record(row, [_run_record(r) for r in run_rows])

    def load_evaluation(self, evaluation_id: int) -> StoredEvaluation:
        """One evaluation in full: its record and its per-query values (NA as NaN)."""
        self._check_id(evaluation_id)
        with self._engine.connect() as conn, conn.begin():
            row, run_rows = self._rows(conn, evaluation_id)
            record = _evaluation_record(row, [_run_record(r) for r in run_rows])
            measures = tuple(_parse_measure(m) for m in record.measures)
            results = tuple(_load_run(conn, r, measures) for r in run_rows)
        evaluation = Evaluation(results, measures, record.warnings, record.labels)
        return StoredEvaluation(record=record, evaluation=evaluation)

    def resolve(self, reference: str | int) -> int:
        """The id of ``reference``: an id (``12``, ``#12``) or a name (its latest evaluation)."""
        text = str(reference).strip()
        digits = text.removeprefix("#")
        with self._engine.connect() as conn:
            if digits.isdigit() and _is_id(int(digits)):
                found = conn.execute(
                    sa.select(schema.evaluations.c.id).where(schema.evaluations.c.id == int(digits))
                ).scalar_one_or_none()
                if found is not None:
                    return int(found)
            latest = conn.execute(
                sa.select(sa.func.max(schema.evaluations.c.id)).where(
                    schema.evaluations.c.name == text
                )
            ).scalar_one_or_none()
        if latest is None:
            raise StoreError(f"no evaluation with id or name {text!r} in {self.url}")
        return int(latest)

    def _rows(
        self, conn: sa.Connection, evaluation_id: int
    ) -> tuple[sa.RowMapping, list[sa.RowMapping]]:
        row = (
            conn.execute(
                sa.select(schema.evaluations).where(schema.evaluations.c.id == evaluation_id)
            )
            .mappings()
            .one_or_none()
        )
        if row is None:
            raise StoreError(f"no evaluation #{evaluation_id} in {self.url}")
        run_rows = list(
            conn.execute(
                sa.select(schema.runs)
                .where(schema.runs.c.evaluation_id == evaluation_id)
                .order_by(schema.runs.c.position)
            ).mappings()
        )
        return row, run_rows

    # -- transactions and migrations --------------------------------------------------------
    def connect(self) -> sa.Connection:
        """A connection for reading (close it, e.g. ``with store.connect() as conn``)."""
        return self._engine.connect()

    def transaction(self) -> contextlib.AbstractContextManager[sa.Connection]:
        """A write transaction (see :meth:`_write`), for the store's other tables
        (:mod:`ragmeter.store.monitor`)."""
        return self._write()

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        """A write transaction: committed on success, rolled back on any exception."""
        with (
            self._engine.connect().execution_options(ragmeter_write=True) as conn,
            conn.begin(),
        ):
            yield conn

    def _migrate(self) -> None:
        """Apply the missing migrations, all in one transaction with the rows recording them
        (a failed step leaves the store at its old version)."""
        with self._engine.connect() as conn:
            current = _current_version(conn)
        if current == schema.LATEST_VERSION:
            return
        if current > schema.LATEST_VERSION:
            raise StoreError(_too_new(self.url, current))
        with self._write() as conn:
            if self.dialect == "postgresql":
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_MIGRATION_LOCK)))
            schema.schema_version.create(conn, checkfirst=True)
            # read again under the lock: another process may have migrated meanwhile
            current = _current_version(conn)
            if current > schema.LATEST_VERSION:
                raise StoreError(_too_new(self.url, current))
            for version, step in schema.MIGRATIONS:
                if version > current:
                    step(conn)
                    conn.execute(
                        sa.insert(schema.schema_version).values(
                            version=version, applied_at=datetime.now(UTC)
                        )
                    )


# -- engines --------------------------------------------------------------------------------


def create_engine(url: str) -> sa.Engine:
    """An engine for a store URL (``sqlite:///…``, ``postgresql+psycopg://…``)."""
    parsed = sa.make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    try:
        return sa.create_engine(parsed, pool_pre_ping=True)
    except ImportError as exc:
        backend = parsed.get_backend_name()
        raise MissingExtraError(
            f"a {backend} store",
            package=exc.name or str(exc),
            extra="postgres" if backend == "postgresql" else "store",
        ) from exc


def _journal_wal(cursor: Any) -> None:
    """``PRAGMA journal_mode = WAL``, retried while another connection holds the lock: the
    change needs an exclusive lock and SQLite answers "database is locked" at once instead of
    waiting its busy timeout (several processes opening a new store together)."""
    import sqlite3
    import time

    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(2 * delay, 0.2)


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    if url.database and url.database != ":memory:" and not url.database.startswith("file:"):
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

    @sa.event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # transactions are begun by the "begin" hook below, not by the sqlite3 module,
        # which would otherwise start them late and commit before DDL
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        _journal_wal(cursor)
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        # a writer takes the write lock at once, so it waits (busy timeout) for another
        # writer instead of failing when it upgrades a read lock in the middle of a save
        write = conn.get_execution_options().get("ragmeter_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


# -- rows -----------------------------------------------------------------------------------


def _primary_key(inserted: sa.CursorResult[Any]) -> int:
    key = inserted.inserted_primary_key
    if key is None:  # pragma: no cover - every table here has an integer key
        raise StoreError("the database returned no id for the new row")
    return int(key[0])


def _current_version(conn: sa.Connection) -> int:
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    version = conn.execute(sa.select(sa.func.max(schema.schema_version.c.version))).scalar()
    return int(version or 0)


def _too_new(url: str, version: int) -> str:
    return (
        f"the store {url} has schema version {version}, newer than this ragmeter knows "
        f"({schema.LATEST_VERSION}); upgrade ragmeter to read it"
    )


def _dumps(value: Any, what: str) -> str:
    """Strict JSON (no NaN): paths become strings, numpy scalars plain numbers."""

    def default(obj: Any) -> Any:
        if isinstance(obj, Path):
            return str(obj)
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, tuple | set | frozenset):
            return list(obj)
        raise TypeError(f"{what}: {type(obj).__name__} value {obj!r} is not JSON")

    try:
        return json.dumps(value, default=default, allow_nan=False, sort_keys=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot store the {what}: {exc}") from exc


def _finite_means(run: RunResult) -> dict[str, float | str | None]:
    """Means for strict JSON: NA as ``None``, infinities as ``"Infinity"``/``"-Infinity"``."""
    out: dict[str, float | str | None] = {}
    for name, value in run.means().items():
        if value is None or math.isnan(value):
            out[name] = None
        elif math.isinf(value):
            out[name] = "Infinity" if value > 0 else "-Infinity"
        else:
            out[name] = float(value)
    return out


def _means(text: str) -> dict[str, float | None]:
    """The inverse of :func:`_finite_means`."""
    return {
        name: float(value) if isinstance(value, str) else value
        for name, value in json.loads(text).items()
    }


def _bulk_insert(conn: sa.Connection, table: sa.Table, rows: list[tuple[Any, ...]]) -> None:
    """Insert rows (tuples in the table's column order) in the current transaction.

    The per-query cells are most of a save (runs × queries × measures rows), so they bypass
    SQLAlchemy's per-row processing: ``COPY`` on PostgreSQL (psycopg), the driver's
    ``executemany`` on SQLite; other drivers get SQLAlchemy's insert.
    """
    if not rows:
        return
    names = [c.name for c in table.columns]
    driver: Any = conn.connection.driver_connection
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        quoted = ", ".join(f'"{n}"' for n in names)
        statement = f'COPY "{table.name}" ({quoted}) FROM STDIN'
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
        return
    if conn.dialect.name == "sqlite":
        marks = ", ".join("?" for _ in names)
        quoted = ", ".join(f'"{n}"' for n in names)
        for start in range(0, len(rows), _BATCH):
            conn.exec_driver_sql(
                f'INSERT INTO "{table.name}" ({quoted}) VALUES ({marks})',
                rows[start : start + _BATCH],
            )
        return
    for start in range(0, len(rows), _BATCH):  # pragma: no cover - other drivers
        chunk = rows[start : start + _BATCH]
        conn.execute(sa.insert(table), [dict(zip(names, r, strict=True)) for r in chunk])


def _value_cells(run_id: int, values: np.ndarray) -> list[tuple[Any, ...]]:
    """One ``(run_id, row, measure, value)`` per cell, row-major; NaN (NA) becomes NULL."""
    n_rows, n_measures = values.shape
    rows = np.repeat(np.arange(n_rows), n_measures).tolist()
    measures = np.tile(np.arange(n_measures), n_rows).tolist()
    flat = [None if v != v else v for v in np.ascontiguousarray(values).ravel().tolist()]
    return list(zip([run_id] * len(flat), rows, measures, flat, strict=True))


def _as_utc(value: datetime) -> datetime:
    # SQLite keeps no zone: the stored text is UTC by construction
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _run_record(row: sa.RowMapping) -> RunRecord:
    return RunRecord(
        name=row["name"],
        content_hash=row["content_hash"],
        means=_means(row["means"]),
        n_queries=int(row["n_queries"]),
    )


def _evaluation_record(row: sa.RowMapping, runs: list[RunRecord]) -> EvaluationRecord:
    return EvaluationRecord(
        id=int(row["id"]),
        name=row["name"],
        created_at=_as_utc(row["created_at"]),
        command=row["command"],
        git_commit=row["git_commit"],
        git_dirty=None if row["git_dirty"] is None else bool(row["git_dirty"]),
        qrels_hash=row["qrels_hash"],
        parameters=json.loads(row["parameters"]),
        measures=tuple(json.loads(row["measures"])),
        runs=tuple(runs),
        ragmeter_version=row["ragmeter_version"],
        warnings=tuple(json.loads(row["warnings"])),
        labels=None if row["labels"] is None else json.loads(row["labels"]),
    )


def _parse_measure(name: str) -> Measure:
    """The measure a stored name denotes; an unknown family (saved by a newer ragmeter)
    keeps its name so that its values still load."""
    from ragmeter.errors import MeasureError
    from ragmeter.measures import parse_measure

    try:
        return parse_measure(name)
    except MeasureError:
        return Measure(name)


def _load_run(conn: sa.Connection, row: sa.RowMapping, measures: tuple[Measure, ...]) -> RunResult:
    run_id = int(row["id"])
    query_ids = conn.execute(
        sa.select(schema.run_queries.c.query_id)
        .where(schema.run_queries.c.run_id == run_id)
        .order_by(schema.run_queries.c.row)
    ).scalars()
    ids = np.array(list(query_ids), dtype=object)
    values = np.full((ids.shape[0], len(measures)), np.nan)
    # the cells straight from the driver: most of a load, and plain tuples suffice
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    driver: Any = conn.connection.driver_connection
    cursor = driver.cursor()
    try:
        cursor.execute(
            f'SELECT "row", "measure", "value" FROM query_values WHERE run_id = {mark}', (run_id,)
        )
        cells = cursor.fetchall()
    finally:
        cursor.close()
    if cells:
        # NULL (NA) arrives as None, which a float array holds as NaN
        table = np.array(cells, dtype=np.float64)
        values[table[:, 0].astype(np.intp), table[:, 1].astype(np.intp)] = table[:, 2]
    return RunResult(
        name=row["name"],
        query_ids=ids,
        measures=measures,
        values=values,
        n_missing=int(row["n_missing"]),
        n_skipped=int(row["n_skipped"]),
        n_unjudged_queries=int(row["n_unjudged_queries"]),
    )


#: the largest id a store holds: SQL's 64-bit integers
MAX_ID = 2**63 - 1


def _is_id(value: int) -> bool:
    return 1 <= value <= MAX_ID
