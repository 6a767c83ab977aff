"""TREC readers as trec_eval 10.0 reads: C white space, C numbers, binary input, duplicates.

Every expected output below is trec_eval 10.0's own, produced by the command in the comment
above it (trec_eval built from its source, run on the QRELS and RUN bytes of the case). Each
case is read on every reader path: the C accelerator, Arrow's CSV parser and the line-by-line
reader (the fixture switches the faster ones off).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragmeter import _accel
from ragmeter.errors import InputError
from ragmeter.io import trec
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.report.trec_eval import main

PATHS = ("native", "arrow", "lines")


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which reader path is allowed to read: faster ones are switched off."""
    if request.param == "native" and _accel.native is None:
        pytest.skip("C accelerator not built")
    if request.param in ("arrow", "lines"):
        monkeypatch.setattr(_accel, "native", None)
    if request.param == "lines":
        monkeypatch.setattr(trec, "_detect_delimiter", lambda data: None)
    yield request.param


ARGS = ("-q", "-m", "num_ret", "-m", "num_rel_ret", "-m", "P.2")

CASES = {
    # trec_eval -q -m num_ret -m num_rel_ret -m P.2 QRELS RUN  (exit 0)
    "nbsp_in_id_slow_path": (
        b"q1 0 d\xc2\xa01 1\nq1 0 d2 1\nq1 0 d3 0\n",
        b"q1 Q0 d\xc2\xa01 1 3 t\nq1 Q0\td2 2 2 t\nq1\x0bQ0\x0cd3 3 1 t\n",
        (
            "num_ret               \tq1\t3\n"
            "num_rel_ret           \tq1\t2\n"
            "P_2                   \tq1\t1.0000\n"
            "num_ret               \tall\t3\n"
            "num_rel_ret           \tall\t2\n"
            "P_2                   \tall\t1.0000\n"
        ),
    ),
    # trec_eval -q -m num_ret -m num_rel_ret -m P.2 QRELS RUN  (exit 0)
    "nbsp_in_id_regular": (
        b"q1 0 d\xc2\xa01 1\nq1 0 d2 1\n",
        b"q1 Q0 d\xc2\xa01 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d\xc2\xa0x 3 1 t\n",
        (
            "num_ret               \tq1\t3\n"
            "num_rel_ret           \tq1\t2\n"
            "P_2                   \tq1\t1.0000\n"
            "num_ret               \tall\t3\n"
            "num_rel_ret           \tall\t2\n"
            "P_2                   \tall\t1.0000\n"
        ),
    ),
    # trec_eval -q -m num_ret -m num_rel_ret -m P.2 QRELS RUN  (exit 0)
    "tab_inside_space_line": (
        b"q1 0 d1 1\nq1 0 d2 1\nq1 0 x 1\n",
        b"q1 Q0 d1 1 3 t\nq1 Q0 d2\tx 2 2 t\n",
        (
            "num_ret               \tq1\t2\n"
            "num_rel_ret           \tq1\t2\n"
            "P_2                   \tq1\t1.0000\n"
            "num_ret               \tall\t2\n"
            "num_rel_ret           \tall\t2\n"
            "P_2                   \tall\t1.0000\n"
        ),
    ),
    # trec_eval -q -m num_ret -m num_rel_ret -m P.2 QRELS RUN  (exit 0)
    "space_inside_tab_line": (
        b"q1\t0\td1\t1\nq1\t0\td2\t1\n",
        b"q1\tQ0\td1\t1\t3\tt\nq1\tQ0\td2 x\t2\t2\tt\n",
        (
            "num_ret               \tq1\t2\n"
            "num_rel_ret           \tq1\t2\n"
            "P_2                   \tq1\t1.0000\n"
            "num_ret               \tall\t2\n"
            "num_rel_ret           \tall\t2\n"
            "P_2                   \tall\t1.0000\n"
        ),
    ),
    # trec_eval -q -m num_ret -m num_rel_ret -m P.2 QRELS RUN  (exit 0)
    "vt_ff_separate": (
        b"q1\x0b0\x0cd1 1\nq1 0 d2\x0b1\n",
        b"q1 Q0 d1 1 3 t\nq1\x0bQ0\x0bd2\x0c2\x0c2\x0bt\n",
        (
            "num_ret               \tq1\t2\n"
            "num_rel_ret           \tq1\t2\n"
            "P_2                   \tq1\t1.0000\n"
            "num_ret               \tall\t2\n"
            "num_rel_ret           \tall\t2\n"
            "P_2                   \tall\t1.0000\n"
        ),
    ),
    # trec_eval -q -m num_ret -m num_rel_ret -m P.2 QRELS RUN  (exit 0)
    "other_unicode_space_in_id": (
        b"q1 0 a\xe2\x80\x83b 1\nq1 0 c\x1fd 1\n",
        b"q1 Q0 a\xe2\x80\x83b 1 3 t\nq1 Q0 c\x1fd 2 2 t\n",
        (
            "num_ret               \tq1\t2\n"
            "num_rel_ret           \tq1\t2\n"
            "P_2                   \tq1\t1.0000\n"
            "num_ret               \tall\t2\n"
            "num_rel_ret           \tall\t2\n"
            "P_2                   \tall\t1.0000\n"
        ),
    ),
}


def _files(tmp_path: Path, qrels: bytes, run: bytes) -> tuple[str, str]:
    (tmp_path / "qrels").write_bytes(qrels)
    (tmp_path / "run").write_bytes(run)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


@pytest.mark.parametrize("case", sorted(CASES))
def test_fields_split_on_c_white_space_only(
    case: str, path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, run, expected = CASES[case]
    status = main([*ARGS, *_files(tmp_path, qrels, run)])
    assert status == 0
    assert capsys.readouterr().out == expected


def test_no_break_space_is_part_of_an_id(path: str, tmp_path: Path) -> None:
    # the line-by-line reader once split on Unicode white space and dropped a field
    q, r = _files(tmp_path, b"q1 0 d\xc2\xa01 1\n", b"  q1 Q0 d\xc2\xa01 1 3 t\n")
    assert read_run(r).doc_ids.to_pylist() == ["d\u00a01"]
    assert read_qrels(q).doc_ids.to_pylist() == ["d\u00a01"]


# Values C's atol / atof read with another value than Python or Arrow would, or where they
# disagree with each other: refused on every path, naming file, line and field. (trec_eval
# reads grade 1_0 as 1, 0x1 as 0, 1.5 as 1, \u0663 as 0; score 1_0 as 1, 0x1 as 1, inf, nan.)
BAD_GRADES = ("1_0", "0x1", "1.5", "\u0663", "\uff11", "1e2", "99999999999999999999", "2147483648")
BAD_SCORES = ("1_0", "0x1", "0x1p3", "\u0663", "inf", "-infinity", "nan", "1e999", "1,5", "1d0")


@pytest.mark.parametrize("value", BAD_GRADES)
def test_grade_outside_c_integer_syntax_is_refused(path: str, tmp_path: Path, value: str) -> None:
    q, _ = _files(tmp_path, f"q1 0 a 1\nq1 0 b {value}\n".encode(), b"")
    with pytest.raises(InputError) as info:
        read_qrels(q)
    assert (info.value.line, info.value.field) == (2, "grade")
    assert value in str(info.value)


@pytest.mark.parametrize("value", BAD_SCORES)
def test_score_outside_c_decimal_syntax_is_refused(path: str, tmp_path: Path, value: str) -> None:
    _, r = _files(tmp_path, b"", f"q1 Q0 a 1 2 t\nq1 Q0 b 2 {value} t\n".encode())
    with pytest.raises(InputError) as info:
        read_run(r)
    assert (info.value.line, info.value.field) == (2, "score")


@pytest.mark.parametrize("value", ["+3", "-2", "007", "1.", ".5", "-1.5E-3", "+.5e+2"])
def test_c_decimal_scores_read_as_c_does(path: str, tmp_path: Path, value: str) -> None:
    _, r = _files(tmp_path, b"", f"q1 Q0 a 1 {value} t\n".encode())
    assert read_run(r).scores.tolist() == [float(value)]


def test_grade_too_large_is_one_line_error_in_trec_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q, r = _files(tmp_path, b"q1 0 a 99999999999999999999\n", b"q1 Q0 a 1 2 t\n")
    assert main([q, r]) == 2
    err = capsys.readouterr().err
    assert "line 1, field 'grade'" in err and "out of range" in err
    assert "Traceback" not in err and "OverflowError" not in err


def test_bad_score_in_trec_eval_names_file_line_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q, r = _files(tmp_path, b"q1 0 a 1\n", b"q1 Q0 a 1 2 t\nq1 Q0 b 2 1_0 t\n")
    assert main([q, r]) == 2
    assert f"{r}, line 2, field 'score': '1_0' is not a number" in capsys.readouterr().err


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_nul_byte_is_binary_input(path: str, tmp_path: Path, which: str) -> None:
    qrels, run = b"q1 0 a 1\n", b"q1 Q0 a 1 2 t\n"
    if which == "qrels":
        qrels += b"q1 0 b\x00 1\n"
    else:
        run += b"q1 Q0 b\x00 2 1 t\n"
    q, r = _files(tmp_path, qrels, run)
    with pytest.raises(InputError, match=r"NUL byte.*binary") as info:
        read_qrels(q) if which == "qrels" else read_run(r)
    assert info.value.line == 2


def test_negative_relevance_level_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q, r = _files(tmp_path, b"q1 0 a 1\n", b"q1 Q0 a 1 2 t\n")
    assert main(["-l", "-1", q, r]) == 1
    assert "relevance level must be at least 0" in capsys.readouterr().err


def test_negative_relevance_level_is_refused_in_evaluate(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragmeter import Qrels, Run, evaluate
    from ragmeter.cli import app
    from ragmeter.errors import MeasureError

    run, qrels = Run.from_lists({"q1": ["a"]}), Qrels.from_dict({"q1": {"a": 1}})
    with pytest.raises(InputError, match=r"rel_level.*must be at least 0"):
        evaluate(run, qrels, ["P@1"], rel_level=-1)
    with pytest.raises(MeasureError, match="'rel_level' must be at least 0"):
        evaluate(run, qrels, ["P@1(rel_level=-1)"])
    q, r = _files(tmp_path, b"q1 0 a 1\n", b"q1 Q0 a 1 2 t\n")
    result = CliRunner().invoke(app, ["evaluate", "--qrels", q, "--rel-level", "-1", r])
    assert result.exit_code == 2
    assert "rel_level" in result.output and "must be at least 0" in result.output


DUP_QRELS = b"q1 0 d1 1\nq1 0 d2 0\n"
DUP_RUN = b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq1 Q0 d1 3 0.5 t\n"


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_duplicate_doc_from_stdin_exits_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # trec_eval -m num_ret QRELS - < RUN: no output, exit 4,
    # "trec_eval.form_res_qrels: duplicate docs d1trec_eval: Can't calculate measure 'num_ret'"
    q, _ = _files(tmp_path, DUP_QRELS, b"")
    _stdin(monkeypatch, DUP_RUN)
    assert main(["-m", "num_ret", q, "-"]) == 4
    out = capsys.readouterr()
    assert out.out == ""
    assert "duplicate docs d1" in out.err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # trec_eval -m runid QRELS RUN  (exit 0)
        (["-m", "runid"], "runid                 \tall\tt\n"),
        # trec_eval -m num_q QRELS RUN  (exit 0)
        (["-m", "num_q"], "num_q                 \tall\t1\n"),
        # trec_eval -q -m runid -m num_q QRELS RUN  (exit 0)
        (
            ["-q", "-m", "runid", "-m", "num_q"],
            "runid                 \tall\tt\nnum_q                 \tall\t1\n",
        ),
    ],
)
def test_duplicate_doc_is_no_error_for_runid_and_num_q(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    assert main([*args, *_files(tmp_path, DUP_QRELS, DUP_RUN)]) == 0
    assert capsys.readouterr().out == expected


def test_empty_stdin_run_is_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    q, _ = _files(tmp_path, DUP_QRELS, b"")
    _stdin(monkeypatch, b"")
    assert main([q, "-"]) == 2
    err = capsys.readouterr().err
    assert "-: no data lines" in err and "ragmeter-run-" not in err


@pytest.mark.parametrize("value", ["1_0", "0x1", "\u0663", "infinity", "nan"])
def test_csv_scores_follow_the_same_notation(tmp_path: Path, value: str) -> None:
    path = tmp_path / "run.csv"
    path.write_text(f"qid,docid,score\nq1,a,1\nq1,b,{value}\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_run(path)
    assert (info.value.line, info.value.field) == (3, "score")


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_huge_grade_in_csv_or_jsonl_is_named_as_written(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"qrels.{suffix}"
    if suffix == "csv":
        path.write_text("qid,docid,grade\nq1,d1,99999999999999999999\n")
    else:
        path.write_text('{"qid": "q1", "docid": "d1", "grade": "99999999999999999999"}\n')
    # as written, or as the double JSON parsed it to; never a wrapped-around int64
    with pytest.raises(InputError, match=r"grade (99999999999999999999|1e\+20) out of range"):
        read_qrels(path)
