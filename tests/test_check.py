"""``ragmeter check``, the regression gate: rule parsing, the decision, Holm over the
significant rules, the exit statuses, and a baseline read back from the store.

Expected values are computed here independently: per-query nDCG@10 and recall@10 by
pytrec_eval, the paired randomization test's exact p-value by enumerating every sign vector,
and Holm's adjustment by hand.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragmeter.analysis.gate import RuleError, check_runs, parse_rule, parse_rules
from ragmeter.cli import app
from ragmeter.core.data import Run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BM25, DENSE = str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "run_dense.txt")
QRELS = str(EXAMPLES / "qrels.txt")
runner = CliRunner()


def _trec(path: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        q, _, doc, _, score, _ = line.split()
        out.setdefault(q, {})[doc] = float(score)
    return out


def _qrels() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in Path(QRELS).read_text().splitlines():
        q, _, doc, rel = line.split()
        out.setdefault(q, {})[doc] = int(rel)
    return out


def _per_query(path: str, measure: str) -> dict[str, float]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluator = pytrec_eval.RelevanceEvaluator(_qrels(), {measure.split("_cut")[0] + "_cut"})
    return {q: v[measure] for q, v in evaluator.evaluate(_trec(path)).items()}


def _exact_randomization_p(d: list[float]) -> float:
    """Two-sided p of Fisher's paired randomization test over all 2^n sign vectors."""
    observed = abs(sum(d))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - 1e-12
        for signs in itertools.product((1, -1), repeat=len(d))
    )
    return hits / 2 ** len(d)


# -- the grammar ------------------------------------------------------------------------------


def test_rules_parse_absolute_relative_and_significant() -> None:
    r = parse_rule("ndcg@10 drop > 0.01 significant")
    assert (r.measure, r.direction, r.inclusive, r.amount, r.relative, r.significant) == (
        "ndcg@10",
        "drop",
        False,
        0.01,
        False,
        True,
    )
    r = parse_rule("  recall@100 DROP >= 5 %  ")
    assert (r.direction, r.inclusive, r.amount, r.relative, r.significant) == (
        "drop",
        True,
        5.0,
        True,
        False,
    )
    assert parse_rule("harm@10 rise > 0.02").direction == "rise"
    # any spelling of a measure is checked under ragmeter's name
    assert parse_rule("P_10 drop > 0").measure == parse_rule("P@10 drop > 0").measure


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("ndcg@10", "expected a measure, drop or rise"),
        ("ndcg@10 fall > 0.1", "'fall' is not a direction"),
        ("ndcg@10 drop < 0.1", "'<' is not a comparison"),
        ("ndcg@10 drop > abc", "'abc' is not a number"),
        ("ndcg@10 drop > -1", "must be a finite number ≥ 0"),
        ("ndcg@10 drop > nan", "must be a finite number ≥ 0"),
        ("ndcg@10 drop > 0.1 sig", "'sig' is not a flag"),
        ("nosuch@10 drop > 0.1", "nosuch"),
    ],
)
def test_bad_rules_say_what_is_wrong_and_show_the_grammar(text: str, says: str) -> None:
    with pytest.raises(RuleError) as info:
        parse_rule(text)
    message = str(info.value)
    assert says in message
    assert text.strip() in message and "MEASURE drop|rise >|>= AMOUNT[%] [significant]" in message


def test_no_rule_is_an_error() -> None:
    with pytest.raises(RuleError, match="no rule given"):
        parse_rules([])


# -- the decision ---------------------------------------------------------------------------


def test_example_regression_breaks_rules_with_holm_over_significant_rules() -> None:
    base = _per_query(BM25, "ndcg_cut_10")
    new = _per_query(DENSE, "ndcg_cut_10")
    base_r = _per_query(BM25, "recall_10")
    new_r = _per_query(DENSE, "recall_10")
    queries = sorted(base)
    d_ndcg = [new[q] - base[q] for q in queries]
    d_rec = [new_r[q] - base_r[q] for q in queries]
    p_ndcg, p_rec = _exact_randomization_p(d_ndcg), _exact_randomization_p(d_rec)
    # Holm over the two significant rules, by hand
    low, high = sorted([p_ndcg, p_rec])
    holm = {low: min(1.0, 2 * low), high: min(1.0, max(2 * low, high))}

    result = check_runs(
        DENSE,
        BM25,
        QRELS,
        [
            "ndcg@10 drop > 0.01 significant",
            "recall@10 drop > 0.01 significant",
            "recall@10 drop > 5%",
        ],
    )
    ndcg, rec_sig, rec_rel = result.outcomes
    assert ndcg.baseline_mean == pytest.approx(np.mean([base[q] for q in queries]), abs=1e-12)
    assert ndcg.run_mean == pytest.approx(np.mean([new[q] for q in queries]), abs=1e-12)
    assert ndcg.change == pytest.approx(-np.mean(d_ndcg), abs=1e-12)
    assert ndcg.p_value == pytest.approx(p_ndcg, abs=1e-12)
    assert ndcg.p_adjusted == pytest.approx(holm[p_ndcg], abs=1e-12)
    assert rec_sig.p_adjusted == pytest.approx(holm[p_rec], abs=1e-12)
    assert ndcg.p_adjusted <= 0.05 and ndcg.broken  # a real, significant regression
    assert rec_sig.past_threshold and not rec_sig.broken  # past 0.01 but not significant
    mean_base_r = np.mean([base_r[q] for q in queries])
    expected_rel = 100 * (mean_base_r - np.mean([new_r[q] for q in queries])) / mean_base_r
    assert rec_rel.change == pytest.approx(expected_rel, abs=1e-9)
    assert rec_rel.broken and math.isnan(rec_rel.p_value)  # relative, no test asked
    assert result.failed and result.broken == (ndcg, rec_rel)


def test_no_change_passes_every_rule() -> None:
    result = check_runs(
        BM25, BM25, QRELS, ["ndcg@10 drop > 0 significant", "map drop >= 1%", "mrr rise > 0"]
    )
    assert not result.failed
    assert all(o.change == 0 for o in result.outcomes)
    assert result.outcomes[0].p_value == 1.0


def test_directions_thresholds_and_a_zero_baseline() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    empty = Run.from_lists({"q1": ["x"], "q2": ["y"]}, name="empty")
    good = Run.from_lists({"q1": ["a"], "q2": ["b"]}, name="good")
    # good → empty: mrr falls by exactly 1
    assert check_runs(empty, good, qrels, ["mrr drop > 1"]).failed is False
    assert check_runs(empty, good, qrels, ["mrr drop >= 1"]).failed is True
    assert check_runs(empty, good, qrels, ["mrr rise > 0"]).failed is False
    # empty → good: a rise from 0 is +inf percent
    rise = check_runs(good, empty, qrels, ["mrr rise > 1000%"]).outcomes[0]
    assert math.isinf(rise.change) and rise.broken
    assert check_runs(good, empty, qrels, ["mrr drop > 0%"]).failed is False


def test_significant_rule_needs_the_tests_direction() -> None:
    # a large drop on every query, but the rule asks for a rise
    result = check_runs(DENSE, BM25, QRELS, ["ndcg@10 rise > 0 significant"])
    assert not result.failed and result.outcomes[0].change < 0


def test_undefined_mean_is_an_error_not_a_pass() -> None:
    from ragmeter.analysis.gate import check_evaluation
    from ragmeter.errors import RagmeterError
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.measures import REGISTRY

    (m,) = REGISTRY.parse("ndcg@10")
    ids = np.array(["q1", "q2"], dtype=object)
    base = RunResult("base", ids, (m,), np.array([[0.5], [0.7]]))
    na = RunResult("new", ids, (m,), np.array([[np.nan], [np.nan]]))
    with pytest.raises(RagmeterError, match=r"undefined \(NA\) on every query of 'new'"):
        check_evaluation(Evaluation((base, na), (m,)), [parse_rule("ndcg@10 drop > 0.01")])


# -- the command ----------------------------------------------------------------------------


def test_cli_fails_a_pipeline_on_the_example_regression() -> None:
    out = runner.invoke(
        app,
        [
            "check", DENSE, "--qrels", QRELS, "--baseline", BM25,
            "--fail-if", "ndcg@10 drop > 0.01 significant",
            "--fail-if", "map drop > 0.01 significant",
        ],
    )  # fmt: skip
    assert out.exit_code == 3, out.output
    assert "FAIL" in out.output and "pass" in out.output
    assert "ndcg@10 drop > 0.01 significant" in out.output
    assert "FAILED: 1 of 2 rule(s) broken" in out.output


def test_cli_passes_on_no_change() -> None:
    out = runner.invoke(
        app,
        ["check", BM25, "-q", QRELS, "-b", BM25, "--fail-if", "ndcg@10 drop > 0.01 significant"],
    )
    assert out.exit_code == 0, out.output
    assert "passed: none of 1 rule(s) broken" in out.output


def test_cli_json_and_markdown() -> None:
    args = ["check", DENSE, "-q", QRELS, "-b", BM25, "--fail-if", "ndcg@10 drop > 0.01"]
    out = runner.invoke(app, [*args, "-f", "json"])
    assert out.exit_code == 3
    doc = json.loads(out.stdout)
    assert doc["failed"] is True and doc["rules"][0]["broken"] is True
    assert doc["rules"][0]["p_value"] is None
    md = runner.invoke(app, [*args, "-f", "markdown"])
    assert md.exit_code == 3 and "| ndcg@10 drop > 0.01 |" in md.stdout and "**FAIL**" in md.stdout


def test_cli_bad_rule_and_bad_baseline_are_status_2(tmp_path: Path) -> None:
    out = runner.invoke(
        app, ["check", BM25, "-q", QRELS, "-b", BM25, "--fail-if", "ndcg@10 drops > 0.1"]
    )
    assert out.exit_code == 2
    assert "'drops' is not a direction" in out.output
    out = runner.invoke(
        app,
        ["check", BM25, "-q", QRELS, "-b", "nosuch", "--fail-if", "ndcg@10 drop > 0.1"],
        env={"XDG_DATA_HOME": str(tmp_path), "RAGMETER_STORE": ""},
    )
    assert out.exit_code == 2
    assert "no such run file" in out.output
    assert not (tmp_path / "ragmeter").exists()  # no store created on the way


def test_cli_baseline_from_the_store(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    saved = runner.invoke(
        app,
        ["evaluate", BM25, "-q", QRELS, "-m", "ndcg@10", "--store", store, "--name", "nightly"],
    )
    assert saved.exit_code == 0, saved.output
    gate = ["check", DENSE, "-q", QRELS, "-b", "nightly", "--store", store]
    out = runner.invoke(app, [*gate, "--fail-if", "ndcg@10 drop > 0.01 significant"])
    assert out.exit_code == 3, out.output
    assert "against #1 run_bm25.txt" in out.output
    # the same decision as with the baseline's file: the stored values are the same numbers
    from_file = check_runs(DENSE, BM25, QRELS, ["ndcg@10 drop > 0.01 significant"])
    doc = json.loads(
        runner.invoke(
            app, [*gate, "--fail-if", "ndcg@10 drop > 0.01 significant", "-f", "json"]
        ).stdout
    )
    assert doc["rules"][0]["baseline"] == pytest.approx(from_file.outcomes[0].baseline_mean)
    assert doc["rules"][0]["p_adjusted"] == pytest.approx(from_file.outcomes[0].p_adjusted)
    # a measure the stored evaluation lacks
    out = runner.invoke(app, [*gate, "--fail-if", "map drop > 0.01"])
    assert out.exit_code == 2 and "saved without map" in out.output
    out = runner.invoke(
        app, [*gate[:-3], "-b", "weekly", "--store", store, "--fail-if", "map drop > 0"]
    )
    assert out.exit_code == 2 and "weekly" in out.output


# -- the documentation ------------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "check.md"


def _blocks(lang: str) -> list[str]:
    """The bodies of the fenced blocks of docs/check.md in ``lang`` ("" for a bare fence)."""
    blocks: list[str] = []
    fence: str | None = None  # the language of the open block
    body: list[str] = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("```"):
            body.append(line)
        elif fence is None:
            fence, body = line[3:].strip(), []
        else:
            if fence == lang:
                blocks.append("\n".join(body) + "\n")
            fence = None
    return blocks


def test_documented_example_output_is_what_check_prints() -> None:
    import shlex

    command = shlex.split(_blocks("bash")[0].replace("\\\n", " "))
    assert command[:2] == ["ragmeter", "check"]
    rules = [r for i, r in enumerate(command) if i and command[i - 1] == "--fail-if"]
    assert rules == [
        "ndcg@10 drop > 0.01 significant",
        "recall@10 drop > 5%",
        "map drop > 0.01 significant",
    ]
    out = runner.invoke(
        app,
        ["check", DENSE, "-q", QRELS, "-b", BM25, *(x for r in rules for x in ("--fail-if", r))],
    )
    assert out.exit_code == 3
    shown = "\n".join(" ".join(line.split()) for line in out.output.splitlines())
    documented = _blocks("")[0].splitlines()
    rows = [line for line in documented if line.split()[-1:] in (["FAIL"], ["pass"])]
    assert len(rows) == 3
    for line in rows:
        assert " ".join(line.split()) in shown, line


def test_documented_workflow_is_valid_yaml_with_valid_rules() -> None:
    import re

    yaml = pytest.importorskip("yaml")
    (workflow,) = _blocks("yaml")
    doc = yaml.safe_load(workflow)
    steps = doc["jobs"]["gate"]["steps"]
    script = next(s["run"] for s in steps if s.get("name") == "ragmeter check")
    rules = re.findall(r'--fail-if "([^"]+)"', script)
    assert rules and all(parse_rule(r) for r in rules)
