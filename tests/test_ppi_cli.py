"""``evaluate --ppi`` and ``compare --ppi`` on a collection small enough to work out by hand.

Six queries, three ranked passages each; P@3 under the LLM labels (Ŷ) and under the merged
labels (Y: human grade where the human labelled the pair, LLM grade elsewhere) are written
out below from the qrels, and the estimates compared with ppi-python run on those numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.analysis.ppi import merge_qrels
from ragmeter.cli import app
from ragmeter.core.data import Qrels
from ragmeter.io.labelled import read_labelled_queries

ppi_py = pytest.importorskip("ppi_py")

RUN = {q: ["d1", "d2", "d3"] for q in ("q1", "q2", "q3", "q4", "q5", "q6")}
LLM = {
    "q1": {"d1": 1, "d2": 1, "d3": 0},  # P@3 = 2/3
    "q2": {"d1": 1, "d2": 1, "d3": 1},  # 1
    "q3": {"d1": 1, "d2": 0, "d3": 0},  # 1/3
    "q4": {"d1": 1, "d2": 1, "d3": 0},  # 2/3
    "q5": {"d1": 0, "d2": 0, "d3": 1},  # 1/3
    "q6": {"d1": 1, "d2": 0, "d3": 0},  # 1/3
}
HUMAN = {
    "q1": {"d1": 1, "d2": 0, "d3": 0},  # 1/3
    "q2": {"d1": 1, "d2": 1, "d3": 0},  # 2/3
    # partially labelled: the human labelled d2 only; d1 keeps the LLM's 1 → 2/3 (with the
    # human labels alone, d1 would be unjudged and P@3 = 1/3)
    "q3": {"d2": 1},
}
Y = [1 / 3, 2 / 3, 2 / 3]
YHAT = [2 / 3, 1.0, 1 / 3]
YHAT_U = [2 / 3, 1 / 3, 1 / 3]

runner = CliRunner()


def _write_run(path: Path, ranking: dict[str, list[str]], name: str) -> Path:
    lines = [
        f"{q} Q0 {d} {r + 1} {10 - r} {name}"
        for q, docs in ranking.items()
        for r, d in enumerate(docs)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> Path:
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "run": _write_run(tmp_path / "a.txt", RUN, "a"),
        "llm": _write_qrels(tmp_path / "llm.txt", LLM),
        "human": _write_qrels(tmp_path / "human.txt", HUMAN),
    }


def _evaluate(files: dict[str, Path], *extra: str) -> dict:
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(files["run"]),
            "--qrels",
            str(files["llm"]),
            "--human-qrels",
            str(files["human"]),
            "--ppi",
            "-m",
            "P@3",
            "-f",
            "json",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _point_ci(y, yhat, yhat_u, **kw) -> tuple[float, list[float]]:
    y, yhat, yhat_u = (np.array(v) for v in (y, yhat, yhat_u))
    point = float(
        np.asarray(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=kw.get("lam"))).item()
    )
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, **kw)
    return point, [float(np.asarray(low).item()), float(np.asarray(high).item())]


@pytest.mark.parametrize("lam", [None, 1.0])
def test_evaluate_ppi_json_matches_ppi_python_on_hand_values(files, lam) -> None:
    extra = ["--ppi-lambda", "1"] if lam == 1.0 else ["--ppi-estimator", "plusplus"]
    out = _evaluate(files, *extra)
    ppi = out["runs"][0]["metrics"]["precision@3"]["ppi"]
    point, ci = _point_ci(Y, YHAT, YHAT_U, alpha=0.1, lam=lam)
    assert ppi["estimate"] == pytest.approx(point, abs=1e-12)
    assert ppi["ci"] == pytest.approx(ci, abs=1e-12)
    assert ppi["n_labelled"] == 3 and ppi["n_unlabelled"] == 3
    assert ppi["human_mean"] == pytest.approx(np.mean(Y))
    assert set(ppi) >= {
        "estimate",
        "ci",
        "lambda",
        "n_labelled",
        "n_unlabelled",
        "llm_mean",
        "human_mean",
        "human_ci",
    }
    assert "LLM labels" in out["ppi"]["labels"]
    assert out["ppi"]["method"] == ("PPI" if lam == 1.0 else "PPI++")


def test_llm_mean_is_the_plain_evaluation_mean(files) -> None:
    out = _evaluate(files)
    plain = runner.invoke(
        app,
        ["evaluate", str(files["run"]), "--qrels", str(files["llm"]), "-m", "P@3", "-f", "json"],
    )
    mean = json.loads(plain.stdout)["runs"][0]["metrics"]["precision@3"]["mean"]
    assert out["runs"][0]["metrics"]["precision@3"]["mean"] == mean
    assert out["runs"][0]["metrics"]["precision@3"]["ppi"]["llm_mean"] == mean
    assert mean == pytest.approx(np.mean(YHAT + YHAT_U))


def test_partially_labelled_query_keeps_the_llm_grade_elsewhere() -> None:
    merged = merge_qrels(Qrels.from_dict(LLM), Qrels.from_dict(HUMAN), ["q1", "q3"]).to_dict()
    assert merged == {"q1": HUMAN["q1"], "q3": {"d1": 1, "d2": 1, "d3": 0}}


def test_one_labelled_query_gives_the_estimate_without_interval(files, tmp_path) -> None:
    listed = tmp_path / "labelled.txt"
    listed.write_text("q1\n")
    out = _evaluate(files, "--labelled-queries", str(listed))
    ppi = out["runs"][0]["metrics"]["precision@3"]["ppi"]
    assert ppi["ci"] is None and ppi["human_ci"] is None
    assert "no interval" in ppi["note"]
    # λ = 0 with one label (no covariance to tune on): the human value of q1
    assert ppi["estimate"] == pytest.approx(1 / 3)
    args = ["--qrels", str(files["llm"]), "--human-qrels", str(files["human"]), "--ppi"]
    table = runner.invoke(
        app, ["evaluate", str(files["run"]), *args, "-m", "P@3", "--labelled-queries", str(listed)]
    )
    assert "no interval" in table.stdout and "computed on LLM labels" in table.stdout


def test_inclusion_probabilities_weight_the_estimate(files, tmp_path) -> None:
    listed = tmp_path / "labelled.txt"
    listed.write_text("q1 0.5\nq2 0.5\nq3 0.25\n")
    out = _evaluate(files, "--labelled-queries", str(listed), "--ppi-estimator", "plusplus")
    ppi = out["runs"][0]["metrics"]["precision@3"]["ppi"]
    assert ppi["weighted"] is True
    # Zrnic & Candès: θ̂ = (1/M)·Σ[λŶ + (Y − λŶ)/π·ξ] at the λ reported
    lam = ppi["lambda"]
    w = [2.0, 2.0, 4.0]
    terms = [lam * h + (y - lam * h) * wi for y, h, wi in zip(Y, YHAT, w, strict=True)]
    terms += [lam * h for h in YHAT_U]
    assert ppi["estimate"] == pytest.approx(sum(terms) / 6)


def test_compare_ppi_differences_match_ppi_python(files, tmp_path) -> None:
    other = {q: ["d3", "d2", "d1"] for q in RUN}  # same set of three: P@3 equal to a's
    other["q1"] = ["d1", "d4", "d5"]  # LLM: 1/3, human 1/3
    other["q4"] = ["d4", "d5", "d6"]  # LLM: 0
    b = _write_run(tmp_path / "b.txt", other, "b")
    result = runner.invoke(
        app,
        ["compare", str(files["run"]), str(b), "--qrels", str(files["llm"]), "--human-qrels",
         str(files["human"]), "--ppi", "-m", "P@3", "--alpha", "0.1", "-f", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (diff,) = json.loads(result.stdout)["differences"]
    assert (diff["run"], diff["baseline"]) == ("b.txt", "a.txt")
    d = [1 / 3 - 1 / 3, 0.0, 0.0]  # human: q1 1/3 vs 1/3, q2 and q3 equal
    d_hat = [1 / 3 - 2 / 3, 0.0, 0.0]
    d_u = [0 - 2 / 3, 0.0, 0.0]
    point, ci = _point_ci(d, d_hat, d_u, alpha=0.1)
    assert diff["estimate"] == pytest.approx(point, abs=1e-12)
    # the human differences are 0 on all 3 labelled queries: ppi-python's interval is [0, 0]
    # (a zero standard error), which claims a certainty 3 labels do not hold; no interval,
    # no p-value (the old p = 1 came from a zero standard error too), and the reason
    assert ci == pytest.approx([0.0, 0.0])
    assert diff["ci"] is None and diff["pvalue"] is None and diff["pvalue_adjusted"] is None
    assert diff["note"] == "human labels constant on 3 queries: no variance estimate"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ppi"], "--ppi needs the human labels"),
        (["--human-qrels", "HUMAN"], "--human-qrels needs --ppi"),
        (["--alpha", "0.2"], "--alpha needs --ppi"),
        (["--ppi", "--human-qrels", "NONE"], "share no query"),
        (["--ppi", "--human-qrels", "HUMAN", "--ppi-lambda", "2"], "--ppi-lambda 2"),
        (["--ppi", "--human-qrels", "HUMAN", "--labelled-queries", "LISTED"], "'q5' is listed"),
        (["--ppi", "--human-qrels", "HUMAN", "-f", "csv"], "table or json"),
        (["--ppi", "--human-qrels", "HUMAN", "--save"], "--ppi does not take --save"),
    ],
)
def test_bad_input_is_one_line(files, tmp_path, args, message) -> None:
    none = _write_qrels(tmp_path / "none.txt", {"q99": {"d1": 1}})
    listed = tmp_path / "listed.txt"
    listed.write_text("q1\nq5\n")
    paths = {"HUMAN": str(files["human"]), "NONE": str(none), "LISTED": str(listed)}
    args = [paths.get(a, a) for a in args]
    result = runner.invoke(
        app, ["evaluate", str(files["run"]), "--qrels", str(files["llm"]), "-m", "P@3", *args]
    )
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("ragmeter: error:")
    assert message in result.stderr


def test_labelled_queries_file_errors(tmp_path) -> None:
    from ragmeter.errors import InputError

    path = tmp_path / "l.txt"
    path.write_text("q1 0.5\nq2\n")
    with pytest.raises(InputError, match="line 2"):
        read_labelled_queries(path)
    path.write_text("q1 1.5\n")
    with pytest.raises(InputError, match=r"not in \(0, 1\]"):
        read_labelled_queries(path)
    path.write_text("q1\nq1\n")
    with pytest.raises(InputError, match="twice"):
        read_labelled_queries(path)


def test_report_ppi_section_shows_the_numbers_of_evaluate(files, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    ppi = _evaluate(files)["runs"][0]["metrics"]["precision@3"]["ppi"]
    page = tmp_path / "report.html"
    args = ["--qrels", str(files["llm"]), "--human-qrels", str(files["human"]), "--ppi"]
    result = runner.invoke(
        app,
        ["report", str(files["run"]), *args, "-m", "P@3", "-o", str(page), "--bootstrap", "200"],
    )
    assert result.exit_code == 0, result.output
    text = page.read_text()
    section = text[text.index('<section id="ppi">') :]
    low, high = ppi["ci"]
    assert f"{ppi['estimate']:.4f} [{low:.4f}, {high:.4f}]" in section
    assert f"{ppi['llm_mean']:.4f}" in section and f"{ppi['human_mean']:.4f}" in section
    assert "computed on LLM labels" in section and "qrels (LLM labels)" in text


def _write_judgments(path: Path, rows: dict[str, dict[str, list[int]]]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "ratings": r}) + "\n"
            for q, docs in rows.items()
            for d, r in docs.items()
        )
    )
    return path


def test_coverage_corrected_by_human_subquestion_ratings(tmp_path) -> None:
    # coverage@2 = answerable sub-questions (some rating ≥ 3) rated ≥ 3 by the top 2 / answerable
    llm = {
        "q1": {"d1": [5, 0], "d2": [0, 0], "d3": [0, 4]},  # {1} of {1, 2}: 1/2
        "q2": {"d1": [4, 4], "d2": [0, 0], "d3": [0, 0]},  # 1
        "q3": {"d1": [0, 0], "d2": [3, 0], "d3": [0, 5]},  # 1/2
        "q4": {"d1": [0, 0], "d2": [0, 0], "d3": [5, 5]},  # 0
    }
    human = {
        "q1": {"d1": [5, 0], "d2": [0, 4]},  # d3 keeps the LLM's [0, 4]: {1, 2} of {1, 2}: 1
        "q2": {"d1": [4, 1]},  # d2, d3 keep [0, 0]: {1} of {1}: 1
    }
    run = _write_run(tmp_path / "a.txt", {q: ["d1", "d2", "d3"] for q in llm}, "a")
    result = runner.invoke(
        app,
        ["evaluate", str(run), "--judgments", str(_write_judgments(tmp_path / "llm.jsonl", llm)),
         "--human-judgments", str(_write_judgments(tmp_path / "human.jsonl", human)), "--ppi",
         "-m", "coverage@2", "-f", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    ppi = json.loads(result.stdout)["runs"][0]["metrics"]["coverage@2"]["ppi"]
    point, ci = _point_ci([1.0, 1.0], [0.5, 1.0], [0.5, 0.0], alpha=0.1)
    assert ppi["estimate"] == pytest.approx(point, abs=1e-12)
    # Y = 1 on both labelled queries: ppi-python's [1, 1] rests on a zero variance estimate
    assert ci == pytest.approx([1.0, 1.0])
    assert ppi["ci"] is None and ppi["human_ci"] is None
    assert ppi["note"] == "human labels constant on 2 queries: no variance estimate"
    assert ppi["human_mean"] == 1.0 and ppi["llm_mean"] == pytest.approx(0.5)


def test_a_measure_on_other_labels_gets_no_estimate_and_says_why(files, tmp_path) -> None:
    ratings = {q: {"d1": [5], "d2": [0], "d3": [0]} for q in RUN}
    judgments = _write_judgments(tmp_path / "j.jsonl", ratings)
    out = _evaluate(files, "--judgments", str(judgments), "-m", "coverage@2")
    ppi = out["runs"][0]["metrics"]["coverage@2"]["ppi"]
    assert ppi["estimate"] is None and "human sub-question ratings" in ppi["reason"]
    assert out["runs"][0]["metrics"]["precision@3"]["ppi"]["estimate"] is not None


def test_nuggets_corrected_by_human_assignments(tmp_path) -> None:
    from ragmeter.data import example_path

    # LLM nugget_all of the example's answers: q01 S S S S N = 0.8, q02 0.8,
    # q03 S N S N P N = 2.5/6, q06 S S S S P = 0.9
    human = []
    for line in example_path("nugget_assignments.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "run_id" in record and record["qid"] == "q01":
            # the human assigns one nugget only: P; the others keep the LLM's → 0.7
            record["nuggets"] = [dict(record["nuggets"][0], assignment="partial_support")]
            human.append(record)
        if "run_id" in record and record["qid"] == "q02":
            record["nuggets"][4]["assignment"] = "support"  # S S S S S → 1.0
            human.append(record)
    path = tmp_path / "human.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in human))
    result = runner.invoke(
        app,
        ["evaluate", str(example_path("rag_answers.jsonl")), "--nuggets",
         str(example_path("nuggets.jsonl")), "--assignments",
         str(example_path("nugget_assignments.jsonl")), "--human-assignments", str(path),
         "--ppi", "-m", "nugget_all", "--ppi-lambda", "1", "-f", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    ppi = json.loads(result.stdout)["runs"][0]["metrics"]["nugget_all"]["ppi"]
    point, ci = _point_ci([0.7, 1.0], [0.8, 0.8], [2.5 / 6, 0.9], alpha=0.1, lam=1.0)
    assert ppi["estimate"] == pytest.approx(point, abs=1e-12)
    assert ppi["ci"] == pytest.approx(ci, abs=1e-12)
    assert ppi["human_mean"] == pytest.approx(0.85)


def test_merged_ratings_and_assignments_keep_the_llm_elsewhere() -> None:
    from ragmeter.analysis.ppi import judgments_rows, merge_assignments, merge_judgments
    from ragmeter.core.judgments import Judgments
    from ragmeter.core.nuggets import NuggetAssignments

    llm = Judgments.from_dict({"q1": {"d1": [1, 2], "d2": [3, 4]}, "q2": {"d1": [5, 5]}})
    human = Judgments.from_dict({"q1": {"d2": [0, 0], "d3": [5, 1]}, "q2": {"d1": [0, 0]}})
    merged = judgments_rows(merge_judgments(llm, human, ["q1"]))
    assert merged == {"q1": {"d1": [1, 2], "d2": [0, 0], "d3": [5, 1]}, "q2": {"d1": [5, 5]}}
    with pytest.raises(ValueError, match="sub-questions"):
        merge_judgments(llm, Judgments.from_dict({"q1": {"d1": [1]}}), ["q1"])
    a = NuggetAssignments({("r", "q1"): {"n1": 2, "n2": 0}}, {("q1", "d1"): {"n1": 1}})
    h = NuggetAssignments(
        {("r", "q1"): {"n2": 2}, ("r", "q9"): {"n1": 0}}, {("q1", "d1"): {"n1": 0}}
    )
    both = merge_assignments(a, h, ["q1"])
    assert both.answers == {("r", "q1"): {"n1": 2, "n2": 2}}
    assert both.passages == {("q1", "d1"): {"n1": 0}}


def test_the_labels_line_names_the_judge_from_the_provenance_sidecar(files) -> None:
    from ragmeter.core.provenance import LabelProvenance, LabelSource
    from ragmeter.io.provenance import write_provenance

    judge = LabelSource(kind="judge", model="judge-model-7b", prompt_id="relevance")
    write_provenance(files["llm"], LabelProvenance.single(judge))
    labels = _evaluate(files)["ppi"]["labels"]
    assert labels.startswith("computed on LLM labels (llm.txt)")
    assert "llm.txt: LLM labels (" in labels and "judge-model-7b" in labels


def test_stratified_queue_gives_the_exact_stratified_variance(files, tmp_path) -> None:
    # a stratified queue: q1–q3 the whole labelled stratum 0 of 6 queries, π = 3/6; with
    # PPI++ the exact variance σ̂²_Y/M + (1 − n/N)·s²(Y − λŶ)/n (one stratum, N_h/M = 1),
    # written out here at the λ reported; cross-fit PPI++ (the default) keeps var(Z)/M
    queue = tmp_path / "queue.jsonl"
    queue.write_text(
        "".join(
            json.dumps(
                {
                    "query_id": q,
                    "docs": ["d1", "d2", "d3"],
                    "inclusion_probability": 0.5,
                    "strategy": "stratified",
                    "stratum": 0,
                }
            )
            + "\n"
            for q in ("q1", "q2", "q3")
        )
    )
    out = _evaluate(files, "--labelled-queries", str(queue), "--ppi-estimator", "plusplus")
    ppi = out["runs"][0]["metrics"]["precision@3"]["ppi"]
    assert ppi["stratified"] is True
    assert out["ppi"]["method"] == "PPI++, stratified (exact variance)"
    lam = ppi["lambda"]
    y, yhat = np.array(Y), np.array(YHAT)
    r = y - lam * yhat
    estimate = lam * np.mean(YHAT + YHAT_U) + r.mean()
    se = np.sqrt(np.var(y, ddof=1) / 6 + (1 - 3 / 6) * np.var(r, ddof=1) / 3)
    z = 1.6448536269514722
    assert ppi["estimate"] == pytest.approx(estimate, abs=1e-12)
    assert ppi["ci"] == pytest.approx([estimate - z * se, estimate + z * se], abs=1e-9)
    default = _evaluate(files, "--labelled-queries", str(queue))
    assert default["runs"][0]["metrics"]["precision@3"]["ppi"]["stratified"] is False
    assert default["ppi"]["method"] == "cross-fit PPI++, inverse-probability weighted"
