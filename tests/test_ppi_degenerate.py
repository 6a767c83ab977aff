"""Nothing silently wrong in prediction-powered inference: no interval and no p-value from a
variance the data cannot estimate (constant human labels), no inclusion probability whose
weight overflows, no NaN shown as a number or as a significant p-value.

Six queries, three ranked passages each, P@3 worked out by hand from the qrels below; the
arithmetic of :mod:`ragmeter.stats.ppi_core` against ppi-python (0.2.3) and the formulas.
"""

from __future__ import annotations

import doctest
import io
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.io.label_queue import read_label_queue
from ragmeter.io.labelled import read_labelled_queries
from ragmeter.stats._common import normal_two_sided
from ragmeter.stats.correction import adjust
from ragmeter.stats.ppi import PPIError, PPIEstimate, ppi_mean, ppi_paired_difference

ppi_py = pytest.importorskip("ppi_py")
runner = CliRunner()

QUERIES = ("q1", "q2", "q3", "q4", "q5", "q6")
RUN_A = {q: ["d1", "d2", "d3"] for q in QUERIES}
RUN_B = {q: ["d2", "d3", "d4"] for q in QUERIES}  # A without its first passage
LLM = {
    "q1": {"d1": 1, "d2": 1, "d3": 0},  # P@3: A 2/3, B 1/3
    "q2": {"d1": 1, "d2": 1, "d3": 1},  # A 1, B 2/3
    "q3": {"d1": 1, "d2": 0, "d3": 0},  # A 1/3, B 0
    "q4": {"d1": 1, "d2": 1, "d3": 0},  # A 2/3, B 1/3
    "q5": {"d1": 0, "d2": 0, "d3": 1},  # A 1/3, B 1/3
    "q6": {"d1": 1, "d2": 0, "d3": 0},  # A 1/3, B 0
}
# people label q1–q3: the first passage relevant, the others not. Merged with the LLM grades
# (d4 is unjudged: 0), A scores 1/3 and B 0 on each: Y_A constant, Y_A − Y_B = 1/3 constant
HUMAN = {q: {"d1": 1, "d2": 0, "d3": 0} for q in ("q1", "q2", "q3")}
CONSTANT = "human labels constant on 3 queries: no variance estimate"


def _write_run(path: Path, ranking: dict[str, list[str]], name: str) -> str:
    lines = [
        f"{q} Q0 {d} {r + 1} {10 - r} {name}" for q, ds in ranking.items() for r, d in enumerate(ds)
    ]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return {
        "a": _write_run(tmp_path / "a.txt", RUN_A, "a"),
        "b": _write_run(tmp_path / "b.txt", RUN_B, "b"),
        "llm": _write_qrels(tmp_path / "llm.txt", LLM),
        "human": _write_qrels(tmp_path / "human.txt", HUMAN),
    }


def _cli(*args: str) -> tuple[int, str]:
    done = runner.invoke(app, list(args))
    return done.exit_code, done.output


def _ppi_args(files: dict[str, str]) -> list[str]:
    return ["--qrels", files["llm"], "--human-qrels", files["human"], "--ppi", "-m", "P@3"]


# -- T7: constant human labels ---------------------------------------------------------------


def test_constant_human_labels_give_no_interval_and_say_why() -> None:
    # ppi-python's interval is [1, 1]: a zero standard error from three equal values
    y, yhat, yhat_u = np.ones(3), np.array([0.4, 0.6, 0.5]), np.array([0.2, 0.9, 0.3, 0.7])
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
    assert (float(low[0]), float(high[0])) == pytest.approx((1.0, 1.0))
    for lam in (None, 1.0):  # whatever λ: the human labels' variance is not estimated
        got = ppi_mean(y, yhat, yhat_u, lam=lam)
        assert got.ci is None and got.se is None and got.pvalue is None
        assert got.human_ci is None and got.effective_n is None
        assert got.note == CONSTANT
    # the point estimate is still reported: at λ* = 0 (cov(Y, Ŷ) = 0) the human mean, 1
    assert ppi_mean(y, yhat, yhat_u).estimate == 1.0


def test_constant_paired_difference_is_never_significant() -> None:
    # D = Y_a − Y_b = −1 on every labelled query: the old p-value was 0 (a zero standard
    # error read as an infinite z); now there is none
    got = ppi_paired_difference(
        [0.0, 0.0, 0.0], [0.5, 0.4, 0.6], [0.5, 0.3], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [0.4, 0.4]
    )
    assert got.estimate == pytest.approx(-1.0)  # λ* = 0: mean(D)
    assert got.pvalue is None and got.ci is None and got.note == CONSTANT


def test_zero_variance_without_constant_labels_is_named() -> None:
    # classic PPI (λ = 1) with Y − Ŷ = 0.1 on every labelled query and one unlabelled query:
    # se² = var(Ŷᵤ)/1 + var(Y − Ŷ)/3 = 0 though Y varies (in floating point 0.2 − 0.1 and
    # 0.9 − 0.8 differ in the last bit: a se of 1e-17 that once gave p = 0)
    got = ppi_mean([0.2, 0.5, 0.9], [0.1, 0.4, 0.8], [0.3], lam=1.0)
    assert got.estimate == pytest.approx(0.3 + 0.1)
    assert got.ci is None and got.pvalue is None
    assert got.note == "zero estimated variance on 3 labelled queries: no interval"
    assert got.human_ci is not None  # Y itself varies: the human-only interval stands


def test_evaluate_ppi_json_has_no_interval_from_constant_labels(files) -> None:
    code, out = _cli("evaluate", files["a"], *_ppi_args(files), "-f", "json")
    assert code == 0, out
    ppi = json.loads(out)["runs"][0]["metrics"]["precision@3"]["ppi"]
    assert ppi["estimate"] == pytest.approx(1 / 3)  # λ* = 0: the human mean of 1/3, 1/3, 1/3
    assert ppi["ci"] is None and ppi["human_ci"] is None and ppi["effective_n"] is None
    assert ppi["note"] == CONSTANT
    assert ppi["llm_ci"] is not None  # the LLM values vary: their interval stands


def test_compare_ppi_prints_no_p_value_from_constant_differences(files) -> None:
    args = ["compare", files["b"], files["a"], *_ppi_args(files), "--baseline", files["a"]]
    code, table = _cli(*args)
    assert code == 0, table
    assert "<0.0001" not in table and "n/a" in table
    assert CONSTANT in " ".join(table.split())
    code, out = _cli(*args, "-f", "json")
    assert code == 0, out
    (diff,) = json.loads(out)["differences"]
    assert diff["estimate"] == pytest.approx(-1 / 3)  # B − A: 0 − 1/3 on each labelled query
    assert diff["pvalue"] is None and diff["pvalue_adjusted"] is None and diff["ci"] is None
    assert diff["note"] == CONSTANT


def test_monitor_ppi_stores_no_interval_from_constant_labels(tmp_path: Path) -> None:
    from ragmeter.report.monitor import _ppi_cells, print_ppi
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_ppi, save_ppi
    from ragmeter.workflows.monitor import MonitorPPI, WindowPPI, ppi_rows

    estimate = ppi_mean([0.4, 0.4, 0.4], [0.6, 0.4, 0.8], [0.2, 0.6, 0.4, 0.8], alpha=0.05)
    window = WindowPPI(0, "ndcg@5", 3, 4, 0.5714, estimate)
    result = MonitorPPI("production", 86400, [window], None, "human (alice)", 0.05)
    (row,) = ppi_rows(result)
    assert row.estimate == pytest.approx(0.4) and math.isnan(row.low) and math.isnan(row.high)
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with open_store(url) as store:
        save_ppi(store, "production", 86400, [row])
        (stored,) = load_ppi(store, "production", 86400)
    assert math.isnan(stored.low) and math.isnan(stored.high)  # NULL, never [0.4, 0.4]
    buffer = io.StringIO()
    print_ppi(result, file=buffer)
    assert "no interval" in buffer.getvalue() and CONSTANT in buffer.getvalue()
    # monitor report: the stored row's interval cell says so, rather than "[0.4000, 0.4000]"
    trend = SimpleNamespace(ppi={("ndcg@5", 0): stored})
    cells = _ppi_cells(trend, SimpleNamespace(measure="ndcg@5", window_start=0))  # type: ignore[arg-type]
    assert "no interval" in cells and "0.4000</span>" in cells and "[0.4000" not in cells


# -- T8: inclusion probabilities and NaN -----------------------------------------------------


def test_an_inclusion_probability_whose_weight_overflows_is_refused(tmp_path: Path) -> None:
    listed = tmp_path / "labelled.txt"
    listed.write_text("q1 0.1\nq2 1e-300\n")
    with pytest.raises(InputError, match="below 1e-100") as caught:
        read_labelled_queries(listed)
    assert caught.value.line == 2 and caught.value.field == "inclusion probability"
    queue = tmp_path / "queue.jsonl"
    entry = {"query_id": "q1", "docs": ["d1"], "strategy": "active"}
    queue.write_text(json.dumps(entry | {"inclusion_probability": 1e-300}) + "\n")
    with pytest.raises(InputError, match="below 1e-100") as caught:
        read_label_queue(queue)
    assert caught.value.line == 1 and caught.value.field == "inclusion_probability"
    listed.write_text("q1 0.1\nq2 1e-100\n")  # the smallest taken
    assert read_labelled_queries(listed) == (("q1", "q2"), {"q1": 0.1, "q2": 1e-100})


def test_the_smallest_probability_still_gives_finite_numbers() -> None:
    # π = 1e-100: w = 1e100, w² = 1e200, finite; the interval is huge, and says so honestly
    got = ppi_mean([0.2, 0.7], [0.3, 0.6], [0.5, 0.1, 0.9], weights=[1e100, 2.0], lam=0.5)
    assert math.isfinite(got.estimate) and got.ci is not None
    assert all(math.isfinite(v) for v in got.ci) and got.ci[1] - got.ci[0] > 1e50
    with pytest.raises(PPIError, match="above 1e"):
        ppi_mean([0.2, 0.7], [0.3, 0.6], [0.5, 0.1, 0.9], weights=[1e300, 2.0], lam=0.5)


def test_an_overflowing_result_is_an_error_not_nan() -> None:
    with pytest.raises(PPIError, match="not finite"):
        ppi_mean([1e300, -1e300], [0.0, 0.0], [0.0, 1.0])


def test_evaluate_and_compare_refuse_the_file_and_name_its_line(files, tmp_path: Path) -> None:
    listed = tmp_path / "labelled.txt"
    listed.write_text("q1 1e-300\nq2 0.1\nq3 0.1\n")
    extra = ["--labelled-queries", str(listed)]
    for args in (
        ["evaluate", files["a"], *_ppi_args(files), *extra],
        ["evaluate", files["a"], *_ppi_args(files), *extra, "-f", "json"],
        ["compare", files["a"], files["b"], *_ppi_args(files), *extra],
    ):
        code, out = _cli(*args)
        assert code == 2, out
        assert "labelled.txt, line 1, field 'inclusion probability'" in out
        assert "Traceback" not in out and "nan" not in out.lower()


def test_nan_is_never_a_small_p_value() -> None:
    from ragmeter.report.ppi import p_text

    assert math.isnan(normal_two_sided(math.nan))
    adjusted = adjust([math.nan, 0.01, 0.02], "holm")
    assert math.isnan(adjusted[0]) and adjusted[1] == pytest.approx(0.02)
    assert p_text(math.nan) == "n/a" and p_text(None) == "n/a"
    assert p_text(0.00001) == "<0.0001" and p_text(0.25) == "0.2500"


def test_a_non_finite_number_is_written_as_null_in_json() -> None:
    e = PPIEstimate(
        estimate=math.nan, ci=(math.nan, 1.0), se=None, lam=0.0, alpha=0.1, n_labelled=1,
        n_unlabelled=2, llm_mean=math.inf, llm_ci=None, human_mean=0.5, human_ci=None,
        effective_n=None, pvalue=None,
    )  # fmt: skip
    out = json.loads(json.dumps(e.to_dict(), allow_nan=False))
    assert out["estimate"] is None and out["ci"] is None and out["llm_mean"] is None
    assert out["note"] == "a number is not finite (overflow): written as null"  # null, and why


# -- the core against ppi-python and the formulas --------------------------------------------


def test_core_docstring_examples_run() -> None:
    from ragmeter.stats import ppi_core as core

    result = doctest.testmod(core)
    assert result.attempted >= 4 and result.failed == 0


@pytest.mark.parametrize("lam", [0.0, 0.37, 1.0])
def test_core_matches_ppi_python_at_a_fixed_lambda(lam: float) -> None:
    from ragmeter.stats import ppi_core as core

    rng = np.random.default_rng(5)
    y = rng.beta(2, 3, 30)
    yhat = np.clip(0.1 + 0.8 * y + rng.normal(0, 0.1, 30), 0, 1)
    yhat_u = rng.uniform(size=200)
    point = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)).item())
    low, high = (
        float(np.asarray(v).item()) for v in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=lam)
    )
    z = 1.6448536269514722  # z_0.95
    assert core.rectified_mean(y, yhat, yhat_u, lam) == pytest.approx(point, abs=1e-12)
    assert z * core.rectified_se(y, yhat, yhat_u, lam) == pytest.approx((high - low) / 2, abs=1e-9)


def test_core_weighted_estimate_by_the_formula() -> None:
    from ragmeter.stats import ppi_core as core

    # Z_k = λ·Ŷ_k + η_k·(Y_k − λ·Ŷ_k) written out for 2 labelled (w = 2, 4) and 2 unlabelled
    y, yhat, yhat_u, w, lam = (
        np.array([0.5, 1.0]),
        np.array([0.4, 0.8]),
        np.array([0.2, 0.6]),
        np.array([2.0, 4.0]),
        0.5,
    )
    z = np.array([0.2 + 2 * (0.5 - 0.2), 0.4 + 4 * (1.0 - 0.4), 0.1, 0.3])
    mean, se = core.weighted_mean_se(y, yhat, yhat_u, w, lam)
    assert mean == pytest.approx(z.mean()) and se == pytest.approx(math.sqrt(z.var() / 4))
