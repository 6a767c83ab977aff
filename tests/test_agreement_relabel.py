"""Grade map and clipping before label agreement (``ragmeter agreement --grade-map --clip``).

Expected values are hand computed (shown beside each) or from the ``krippendorff`` package and
scikit-learn; none is taken from ragmeter's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.stats.agreement import (
    Relabel,
    label_agreement,
    parse_clip,
    parse_label_map,
    read_label_map,
    relabel,
)

runner = CliRunner()

# reference A (people) and B (an LLM judge with grades off the 0..3 scale)
A = {("q1", "d1"): 0, ("q1", "d2"): 1, ("q1", "d3"): 2, ("q1", "d4"): 3, ("q1", "d5"): 3}
B = {("q1", "d1"): 0, ("q1", "d2"): 5, ("q1", "d3"): 10, ("q1", "d4"): 3, ("q1", "d5"): 4}


def test_parse_clip_and_map() -> None:
    assert parse_clip("0:3") == (0, 3)
    assert parse_clip("-1:2") == (-1, 2)
    for bad in ("3:0", "0-3", "a:b", "3"):
        with pytest.raises(ValueError, match="clip"):
            parse_clip(bad)
    assert parse_label_map("4:3,5:3") == {4: 3, 5: 3}
    assert parse_label_map("4:3; 5:3\n10:0 # a judge's 10\n") == {4: 3, 5: 3, 10: 0}
    with pytest.raises(ValueError, match="twice"):
        parse_label_map("4:3,4:2")
    with pytest.raises(ValueError, match="line 2: item '5-3'"):
        parse_label_map("4:3\n5-3\n")
    with pytest.raises(ValueError, match="no FROM:TO"):
        parse_label_map(" , ")


def test_read_label_map_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "map.txt"
    path.write_text("# LLM grades onto 0..3\n4:3\n5:3, 10:0\n")
    assert read_label_map(f"@{path}") == {4: 3, 5: 3, 10: 0}
    path.write_text("4:3\nfive:3\n")
    with pytest.raises(ValueError, match=rf"{path.name}, line 2"):
        read_label_map(f"@{path}")
    with pytest.raises(ValueError, match="grade map file"):
        read_label_map(f"@{tmp_path / 'missing.txt'}")


def test_relabel_counts_every_change() -> None:
    out, changes = relabel(B, side="b", clip=(0, 3))
    assert [out[k] for k in sorted(out)] == [0, 3, 3, 3, 3]
    assert changes == [
        Relabel("b", 4, 3, 1, "clip"),
        Relabel("b", 5, 3, 1, "clip"),
        Relabel("b", 10, 3, 1, "clip"),
    ]
    # the map first (10 → 0), then clipping; a mapped grade that is clipped counts as clip
    out, changes = relabel(B, side="b", grade_map={10: 0, 5: 7}, clip=(0, 3))
    assert [out[k] for k in sorted(out)] == [0, 3, 0, 3, 3]
    assert changes == [
        Relabel("b", 4, 3, 1, "clip"),
        Relabel("b", 5, 3, 1, "clip"),
        Relabel("b", 10, 0, 1, "map"),
    ]
    same, none = relabel(A, clip=(0, 3))
    assert same == A and none == []


def test_clipped_agreement_by_hand_and_against_krippendorff() -> None:
    r = label_agreement(A, B, clip=(0, 3))
    assert r.scale == (0, 1, 2, 3)
    assert r.changed("a") == 0 and r.changed("b") == 3
    # pairs (0,0) (1,3) (2,3) (3,3) (3,3): accuracy 3/5; marginals A 1,1,1,2 and B 1,0,0,4:
    # p_e = (1·1 + 2·4)/25 = 0.36, κ = (0.6 − 0.36)/(1 − 0.36) = 0.375
    assert r.accuracy == pytest.approx(0.6)
    assert r.kappa["unweighted"] == pytest.approx(0.375)
    # nominal α: coincidences o00 = 2, o13 = o31 = o23 = o32 = 1, o33 = 4; n_c = 2, 1, 1, 6,
    # n = 10; D_o = 4, D_e = n² − Σ n_c² = 100 − 42 = 58; α = 1 − 9·4/58 = 22/58
    assert r.alpha["nominal"] == pytest.approx(22 / 58)
    kd = pytest.importorskip("krippendorff")
    data = np.array([[0, 1, 2, 3, 3], [0, 3, 3, 3, 3]], dtype=float)
    for level in ("nominal", "ordinal", "interval"):
        expected = kd.alpha(reliability_data=data, level_of_measurement=level)
        assert r.alpha[level] == pytest.approx(expected, rel=1e-12), level
    sklearn = pytest.importorskip("sklearn.metrics", reason="scikit-learn not installed")
    for weights in ("linear", "quadratic"):
        expected = sklearn.cohen_kappa_score(
            data[0].astype(int), data[1].astype(int), weights=weights, labels=[0, 1, 2, 3]
        )
        assert r.kappa[weights] == pytest.approx(expected)


def _qrels(path: Path, grades: dict[tuple[str, str], int]) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in grades.items()))
    return str(path)


def test_cli_agreement_clip_and_map(tmp_path: Path) -> None:
    a, b = _qrels(tmp_path / "human.txt", A), _qrels(tmp_path / "llm.txt", B)
    result = runner.invoke(app, ["agreement", a, b, "--clip", "0:3", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["clip"] == [0, 3] and doc["scale"] == [0, 1, 2, 3]
    assert doc["relabelled"]["a"] == 0 and doc["relabelled"]["b"] == 3
    assert {(c["from"], c["to"], c["count"]) for c in doc["relabelled"]["changes"]} == {
        (4, 3, 1),
        (5, 3, 1),
        (10, 3, 1),
    }
    assert doc["kappa"]["unweighted"] == pytest.approx(0.375)
    assert doc["krippendorff_alpha"]["nominal"] == pytest.approx(22 / 58)

    table = runner.invoke(app, ["agreement", a, b, "--grade-map", "10:0", "--clip", "0:3"])
    assert table.exit_code == 0, table.stderr
    assert "grade map 10:0 then clipped to 0..3" in table.stdout
    assert "llm.txt: 3 label(s) changed" in table.stdout
    assert "10→0 ×1 (map)" in table.stdout and "5→3 ×1 (clip)" in table.stdout
    assert "human.txt: 0 label(s) changed" in table.stdout

    mapfile = tmp_path / "map.txt"
    mapfile.write_text("4:3\n5:3\n10:3\n")
    mapped = runner.invoke(app, ["agreement", a, b, "--grade-map", f"@{mapfile}", "-f", "json"])
    assert json.loads(mapped.stdout)["kappa"]["unweighted"] == pytest.approx(0.375)

    for bad in (["--clip", "3:0"], ["--grade-map", "4=3"], ["--grade-map", "@nope.txt"]):
        failed = runner.invoke(app, ["agreement", a, b, *bad])
        assert failed.exit_code == 2, bad
        assert "clip" in failed.stderr or "grade map" in failed.stderr


def test_cli_agreement_without_options_reports_no_relabelling(tmp_path: Path) -> None:
    a, b = _qrels(tmp_path / "h.txt", A), _qrels(tmp_path / "l.txt", A)
    doc = json.loads(runner.invoke(app, ["agreement", a, b, "-f", "json"]).stdout)
    assert doc["clip"] is None and doc["grade_map"] == {}
    assert doc["relabelled"] == {"a": 0, "b": 0, "changes": []}


# human grades on 1..5 against UMBRELA's 0..3
HUMAN = {("q1", "d1"): 1, ("q1", "d2"): 2, ("q1", "d3"): 3, ("q1", "d4"): 4, ("q1", "d5"): 5}
UMBRELA = {("q1", "d1"): 0, ("q1", "d2"): 1, ("q1", "d3"): 2, ("q1", "d4"): 3, ("q1", "d5"): 2}


def test_a_map_per_side_compares_labels_on_two_scales(tmp_path: Path) -> None:
    a, b = _qrels(tmp_path / "human.txt", HUMAN), _qrels(tmp_path / "umbrela.txt", UMBRELA)
    onto_0_3 = "1:0,2:1,3:2,4:3,5:3"
    result = runner.invoke(app, ["agreement", a, b, "--grade-map-a", onto_0_3, "-f", "json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    # human → 0,1,2,3,3 against 0,1,2,3,2: p_o = 4/5; margins human {0:1,1:1,2:1,3:2},
    # umbrela {0:1,1:1,2:2,3:1} → p_e = (1 + 1 + 2 + 2)/25 = 6/25; κ = (4/5 − 6/25)/(19/25)
    assert doc["scale"] == [0, 1, 2, 3]
    assert doc["accuracy"] == pytest.approx(0.8)
    assert doc["kappa"]["unweighted"] == pytest.approx(14 / 19)
    assert doc["grade_map_a"] == {"1": 0, "2": 1, "3": 2, "4": 3, "5": 3}
    assert doc["grade_map_b"] == {} and doc["grade_map"] == {}
    assert doc["relabelled"]["a"] == 5 and doc["relabelled"]["b"] == 0
    # the other way round: umbrela onto 1..5, the human grades as they are
    other = runner.invoke(app, ["agreement", a, b, "--grade-map-b", "0:1,1:2,2:3,3:4"])
    assert other.exit_code == 0, other.stderr
    assert "grade map of umbrela.txt 0:1,1:2,2:3,3:4:" in other.stdout
    assert "umbrela.txt: 5 label(s) changed" in other.stdout
    assert "human.txt: 0 label(s) changed" in other.stdout


def test_a_map_of_both_files_that_would_rewrite_the_other_scale_is_refused(
    tmp_path: Path,
) -> None:
    a, b = _qrels(tmp_path / "human.txt", HUMAN), _qrels(tmp_path / "umbrela.txt", UMBRELA)
    both = runner.invoke(app, ["agreement", a, b, "--grade-map", "1:0,2:1,3:2,4:3,5:3"])
    assert both.exit_code == 2
    assert "human.txt (1–5) and umbrela.txt (0–3) are on different scales" in both.stderr
    assert "grade(s) 1, 2, 3 of the map are in both" in both.stderr
    assert "--grade-map-a for human.txt, --grade-map-b for umbrela.txt" in both.stderr
    mixed = runner.invoke(app, ["agreement", a, b, "--grade-map", "4:3", "--grade-map-b", "0:1"])
    assert mixed.exit_code == 2 and "give it alone" in mixed.stderr
    # a map of grades only one file holds stays a map of both (an LLM's grades off the scale)
    c = _qrels(tmp_path / "llm.txt", B)
    ok = runner.invoke(app, ["agreement", _qrels(tmp_path / "h.txt", A), c, "--grade-map", "5:3"])
    assert ok.exit_code == 2 and "different scales" in ok.stderr  # 10 is still off the scale
    assert "grade(s)" not in ok.stderr  # refused for the scale, not for the map
