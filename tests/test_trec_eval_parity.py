"""trec_eval 10.0 to the byte: summation order, parameters, exit statuses, yaap.

Every expected output below is trec_eval 10.0's own (built from ``../shared/reference/
trec_eval-10.0``), recorded with the command that produced it; the inputs are written next to
each test. ``QRELS``/``RUN`` in a command stand for the files the test writes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import _accel, evaluate
from ragmeter.core import sums
from ragmeter.report.trec_eval import main

Call = Callable[..., tuple[int, str, str]]


@pytest.fixture
def te(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Call:
    """``te(qrels_text, run_text, *flags)`` → (status, stdout, stderr) of ``ragmeter trec-eval``."""

    def call(qrels: str, run: str, *flags: str) -> tuple[int, str, str]:
        (tmp_path / "qrels").write_text(qrels)
        (tmp_path / "run").write_text(run)
        status = main([*flags, str(tmp_path / "qrels"), str(tmp_path / "run")])
        out = capsys.readouterr()
        return status, out.out, out.err

    return call


def lines(*rows: tuple[str, str, str]) -> str:
    return "".join(f"{label:<22}\t{qid}\t{value}\n" for label, qid, value in rows)


# -- 1. summation order ------------------------------------------------------------------------

# q1 Q0 d{i} {i+1} {10-i} r for i = 0..9; relevant d0 d2 d3 d4 d5 d9 x1 x2:
# AP = (1 + 2/3 + 3/4 + 4/5 + 5/6 + 6/10) / 8 = 4.65 / 8 = 0.58125, on a rounding boundary.
AP_RUN = "".join(f"q1 Q0 d{i} {i + 1} {10 - i} r\n" for i in range(10))
AP_QRELS = "".join(f"q1 0 {d} 1\n" for d in ("d0", "d2", "d3", "d4", "d5", "d9", "x1", "x2"))


def test_ap_sums_in_rank_order(te: Call) -> None:
    # trec_eval -m map -m map_cut.10 QRELS RUN
    expected = lines(("map", "all", "0.5812"), ("map_cut_10", "all", "0.5812"))
    assert te(AP_QRELS, AP_RUN, "-m", "map", "-m", "map_cut.10") == (0, expected, "")


# Ten queries, one relevant doc each at these ranks: the mean RR is 0.14775 exactly; added in
# query order it rounds to 0.1478 (trec_eval), a pairwise sum gives 0.1477.
RR_RANKS = (8, 8, 10, 2, 4, 20, 16, 25, 10, 8)
RR_RUN = "".join(
    f"q{q + 1:02d} Q0 d{i} {i + 1} {100 - i} r\n" for q in range(10) for i in range(25)
)
RR_QRELS = "".join(f"q{q + 1:02d} 0 d{r - 1} 1\n" for q, r in enumerate(RR_RANKS))


def test_mean_sums_in_query_order(te: Call) -> None:
    # trec_eval -m recip_rank QRELS RUN
    assert te(RR_QRELS, RR_RUN, "-m", "recip_rank") == (
        0,
        lines(("recip_rank", "all", "0.1478")),
        "",
    )


def test_evaluate_mean_is_trec_evals(tmp_path: Path) -> None:
    from ragmeter.io.trec import read_trec_qrels, read_trec_run

    (tmp_path / "q").write_text(RR_QRELS)
    (tmp_path / "r").write_text(RR_RUN)
    ev = evaluate(read_trec_run(tmp_path / "r"), read_trec_qrels(tmp_path / "q"), ["mrr"])
    mean = ev.runs[0].means()["mrr"]
    assert mean is not None
    assert f"{mean:6.4f}" == "0.1478"  # as trec_eval prints it
    assert mean == sums.sequential_sum([1 / r for r in RR_RANKS]) / 10


# -M 5 cuts both rankings to five items: q1's 5th item is unjudged, q2's 4th and 5th are.
RESID_QRELS = "q1 0 a1 1\nq1 0 a2 0\nq1 0 a3 0\nq1 0 a4 0\nq2 0 b1 1\nq2 0 b2 0\nq2 0 b3 0\n"
RESID_RUN = (
    "q1 Q0 a1 1 9 r\nq1 Q0 a2 2 8 r\nq1 Q0 a3 3 7 r\nq1 Q0 a4 4 6 r\nq1 Q0 u5 5 5 r\n"
    "q1 Q0 u6 6 4 r\nq1 Q0 u7 7 3 r\nq2 Q0 b1 1 9 r\nq2 Q0 b2 2 8 r\nq2 Q0 b3 3 7 r\n"
    "q2 Q0 u4 4 6 r\nq2 Q0 u5 5 5 r\nq2 Q0 b6 6 4 r\n"
)


def test_rbp_resid_weights_by_repeated_multiplication(te: Call) -> None:
    # trec_eval -M 5 -q -m rbp_resid QRELS RUN   (p^i from np.power gives "all 0.6925")
    expected = lines(
        ("rbp_resid", "q1", "0.6561"), ("rbp_resid", "q2", "0.7290"), ("rbp_resid", "all", "0.6926")
    )
    assert te(RESID_QRELS, RESID_RUN, "-M", "5", "-q", "-m", "rbp_resid") == (0, expected, "")


# -- the summation helpers ---------------------------------------------------------------------


def loop_sum(values: list[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total


segments = st.lists(
    st.lists(
        st.floats(-1e3, 1e3, allow_nan=False) | st.sampled_from([0.0, 0.1, 1 / 3]), max_size=40
    ),
    max_size=12,
)


@pytest.fixture(params=["native", "numpy"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "native":
        if _accel.native is None:
            pytest.skip("the C accelerator is not built")
    else:
        monkeypatch.setattr(_accel, "native", None)
    return str(request.param)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(segs=segments, cut=st.integers(0, 50))
def test_segment_helpers_add_left_to_right(path: str, segs: list[list[float]], cut: int) -> None:
    values = np.array([v for s in segs for v in s], dtype=np.float64)
    lengths = [len(s) for s in segs]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    expected_cum = [
        acc for s in segs for acc in np.array([loop_sum(s[: i + 1]) for i in range(len(s))])
    ]
    assert sums.segment_cumsum(values, offsets).tolist() == expected_cum
    ends = offsets[:-1] + np.minimum(cut, lengths)
    assert sums.segment_sums(values, offsets[:-1], ends).tolist() == [
        loop_sum(s[:cut]) for s in segs
    ]


def test_segment_helpers_on_mixed_lengths(path: str) -> None:
    # several length classes and a long segment: the numpy path's padded blocks
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 70, 300)
    lengths[3] = 3000
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = rng.random(int(offsets[-1])) * rng.integers(0, 3, int(offsets[-1]))
    segs = [values[a:b].tolist() for a, b in itertools.pairwise(offsets)]
    cum = sums.segment_cumsum(values, offsets)
    assert [cum[b - 1] for a, b in itertools.pairwise(offsets) if b > a] == [
        loop_sum(s) for s in segs if s
    ]
    k = rng.integers(0, 80, len(lengths))
    ends = offsets[:-1] + np.minimum(k, lengths)
    got = sums.segment_sums(values, offsets[:-1], ends)
    assert got.tolist() == [loop_sum(s[:c]) for s, c in zip(segs, k.tolist(), strict=True)]


def test_sequential_mean_and_geometric_mean() -> None:
    values = [1 / r for r in RR_RANKS]
    assert sums.sequential_mean(values) == loop_sum(values) / 10
    assert float(np.mean(values)) != sums.sequential_mean(values)  # numpy adds pairwise
    logs = [math.log(max(v, 1e-5)) for v in [0.0, 0.5, 0.25]]
    assert sums.geometric_mean([0.0, 0.5, 0.25]) == math.exp(loop_sum(logs) / 3)
    # absent values count at the floor
    assert sums.geometric_mean([0.5], 2) == math.exp((math.log(0.5) + math.log(1e-5)) / 2)


def test_log2_table_and_powers_are_libms() -> None:
    n = np.arange(1, 5000)
    assert sums.log2_of_int(n).tolist() == [math.log2(i) for i in range(1, 5000)]
    table = sums.power_table(0.9, 30)
    cur, expected = 1.0, []
    for _ in range(31):
        expected.append(cur)
        cur *= 0.9
    assert table.tolist() == expected


# -- 2, 3. rbp_resid's parameters and trec_eval's pair grammar ---------------------------------

ONE_QRELS = "q1 0 d1 1\n"
ONE_RUN = "q1 Q0 d1 1 2 r\nq1 Q0 d9 2 1 r\n"


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        # trec_eval -m rbp_resid.p=0.5 QRELS RUN
        ("rbp_resid.p=0.5", lines(("rbp_resid_p=0.5", "all", "0.5000"))),
        # trec_eval -m rbp.p=0.5,p=0.8 QRELS RUN: the last value of a name wins
        ("rbp.p=0.5,p=0.8", lines(("rbp_p=0.5,p=0.8", "all", "0.2000"))),
        # trec_eval -m rbp_resid.p=0.5,p=0.8 QRELS RUN
        ("rbp_resid.p=0.5,p=0.8", lines(("rbp_resid_p=0.5,p=0.8", "all", "0.8000"))),
        # trec_eval -m rbp.=0.5 QRELS RUN: an empty name is a pair (read by no measure)
        ("rbp.=0.5", lines(("rbp_=0.5", "all", "0.1000"))),
        # trec_eval -m dcg.p=3 QRELS RUN: dcg reads no 'p'
        ("dcg.p=3", lines(("dcg_p=3", "all", "1.0000"))),
    ],
)
def test_pair_parameters(te: Call, measure: str, expected: str) -> None:
    assert te(ONE_QRELS, ONE_RUN, "-m", measure) == (0, expected, "")


@pytest.mark.parametrize(
    ("measure", "name"),
    [
        # trec_eval -m rbp_resid.0.5 QRELS RUN → malformed pair parameters in '0.5', exit 2
        ("rbp_resid.0.5", "rbp_resid"),
        # trec_eval -m ndcg.1=2=3 QRELS RUN → malformed pair parameters in '1=2=3', exit 2
        ("ndcg.1=2=3", "ndcg"),
        # trec_eval -m rbp.p=0.5, QRELS RUN → malformed pair parameters in 'p=0.5,', exit 2
        ("rbp.p=0.5,", "rbp"),
    ],
)
def test_malformed_pairs_are_refused(te: Call, measure: str, name: str) -> None:
    status, out, err = te(ONE_QRELS, ONE_RUN, "-m", measure)
    params = measure.partition(".")[2]
    assert (status, out) == (2, "")
    assert err == (
        f"trec_eval: malformed pair parameters in '{params}'\n"
        f"trec_eval: Cannot initialize measure '{name}'\n"
    )


# -- 6. exit statuses ------------------------------------------------------------------------

GAP_QRELS = "q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n"
GAP_RUN = "q1 Q0 a 1 2 r\nq3 Q0 c 1 1 r\n"


def test_missing_query_stops_after_the_earlier_lines(te: Call) -> None:
    # trec_eval -q -m map -m P.5 QRELS RUN → the lines of q1, then "result qid 'q2' not found
    # in qrels", exit 4
    status, out, err = te(GAP_QRELS, GAP_RUN, "-q", "-m", "map", "-m", "P.5")
    assert (status, out) == (4, lines(("map", "q1", "1.0000"), ("P_5", "q1", "0.2000")))
    assert "'q2'" in err


@pytest.mark.parametrize(
    ("flags", "status", "expected"),
    [
        # trec_eval -D 0.q3 -q -m map -m num_q QRELS RUN
        (
            ("-D", "0.q3", "-q", "-m", "map", "-m", "num_q"),
            0,
            lines(("map", "q3", "1.0000"), ("num_q", "all", "1"), ("map", "all", "1.0000")),
        ),
        # trec_eval -D 0.q3 -c -m map -m gm_map -m num_q QRELS RUN: -c divides by the 3 qrels
        # queries, gm_map counts the two others at the 1e-5 floor
        (
            ("-D", "0.q3", "-c", "-m", "map", "-m", "gm_map", "-m", "num_q"),
            0,
            lines(("num_q", "all", "3"), ("map", "all", "0.3333"), ("gm_map", "all", "0.0005")),
        ),
        # trec_eval -D 0.q2 -m map QRELS RUN: q2 has no ranking → exit 4
        (("-D", "0.q2", "-m", "map"), 4, ""),
        # trec_eval -D 0.zz -m map QRELS RUN: no such query → exit 7
        (("-D", "0.zz", "-m", "map"), 7, ""),
    ],
)
def test_debug_query_evaluates_that_query_only(
    te: Call, flags: tuple[str, ...], status: int, expected: str
) -> None:
    got = te(GAP_QRELS, GAP_RUN, *flags)
    assert got[:2] == (status, expected)


def test_debug_query_with_c_counts_every_relevant_document(te: Call) -> None:
    # trec_eval -D 0.q3 -c -q -m num_rel -m map QRELS RUN: -c's summary num_rel counts the
    # relevant documents of every qrels query, though -D evaluates q3 only
    qrels = GAP_QRELS + "q3 0 d 2\nq3 0 e 0\n"
    assert te(qrels, GAP_RUN, "-D", "0.q3", "-c", "-q", "-m", "num_rel", "-m", "map")[:2] == (
        0,
        lines(
            ("num_rel", "q3", "2"),
            ("map", "q3", "0.5000"),
            ("num_rel", "all", "4"),
            ("map", "all", "0.1667"),
        ),
    )


def test_prefs_nickname_is_not_implemented(te: Call) -> None:
    # trec_eval -m prefs QRELS RUN → "Can't calculate measure 'prefs_num_prefs_poss'", exit 4
    status, out, err = te(ONE_QRELS, ONE_RUN, "-m", "prefs")
    assert (status, out) == (4, "")
    assert "not implemented" in err and "illegal measure" not in err
    assert err.endswith("trec_eval: Can't calculate measure 'prefs_num_prefs_poss'\n")


# -- 7. yaap -------------------------------------------------------------------------------------


def test_yaap(te: Call) -> None:
    # trec_eval -q -m yaap QRELS RUN on the AP case: log((1 + 4.65) / (1 + 8 − 4.65))
    assert te(AP_QRELS, AP_RUN, "-q", "-m", "yaap") == (
        0,
        lines(("yaap", "q1", "0.2615"), ("yaap", "all", "0.2615")),
        "",
    )
    assert math.log((1 + 4.65) / (1 + 8 - 4.65)) == pytest.approx(0.26148, abs=1e-5)
    # trec_eval -m yaap QRELS RUN on the ten-query case
    assert te(RR_QRELS, RR_RUN, "-m", "yaap")[1] == lines(("yaap", "all", "-0.4816"))
    # trec_eval -c -q -m yaap -m num_q QRELS RUN: q2 has no ranking, log(1 / (1 + 1))
    assert te(GAP_QRELS, GAP_RUN, "-c", "-q", "-m", "yaap", "-m", "num_q")[1] == lines(
        ("yaap", "q1", "0.6931"),
        ("yaap", "q2", "-0.6931"),
        ("yaap", "q3", "0.6931"),
        ("num_q", "all", "3"),
        ("yaap", "all", "0.2310"),
    )


# -- 8. numbers saturate like C atol ---------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        # trec_eval -M 99999999999999999999 -m P.5 QRELS RUN
        (("-M", "99999999999999999999", "-m", "P.5"), lines(("P_5", "all", "0.2000"))),
        # trec_eval -m P.99999999999999999999 QRELS RUN
        (("-m", "P.99999999999999999999"), lines(("P_9223372036854775807", "all", "0.0000"))),
        # trec_eval -N 1e20 -m utility.0,0,0,1 QRELS RUN: atol("1e20") = 1
        (("-N", "1e20", "-m", "utility.0,0,0,1"), lines(("utility_0,0,0,1", "all", "-1.0000"))),
        # trec_eval -N 99999999999999999999 -m utility.0,0,0,1 QRELS RUN
        (
            ("-N", "99999999999999999999", "-m", "utility.0,0,0,1"),
            lines(("utility_0,0,0,1", "all", "9223372036854775808.0000")),
        ),
    ],
)
def test_huge_numbers_saturate(te: Call, flags: tuple[str, ...], expected: str) -> None:
    assert te(ONE_QRELS, ONE_RUN, *flags) == (0, expected, "")
