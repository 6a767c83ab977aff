"""The web app's calibration page: κ and α of the human labels against the LLM labels
(``--llm-qrels``), and each run's prediction-powered estimates, through FastAPI's TestClient.

The collection, six queries of two passages each, and the labels are worked out by hand
(module-level comments); the expected κ comes from the confusion matrix by hand and from
scikit-learn, α from the ``krippendorff`` package, the PPI++ figures from ppi-python run side
by side and from the formulas by hand. No expected value comes from ragmeter.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from ragmeter.core.provenance import LabelProvenance, LabelSource
from ragmeter.io.label_queue import QueueEntry, write_label_queue
from ragmeter.io.provenance import write_provenance
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from ragmeter.web.routes.evaluations import EVALUATION_MEASURES
from test_web import Browser

QUERIES = [f"q{k}" for k in range(1, 7)]
#: the LLM's grades of (a_k, b_k), the two passages run.txt ranks first and second for q_k
LLM = {"q1": (5, 2), "q2": (4, 4), "q3": (1, 3), "q4": (5, 5), "q5": (2, 4), "q6": (5, 1)}
#: the person's grades: both passages of q1 and q3, only a2 of q2 (b2 keeps the LLM's 4)
HUMAN = [("q1", "a1", 5), ("q1", "b1", 4), ("q2", "a2", 5), ("q3", "a3", 3), ("q3", "b3", 3)]
#: precision@2 at grade ≥ 4 per query: under the merged labels of the labelled queries
#: (q1 5,4 → 1; q2 5,4 → 1; q3 3,3 → 0) and under the LLM labels (q1 5,2 → ½; q2 → 1;
#: q3 → 0; q4 → 1; q5 2,4 → ½; q6 5,1 → ½)
MEASURE = "P@2(rel_level=4)"
KEY = "precision@2(rel_level=4)"
Y = [1.0, 1.0, 0.0]
YHAT = [0.5, 1.0, 0.0]
YHAT_U = [1.0, 0.5, 0.5]


def write_files(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / name for name in ("run.txt", "llm.txt", "queries.jsonl")}
    paths["run.txt"].write_text(
        "".join(f"{q} Q0 a{q[1]} 1 2.0 R\n{q} Q0 b{q[1]} 2 1.0 R\n" for q in QUERIES)
    )
    paths["llm.txt"].write_text(
        "".join(f"{q} 0 a{q[1]} {ga}\n{q} 0 b{q[1]} {gb}\n" for q, (ga, gb) in LLM.items())
    )
    paths["queries.jsonl"].write_text(
        "".join(json.dumps({"id": q, "text": f"query {q}"}) + "\n" for q in QUERIES)
    )
    return paths


def make_app(tmp_path: Path, **options: Any) -> Any:
    paths = write_files(tmp_path / "data")
    kwargs: dict[str, Any] = {
        "queries": paths["queries.jsonl"],
        "runs": [paths["run.txt"]],
        "llm_qrels": paths["llm.txt"],
        "depth": 2,
        "labels": tmp_path / "labels.db",
        "export_dir": tmp_path / "exports",
    }
    return create_app(build_config(**(kwargs | options)))


def label(browser: Browser, grades: list[tuple[str, str, int]] = HUMAN) -> None:
    for q, d, g in grades:
        assert browser.grade(q, d, g).status_code == 200


def figures(browser: Browser, **params: Any) -> dict[str, Any]:
    response = browser.client.get(
        "/calibration", params=params, headers={"Accept": "application/json"}
    )
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_kappa_and_alpha_of_the_human_against_the_llm_labels(tmp_path: Path) -> None:
    """Pairs both grade, human (rows) and LLM (columns): a1 5/5, b1 4/2, a2 5/4, a3 3/1,
    b3 3/3. p_o = 2/5; marginals human 5:2 4:1 3:2, LLM one each of 1..5, so
    p_e = (2 + 1 + 2)/25 = 1/5 and κ = (2/5 − 1/5)/(1 − 1/5) = 1/4."""
    browser = Browser(make_app(tmp_path))
    label(browser)
    data = figures(browser, measure=MEASURE)
    assert (data["human_pairs"], data["human_queries"], data["common_pairs"]) == (5, 3, 5)
    assert data["kappa"]["unweighted"] == pytest.approx(0.25)
    human, llm = [5, 4, 5, 3, 3], [5, 2, 4, 1, 3]
    sklearn = pytest.importorskip("sklearn.metrics", reason="scikit-learn not installed")
    for weights in ("linear", "quadratic"):
        expected = sklearn.cohen_kappa_score(human, llm, weights=weights, labels=[1, 2, 3, 4, 5])
        assert data["kappa"][weights] == pytest.approx(expected)
    kd = pytest.importorskip("krippendorff")
    for level in ("nominal", "ordinal", "interval"):
        expected = kd.alpha(reliability_data=[human, llm], level_of_measurement=level)
        assert data["krippendorff_alpha"][level] == pytest.approx(expected)
    html = browser.client.get("/calibration", params={"measure": MEASURE}).text
    assert 'id="kappa">0.250<' in html
    assert re.search(r'id="human-pairs">5<.*id="human-queries">3<', html)


def test_ppi_estimate_matches_ppi_python_and_the_formulas(tmp_path: Path) -> None:
    """Y = (1, 1, 0), Ŷ = (½, 1, 0) on q1–q3, Ŷ = (1, ½, ½) on q4–q6. By hand:
    cov(Y, Ŷ) = ((⅓)(0) + (⅓)(½) + (−⅔)(−½))/3 = 1/6; var₁ of the six Ŷ (mean 7/12) =
    (1 + 25 + 49 + 25 + 1 + 1)/144/5 = 17/120; λ = (1/6)/((1 + 3/3)·17/120) = 10/17;
    θ̂ = λ·⅔ + (⅔ − λ·½) = ⅔ + λ/6 = 13/17."""
    ppi_py = pytest.importorskip("ppi_py")
    browser = Browser(make_app(tmp_path))
    label(browser)
    data = figures(browser, measure=MEASURE)
    ppi = data["ppi"]["runs"]["run.txt"][KEY]
    assert ppi["lambda"] == pytest.approx(10 / 17)
    assert ppi["estimate"] == pytest.approx(13 / 17)
    y, yhat, yhat_u = (np.array(v) for v in (Y, YHAT, YHAT_U))
    point = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)).item())
    low, high = (float(np.asarray(v).item()) for v in ppi_py.ppi_mean_ci(y, yhat, yhat_u, 0.1))
    assert ppi["estimate"] == pytest.approx(point, abs=1e-9)
    assert ppi["ci"] == pytest.approx([low, high], abs=1e-9)
    assert (ppi["n_labelled"], ppi["n_unlabelled"], ppi["weighted"]) == (3, 3, False)
    assert ppi["human_mean"] == pytest.approx(2 / 3)
    assert ppi["llm_mean"] == pytest.approx(7 / 12)
    assert data["ppi"]["method"] == "PPI++"
    labels = "computed on LLM labels (llm.txt), corrected by human labels (rule:latest) on 3"
    assert data["labels"].startswith(labels)
    html = browser.client.get("/calibration", params={"measure": MEASURE}).text
    row = html[html.index(f'data-measure="{KEY}"') :]
    row = row[: row.index("</tr>")]
    assert f"<strong>{13 / 17:.4f}</strong>" in row
    assert f"[{low:.4f}, {high:.4f}]" in row
    assert f"{7 / 12:.4f}" in row and f"{2 / 3:.4f}" in row  # LLM only, human only
    assert f"Estimates {labels}" in html
    assert "uniform random sample" in html  # the design the estimate assumes
    assert "PPI++, 90 % intervals" in html


def test_partly_labelled_query_keeps_the_llm_grade_elsewhere(tmp_path: Path) -> None:
    """Only a2 of q2 graded 1 by the person: the merged labels of q2 are a2 1, b2 4 (the
    LLM's), so Y(q2) = ½ — not 0, as the person's labels alone would give."""
    browser = Browser(make_app(tmp_path))
    label(browser, [("q2", "a2", 1), ("q1", "a1", 5)])
    ppi = figures(browser, measure=MEASURE)["ppi"]["runs"]["run.txt"][KEY]
    # q1: a1 5 (person), b1 2 (LLM) → ½; q2 → ½: the human-only mean is ½
    assert ppi["human_mean"] == pytest.approx(0.5)


def test_the_llm_only_mean_is_the_evaluate_pages_number(tmp_path: Path) -> None:
    browser = Browser(make_app(tmp_path))
    label(browser)
    ppi = figures(browser)["ppi"]["runs"]["run.txt"]  # the app's measures
    html = browser.client.get("/evaluate", params={"source": "qrels:llm.txt"}).text
    cells = re.findall(r"</span>([0-9.]+)</td>", html)
    head = re.findall(r"<th>([^<]+)</th>", html[html.index("<thead>") : html.index("</thead>")])
    shown = dict(zip(head[1:], cells, strict=True))
    assert shown, "the evaluate page shows no number"
    for name, value in shown.items():
        assert f"{ppi[name]['llm_mean']:.4f}" == value, name
    # both pages take the measures from the address (?measure=…, repeatable)
    asked = {"source": "qrels:llm.txt", "measure": MEASURE}
    html = browser.client.get("/evaluate", params=asked).text
    assert f"<th>{KEY}</th>" in html and "<th>ndcg@10</th>" not in html
    assert f"{7 / 12:.4f}</td>" in html  # the LLM-label mean of P@2(rel_level=4), by hand


def test_the_page_is_evaluate_ppi_on_the_exported_labels(tmp_path: Path) -> None:
    """One name, one number: the page's figures are those of ``ragmeter evaluate --ppi``
    (:func:`ragmeter.workflows.ppi.evaluate_ppi`) on the run, the LLM qrels and the human
    labels the app exports."""
    from ragmeter.workflows.evaluate import EvaluateRequest
    from ragmeter.workflows.ppi import PPIRequest, evaluate_ppi

    browser = Browser(make_app(tmp_path))
    label(browser)
    page = figures(browser)["ppi"]
    human = tmp_path / "human.txt"
    human.write_text(browser.client.get("/export/qrels.txt").text)
    data = tmp_path / "data"
    request = EvaluateRequest([data / "run.txt"], data / "llm.txt", list(EVALUATION_MEASURES))
    # the page shows PPI++ (ppi-python's figures), evaluate --ppi --ppi-estimator plusplus
    cli = evaluate_ppi(request, PPIRequest(human, estimator="plusplus")).estimates.to_dict()
    assert page["runs"] == cli["runs"]
    assert (page["method"], page["alpha"]) == (cli["method"], cli["alpha"])


def test_queue_inclusion_probabilities_weight_the_estimate(tmp_path: Path) -> None:
    """Served with a queue q1 (π ½), q2 (π ¼), q3 (π ½), q4 (π ¼): the labelled q1–q3 weigh
    2, 4, 2. Active inference (Zrnic & Candès 2024) written out over the six queries, η the
    weight on a labelled query and 0 elsewhere: θ̂ = mean(λŶ + η(Y − λŶ)),
    se = sd(…)/√6; λ minimises se (checked on a grid)."""
    queue = tmp_path / "queue.jsonl"
    pis = {"q1": 0.5, "q2": 0.25, "q3": 0.5, "q4": 0.25}
    entries = [QueueEntry(q, (f"a{q[1]}", f"b{q[1]}"), "active", p) for q, p in pis.items()]
    write_label_queue(entries, queue)
    browser = Browser(make_app(tmp_path, queue=queue))
    label(browser)
    data = figures(browser, measure=MEASURE)
    ppi = data["ppi"]["runs"]["run.txt"][KEY]
    assert ppi["weighted"] is True
    assert "inverse-probability weighted" in data["ppi"]["method"]

    def reference(lam: float) -> tuple[float, float]:
        terms = [lam * h + (t - lam * h) * w for t, h, w in zip(Y, YHAT, (2, 4, 2), strict=True)]
        terms += [lam * h for h in YHAT_U]
        mean = sum(terms) / 6
        return mean, math.sqrt(sum((t - mean) ** 2 for t in terms) / 6 / 6)

    mean, se = reference(ppi["lambda"])
    assert ppi["estimate"] == pytest.approx(mean, abs=1e-12)
    z = 1.6448536269514722  # Φ⁻¹(0.95), from tables
    assert ppi["ci"] == pytest.approx([mean - z * se, mean + z * se], abs=1e-12)
    assert se <= min(reference(g)[1] for g in np.linspace(0, 1, 1001)) + 1e-12
    notes = " ".join(data["notes"])
    assert "3 of the queue's 4 queries have human labels" in notes
    assert "provisional" in notes


def test_queue_without_probabilities_is_unweighted_and_says_so(tmp_path: Path) -> None:
    queue = tmp_path / "queue.jsonl"
    write_label_queue([QueueEntry(q, (f"a{q[1]}",), "random") for q in QUERIES[:3]], queue)
    browser = Browser(make_app(tmp_path, queue=queue))
    label(browser, [("q1", "a1", 5), ("q2", "a2", 5), ("q3", "a3", 3)])
    data = figures(browser, measure=MEASURE)
    assert data["ppi"]["runs"]["run.txt"][KEY]["weighted"] is False
    assert any("no inclusion probabilities" in n for n in data["notes"])


def test_one_labelled_query_gives_no_interval_and_says_so(tmp_path: Path) -> None:
    browser = Browser(make_app(tmp_path))
    label(browser, [("q1", "a1", 5)])
    ppi = figures(browser, measure=MEASURE)["ppi"]["runs"]["run.txt"][KEY]
    assert ppi["ci"] is None
    html = browser.client.get("/calibration", params={"measure": MEASURE}).text
    assert "1 labelled query: no interval (needs 2)" in html


def test_what_is_missing_is_said(tmp_path: Path) -> None:
    paths = write_files(tmp_path / "data")
    no_llm = create_app(
        build_config(runs=[paths["run.txt"]], labels=tmp_path / "a.db", export_dir=tmp_path)
    )
    html = Browser(no_llm).client.get("/calibration").text
    assert "no LLM labels: start the server with --llm-qrels FILE" in html
    browser = Browser(make_app(tmp_path))
    assert "no human labels in rule:latest yet" in " ".join(figures(browser)["missing"])
    no_runs = create_app(
        build_config(
            qrels=[paths["llm.txt"]],
            llm_qrels=paths["llm.txt"],
            labels=tmp_path / "b.db",
            export_dir=tmp_path,
        )
    )
    browser = Browser(no_runs)
    label(browser, [("q1", "a1", 5)])
    data = figures(browser)
    assert data["kappa"] is not None and data["ppi"] is None
    assert any("--run" in m for m in data["missing"])


def test_llm_labels_on_another_scale_get_no_estimate(tmp_path: Path) -> None:
    umbrela = tmp_path / "umbrela.txt"
    umbrela.write_text("q1 0 a1 3\nq1 0 b1 0\nq2 0 a2 2\n")
    app = make_app(tmp_path, llm_qrels=umbrela)
    browser = Browser(app)
    label(browser, [("q1", "a1", 5), ("q2", "a2", 2)])
    data = figures(browser)
    assert data["ppi"] is None
    assert any("grade 0..3, the app 1..5" in m for m in data["missing"])


def test_the_llm_labels_provenance_is_named(tmp_path: Path) -> None:
    paths = write_files(tmp_path / "data")
    judge = LabelSource(kind="judge", model="m-7b", prompt_id="relevance")
    write_provenance(paths["llm.txt"], LabelProvenance.single(judge))
    browser = Browser(make_app(tmp_path))
    html = browser.client.get("/calibration").text
    assert "LLM labels (relevance, model m-7b): 12 of 12 pairs" in html
    other = Browser(make_app(tmp_path / "bare"))
    assert "llm.txt has no provenance sidecar" in other.client.get("/calibration").text


def test_human_source_is_checked(tmp_path: Path) -> None:
    browser = Browser(make_app(tmp_path))
    label(browser)
    assert figures(browser, human="annotator:alice")["human_pairs"] == 5
    for bad in ("qrels:llm.txt", "annotator:nobody", "rule:nope"):
        assert browser.client.get("/calibration", params={"human": bad}).status_code == 400


def test_llm_qrels_given_twice_is_one_source(tmp_path: Path) -> None:
    paths = write_files(tmp_path / "data")
    app = make_app(tmp_path, compare_qrels=[paths["llm.txt"]])
    coll = app.state.config.collection
    assert coll.llm_source == "llm.txt"
    assert list(coll.qrels_sources) == ["llm.txt"]


def test_serve_takes_llm_qrels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvicorn", reason="the web extra is needed")
    from typer.testing import CliRunner

    from ragmeter.cli import app as cli_app

    served: list[Any] = []
    # bind and start nothing
    monkeypatch.setattr("ragmeter.web.server.listening_socket", lambda host, port: None)
    monkeypatch.setattr("ragmeter.web.server.serve_app", lambda app, *_: served.append(app))
    paths = write_files(tmp_path / "data")
    argv = ["serve", "--run", str(paths["run.txt"]), "--labels", str(tmp_path / "l.db")]
    result = CliRunner().invoke(cli_app, [*argv, "--llm-qrels", str(paths["llm.txt"])])
    assert result.exit_code == 0, result.output
    assert served[0].state.config.collection.llm_source == "llm.txt"
    (tmp_path / "bad.txt").write_text("q1 0 a1\n")
    refused = CliRunner().invoke(cli_app, [*argv, "--llm-qrels", str(tmp_path / "bad.txt")])
    assert refused.exit_code == 2
    assert "bad.txt" in refused.output and "line 1" in refused.output
