"""A history of evaluations: SQLite by default, PostgreSQL by URL (extra ``store``).

Where the store is, first match wins:

1. the ``url`` given (``--store``): ``sqlite:///path.db``, ``postgresql://user@host/db``, or a
   plain file path (a SQLite file);
2. the ``RAGMETER_STORE`` environment variable (same forms);
3. ``store.db`` in ragmeter's data folder (:func:`ragmeter.core.datadir.data_dir`:
   ``$RAGMETER_DATA_DIR``, else the platform's user data folder, ``~/.local/share/ragmeter``
   on Linux).

``postgresql://`` and ``postgres://`` URLs use the psycopg 3 driver.

>>> from ragmeter.store import resolve_url
>>> resolve_url("postgresql://me@db.example/evals")
'postgresql+psycopg://me@db.example/evals'
>>> resolve_url("results/history.db")  # doctest: +ELLIPSIS
'sqlite:///.../results/history.db'

This module imports SQLAlchemy only when a store is opened, so checking for the default store
costs nothing when the extra is not installed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import MissingExtraError, NoStoreError, StoreError
from ragmeter.store.provenance import content_sha256, file_sha256, git_state
from ragmeter.store.records import EvaluationRecord, RunRecord, StoredEvaluation

if TYPE_CHECKING:
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.store.sql import Store

__all__ = [
    "ENV_VAR",
    "EvaluationRecord",
    "NoStoreError",
    "RunRecord",
    "SavedEvaluation",
    "Store",
    "StoreError",
    "StoredEvaluation",
    "content_sha256",
    "default_store_exists",
    "default_store_url",
    "file_sha256",
    "git_state",
    "open_store",
    "resolve_url",
    "save_evaluation",
    "save_to_default_store",
    "store_exists",
]

#: environment variable naming the default store
ENV_VAR = "RAGMETER_STORE"


def default_store_path() -> Path:
    """``store.db`` in ragmeter's data folder (:func:`ragmeter.core.datadir.data_dir`)."""
    from ragmeter.core.datadir import data_path

    return data_path("store.db")


def default_store_url() -> str:
    """The store used when none is given: ``$RAGMETER_STORE``, else the SQLite file."""
    configured = os.environ.get(ENV_VAR, "").strip()
    if configured:
        return resolve_url(configured)
    return _sqlite_url(default_store_path())


def resolve_url(url: str | os.PathLike[str]) -> str:
    """A SQLAlchemy URL for a store location (see the module docs for the accepted forms)."""
    text = os.fspath(url).strip()
    if not text:
        raise StoreError("empty store location; give a URL or a file path")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return _sqlite_url(Path(text))
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return text


def _sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.expanduser().absolute()}"


def default_store_exists() -> bool:
    """Whether the default store is set up: ``RAGMETER_STORE`` names a server, or the SQLite
    file exists. ``ragmeter demo`` saves into the default store only then."""
    return store_exists(default_store_url())


def store_exists(url: str) -> bool:
    """Whether the store at ``url`` (a resolved URL) is there: a server URL always is (the
    server says otherwise when opened), a SQLite file when the file exists."""
    if not url.startswith("sqlite:"):
        return True
    database = url.partition(":///")[2]
    return bool(database) and database != ":memory:" and Path(database).is_file()


def open_store(
    url: str | os.PathLike[str] | None = None,
    *,
    create: bool = True,
    made_by: str = "ragmeter evaluate --save",
) -> Store:
    """Open (creating and migrating as needed) the store at ``url`` (default:
    :func:`default_store_url`). Close it with ``.close()`` or use it as a context manager.

    ``create=False``: a SQLite store that does not exist yet is not created;
    :class:`~ragmeter.errors.NoStoreError` says where it was looked for and what makes it,
    ``made_by`` (what commands that only read the history use, so that listing it leaves no
    file behind)."""
    try:
        from ragmeter.store.sql import Store, create_engine
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
        if exc.name != "sqlalchemy":
            raise
        raise MissingExtraError(
            "the evaluation store", package="sqlalchemy", extra="store"
        ) from exc
    resolved = resolve_url(url) if url is not None else default_store_url()
    if not create and not store_exists(resolved):
        raise NoStoreError(f"no store at {_display_url(resolved)} yet ({made_by} creates it)")
    engine = create_engine(resolved)
    try:
        return Store(engine, url=_display_url(resolved))
    except StoreError:
        engine.dispose()
        raise
    except Exception as exc:
        engine.dispose()
        reason = getattr(exc, "orig", None) or exc  # the driver's words, without SQLAlchemy's
        raise StoreError(f"cannot open the store {_display_url(resolved)}: {reason}") from exc


def _display_url(url: str) -> str:
    """The URL without its password."""
    try:
        import sqlalchemy as sa

        return sa.make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url


@dataclass(frozen=True)
class SavedEvaluation:
    """Where an evaluation was saved: its id and the store's URL (password hidden)."""

    id: int
    url: str


def save_evaluation(
    evaluation: Evaluation,
    *,
    url: str | os.PathLike[str] | None = None,
    name: str | None = None,
    command: str = "api",
    parameters: Mapping[str, Any] | None = None,
    qrels: str | os.PathLike[str] | Qrels | None = None,
    runs: Sequence[str | os.PathLike[str] | Run | None] | None = None,
) -> SavedEvaluation:
    """Save an evaluation with the hashes of its inputs: what ``--save`` and the demo call.

    Args:
        evaluation: the result to save.
        url: the store (default: :func:`default_store_url`).
        name: the label to find it by.
        command: what produced it (``evaluate``, ``compare``, ``demo``).
        parameters: the settings to record.
        qrels: the qrels file (hashed by its bytes) or object (hashed by its content).
        runs: one file or object per run of ``evaluation``, in order (``None``: unknown).
    """
    run_hashes = None if runs is None else [_hash_of(r) for r in runs]
    with open_store(url) as store:
        saved = store.save_evaluation(
            evaluation,
            name=name,
            command=command,
            parameters=parameters,
            qrels_hash=_hash_of(qrels),
            run_hashes=run_hashes,
        )
        return SavedEvaluation(id=saved, url=store.url)


def save_to_default_store(
    evaluation: Evaluation,
    *,
    name: str | None = None,
    command: str = "demo",
    parameters: Mapping[str, Any] | None = None,
    qrels: str | os.PathLike[str] | Qrels | None = None,
    runs: Sequence[str | os.PathLike[str] | Run | None] | None = None,
) -> SavedEvaluation | None:
    """Save into the default store if it exists (see :func:`default_store_exists`), else do
    nothing and return ``None``: the hook of ``ragmeter demo``, which must never create a
    store the user did not ask for."""
    if not default_store_exists():
        return None
    return save_evaluation(
        evaluation,
        name=name,
        command=command,
        parameters=parameters,
        qrels=qrels,
        runs=runs,
    )


def _hash_of(item: str | os.PathLike[str] | Run | Qrels | None) -> str | None:
    if item is None:
        return None
    if isinstance(item, str | os.PathLike):
        return file_sha256(item)
    return content_sha256(item)


def __getattr__(name: str) -> Any:
    if name == "Store":
        from ragmeter.store.sql import Store

        return Store
    raise AttributeError(f"module 'ragmeter.store' has no attribute {name!r}")
