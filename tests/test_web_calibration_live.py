"""The calibration page as labels come in, through FastAPI's TestClient: a learned judge's
agreement with the human labels (``serve --learned``), and the PPI confidence sequence with
the human-only one beside it.

The learned model is made by hand: it weighs only the query-term overlap (score = 1 + 4 ×
overlap, cut at 1.5 … 4.5), so each passage's grade follows from its text (all the query's
words: 5, half: 3, none: 1). The expected κ comes from the confusion matrix by hand and from
scikit-learn, α from the ``krippendorff`` package, the intervals from the formulas of
docs/ppi.md written out here. No expected value comes from ragmeter.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from ragmeter.io.label_queue import LEARNED_STRATEGY, QueueEntry, write_label_queue
from ragmeter.judges.learned import N_FEATURES, LearnedModel, save_model
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from test_learned_judge import HashEncoder
from test_web import Browser

MEASURE = "P@2(rel_level=4)"
KEY = "precision@2(rel_level=4)"
ALPHA = 0.1  # the page's error level (ragmeter evaluate --ppi's)
BURN_IN, OPTIMISED_AT = 30, 100  # the sequence's, fixed in advance (docs/ppi.md)


@pytest.fixture(autouse=True)
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragmeter.pipeline.embeddings as embeddings

    monkeypatch.setattr(embeddings, "MiniLMEncoder", HashEncoder)


def overlap_model(folder: Path, scale: tuple[int, int] = (1, 5)) -> Path:
    coef = np.zeros((1, N_FEATURES))
    coef[0, -1] = 4.0  # the query-term overlap
    lo, hi = scale
    model = LearnedModel(
        scale=scale,
        coef=coef,
        intercept=np.array([1.0]),
        training_labels=10,
        training_sha256="0" * 64,
        topics=1,
        per_topic=False,
        min_labels=64,
        alpha=1.0,
        adapter_alpha=1.0,
        cuts=tuple(lo + k + 0.5 for k in range(hi - lo)),
    )
    return save_model(model, folder / "model")


def write_collection(
    folder: Path, llm: dict[str, tuple[int, int]], texts: dict[str, str] | None = None
) -> dict[str, Path]:
    """Query q_k ranks a_k then b_k; ``llm`` their LLM grades; passage texts from ``texts``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {n: folder / n for n in ("run.txt", "llm.txt", "queries.jsonl", "corpus.jsonl")}
    ids = list(llm)
    paths["run.txt"].write_text(
        "".join(f"{q} Q0 a{q[1:]} 1 2.0 R\n{q} Q0 b{q[1:]} 2 1.0 R\n" for q in ids)
    )
    paths["llm.txt"].write_text(
        "".join(f"{q} 0 a{q[1:]} {ga}\n{q} 0 b{q[1:]} {gb}\n" for q, (ga, gb) in llm.items())
    )
    paths["queries.jsonl"].write_text(
        "".join(json.dumps({"id": q, "text": f"query {q}"}) + "\n" for q in ids)
    )
    texts = texts or {}
    paths["corpus.jsonl"].write_text(
        "".join(
            json.dumps({"id": f"{s}{q[1:]}", "text": texts.get(f"{s}{q[1:]}", "nothing here")})
            + "\n"
            for q in ids
            for s in "ab"
        )
    )
    return paths


def make_app(tmp_path: Path, paths: dict[str, Path], **options: Any) -> Any:
    kwargs: dict[str, Any] = {
        "queries": paths["queries.jsonl"],
        "corpus": paths["corpus.jsonl"],
        "runs": [paths["run.txt"]],
        "llm_qrels": paths["llm.txt"],
        "depth": 2,
        "labels": tmp_path / "labels.db",
        "export_dir": tmp_path / "exports",
    }
    return create_app(build_config(**(kwargs | options)))


def figures(browser: Browser, **params: Any) -> dict[str, Any]:
    response = browser.client.get(
        "/calibration",
        params={"measure": MEASURE, **params},
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


# -- the learned judge ----------------------------------------------------------------------

SIX = {f"q{k}": (5, 2) for k in range(1, 7)}
#: the learned grades by text: all the query's words (5), half of them (3), none (1)
TEXTS = {
    "a1": "query q1 in full",  # 5
    "b1": "a query alone",  # 3
    "a2": "query q2",  # 5
    "a3": "query",  # 3
    "b3": "the query",  # 3
}


def test_the_learned_judges_agreement_grows_with_the_labels(tmp_path: Path) -> None:
    paths = write_collection(tmp_path / "data", SIX, TEXTS)
    model = overlap_model(tmp_path)
    browser = Browser(make_app(tmp_path, paths, learned=model))
    assert figures(browser)["learned"]["n"] == 0
    # three pairs first: human (5, 4, 5) against learned (5, 3, 5)
    for q, d, g in [("q1", "a1", 5), ("q1", "b1", 4), ("q2", "a2", 5)]:
        assert browser.grade(q, d, g).status_code == 200
    sklearn = pytest.importorskip("sklearn.metrics")
    kd = pytest.importorskip("krippendorff")
    first = figures(browser)["learned"]
    assert first["source"] == "learned:model" and first["n"] == 3
    expected = sklearn.cohen_kappa_score([5, 4, 5], [5, 3, 5], labels=[1, 2, 3, 4, 5])
    assert first["kappa"]["unweighted"] == pytest.approx(expected)
    # then two more: human (5, 4, 5, 3, 3), learned (5, 3, 5, 3, 3). p_o = 4/5; marginals
    # human 5:2 4:1 3:2, learned 5:2 3:3: p_e = (4 + 0 + 6)/25 = 2/5; κ = (2/5)/(3/5) = 2/3
    for q, d, g in [("q3", "a3", 3), ("q3", "b3", 3)]:
        assert browser.grade(q, d, g).status_code == 200
    data = figures(browser)["learned"]
    human, learned = [5, 4, 5, 3, 3], [5, 3, 5, 3, 3]
    assert data["n"] == 5
    assert data["kappa"]["unweighted"] == pytest.approx(2 / 3)
    quadratic = sklearn.cohen_kappa_score(
        human, learned, weights="quadratic", labels=[1, 2, 3, 4, 5]
    )
    assert data["kappa"]["quadratic"] == pytest.approx(quadratic)
    ordinal = kd.alpha(reliability_data=[human, learned], level_of_measurement="ordinal")
    assert data["krippendorff_alpha"]["ordinal"] == pytest.approx(ordinal)
    assert any("in-sample" in n for n in data["notes"])
    html = browser.client.get("/calibration", params={"measure": MEASURE}).text
    assert 'id="learned-n">5<' in html and 'id="learned-kappa">0.667<' in html
    assert f'id="learned-alpha-ordinal">{ordinal:.3f}<' in html
    # one annotator's labels only: bob's single grade
    bob = Browser(browser.client.app, annotator="bob")
    assert bob.grade("q2", "a2", 1).status_code == 200
    assert figures(bob, human="annotator:bob")["learned"]["n"] == 1


def test_a_learned_judge_on_another_scale_gets_no_kappa(tmp_path: Path) -> None:
    paths = write_collection(tmp_path / "data", SIX, TEXTS)
    browser = Browser(make_app(tmp_path, paths, learned=overlap_model(tmp_path, (0, 3))))
    assert browser.grade("q1", "a1", 5).status_code == 200
    data = figures(browser)["learned"]
    assert data["kappa"] is None and "grades 0..3, the app 1..5" in data["notes"][0]


def test_no_learned_judge_no_section(tmp_path: Path) -> None:
    paths = write_collection(tmp_path / "data", SIX, TEXTS)
    browser = Browser(make_app(tmp_path, paths))
    assert browser.grade("q1", "a1", 5).status_code == 200
    assert figures(browser)["learned"] is None
    assert "learned judge" not in browser.client.get("/calibration").text


def test_a_bad_model_directory_is_refused_before_serving(tmp_path: Path) -> None:
    from ragmeter.errors import InputError

    paths = write_collection(tmp_path / "data", SIX, TEXTS)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not a learned judge"):
        make_app(tmp_path, paths, learned=tmp_path / "empty")


def test_a_queue_of_chosen_pairs_gets_no_estimate(tmp_path: Path) -> None:
    paths = write_collection(tmp_path / "data", SIX, TEXTS)
    queue = tmp_path / "ask.jsonl"
    entries = [QueueEntry(q, (f"a{q[1]}",), LEARNED_STRATEGY, None, None, {}) for q in SIX]
    write_label_queue(entries, queue)
    browser = Browser(make_app(tmp_path, paths, queue=queue, learned=overlap_model(tmp_path)))
    assert browser.grade("q1", "a1", 5).status_code == 200
    data = figures(browser)
    assert data["ppi"] is None and "chosen, not drawn" in data["missing"][0]
    assert any("least sure of" in n for n in data["learned"]["notes"])


# -- the confidence sequence ----------------------------------------------------------------


def cs_by_hand(z: list[float], alpha: float) -> tuple[float, float]:
    """The last interval of the asymptotic confidence sequence of docs/ppi.md:
    mean ± σ̂·√(2(tρ² + 1)/(t²ρ²)·log(√(tρ² + 1)/α)), ρ² = (−2 log α + log(−2 log α + 1))/t*,
    infinite before the burn-in, running intersection."""
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / OPTIMISED_AT
    low, high = -math.inf, math.inf
    for t in range(1, len(z) + 1):
        head = z[:t]
        mean = sum(head) / t
        var = max(sum(v * v for v in head) / t - mean * mean, 0.0)
        radius = math.sqrt(var) * math.sqrt(
            2 * (t * rho2 + 1) / (t * t * rho2) * math.log(math.sqrt(t * rho2 + 1) / alpha)
        )
        if t >= BURN_IN:
            low, high = max(low, mean - radius), min(high, mean + radius)
    return low, high


def ppi_terms(y: list[float], yhat: list[float], yhat_u: list[float]) -> list[float]:
    """Z_i = λ_i·mean(Ŷ_u) + Y_i − λ_i·Ŷ_i, λ_i PPI++'s λ* on the labels before i (0 for
    the first two): clip(cov(Y, Ŷ) / ((1 + n/N)·var₁(Ŷ ∪ Ŷ_u)), 0, 1)."""
    pool = sum(yhat_u) / len(yhat_u)
    out = []
    for i in range(len(y)):
        lam = 0.0
        if i >= 2:
            ys, hs = y[:i], yhat[:i]
            my, mh = sum(ys) / i, sum(hs) / i
            cov = sum((a - my) * (b - mh) for a, b in zip(ys, hs, strict=True)) / i
            every = hs + yhat_u
            m = sum(every) / len(every)
            var = sum((v - m) ** 2 for v in every) / (len(every) - 1)
            lam = min(max(cov / ((1 + i / len(yhat_u)) * var), 0.0), 1.0) if var > 0 else 0.0
        out.append(lam * pool + y[i] - lam * yhat[i])
    return out


def precision(grades: tuple[int, int]) -> float:
    return sum(g >= 4 for g in grades) / 2


def stream(
    seed: int, agree: float
) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]], list[str]]:
    """40 queries with LLM grades; human grades that copy them with chance ``agree`` (else
    any grade); 34 of the queries in a labelling order."""
    rng = random.Random(seed)
    llm = {f"q{k}": (rng.randint(1, 5), rng.randint(1, 5)) for k in range(1, 41)}
    human = {
        q: tuple(g if rng.random() < agree else rng.randint(1, 5) for g in gs)
        for q, gs in llm.items()
    }
    order = rng.sample(list(llm), 34)
    return llm, human, order  # type: ignore[return-value]


@pytest.mark.parametrize("agree", [0.9, 0.0])
def test_the_confidence_sequence_as_labels_arrive(tmp_path: Path, agree: float) -> None:
    llm, human, order = stream(5, agree)
    browser = Browser(make_app(tmp_path, write_collection(tmp_path / "data", llm)))
    for count, q in enumerate(order, start=1):
        for doc, g in zip((f"a{q[1:]}", f"b{q[1:]}"), human[q], strict=True):
            assert browser.grade(q, doc, g).status_code == 200
        if count == 10:  # before the burn-in: no interval yet, and it says why
            row = figures(browser)["sequence"]["runs"]["run.txt"][KEY]
            assert row["n"] == 10 and row["ci"] is None and row["human_ci"] is None
            assert row["pending"] == "anytime-valid from 30 labelled queries; 10 so far"
    data = figures(browser)
    row = data["sequence"]["runs"]["run.txt"][KEY]
    y = [precision(human[q]) for q in order]
    yhat = [precision(llm[q]) for q in order]
    yhat_u = [precision(llm[q]) for q in llm if q not in order]
    assert row["n"] == 34 == data["ppi"]["runs"]["run.txt"][KEY]["n_labelled"]
    assert row["human_mean"] == pytest.approx(sum(y) / 34)
    assert row["human_mean"] == pytest.approx(data["ppi"]["runs"]["run.txt"][KEY]["human_mean"])
    assert row["human_ci"] == pytest.approx(list(cs_by_hand(y, ALPHA)))
    z = ppi_terms(y, yhat, yhat_u)
    assert row["estimate"] == pytest.approx(sum(z) / len(z))
    assert row["ci"] == pytest.approx(list(cs_by_hand(z, ALPHA)))
    r = float(np.corrcoef(y, yhat)[0, 1])
    assert row["judge_correlation"] == pytest.approx(r)
    weak = r < 1 / math.sqrt(34 - 2)
    assert (row["weak_judge"] is not None) == weak
    assert weak == (agree == 0.0)  # the two streams show both sides of the rule
    html = browser.client.get("/calibration", params={"measure": MEASURE}).text
    table = html[html.index('<table class="results sequence"') :]
    cells = table[table.index(f'data-measure="{KEY}"') :]
    cells = cells[: cells.index("</tr>")]
    low, high = row["ci"]
    assert f"[{low:.4f}, {high:.4f}]" in cells and '<td class="n">34</td>' in cells
    assert ("below 1/√(n−2)" in cells) == weak
    assert "90 %, valid however often they are read" in html


def test_a_weighted_queue_gets_no_sequence_and_says_why(tmp_path: Path) -> None:
    llm, human, order = stream(5, 0.9)
    paths = write_collection(tmp_path / "data", llm)
    queue = tmp_path / "queue.jsonl"
    entries = [
        QueueEntry(q, (f"a{q[1:]}", f"b{q[1:]}"), "active", 0.5, None, {}) for q in order[:4]
    ]
    write_label_queue(entries, queue)
    browser = Browser(make_app(tmp_path, paths, queue=queue))
    for q in order[:4]:
        assert browser.grade(q, f"a{q[1:]}", human[q][0]).status_code == 200
    data = figures(browser)
    assert data["ppi"] is not None
    assert (
        "runs" not in data["sequence"]
        and "weights its queries by 1/π" in data["sequence"]["notes"][0]
    )


def test_serve_takes_learned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvicorn", reason="the web extra is needed")
    from typer.testing import CliRunner

    from ragmeter.cli import app as cli_app

    served: list[Any] = []
    # bind and start nothing
    monkeypatch.setattr("ragmeter.web.server.listening_socket", lambda host, port: None)
    monkeypatch.setattr("ragmeter.web.server.serve_app", lambda app, *_: served.append(app))
    paths = write_collection(tmp_path / "data", SIX, TEXTS)
    argv = ["serve", "--run", str(paths["run.txt"]), "--labels", str(tmp_path / "l.db")]
    result = CliRunner().invoke(cli_app, [*argv, "--learned", str(overlap_model(tmp_path))])
    assert result.exit_code == 0, result.output
    assert served[0].state.config.learned.name == "learned:model"
    (tmp_path / "empty").mkdir()
    refused = CliRunner().invoke(cli_app, [*argv, "--learned", str(tmp_path / "empty")])
    assert refused.exit_code == 2 and "manifest.json" in refused.output
