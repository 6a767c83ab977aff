"""A mean over fewer queries than the table's says so: ``(n=k/N)`` beside it in the terminal,
Markdown and HTML tables of ``evaluate``, a sweep, ``compare`` and ``report``; JSON and CSV carry
``n`` and ``n_defined``. The counts expected here are counted by hand from the values given."""

from __future__ import annotations

import io
import json

import numpy as np

from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.evaluation.sweep import Sweep
from ragmeter.measures import parse_measures
from ragmeter.report import comparison as compare_render
from ragmeter.report import render
from ragmeter.report.html import _Cell, _mean_cell
from ragmeter.stats import compare
from ragmeter.stats.aggregate import aggregate, defined_note

NAN = float("nan")


def _evaluation(runs: dict[str, list[list[float]]], measures: list[str]) -> Evaluation:
    ms = tuple(parse_measures(measures))
    results = tuple(
        RunResult(
            name=name,
            query_ids=np.array([f"q{i}" for i in range(len(rows))], dtype=object),
            measures=ms,
            values=np.array(rows, dtype=np.float64),
        )
        for name, rows in runs.items()
    )
    return Evaluation(results, ms)


# five queries; coverage@10 NA on q3 and q4 (unanswerable): its mean is over 3 of 5
ROWS = [[0.5, 1.0], [0.25, 0.5], [0.75, 0.0], [0.5, NAN], [1.0, NAN]]
OTHER = [[0.75, 1.0], [0.5, 1.0], [1.0, 0.5], [0.25, NAN], [1.0, 1.0]]


def test_the_note() -> None:
    assert defined_note(45, 50) == " (n=45/50)" and defined_note(50, 50) == ""
    agg = aggregate(np.array([1.0, NAN, 0.5]))
    assert (agg.n_defined, agg.n, agg.defined_note) == (2, 3, " (n=2/3)")


def test_evaluate_table_shows_n_defined() -> None:
    ev = _evaluation({"run": ROWS}, ["ndcg@10", "coverage@10"])
    buf = io.StringIO()
    render.print_table(ev, file=buf)
    out = buf.getvalue()
    # (1 + 0.5 + 0) / 3 = 0.5 over q0..q2; ndcg@10 is defined everywhere: no note
    assert "0.5000 (n=3/5)" in out
    assert "0.6000 (n=" not in out and "0.6000" in out  # (0.5+0.25+0.75+0.5+1)/5
    assert "(n=k/N)" in out
    doc = json.loads(render.to_json(ev))
    metrics = doc["runs"][0]["metrics"]
    assert metrics["coverage@10"]["n_defined"] == 3 and metrics["coverage@10"]["n"] == 5


def test_evaluate_table_without_na_has_no_note() -> None:
    ev = _evaluation({"run": [[0.5], [0.25]]}, ["ndcg@10"])
    buf = io.StringIO()
    render.print_table(ev, file=buf)
    assert "(n=" not in buf.getvalue()


def test_sweep_table_shows_n_defined() -> None:
    ev = _evaluation({"run": [[0.0, 1.0], [NAN, 0.5], [1.0, 0.0]]}, ["coverage@1", "coverage@2"])
    swept = Sweep(ev, tuple(parse_measures(["coverage"])), (1, 2))
    buf = io.StringIO()
    render.print_sweep(swept, file=buf)
    out = buf.getvalue()
    assert "0.5000 (n=2/3)" in out  # K = 1: (0 + 1)/2
    assert "0.5000\n" in out.replace(" │", "\n").replace("│", "")  # K = 2: 1.5/3, all defined


def test_compare_tables_show_n_defined() -> None:
    ev = _evaluation({"base": ROWS, "new": OTHER}, ["ndcg@10", "coverage@10"])
    c = compare(ev, bootstrap=200)
    s = c.summary("base", "coverage@10")
    assert (s.n_defined, s.n) == (3, 5)
    md = compare_render.to_markdown(c)
    assert "0.5000 (n=3/5)" in md  # base: (1 + 0.5 + 0)/3
    assert "0.8750 (n=4/5)" in md  # new: (1 + 1 + 0.5 + 1)/4
    assert "(n=k/N)" in md
    buf = io.StringIO()
    compare_render.print_table(c, file=buf)
    assert "0.5000 (n=3/5)" in buf.getvalue()
    assert "(n=3/5)" in compare_render.to_latex(c)
    doc = json.loads(compare_render.to_json(c))
    by = {(x["run"], x["measure"]): x for x in doc["summaries"]}
    assert by[("new", "coverage@10")]["n_defined"] == 4
    # ndcg@10 is defined on every query: no count beside it
    assert "0.6000 (n=" not in md


def test_report_html_cell_shows_n_defined() -> None:
    html = _mean_cell("run", "coverage@10", _Cell(0.5, 0.2, 0.8, 5, 3))
    assert "n=3/5" in html
    assert "n=5/5" not in _mean_cell("run", "ndcg@10", _Cell(0.6, 0.4, 0.8, 5, 5))


def test_report_sweep_cell_and_small_n_notes() -> None:
    from ragmeter.report.html import _defined_sub, _summary_section

    assert "n=3/5" in _defined_sub({"k": 1, "mean": 0.5, "n": 5, "n_defined": 3})
    assert _defined_sub({"k": 1, "mean": 0.5, "n": 5, "n_defined": 5}) == ""
    ev = _evaluation({"base": ROWS, "new": OTHER}, ["ndcg@10", "coverage@10"])
    c = compare(ev, bootstrap=200)
    body = _summary_section(ev, c, bootstrap=200, seed=0).body
    # five queries: the randomization test's smallest p is 2/2⁵ = 0.0625 > 0.05
    assert "Note: n too small for significance" in body and "†" in body
    assert "n=3/5" in body and "n=4/5" in body
