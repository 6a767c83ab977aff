"""Inputs an adversarial run used, through the command line: each ends in one
``ragmeter: error:`` line and exit status 2, or in the correct result, never in a
traceback, a silent loss or a wrong number with status 0.

* a partition folder holding a dangling link (an unmounted share), and empty partitions
  (a 0-byte TREC file, a Parquet file of no rows);
* compressed files expanding to one endless line ("decompression bombs"), generated here;
* a RAGAS CSV whose cell is longer than the csv module's default limit;
* a plugin that calls ``sys.exit`` while it is imported.

Integers past 64 bits are in ``test_huge_integers.py``, an ir_datasets dataset that cannot
be downloaded in ``test_irds_offline.py``, the readers' malformed files in
``test_malformed.py``.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma
import zlib
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.io.readers import read_run, write_run

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
RUN, DENSE, QRELS = (EXAMPLES / n for n in ("run_bm25.txt", "run_dense.txt", "qrels.txt"))

runner = CliRunner()


def _invoke(*args: str | Path) -> tuple[int, str, str]:
    done = runner.invoke(app, [str(a) for a in args])
    return done.exit_code, done.stdout, done.stderr


def _one_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert line.startswith("ragmeter: error:"), line
    for word in words:
        assert word in line, line


def _partitioned(tmp: Path) -> Path:
    """The example BM25 run cut into three partitions by query."""
    folder = tmp / "bm25"
    folder.mkdir()
    lines = RUN.read_text().splitlines(keepends=True)
    queries = list(dict.fromkeys(line.split()[0] for line in lines))
    for i in range(3):
        own = set(queries[i::3])
        (folder / f"part-{i:04d}.txt").write_text(
            "".join(line for line in lines if line.split()[0] in own)
        )
    return folder


def _means(*args: str | Path) -> dict[str, float]:
    code, out, err = _invoke("evaluate", *args, "--qrels", QRELS, "-m", "ndcg@10", "-f", "json")
    assert code == 0, err
    return {k: v["mean"] for k, v in json.loads(out)["runs"][0]["metrics"].items()}


# -- partitions ------------------------------------------------------------------------------


def test_a_dangling_partition_link_is_an_error(tmp_path: Path) -> None:
    folder = _partitioned(tmp_path)
    (folder / "part-0001.txt").unlink()
    (folder / "part-0001.txt").symlink_to(tmp_path / "unmounted" / "part-0001.txt")
    code, _, err = _invoke("evaluate", folder, "--qrels", QRELS)
    _one_error(code, err, str(folder / "part-0001.txt"), "does not exist")


def test_empty_partitions_hold_no_queries(tmp_path: Path) -> None:
    folder = _partitioned(tmp_path)
    (folder / "part-0003.txt").write_bytes(b"")
    assert _means(folder) == _means(RUN)
    parquet = tmp_path / "parquet"
    parquet.mkdir()
    for i, part in enumerate(sorted(folder.glob("part-000[0-2].txt"))):
        write_run(read_run(part), parquet / f"part-{i}.parquet")
    schema = pq.read_schema(parquet / "part-0.parquet")
    pq.write_table(schema.empty_table(), parquet / "part-3.parquet")
    assert _means(parquet) == _means(RUN)


# -- decompression bombs -----------------------------------------------------------------------


def _endless(compress: Callable[[], object], head: bytes, size: int) -> bytes:
    """``head`` then ``size`` bytes without a newline, compressed a MiB at a time."""
    packer = compress()
    block = b"d" * (1 << 20)
    parts = [packer.compress(head)]  # type: ignore[attr-defined]
    parts += [packer.compress(block) for _ in range(size >> 20)]  # type: ignore[attr-defined]
    return b"".join([*parts, packer.flush()])  # type: ignore[attr-defined]


BOMBS: dict[str, Callable[[], object]] = {
    ".gz": lambda: zlib.compressobj(9, zlib.DEFLATED, 31),
    ".bz2": lambda: bz2.BZ2Compressor(9),
    ".xz": lzma.LZMACompressor,
}


@pytest.mark.parametrize("suffix", list(BOMBS))
@pytest.mark.parametrize("role", ["run", "qrels"])
def test_a_decompression_bomb_is_one_error(
    suffix: str, role: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "8MiB")
    head = b"q1 Q0 " if role == "run" else b"q1 0 "
    bomb = tmp_path / f"bomb.txt{suffix}"
    bomb.write_bytes(_endless(BOMBS[suffix], head, 48 << 20))
    run, qrels = (bomb, QRELS) if role == "run" else (RUN, bomb)
    code, _, err = _invoke("evaluate", run, "--qrels", qrels)
    _one_error(code, err, str(bomb), "line 1", "longer than 8 MiB")


def test_a_small_gzip_of_a_long_but_allowed_line_is_read(tmp_path: Path) -> None:
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(RUN.read_bytes()))
    assert _means(packed) == _means(RUN)


# -- long CSV cells --------------------------------------------------------------------------


def test_a_ragas_csv_cell_of_33_passages_is_read(tmp_path: Path) -> None:
    passages = [f"passage {i}: " + "x" * 4_500 for i in range(33)]
    path = tmp_path / "ragas.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["user_input", "retrieved_contexts", "reference_contexts"])
        writer.writerow(["q", repr(passages), repr([passages[4]])])
    code, out, err = _invoke("evaluate", path, "-m", "mrr", "-f", "json")
    assert code == 0, err
    # the one relevant passage at rank 5: reciprocal rank 1/5
    assert json.loads(out)["runs"][0]["metrics"]["mrr"]["mean"] == pytest.approx(0.2)


# -- a plugin ending the process -------------------------------------------------------------


@pytest.mark.parametrize("call", ["sys.exit(0)", "sys.exit()", "raise SystemExit('bye')"])
def test_a_plugin_calling_sys_exit_is_a_plugin_failure(call: str, tmp_path: Path) -> None:
    """``sys.exit(0)`` at import ended every command with status 0 and no output: a gate
    (``check``) that fails without the plugin passed with it."""
    plugin = tmp_path / "quitter.py"
    plugin.write_text(f"import sys\n{call}\n")
    gate = ["check", DENSE, "--qrels", QRELS, "--baseline", RUN]
    gate += ["--fail-if", "ndcg@10 drop > 0.01 significant"]
    assert _invoke(*gate)[0] == 3  # the gate fails without the plugin
    code, _, err = _invoke("--plugin", plugin, *gate)
    _one_error(code, err, "quitter.py", "SystemExit")
    module = tmp_path / "quitter_module.py"
    module.write_text(f"import sys\n{call}\n")
    code, _, err = _invoke("--plugin", str(module), "evaluate", RUN, "--qrels", QRELS)
    _one_error(code, err, "SystemExit")


def test_a_plugin_module_calling_sys_exit_is_a_plugin_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "quitting_measures.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("RAGMETER_PLUGINS", "quitting_measures")
    code, _, err = _invoke("evaluate", RUN, "--qrels", QRELS)
    _one_error(code, err, "quitting_measures", "SystemExit")


# -- memory ------------------------------------------------------------------------------------


def test_exhausted_memory_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr("ragmeter.io.readers.read_qrels", no_memory)
    code, _, err = _invoke("evaluate", RUN, "--qrels", QRELS)
    _one_error(code, err, "out of memory")
