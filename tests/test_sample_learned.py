"""``ragmeter sample --strategy active --learned``: per topic, the unlabelled pairs the learned
judge is least sure of (uncertainty sampling), on the example collection.

The expected choice is recomputed here from the model directory's own arrays — the features
from the stand-in encoder, ``score = x·w + b`` and the distance to the nearest cut point by a
plain loop — never from what the sampler printed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.analysis.label_sampling import cut_margins, least_certain_pairs
from ragmeter.cli import app
from ragmeter.data import EXAMPLE_DIR
from ragmeter.errors import InputError
from ragmeter.io.label_queue import LEARNED_STRATEGY, read_label_queue
from ragmeter.io.labelled import read_labelled_queries
from ragmeter.judges.learned import fit_model, term_overlap
from test_learned_judge import HashEncoder

pytest.importorskip("sklearn")

QRELS = EXAMPLE_DIR / "qrels.txt"


@pytest.fixture
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragmeter.pipeline.embeddings as embeddings

    monkeypatch.setattr(embeddings, "MiniLMEncoder", HashEncoder)


def texts(name: str) -> dict[str, str]:
    rows = [json.loads(line) for line in (EXAMPLE_DIR / name).open(encoding="utf-8")]
    return {str(r["id"]): str(r["text"]) for r in rows}


def write_run(path: Path, seed: int, *, judged_only: bool = False) -> Path:
    """A run ranking 15 random passages per example query (some labelled, most not; only
    labelled ones with ``judged_only``)."""
    docs = sorted(texts("corpus.jsonl"))
    labelled = {}
    for line in QRELS.read_text().splitlines():
        q, _, d, _ = line.split()
        labelled.setdefault(q, []).append(d)
    rng = random.Random(seed)
    with path.open("w") as f:
        for q in texts("queries.jsonl"):
            ranked = rng.sample(labelled.get(q, []), 4)
            ranked += [] if judged_only else rng.sample(docs, 11)
            for r, d in enumerate(dict.fromkeys(ranked), start=1):
                f.write(f"{q} Q0 {d} {r} {100 - r} sys\n")
    return path


def learn(tmp: Path, qrels: Path, name: str, *extra: str) -> Path:
    out = tmp / name
    argv = [
        "judge",
        "learn",
        "--qrels",
        str(qrels),
        "--queries",
        str(EXAMPLE_DIR / "queries.jsonl"),
    ]
    argv += ["--corpus", str(EXAMPLE_DIR / "corpus.jsonl"), "--out", str(out), "--folds", "0"]
    result = CliRunner().invoke(app, [*argv, *extra])
    assert result.exit_code == 0, result.output
    return out


def sample(tmp: Path, runs: list[Path], *extra: str, out: str = "queue.jsonl") -> tuple[int, str]:
    argv = ["sample", *map(str, runs), "--qrels", str(QRELS), "--out", str(tmp / out)]
    result = CliRunner().invoke(app, [*argv, *extra])
    return result.exit_code, result.output


def expected_margins(model: Path, runs: list[Path], depth: int) -> dict[str, dict[str, float]]:
    """Per topic, every unlabelled candidate's distance to the nearest cut, recomputed from
    the model's files and the stand-in encoder (a pooled model: one row of weights)."""
    manifest = json.loads((model / "manifest.json").read_text())
    w, b = np.load(model / "coef.npy")[0], float(np.load(model / "intercept.npy")[0])
    queries, corpus = texts("queries.jsonl"), texts("corpus.jsonl")
    labelled = {tuple(line.split()[0:3:2]) for line in QRELS.read_text().splitlines()}
    encoder = HashEncoder()
    out: dict[str, dict[str, float]] = {}
    for run in runs:
        ranked: dict[str, list[str]] = {}
        for line in run.read_text().splitlines():
            q, _, d, *_ = line.split()
            ranked.setdefault(q, []).append(d)
        for q, docs in ranked.items():
            for d in docs[:depth]:
                if (q, d) in labelled:
                    continue
                qv, pv = encoder.encode([queries[q], corpus[d]]).astype(np.float64)
                x = np.concatenate([[qv @ pv], qv * pv, [term_overlap(queries[q], corpus[d])]])
                score = float(x @ w + b)
                out.setdefault(q, {})[d] = min(abs(score - c) for c in manifest["cuts"])
    return out


def test_the_chosen_pairs_are_the_least_certain(tmp_path: Path, fake_encoder: None) -> None:
    model = learn(tmp_path, QRELS, "model", "--pooled")
    runs = [write_run(tmp_path / "a.txt", 1), write_run(tmp_path / "b.txt", 2)]
    code, output = sample(tmp_path, runs, "--strategy", "active", "--learned", str(model),
                          "--queries", str(EXAMPLE_DIR / "queries.jsonl"),
                          "--corpus", str(EXAMPLE_DIR / "corpus.jsonl"),
                          "--per-topic", "3", "--depth", "8")  # fmt: skip
    assert code == 0, output
    margins = expected_margins(model, runs, 8)
    queue = read_label_queue(tmp_path / "queue.jsonl")
    assert [e.query_id for e in queue.entries] == list(margins)  # every topic, run order
    for e in queue.entries:
        everyone = margins[e.query_id]
        assert len(e.docs) == min(3, len(everyone))  # the per-topic budget
        assert e.strategy == LEARNED_STRATEGY and e.inclusion_probability is None
        chosen = [everyone[d] for d in e.docs]
        rest = [m for d, m in everyone.items() if d not in e.docs]
        assert chosen == sorted(chosen)  # least certain first
        assert not rest or max(chosen) <= min(rest)
        assert e.extra["margins"] == pytest.approx(chosen, abs=1e-9)
    total = sum(len(e.docs) for e in queue.entries)
    candidates = sum(len(m) for m in margins.values())
    assert f"{total} of {candidates} unlabelled pairs chosen" in output


def test_deterministic_and_ties_follow_the_seed(tmp_path: Path, fake_encoder: None) -> None:
    model = learn(tmp_path, QRELS, "model", "--min-labels", "40")  # with topic adapters
    run = write_run(tmp_path / "a.txt", 1)
    extra = ["--strategy", "active", "--learned", str(model), "--per-topic", "2",
             "--queries", str(EXAMPLE_DIR / "queries.jsonl"),
             "--corpus", str(EXAMPLE_DIR / "corpus.jsonl")]  # fmt: skip
    assert sample(tmp_path, [run], *extra, out="one.jsonl")[0] == 0
    assert sample(tmp_path, [run], *extra, out="two.jsonl")[0] == 0
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    # a model with no weights scores every pair alike: all margins tie, the seed orders them
    flat = fit_model(np.zeros((4, 386)), [1, 2, 2, 3], ["q"] * 4, ["x"] * 4, per_topic=False)
    from ragmeter.io.readers import read_run

    def choose(seed: int) -> list[tuple[str, ...]]:
        draw = least_certain_pairs(
            flat, [read_run(run)], {}, texts("queries.jsonl"), texts("corpus.jsonl"),
            per_topic=4, seed=seed, encoder=HashEncoder(),  # type: ignore[arg-type]
        )  # fmt: skip
        assert len({m for p in draw.candidates for m in [p.margin]}) == 1
        return [e.docs for e in draw.entries]

    assert choose(1) == choose(1)
    assert choose(1) != choose(2)


def test_cut_margins_by_hand() -> None:
    margins, boundaries = cut_margins([0.2, 1.25, 2.0, 1.5], (1.0, 1.5), 1)
    assert margins == pytest.approx([0.8, 0.25, 0.5, 0.0])
    assert boundaries == [1, 1, 2, 2]


def test_clear_errors(tmp_path: Path, fake_encoder: None) -> None:
    run = write_run(tmp_path / "a.txt", 1)
    texts_args = ["--queries", str(EXAMPLE_DIR / "queries.jsonl")]
    texts_args += ["--corpus", str(EXAMPLE_DIR / "corpus.jsonl")]
    code, output = sample(tmp_path, [run], "--strategy", "active", "--per-topic", "3", *texts_args)
    assert code == 2 and "--learned MODEL_DIR" in output and "Traceback" not in output
    # a model fitted on the same labels moved to 0..3
    shifted = tmp_path / "shifted.txt"
    shifted.write_text(
        "".join(
            f"{q} 0 {d} {min(int(g) - 1, 3)}\n"
            for q, _, d, g in (line.split() for line in QRELS.read_text().splitlines())
        )
    )
    other = learn(tmp_path, shifted, "other", "--pooled")
    code, output = sample(
        tmp_path, [run], "--strategy", "active", "--learned", str(other), *texts_args
    )
    assert code == 2 and "fitted on grades 0..3" in output and "qrels.txt" in output
    assert "field grade" in output or "grade" in output
    code, output = sample(tmp_path, [run], "--strategy", "random", "--learned", str(other))
    assert code == 2 and "--strategy active" in output
    code, output = sample(
        tmp_path, [run], "--strategy", "active", "--learned", str(other), "--mix", "0.2"
    )
    assert code == 2 and "--mix: an option of the query designs" in output
    # every candidate labelled already: said, and no empty queue written
    code, output = sample(
        tmp_path, [write_run(tmp_path / "judged.txt", 1, judged_only=True)], "--strategy",
        "active", "--learned", str(learn(tmp_path, QRELS, "model", "--pooled")), *texts_args,
        out="empty.jsonl",
    )  # fmt: skip
    assert code == 2 and "nothing to ask" in output and not (tmp_path / "empty.jsonl").exists()
    code, output = sample(tmp_path, [run, run], "--n", "3")
    assert code == 2 and "one run" in output


def test_a_learned_queue_is_no_sample_for_an_estimate(tmp_path: Path, fake_encoder: None) -> None:
    model = learn(tmp_path, QRELS, "model", "--pooled")
    run = write_run(tmp_path / "a.txt", 1)
    code, output = sample(tmp_path, [run], "--strategy", "active", "--learned", str(model),
                          "--queries", str(EXAMPLE_DIR / "queries.jsonl"),
                          "--corpus", str(EXAMPLE_DIR / "corpus.jsonl"))  # fmt: skip
    assert code == 0, output
    with pytest.raises(InputError, match="chosen, not drawn"):
        read_labelled_queries(tmp_path / "queue.jsonl")
