"""The documented deliberate differences from trec_eval 10.0 (docs/trec_eval.md), one test each.

Each case records trec_eval 10.0's own stdout and exit status (built from
``../shared/reference/trec_eval-10.0``) under the command that produced it, beside what
ragmeter does instead; ``QRELS``/``RUN`` in a command stand for the files the test writes.
The differential test (tests/test_trec_eval_differential.py) counts these cases apart.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragmeter.report import trec_eval
from ragmeter.report.trec_eval import main


@dataclass(frozen=True)
class Deliberate:
    """One row of the table: inputs, flags, trec_eval's result, ragmeter's."""

    qrels: str
    run: str
    flags: tuple[str, ...]
    #: trec_eval 10.0's (exit status, stdout), as it printed them
    theirs: tuple[int, str]
    #: ragmeter's (exit status, stdout)
    ours: tuple[int, str]
    #: a part of ragmeter's stderr
    message: str = ""


def line(label: str, value: str) -> str:
    return f"{label:<22}\tall\t{value}\n"


ONE = "q1 Q0 d1 1 1 t\n"
LEVELS = "q1 0 d1 1\nq1 0 d2 2\nq1 0 d3 -1\nq1 0 d4 0\n"
LEVELS_RUN = "q1 Q0 d1 1 4 t\nq1 Q0 d2 2 3 t\nq1 Q0 d3 3 2 t\nq1 Q0 d4 4 1 t\n"
GRADED = "q1 0 d1 1\nq1 0 d2 2\n"
GRADED_RUN = "q1 Q0 d2 1 2 t\nq1 Q0 d1 2 1 t\n"
NOT_READ = "trec_eval: Quit in file"

CASES = {
    # trec_eval -c -m utility.2,-1,0,0 QRELS RUN: a fake one-doc ranking for q2
    "-c, missing query": Deliberate(
        "q1 0 d1 1\nq2 0 d2 1\n",
        ONE,
        ("-c", "-m", "utility.2,-1,0,0"),
        (0, line("utility_2,-1,0,0", "0.5000")),
        (0, line("utility_2,-1,0,0", "1.0000")),
    ),
    # trec_eval -c -l 2 -m num_rel QRELS RUN: the summary ignores -l
    "-c -l, num_rel": Deliberate(
        "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 2\n",
        ONE,
        ("-c", "-l", "2", "-m", "num_rel"),
        (0, line("num_rel", "3")),
        (0, line("num_rel", "2")),
    ),
    # trec_eval -m num_rel QRELS RUN: segmentation fault
    "qrels ending with a comment": Deliberate(
        "q1 0 d1 1\n# end\n", ONE, ("-m", "num_rel"), (139, ""), (0, line("num_rel", "1"))
    ),
    # trec_eval -m num_rel QRELS RUN: "trec_eval.get_qrels: Malformed line 1", exit 2
    "consecutive comments": Deliberate(
        "# a\n# b\nq1 0 d1 1\n", ONE, ("-m", "num_rel"), (2, ""), (0, line("num_rel", "1"))
    ),
    # trec_eval -m num_rel QRELS RUN: "Malformed line 2", exit 2
    "indented comment": Deliberate(
        "q1 0 d1 1\n   # note\n", ONE, ("-m", "num_rel"), (2, ""), (0, line("num_rel", "1"))
    ),
    # trec_eval -m num_rel QRELS RUN: "Malformed line 2", exit 2
    "blank line": Deliberate(
        "q1 0 d1 1\n\nq1 0 d2 0\n", ONE, ("-m", "num_rel"), (2, ""), (0, line("num_rel", "1"))
    ),
    # trec_eval -m map QRELS RUN: "Can't calculate measure 'map'", exit 4
    "judged only negative": Deliberate(
        "q1 0 d1 -1\n", ONE, ("-m", "map"), (4, ""), (0, line("map", "0.0000"))
    ),
    # trec_eval -J -m iprec_at_recall.0 QRELS RUN
    "-J, all unjudged": Deliberate(
        "q1 0 d1 1\n",
        "q1 Q0 x 1 1 t\n",
        ("-J", "-m", "iprec_at_recall.0"),
        (0, line("iprec_at_recall_0.00", "  -nan")),
        (0, line("iprec_at_recall_0.00", "0.0000")),
    ),
    # trec_eval -m Rndcg.1=0 QRELS RUN
    "Rndcg, no positive gain": Deliberate(
        "q1 0 d1 1\n",
        ONE,
        ("-m", "Rndcg.1=0"),
        (0, line("Rndcg_1=0", "  -nan")),
        (0, line("Rndcg_1=0", "0.0000")),
    ),
    # trec_eval -m set_F.-1 QRELS RUN
    "set_F.-1": Deliberate(
        "q1 0 d1 1\n",
        ONE,
        ("-m", "set_F.-1"),
        (0, line("set_F_-1", "  -nan")),
        (0, line("set_F_-1", "0.0000")),
    ),
    # trec_eval -m ndcg.1=0.5 QRELS RUN: gains compared as integers
    "fractional gain": Deliberate(
        "q1 0 d1 1\n",
        ONE,
        ("-m", "ndcg.1=0.5"),
        (0, line("ndcg_1=0.5", "0.0000")),
        (0, line("ndcg_1=0.5", "1.0000")),
    ),
    # trec_eval -m ndcg.1=3,1=1 QRELS RUN
    "a gain level twice": Deliberate(
        LEVELS,
        LEVELS_RUN,
        ("-m", "ndcg.1=3,1=1"),
        (0, line("ndcg_1=3,1=1", "0.5307")),
        (0, line("ndcg_1=3,1=1", "1.0000")),
    ),
    # trec_eval -m ndcg -m rbp QRELS RUN (alone, trec_eval -m rbp QRELS RUN prints 0.1450):
    # min and max of the gain range are read uninitialised
    "rbp, gain outside [0, 1]": Deliberate(
        GRADED,
        GRADED_RUN,
        ("-m", "ndcg", "-m", "rbp"),
        (0, line("ndcg", "1.0000") + line("rbp", "0.1102")),
        (0, line("ndcg", "1.0000") + line("rbp", "0.1450")),
    ),
    # trec_eval -m G.1=2,2=5 -m rbp QRELS RUN on binary qrels (trec_eval -m rbp QRELS RUN
    # prints 0.1000): G's gains left in memory rescale rbp's
    "rbp, binary qrels after G": Deliberate(
        "q1 0 d1 1\nq1 0 d2 0\n",
        "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n",
        ("-m", "G.1=2,2=5", "-m", "rbp"),
        (0, line("G_1=2,2=5", "1.0000") + line("rbp", "0.0500")),
        (0, line("G_1=2,2=5", "1.0000") + line("rbp", "0.1000")),
    ),
    # trec_eval -m rbp.0=2 QRELS RUN
    "rbp.0=2": Deliberate(
        GRADED,
        GRADED_RUN,
        ("-m", "rbp.0=2"),
        (0, line("rbp_0=2", "0.1450")),
        (0, line("rbp_0=2", "0.1000")),
    ),
    # trec_eval -m rbp.p=abc QRELS RUN: atof reads p = 0
    "rbp.p=abc": Deliberate(
        "q1 0 d1 1\n",
        ONE,
        ("-m", "rbp.p=abc"),
        (0, line("rbp_p=abc", "1.0000")),
        (2, ""),
        "rbp: parameter 'abc' is not a number",
    ),
    # trec_eval -m iprec_at_recall.1e400 QRELS RUN
    "iprec_at_recall.1e400": Deliberate(
        "q1 0 d1 1\n",
        ONE,
        ("-m", "iprec_at_recall.1e400"),
        (0, line("iprec_at_recall_inf", "1.0000")),
        (2, ""),
        "cutoff must be ≤ 1.0, got inf",
    ),
    # trec_eval -M -5 -m num_ret QRELS RUN: segmentation fault
    "-M below 0": Deliberate(
        "q1 0 d1 1\n", ONE, ("-M", "-5", "-m", "num_ret"), (139, ""), (0, line("num_ret", "0"))
    ),
    # trec_eval -m dcg.1=2 -m ndcg.1=3 QRELS RUN: "free(): double free detected", exit 134
    "two gain maps": Deliberate(
        "q1 0 d1 1\n",
        ONE,
        ("-m", "dcg.1=2", "-m", "ndcg.1=3"),
        (134, ""),
        (0, line("dcg_1=2", "2.0000") + line("ndcg_1=3", "1.0000")),
    ),
    # trec_eval -m num_rel QRELS RUN: "duplicate docs d1", exit 4
    "an identical judgment twice": Deliberate(
        "q1 0 d1 1\nq1 0 d1 1\n",
        ONE,
        ("-m", "num_rel"),
        (4, ""),
        (0, line("num_rel", "1")),
        "1 repeated identical judgment(s) ignored",
    ),
    # trec_eval -m prefs_simp QRELS RUN: "Can't calculate measure 'prefs_simp'", exit 4
    "prefs measure": Deliberate(
        "q1 0 d1 1\n", ONE, ("-m", "prefs_simp"), (4, ""), (4, ""), "is not implemented"
    ),
    # trec_eval -m num_rel QRELS RUN: atol reads 1
    "grade 1_0": Deliberate(
        "q1 0 d1 1_0\n",
        ONE,
        ("-m", "num_rel"),
        (0, line("num_rel", "1")),
        (2, ""),
        "line 1, field 'grade': '1_0' is not an integer",
    ),
    # trec_eval -m num_ret QRELS RUN: atof reads 1
    "score 1_0": Deliberate(
        "q1 0 d1 1\n",
        "q1 Q0 d1 1 1_0 t\n",
        ("-m", "num_ret"),
        (0, line("num_ret", "1")),
        (2, ""),
        "line 1, field 'score': '1_0' is not a number",
    ),
    # trec_eval -m num_rel QRELS RUN: "Malformed line 2", exit 2 (it stops reading at the NUL)
    "NUL byte": Deliberate(
        "q1 0 d1 1\nq1 0 d2 \0 1\n", ONE, ("-m", "num_rel"), (2, ""), (2, ""), "binary input"
    ),
    # trec_eval -m num_rel QRELS RUN: "result qid '\ufeffq1' not found in qrels", exit 4
    "byte-order mark": Deliberate(
        "\ufeffq1 0 d1 1\n", ONE, ("-m", "num_rel"), (4, ""), (2, ""), "byte-order mark"
    ),
    # trec_eval -l -2 -m P.4 -m num_rel QRELS RUN: the unjudged d3 counts as relevant
    "-l below 0": Deliberate(
        LEVELS,
        LEVELS_RUN,
        ("-l", "-2", "-m", "P.4", "-m", "num_rel"),
        (0, line("num_rel", "3") + line("P_4", "1.0000")),
        (1, ""),
        "the relevance level must be at least 0",
    ),
}


def run(tmp_path: Path, qrels: str, run_text: str, *argv: str) -> tuple[int, str, str]:
    (tmp_path / "QRELS").write_text(qrels, encoding="utf-8")
    (tmp_path / "RUN").write_text(run_text, encoding="utf-8")
    where = {"QRELS": str(tmp_path / "QRELS"), "RUN": str(tmp_path / "RUN")}
    out, err = io.StringIO(), io.StringIO()
    status = trec_eval.run([where.get(a, a) for a in argv], out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", list(CASES))
def test_deliberate_difference(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    status, out, err = run(tmp_path, case.qrels, case.run, *case.flags, "QRELS", "RUN")
    assert (status, out) == case.ours
    assert case.message in err


def test_run_file_named_like_an_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # trec_eval -m num_ret -- QRELS -x < /dev/null: reads standard input (any name starting
    # with '-'): "result qid 'q1' not found in qrels", exit 4
    monkeypatch.chdir(tmp_path)
    Path("QRELS").write_text("q1 0 d1 1\n")
    Path("-x").write_text(ONE)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["-m", "num_ret", "--", "QRELS", "-x"]) == 0
    assert capsys.readouterr().out == line("num_ret", "1")


def test_empty_run_on_standard_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # trec_eval QRELS - < /dev/null: "result qid 'q1' not found in qrels", exit 4; an empty
    # run file instead: "Cannot read results file", exit 2 — ragmeter: exit 2 for both
    (tmp_path / "QRELS").write_text("q1 0 d1 1\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main([str(tmp_path / "QRELS"), "-"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "-: no data lines" in captured.err
    (tmp_path / "RUN").write_text("")
    assert main([str(tmp_path / "QRELS"), str(tmp_path / "RUN")]) == 2
