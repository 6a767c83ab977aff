"""ragmeter's one data folder (platformdirs), its fallback to the folder of earlier versions,
and that every writer of state uses it: the default store, the judge's cache, the label
databases; and that reading the history creates nothing."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.core import datadir
from ragmeter.core.datadir import LegacyDataDirWarning, data_dir, legacy_data_dir

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home without XDG_DATA_HOME, RAGMETER_DATA_DIR or RAGMETER_STORE."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("XDG_DATA_HOME", "RAGMETER_DATA_DIR", "RAGMETER_STORE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(datadir, "_warned", set())
    return tmp_path / "home"


def test_the_platform_folder_on_linux(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the XDG layout is Linux's")
    assert data_dir() == home / ".local" / "share" / "ragmeter"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG spec: absolute only
    assert data_dir() == home / ".local" / "share" / "ragmeter"
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg"))
    assert data_dir() == home / "xdg" / "ragmeter"
    assert not (home / "xdg").exists()  # looking for it creates nothing


def test_the_environment_variable_comes_first(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg"))
    monkeypatch.setenv("RAGMETER_DATA_DIR", str(home / "mine"))
    assert data_dir() == home / "mine"


def test_the_folder_of_earlier_versions_is_found_once(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # macOS and Windows: platformdirs' folder differs from the old ~/.local/share/ragmeter
    new = home / "Library" / "Application Support" / "ragmeter"
    monkeypatch.setattr(datadir, "platform_data_dir", lambda: new)
    old = legacy_data_dir()
    assert old == home / ".local" / "share" / "ragmeter"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert data_dir() == new  # no old folder: the new one, silently
    old.mkdir(parents=True)
    (old / "store.db").write_bytes(b"")
    with pytest.warns(LegacyDataDirWarning, match="earlier ragmeter version"):
        assert data_dir() == old
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per process
        assert data_dir() == old
    from ragmeter.store import default_store_url

    assert default_store_url() == f"sqlite:///{old / 'store.db'}"
    new.mkdir(parents=True)  # moved (or created): the new folder wins
    assert data_dir() == new


def test_every_writer_uses_the_data_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sqlalchemy", reason="the store extra is needed")
    monkeypatch.setenv("RAGMETER_DATA_DIR", str(home / "data"))
    monkeypatch.chdir(home.parent)
    from ragmeter.judges.config import configured_cache
    from ragmeter.store import default_store_url
    from ragmeter.web.config import default_labels

    assert default_store_url() == f"sqlite:///{home / 'data' / 'store.db'}"
    assert configured_cache(None) == home / "data" / "judgments.sqlite"
    assert default_labels(None) == home / "data" / "labels" / "example.db"
    assert default_labels(home.parent / "runs" / "bm25.txt").parent == home / "data" / "labels"
    # an earlier version's cache in the working directory is still used (a run resumes)
    Path("ragmeter-judgments.sqlite").write_bytes(b"")
    assert configured_cache(None) == Path("ragmeter-judgments.sqlite")


def test_listing_the_history_creates_no_store(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sqlalchemy", reason="the store extra is needed")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg"))
    runner = CliRunner()
    listed = runner.invoke(app, ["history"])
    assert listed.exit_code == 0, listed.output
    assert "no store at" in listed.output and "evaluate --save" in listed.output
    as_json = runner.invoke(app, ["history", "-f", "json"])
    assert as_json.exit_code == 0 and '"evaluations": []' in as_json.output
    shown = runner.invoke(app, ["history", "show", "1"])
    assert shown.exit_code == 2 and "no store at" in shown.output
    assert runner.invoke(app, ["history", "delete", "1"]).exit_code == 2
    assert not (home / "xdg").exists()
    # so the demo, which saves only into an existing store, still saves nothing
    from ragmeter.store import default_store_exists

    assert default_store_exists() is False


def test_the_judge_says_where_its_cache_is(tmp_path: Path) -> None:
    """The cache path is printed at start (a dry run here: nothing is sent)."""
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "text": "capital of France"}\n')
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "d1", "text": "Paris is the capital of France."}\n')
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    env = {"RAGMETER_DATA_DIR": str(tmp_path / "data")}
    args = ["judge", "relevance", "--run", str(run), "--queries", str(queries)]
    args += ["--corpus", str(corpus), "--out", str(tmp_path / "out.txt"), "--dry-run"]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    done = subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**_env(), **env},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"judgment cache: {tmp_path / 'data' / 'judgments.sqlite'}" in done.stderr
    assert not list(tmp_path.glob("*.sqlite"))  # nothing in the working directory


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(REPO / "src")}
