"""The HTML report: self-contained, its sections, its numbers, deterministic bytes."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.io.judgments import read_judgments
from ragmeter.io.readers import read_qrels, read_run

pytest.importorskip("matplotlib", reason="the HTML report draws its charts with matplotlib")
pytest.importorskip("scipy", reason="the report's comparison uses scipy's t distribution")

from ragmeter.analysis.queries import subquestion_coverage, worst_queries
from ragmeter.report.html import (
    default_measures,
    render_html_report,
    set_measures_apply,
    write_html_report,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CRUX = EXAMPLES / "crux"
GRADE_MAP = "0:1,1:3,2:4,3:5"
FAST = {"bootstrap": 300, "permutations": 500}
runner = CliRunner()


@pytest.fixture(scope="module")
def example() -> dict[str, object]:
    qrels = read_qrels(EXAMPLES / "qrels.txt")
    runs = [read_run(EXAMPLES / "run_bm25.txt"), read_run(EXAMPLES / "run_dense.txt")]
    measures = default_measures(qrels, grade_map=GRADE_MAP, k=5)
    evaluation = ragmeter.evaluate(runs, qrels, measures, grade_map=GRADE_MAP)
    text = render_html_report(
        evaluation, runs=runs, qrels=qrels, grade_map=GRADE_MAP, k=5, sweep_ks="1:10", **FAST
    )
    return {"qrels": qrels, "runs": runs, "evaluation": evaluation, "html": text}


@pytest.fixture(scope="module")
def crux() -> dict[str, object]:
    judgments = read_judgments(CRUX / "judgments.jsonl", questions=CRUX / "questions.jsonl")
    runs = [read_run(CRUX / f"run_{name}.txt") for name in ("bm25", "dense", "mmr")]
    evaluation = ragmeter.evaluate(
        runs, None, ["coverage", "alpha_ndcg@20", "ndcg@10"], judgments=judgments
    )
    text = render_html_report(evaluation, runs=runs, judgments=judgments, **FAST)
    return {"judgments": judgments, "runs": runs, "evaluation": evaluation, "html": text}


class _Checker(HTMLParser):
    """Every non-void element closed in order; collects ids, tags and attributes."""

    VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "col", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._record(tag, attrs)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._record(tag, attrs)

    def _record(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            self.attrs.append((tag, name, value or ""))
            if name == "id":
                self.ids.append(value or "")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


def _parse(text: str) -> _Checker:
    checker = _Checker()
    checker.feed(text)
    checker.close()
    return checker


def _sections(text: str) -> set[str]:
    return set(re.findall(r'<section id="([a-z]+)">', text))


def test_self_contained_and_well_formed(example: dict[str, object]) -> None:
    text = str(example["html"])
    checker = _parse(text)
    assert checker.errors == [] and checker.stack == []
    assert len(checker.ids) == len(set(checker.ids)), "duplicate ids across the inline SVGs"
    assert "script" not in checker.tags and "link" not in checker.tags
    assert "iframe" not in checker.tags
    for tag, name, value in checker.attrs:
        if name in ("src", "href", "xlink:href", "action"):
            assert value.startswith("#"), (tag, name, value)
    assert not re.search(r"url\(\s*['\"]?(?!#)", text), "a CSS url() would fetch something"
    assert "@import" not in text
    assert text.count("<svg") == 3  # sweep, quadrant, distributions


def test_every_section_for_the_example_data(example: dict[str, object]) -> None:
    assert _sections(str(example["html"])) == {
        "summary",
        "sweep",
        "quadrant",
        "distributions",
        "worst",
    }


def test_summary_values_are_the_evaluation(example: dict[str, object]) -> None:
    text = str(example["html"])
    evaluation = example["evaluation"]
    assert isinstance(evaluation, ragmeter.Evaluation)
    found = {
        (run, measure): value
        for run, measure, value in re.findall(
            r'data-run="([^"]+)" data-measure="([^"]+)" data-mean="([^"]*)"', text
        )
    }
    assert len(found) == len(evaluation.runs) * len(evaluation.measures)
    for run in evaluation.runs:
        for name, mean in run.means().items():
            assert mean is not None
            assert float(found[(run.name, name)]) == pytest.approx(mean, rel=1e-12, abs=1e-15)
    # the visible 4-decimal text too
    bm25 = evaluation["run_bm25.txt"].means()["ndcg@10"]
    assert bm25 is not None and f"{bm25:.4f}" in text


def test_differences_and_significance_are_compare_s(example: dict[str, object]) -> None:
    from ragmeter.stats import compare

    evaluation = example["evaluation"]
    assert isinstance(evaluation, ragmeter.Evaluation)
    c = compare(evaluation, **FAST)
    text = str(example["html"])
    for d in c.differences:
        cell = re.search(
            rf'class="num delta (\w+)" data-run="{re.escape(d.run)}" '
            rf'data-measure="{re.escape(d.measure)}" data-difference="([^"]*)" data-p="([^"]*)"',
            text,
        )
        assert cell is not None, d.measure
        assert cell.group(1) == d.verdict
        assert float(cell.group(2)) == d.difference
        assert float(cell.group(3)) == d.p_adjusted


def test_deterministic_bytes(example: dict[str, object], tmp_path: Path) -> None:
    runs, qrels, evaluation = example["runs"], example["qrels"], example["evaluation"]
    paths = [tmp_path / "a.html", tmp_path / "b.html"]
    for path in paths:
        write_html_report(
            path,
            evaluation,  # type: ignore[arg-type]
            runs=runs,  # type: ignore[arg-type]
            qrels=qrels,  # type: ignore[arg-type]
            grade_map=GRADE_MAP,
            k=5,
            sweep_ks="1:10",
            **FAST,
        )
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_text(encoding="utf-8") == example["html"]
    assert not list(tmp_path.glob(".*.tmp")), "atomic write left a temporary file"


def test_sections_need_their_inputs(example: dict[str, object]) -> None:
    qrels, runs = example["qrels"], example["runs"]
    evaluation = ragmeter.evaluate(runs, qrels, ["ndcg@10", "P@5"])  # type: ignore[arg-type]
    alone = render_html_report(evaluation, **FAST)
    assert _sections(alone) == {"summary", "distributions"}
    # TREC 0..3 grades without a grade map: no set-based quadrant, the rest is there
    no_map = render_html_report(evaluation, runs=runs, qrels=qrels, sweep_ks="1:5", **FAST)  # type: ignore[arg-type]
    assert _sections(no_map) == {"summary", "sweep", "distributions", "worst"}
    assert "ndcg@10" in no_map and "PROC" not in no_map
    no_worst = render_html_report(
        evaluation,
        runs=runs,
        qrels=qrels,
        sweep_ks="1:5",
        worst=0,
        **FAST,  # type: ignore[arg-type]
    )
    assert "worst" not in _sections(no_worst)


def test_each_run_can_have_its_own_pool(example: dict[str, object]) -> None:
    from ragmeter.analysis.diagnosis import diagnose

    qrels, runs = example["qrels"], example["runs"]
    bm25, dense = runs  # type: ignore[misc]
    evaluation = ragmeter.evaluate(runs, qrels, ["ndcg@10"])  # type: ignore[arg-type]
    text = render_html_report(
        evaluation,
        runs=runs,  # type: ignore[arg-type]
        qrels=qrels,  # type: ignore[arg-type]
        grade_map=GRADE_MAP,
        sweep_ks=[5],
        pools={"run_dense.txt": (bm25, 20)},
        **FAST,
    )
    expected = diagnose(dense, qrels, k=10, pool=bm25, pool_depth=20, grade_map=GRADE_MAP)  # type: ignore[arg-type]
    own = diagnose(dense, qrels, k=10, grade_map=GRADE_MAP)  # type: ignore[arg-type]
    row = re.search(
        r"<th scope=\"row\">run_dense.txt</th>(.*?)</tr>", text.split('id="quadrant"')[1]
    )
    assert row is not None
    cells = re.findall(r'<td class="num">([^<]*)</td>', row.group(1))
    assert cells[-2] == f"{expected.means['proc@10']:.4f}" != f"{own.means['proc@10']:.4f}"


def test_one_run_has_intervals_and_no_comparison(example: dict[str, object]) -> None:
    from ragmeter.stats.bootstrap import bootstrap_ci

    qrels = example["qrels"]
    run = read_run(EXAMPLES / "run_dense.txt")
    evaluation = ragmeter.evaluate(run, qrels, ["ndcg@10"])  # type: ignore[arg-type]
    text = render_html_report(evaluation, bootstrap=300)
    assert "Δ" not in text and "baseline" not in text
    low, high = bootstrap_ci(evaluation.run.column("ndcg@10"), replicates=300, seed=0)
    assert f"[{low:.4f}, {high:.4f}]" in text


def test_worst_queries_by_hand() -> None:
    run = ragmeter.Run.from_lists({"q1": ["a", "b", "c", "d"], "q2": ["x", "y"], "q3": ["z"]})
    qrels = ragmeter.Qrels.from_dict(
        {"q1": {"d": 3, "e": 1, "a": 0}, "q2": {"x": 2}, "q3": {"z": 1, "w": 2}}
    )
    result = ragmeter.evaluate(run, qrels, ["recall@2"]).run
    # recall@2: q1 0/2, q2 1/1, q3 1/2 → q1, q3, q2
    listed = worst_queries(result, run, qrels, measure="recall@2", k=2, worst=2)
    assert [w.query_id for w in listed] == ["q1", "q3"]
    assert [(m.doc_id, m.grade, m.rank) for m in listed[0].missed] == [("d", 3, 4), ("e", 1, None)]
    assert listed[0].n_relevant == 2  # grade 0 is not relevant
    assert [(m.doc_id, m.grade, m.rank) for m in listed[1].missed] == [("w", 2, None)]
    strict = worst_queries(result, run, qrels, measure="recall@2", k=2, worst=1, rel_level=2)
    assert [(m.doc_id, m.grade) for m in strict[0].missed] == [("d", 3)]


def test_subquestion_coverage_is_the_coverage_measure(crux: dict[str, object]) -> None:
    judgments, runs, evaluation = crux["judgments"], crux["runs"], crux["evaluation"]
    cov = subquestion_coverage(runs, judgments)  # type: ignore[arg-type]
    shares = cov.per_query()
    assert isinstance(evaluation, ragmeter.Evaluation)
    for result in evaluation.runs:
        for qid, value in zip(result.query_ids, result.column("coverage"), strict=True):
            share = shares[str(qid)][result.name]
            if math.isnan(value):
                assert share is None
            else:
                assert share == pytest.approx(value, abs=1e-12)
    # by hand (SPEC §4 rules) for q1 of the bm25 run: context = its top |P*| passages
    q1 = [r for r in cov.rows if r.query_id == "q1"]
    assert q1[0].text == "Who delivered the speech?"
    assert len(q1) == 8


def test_crux_report_has_coverage_and_worst(crux: dict[str, object]) -> None:
    text = str(crux["html"])
    assert _sections(text) == {"summary", "sweep", "distributions", "coverage", "worst"}
    assert "Who delivered the speech?" in text
    assert _parse(text).errors == []


def test_set_measures_apply() -> None:
    trec = ragmeter.Qrels.from_dict({"q": {"a": 0, "b": 3}})
    utility = ragmeter.Qrels.from_dict({"q": {"a": 1, "b": 5}})
    binary = ragmeter.Qrels.from_dict({"q": ["a"]})
    assert not set_measures_apply(trec, None) and set_measures_apply(trec, GRADE_MAP)
    assert set_measures_apply(utility, None) and not set_measures_apply(binary, None)
    assert "ra_nwg@10" in default_measures(utility) and "ra_nwg@10" not in default_measures(trec)


def test_cli_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = runner.invoke(
        app,
        [
            "report",
            str(EXAMPLES / "run_bm25.txt"),
            str(EXAMPLES / "run_dense.txt"),
            "--qrels",
            str(EXAMPLES / "qrels.txt"),
            "--grade-map",
            GRADE_MAP,
            "--baseline",
            "run_dense.txt",
            "--sweep",
            "1:5",
            "--bootstrap",
            "200",
            "--permutations",
            "200",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert _sections(text) == {"summary", "sweep", "quadrant", "distributions", "worst"}
    assert 'run_dense.txt <span class="badge">baseline</span>' in text
    assert "ra_nwg@10" in text and "ndcg@10" in text


def test_cli_crux_and_errors(tmp_path: Path) -> None:
    out = tmp_path / "crux.html"
    result = runner.invoke(
        app,
        [
            "report",
            *(str(CRUX / f"run_{n}.txt") for n in ("bm25", "dense")),
            "--judgments",
            str(CRUX / "judgments.jsonl"),
            "--subquestions",
            str(CRUX / "questions.jsonl"),
            "--bootstrap",
            "200",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.stderr
    assert "coverage" in _sections(out.read_text(encoding="utf-8"))
    result = runner.invoke(app, ["report", str(CRUX / "run_bm25.txt"), "-o", str(out)])
    assert result.exit_code == 2 and "--qrels, --judgments, --nuggets or --spans" in result.stderr
    qrels = str(EXAMPLES / "qrels.txt")
    lone = ["--questions", str(CRUX / "questions.jsonl")]
    cmd = ["report", str(CRUX / "run_bm25.txt"), "-q", qrels, *lone, "-o", str(out)]
    result = runner.invoke(app, cmd)
    assert result.exit_code == 2 and "--questions is used with --judgments" in result.stderr
    bad = tmp_path / "missing" / "r.html"
    result = runner.invoke(
        app,
        [
            "report",
            str(EXAMPLES / "run_bm25.txt"),
            "-q",
            str(EXAMPLES / "qrels.txt"),
            "-o",
            str(bad),
        ],
    )
    assert result.exit_code == 2 and "missing" in result.stderr


def test_matplotlib_is_imported_only_by_the_report() -> None:
    code = (
        "import sys, ragmeter, ragmeter.cli, ragmeter.report.html\n"
        "assert 'matplotlib' not in sys.modules, 'imported too early'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_names_are_escaped() -> None:
    hostile = '<script>alert("x")</script>'
    run = ragmeter.Run.from_lists({"q<1>": ["a&b", "c"]}, name=hostile)
    qrels = ragmeter.Qrels.from_dict({"q<1>": {"c": 2, "d\"'": 1}})
    evaluation = ragmeter.evaluate(run, qrels, ["ndcg@10", "recall@1"])
    text = render_html_report(evaluation, runs=[run], qrels=qrels, sweep_ks=[1, 2], bootstrap=50)
    assert "<script" not in text and "&lt;script&gt;" in text
    assert "q&lt;1&gt;" in text
    checker = _parse(text)
    assert checker.errors == [] and "script" not in checker.tags


def test_missing_matplotlib_names_the_extra(
    example: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError, match=r"\.\[report\]"):
        render_html_report(example["evaluation"], **FAST)  # type: ignore[arg-type]


def test_report_sweep_is_the_summary_evaluation() -> None:
    """One name, one number: the report's K-sweep plots the summary's own measures (with
    their parameters), evaluated with the summary's inputs, so at each measure's K the
    curve holds the summary's value (the evaluation's)."""
    from ragmeter.data import example_path
    from ragmeter.report.html import summary_sweep

    qrels = read_qrels(example_path("qrels.txt"))
    judgments = read_judgments(example_path("judgments.jsonl"))
    runs = [read_run(EXAMPLES / "run_bm25.txt")]
    names = ["ndcg@10(rel_level=3)", "coverage@5", "alpha_ndcg@10", "P@5", "map"]
    ev = ragmeter.evaluate(runs, qrels, names, judgments=judgments, context_k=3, rel_level=2)
    swept = summary_sweep(ev, [r.name for r in ev.runs], "1:12")
    assert swept is not None
    bases = ["ndcg(rel_level=3)", "coverage", "alpha_ndcg", "precision"]
    assert [str(m) for m in swept.base] == bases
    curves = swept.curves()[runs[0].name]
    for m, base in zip(ev.measures[:4], bases, strict=True):
        point = next(p for p in curves[base] if p["k"] == m.k)
        assert point["mean"] == ev.run.aggregate(m).value, str(m)
    html_text = render_html_report(ev, runs=runs, qrels=qrels, judgments=judgments, **FAST)
    sweep_part = html_text.split('id="sweep"')[1].split("</section>")[0]
    assert "ndcg(rel_level=3)" in sweep_part and "map" not in sweep_part
