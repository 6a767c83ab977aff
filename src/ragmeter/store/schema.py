"""The store's tables and their numbered migrations.

The schema is versioned by a table ``schema_version`` holding one row per applied migration.
Opening a store applies the missing migrations in order, in one transaction with the rows that
record them (PostgreSQL and SQLite both run DDL in transactions), so a store is always at a
version it has rows for. A store newer than this ragmeter is
refused rather than misread.

Why not Alembic: the store needs only forward steps applied when it is opened, by a library
that must not ship an ``alembic.ini``, an environment script and a versions directory as
package data; a dozen lines here do that, and the tests run every step on SQLite and on
PostgreSQL (an upgrade from version 1, a failing step, concurrent first opens).

Each migration spells out its own DDL (it must keep producing the same tables after later
migrations change them), while :data:`METADATA` describes the latest shape for queries.

Tables (latest):

* ``evaluations``: one row per saved evaluation; ``measures`` is the JSON list of measure
  names whose positions the value cells refer to; ``parameters`` and ``warnings`` are JSON;
  ``labels`` what the labels its numbers were computed on are (JSON, the ``to_json()`` of
  :class:`ragmeter.analysis.calibration.LabelsDescription`; NULL: not described, as in
  evaluations saved before version 4).
* ``runs``: the runs of an evaluation (``position`` order) with their input hash and their
  means (JSON ``{measure: mean}``; NA is ``null``).
* ``run_queries``: the evaluated query ids of a run (``row`` order).
* ``query_values``: one cell per run × query row × measure position; NA is NULL.
* ``monitor_spans``: every span ``ragmeter monitor`` read, per stream (its name) and span
  (trace id, span id: OpenTelemetry span ids are unique only within their trace): stage,
  start (ns since the epoch) and duration (ms; NULL for a span that ends before it starts) —
  the latencies, and what a rerun skips.
* ``monitor_samples``: the sampled retriever spans (stream, trace id, span id): window,
  query id, judge identity (JSON
  of :class:`~ragmeter.core.provenance.LabelSource`), the pairs judged and left unlabelled,
  the span's measure values (JSON ``{measure: value}``; NA is ``null``) and the ids of the
  passages judged (JSON list, rank order).
* ``monitor_windows``: per stream, window length, window start and measure: the sample size,
  mean and interval (recomputed from the samples after each monitor run).
* ``monitor_ppi``: per stream, window length, window start and measure: the
  prediction-powered estimate of ``ragmeter monitor ppi`` (the spans labelled by people and
  not, the LLM-label mean, the estimate, its interval at level ``1 − alpha``, λ), who made
  the human labels and the judge they correct (JSON of
  :class:`~ragmeter.core.provenance.LabelSource`). Replaced by each ``monitor ppi``; a
  window's rows are removed when a monitor run adds samples to it (they no longer describe it).
  ``estimator`` names how λ was chosen (``crossfit``, ``plusplus``; NULL: PPI++, as every
  estimate stored before version 8).
* ``check_history``: the gate a history of ``ragmeter check --sequential`` belongs to (one
  row): the baseline as given and the sha256 of its per-query values on the rules' measures
  (those values as JSON), the qrels' sha256, the rules (JSON list), α and the evaluation
  settings (JSON).
* ``check_looks``: one row per look of that gate (``look`` numbered from 1): the run's name,
  its sha256, the git commit it was checked at (NULL: not in a repository), whether it
  failed, the rules' readings (JSON) and the run's per-query values (JSON
  ``{measure: {query: value}}``; NA is ``null``).

Saves write the cells with ``COPY`` (PostgreSQL) or the driver's ``executemany`` (SQLite).
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

# -- column sets ----------------------------------------------------------------------------
# Each set is frozen at the version that made it: a migration must keep producing the tables it
# produced, so a set is never edited (a later shape is a new set, or a migration that alters the
# table). The migrations and the latest tables (METADATA) are built from the same sets, the
# latest with the columns later migrations added.


def _evaluations_v1() -> list[sa.Column[object]]:
    return [
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("command", sa.Text, nullable=False),
        sa.Column("git_commit", sa.Text, nullable=True),
        sa.Column("git_dirty", sa.Boolean, nullable=True),
        sa.Column("qrels_hash", sa.Text, nullable=True),
        sa.Column("parameters", sa.Text, nullable=False),
        sa.Column("measures", sa.Text, nullable=False),
        sa.Column("warnings", sa.Text, nullable=False),
    ]


def _runs_v1() -> list[sa.Column[object]]:
    return [
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "evaluation_id",
            sa.Integer,
            sa.ForeignKey("evaluations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("content_hash", sa.Text, nullable=True),
        sa.Column("n_queries", sa.Integer, nullable=False),
        sa.Column("n_missing", sa.Integer, nullable=False),
        sa.Column("n_skipped", sa.Integer, nullable=False),
        sa.Column("n_unjudged_queries", sa.Integer, nullable=False),
        sa.Column("means", sa.Text, nullable=False),
    ]


def _run_key_v1(*, foreign_key: bool = True) -> sa.Column[object]:
    """``run_id``, the key naming a run (a foreign key to ``runs`` unless ``foreign_key`` is
    false: the cells lost theirs on PostgreSQL in version 3)."""
    if not foreign_key:
        return sa.Column("run_id", sa.Integer, primary_key=True, autoincrement=False)
    return sa.Column(
        "run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    )


def _run_queries_v1() -> list[sa.Column[object]]:
    return [
        sa.Column("row", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("query_id", sa.Text, nullable=False),
    ]


def _query_values_v1() -> list[sa.Column[object]]:
    return [
        sa.Column("row", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("measure", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("value", sa.Double, nullable=True),
    ]


def _span_fields_v5(*, duration_nullable: bool) -> list[sa.Column[object]]:
    """A span's fields past its key (version 7 let the duration be NULL)."""
    return [
        sa.Column("stage", sa.Text, nullable=False),
        sa.Column("started_ns", sa.BigInteger, nullable=False),
        sa.Column("duration_ms", sa.Double, nullable=duration_nullable),
    ]


def _sample_fields_v5() -> list[sa.Column[object]]:
    """A sample's fields past its key (the key gained the trace id in version 7)."""
    return [
        sa.Column("window_s", sa.Integer, nullable=False),
        sa.Column("window_start", sa.BigInteger, nullable=False),
        sa.Column("query_id", sa.Text, nullable=False),
        sa.Column("judge", sa.Text, nullable=False),
        sa.Column("pairs", sa.Integer, nullable=False),
        sa.Column("unlabelled", sa.Integer, nullable=False),
        sa.Column("measure_values", sa.Text, nullable=False),
        sa.Column("doc_ids", sa.Text, nullable=False),
    ]


def _span_key_v5() -> list[sa.Column[object]]:
    return [
        sa.Column("stream", sa.Text, primary_key=True),
        sa.Column("span_id", sa.Text, primary_key=True),
    ]


def _span_key_v7() -> list[sa.Column[object]]:
    """Span ids are unique only within a trace: the key holds the trace id."""
    return [
        sa.Column("stream", sa.Text, primary_key=True),
        sa.Column("trace_id", sa.Text, primary_key=True),
        sa.Column("span_id", sa.Text, primary_key=True),
    ]


def _window_key_v5() -> list[sa.Column[object]]:
    """A monitor window's key: stream, window length, window start and measure."""
    return [
        sa.Column("stream", sa.Text, primary_key=True),
        sa.Column("window_s", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("window_start", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("measure", sa.Text, primary_key=True),
    ]


def _monitor_windows_v5() -> list[sa.Column[object]]:
    return [
        *_window_key_v5(),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("mean", sa.Double, nullable=True),
        sa.Column("low", sa.Double, nullable=True),
        sa.Column("high", sa.Double, nullable=True),
        sa.Column("judge", sa.Text, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    ]


def _monitor_ppi_v6() -> list[sa.Column[object]]:
    return [
        *_window_key_v5(),
        sa.Column("n_labelled", sa.Integer, nullable=False),
        sa.Column("n_unlabelled", sa.Integer, nullable=False),
        sa.Column("llm_mean", sa.Double, nullable=True),
        sa.Column("estimate", sa.Double, nullable=True),
        sa.Column("low", sa.Double, nullable=True),
        sa.Column("high", sa.Double, nullable=True),
        sa.Column("lam", sa.Double, nullable=True),
        sa.Column("alpha", sa.Double, nullable=False),
        sa.Column("human", sa.Text, nullable=False),
        sa.Column("judge", sa.Text, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    ]


def _check_history_v8() -> list[sa.Column[object]]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("baseline", sa.Text, nullable=False),
        sa.Column("baseline_sha256", sa.Text, nullable=False),
        sa.Column("baseline_values", sa.Text, nullable=False),
        sa.Column("qrels_sha256", sa.Text, nullable=False),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("alpha", sa.Double, nullable=False),
        sa.Column("settings", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    ]


def _check_looks_v8() -> list[sa.Column[object]]:
    return [
        sa.Column("look", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("run", sa.Text, nullable=False),
        sa.Column("run_sha256", sa.Text, nullable=False),
        sa.Column("git_commit", sa.Text, nullable=True),
        sa.Column("failed", sa.Boolean, nullable=False),
        sa.Column("readings", sa.Text, nullable=False),
        sa.Column("run_values", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    ]


# -- the latest tables ----------------------------------------------------------------------

METADATA = sa.MetaData()

schema_version = sa.Table(
    "schema_version",
    METADATA,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)

evaluations = sa.Table(
    "evaluations",
    METADATA,
    *_evaluations_v1(),
    sa.Column("ragmeter_version", sa.Text, nullable=False),  # version 2
    sa.Column("labels", sa.Text, nullable=True),  # version 4
    sqlite_autoincrement=True,
)

runs = sa.Table("runs", METADATA, *_runs_v1(), sqlite_autoincrement=True)

run_queries = sa.Table("run_queries", METADATA, _run_key_v1(), *_run_queries_v1())

# no foreign key here since version 3 on PostgreSQL (SQLite keeps version 1's)
query_values = sa.Table(
    "query_values", METADATA, _run_key_v1(foreign_key=False), *_query_values_v1()
)

monitor_spans = sa.Table(
    "monitor_spans", METADATA, *_span_key_v7(), *_span_fields_v5(duration_nullable=True)
)

monitor_samples = sa.Table("monitor_samples", METADATA, *_span_key_v7(), *_sample_fields_v5())

monitor_windows = sa.Table("monitor_windows", METADATA, *_monitor_windows_v5())

check_history = sa.Table("check_history", METADATA, *_check_history_v8())

check_looks = sa.Table("check_looks", METADATA, *_check_looks_v8())

monitor_ppi = sa.Table(
    "monitor_ppi",
    METADATA,
    *_monitor_ppi_v6(),
    sa.Column("estimator", sa.Text, nullable=True),  # version 8
)


# -- migrations -----------------------------------------------------------------------------


def _v1_tables(conn: sa.Connection) -> None:
    """Version 1: evaluations, their runs, query ids and per-query values."""
    meta = sa.MetaData()
    sa.Table("evaluations", meta, *_evaluations_v1(), sqlite_autoincrement=True)
    sa.Table(
        "runs",
        meta,
        *_runs_v1(),
        sa.UniqueConstraint("evaluation_id", "position", name="uq_runs_position"),
        sqlite_autoincrement=True,
    )
    sa.Table("run_queries", meta, _run_key_v1(), *_run_queries_v1())
    sa.Table("query_values", meta, _run_key_v1(), *_query_values_v1())
    meta.create_all(conn)


def _v2_version_and_name_index(conn: sa.Connection) -> None:
    """Version 2: the ragmeter version that saved each evaluation (``''`` for older rows),
    and an index to find evaluations by name (``ragmeter history compare "hybrid wk47" …``)."""
    conn.execute(
        sa.text("ALTER TABLE evaluations ADD COLUMN ragmeter_version TEXT NOT NULL DEFAULT ''")
    )
    conn.execute(sa.text("CREATE INDEX ix_evaluations_name ON evaluations (name)"))
    conn.execute(sa.text("CREATE INDEX ix_runs_evaluation ON runs (evaluation_id)"))


def _v3_cells_without_foreign_key(conn: sa.Connection) -> None:
    """Version 3: on PostgreSQL, the value cells lose their foreign key to ``runs``.

    PostgreSQL checks a foreign key row by row with a trigger, which made saving 600 000
    cells (10 000 queries × 20 measures × 3 runs) 5× slower than without it (measured with
    COPY). The store deletes a run's cells itself, so nothing relies on the cascade. SQLite
    checks a foreign key with one index look-up, cheap enough to keep.
    """
    if conn.dialect.name != "postgresql":
        return
    for key in sa.inspect(conn).get_foreign_keys("query_values"):
        conn.execute(sa.text(f'ALTER TABLE query_values DROP CONSTRAINT "{key["name"]}"'))


def _v4_labels(conn: sa.Connection) -> None:
    """Version 4: what the labels of each evaluation are (their provenance, counts per source,
    a calibration's figures) as JSON; NULL for the evaluations saved before."""
    conn.execute(sa.text("ALTER TABLE evaluations ADD COLUMN labels TEXT"))


def _v5_monitor(conn: sa.Connection) -> None:
    """Version 5: the tables of ``ragmeter monitor`` (spans read, judged samples, windows)."""
    meta = sa.MetaData()
    sa.Table(
        "monitor_spans",
        meta,
        *_span_key_v5(),
        sa.Column("trace_id", sa.Text, nullable=False),
        *_span_fields_v5(duration_nullable=False),
    )
    sa.Table("monitor_samples", meta, *_span_key_v5(), *_sample_fields_v5())
    sa.Table("monitor_windows", meta, *_monitor_windows_v5())
    meta.create_all(conn)
    conn.execute(
        sa.text("CREATE INDEX ix_monitor_spans_start ON monitor_spans (stream, started_ns)")
    )


def _v6_monitor_ppi(conn: sa.Connection) -> None:
    """Version 6: the windows' prediction-powered estimates (``ragmeter monitor ppi``)."""
    meta = sa.MetaData()
    sa.Table("monitor_ppi", meta, *_monitor_ppi_v6())
    meta.create_all(conn)


def _v7_spans_keyed_by_trace(conn: sa.Connection) -> None:
    """Version 7: the monitor's spans and samples keyed by (stream, trace id, span id).

    OpenTelemetry span ids are unique only within a trace: keyed by (stream, span id), a span
    of another trace reusing an id was taken for one already held and left out. A span's
    duration may be NULL (a span that ends before it starts has no latency). Each table is
    copied into one of the new shape, every row kept (a version-6 store holds one span per
    (stream, span id), so a sample's trace id is that of its span; ``''`` for a sample whose
    span is missing, which a version-6 store never wrote), then takes the old one's name.
    Plain ``INSERT … SELECT``, ``DROP`` and ``ALTER TABLE … RENAME`` run alike on SQLite and
    PostgreSQL.
    """
    meta = sa.MetaData()
    sa.Table("monitor_spans_v7", meta, *_span_key_v7(), *_span_fields_v5(duration_nullable=True))
    sa.Table("monitor_samples_v7", meta, *_span_key_v7(), *_sample_fields_v5())
    meta.create_all(conn)
    span_columns = "stream, trace_id, span_id, stage, started_ns, duration_ms"
    conn.execute(
        sa.text(
            f"INSERT INTO monitor_spans_v7 ({span_columns}) SELECT {span_columns} "
            "FROM monitor_spans"
        )
    )
    rest = "window_s, window_start, query_id, judge, pairs, unlabelled, measure_values, doc_ids"
    conn.execute(
        sa.text(
            f"INSERT INTO monitor_samples_v7 (stream, trace_id, span_id, {rest}) "
            "SELECT s.stream, COALESCE((SELECT p.trace_id FROM monitor_spans p "
            "WHERE p.stream = s.stream AND p.span_id = s.span_id), ''), s.span_id, "
            + ", ".join(f"s.{c.strip()}" for c in rest.split(","))
            + " FROM monitor_samples s"
        )
    )
    conn.execute(sa.text("DROP INDEX ix_monitor_spans_start"))
    for table in ("monitor_spans", "monitor_samples"):
        conn.execute(sa.text(f"DROP TABLE {table}"))
        conn.execute(sa.text(f"ALTER TABLE {table}_v7 RENAME TO {table}"))
        if conn.dialect.name == "postgresql":  # its key keeps the name it was made with
            conn.execute(
                sa.text(f"ALTER TABLE {table} RENAME CONSTRAINT {table}_v7_pkey TO {table}_pkey")
            )
    conn.execute(
        sa.text("CREATE INDEX ix_monitor_spans_start ON monitor_spans (stream, started_ns)")
    )


def _v8_check_history(conn: sa.Connection) -> None:
    """Version 8: the looks of ``ragmeter check --sequential``, and the estimator of the
    monitor's prediction-powered estimates (NULL for those stored before: PPI++)."""
    meta = sa.MetaData()
    sa.Table("check_history", meta, *_check_history_v8())
    sa.Table("check_looks", meta, *_check_looks_v8())
    meta.create_all(conn)
    conn.execute(sa.text("ALTER TABLE monitor_ppi ADD COLUMN estimator TEXT"))


Migration = Callable[[sa.Connection], None]

#: (version, migration) in order; append, never edit an applied one
MIGRATIONS: tuple[tuple[int, Migration], ...] = (
    (1, _v1_tables),
    (2, _v2_version_and_name_index),
    (3, _v3_cells_without_foreign_key),
    (4, _v4_labels),
    (5, _v5_monitor),
    (6, _v6_monitor_ppi),
    (7, _v7_spans_keyed_by_trace),
    (8, _v8_check_history),
)

LATEST_VERSION = MIGRATIONS[-1][0]
