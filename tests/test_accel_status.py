"""``ragmeter --version`` names the accelerator; a large input on the pure path warns once."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import _accel
from ragmeter.cli import app
from ragmeter.io.readers import read_run

SRC = Path(__file__).resolve().parents[1] / "src"


def _version(pure: bool) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("RAGMETER_PURE", None)
    if pure:
        env["RAGMETER_PURE"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "ragmeter", "--version"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


def test_version_names_the_pure_path_when_forced() -> None:
    from ragmeter import __version__

    out = _version(pure=True)
    assert out.splitlines()[0] == f"ragmeter {__version__}"
    assert "C accelerator: not in use" in out and "RAGMETER_PURE is set" in out


def test_version_says_when_the_accelerator_is_in_use() -> None:
    if _accel.native is None:
        pytest.skip("the C accelerator is not built here (or RAGMETER_PURE is set)")
    assert "C accelerator: in use" in _version(pure=False)


def test_version_option_in_process() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("ragmeter ")
    assert "C accelerator:" in result.output


def _write_run(path: Path, lines: int) -> None:
    path.write_text("".join(f"q{i % 7} Q0 d{i} {i} {-i} t\n" for i in range(lines)))


def test_large_input_on_the_pure_path_warns_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_file = tmp_path / "run.txt"
    _write_run(run_file, 50)
    monkeypatch.setattr(_accel, "native", None)
    monkeypatch.setattr(_accel, "pure_reason", "test")
    monkeypatch.setattr(_accel, "LARGE_INPUT_ROWS", 50)
    monkeypatch.setattr(_accel, "_warned", False)
    with pytest.warns(_accel.PurePathWarning, match=r"run\.txt: 50 rows read without the C"):
        read_run(run_file)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_run(run_file)  # once per process


def test_small_input_or_the_accelerator_does_not_warn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_file = tmp_path / "run.txt"
    _write_run(run_file, 49)
    monkeypatch.setattr(_accel, "LARGE_INPUT_ROWS", 50)
    monkeypatch.setattr(_accel, "_warned", False)
    monkeypatch.setattr(_accel, "native", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_run(run_file)  # below the threshold
        monkeypatch.setattr(_accel, "native", object())
        _accel.check_large_input(60, "x")  # the accelerator is in use
