"""When the system refuses a write: every command ends with one ``ragmeter: error:`` line
naming the path and status 2, at once, and leaves no half-written file; a closed pipe on
stdout ends a command quietly (status 141, nothing on stderr)."""

from __future__ import annotations

import errno
import os
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "examples"
RUN = str(EXAMPLES / "run_bm25.txt")
QRELS = str(EXAMPLES / "qrels.txt")
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "120"}


def _invoke(*args: str) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    result = CliRunner().invoke(app, list(args))
    elapsed = time.perf_counter() - start
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.stdout, result.stderr, elapsed


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragmeter: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_output_into_a_missing_directory(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.json"
    code, _, err, elapsed = _invoke(
        "evaluate", RUN, "--qrels", QRELS, "-f", "json", "-o", str(target)
    )
    line = _one_error_line(err)
    assert code == 2 and str(target) in line and "does not exist" in line
    assert elapsed < 5  # refused at once (the evaluation itself takes most of it)


def _deny_writes(monkeypatch: pytest.MonkeyPatch, code: int, folder: Path) -> None:
    """Opening a file in ``folder`` for writing fails with ``code`` (as a read-only directory,
    a full disk or the file size limit would make it fail)."""
    real_open = Path.open

    def failing_open(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if self.parent == folder and set(mode) & set("wax+"):
            raise OSError(code, os.strerror(code), str(self))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", failing_open)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EACCES, "Permission denied"),
        (errno.EROFS, "Read-only file system"),
        (errno.ENOSPC, "the disk is full"),
        (errno.EFBIG, "file size limit"),
    ],
)
def test_a_refused_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    _deny_writes(monkeypatch, code, tmp_path)
    status, _, err, _ = _invoke("evaluate", RUN, "--qrels", QRELS, "-f", "csv", "-o", str(target))
    line = _one_error_line(err)
    assert status == 2 and str(target) in line and words in line and "nothing was written" in line
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temporary file left


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_output_into_a_read_only_directory(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, _, err, _ = _invoke("evaluate", RUN, "--qrels", QRELS, "-o", str(folder / "x.txt"))
    finally:
        folder.chmod(0o755)
    assert code == 2 and "Permission denied" in _one_error_line(err)


def test_demo_out_through_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("")
    code, _, err, _ = _invoke("demo", "--out", str(blocker / "sub"))
    line = _one_error_line(err)
    assert code == 2 and str(blocker) in line and "Not a directory" in line


def _limited(limit: int) -> Any:
    def set_limit() -> None:  # Python ignores SIGXFSZ: a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return set_limit


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as on Linux")
def test_the_file_size_limit_on_the_store_leaves_it_intact(tmp_path: Path) -> None:
    """A real limit (``ulimit -f``): the save that passes it is rolled back and said so."""
    db = tmp_path / "store.db"
    url = f"sqlite:///{db}"
    cmd = [sys.executable, "-m", "ragmeter", "evaluate", RUN, "--qrels", QRELS, "-f", "csv"]
    first = subprocess.run([*cmd, "--store", url], env=ENV, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    # the log of the save passes the limit (the shared-memory index, 32 KiB, fits)
    measures = [arg for k in range(1, 41) for arg in ("-m", f"P@{k}")]
    done = subprocess.run(
        [*cmd, str(EXAMPLES / "run_dense.txt"), "--per-query", "--store", url, *measures],
        env=ENV,
        capture_output=True,
        text=True,
        preexec_fn=_limited(40 << 10),
    )
    line = _one_error_line(done.stderr)
    assert done.returncode == 2 and "store is intact" in line and str(db) in line
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT COUNT(*) FROM evaluations").fetchone() == (1,)


def _closed_pipe(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``ragmeter ARGS`` with stdout a pipe whose reader is gone before it writes
    (``ragmeter … | head -0``)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "ragmeter", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            env=ENV,
            timeout=120,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args",
    [
        ("trec-eval", "-q", QRELS, RUN),
        ("evaluate", RUN, "--qrels", QRELS, "--per-query"),  # a rich table
        ("evaluate", RUN, "--qrels", QRELS, "--per-query", "-f", "csv"),
        ("--version",),
        ("measures",),
    ],
    ids=["trec-eval", "table", "csv", "version", "measures"],
)
def test_a_closed_pipe_ends_quietly(args: tuple[str, ...]) -> None:
    done = _closed_pipe(*args)
    assert done.stderr == b""
    assert done.returncode == 141
