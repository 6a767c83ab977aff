"""Streamed evaluation of run files gives the whole-file evaluation bit for bit.

Random TREC runs and qrels (ties, duplicate rows, comments, unjudged and missing queries) are
evaluated whole (read into memory) and streamed in byte ranges of a random small size, in this
process and in two forked workers, plain and gzip-compressed; per-query values, counts,
aggregates and warnings must be identical. Errors of a later block name the file's line; a run
not grouped by query is refused with the line where a query comes back.
"""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter.core.data import Run
from ragmeter.errors import InputError
from ragmeter.evaluation import (
    EvalInputs,
    Evaluation,
    RepeatedQueryError,
    evaluate_inputs,
    evaluate_run_files,
    sweep_evaluation,
)
from ragmeter.evaluation.stream import WORKERS_ENV, _ranges, default_workers
from ragmeter.io.readers import write_run
from ragmeter.io.trec import read_trec_qrels, read_trec_run
from ragmeter.io.trec_blocks import TrecRunBlocks, first_field
from random_trec import random_trec_files

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
    "ra_nwg@5",
    "proc@5",
    "judged@5",
    "num_queries",
]
GRADES = "-1:1,0:1,1:3,2:4,3:5"


def _files(seed: int, tmp: Path, *, comments: bool = False) -> tuple[Path, Path]:
    return random_trec_files(seed, tmp, comments=comments, max_queries=14, ragged_end=True)


def _assert_same(a: Evaluation, b: Evaluation) -> None:
    assert [r.name for r in a.runs] == [r.name for r in b.runs]
    for x, y in zip(a.runs, b.runs, strict=True):
        assert x.query_ids.tolist() == y.query_ids.tolist()
        # bit for bit: NaN where NaN, every other value the same double
        assert x.values.shape == y.values.shape
        assert np.array_equal(x.values, y.values, equal_nan=True)
        assert x.values.tobytes() == y.values.tobytes()
        assert (x.n_missing, x.n_skipped, x.n_unjudged_queries) == (
            y.n_missing,
            y.n_skipped,
            y.n_unjudged_queries,
        )
        assert x.to_dict(per_query=True) == y.to_dict(per_query=True)
    assert a.measures == b.measures
    assert a.warnings == b.warnings


def _gzip(path: Path) -> Path:
    out = path.with_name(path.name + ".gz")
    out.write_bytes(gzip.compress(path.read_bytes()))
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    block_bytes=st.integers(1, 600),
    missing=st.sampled_from(["zero", "skip"]),
    workers=st.sampled_from([1, 2]),
    compressed=st.booleans(),
    comments=st.booleans(),
)
def test_streamed_equals_whole(
    tmp_path: Path,
    seed: int,
    block_bytes: int,
    missing: str,
    workers: int,
    compressed: bool,
    comments: bool,
) -> None:
    run_path, qrels_path = _files(seed, tmp_path, comments=comments)
    inputs = EvalInputs(
        qrels=read_trec_qrels(qrels_path),
        missing=missing,  # type: ignore[arg-type]
        grade_map=GRADES,
    )
    if run_path.stat().st_size == 0:
        return  # the empty file: test_empty_file
    path = _gzip(run_path) if compressed else run_path
    whole = evaluate_inputs([read_trec_run(path)], inputs, MEASURES)
    streamed = evaluate_run_files(path, inputs, MEASURES, workers=workers, block_bytes=block_bytes)
    _assert_same(whole, streamed)
    assert streamed.run.source is None and streamed.run.run_file == str(path)


@pytest.mark.parametrize("workers", [1, 2])
def test_ranges_cut_at_query_starts(tmp_path: Path, workers: int) -> None:
    """Every range but the first starts where a new query's lines begin; together they are
    the file."""
    run_path, _ = _files(7, tmp_path, comments=True)
    data = run_path.read_bytes()
    for block in (1, 17, 100, 1 << 20):
        ranges = _ranges(run_path, len(data), block, workers)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
        for start, _end in ranges[1:]:
            before = [first_field(x) for x in data[:start].split(b"\n")]
            before = [q for q in before if q is not None]
            assert data[start - 1 : start] == b"\n"
            assert first_field(data[start:].split(b"\n", 1)[0]) != before[-1]


@pytest.mark.parametrize("workers", [1, 2])
def test_several_files_and_the_public_entry(tmp_path: Path, workers: int) -> None:
    a, qrels_path = _files(3, tmp_path)
    b, _ = _files(4, tmp_path)
    qrels = read_trec_qrels(qrels_path)
    whole = ragmeter.evaluate(
        [read_trec_run(a), read_trec_run(b)], qrels, MEASURES, grade_map=GRADES
    )
    streamed = ragmeter.evaluate([a, str(b)], qrels, MEASURES, workers=workers, grade_map=GRADES)
    _assert_same(whole, streamed)
    mixed = ragmeter.evaluate(
        [read_trec_run(a), b], qrels, MEASURES, workers=workers, grade_map=GRADES
    )
    _assert_same(whole, mixed)
    assert mixed.runs[0].source is not None and mixed.runs[1].source is None


def test_env_sets_the_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert default_workers() == 3
    monkeypatch.setenv(WORKERS_ENV, "0")
    with pytest.raises(InputError, match=WORKERS_ENV):
        default_workers()
    monkeypatch.delenv(WORKERS_ENV)
    assert 1 <= default_workers() <= 2


def test_empty_file_is_the_readers_error(tmp_path: Path) -> None:
    _, qrels_path = _files(1, tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(InputError) as whole:
        read_trec_run(empty)
    for workers in (1, 2):
        with pytest.raises(InputError) as streamed:
            ragmeter.evaluate(empty, read_trec_qrels(qrels_path), ["map"], workers=workers)
        assert str(streamed.value) == str(whole.value)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("compressed", [False, True])
def test_bad_line_in_a_later_block_names_the_files_line(
    tmp_path: Path, workers: int, compressed: bool
) -> None:
    lines = [f"q{i // 5} Q0 d{i} {i % 5 + 1} {10 - i % 5} t" for i in range(60)]
    lines[47] = "q9 Q0 d47 3 not-a-number t"
    run_path = tmp_path / "bad.txt"
    run_path.write_text("\n".join(lines) + "\n")
    path = _gzip(run_path) if compressed else run_path
    with pytest.raises(InputError) as whole:
        read_trec_run(path)
    assert whole.value.line == 48
    qrels = ragmeter.Qrels.from_dict({"q1": ["d5"]})
    with pytest.raises(InputError) as streamed:
        evaluate_run_files(path, EvalInputs(qrels=qrels), ["map"], workers=workers, block_bytes=200)
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.source == str(path) and streamed.value.line == 48


def _ungrouped(tmp_path: Path) -> Path:
    lines = [f"q1 Q0 d{i} {i} {9 - i} t" for i in range(1, 5)]
    lines += [f"q2 Q0 d{i} {i} {9 - i} t" for i in range(1, 40)]
    lines += [f"q1 Q0 e{i} {i} {4 - i} t" for i in range(1, 3)]  # q1 again: line 44
    path = tmp_path / "ungrouped.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("compressed", [False, True])
def test_ungrouped_run_is_refused_with_the_line(
    tmp_path: Path, workers: int, compressed: bool
) -> None:
    path = _ungrouped(tmp_path)
    path = _gzip(path) if compressed else path
    qrels = ragmeter.Qrels.from_dict({"q1": ["d1", "e1"], "q2": ["d2"]})
    with pytest.raises(RepeatedQueryError) as err:
        evaluate_run_files(path, EvalInputs(qrels=qrels), ["map"], workers=workers, block_bytes=64)
    message = str(err.value)
    assert str(path) in message and "line 44" in message and "sort -s -k1,1" in message
    if compressed:
        return  # a compressed file's blocks end before its last query: always refused
    # in one range the whole file's grouping applies: the same result as reading it whole
    one = evaluate_run_files(path, EvalInputs(qrels=qrels), ["map"], workers=workers)
    _assert_same(evaluate_inputs([read_trec_run(path)], EvalInputs(qrels=qrels), ["map"]), one)


def test_iterator_of_blocks(tmp_path: Path) -> None:
    run_path, qrels_path = _files(11, tmp_path)
    qrels = read_trec_qrels(qrels_path)
    whole = ragmeter.evaluate(read_trec_run(run_path), qrels, MEASURES, grade_map=GRADES)
    _assert_same(
        whole,
        ragmeter.evaluate(
            TrecRunBlocks(run_path, block_bytes=50), qrels, MEASURES, grade_map=GRADES
        ),
    )
    blocks = iter(list(TrecRunBlocks(run_path, block_bytes=50)))
    _assert_same(whole, ragmeter.evaluate(blocks, qrels, MEASURES, grade_map=GRADES))
    generator = (b for b in TrecRunBlocks(run_path, block_bytes=90))
    _assert_same(whole, ragmeter.evaluate([generator], qrels, MEASURES, grade_map=GRADES))


def test_other_formats_and_per_run_inputs_are_read_whole(tmp_path: Path) -> None:
    run_path, qrels_path = _files(5, tmp_path)
    qrels = read_trec_qrels(qrels_path)
    run = read_trec_run(run_path)
    csv_path = tmp_path / "run.csv"
    write_run(run, csv_path)
    done = ragmeter.evaluate(csv_path, qrels, MEASURES, grade_map=GRADES)
    assert done.run.source is not None  # read whole
    # a separate candidate pool joins per run: the file is read whole
    pooled = ragmeter.evaluate(run_path, qrels, ["proc@5"], pool=run, grade_map=GRADES)
    assert pooled.run.source is not None
    _assert_same(ragmeter.evaluate(run, qrels, ["proc@5"], pool=run, grade_map=GRADES), pooled)
    with pytest.raises(ValueError, match="whole run"):
        ragmeter.evaluate(iter([run]), qrels, ["proc@5"], pool=run, grade_map=GRADES)


def test_sweep_of_a_streamed_result_streams_the_file(tmp_path: Path) -> None:
    run_path, qrels_path = _files(9, tmp_path)
    qrels = read_trec_qrels(qrels_path)
    whole = ragmeter.evaluate(read_trec_run(run_path), qrels, ["ndcg@10", "P@5"])
    streamed = ragmeter.evaluate(run_path, qrels, ["ndcg@10", "P@5"])
    a, b = sweep_evaluation(whole, "1:6"), sweep_evaluation(streamed, "1:6")
    _assert_same(a.evaluation, b.evaluation)


def test_sweep_of_blocks_says_why_it_cannot(tmp_path: Path) -> None:
    from ragmeter.errors import MeasureError

    run_path, qrels_path = _files(9, tmp_path)
    done = ragmeter.evaluate(
        TrecRunBlocks(run_path, block_bytes=60), read_trec_qrels(qrels_path), ["ndcg@10"]
    )
    with pytest.raises(MeasureError, match="iterator of blocks"):
        sweep_evaluation(done, "1:3")


def test_a_run_object_in_the_list_keeps_its_name(tmp_path: Path) -> None:
    run_path, qrels_path = _files(2, tmp_path)
    qrels = read_trec_qrels(qrels_path)
    run: Run = read_trec_run(run_path, name="mine")
    done = evaluate_run_files(
        [run, run_path], EvalInputs(qrels=qrels), ["map"], names=[None, "other"]
    )
    assert [r.name for r in done.runs] == ["mine", "other"]


def _cli(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_cli_evaluate_streams_a_run_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    import json

    monkeypatch.setenv(WORKERS_ENV, workers)
    monkeypatch.setattr("ragmeter.evaluation.stream.BLOCK_BYTES", 100)  # several ranges
    run_path, qrels_path = _files(22, tmp_path)
    qrels = read_trec_qrels(qrels_path)
    measures = ["ndcg@10", "map", "P@3", "recall@5"]
    flags = [a for m in measures for a in ("-m", m)]
    code, out, err = _cli(
        "evaluate", str(run_path), "--qrels", str(qrels_path), *flags, "-f", "json", "--per-query"
    )
    assert code == 0, err
    whole = ragmeter.evaluate(read_trec_run(run_path), qrels, measures)
    shown = json.loads(out)
    assert shown.pop("labels")["provenance"] == "labels of unknown origin"  # no sidecar
    assert shown == json.loads(json.dumps(whole.to_dict(per_query=True)))
    code, out, err = _cli(
        "evaluate", str(run_path), "--qrels", str(qrels_path), "-m", "ndcg", "--k", "1:4",
        "-f", "json",
    )  # fmt: skip
    assert code == 0, err
    curve = sweep_evaluation(ragmeter.evaluate(read_trec_run(run_path), qrels, ["ndcg"]), "1:4")
    shown = json.loads(out)
    del shown["labels"]  # what the CLI adds: the labels' description
    assert shown == json.loads(json.dumps(curve.evaluation.to_dict()))


def test_cli_evaluate_refuses_an_ungrouped_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ragmeter.evaluation.stream.BLOCK_BYTES", 64)
    path = _ungrouped(tmp_path)
    qrels_path = tmp_path / "q.txt"
    qrels_path.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    code, _, err = _cli("evaluate", str(path), "--qrels", str(qrels_path), "-m", "map")
    assert code != 0
    assert "line 44" in err and "sort -s -k1,1" in err


def test_cli_compare_streams_and_names_runs_as_before(tmp_path: Path) -> None:
    import json

    pytest.importorskip("scipy")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    run_a, qrels_path = _files(3, tmp_path / "a")
    run_b, _ = _files(4, tmp_path / "b")
    same_name = tmp_path / "b" / run_a.name  # two files called the same: named by path
    same_name.write_bytes(run_b.read_bytes())
    qrels = read_trec_qrels(qrels_path)
    code, out, err = _cli(
        "compare", str(run_a), str(same_name), "--qrels", str(qrels_path), "-m", "ndcg@10",
        "-m", "P@3", "--baseline", str(same_name), "-f", "json",
        "--bootstrap", "200", "--permutations", "200",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["baseline"] == str(same_name)
    runs = {str(run_a): read_trec_run(run_a), str(same_name): read_trec_run(same_name)}
    whole = ragmeter.evaluate(runs, qrels, ["ndcg@10", "P@3"])
    text = json.dumps(doc)
    for result in whole.runs:
        assert result.name in text
        for value in result.means().values():
            assert value is not None and (repr(value) in text or repr(round(value, 6)) in text)


def test_a_small_file_stays_in_process_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[str]
) -> None:
    """Below PARALLEL_BYTES the default is one process; a given number of workers is used."""
    import ragmeter.evaluation.stream as stream

    run_path, qrels_path = _files(3, tmp_path)
    inputs = EvalInputs(qrels=read_trec_qrels(qrels_path), grade_map=GRADES)
    evaluate_run_files(run_path, inputs, MEASURES, block_bytes=50)
    assert forks == []
    evaluate_run_files(run_path, inputs, MEASURES, block_bytes=50, workers=2)
    assert forks == ["fork"]
    monkeypatch.setattr(stream, "PARALLEL_BYTES", 1)
    evaluate_run_files(run_path, inputs, MEASURES, block_bytes=50)
    assert forks == ["fork", "fork"][: 1 + (default_workers() > 1)]


def test_a_large_file_indexes_its_qrels_while_cutting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From PARALLEL_BYTES the query index is built in a thread while the cuts are found:
    the values are those of one process, and an error of the index build is raised."""
    import ragmeter.evaluation.stream as stream

    run_path, qrels_path = _files(4, tmp_path)
    inputs = EvalInputs(qrels=read_trec_qrels(qrels_path), grade_map=GRADES)
    serial = evaluate_run_files(run_path, inputs, MEASURES, block_bytes=50, workers=1)
    monkeypatch.setattr(stream, "PARALLEL_BYTES", 1)
    threaded = evaluate_run_files(run_path, inputs, MEASURES, block_bytes=50)
    assert np.array_equal(threaded.run.values, serial.run.values, equal_nan=True)

    def fails(_qrels: object) -> None:
        raise MemoryError("index")

    monkeypatch.setattr(stream, "index_before_fork", fails)
    with pytest.raises(MemoryError, match="index"):
        evaluate_run_files(run_path, inputs, MEASURES, block_bytes=50)


def _trec_eval(argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    import io
    import sys

    from ragmeter.report import trec_eval

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        status = trec_eval.run(argv, out, err)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


TREC_FLAGS = [[], ["-q"], ["-c"], ["-q", "-c"], ["-J"], ["-q", "-M", "3"], ["-l", "2", "-q"]]
TREC_MEASURES = [
    ["-m", "all_trec"],
    ["-m", "official"],
    ["-m", "P.1,3", "-m", "relstring.5", "-m", "utility"],
    ["-m", "ndcg_cut.3", "-m", "gm_map", "-m", "num_q"],
]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    block_bytes=st.integers(1, 400),
    flags=st.sampled_from(TREC_FLAGS),
    measures=st.sampled_from(TREC_MEASURES),
    compressed=st.booleans(),
)
def test_trec_eval_streamed_prints_what_the_whole_run_prints(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    block_bytes: int,
    flags: list[str],
    measures: list[str],
    compressed: bool,
) -> None:
    """The run file streamed in blocks prints, byte for byte, what the run read whole prints
    (read from standard input, which is never streamed)."""
    from ragmeter.report import trec_eval

    monkeypatch.setattr(trec_eval, "BLOCK_BYTES", block_bytes)
    run_path, qrels_path = _files(seed, tmp_path, comments=True)
    if run_path.stat().st_size == 0:
        return
    data = run_path.read_bytes()
    path = _gzip(run_path) if compressed else run_path
    argv = [*flags, *measures, str(qrels_path)]
    streamed = _trec_eval([*argv, str(path)])
    whole = _trec_eval([*argv, "-"], stdin=data)
    assert streamed[:2] == whole[:2]
    assert streamed[2].replace(str(path), "-") == whole[2]


def test_trec_eval_reads_an_ungrouped_run_whole_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.report import trec_eval

    monkeypatch.setattr(trec_eval, "BLOCK_BYTES", 64)
    path = _ungrouped(tmp_path)
    qrels_path = tmp_path / "q.txt"
    qrels_path.write_text("q1 0 d1 1\nq1 0 e1 1\nq2 0 d2 1\n")
    status, out, err = _trec_eval(["-q", str(qrels_path), str(path)])
    assert status == 0
    assert "not grouped by query, so it is read whole" in err and "line 44" in err
    assert (status, out) == _trec_eval(["-q", str(qrels_path), "-"], stdin=path.read_bytes())[:2]


def _die(job: object, span: tuple[int, int]) -> object:
    import os

    os._exit(3)


def test_a_dead_worker_is_an_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragmeter.evaluation.stream as stream
    from ragmeter.errors import RagmeterError

    run_path, qrels_path = _files(3, tmp_path)
    monkeypatch.setattr(stream, "_evaluate_range", _die)
    with pytest.raises(RagmeterError, match=r"worker process .* died"):
        evaluate_run_files(
            run_path, EvalInputs(qrels=read_trec_qrels(qrels_path)), ["map"], workers=2,
            block_bytes=50,
        )  # fmt: skip


_PREPARED: list[int] = []


def _prepare() -> None:
    import os

    _PREPARED.append(os.getpid())


def _prepared_in(job: object, item: int) -> tuple[int, list[int]]:
    import os

    return os.getpid(), list(_PREPARED)


def test_a_forked_worker_is_prepared_once_before_its_items() -> None:
    """``prepare`` runs in each forked worker once, before the worker's first item, and not
    in the process that forks them."""
    import os

    from ragmeter.evaluation.forking import forked_map

    _PREPARED.clear()
    done = list(forked_map(_prepared_in, None, list(range(12)), 2, what="t", prepare=_prepare))
    assert _PREPARED == []
    assert len(done) == 12
    for pid, prepared in done:
        assert pid != os.getpid()
        assert prepared == [pid]


def test_the_stream_workers_keep_their_freed_heap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run file's workers are prepared by ``keep_freed_heap`` (their blocks' buffers are
    not mapped afresh for every block); the values are those of one process."""
    import ragmeter.evaluation.stream as stream

    seen: dict[str, object] = {}
    real = stream.forked_map

    def spy(*args: object, **kwargs: object) -> object:
        seen["prepare"] = kwargs.get("prepare")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "forked_map", spy)
    run_path, qrels_path = _files(5, tmp_path)
    inputs = EvalInputs(qrels=read_trec_qrels(qrels_path))
    two = evaluate_run_files(run_path, inputs, ["map", "ndcg@10"], workers=2, block_bytes=300)
    one = evaluate_run_files(run_path, inputs, ["map", "ndcg@10"], workers=1)
    assert seen["prepare"] is ragmeter._accel.keep_freed_heap
    _assert_same(two, one)


def test_a_large_file_on_the_pure_path_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each streamed block is small, so the file as a whole is checked for the pure path's
    warning (its lines estimated from its size)."""
    from ragmeter import _accel

    monkeypatch.setattr(_accel, "native", None)
    monkeypatch.setattr(_accel, "_warned", False)
    monkeypatch.setattr(_accel, "LARGE_INPUT_ROWS", 1)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q1 Q0 d{i} {i} {10 - i} t\n" for i in range(1, 6)))
    qrels = ragmeter.Qrels.from_dict({"q1": {"d1": 1}})
    with pytest.warns(_accel.PurePathWarning, match=r"run\.txt \(estimated\)"):
        ragmeter.evaluate(path, qrels, ["map"])


def test_cli_evaluate_hashes_the_inputs_only_to_save_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run file of many gigabytes takes seconds to hash: only a save needs its hash."""
    run_path, qrels_path = _files(23, tmp_path)

    def no_hash(path: object) -> str:
        raise AssertionError(f"{path} hashed without --save")

    monkeypatch.setattr("ragmeter.store.file_sha256", no_hash)
    code, _, err = _cli("evaluate", str(run_path), "--qrels", str(qrels_path), "-m", "map")
    assert code == 0, err


def test_cli_compare_hashes_the_inputs_only_to_save_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_path, qrels_path = _files(24, tmp_path)
    other = tmp_path / "other.txt"
    other.write_bytes(run_path.read_bytes())

    def no_hash(path: object) -> str:
        raise AssertionError(f"{path} hashed without --save")

    monkeypatch.setattr("ragmeter.store.file_sha256", no_hash)
    code, _, err = _cli(
        "compare", str(run_path), str(other), "--qrels", str(qrels_path), "-m", "map"
    )
    assert code == 0, err
