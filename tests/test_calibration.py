"""A judge's calibration record (``agreement --save-calibration``) and the gate that requires
it (``check --calibration``, status 5); the provenance line of the views.

Base rates and κ are computed here by hand from the label files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.analysis.calibration import (
    canonical_sha256,
    describe_labels,
    read_calibration,
)
from ragmeter.cli import app
from ragmeter.core.provenance import LabelProvenance, LabelSource
from ragmeter.io.provenance import write_provenance

runner = CliRunner()

UMBRELA = LabelSource(
    kind="judge",
    model="qwen2.5-7b",
    host="gpu1:8000",
    prompt_id="umbrela",
    prompt_version="1",
    prompt_sha256="ab" * 32,
)
# (human, llm) grades of eight pairs of two queries, 0..3
PAIRS = [(0, 0), (1, 1), (2, 2), (3, 3), (3, 2), (0, 1), (1, 1), (2, 3)]


def label_files(tmp_path: Path, source: LabelSource | None = UMBRELA) -> tuple[Path, Path]:
    human, llm = tmp_path / "human.txt", tmp_path / "llm.txt"
    human.write_text("".join(f"q{i % 2} 0 d{i} {h}\n" for i, (h, _) in enumerate(PAIRS)))
    llm.write_text("".join(f"q{i % 2} 0 d{i} {b}\n" for i, (_, b) in enumerate(PAIRS)))
    if source is not None:
        write_provenance(llm, LabelProvenance.single(source))
    return human, llm


def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i % 2} Q0 d{i} {i + 1} {10 - i} r\n" for i in range(len(PAIRS))))
    return path


def save(tmp_path: Path, *extra: str) -> Path:
    human, llm = label_files(tmp_path)
    cal = tmp_path / "cal.json"
    result = runner.invoke(
        app, ["agreement", str(human), str(llm), "--save-calibration", str(cal), *extra]
    )
    assert result.exit_code == 0, result.output
    return cal


def check(tmp_path: Path, qrels: Path, *extra: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["check", str(run_file(tmp_path)), "--qrels", str(qrels), *extra])


def test_the_record_holds_the_judge_the_figures_and_its_hash(tmp_path: Path) -> None:
    doc = json.loads(save(tmp_path).read_text())
    assert doc["ragmeter_calibration"] == 1 and doc["ragmeter_version"]
    assert doc["created"].endswith("Z")
    assert doc["judge"] == UMBRELA.to_json()
    labels = doc["labels"]
    assert labels["n_pairs"] == 8 and labels["scale"] == [0, 1, 2, 3]
    # human grades 0,1,2,3,3,0,1,2 → 2/8 each; llm 0,1,2,3,2,1,1,3 → 1/8, 3/8, 2/8, 2/8
    assert labels["base_rates"]["reference"] == {"0": 0.25, "1": 0.25, "2": 0.25, "3": 0.25}
    assert labels["base_rates"]["compared"] == {"0": 0.125, "1": 0.375, "2": 0.25, "3": 0.25}
    # κ by hand: p_o = 5/8; p_e = Σ a_g b_g = (2·1 + 2·3 + 2·2 + 2·2)/64 = 16/64
    assert doc["kappa"]["unweighted"] == pytest.approx((5 / 8 - 16 / 64) / (1 - 16 / 64))
    assert doc["alpha"]["ordinal"] is not None
    assert doc["leaderboard"] is None  # made without --runs
    assert doc["sha256"] == canonical_sha256(doc)


def test_the_gate_passes_for_the_same_judge_even_on_another_host(tmp_path: Path) -> None:
    cal = save(tmp_path)
    moved = LabelSource(**{**UMBRELA.__dict__, "host": "gpu2:9000"})
    other = tmp_path / "other"
    other.mkdir()
    _, llm = label_files(other, moved)
    result = check(tmp_path, llm, "--calibration", str(cal), "--min-kappa", "0.4")
    assert result.exit_code == 0, result.output
    assert "calibration holds" in result.stderr and "κ 0.50" in result.stderr


def test_labels_made_with_another_prompt_are_refused(tmp_path: Path) -> None:
    cal = save(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    relevance = LabelSource(**{**UMBRELA.__dict__, "prompt_id": "relevance"})
    _, llm = label_files(other, relevance)
    result = check(tmp_path, llm, "--calibration", str(cal))
    assert result.exit_code == 5
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "another judge or prompt" in line and "relevance" in line and "umbrela" in line


def test_a_calibration_below_the_threshold_fails_with_its_own_status(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    below = check(tmp_path, llm, "--calibration", str(cal), "--min-kappa", "0.6")
    assert below.exit_code == 5
    assert "κ 0.50 < --min-kappa 0.6" in below.stderr
    no_tau = check(tmp_path, llm, "--calibration", str(cal), "--min-tau", "0.5")
    assert no_tau.exit_code == 5 and "without --runs" in no_tau.stderr


def test_an_undefined_tau_cannot_pass_min_tau(tmp_path: Path) -> None:
    """No label is grade 4, so P@3(rel_level=4) is 0 for every run under both labelings and
    its τ-b is undefined (0/0): --min-tau cannot be met on it, whatever the other measure's
    τ; the line of a holding calibration says where τ is undefined."""
    human, llm = label_files(tmp_path)
    runs = []
    for n, order in enumerate(
        ([0, 2, 4, 6, 1, 3, 5, 7], [6, 4, 2, 0, 7, 5, 3, 1], [2, 0, 6, 4, 3, 1, 7, 5])
    ):
        path = tmp_path / f"run{n}.txt"
        path.write_text(
            "".join(f"q{d % 2} Q0 d{d} {r} {10 - r} r{n}\n" for r, d in enumerate(order, 1))
        )
        runs.append(str(path))
    cal = tmp_path / "cal.json"
    made = runner.invoke(
        app,
        [
            "agreement",
            str(human),
            str(llm),
            "--runs",
            *runs,
            "-m",
            "ndcg@3",
            "-m",
            "P@3(rel_level=4)",
            "--save-calibration",
            str(cal),
        ],
    )
    assert made.exit_code == 0, made.output
    taus = {m["measure"]: m["kendall_tau"] for m in json.loads(cal.read_text())["leaderboard"]}
    assert taus["precision@3(rel_level=4)"] is None and taus["ndcg@3"] is not None
    refused = check(tmp_path, llm, "--calibration", str(cal), "--min-tau", "-1")
    assert refused.exit_code == 5, refused.output
    assert "τ undefined (NA) on precision@3(rel_level=4)" in refused.stderr
    held = check(tmp_path, llm, "--calibration", str(cal))
    assert held.exit_code == 0, held.output
    assert "undefined on precision@3(rel_level=4)" in held.stderr


def test_a_hand_edited_or_newer_calibration_is_refused(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    doc = json.loads(cal.read_text())
    doc["kappa"]["unweighted"] = 0.9
    cal.write_text(json.dumps(doc))
    edited = check(tmp_path, llm, "--calibration", str(cal))
    assert edited.exit_code == 5 and "edited by hand" in edited.stderr
    doc = json.loads(save(tmp_path).read_text())
    doc["ragmeter_calibration"] = 2
    doc["sha256"] = canonical_sha256(doc)
    cal.write_text(json.dumps(doc))
    newer = check(tmp_path, llm, "--calibration", str(cal))
    assert newer.exit_code == 5 and "newer ragmeter" in newer.stderr


def test_without_a_sidecar_the_judge_must_be_named(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path, source=None)
    cal = tmp_path / "cal.json"
    refused = runner.invoke(
        app, ["agreement", str(human), str(llm), "--save-calibration", str(cal)]
    )
    assert refused.exit_code == 2 and "--judge-id" in refused.stderr
    assert not cal.exists()
    named = runner.invoke(
        app,
        ["agreement", str(human), str(llm), "--save-calibration", str(cal), "--judge-id", "gpt-x"],
    )
    assert named.exit_code == 0, named.output
    assert read_calibration(cal).judge.model == "gpt-x"
    # the gate cannot tell who made labels without a sidecar
    result = check(tmp_path, llm, "--calibration", str(cal))
    assert result.exit_code == 5 and "no provenance sidecar" in result.stderr


def test_the_gate_then_the_rules(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    run = run_file(tmp_path)
    result = runner.invoke(
        app,
        ["check", str(run), "--qrels", str(llm), "--baseline", str(run),
         "--fail-if", "ndcg@5 drop > 0.01", "--calibration", str(cal)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "calibration holds" in result.stderr and "ndcg@5" in result.stdout
    missing = runner.invoke(app, ["check", str(run), "--qrels", str(llm)])
    assert missing.exit_code == 2 and "--calibration" in missing.stderr


def test_describe_labels_prints_provenance_and_the_calibration_beside(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    assert describe_labels(human) == []  # no sidecar, no calibration: nothing to say
    lines = describe_labels(llm)
    assert lines == ["LLM labels (umbrela, model qwen2.5-7b): 8 of 8 pairs"]
    cal = save(tmp_path)
    cal.rename(llm.with_name("llm.txt.calibration.json"))
    lines = describe_labels(llm)
    assert lines[1].startswith("calibration: LLM labels (umbrela, model qwen2.5-7b): κ 0.50")
    assert lines[1].endswith("against 8 human labels")


def test_human_labels_need_no_calibration(tmp_path: Path) -> None:
    cal = save(tmp_path)
    human, _ = label_files(tmp_path)
    write_provenance(human, LabelProvenance.single(LabelSource(kind="human", annotator="ann")))
    result = check(tmp_path, human, "--calibration", str(cal), "--min-kappa", "0.9")
    assert result.exit_code == 0, result.output
    assert "human.txt holds no LLM labels: nothing to vouch for" in result.stderr
    lines = describe_labels(human, calibration=cal)
    n = len(human.read_text().splitlines())  # every pair of the file, made by ann
    assert lines == [
        f"human (ann) labels: {n:,} of {n:,} pairs",  # said for people's labels too
        "calibration cal.json not used: human.txt holds no LLM labels: nothing to vouch for",
    ]


def test_no_common_pair_is_said_as_such_not_as_labels_made_by_no_judge(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    human.write_text("".join(f"q9 0 x{i} {h}\n" for i, (h, _) in enumerate(PAIRS)))
    result = runner.invoke(
        app, ["agreement", str(human), str(llm), "--save-calibration", str(tmp_path / "c.json")]
    )
    assert result.exit_code == 2
    assert "grade no (query, passage) pair in common" in result.stderr
    assert "made by no judge" not in result.stderr
    assert not (tmp_path / "c.json").exists()


def test_common_pairs_of_human_labels_only_are_said_as_such(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path, LabelSource(kind="human", annotator="alice"))
    result = runner.invoke(
        app, ["agreement", str(human), str(llm), "--save-calibration", str(tmp_path / "c.json")]
    )
    assert result.exit_code == 2
    assert "none of the 8 pairs both files grade was labelled by an LLM judge" in result.stderr
