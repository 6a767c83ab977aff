"""The learned judge: fitting (ridge against its closed form), the model directory (safe,
checked, byte-identical), held-out agreement (κ by hand), provenance, and the commands on the
example collection (per-topic and pooled)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.core.provenance import LabelProvenance, LabelSource
from ragmeter.data import EXAMPLE_DIR
from ragmeter.errors import InputError
from ragmeter.io.provenance import read_provenance
from ragmeter.judges.learned import (
    COEF,
    MANIFEST,
    N_FEATURES,
    LearnedJudge,
    distribution_cuts,
    fit_model,
    grades_from_cuts,
    load_model,
    save_model,
    term_overlap,
    training_set,
)
from ragmeter.judges.learning import fold_of, validation_figures

pytest.importorskip("sklearn")


class HashEncoder:
    """A stand-in for MiniLM: a fixed unit vector per text (seeded by its SHA-256)."""

    dimension = 384

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            v = np.random.default_rng(seed).normal(size=384)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragmeter.pipeline.embeddings as embeddings

    monkeypatch.setattr(embeddings, "MiniLMEncoder", HashEncoder)


def _rows(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, N_FEATURES))


# -- the learner --------------------------------------------------------------------------------


def test_pooled_model_is_ridge_in_closed_form() -> None:
    x = _rows(40)
    y = np.array([1, 2, 3, 4, 5] * 8)
    alpha = 0.7
    model = fit_model(x, y.tolist(), ["t"] * 40, ["q"] * 40, per_topic=False, alpha=alpha)
    # ridge with an unpenalised intercept: centre, solve (XᵀX + αI) w = Xᵀy, b = ȳ − x̄·w
    xc, yc = x - x.mean(axis=0), y - y.mean()
    w = np.linalg.solve(xc.T @ xc + alpha * np.eye(N_FEATURES), xc.T @ yc)
    np.testing.assert_allclose(model.coef[0], w, atol=1e-9)
    assert model.intercept[0] == pytest.approx(y.mean() - x.mean(axis=0) @ w)
    assert model.adapters == () and model.scale == (1, 5)


def test_cut_points_keep_the_training_grades_shares() -> None:
    # grades 0,0,0,1,2,2 on the scale 0..3: shares ≤ 0, ≤ 1, ≤ 2 = 1/2, 2/3, 1; scores 0..5,
    # linear quantiles at (n−1)·share = 2.5, 3.33…, 5 → cuts 2.5, 3.333…, 5.0
    cuts = distribution_cuts(np.arange(6.0), [0, 0, 0, 1, 2, 2], (0, 3))
    assert cuts == pytest.approx((2.5, 10 / 3, 5.0))
    scores = np.array([-3.0, 2.5, 3.0, 3.5, 5.0, 9.0])
    assert grades_from_cuts(scores, cuts, 0) == [0, 1, 1, 2, 3, 3]


def test_term_overlap_by_hand() -> None:
    assert term_overlap("The tram, the bus", "a bus ride") == pytest.approx(1 / 3)
    assert term_overlap("", "anything") == 0.0


def test_adapters_only_for_topics_with_enough_labels() -> None:
    x = _rows(30)
    y = [1, 2, 3] * 10
    topics = ["a"] * 20 + ["b"] * 10
    queries = ["qa"] * 20 + ["qb"] * 10
    model = fit_model(x, y, topics, queries, per_topic=True, min_labels=15)
    assert [(a.topic, a.labels) for a in model.adapters] == [("a", 20)]
    # topic b (10 labels) and an unseen query get the pooled model alone
    pooled = x[25] @ model.coef[0] + model.intercept[0]
    assert model.scores(x[25:26], ["qb"])[0] == pytest.approx(pooled)
    assert model.scores(x[25:26], ["never seen"])[0] == pytest.approx(pooled)
    row = model.adapters[0].row
    adapted = pooled + x[25] @ model.coef[row] + model.intercept[row]
    assert model.scores(x[25:26], ["qa"])[0] == pytest.approx(adapted)


def test_training_set_skips_holes_and_names_missing_texts() -> None:
    data = training_set({"q": {"b": 2, "a": 1, "h": -1}}, {"q": "Q"}, {"a": "A", "b": "B"})
    assert data.pairs == (("q", "a"), ("q", "b")) and data.grades == (1, 2)
    # the hash is of the sorted 'qid docid grade' lines, whatever the input order
    assert data.sha256 == hashlib.sha256(b"q a 1\nq b 2\n").hexdigest()
    with pytest.raises(InputError, match="no text for passage 'c'"):
        training_set({"q": {"a": 1, "c": 2}}, {"q": "Q"}, {"a": "A"})
    with pytest.raises(InputError, match="at least two different grades"):
        training_set({"q": {"a": 1}}, {"q": "Q"}, {"a": "A"})


# -- validation ---------------------------------------------------------------------------------


def test_kappa_and_alpha_of_a_hand_case() -> None:
    human, predicted = [1, 2, 3, 3], [1, 2, 3, 2]
    figures = validation_figures(human, predicted, ["t"] * 4, (1, 3), resamples=20)
    # p_o = 3/4; marginals 1,1,2 and 1,2,1 (of 4): p_e = (1·1 + 1·2 + 2·1)/16 = 5/16
    assert figures["kappa"].value == pytest.approx((3 / 4 - 5 / 16) / (1 - 5 / 16))
    assert figures["accuracy"].value == pytest.approx(0.75)
    # quadratic weights (i−j)²: observed Σw·O = 1·1/4; expected Σw·a_i·b_j over the
    # marginals a = (1,1,2)/4, b = (1,2,1)/4 = (1/4)(2/4 + 4/4) + (1/4)(1/4 + 1/4)
    # + (2/4)(4/4 + 2/4) = 3/8 + 1/8 + 3/4 = 5/4 → κ = 1 − (1/4)/(5/4) = 0.8
    assert figures["kappa_quadratic"].value == pytest.approx(0.8)
    krippendorff = pytest.importorskip("krippendorff")
    expected = krippendorff.alpha([human, predicted], level_of_measurement="ordinal")
    assert figures["alpha_ordinal"].value == pytest.approx(expected)


def test_folds_deal_each_topic_evenly_and_deterministically() -> None:
    topics = ["a"] * 7 + ["b"] * 5
    folds = fold_of(topics, 3, seed=4)
    assert folds.tolist() == fold_of(topics, 3, seed=4).tolist()
    assert sorted(folds[:7].tolist()) == [0, 0, 0, 1, 1, 2, 2]
    assert sorted(folds[7:].tolist()) == [0, 0, 1, 1, 2]


# -- the model directory ------------------------------------------------------------------------


def _model() -> object:
    x = _rows(30)
    return fit_model(x, [1, 2, 3] * 10, ["a"] * 30, ["qa"] * 30, min_labels=10)


def test_model_directory_round_trips(tmp_path: Path) -> None:
    model = _model()
    save_model(model, tmp_path / "m")  # type: ignore[arg-type]
    loaded = load_model(tmp_path / "m")
    np.testing.assert_array_equal(loaded.coef, model.coef)  # type: ignore[attr-defined]
    assert loaded.sha256 == model.sha256  # type: ignore[attr-defined]
    assert len(loaded.adapters) == 1


def test_a_changed_or_bad_model_directory_is_refused(tmp_path: Path) -> None:
    d = save_model(_model(), tmp_path / "m")  # type: ignore[arg-type]
    coef = d / COEF
    original = coef.read_bytes()
    coef.write_bytes(original[:-8] + b"\0" * 8)
    with pytest.raises(InputError, match=r"coef\.npy.*SHA-256 differs"):
        load_model(d)
    coef.write_bytes(original)
    manifest = json.loads((d / MANIFEST).read_text())
    manifest["ragmeter_learned_judge"] = 9
    (d / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(InputError, match=r"ragmeter_learned_judge.*version 9"):
        load_model(d)
    del manifest["ragmeter_learned_judge"]
    (d / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(
        InputError, match=r"manifest\.json, field 'ragmeter_learned_judge': missing"
    ):
        load_model(d)
    with pytest.raises(InputError, match="not a learned judge"):
        load_model(tmp_path)


# -- provenance ---------------------------------------------------------------------------------


def test_learned_source_says_so_in_every_view() -> None:
    source = LabelSource(
        kind="learned",
        model="learned-ridge abc",
        training_labels=1233,
        training_sha256="f" * 64,
        features=("minilm-cosine",),
        learner="ridge(alpha=0.1)",
        scope="pooled",
    )
    assert LabelSource.from_json(json.loads(json.dumps(source.to_json()))) == source
    line = LabelProvenance.single(source).describe()
    assert line.startswith("labels from a learned judge trained on 1,233 human labels")
    assert "ridge(alpha=0.1), pooled" in line
    # machine labels: calibration and the "not human" warnings apply to it
    assert source.is_llm and LabelProvenance.single(source).has_llm
    other = LabelSource(**{**source.to_json(), "training_sha256": "0" * 64, "features": ()})
    assert not source.same_judge(other)


# -- the commands on the example collection -----------------------------------------------------


def _learn(tmp_path: Path, name: str, *extra: str) -> tuple[Path, str]:
    out = tmp_path / name
    result = CliRunner().invoke(
        app,
        [
            "judge", "learn", "--qrels", str(EXAMPLE_DIR / "qrels.txt"),
            "--queries", str(EXAMPLE_DIR / "queries.jsonl"),
            "--corpus", str(EXAMPLE_DIR / "corpus.jsonl"),
            "--out", str(out), "--resamples", "50", *extra,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out, result.output


def _run_file(tmp_path: Path) -> Path:
    qids = [json.loads(line)["id"] for line in (EXAMPLE_DIR / "queries.jsonl").open()]
    lines = [f"{q} Q0 p{7 * i:03d} {i} {1 / i} r\n" for q in qids for i in range(1, 6)]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    return path


def _judge(tmp_path: Path, model: Path, out: str, *extra: str) -> Path:
    result = CliRunner().invoke(
        app,
        [
            "judge", "relevance", "--run", str(_run_file(tmp_path)),
            "--queries", str(EXAMPLE_DIR / "queries.jsonl"),
            "--corpus", str(EXAMPLE_DIR / "corpus.jsonl"),
            "--out", str(tmp_path / out), "--learned", str(model),
            "--cache", str(tmp_path / "cache.sqlite"), "-q", *extra,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return tmp_path / out


def test_learn_per_topic_and_pooled_on_the_example(tmp_path: Path, fake_encoder: None) -> None:
    topic_dir, topic_out = _learn(tmp_path, "topic", "--min-labels", "40")
    pooled_dir, pooled_out = _learn(tmp_path, "pooled", "--pooled")
    assert "1,233 human labels of 30 topics" in topic_out
    counts: dict[str, int] = {}
    for line in (EXAMPLE_DIR / "qrels.txt").read_text().splitlines():
        counts[line.split()[0]] = counts.get(line.split()[0], 0) + 1
    with_adapter = sum(n >= 40 for n in counts.values())
    assert f"adapters for {with_adapter} of 30 topics" in topic_out
    assert "the pooled model alone:" in topic_out and "κ quadratic" in topic_out
    assert "ordinal α" in pooled_out and "adapters" not in pooled_out
    assert len(load_model(topic_dir).adapters) == with_adapter
    assert load_model(pooled_dir).adapters == ()
    assert max(len(line) for line in topic_out.splitlines() if "wrote" not in line) <= 80


def test_learn_is_deterministic(tmp_path: Path, fake_encoder: None) -> None:
    a, out_a = _learn(tmp_path, "a", "--min-labels", "40")
    b, out_b = _learn(tmp_path, "b", "--min-labels", "40")
    assert out_a.replace(str(a), "") == out_b.replace(str(b), "")
    for name in ("manifest.json", "coef.npy", "intercept.npy"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_relevance_with_a_learned_judge_records_its_provenance(
    tmp_path: Path, fake_encoder: None
) -> None:
    model, _ = _learn(tmp_path, "m", "--min-labels", "40", "--folds", "0")
    labels = _judge(tmp_path, model, "a.txt")
    again = _judge(tmp_path, model, "b.txt", "--refresh")
    assert labels.read_text() == again.read_text()
    assert len(labels.read_text().splitlines()) == 150
    provenance = read_provenance(labels)
    assert provenance is not None
    (source,) = provenance.sources.values()
    assert source.kind == "learned" and source.training_labels == 1233
    assert source.training_sha256 == training_sha(EXAMPLE_DIR / "qrels.txt")
    assert "labels from a learned judge trained on 1,233 human labels" in provenance.describe()
    # and grades on the training scale, the same as the library's
    judge = LearnedJudge.from_directory(model)
    assert source.model == judge.model


def test_holes_filled_by_a_learned_judge(tmp_path: Path, fake_encoder: None) -> None:
    model, _ = _learn(tmp_path, "m", "--pooled", "--folds", "0")
    out = _judge(
        tmp_path, model, "merged.txt", "--holes", "--qrels", str(EXAMPLE_DIR / "qrels.txt")
    )
    provenance = read_provenance(out)
    assert provenance is not None
    kinds = {s.kind for s in provenance.sources.values()}
    assert kinds == {"human", "learned"}


def test_learned_refuses_other_prompts_and_offline(tmp_path: Path, fake_encoder: None) -> None:
    model, _ = _learn(tmp_path, "m", "--pooled", "--folds", "0")
    base = [
        "judge", "relevance", "--run", str(_run_file(tmp_path)),
        "--queries", str(EXAMPLE_DIR / "queries.jsonl"),
        "--corpus", str(EXAMPLE_DIR / "corpus.jsonl"), "--out", str(tmp_path / "x.txt"),
        "--learned", str(model), "--cache", str(tmp_path / "c.sqlite"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, [*base, "--prompt", "umbrela"])
    assert result.exit_code == 2 and "--learned grades relevance" in result.output
    result = CliRunner().invoke(app, [*base, "--offline"])
    assert result.exit_code == 2 and "not both" in result.output
    result = CliRunner().invoke(app, [*base[:-4], "--learned", str(tmp_path), *base[-2:]])
    assert result.exit_code == 2 and "not a learned judge" in result.output


def training_sha(qrels: Path) -> str:
    """The SHA-256 of the sorted 'qid docid grade' lines of the judged pairs (grade ≥ 0)."""
    lines = sorted(
        f"{q} {d} {g}\n"
        for q, _, d, g in (line.split() for line in qrels.read_text().splitlines())
        if int(g) >= 0
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def test_the_calibration_gate_names_a_learned_judge(tmp_path: Path) -> None:
    from ragmeter.analysis.calibration import Calibration

    source = LabelSource(kind="learned", model="learned-ridge abc", training_labels=12)
    calibration = Calibration(
        {"judge": source.to_json(), "kappa": {"unweighted": 0.5}, "labels": {"n_pairs": 12}}
    )
    assert calibration.summary().startswith(
        "labels from a learned judge trained on 12 human labels, model learned-ridge abc: κ"
    )


def test_held_out_grades_calibrate_the_learned_judge_for_check(
    tmp_path: Path, fake_encoder: None
) -> None:
    held_out = tmp_path / "held-out.txt"
    model, _ = _learn(tmp_path, "m", "--pooled", "--held-out", str(held_out))
    # every training pair graded once, by a model that did not see it
    assert len(held_out.read_text().splitlines()) == 1233
    provenance = read_provenance(held_out)
    assert provenance is not None
    (source,) = provenance.sources.values()
    assert source.kind == "learned" and "held-out" in (source.note or "")
    calibration = tmp_path / "cal.json"
    qrels = str(EXAMPLE_DIR / "qrels.txt")
    result = CliRunner().invoke(
        app, ["agreement", qrels, str(held_out), "--save-calibration", str(calibration)]
    )
    assert result.exit_code == 0, result.output
    labels = _judge(tmp_path, model, "learned.txt")
    run = str(tmp_path / "run.txt")
    gate = ["check", run, "--qrels", str(labels), "--calibration", str(calibration)]
    result = CliRunner().invoke(app, [*gate, "--min-kappa", "-1"])
    assert result.exit_code == 0, result.output
    assert "calibration holds: labels from a learned judge" in result.output
    result = CliRunner().invoke(app, [*gate, "--min-kappa", "0.99"])
    assert result.exit_code == 5, result.output
