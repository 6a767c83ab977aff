"""``--qrels irds:DATASET`` whose files are neither in ir_datasets' cache nor downloadable
(no network): one line naming the dataset, that it could not be downloaded, and where
ir_datasets keeps its cache; not ir_datasets' download traceback.

ir_datasets is stood in for by a module whose dataset fails as ir_datasets' downloads do
(``requests``' ``ConnectionError``, or its ``RuntimeError("All download sources failed")``
when every mirror failed), so the test runs with or without ir_datasets installed."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.io.irds import read_irds_docs, read_irds_queries
from ragmeter.io.readers import read_qrels

DATASET = "msmarco-passage/dev/small"


def _no_network() -> Exception:
    try:
        import requests
    except ImportError:  # pragma: no cover - requests comes with ir_datasets
        return OSError("[Errno -3] Temporary failure in name resolution")
    return requests.exceptions.ConnectionError(
        "HTTPSConnectionPool(host='msmarco.z22.web.core.windows.net', port=443): Max retries "
        "exceeded with url: /msmarcoranking/collectionandqueries.tar.gz"
    )


class _Offline:
    """A dataset whose files are not cached and cannot be downloaded."""

    def __init__(self, failure: Exception) -> None:
        self.failure = failure

    def has_qrels(self) -> bool:
        return True

    def _fail(self) -> Any:
        raise self.failure
        yield  # a generator, as ir_datasets' iterators are

    qrels_iter = queries_iter = docs_iter = _fail


@pytest.fixture(params=["connection", "all mirrors"])
def offline(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Path:
    failure = _no_network()
    if request.param == "all mirrors":
        failure = RuntimeError("All download sources failed", [("mirror", failure)])
    fake = types.ModuleType("ir_datasets")
    fake.load = lambda name: _Offline(failure)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ir_datasets", fake)
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-cache"))
    return tmp_path / "irds-cache"


def test_an_undownloadable_dataset_is_one_line(offline: Path) -> None:
    spec = f"irds:{DATASET}"
    for read in (read_qrels, read_irds_queries, read_irds_docs):
        with pytest.raises(InputError) as caught:
            read(spec)
        message = str(caught.value)
        assert caught.value.source == spec
        assert f"'{DATASET}'" in message and "could not be downloaded" in message
        assert str(offline) in message and "\n" not in message


def test_the_command_line_prints_it_as_an_error(offline: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 1.0 r\n")
    done = CliRunner().invoke(app, ["evaluate", str(run), "--qrels", f"irds:{DATASET}"])
    assert done.exit_code == 2, done.output
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("ragmeter: error: irds:") and "could not be downloaded" in line
