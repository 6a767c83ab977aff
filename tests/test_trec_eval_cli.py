"""``ragmeter trec-eval``: the command line, its errors and edge cases (trec_eval 10.0's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragmeter.report.trec_eval import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
UNRANKED = "q3 0 d 1\n"  # a judged query the run does not rank
RUN = "q1 Q0 a 1 3.0 tagA\nq1 Q0 x 2 2.0 tagA\nq2 Q0 c 1 1.0 tagB\nq9 Q0 z 1 1.0 tagB\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


@pytest.fixture
def files_unranked(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(QRELS + UNRANKED)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


FILES = ("qrels.test", "results.test")


def test_subprocess_reproduces_trec_eval(trec_conformance: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ragmeter", "trec-eval", "-m", "all_trec", "-q", *FILES],
        cwd=trec_conformance,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (trec_conformance / "out.test.aq").read_text()


def test_default_measures_and_format(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = call(capsys, *files)
    assert status == 0
    lines = out.splitlines()
    # runid is the tag of the last line
    assert lines[0] == "runid                 \tall\ttagB"
    assert lines[1] == "num_q                 \tall\t2"
    assert lines[2] == "num_ret               \tall\t3"
    # map: q1 AP = 1/1 = 1, q2 AP = 1 → 1.0000
    assert "map                   \tall\t1.0000" in lines
    assert lines[-1].startswith("P_1000")
    assert "without judgments" in err  # q9


def test_complete_averages_over_all_qrels_queries(
    files_unranked: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = call(capsys, "-q", "-c", "-m", "map", "-m", "utility", *files_unranked)
    assert status == 0
    lines = out.splitlines()
    # q3 is printed with zeros (utility too) and map averages over 3 queries: (1 + 1 + 0) / 3
    assert "map                   \tq3\t0.0000" in lines
    assert "utility               \tq3\t0.0000" in lines
    assert "map                   \tall\t0.6667" in lines
    assert "num_q                 \tall\t3" not in lines  # not requested


def test_judged_query_without_ranking_is_refused_without_c(
    files_unranked: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # trec_eval -q -m map QRELS RUN: the lines of q1 and q2, then "result qid 'q3' not found
    # in qrels", exit 4
    status, out, err = call(capsys, "-q", "-m", "map", *files_unranked)
    assert status == 4
    assert out == "map                   \tq1\t1.0000\nmap                   \tq2\t1.0000\n"
    assert "'q3'" in err and "-c" in err


def test_getopt_spellings_agree(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    a = call(capsys, "-M1", "-mP.1,2", "-q", *files)
    b = call(capsys, *files, "--Max_retrieved_per_topic=1", "--measure", "P.2,1", "-q")
    c = call(capsys, "-qM", "1", "-m", "P.1,2", *files)
    assert a[0] == 0 and a[1] == b[1] == c[1]
    # -M1 keeps only 'a' for q1: P_2 = 1/2
    assert "P_2                   \tq1\t0.5000" in a[1].splitlines()


def test_duplicate_docs_are_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run").write_text(
        "q1 Q0 a 1 2.0 t\nq2 Q0 b 1 2.0 t\nq2 Q0 c 2 1.0 t\nq2 Q0 b 3 0.5 t\n"
    )
    args = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status, out, err = call(capsys, "-q", "-m", "num_ret", *args)
    assert status == 4
    assert out == "num_ret               \tq1\t1\n"  # queries before the bad one are printed
    assert "duplicate docs b" in err
    assert "Can't calculate measure 'num_ret'" in err
    # past -M the repeat is not looked at, as in trec_eval
    status, out, _ = call(capsys, "-M2", "-m", "num_ret", *args)
    assert status == 0
    assert out.splitlines()[-1] == "num_ret               \tall\t3"


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["-m", "nosuch"], 1, "illegal measure 'nosuch'"),
        (["-m", "P."], 1, "illegal measure 'P'"),
        (["-m", "P.0,5"], 2, "Cannot initialize measure 'P'"),
        (["-x"], 1, "Usage: trec_eval"),
        (["-R", "prefs"], 2, "not implemented"),
        (["-Z", "zfile"], 2, "not implemented"),
    ],
)
def test_command_line_errors(
    files: tuple[str, str],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    status: int,
    message: str,
) -> None:
    got, out, err = call(capsys, *args, *files)
    assert got == status
    assert out == ""
    assert message in err


def test_usage_and_unreadable_files(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert call(capsys, files[0])[0] == 1
    status, _, err = call(capsys, files[0], str(tmp_path / "missing"))
    assert status == 2 and "Quit in file" in err
    (tmp_path / "other").write_text("zz 0 a 1\n")
    status, _, err = call(capsys, str(tmp_path / "other"), files[1])
    assert status == 4 and "'zz'" in err  # judged but unranked: refused without -c
    status, _, err = call(capsys, "-c", str(tmp_path / "other"), files[1])
    assert status == 0


def test_unimplemented_measure_is_named(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # trec_eval -m prefs_simp -m map QRELS RUN: "Can't calculate measure 'prefs_simp'" at the
    # first query (a qrels file has no preferences), exit 4, nothing on stdout
    status, out, err = call(capsys, "-m", "prefs_simp", "-m", "map", *files)
    assert (status, out) == (4, "")
    assert "'prefs_simp' is not implemented" in err


def test_judged_only_nosummary_and_num_docs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "qrels").write_text("q1 0 r 1\nq1 0 n 0\n")
    (tmp_path / "run").write_text("q1 Q0 u 1 3.0 t\nq1 Q0 r 2 2.0 t\n")
    args = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    # without -J the unjudged 'u' holds rank 1: P_1 = 0; with -J it is dropped: P_1 = 1
    assert "P_1                   \tq1\t0.0000" in call(capsys, "-q", "-n", "-mP.1", *args)[1]
    status, out, _ = call(capsys, "-q", "-n", "-J", "-mP.1", *args)
    assert status == 0 and out == "P_1                   \tq1\t1.0000\n"
    # utility d·(N + A − ret − R) with N = 10: 10 + 1 − 2 − 1 = 8
    out = call(capsys, "-N10", "-mutility.0,0,0,1", *args)[1]
    assert "utility_0,0,0,1       \tall\t8.0000" in out.splitlines()


def test_run_from_stdin(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    class _Stdin:
        buffer = io.BytesIO(RUN.encode())

    monkeypatch.setattr(sys, "stdin", _Stdin())
    status, out, _ = call(capsys, "-m", "num_ret", files[0], "-")
    assert status == 0
    assert out.splitlines()[-1] == "num_ret               \tall\t3"


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = call(capsys, "-h")
    assert status == 0 and "trec-eval" in out
    status, _, err = call(capsys, "-v")
    assert status == 0 and "trec_eval version" in err
