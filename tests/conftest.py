"""Shared fixtures: where the conformance data lives (beside the repository, read-only)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFORMANCE = REPO.parent / "shared" / "conformance" / "trec_eval"


@pytest.fixture(scope="session")
def trec_conformance() -> Path:
    """The trec_eval 10.0 test-suite folder; tests using it skip visibly when it is absent."""
    if not (CONFORMANCE / "qrels.test").is_file():
        pytest.skip(f"trec_eval conformance data not found at {CONFORMANCE}")
    return CONFORMANCE


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """ragmeter's data folder (default store, judge cache, label databases) in a temporary
    folder, never the user's: tests that need a fresh one set ``XDG_DATA_HOME`` themselves."""
    folder = tmp_path_factory.mktemp("xdg-data-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(folder))
        patch.delenv("RAGMETER_DATA_DIR", raising=False)
        patch.delenv("RAGMETER_STORE", raising=False)
        yield folder


#: a PostgreSQL database the store tests may create databases beside (set by .ci/run)
POSTGRES_ENV = "RAGMETER_TEST_POSTGRES_URL"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test (dropped afterwards).

    Needs a server: ``.ci/run`` starts one and sets ``RAGMETER_TEST_POSTGRES_URL``; locally,
    ``.ci/postgres start DIR`` prints a URL to export. Skips, saying so, without it.
    """
    import os
    import uuid

    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set (.ci/postgres start DIR prints one)")
    sa = pytest.importorskip("sqlalchemy", reason="the store extra (sqlalchemy) is needed")
    pytest.importorskip("psycopg", reason="the store extra (psycopg) is needed")
    from ragmeter.store import resolve_url

    admin_url = sa.make_url(resolve_url(base))
    name = f"ragmeter_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield admin_url.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh evaluation store on each backend; the PostgreSQL one skips without a server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[object]:
    """A Ray instance on 127.0.0.1 with two CPUs, started once for the Ray tests of a module
    (the engine and the judge fan-out use the open session) and shut down after them, so
    that no later test forks a process holding Ray's threads."""
    import logging

    import ray

    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
        _node_ip_address="127.0.0.1",
    )
    yield ray
    ray.shutdown()


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The start methods of the worker pools created during the test (``forked_map``'s), in
    order; ``RAGMETER_WORKERS`` unset so that the defaults apply."""
    import multiprocessing

    import ragmeter.evaluation.forking as forking

    monkeypatch.delenv(forking.WORKERS_ENV, raising=False)
    started: list[str] = []
    real = multiprocessing.get_context

    def spy(method: str | None = None) -> object:
        started.append(str(method))
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", spy)
    return started
