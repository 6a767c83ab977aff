"""The evaluation store on SQLite (always) and PostgreSQL (when a server is given): round
trips, provenance, transactions, migrations and concurrent writers."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("sqlalchemy", reason="the store extra (sqlalchemy) is needed")

import sqlalchemy as sa

import ragmeter
from ragmeter.errors import StoreError
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import parse_measures
from ragmeter.store import (
    content_sha256,
    default_store_exists,
    default_store_url,
    open_store,
    resolve_url,
    save_evaluation,
    save_to_default_store,
)
from ragmeter.store import schema as store_schema
from ragmeter.store.provenance import GitState, git_state
from ragmeter.store.sql import Store

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
NO_GIT = None  # the git= value that records no commit (keeps tests independent of the cwd)


def _result(
    name: str, qids: list[str], measures: list[str], values: list[list[float]]
) -> RunResult:
    parsed = tuple(parse_measures(measures))
    return RunResult(
        name=name,
        query_ids=np.array(qids, dtype=object),
        measures=parsed,
        values=np.array(values, dtype=np.float64).reshape(len(qids), len(parsed)),
    )


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit, NaN where NaN."""
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _table_counts(store: Store) -> dict[str, int]:
    with store._engine.connect() as conn:
        return {
            t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
            for t in (
                store_schema.evaluations,
                store_schema.runs,
                store_schema.run_queries,
                store_schema.query_values,
            )
        }


# -- round trips ----------------------------------------------------------------------------


def test_round_trip_keeps_values_na_and_order(store_url: str) -> None:
    measures = ["ndcg@10", "map", "P@5"]
    a = _result(
        "bm25",
        ["q10", "q2", "é q"],  # not sorted: the stored order is the evaluated order
        measures,
        [[0.5, math.nan, 0.2], [1 / 3, 0.1 + 0.2, 0.0], [math.nan, math.nan, 1.0]],
    )
    b = _result("hybrid", ["q2"], measures, [[5e-324, 1.7976931348623157e308, math.inf]])
    evaluation = Evaluation((a, b), a.measures, ("a warning",))
    with open_store(store_url) as store:
        eid = store.save_evaluation(evaluation, name="wk47", git=NO_GIT)
        loaded = store.load_evaluation(eid).evaluation
    assert [r.name for r in loaded.runs] == ["bm25", "hybrid"]
    assert [str(m) for m in loaded.measures] == ["ndcg@10", "map", "precision@5"]
    assert loaded.warnings == ("a warning",)
    for before, after in zip(evaluation.runs, loaded.runs, strict=True):
        assert list(after.query_ids) == list(before.query_ids)
        assert _same_values(after.values, before.values)
    # the means of a loaded evaluation are computed as before: NA stays out of them
    assert loaded["bm25"].means()["map"] == pytest.approx((0.1 + 0.2) / 1)
    assert loaded["bm25"].means()["ndcg@10"] == pytest.approx((0.5 + 1 / 3) / 2)


def test_na_is_stored_as_null(store_url: str) -> None:
    run = _result("r", ["q1", "q2"], ["map"], [[math.nan], [0.25]])
    with open_store(store_url) as store:
        eid = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
        with store._engine.connect() as conn:
            cells = conn.execute(
                sa.select(store_schema.query_values.c.row, store_schema.query_values.c.value)
                .join(
                    store_schema.runs, store_schema.runs.c.id == store_schema.query_values.c.run_id
                )
                .where(store_schema.runs.c.evaluation_id == eid)
                .order_by(store_schema.query_values.c.row)
            ).all()
    assert [tuple(c) for c in cells] == [(0, None), (1, 0.25)]


def test_round_trip_of_a_real_evaluation(store_url: str) -> None:
    qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}, "q3": {"z": 0}}
    runs = {
        "base": ragmeter.Run.from_lists({"q1": ["x", "a"], "q2": ["c"], "q3": ["z"]}),
        "new": ragmeter.Run.from_lists({"q1": ["a", "b"], "q2": ["y"]}),
    }
    evaluation = ragmeter.evaluate(runs, qrels, ["ndcg@10", "map", "mrr", "num_ret"])
    with open_store(store_url) as store:
        eid = store.save_evaluation(evaluation, git=NO_GIT)
        record = store.get_record(eid)
        loaded = store.load_evaluation(eid).evaluation
    for before, after in zip(evaluation.runs, loaded.runs, strict=True):
        assert _same_values(after.values, before.values)
        assert after.n_missing == before.n_missing
        assert after.means() == before.means()
    # the stored means are those evaluate reported (num_ret: a sum), NA as None
    assert [r.means for r in record.runs] == [r.means() for r in evaluation.runs]
    assert record.runs[1].n_queries == len(evaluation["new"].query_ids)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    values=st.lists(
        st.lists(
            st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=2, max_size=2
        ),
        min_size=1,
        max_size=6,
    ),
    qids=st.lists(
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1, max_size=8),
        min_size=6, max_size=6, unique=True,
    ),
)  # fmt: skip
def test_any_float_and_query_id_survive(
    store_url: str, values: list[list[float]], qids: list[str]
) -> None:
    run = _result("r", qids[: len(values)], ["map", "mrr"], values)
    with open_store(store_url) as store:
        eid = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
        loaded = store.load_evaluation(eid).evaluation.run
    assert list(loaded.query_ids) == qids[: len(values)]
    assert _same_values(loaded.values, run.values)


# -- listing and references -----------------------------------------------------------------


def test_list_newest_first_with_limit_and_name(store_url: str) -> None:
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    ev = Evaluation((run,), run.measures)
    t0 = datetime(2024, 11, 18, 9, 30, tzinfo=UTC)
    with open_store(store_url) as store:
        ids = [
            store.save_evaluation(ev, name=n, git=NO_GIT, created_at=t0 + timedelta(days=7 * i))
            for i, n in enumerate(["hybrid", "bm25", "hybrid"])
        ]
        assert ids == sorted(ids) and len(set(ids)) == 3
        assert [r.id for r in store.list_evaluations()] == ids[::-1]
        assert [r.id for r in store.list_evaluations(limit=2)] == ids[:0:-1]
        assert [r.id for r in store.list_evaluations(name="hybrid")] == [ids[2], ids[0]]
        assert store.list_evaluations()[-1].created_at == t0
        assert store.resolve(str(ids[1])) == ids[1]
        assert store.resolve(f"#{ids[1]}") == ids[1]
        assert store.resolve("hybrid") == ids[2]  # the latest with that name
        with pytest.raises(StoreError, match="no evaluation"):
            store.resolve("nightly")
        with pytest.raises(StoreError, match="no evaluation #"):
            store.load_evaluation(ids[-1] + 100)


def test_created_at_is_utc(store_url: str) -> None:
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    paris = datetime(2024, 11, 18, 10, 0, tzinfo=UTC).astimezone(
        __import__("datetime").timezone(timedelta(hours=1))
    )
    with open_store(store_url) as store:
        explicit = store.save_evaluation(
            Evaluation((run,), run.measures), git=NO_GIT, created_at=paris
        )
        before = datetime.now(UTC)
        now = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
        after = datetime.now(UTC)
        assert store.get_record(explicit).created_at == datetime(2024, 11, 18, 10, 0, tzinfo=UTC)
        saved = store.get_record(now).created_at
    assert saved.tzinfo is not None and saved.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= saved <= after + timedelta(seconds=1)


def test_delete_removes_every_row(store_url: str) -> None:
    run = _result("r", ["q1", "q2"], ["mrr"], [[1.0], [0.5]])
    with open_store(store_url) as store:
        keep = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
        gone = store.save_evaluation(Evaluation((run, run), run.measures), git=NO_GIT)
        store.delete_evaluation(gone)
        assert [r.id for r in store.list_evaluations()] == [keep]
        assert _table_counts(store) == {
            "evaluations": 1,
            "runs": 1,
            "run_queries": 2,
            "query_values": 2,
        }
        with pytest.raises(StoreError):
            store.delete_evaluation(gone)


# -- provenance -----------------------------------------------------------------------------


def test_file_hashes_parameters_and_content_hashes(store_url: str, tmp_path: Path) -> None:
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_bytes(b"q1 0 a 1\nq2 0 c 1\n")
    run_file = tmp_path / "run.txt"
    run_file.write_bytes(b"q1 Q0 a 1 2.0 bm25\nq2 Q0 x 1 1.0 bm25\n")
    qrels = ragmeter.read_qrels(qrels_file)
    run = ragmeter.read_run(run_file)
    evaluation = ragmeter.evaluate([run, run], qrels, ["mrr"])
    saved = save_evaluation(
        evaluation,
        url=store_url,
        name="hybrid wk47",
        command="evaluate",
        parameters={"measures": ["mrr"], "rel_level": 1, "path": tmp_path, "k": np.int64(5)},
        qrels=qrels_file,
        runs=[run_file, run],
    )
    with open_store(store_url) as store:
        record = store.get_record(saved.id)
    assert record.name == "hybrid wk47" and record.command == "evaluate"
    assert record.qrels_hash == "sha256:" + hashlib.sha256(qrels_file.read_bytes()).hexdigest()
    assert record.runs[0].content_hash == (
        "sha256:" + hashlib.sha256(run_file.read_bytes()).hexdigest()
    )
    # an in-memory run: the sha256 of its canonical lines (query, doc, float.hex(score))
    canonical = f"ragmeter-run-v1\nq1\ta\t{(2.0).hex()}\nq2\tx\t{(1.0).hex()}\n".encode()
    assert record.runs[1].content_hash == "sha256:" + hashlib.sha256(canonical).hexdigest()
    assert record.parameters == {
        "measures": ["mrr"],
        "rel_level": 1,
        "path": str(tmp_path),
        "k": 5,
    }
    assert record.ragmeter_version == ragmeter.__version__


def test_content_hash_ignores_format_and_name() -> None:
    a = ragmeter.Qrels.from_dict({"q1": {"a": 1, "b": 2}}, name="x")
    b = ragmeter.Qrels.from_dict({"q1": {"b": 2, "a": 1}}, name="y")
    c = ragmeter.Qrels.from_dict({"q1": {"b": 3, "a": 1}})
    assert content_sha256(a) == content_sha256(b) != content_sha256(c)
    canonical = b"ragmeter-qrels-v1\nq1\ta\t1\nq1\tb\t2\n"
    assert content_sha256(a) == "sha256:" + hashlib.sha256(canonical).hexdigest()


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_git_state_commit_and_dirty(tmp_path: Path) -> None:
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("no git program")
    repo = tmp_path / "repo"
    repo.mkdir()
    assert git_state(repo) is None  # no repository
    _git(repo, "init", "-q")
    assert git_state(repo) is None  # no commit yet
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    head = (repo / ".git" / "HEAD").read_text().split()[-1]
    commit = (repo / ".git" / head).read_text().strip()
    assert git_state(repo) == GitState(commit=commit, dirty=False)
    (repo / "scratch.json").write_text("{}")  # untracked: not dirty
    assert git_state(repo) == GitState(commit=commit, dirty=False)
    (repo / "a.txt").write_text("two\n")
    assert git_state(repo) == GitState(commit=commit, dirty=True)


def test_git_missing_never_stops_a_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git program on the PATH
    monkeypatch.chdir(tmp_path)
    assert git_state() is None
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    with open_store(store_url) as store:
        record = store.get_record(store.save_evaluation(Evaluation((run,), run.measures)))
    assert record.git_commit is None and record.git_dirty is None


def test_git_commit_of_the_working_directory_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    (repo / "a.txt").write_text("two\n")
    monkeypatch.chdir(repo)
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        record = store.get_record(store.save_evaluation(Evaluation((run,), run.measures)))
    head = (repo / ".git" / "HEAD").read_text().split()[-1]
    assert record.git_commit == (repo / ".git" / head).read_text().strip()
    assert record.git_dirty is True


# -- transactions ---------------------------------------------------------------------------


def test_a_failure_mid_save_stores_nothing(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _result("r", ["q1", "q2"], ["mrr"], [[1.0], [0.5]])
    evaluation = Evaluation((run, run, run), run.measures)
    original = Store._insert_run
    calls = []

    def failing(self: Store, *args: object) -> None:
        calls.append(1)
        if len(calls) == 2:  # the first run is written, the second fails
            raise RuntimeError("disk on fire")
        original(self, *args)  # type: ignore[arg-type]

    with open_store(store_url) as store:
        monkeypatch.setattr(Store, "_insert_run", failing)
        with pytest.raises(RuntimeError, match="disk on fire"):
            store.save_evaluation(evaluation, git=NO_GIT)
        monkeypatch.setattr(Store, "_insert_run", original)
        assert len(calls) == 2
        assert store.list_evaluations() == []
        assert set(_table_counts(store).values()) == {0}
        # the store is still usable
        eid = store.save_evaluation(evaluation, git=NO_GIT)
        assert [r.id for r in store.list_evaluations()] == [eid]


def test_bad_parameters_store_nothing(store_url: str) -> None:
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    with open_store(store_url) as store:
        with pytest.raises(StoreError, match="parameters"):
            store.save_evaluation(
                Evaluation((run,), run.measures), parameters={"alpha": math.nan}, git=NO_GIT
            )
        with pytest.raises(StoreError, match="not JSON"):
            store.save_evaluation(
                Evaluation((run,), run.measures), parameters={"x": object()}, git=NO_GIT
            )
        assert store.list_evaluations() == []


_KILLED_SAVE = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.measures import parse_measures
    from ragmeter.store import open_store
    from ragmeter.store.sql import Store

    measures = tuple(parse_measures(["map", "mrr"]))
    run = RunResult("r", np.array([f"q{i}" for i in range(2000)], dtype=object), measures,
                    np.random.default_rng(0).random((2000, 2)))
    original = Store._insert_run
    calls = []

    def insert_then_die(self, *args):
        original(self, *args)
        calls.append(1)
        if len(calls) == 2:  # two runs written, the transaction still open
            print("dying", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    store = open_store(sys.argv[1])
    Store._insert_run = insert_then_die
    store.save_evaluation(Evaluation((run, run, run), measures), git=None)
    print("not reached", flush=True)
    """
)


def test_a_killed_process_leaves_no_half_written_evaluation(store_url: str) -> None:
    if not hasattr(os, "kill") or sys.platform == "win32":
        pytest.skip("needs SIGKILL")
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    with open_store(store_url) as store:
        first = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_SAVE, store_url],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    assert done.stdout.strip() == "dying"
    with open_store(store_url) as store:
        assert [r.id for r in store.list_evaluations()] == [first]
        assert _table_counts(store) == {
            "evaluations": 1,
            "runs": 1,
            "run_queries": 1,
            "query_values": 1,
        }
        if store.dialect == "sqlite":
            with store._engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        later = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
        assert later > first


# -- concurrency ----------------------------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.measures import parse_measures
    from ragmeter.store import open_store

    measures = tuple(parse_measures(["map"]))
    run = RunResult(sys.argv[2], np.array([f"q{i}" for i in range(300)], dtype=object),
                    measures, np.full((300, 1), 0.5))
    with open_store(sys.argv[1]) as store:
        for _ in range(4):
            store.save_evaluation(Evaluation((run,), measures), git=None)
    """
)


def test_concurrent_writers_on_one_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"  # created and migrated by the writers at once
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, url, f"w{i}"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for w in writers:
        _, err = w.communicate(timeout=180)
        assert w.returncode == 0, err
    with open_store(url) as store:
        records = store.list_evaluations()
        assert len(records) == 12 and len({r.id for r in records}) == 12
        assert sorted(r.runs[0].name for r in records) == sorted([f"w{i}" for i in range(3)] * 4)
        assert store.schema_version() == store_schema.LATEST_VERSION
        with store._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            versions = conn.execute(sa.select(store_schema.schema_version.c.version)).scalars()
            assert sorted(versions) == [v for v, _ in store_schema.MIGRATIONS]


def test_concurrent_first_opens_migrate_once(store_url: str) -> None:
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_store(store_url).close()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with open_store(store_url) as store, store._engine.connect() as conn:
        versions = conn.execute(sa.select(store_schema.schema_version.c.version)).scalars()
        assert sorted(versions) == [v for v, _ in store_schema.MIGRATIONS]


# -- migrations -----------------------------------------------------------------------------


def _migrate_to(url: str, version: int) -> None:
    """A database at an old schema version, built by the migrations up to it."""
    engine = sa.create_engine(resolve_url(url), poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        store_schema.schema_version.create(conn)
        for v, step in store_schema.MIGRATIONS:
            if v <= version:
                step(conn)
                conn.execute(
                    sa.insert(store_schema.schema_version).values(
                        version=v, applied_at=datetime.now(UTC)
                    )
                )
    engine.dispose()


def test_upgrade_from_version_1_keeps_old_evaluations(store_url: str) -> None:
    _migrate_to(store_url, 1)
    engine = sa.create_engine(resolve_url(store_url), poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        # a version-1 evaluation, as version 1 wrote it (no ragmeter_version column)
        eid = conn.execute(
            sa.text(
                "INSERT INTO evaluations (name, created_at, command, parameters, measures, "
                "warnings) VALUES ('old', :t, 'evaluate', '{}', '[\"map\", \"mrr\"]', '[]')"
                " RETURNING id"
            ),
            {"t": datetime(2024, 1, 1, tzinfo=UTC)},
        ).scalar_one()
        rid = conn.execute(
            sa.text(
                "INSERT INTO runs (evaluation_id, position, name, n_queries, n_missing, "
                "n_skipped, n_unjudged_queries, means) VALUES (:e, 0, 'bm25', 2, 0, 0, 0, "
                '\'{"map": 0.25, "mrr": null}\') RETURNING id'
            ),
            {"e": eid},
        ).scalar_one()
        conn.execute(
            sa.text("INSERT INTO run_queries (run_id, row, query_id) VALUES (:r, 0, 'q1')"),
            {"r": rid},
        )
        conn.execute(
            sa.text("INSERT INTO run_queries (run_id, row, query_id) VALUES (:r, 1, 'q2')"),
            {"r": rid},
        )
        for row, measure, value in [(0, 0, 0.5), (1, 0, 0.0), (0, 1, None), (1, 1, None)]:
            conn.execute(
                sa.text(
                    "INSERT INTO query_values (run_id, row, measure, value) "
                    "VALUES (:r, :row, :m, :v)"
                ),
                {"r": rid, "row": row, "m": measure, "v": value},
            )
    engine.dispose()

    with open_store(store_url) as store:
        assert store.schema_version() == store_schema.LATEST_VERSION
        with store._engine.connect() as conn:
            keys = sa.inspect(conn).get_foreign_keys("query_values")
        # version 3 drops the cells' foreign key on PostgreSQL only
        assert len(keys) == (0 if store.dialect == "postgresql" else 1)
        stored = store.load_evaluation(int(eid))
        assert stored.record.ragmeter_version == ""
        assert stored.record.name == "old"
        assert stored.record.created_at == datetime(2024, 1, 1, tzinfo=UTC)
        assert stored.record.runs[0].means == {"map": 0.25, "mrr": None}
        run = stored.evaluation.run
        assert list(run.query_ids) == ["q1", "q2"]
        assert _same_values(run.values, np.array([[0.5, math.nan], [0.0, math.nan]]))
        new_run = _result("r", ["q1"], ["mrr"], [[1.0]])
        new = store.save_evaluation(Evaluation((new_run,), new_run.measures), git=NO_GIT)
        assert store.get_record(new).ragmeter_version == ragmeter.__version__
        assert store.resolve("old") == int(eid)  # the name index of version 2 is usable
    with open_store(store_url) as store:  # opening again migrates nothing
        assert store.schema_version() == store_schema.LATEST_VERSION


def test_a_newer_store_is_refused(store_url: str) -> None:
    with open_store(store_url) as store:
        newer = store_schema.LATEST_VERSION + 1
        with store._engine.begin() as conn:
            conn.execute(
                sa.insert(store_schema.schema_version).values(
                    version=newer, applied_at=datetime.now(UTC)
                )
            )
    with pytest.raises(StoreError, match=f"schema version {newer}, newer"):
        open_store(store_url)


def test_upgrade_from_version_5_keeps_monitor_figures_and_adds_ppi(store_url: str) -> None:
    """Version 6 adds the windows' PPI estimates beside a version-5 store's monitor tables,
    which keep their rows; the new table round-trips (NaN as NULL)."""
    from ragmeter.core.provenance import LabelSource
    from ragmeter.store.monitor import PPIRow, load_ppi, load_windows, save_ppi

    _migrate_to(store_url, 5)
    engine = sa.create_engine(resolve_url(store_url), poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO monitor_windows (stream, window_s, window_start, measure, n, mean, "
                "low, high, judge, updated_at) VALUES ('s', 86400, 0, 'ndcg@5', 3, 0.5, 0.25, "
                "0.75, NULL, :t)"
            ),
            {"t": datetime(2026, 1, 1, tzinfo=UTC)},
        )
    engine.dispose()
    judge = LabelSource(kind="judge", model="m", prompt_id="umbrela")
    row = PPIRow(86400, 0, "ndcg@5", 2, 1, 0.5, 0.4, math.nan, math.nan, 0.3, 0.05, "h", judge)
    with open_store(store_url) as store:
        assert store.schema_version() == store_schema.LATEST_VERSION
        (window,) = load_windows(store, "s", 86400)
        assert (window.n, window.mean, window.low, window.high) == (3, 0.5, 0.25, 0.75)
        assert load_ppi(store, "s") == []
        save_ppi(store, "s", 86400, [row])
        (back,) = load_ppi(store, "s", 86400)
        assert math.isnan(back.low) and math.isnan(back.high)
        assert (back.estimate, back.lam, back.judge) == (0.4, 0.3, judge)
        assert back.human == "h"


def test_upgrade_from_version_6_keys_spans_by_trace_and_keeps_every_row(store_url: str) -> None:
    """Version 7 keys the monitor's spans and samples by (stream, trace id, span id): every
    row of a version-6 store is kept (a sample takes its span's trace id), the other monitor
    tables and the evaluations are untouched, and a span of another trace reusing a span id
    is then stored beside the first."""
    from ragmeter.store.monitor import SpanRow, add_spans, load_ppi, load_samples, load_spans

    _migrate_to(store_url, 6)
    engine = sa.create_engine(resolve_url(store_url), poolclass=sa.pool.NullPool)
    t = datetime(2026, 1, 1, tzinfo=UTC)
    spans = [  # (stream, span id, trace id, stage, start ns, duration ms), as version 6 wrote
        ("s", "0001", "t1", "retriever", 10**18, 12.5),
        ("s", "0002", "t1", "llm", 10**18 + 5, 300.0),
        ("s", "0003", "t2", "retriever", 10**18 + 86400 * 10**9, 7.25),
        ("other", "0001", "t9", "chain", 2**62, 0.0),
    ]
    with engine.begin() as conn:
        for row in spans:
            conn.execute(
                sa.text(
                    "INSERT INTO monitor_spans (stream, span_id, trace_id, stage, started_ns, "
                    "duration_ms) VALUES (:a, :b, :c, :d, :e, :f)"
                ),
                dict(zip("abcdef", row, strict=True)),
            )
        for stream, span_id, window in (
            ("s", "0001", 0),
            ("s", "0003", 86400),
            ("other", "0001", 0),
        ):
            conn.execute(
                sa.text(
                    "INSERT INTO monitor_samples (stream, span_id, window_s, window_start, "
                    "query_id, judge, pairs, unlabelled, measure_values, doc_ids) VALUES "
                    '(:s, :i, 86400, :w, \'q\', \'{"kind": "judge", "model": "m"}\', 3, '
                    '1, \'{"ndcg@5": 0.5, "mrr": null}\', \'["d1", "d2", "d3"]\')'
                ),
                {"s": stream, "i": span_id, "w": window},
            )
        conn.execute(
            sa.text(
                "INSERT INTO monitor_windows (stream, window_s, window_start, measure, n, mean, "
                "low, high, judge, updated_at) VALUES ('s', 86400, 0, 'ndcg@5', 1, 0.5, NULL, "
                "NULL, NULL, :t)"
            ),
            {"t": t},
        )
        conn.execute(
            sa.text(
                "INSERT INTO monitor_ppi (stream, window_s, window_start, measure, n_labelled, "
                "n_unlabelled, llm_mean, estimate, low, high, lam, alpha, human, judge, "
                "updated_at) VALUES ('s', 86400, 0, 'ndcg@5', 1, 0, 0.5, 0.5, NULL, NULL, 1.0, "
                "0.05, 'h', NULL, :t)"
            ),
            {"t": t},
        )
    engine.dispose()
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    with open_store(store_url) as store:
        assert store.schema_version() == store_schema.LATEST_VERSION == 8
        eid = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
        got = {
            (stream, s.span_id, s.trace_id, s.stage, s.started_ns, s.duration_ms)
            for stream in ("s", "other")
            for s in load_spans(store, stream)
        }
        assert got == set(spans)
        samples = {(s.span_id, s.trace_id) for s in load_samples(store, "s")}
        assert samples == {("0001", "t1"), ("0003", "t2")}
        (other,) = load_samples(store, "other")
        assert (other.trace_id, other.pairs, other.unlabelled) == ("t9", 3, 1)
        assert other.doc_ids == ("d1", "d2", "d3") and other.values["ndcg@5"] == 0.5
        assert math.isnan(other.values["mrr"])
        with store._engine.connect() as conn:
            for table, n in (("monitor_windows", 1), ("monitor_ppi", 1)):
                count = conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
                assert count == n, table
            indexes = {i["name"] for i in sa.inspect(conn).get_indexes("monitor_spans")}
            assert "ix_monitor_spans_start" in indexes
            key = sa.inspect(conn).get_pk_constraint("monitor_spans")
            assert key["constrained_columns"] == ["stream", "trace_id", "span_id"]
        # another trace's span with id 0001 sits beside t1's, with no latency (NULL)
        add_spans(store, "s", [SpanRow("0001", "t3", "retriever", 10**18, math.nan)], [])
        again = {s.trace_id: s for s in load_spans(store, "s") if s.span_id == "0001"}
        assert set(again) == {"t1", "t3"} and math.isnan(again["t3"].duration_ms)
        assert store.load_evaluation(eid).evaluation.run.name == "r"
        # version 8: an estimate stored before says no estimator (it was PPI++'s)
        (ppi,) = load_ppi(store, "s")
        assert ppi.estimator is None and ppi.estimate == 0.5
    with open_store(store_url) as store:  # opening again migrates nothing
        assert store.schema_version() == 8


# -- locations ------------------------------------------------------------------------------


def test_urls_and_the_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_url("postgresql://u@h:5433/db") == "postgresql+psycopg://u@h:5433/db"
    assert resolve_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert resolve_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    assert resolve_url("sqlite:///x.db") == "sqlite:///x.db"
    assert resolve_url(tmp_path / "h.db") == f"sqlite:///{tmp_path / 'h.db'}"
    monkeypatch.chdir(tmp_path)
    assert resolve_url("rel/h.db") == f"sqlite:///{tmp_path / 'rel' / 'h.db'}"
    with pytest.raises(StoreError, match="empty"):
        resolve_url(" ")

    monkeypatch.delenv("RAGMETER_STORE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    home_db = tmp_path / "home" / ".local" / "share" / "ragmeter" / "store.db"
    assert default_store_url() == f"sqlite:///{home_db}"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG spec: only absolute
    assert default_store_url() == f"sqlite:///{home_db}"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    xdg_db = tmp_path / "data" / "ragmeter" / "store.db"
    assert default_store_url() == f"sqlite:///{xdg_db}"

    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    evaluation = Evaluation((run,), run.measures)
    assert default_store_exists() is False
    assert save_to_default_store(evaluation) is None  # the demo never creates a store
    assert not xdg_db.exists()
    with open_store() as store:  # the default store, created on first open
        assert store.url == f"sqlite:///{xdg_db}"
    assert default_store_exists() is True
    saved = save_to_default_store(evaluation, name="demo")
    assert saved is not None and saved.url == f"sqlite:///{xdg_db}"

    monkeypatch.setenv("RAGMETER_STORE", str(tmp_path / "env.db"))
    assert default_store_url() == f"sqlite:///{tmp_path / 'env.db'}"
    assert default_store_exists() is False
    monkeypatch.setenv("RAGMETER_STORE", "postgresql://u@h/db")
    assert default_store_exists() is True  # a server is there when it is configured


def test_password_is_hidden_in_the_url() -> None:
    from ragmeter.store import _display_url

    shown = _display_url("postgresql+psycopg://me:s3cret@h/db")
    assert "s3cret" not in shown and "me:***@h/db" in shown


def test_unreachable_server_is_a_clear_error() -> None:
    pytest.importorskip("psycopg", reason="the store extra (psycopg) is needed")
    with pytest.raises(StoreError, match="cannot open the store postgresql"):
        open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")


def test_core_import_does_not_load_sqlalchemy() -> None:
    code = (
        "import sys, ragmeter, ragmeter.store\n"
        "ragmeter.store.default_store_exists()\n"
        "print('sqlalchemy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "False"


def test_a_failing_migration_leaves_the_store_as_it_was(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _result("r", ["q1"], ["mrr"], [[1.0]])
    with open_store(store_url) as store:
        eid = store.save_evaluation(Evaluation((run,), run.measures), git=NO_GIT)
    latest = store_schema.LATEST_VERSION

    def add_table(conn: sa.Connection) -> None:
        conn.execute(sa.text("CREATE TABLE half_done (x INTEGER)"))

    def broken(conn: sa.Connection) -> None:
        raise RuntimeError("step failed")

    steps = (*store_schema.MIGRATIONS, (latest + 1, add_table), (latest + 2, broken))
    monkeypatch.setattr(store_schema, "MIGRATIONS", steps)
    monkeypatch.setattr(store_schema, "LATEST_VERSION", latest + 2)
    with pytest.raises(StoreError, match="step failed"):
        open_store(store_url)
    monkeypatch.undo()
    with open_store(store_url) as store:
        assert store.schema_version() == latest  # neither new step was kept
        with store._engine.connect() as conn:
            assert not sa.inspect(conn).has_table("half_done")
        assert store.load_evaluation(eid).evaluation.run.means() == {"mrr": 1.0}
