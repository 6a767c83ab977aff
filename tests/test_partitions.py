"""Runs and qrels partitioned by query (a folder or a glob of files), evaluated in this
process one partition at a time and as Ray tasks on a local Ray cluster: the per-query values,
aggregates, counts and warnings are those of the in-process evaluation of the same content,
exactly.

The random runs have ties, duplicate rows, queries without judgments and judged queries
absent from the run; each is written whole (one TREC file) and cut at random into partitions
(TREC or Parquet). The expected values are the in-process evaluation's of the whole file.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import InputError, MissingExtraError
from ragmeter.evaluation import Evaluation
from ragmeter.evaluation.partitioned import Engine, run_slices
from ragmeter.io.partitions import PartitionError, Partitions, is_partitioned
from ragmeter.io.readers import read_qrels, read_run, write_qrels, write_run
from ragmeter.store.provenance import file_sha256

MEASURES = [
    "ndcg@10",
    "ndcg",
    "map",
    "recall@5",
    "mrr",
    "P@3",
    "num_rel_ret",
    "num_ret",
    "gm_map",
    "bpref",
    "err@5",
    "infap",
    "ra_nwg@5",
    "proc@5",
    "judged@5",
    "num_queries",
]
GRADES = "-1:1,0:1,1:3,2:4,3:5"

runner = CliRunner()


def _data(seed: int, tmp: Path, *, parts: int, fmt: str = "trec") -> tuple[Path, Path, Path]:
    """A random TREC run file, its qrels file, and the run cut into ``parts`` partitions
    (``fmt``: TREC files, or Parquet written from them) in the folder returned."""
    rng = random.Random(seed)
    queries = [f"q{i}" for i in range(rng.randint(parts, 40))]
    judged = [q for q in queries if rng.random() < 0.8] + ["x0", "x1"]  # x: never retrieved
    run_q = [q for q in queries if rng.random() < 0.9]
    if len(run_q) < parts:  # a query at least in each partition
        run_q = queries[:parts]
    lines: dict[str, list[str]] = {}
    for q in run_q:
        lines[q] = []
        for r in range(rng.randint(1, 15)):
            doc = f"d{rng.randint(0, 20)}"  # repeats: duplicate rows
            score = rng.choice([1.0, 2.0, round(rng.uniform(0, 5), 2)])  # ties
            lines[q].append(f"{q} Q0 {doc} {r + 1} {score} tag")
    qrels_lines = [
        f"{q} 0 d{d} {rng.choice([-1, 0, 0, 1, 2, 3])}"
        for q in judged
        for d in rng.sample(range(25), rng.randint(1, 8))
    ]
    run_path, qrels_path = tmp / "whole.txt", tmp / "qrels.txt"
    run_path.write_text("".join(f"{line}\n" for q in run_q for line in lines[q]))
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    folder = tmp / "run"
    folder.mkdir()
    shuffled = list(run_q)
    rng.shuffle(shuffled)
    cuts = sorted(rng.sample(range(1, len(shuffled)), parts - 1)) if parts > 1 else []
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(shuffled)], strict=True)):
        text = "".join(f"{line}\n" for q in shuffled[a:b] for line in lines[q])
        part = folder / f"part-{i:04d}.txt"
        part.write_text(text)
        if fmt == "parquet":
            write_run(read_run(part), folder / f"part-{i:04d}.parquet")
            part.unlink()
    return run_path, qrels_path, folder


def _same_values(a: Evaluation, b: Evaluation) -> None:
    """Per-query values bit for bit, the same queries, counts and aggregates."""
    assert len(a.runs) == len(b.runs)
    for x, y in zip(a.runs, b.runs, strict=True):
        assert x.query_ids.tolist() == y.query_ids.tolist()
        assert [str(m) for m in x.measures] == [str(m) for m in y.measures]
        assert np.array_equal(x.values, y.values, equal_nan=True)
        assert (x.n_missing, x.n_skipped, x.n_unjudged_queries) == (
            y.n_missing,
            y.n_skipped,
            y.n_unjudged_queries,
        )
        assert x.means() == y.means()


def _same(a: Evaluation, b: Evaluation) -> None:
    _same_values(a, b)
    assert [r.name for r in a.runs] == [r.name for r in b.runs]
    assert a.warnings == b.warnings


def _options(missing: str) -> dict[str, object]:
    return {"missing": missing, "grade_map": GRADES}


# -- partitions in this process ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_partitions_evaluate_as_the_whole_file(tmp_path: Path, seed: int, missing: str) -> None:
    run_path, qrels_path, folder = _data(seed, tmp_path, parts=1 + seed % 4)
    qrels = read_qrels(qrels_path)
    whole = ragmeter.evaluate(read_run(run_path), qrels, MEASURES, **_options(missing))
    parted = ragmeter.evaluate(str(folder), qrels, MEASURES, **_options(missing))
    _same_values(whole, parted)
    assert parted.run.name == "run"
    # the partitions joined in memory: the same run, the same warnings
    joined = ragmeter.evaluate(read_run(folder), qrels, MEASURES, **_options(missing))
    _same(joined, parted)
    # a glob of the same files; the qrels as a path
    globbed = ragmeter.evaluate(
        str(folder / "part-*.txt"), str(qrels_path), MEASURES, **_options(missing)
    )
    _same_values(whole, globbed)
    assert globbed.run.name == str(folder / "part-*.txt")


@pytest.mark.parametrize("seed", range(3))
def test_parquet_partitions_and_partitioned_qrels(tmp_path: Path, seed: int) -> None:
    run_path, qrels_path, folder = _data(seed, tmp_path, parts=3, fmt="parquet")
    opts = _options("zero")
    whole = ragmeter.evaluate(read_run(run_path), read_qrels(qrels_path), MEASURES, **opts)
    _same_values(whole, ragmeter.evaluate(folder, qrels_path, MEASURES, **opts))
    # qrels cut in two partitions by query
    qrels = read_qrels(qrels_path)
    qdir = tmp_path / "qrels"
    qdir.mkdir()
    ids = qrels.query_ids.tolist()
    for i, chosen in enumerate((ids[::2], ids[1::2])):
        sub = ragmeter.Qrels.from_dict({q: v for q, v in qrels.to_dict().items() if q in chosen})
        write_qrels(sub, qdir / f"part-{i}.parquet")
    joined = read_qrels(qdir)
    assert joined.query_ids.tolist() == ids and joined.to_dict() == qrels.to_dict()
    _same_values(whole, ragmeter.evaluate(folder, qdir, MEASURES, **opts))


def test_runs_named_by_a_mapping(tmp_path: Path) -> None:
    run_path, qrels_path, folder = _data(2, tmp_path, parts=2)
    runs = {"parted": folder, "whole": run_path, "memory": read_run(run_path)}
    named = ragmeter.evaluate(runs, qrels_path, ["map"])
    assert [r.name for r in named.runs] == ["parted", "whole", "memory"]
    _same_values(
        named, ragmeter.evaluate([folder, run_path, read_run(run_path)], qrels_path, ["map"])
    )
    assert any("run 'parted'" in w for w in named.warnings) or not any(
        "run '" in w for w in named.warnings
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), order_seed=st.integers(0, 10_000))
def test_pieces_merge_alike_in_any_order(seed: int, order_seed: int) -> None:
    """Pieces come back from a cluster in any order: merged in piece order all the same."""
    import tempfile

    from ragmeter.evaluation import EvalInputs, resolve_measures
    from ragmeter.evaluation.partitioned import PieceMerger, as_source, evaluate_piece, pieces

    with tempfile.TemporaryDirectory() as tmp:
        _, qrels_path, folder = _data(seed, Path(tmp), parts=3)
        inputs = EvalInputs(qrels=read_qrels(qrels_path), grade_map=GRADES)
        measures = resolve_measures(MEASURES, default_k=5)
        source = as_source(folder)
        values = [
            (p.index, evaluate_piece(p, inputs, measures)) for p in pieces(source, 0, slices=1)
        ]
        results = []
        for order in (values, random.Random(order_seed).sample(values, len(values))):
            merger = PieceMerger(source, inputs, measures)
            for index, block in order:
                merger.add(index, block)
            results.append(merger.result(len(values)))
    (a, wa), (b, wb) = results
    assert np.array_equal(a.values, b.values, equal_nan=True) and wa == wb


def test_joined_run_is_the_whole_file(tmp_path: Path) -> None:
    run_path, _, folder = _data(7, tmp_path, parts=4)
    whole, joined = read_run(run_path), read_run(folder)
    assert joined.name == "run"
    assert joined.query_ids.tolist() == whole.query_ids.tolist()
    assert joined.offsets.tolist() == whole.offsets.tolist()
    assert joined.doc_ids.to_pylist() == whole.doc_ids.to_pylist()
    assert joined.scores.tolist() == whole.scores.tolist()


def test_listing_order_hidden_files_and_hive_folders(tmp_path: Path) -> None:
    root = tmp_path / "run"
    for name in ("b=2/part-1.txt", "b=10/part-0.txt", "a/x.txt", "_SUCCESS", ".part.crc"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("q1 Q0 d1 1 1.0 t\n" if "part" in name else "")
    (root / "_tmp").mkdir()
    (root / "_tmp" / "junk.txt").write_text("garbage")
    parts = Partitions.find(root)
    assert [p.relative_to(root).as_posix() for p in parts.paths] == [
        "a/x.txt",
        "b=10/part-0.txt",
        "b=2/part-1.txt",
    ]
    assert parts.format == "trec" and parts.name == "run"
    assert is_partitioned(root) and is_partitioned(str(root / "*.txt"))
    assert not is_partitioned(root / "a" / "x.txt")


def test_partition_errors_name_the_files(tmp_path: Path) -> None:
    qrels = ragmeter.Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(
        PartitionError, match="folder of partition files \\(this one holds none\\)"
    ) as info:
        ragmeter.evaluate(empty, qrels, ["map"])
    assert str(empty) in str(info.value)
    with pytest.raises(PartitionError, match="no file matches"):
        ragmeter.evaluate(str(tmp_path / "nothing-*.parquet"), qrels, ["map"])
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    write_run(ragmeter.Run.from_dict({"q2": {"d2": 1.0}}), mixed / "b.parquet")
    with pytest.raises(
        PartitionError, match=r"mix formats: .*b\.parquet \(parquet\), .*a\.txt \(trec\)"
    ):
        ragmeter.evaluate(mixed, qrels, ["map"])
    for query in ("q1", "zz"):  # judged, and without judgments
        twice = tmp_path / f"twice-{query}"
        twice.mkdir()
        (twice / "p0.txt").write_text(f"{query} Q0 d1 1 1.0 t\nq2 Q0 d2 1 1.0 t\n")
        (twice / "p1.txt").write_text(f"{query} Q0 d3 1 2.0 t\n")
        message = rf"query '{query}' is in two partitions, .*p0\.txt and .*p1\.txt"
        with pytest.raises(PartitionError, match=message):
            ragmeter.evaluate(twice, qrels, ["map"])
        with pytest.raises(PartitionError, match=message):
            read_run(twice)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "p0.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    (bad / "p1.txt").write_text("q2 Q0 d2 1 1.0 t\nq2 Q0 d3 2 nan t\n")
    with pytest.raises(InputError) as err:
        ragmeter.evaluate(bad, qrels, ["map"])
    assert err.value.source == str(bad / "p1.txt") and err.value.line == 2


@pytest.mark.parametrize("seed", range(4))
def test_partitions_in_forked_workers_are_the_in_process_evaluation(
    tmp_path: Path, seed: int
) -> None:
    """``workers=2`` evaluates the partitions in two forked processes: the same values,
    warnings and errors as one process, and as the whole file."""
    run_path, qrels_path, folder = _data(seed, tmp_path, parts=2 + seed % 5)
    qrels = read_qrels(qrels_path)
    whole = ragmeter.evaluate(read_run(run_path), qrels, MEASURES, **_options("zero"))
    one = ragmeter.evaluate(str(folder), qrels, MEASURES, workers=1, **_options("zero"))
    two = ragmeter.evaluate(str(folder), qrels, MEASURES, workers=2, **_options("zero"))
    _same(one, two)
    _same_values(whole, two)


def test_partitions_fork_only_when_asked_or_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[str]
) -> None:
    import ragmeter.evaluation.forking as forking
    import ragmeter.evaluation.partitioned as partitioned

    _, qrels_path, folder = _data(1, tmp_path, parts=3)
    qrels = read_qrels(qrels_path)
    ragmeter.evaluate(str(folder), qrels, ["map"])  # small: this process
    assert forks == []
    ragmeter.evaluate(str(folder), qrels, ["map"], workers=2)
    assert forks == ["fork"]
    monkeypatch.setattr(partitioned, "PARALLEL_BYTES", 1)
    ragmeter.evaluate(str(folder), qrels, ["map"])
    assert forks == ["fork", "fork"][: 1 + (forking.default_workers() > 1)]


def _broken_partitions(tmp: Path) -> tuple[ragmeter.Qrels, Path, Path]:
    """Qrels, a folder with query q1 in two partitions, and one with a bad line (p1.txt:2)."""
    qrels = ragmeter.Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
    twice = tmp / "twice"
    twice.mkdir()
    (twice / "p0.txt").write_text("q1 Q0 d1 1 1.0 t\nq2 Q0 d2 1 1.0 t\n")
    (twice / "p1.txt").write_text("q1 Q0 d3 1 2.0 t\n")
    bad = tmp / "bad"
    bad.mkdir()
    (bad / "p0.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    (bad / "p1.txt").write_text("q2 Q0 d2 1 1.0 t\nq2 Q0 d3 2 nan t\n")
    return qrels, twice, bad


@pytest.mark.parametrize("options", [{"workers": 2}, {"workers": 1}])
def test_partition_errors_in_forked_workers(tmp_path: Path, options: dict[str, Any]) -> None:
    qrels, twice, bad = _broken_partitions(tmp_path)
    with pytest.raises(PartitionError, match=r"query 'q1' is in two partitions"):
        ragmeter.evaluate(twice, qrels, ["map"], **options)
    with pytest.raises(InputError) as err:
        ragmeter.evaluate(bad, qrels, ["map"], **options)
    assert err.value.source == str(bad / "p1.txt") and err.value.line == 2


def _dangling(tmp: Path, fmt: str = "trec") -> tuple[Path, Path, Path]:
    """The run, qrels and partition folder of ``_data(7, …)``, the folder's second partition
    replaced by a link to a file that is not there (an unmounted share)."""
    tmp.mkdir(exist_ok=True)
    run_path, qrels_path, folder = _data(7, tmp, parts=3, fmt=fmt)
    second = sorted(folder.iterdir())[1]
    second.unlink()
    second.symlink_to(tmp / "unmounted" / second.name)
    return run_path, qrels_path, folder


def test_a_partition_that_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    """A dangling link in a partition folder was left out (its judged queries scored as
    absent, exit 0): a listed name that is not a readable file is an error naming it."""
    _, qrels_path, folder = _dangling(tmp_path)
    link = sorted(folder.iterdir())[1]
    with pytest.raises(PartitionError, match="link to a file that does not exist") as info:
        Partitions.find(folder)
    assert info.value.source == str(link)
    with pytest.raises(PartitionError):
        ragmeter.evaluate(folder, qrels_path, ["ndcg@10"])
    with pytest.raises(PartitionError) as info:
        Partitions.find(str(folder / "part-*.txt"))  # the glob matches the link too
    assert info.value.source == str(link)
    done = runner.invoke(app, ["evaluate", str(folder), "--qrels", str(qrels_path)])
    assert done.exit_code == 2 and str(link) in done.stderr
    # Spark's own names stay left out, whatever they are
    link.unlink()
    (folder / "_temporary").symlink_to(tmp_path / "gone")
    (folder / ".part-0001.txt.crc").symlink_to(tmp_path / "gone")
    assert len(Partitions.find(folder)) == 2


def test_a_partition_that_is_not_a_file_is_an_error(tmp_path: Path) -> None:
    import os

    _, _, folder = _data(7, tmp_path, parts=2)
    os.mkfifo(folder / "part-0002.txt")
    with pytest.raises(PartitionError, match="not a regular file") as info:
        Partitions.find(folder)
    assert info.value.source == str(folder / "part-0002.txt")
    (folder / "part-0002.txt").unlink()
    (tmp_path / "elsewhere").mkdir()
    (folder / "more").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(PartitionError, match="link to a folder") as info:
        Partitions.find(folder)
    assert info.value.source == str(folder / "more")


@pytest.mark.parametrize("fmt", ["trec", "parquet"])
def test_empty_partitions_contribute_no_queries(tmp_path: Path, fmt: str) -> None:
    """A 0-byte file, and a Parquet file of no rows (as Spark and Dask write for empty
    partitions), hold no queries, with a note: the values are the whole file's."""
    run_path, qrels_path, folder = _data(9, tmp_path, parts=2, fmt=fmt)
    empty = folder / f"part-0002.{'txt' if fmt == 'trec' else 'parquet'}"
    if fmt == "trec":
        empty.write_bytes(b"")
    else:
        schema = pq.read_schema(folder / "part-0000.parquet")
        pq.write_table(schema.empty_table(), empty)
    qrels = read_qrels(qrels_path)
    got = ragmeter.evaluate(folder, qrels, MEASURES, **_options("zero"))
    _same_values(ragmeter.evaluate(read_run(run_path), qrels, MEASURES, **_options("zero")), got)
    note = f"partition {empty} is empty: it holds no queries"
    assert note in got.warnings
    assert note in read_run(folder).warnings
    for options in ({"workers": 2}, {"workers": 1}):
        forked = ragmeter.evaluate(folder, qrels, MEASURES, **_options("zero"), **options)
        _same(got, forked)
    # partitioned qrels too
    qrels_folder = tmp_path / "qrels"
    qrels_folder.mkdir()
    shutil.copy(qrels_path, qrels_folder / "part-0.txt")
    (qrels_folder / "part-1.txt").write_bytes(b"")
    both = read_qrels(qrels_folder)
    assert both.to_dict() == qrels.to_dict()
    assert f"partition {qrels_folder / 'part-1.txt'} is empty: it holds no queries" in both.warnings


def test_partitions_hash_by_their_list(tmp_path: Path) -> None:
    _, _, folder = _data(3, tmp_path, parts=3)
    first = file_sha256(folder)
    assert first.startswith("sha256:") and first == file_sha256(str(folder / "part-*.txt"))
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(folder, copy)
    assert file_sha256(copy) == first
    (copy / "_SUCCESS").write_text("")  # not a partition
    assert file_sha256(copy) == first
    with (copy / "part-0000.txt").open("a") as fh:
        fh.write("zz Q0 d1 1 1.0 t\n")
    assert file_sha256(copy) != first


def test_cli_evaluates_a_folder_as_the_whole_file(tmp_path: Path) -> None:
    run_path, qrels_path, folder = _data(4, tmp_path, parts=3)

    def per_query(path: Path, *extra: str) -> dict[str, object]:
        args = ["evaluate", str(path), "--qrels", str(qrels_path), "-m", "ndcg@10", "-m", "map"]
        done = runner.invoke(app, [*args, "--per-query", "-f", "json", *extra])
        assert done.exit_code == 0, done.stderr
        run = json.loads(done.stdout)["runs"][0]
        return {"per_query": run["per_query"], "metrics": run["metrics"]}

    assert per_query(folder) == per_query(run_path)
    done = runner.invoke(
        app, ["evaluate", str(folder), "--qrels", str(qrels_path), "--engine", "x"]
    )
    assert done.exit_code == 2 and "--engine 'x'" in done.stderr


# -- engines -------------------------------------------------------------------------------


def test_engine_parse() -> None:
    assert Engine.parse("local") == Engine("local") == Engine.parse(None)
    assert Engine.parse("ray") == Engine("ray", None)
    assert Engine.parse("ray=auto", workers=2) == Engine("ray", "auto", 2)
    assert Engine.parse("ray://head:10001") == Engine("ray", "ray://head:10001")
    assert Engine.parse("RAY=10.0.0.1:6379") == Engine("ray", "10.0.0.1:6379")
    for bad in ("spark", "ray=", "dask://x"):
        with pytest.raises(InputError, match="--engine"):
            Engine.parse(bad)
    with pytest.raises(InputError, match="--workers 0"):
        Engine.parse("ray", workers=0)


def test_run_slices_cover_the_run() -> None:
    run = ragmeter.Run.from_dict(
        {f"q{i}": {f"d{j}": float(j) for j in range(i + 1)} for i in range(7)}
    )
    slices = list(run_slices(run, 3))
    assert [s.n_queries for s in slices] == [2, 3, 2]
    merged: dict[str, dict[str, float]] = {}
    for s in slices:
        merged.update(s.to_dict())
    assert merged == run.to_dict()
    assert len(list(run_slices(run, 50))) == 7


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    with pytest.raises(MissingExtraError, match=r"\.\[ray\]"):
        ragmeter.evaluate(
            ragmeter.Run.from_dict({"q1": {"d1": 1.0}}),
            ragmeter.Qrels.from_dict({"q1": {"d1": 1}}),
            ["map"],
            engine="ray",
        )


def test_import_ragmeter_does_not_import_ray() -> None:
    code = (
        "import sys, ragmeter, ragmeter.evaluation.distributed, ragmeter.io.partitions; "
        "assert 'ray' not in sys.modules, 'ray imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_inputs_joined_per_run_stay_local(tmp_path: Path) -> None:
    _, qrels_path, folder = _data(1, tmp_path, parts=2)
    pool = read_run(folder)
    with pytest.raises(InputError, match="--engine ray evaluates runs in pieces, and a separate"):
        ragmeter.evaluate(folder, qrels_path, ["proc@5"], pool=pool, grade_map=GRADES, engine="ray")
    # in this process the partitions are joined: the same values as the joined run
    local = ragmeter.evaluate(folder, qrels_path, ["proc@5"], pool=pool, grade_map=GRADES)
    _same(
        local,
        ragmeter.evaluate(read_run(folder), qrels_path, ["proc@5"], pool=pool, grade_map=GRADES),
    )


# -- the Ray engine, on a local Ray cluster ------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def test_cli_engine_ray_starts_and_stops_its_own_cluster(tmp_path: Path) -> None:
    """The command as a user runs it: it starts a Ray instance with one CPU, gives the
    values of this process, and shuts the instance down (the command ends)."""
    import os

    run_path, qrels_path, folder = _data(5, tmp_path, parts=3, fmt="parquet")
    args = ["evaluate", "--qrels", str(qrels_path), "-m", "ndcg@10", "-m", "map", "--per-query"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    env.pop("RAY_ADDRESS", None)
    command = [sys.executable, "-m", "ragmeter", *args, str(folder), "-f", "json"]
    done = subprocess.run(
        [*command, "--engine", "ray", "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "RAY_NODE_IP_ADDRESS": "127.0.0.1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    local = runner.invoke(app, [*args, str(run_path), "-f", "json"])
    assert (
        json.loads(done.stdout)["runs"][0]["per_query"]
        == (json.loads(local.stdout)["runs"][0]["per_query"])
    )


PLUGIN = """
import numpy as np
import ragmeter

@ragmeter.define_measure("plugin_hits", cutoff="required")
def plugin_hits(r):
    \"\"\"hits@k = |D_k ∩ Rel|.\"\"\"
    return r.count(r.relevant).astype(float)
"""


def test_cli_engine_ray_knows_the_measures_of_a_plugin_file(tmp_path: Path) -> None:
    """A measure of a plugin loaded from a file (``--plugin FILE.py``) is evaluated by the Ray
    workers, which cannot import that file: the family travels with the measures. Its values
    are the number of relevant documents in the top 5, counted here from the files."""
    import os

    # q1: d1, d3 relevant in the top 5 (d7 at rank 6); q2: none (d2 judged 0); q3: d4 alone
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("q1 0 d1 1\nq1 0 d3 2\nq1 0 d7 1\nq2 0 d2 0\nq3 0 d4 3\n")
    ranked = {"q1": [1, 2, 3, 4, 5, 7], "q2": [2, 8], "q3": [9, 4, 5, 6, 1, 3]}
    run_path = tmp_path / "run.txt"
    run_path.write_text(
        "".join(
            f"{q} Q0 d{d} {r} {10 - r} t\n"
            for q, docs in ranked.items()
            for r, d in enumerate(docs)
        )
    )
    expected = {"q1": 2.0, "q2": 0.0, "q3": 1.0}
    plugin = tmp_path / "elsewhere" / "my_measures.py"
    plugin.parent.mkdir()
    plugin.write_text(PLUGIN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    env.pop("RAY_ADDRESS", None)
    args = ["--plugin", str(plugin), "evaluate", str(run_path), "--qrels", str(qrels_path)]
    args += ["-m", "plugin_hits@5", "--per-query", "-f", "json", "--engine", "ray"]
    done = subprocess.run(
        [sys.executable, "-m", "ragmeter", *args, "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "RAY_NODE_IP_ADDRESS": "127.0.0.1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    per_query = json.loads(done.stdout)["runs"][0]["per_query"]
    got = {q: values["plugin_hits@5"] for q, values in per_query.items()}
    assert got == expected


#: a ``sitecustomize`` module that kills (SIGKILL) the first Ray worker to evaluate a piece:
#: Python imports it at the start of every process, the command's Ray workers included
KILLER = """
import os, signal, sys

if "default_worker" in sys.argv[0]:  # a Ray worker, not the driver
    import ragmeter.evaluation.distributed as distributed

    evaluate_piece = distributed.evaluate_piece

    def killed_once(*args, **kwargs):
        try:
            os.close(os.open(os.environ["KILL_MARKER"], os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            if not os.environ.get("KILL_ALWAYS"):
                return evaluate_piece(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    distributed.evaluate_piece = killed_once
"""


def test_cli_engine_ray_output_stays_clean_when_a_worker_is_killed(tmp_path: Path) -> None:
    """A Ray worker killed (SIGKILL) during ``-f json``: the task is retried and stdout is
    the JSON alone (Ray's "(raylet) A worker died" lines went to stdout), the values those
    of this process."""
    import os

    run_path, qrels_path, folder = _data(5, tmp_path, parts=3, fmt="parquet")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(KILLER)
    paths = [str(site), str(ROOT / "src"), *sys.path]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "RAY_NODE_IP_ADDRESS": "127.0.0.1"}
    env.pop("RAY_ADDRESS", None)
    env["KILL_MARKER"] = str(tmp_path / "killed")
    args = ["-m", "ragmeter", "evaluate", str(folder), "--qrels", str(qrels_path)]
    args += ["-m", "ndcg@10", "-m", "map", "--per-query", "-f", "json"]
    done = subprocess.run(
        [sys.executable, *args, "--engine", "ray", "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert (tmp_path / "killed").exists()  # a worker was killed
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)  # nothing but the JSON
    local = runner.invoke(app, ["evaluate", str(run_path), "--qrels", str(qrels_path), *args[6:]])
    assert out["runs"][0]["per_query"] == json.loads(local.stdout)["runs"][0]["per_query"]
    # every try killed: Ray's retries run out, and the command says so in one line
    done = subprocess.run(
        [sys.executable, *args, "--engine", "ray", "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "KILL_ALWAYS": "1"},
    )
    assert done.returncode == 2 and done.stdout == "", done.stderr[-3000:]
    (error,) = [line for line in done.stderr.splitlines() if "ragmeter:" in line]
    assert error.startswith("ragmeter: error: --engine ray: a task failed after Ray's retries")
    assert "WorkerCrashedError" in error and "Traceback" not in done.stderr


def test_ray_messages_go_to_stderr_and_a_dead_node_is_said_once() -> None:
    """What Ray's driver prints goes to the sink (stderr); its report of this machine's dead
    raylet (after which Ray ends the process itself) gets one line of ragmeter's."""
    import io

    from ragmeter.evaluation.distributed import RayMessages

    sink = io.StringIO()
    messages = RayMessages(sink)
    print("(raylet) A worker died or was killed while executing a task", file=messages)
    assert "ragmeter" not in sink.getvalue()
    for _ in range(2):
        print("(raylet) Raylet is terminated. Termination is unexpected.", file=messages)
    out = sink.getvalue()
    assert out.startswith("(raylet) A worker died")
    assert out.count("ragmeter: error: --engine ray: the Ray node of this machine died") == 1


def test_a_ray_failure_after_the_retries_is_one_line() -> None:
    ray = pytest.importorskip("ray")
    from ragmeter.errors import RagmeterError
    from ragmeter.evaluation import distributed

    class Failing:
        exceptions = ray.exceptions

        def wait(self, pending: list[Any], num_returns: int) -> tuple[list[Any], list[Any]]:
            return pending[:1], pending[1:]

        def get(self, ref: Any) -> Any:
            raise ray.exceptions.WorkerCrashedError()

    with pytest.raises(RagmeterError, match="a task failed after Ray's retries") as caught:
        distributed._collect(Failing(), [object()], [])
    assert "WorkerCrashedError" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_ray_gives_the_in_process_evaluation(
    ray_cluster: object, tmp_path: Path, seed: int, missing: str
) -> None:
    fmt = "parquet" if seed % 2 else "trec"
    run_path, qrels_path, folder = _data(seed, tmp_path, parts=2 + seed, fmt=fmt)
    qrels = read_qrels(qrels_path)
    here = ragmeter.evaluate(folder, qrels, MEASURES, **_options(missing))
    on_ray = ragmeter.evaluate(folder, qrels, MEASURES, engine="ray", **_options(missing))
    _same(here, on_ray)
    whole = ragmeter.evaluate(read_run(run_path), qrels, MEASURES, **_options(missing))
    _same_values(whole, on_ray)
    # several runs at once: in memory (cut in slices), one TREC file, partitions
    runs = [read_run(run_path), run_path, folder]
    _same(
        ragmeter.evaluate(runs, qrels, MEASURES, **_options(missing)),
        ragmeter.evaluate(runs, qrels, MEASURES, engine="ray", **_options(missing)),
    )


def test_ray_errors_are_the_in_process_errors(ray_cluster: object, tmp_path: Path) -> None:
    _, dangling_qrels, dangling = _dangling(tmp_path / "link")
    with pytest.raises(PartitionError, match="link to a file that does not exist"):
        ragmeter.evaluate(dangling, dangling_qrels, ["ndcg@10"], engine="ray")
    (tmp_path / "empty").mkdir()
    _, empty_qrels, with_empty = _data(9, tmp_path / "empty", parts=2)
    (with_empty / "part-0002.txt").write_bytes(b"")  # an empty partition: no queries
    _same(
        ragmeter.evaluate(with_empty, empty_qrels, MEASURES, **_options("zero")),
        ragmeter.evaluate(with_empty, empty_qrels, MEASURES, engine="ray", **_options("zero")),
    )
    qrels, twice, bad = _broken_partitions(tmp_path)
    with pytest.raises(PartitionError, match=r"query 'q1' is in two partitions"):
        ragmeter.evaluate(twice, qrels, ["map"], engine="ray")
    with pytest.raises(InputError) as err:
        ragmeter.evaluate(bad, qrels, ["map"], engine="ray")
    assert err.value.source == str(bad / "p1.txt") and err.value.line == 2


def test_cli_engine_ray_on_an_open_session(ray_cluster: object, tmp_path: Path) -> None:
    run_path, qrels_path, folder = _data(6, tmp_path, parts=4)
    args = ["evaluate", "--qrels", str(qrels_path), "-m", "ndcg@10", "--per-query", "-f", "json"]
    on_ray = runner.invoke(app, [*args, str(folder), "--engine", "ray"])
    assert on_ray.exit_code == 0, on_ray.stderr
    here = runner.invoke(app, [*args, str(run_path)])
    assert (
        json.loads(on_ray.stdout)["runs"][0]["per_query"]
        == (json.loads(here.stdout)["runs"][0]["per_query"])
    )
    assert __import__("ray").is_initialized()  # the session it found is left open


def test_ray_cuts_a_trec_file_into_blocks_of_queries(
    ray_cluster: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.evaluation import partitioned
    from ragmeter.evaluation.blocks import RepeatedQueryError

    monkeypatch.setattr(partitioned, "TREC_BLOCK_BYTES", 300)  # a few queries per task
    run_path, qrels_path, _ = _data(8, tmp_path, parts=2)
    qrels = read_qrels(qrels_path)
    assert len(list(partitioned.pieces(partitioned.as_source(run_path), 0, slices=2))) > 5
    here = ragmeter.evaluate(read_run(run_path), qrels, MEASURES, **_options("zero"))
    _same(here, ragmeter.evaluate(run_path, qrels, MEASURES, engine="ray", **_options("zero")))
    # a file whose queries are not grouped: named in the error
    lines = run_path.read_text().splitlines()
    scattered = tmp_path / "scattered.txt"
    scattered.write_text("\n".join([*lines, lines[0].replace(" 1 ", " 99 ", 1)]) + "\n")
    with pytest.raises(RepeatedQueryError, match="grouped by query") as err:
        ragmeter.evaluate(scattered, qrels, ["map"], engine="ray")
    assert err.value.source == str(scattered)


def test_no_fork_is_said_once_and_changes_no_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing
    import warnings

    import ragmeter.evaluation.forking as forking

    _, qrels_path, folder = _data(2, tmp_path, parts=3)
    qrels = read_qrels(qrels_path)
    one = ragmeter.evaluate(str(folder), qrels, MEASURES, workers=1, **_options("zero"))
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(forking, "_warned", False)
    with pytest.warns(forking.SerialFallbackWarning, match="cannot fork"):
        two = ragmeter.evaluate(str(folder), qrels, MEASURES, workers=2, **_options("zero"))
    _same(one, two)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ragmeter.evaluate(str(folder), qrels, MEASURES, workers=2, **_options("zero"))  # said once
