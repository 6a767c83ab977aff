"""``ragmeter agreement --runs``: leaderboard agreement of two label sets; bad input.

The runs' scores are those ``ragmeter.evaluate`` gives on each label file (the one evaluation
path); τ-b and ρ are checked against scipy on them, τ_AP against the paper's formula written
in tests/test_rank_agreement.py, the overlap and rank change by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scipy.stats
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.io.readers import read_qrels, read_run
from test_rank_agreement import tau_ap_by_the_paper

runner = CliRunner()

QUERIES = [f"q{i}" for i in range(1, 7)]
DOCS = [f"d{j}" for j in range(1, 7)]


def human_grade(q: int, d: int) -> int:
    return (q * 7 + d * 3) % 4  # 0..3


def llm_grade(q: int, d: int) -> int:
    g = human_grade(q, d)
    return min(3, g + 1) if (q + d) % 3 == 0 else g  # a judge a little too generous


def write_qrels(path: Path, grade, queries=QUERIES) -> Path:  # type: ignore[no-untyped-def]
    lines = [
        f"{q} 0 {d} {grade(i, j)}"
        for i, q in enumerate(QUERIES, 1)
        if q in queries
        for j, d in enumerate(DOCS, 1)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_runs(tmp_path: Path) -> list[Path]:
    """Four runs: the same documents in four orders (a rotation per run)."""
    paths = []
    for r in range(4):
        lines = []
        for q in QUERIES:
            order = DOCS[r:] + DOCS[:r] if r % 2 == 0 else list(reversed(DOCS[r:] + DOCS[:r]))
            lines += [f"{q} Q0 {d} {k + 1} {10 - k} sys{r}" for k, d in enumerate(order)]
        path = tmp_path / f"sys{r}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def agreement_json(*args: str) -> dict:
    result = runner.invoke(app, ["agreement", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_leaderboard_against_scipy_and_the_paper(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "llm.txt", llm_grade)
    runs = write_runs(tmp_path)
    doc = agreement_json(
        str(a), str(b), "--runs", *map(str, runs), "-m", "ndcg@3", "-m", "map",
        "--resamples", "300",
    )  # fmt: skip
    assert [m["measure"] for m in doc["leaderboard"]] == ["ndcg@3", "map"]
    for entry in doc["leaderboard"]:
        loaded = [read_run(p) for p in runs]
        ev_a = evaluate(loaded, read_qrels(a), [entry["measure"]])
        ev_b = evaluate(loaded, read_qrels(b), [entry["measure"]])
        names = [r.name for r in ev_a]
        xa = [ev_a[n].means()[entry["measure"]] for n in names]
        xb = [ev_b[n].means()[entry["measure"]] for n in names]
        assert entry["scores_a"] == dict(zip(names, xa, strict=True))
        assert entry["kendall_tau"] == pytest.approx(scipy.stats.kendalltau(xa, xb)[0])
        assert entry["spearman"] == pytest.approx(scipy.stats.spearmanr(xa, xb)[0])
        tied = len(set(xa)) < len(xa) or len(set(xb)) < len(xb)
        assert entry["tau_ap_variant"] == ("tau_ap_b" if tied else "tau_ap")
        if not tied:
            assert entry["tau_ap"] == pytest.approx(tau_ap_by_the_paper(xa, xb))
        assert entry["ranking_a"] == sorted(names, key=lambda n: (-xa[names.index(n)], n))
        assert entry["ranking_b"] == sorted(names, key=lambda n: (-xb[names.index(n)], n))
        overlap1 = float(entry["ranking_a"][0] == entry["ranking_b"][0])
        assert entry["top_overlap"]["1"] == overlap1
        lo, hi = entry["ci"]["kendall_tau"]
        assert -1 <= lo <= hi <= 1 and entry["ci"]["resamples"] == 300
        change = entry["largest_rank_change"]
        shifts = [abs(entry["ranking_a"].index(n) - entry["ranking_b"].index(n)) for n in names]
        assert abs(change["shift"]) == max(shifts)
    # the pair-level output is still there, as it was
    assert doc["n_common"] == 36 and "kappa" in doc and "confusion" in doc


def test_same_labels_give_degenerate_intervals_the_draws_are_shared(tmp_path: Path) -> None:
    """Both label sets see the same resampled queries: with the same labels every replicate
    ranks alike, so every interval is [1, 1]."""
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "copy.txt", human_grade)
    runs = write_runs(tmp_path)
    doc = agreement_json(str(a), str(b), "--runs", *map(str, runs), "-m", "ndcg@3")
    ci = doc["leaderboard"][0]["ci"]
    for name in ("kendall_tau", "spearman", "tau_ap"):
        assert ci[name][0] == pytest.approx(1.0) and ci[name][1] == pytest.approx(1.0)


def test_the_bootstrap_is_seeded(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "llm.txt", llm_grade)
    runs = [str(p) for p in write_runs(tmp_path)]
    args = (str(a), str(b), "--runs", *runs, "-m", "ndcg@3", "--resamples", "200")
    one, two = agreement_json(*args), agreement_json(*args)
    assert one["leaderboard"][0]["ci"] == two["leaderboard"][0]["ci"]


def test_queries_judged_in_one_label_set_only_are_counted(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "llm.txt", llm_grade, queries=QUERIES[:4])
    runs = [str(p) for p in write_runs(tmp_path)]
    result = runner.invoke(
        app, ["agreement", str(a), str(b), "--runs", *runs, "-m", "ndcg@3", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["leaderboard_queries"]["only_a"] == 2
    assert doc["leaderboard_queries"]["both"] == 4
    assert "2 queries are judged only in human.txt" in result.stderr
    # a run that ranks nothing for a judged query: counted, never dropped silently
    short = tmp_path / "short.txt"
    short.write_text("".join(f"q1 Q0 {d} {k + 1} {9 - k} s\n" for k, d in enumerate(DOCS)))
    result = runner.invoke(
        app,
        ["agreement", str(a), str(b), "--runs", *runs, str(short), "-m", "ndcg@3", "-f", "json"],
    )
    assert result.exit_code == 0, result.output
    unranked = json.loads(result.stdout)["leaderboard_queries"]["unranked"]
    assert unranked["short.txt"] == {"a": 5, "b": 3}
    assert "run short.txt ranks nothing for 5 queries of human.txt and 3 of llm.txt" in (
        result.stderr
    )


def test_runs_given_as_separate_words_or_repeated(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "llm.txt", llm_grade)
    runs = [str(p) for p in write_runs(tmp_path)]
    spaced = agreement_json(str(a), str(b), "--runs", *runs, "-m", "ndcg@3")
    repeated = agreement_json(
        str(a), str(b), *[w for r in runs for w in ("--runs", r)], "-m", "ndcg@3"
    )
    assert spaced["leaderboard"] == repeated["leaderboard"]


def test_table_prints_coefficients_intervals_and_rankings(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "llm.txt", llm_grade)
    runs = [str(p) for p in write_runs(tmp_path)]
    result = runner.invoke(app, ["agreement", str(a), str(b), "--runs", *runs, "-m", "ndcg@3"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Kendall τ-b" in out and "Spearman ρ" in out and "τ_AP" in out
    assert "ranking under human.txt:" in out and "largest rank change" in out
    leaderboard = out[out.index("leaderboard:") :]
    assert max(len(line) for line in leaderboard.splitlines()) <= 80


def test_runs_without_measures_and_the_reverse_are_errors(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    runs = [str(p) for p in write_runs(tmp_path)]
    no_measure = runner.invoke(app, ["agreement", str(a), str(a), "--runs", *runs])
    assert no_measure.exit_code == 2 and "-m/--measure" in no_measure.stderr
    no_runs = runner.invoke(app, ["agreement", str(a), str(a), "-m", "ndcg@3"])
    assert no_runs.exit_code == 2 and "--runs" in no_runs.stderr
    one = runner.invoke(app, ["agreement", str(a), str(a), "--runs", runs[0], "-m", "map"])
    assert one.exit_code == 2 and "at least two runs" in one.stderr


def test_labels_on_different_scales_are_refused(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)  # 0..3
    b = write_qrels(tmp_path / "llm.txt", lambda q, d: human_grade(q, d) + 2)  # 2..5
    result = runner.invoke(app, ["agreement", str(a), str(b)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "different scales" in lines[0]
    assert "--grade-map" in lines[0] and "--clip" in lines[0]
    # --clip declares the scale: accepted
    clipped = runner.invoke(app, ["agreement", str(a), str(b), "--clip", "0:3"])
    assert clipped.exit_code == 0, clipped.output


def test_binary_threshold_is_the_upper_half_of_the_scale(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "llm.txt", llm_grade)
    doc = agreement_json(str(a), str(b))
    assert doc["scale"] == [0, 1, 2, 3]
    assert doc["binary"]["threshold"] == 2
    assert doc["binary"]["threshold_from"] == "the scale's upper half"
    # by hand: relevant ⇔ grade ≥ 2 on both sides
    pairs = [(human_grade(i, j), llm_grade(i, j)) for i in range(1, 7) for j in range(1, 7)]
    both = sum(1 for x, y in pairs if x >= 2 and y >= 2)
    assert doc["binary"]["confusion"][1][1] == both
    table = runner.invoke(app, ["agreement", str(a), str(b)])
    assert "relevant ⇔ grade ≥ 2, from the scale's upper half" in table.stdout
    given = agreement_json(str(a), str(b), "-t", "3")
    assert given["binary"]["threshold"] == 3 and given["binary"]["threshold_from"] == "--threshold"


def test_the_table_prints_every_warning_the_json_output_prints(tmp_path: Path) -> None:
    a = write_qrels(tmp_path / "human.txt", human_grade)
    b = write_qrels(tmp_path / "llm.txt", llm_grade, queries=QUERIES[:4])
    short = tmp_path / "short.txt"
    short.write_text("".join(f"q1 Q0 {d} {k + 1} {9 - k} s\n" for k, d in enumerate(DOCS)))
    runs = [*(str(p) for p in write_runs(tmp_path)), str(short)]
    base = ["agreement", str(a), str(b), "--runs", *runs, "-m", "ndcg@3"]
    base += ["--save-calibration", str(tmp_path / "cal.json"), "--judge-id", "m"]
    as_json = runner.invoke(app, [*base, "-f", "json"])
    as_table = runner.invoke(app, base)
    assert as_json.exit_code == as_table.exit_code == 0, as_table.output
    warnings = [line for line in as_json.stderr.splitlines() if line.startswith("warning:")]
    # only_a (2 queries judged only in human.txt) and short.txt's unranked queries at least
    assert len(warnings) >= 2
    assert as_table.stderr.splitlines() == as_json.stderr.splitlines()
    assert f"calibration written to {tmp_path / 'cal.json'}" in as_table.stderr
