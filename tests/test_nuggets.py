"""Nugget evaluation (TREC 2024 RAG): readers, the four nugget scores, nugget coverage of the
context, citation support. Expected values are computed by hand in the comments, or by
nuggetizer's own scorer on the same assignments."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import Run, evaluate
from ragmeter.core.nuggets import (
    SUPPORT_LABELS,
    AnswerSentence,
    CitationSupport,
    NuggetAssignments,
    Nuggets,
    RagAnswer,
    RagAnswers,
    SentenceSupport,
)
from ragmeter.errors import InputError, MissingInputError
from ragmeter.io.nuggets import (
    check_citation_support,
    read_assignments,
    read_citation_support,
    read_nuggets,
    read_rag_answers,
)
from ragmeter.io.readers import read_run
from ragmeter.metrics.nuggets import nugget_score

FOUR = ["nugget_all", "nugget_vital", "nugget_strict_all", "nugget_strict_vital"]
S, P, N = 2, 1, 0  # support codes


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _five() -> Nuggets:
    return Nuggets.from_dict(
        {"q1": [("v1", "vital"), ("v2", "vital"), ("v3", "vital"), ("o1", "okay"), ("o2", "okay")]}
    )


# -- hand-computed -----------------------------------------------------------------------------


def test_four_scores_by_hand() -> None:
    # v1 S, v2 P, v3 N, o1 S, o2 P
    # all = (1 + .5 + 0 + 1 + .5)/5 = .6; vital = 1.5/3 = .5; strict_all = 2/5; strict_vital = 1/3
    assignments = NuggetAssignments({("r", "q1"): {"1": S, "2": P, "3": N, "4": S, "5": P}})
    run = Run.from_lists({"q1": ["d1"]}, name="r")
    means = evaluate(run, None, FOUR, nuggets=_five(), nugget_assignments=assignments).run.means()
    assert means["nugget_all"] == pytest.approx(0.6)
    assert means["nugget_vital"] == pytest.approx(0.5)
    assert means["nugget_strict_all"] == pytest.approx(0.4)
    assert means["nugget_strict_vital"] == pytest.approx(1 / 3)


def test_macro_over_queries_and_undefined() -> None:
    # q1: vital a S, okay b N → vital 1, all .5; q2: okay only (P) → vital NA, all .5;
    # q3: nuggets but the run's answer is not assessed → NA everywhere.
    nuggets = Nuggets.from_dict(
        {"q1": [("a", "vital"), ("b", "okay")], "q2": [("c", "okay")], "q3": [("d", "vital")]}
    )
    assignments = NuggetAssignments({("r", "q1"): {"1": S, "2": N}, ("r", "q2"): {"1": P}})
    run = Run.from_lists({"q1": ["x"], "q2": ["y"]}, name="r")
    result = evaluate(run, None, FOUR, nuggets=nuggets, nugget_assignments=assignments).run
    assert list(result.query_ids) == ["q1", "q2", "q3"]
    assert result.means()["nugget_all"] == pytest.approx((0.5 + 0.5) / 2)
    assert result.means()["nugget_vital"] == pytest.approx(1.0)
    agg = result.aggregate(result.measures[1])
    assert (agg.n, agg.n_defined) == (3, 1)


def test_nugget_coverage_of_the_context_by_hand() -> None:
    # nuggets n1 vital, n2 okay; d1: n1 P; d2: n1 S, n2 P; d3 not assessed
    nuggets = Nuggets.from_dict({"q1": [("n1", "vital"), ("n2", "okay")]})
    assignments = NuggetAssignments(
        passages={("q1", "d1"): {"1": P, "2": N}, ("q1", "d2"): {"1": S, "2": P}}
    )
    run = Run.from_lists({"q1": ["d3", "d1", "d2"]}, name="r")
    names = [
        "nugget_coverage@1",  # d3 → nothing → 0
        "nugget_coverage@2",  # n1 P → .5/2 = .25
        "nugget_coverage",  # n1 S, n2 P → 1.5/2 = .75
        "nugget_coverage(strict=1)",  # 1/2
        "nugget_coverage@2(vital=1)",  # n1 P → .5
        "nugget_coverage@2(strict=1,vital=1)",  # 0
    ]
    means = evaluate(run, None, names, nuggets=nuggets, nugget_assignments=assignments).run
    got = [means.values[0, j] for j in range(len(names))]
    assert got == pytest.approx([0.0, 0.25, 0.75, 0.5, 0.5, 0.0])


def test_citation_support_by_hand() -> None:
    # s1 cites d1 (S), d2 (N); s2 cites d2 (P); s3 cites nothing
    # precision = (1 + 0 + .5)/3 = .5; recall = (max(1,0) + .5 + 0)/3 = .5
    # q2: one sentence citing d1 (P) → precision .5, recall .5; q3: no sentences → NA
    support = CitationSupport(
        {
            ("r", "q1"): (
                SentenceSupport(("d1", "d2"), (S, N)),
                SentenceSupport(("d2",), (P,)),
                SentenceSupport((), ()),
            ),
            ("r", "q2"): (SentenceSupport(("d1",), (P,)),),
            ("r", "q3"): (),
        }
    )
    nuggets = Nuggets.from_dict({"q1": [("x", "vital")], "q2": [("y", "vital")], "q3": []})
    run = Run.from_lists({"q1": ["d1"]}, name="r")
    result = evaluate(
        run,
        None,
        ["citation_precision", "citation_recall"],
        nuggets=nuggets,
        citation_support=support,
    ).run
    assert result.values[:2].ravel().tolist() == pytest.approx([0.5, 0.5, 0.5, 0.5])
    assert np.isnan(result.values[2]).all()


def test_assignments_are_matched_by_run_name() -> None:
    nuggets = Nuggets.from_dict({"q1": [("a", "vital"), ("b", "vital")]})
    assignments = NuggetAssignments(
        {("r1", "q1"): {"1": S, "2": S}, ("r2", "q1"): {"1": S, "2": N}}
    )
    runs = [Run.from_lists({"q1": ["d"]}, name=n) for n in ("r2", "r1")]
    result = evaluate(runs, None, ["nugget_vital"], nuggets=nuggets, nugget_assignments=assignments)
    assert [r.means()["nugget_vital"] for r in result.runs] == [0.5, 1.0]
    with pytest.raises(MissingInputError, match="no nugget assignments for run 'r3'"):
        evaluate(
            Run.from_lists({"q1": ["d"]}, name="r3"),
            None,
            ["nugget_vital"],
            nuggets=nuggets,
            nugget_assignments=assignments,
        )


def test_unnamed_assignments_serve_one_run_only() -> None:
    # a file without run_id: the answers of the one run evaluated; with two runs, an error
    nuggets = Nuggets.from_dict({"q1": [("a", "vital"), ("b", "vital")]})
    unnamed = NuggetAssignments({("", "q1"): {"1": S, "2": N}})
    runs = [Run.from_lists({"q1": ["d"]}, name=n) for n in ("r1", "r2")]
    one = evaluate(runs[0], None, ["nugget_vital"], nuggets=nuggets, nugget_assignments=unnamed)
    assert one.run.means()["nugget_vital"] == 0.5
    with pytest.raises(InputError, match="name no run_id"):
        evaluate(runs, None, ["nugget_vital"], nuggets=nuggets, nugget_assignments=unnamed)


def test_missing_inputs_are_named() -> None:
    run = Run.from_lists({"q1": ["d"]}, name="r")
    with pytest.raises(MissingInputError, match="--assignments"):
        evaluate(run, None, ["nugget_vital"], nuggets=_five())
    with pytest.raises(MissingInputError, match="--citation-support"):
        evaluate(run, None, ["citation_recall"], nuggets=_five())
    partial = NuggetAssignments({("r", "q1"): {"1": S}})
    with pytest.raises(InputError, match="no assignment for nugget '2'"):
        evaluate(run, None, ["nugget_vital"], nuggets=_five(), nugget_assignments=partial)
    with pytest.raises(MissingInputError, match="retrieved passages"):
        evaluate(
            run,
            None,
            ["nugget_coverage"],
            nuggets=_five(),
            nugget_assignments=NuggetAssignments({("r", "q1"): dict.fromkeys("12345", S)}),
        )


# -- side by side with nuggetizer ----------------------------------------------------------


def _random_records(seed: int) -> list[dict[str, Any]]:
    """nuggetizer's assigner output: per query, nuggets with importance and assignment (every
    query has a vital nugget: nuggetizer scores 0 where ragmeter has NA)."""
    rng = random.Random(seed)
    records = []
    for q in range(rng.randint(1, 12)):
        n = rng.randint(1, 15)
        importance = ["vital"] + [rng.choice(["vital", "okay"]) for _ in range(n - 1)]
        rng.shuffle(importance)
        records.append(
            {
                "qid": f"q{q}",
                "nuggets": [
                    {
                        "text": f"fact {i}",
                        "importance": imp,
                        "assignment": rng.choice(SUPPORT_LABELS),
                    }
                    for i, imp in enumerate(importance)
                ],
            }
        )
    return records


@pytest.mark.parametrize("seed", range(8))
def test_same_scores_as_nuggetizer(seed: int, tmp_path: Path) -> None:
    metrics = pytest.importorskip(
        "nuggetizer.core.metrics",
        reason="nuggetizer is not installed (pip install nuggetizer; the dev extra has it)",
    )
    records = _random_records(seed)
    nuggets = read_nuggets(_write_jsonl(tmp_path / "n.jsonl", records))
    assignments = read_assignments(_write_jsonl(tmp_path / "a.jsonl", records), nuggets)
    run = Run.from_lists({r["qid"]: ["d"] for r in records}, name="r")
    result = evaluate(run, None, FOUR, nuggets=nuggets, nugget_assignments=assignments).run
    index = {q: i for i, q in enumerate(result.query_ids)}
    for record in records:
        theirs = metrics.calculate_nugget_scores(record["qid"], record["nuggets"])
        ours = result.values[index[record["qid"]]]
        assert ours.tolist() == pytest.approx(
            [
                theirs.all_score,
                theirs.vital_score,
                theirs.strict_all_score,
                theirs.strict_vital_score,
            ],
            abs=1e-12,
        )
    overall = metrics.calculate_global_metrics(records)
    means = result.means()
    for ours_name, theirs_name in zip(
        FOUR, ["all_score", "vital_score", "strict_all_score", "strict_vital_score"], strict=True
    ):
        assert means[ours_name] == pytest.approx(overall[theirs_name], abs=1e-12)


# -- properties ------------------------------------------------------------------------------

codes_and_vital = st.integers(1, 20).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 2), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
    )
)


@given(codes_and_vital, st.booleans())
@settings(max_examples=200, deadline=None)
def test_bounds_and_strict_below_lenient(
    data: tuple[list[int], list[bool]], vital_only: bool
) -> None:
    codes = np.array(data[0], dtype=np.int8)
    vital = np.array(data[1], dtype=bool)
    strict = nugget_score(codes, vital, strict=True, vital_only=vital_only)
    lenient = nugget_score(codes, vital, strict=False, vital_only=vital_only)
    if vital_only and not vital.any():
        assert math.isnan(strict) and math.isnan(lenient)
        return
    assert 0.0 <= strict <= lenient <= 1.0


@given(codes_and_vital, st.data())
@settings(max_examples=200, deadline=None)
def test_monotone_in_support(data: tuple[list[int], list[bool]], draw: Any) -> None:
    codes = np.array(data[0], dtype=np.int8)
    vital = np.array(data[1], dtype=bool)
    i = draw.draw(st.integers(0, len(codes) - 1))
    better = codes.copy()
    better[i] = draw.draw(st.integers(int(codes[i]), 2))  # not → partial/support, …
    for strict in (False, True):
        for vital_only in (False, True):
            before = nugget_score(codes, vital, strict=strict, vital_only=vital_only)
            after = nugget_score(better, vital, strict=strict, vital_only=vital_only)
            assert (math.isnan(before) and math.isnan(after)) or after >= before


@given(st.lists(st.lists(st.integers(0, 2), max_size=4), max_size=6))
@settings(max_examples=100, deadline=None)
def test_citation_scores_are_bounded(sentences: list[list[int]]) -> None:
    support = CitationSupport(
        {
            ("r", "q1"): tuple(
                SentenceSupport(tuple(f"d{j}" for j in range(len(s))), tuple(s)) for s in sentences
            )
        }
    )
    nuggets = Nuggets.from_dict({"q1": [("x", "vital")]})
    run = Run.from_lists({"q1": ["d0"]}, name="r")
    values = evaluate(
        run,
        None,
        ["citation_precision", "citation_recall"],
        nuggets=nuggets,
        citation_support=support,
    ).run.values[0]
    cited = sum(len(s) for s in sentences)
    assert math.isnan(values[0]) == (cited == 0)
    assert math.isnan(values[1]) == (not sentences)
    for v in values[~np.isnan(values)]:
        assert 0.0 <= v <= 1.0


# -- readers ---------------------------------------------------------------------------------


def test_read_nuggets_both_layouts(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "n.jsonl",
        [
            {"qid": "q1", "query": "?", "nuggets": [{"text": "a", "importance": "vital"}]},
            {"qid": "q2", "nugget_id": "x", "text": "b", "importance": "okay"},
            {"qid": "q2", "nugget_id": "y", "text": "c", "importance": "Vital"},
        ],
    )
    nuggets = read_nuggets(path)
    assert [(n.id, n.text, n.importance) for n in nuggets.by_query["q1"]] == [("1", "a", "vital")]
    assert [(n.id, n.importance) for n in nuggets.by_query["q2"]] == [("x", "okay"), ("y", "vital")]


@pytest.mark.parametrize(
    ("row", "line", "field", "message"),
    [
        (
            {"qid": "q1", "nuggets": [{"text": "a", "importance": "high"}]},
            2,
            "nuggets[0].importance",
            "vital",
        ),
        ({"qid": "q1", "nuggets": [{"importance": "okay"}]}, 2, "nuggets[0].text", "string"),
        ({"nuggets": []}, 2, None, "qid"),
        ({"qid": "q1", "nuggets": "abc"}, 2, "nuggets", "list"),
    ],
)
def test_nugget_errors_name_file_line_field(
    tmp_path: Path, row: dict[str, Any], line: int, field: str | None, message: str
) -> None:
    path = _write_jsonl(tmp_path / "bad.jsonl", [{"qid": "q0", "nuggets": []}, row])
    with pytest.raises(InputError, match=message) as info:
        read_nuggets(path)
    assert info.value.source == str(path)
    assert info.value.line == line
    assert info.value.field == field


def test_read_assignments_nuggetizer_and_flat(tmp_path: Path) -> None:
    nuggets = read_nuggets(
        _write_jsonl(
            tmp_path / "n.jsonl",
            [
                {
                    "qid": "q1",
                    "nuggets": [
                        {"text": "a", "importance": "vital"},
                        {"text": "b", "importance": "okay"},
                    ],
                }
            ],
        )
    )
    path = _write_jsonl(
        tmp_path / "a.jsonl",
        [
            {
                "run_id": "r",
                "qid": "q1",
                "nuggets": [
                    {"text": "b", "importance": "okay", "assignment": "partial_support"},
                    {"text": "a", "importance": "vital", "assignment": "support"},
                ],
            },
            {
                "qid": "q1",
                "docid": "d1",
                "candidate_text": "…",
                "nuggets": [
                    {"text": "a", "importance": "vital", "assignment": "not_support"},
                ],
            },
            {"run_id": "s", "qid": "q1", "nugget_id": "1", "assignment": "support"},
            {"run_id": "s", "qid": "q1", "nugget_id": "2", "assignment": "not_support"},
        ],
    )
    got = read_assignments(path, nuggets)
    assert got.answers == {("r", "q1"): {"2": P, "1": S}, ("s", "q1"): {"1": S, "2": N}}
    assert got.passages == {("q1", "d1"): {"1": N}}


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        (
            {"qid": "q1", "nuggets": [{"text": "zzz", "assignment": "support"}]},
            "nuggets[0].text",
            "not a nugget",
        ),
        (
            {"qid": "q1", "nuggets": [{"text": "a", "assignment": "yes"}]},
            "nuggets[0].assignment",
            "expected one of",
        ),
        ({"qid": "q1", "nugget_id": "7", "assignment": "support"}, "nugget_id", "no nugget '7'"),
        ({"qid": "q9", "nugget_id": "1", "assignment": "support"}, None, "no nuggets"),
    ],
)
def test_assignment_errors_name_file_line_field(
    tmp_path: Path, row: dict[str, Any], field: str | None, message: str
) -> None:
    nuggets = Nuggets.from_dict({"q1": [("a", "vital")]})
    path = _write_jsonl(tmp_path / "a.jsonl", [row])
    with pytest.raises(InputError, match=message) as info:
        read_assignments(path, nuggets)
    assert (info.value.source, info.value.line, info.value.field) == (str(path), 1, field)


def test_rag_answers_and_their_run(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "answers.jsonl",
        [
            {
                "run_id": "my-rag",
                "topic_id": "q1",
                "topic": "what?",
                "references": ["d3", "d7"],
                "response_length": 9,
                "answer": [
                    {"text": "First.", "citations": [1, 0]},
                    {"text": "Second.", "citations": ["d9"]},
                    {"text": "Third.", "citations": []},
                ],
            }
        ],
    )
    answers = read_rag_answers(path)
    (one,) = answers.answers
    assert [s.citations for s in one.sentences] == [("d7", "d3"), ("d9",), ()]
    assert one.text == "First. Second. Third."
    run = read_run(path)  # the format registry reads the references as the run
    assert run.name == "my-rag"
    ranked = run.to_dict()["q1"]
    assert sorted(ranked, key=lambda d: -ranked[d]) == ["d3", "d7"]


def test_rag_answer_errors(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "a.jsonl",
        [{"topic_id": "q1", "references": ["d1"], "answer": [{"text": "x", "citations": [3]}]}],
    )
    with pytest.raises(InputError, match="not an index") as info:
        read_rag_answers(path)
    assert (info.value.line, info.value.field) == (1, "answer[0].citations")


def test_read_citation_support(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"run_id": "r", "qid": "q1", "sentence": 1, "citations": []},
            {
                "run_id": "r",
                "qid": "q1",
                "sentence": 0,
                "citations": [
                    {"docid": "d1", "support": "support"},
                    {"docid": "d2", "support": "partial_support"},
                ],
            },
        ],
    )
    got = read_citation_support(path)
    assert got.answers[("r", "q1")] == (
        SentenceSupport(("d1", "d2"), (S, P)),
        SentenceSupport((), ()),
    )
    bad = _write_jsonl(
        tmp_path / "bad.jsonl",
        [{"qid": "q1", "sentence": 0, "citations": [{"docid": "d1", "support": "full"}]}],
    )
    with pytest.raises(InputError, match="expected one of") as info:
        read_citation_support(bad)
    assert (info.value.line, info.value.field) == (1, "citations[0].support")


def test_citation_support_must_judge_exactly_the_cited_docs() -> None:
    """A judged doc the sentence does not cite, and a cited doc left unjudged, are errors
    naming the support line, the doc, and where the answer is."""
    answers = RagAnswers(
        (RagAnswer("r", "q1", (AnswerSentence("s0", ("d1", "d2")),), line=4),), "a.jsonl"
    )

    def support(*docs: str) -> CitationSupport:
        judged = SentenceSupport(docs, tuple(S for _ in docs), line=7)
        return CitationSupport({("r", "q1"): (judged,)}, "c.jsonl")

    check_citation_support(support("d2", "d1"), answers)  # any order
    with pytest.raises(InputError) as info:
        check_citation_support(support("d1", "d3", "d2"), answers)
    assert info.value.reason == (
        "doc 'd3' is not cited by sentence 0 of the answer to query 'q1' (run 'r', a.jsonl, "
        "line 4: it cites 'd1', 'd2'); judge the sentence's citations only"
    )
    assert (info.value.source, info.value.line, info.value.field) == ("c.jsonl", 7, "citations")
    with pytest.raises(InputError) as info:
        check_citation_support(support("d2"), answers)
    assert info.value.reason == (
        "doc 'd1' is cited by sentence 0 of the answer to query 'q1' (run 'r', a.jsonl, "
        "line 4) but not judged on this line; judge every citation"
    )
    assert (info.value.source, info.value.line, info.value.field) == ("c.jsonl", 7, "citations")


# -- the example collection and the command line ------------------------------------------------


def test_example_nuggets_by_hand() -> None:
    from ragmeter.data import example_path

    nuggets = read_nuggets(example_path("nuggets.jsonl"))
    assert sorted(nuggets.by_query) == ["q01", "q02", "q03", "q06"]
    assignments = read_assignments(example_path("nugget_assignments.jsonl"), nuggets)
    run = read_run(example_path("rag_answers.jsonl"))
    assert run.name == "vellmar-rag"
    result = evaluate(
        run,
        None,
        ["nugget_strict_vital", "nugget_all", "nugget_coverage@5"],
        nuggets=nuggets,
        nugget_assignments=assignments,
    ).run
    q03 = list(result.query_ids).index("q03")
    # q03's answer: under 19 S, price N, students S (vital) · zones N, semester P, under 6 N
    # strict_vital = 2/3; all = (1 + 0 + 1 + 0 + .5 + 0)/6; its top 5 (p148 p093 p163 p116
    # p126) support 1, 2, 3, 4, 5 (p093, p163, p163, p163, p126) and 6 (p093) → 1
    assert result.values[q03].tolist() == pytest.approx([2 / 3, 2.5 / 6, 1.0])


def test_evaluate_command_with_nuggets() -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.data import example_path

    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(example_path("rag_answers.jsonl")),
            "--nuggets",
            str(example_path("nuggets.jsonl")),
            "--assignments",
            str(example_path("nugget_assignments.jsonl")),
            "--citation-support",
            str(example_path("citation_support.jsonl")),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["runs"]
    # per query (hand): strict_vital 1, 1, 2/3, 1; citation_recall 0, 1, 2/3, 1/2
    assert row["metrics"]["nugget_strict_vital"]["mean"] == pytest.approx((3 + 2 / 3) / 4)
    assert row["metrics"]["citation_recall"]["mean"] == pytest.approx((0 + 1 + 2 / 3 + 0.5) / 4)
    bad = CliRunner().invoke(
        app,
        ["evaluate", str(example_path("rag_answers.jsonl")), "--assignments", "x.jsonl"],
    )
    assert bad.exit_code == 2
    assert "--nuggets" in bad.output


def _two_answer_runs(tmp_path: Path) -> list[str]:
    """Command-line arguments: the example answers and the same answers as run 'other', the
    nuggets, and assignments in which 'other' supports nothing."""
    from ragmeter.data import example_path

    other = tmp_path / "other.jsonl"
    other.write_text(
        "".join(
            json.dumps({**json.loads(line), "run_id": "other"}) + "\n"
            for line in example_path("rag_answers.jsonl").read_text().splitlines()
        )
    )
    unsupported = tmp_path / "other_assignments.jsonl"
    lines = []
    for line in example_path("nugget_assignments.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "docid" in row:  # passages: the context's coverage, not the answers
            continue
        for nugget in row["nuggets"]:
            nugget["assignment"] = "not_support"
        lines.append(json.dumps({**row, "run_id": "other"}) + "\n")
    unsupported.write_text("".join(lines))
    return [
        str(example_path("rag_answers.jsonl")),
        str(other),
        "--nuggets",
        str(example_path("nuggets.jsonl")),
        "--assignments",
        str(example_path("nugget_assignments.jsonl")),
        "--assignments",
        str(unsupported),
    ]


def test_compare_command_with_nuggets(tmp_path: Path) -> None:
    """``compare`` takes the nugget inputs as ``evaluate`` does: the same numbers per run,
    the queries with nuggets compared (a second run whose answers support no nugget)."""
    from typer.testing import CliRunner

    from ragmeter.cli import app

    result = CliRunner().invoke(app, ["compare", *_two_answer_runs(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["runs"] == ["vellmar-rag", "other"]
    assert "nugget_strict_vital" in out["measures"]  # the nugget measures by default
    means = {(s["run"], s["measure"]): s["mean"] for s in out["summaries"]}
    # per query (hand, as in evaluate): strict_vital 1, 1, 2/3, 1; nothing supported: 0
    assert means[("vellmar-rag", "nugget_strict_vital")] == pytest.approx((3 + 2 / 3) / 4)
    assert means[("other", "nugget_strict_vital")] == 0.0
    assert means[("other", "nugget_all")] == 0.0


def test_report_command_with_nuggets(tmp_path: Path) -> None:
    """``report`` takes the nugget inputs too: its summary shows evaluate's numbers, and the
    K-sweep of nugget_coverage@5 is computed with the same inputs."""
    pytest.importorskip("matplotlib")
    from typer.testing import CliRunner

    from ragmeter.cli import app

    page = tmp_path / "report.html"
    args = _two_answer_runs(tmp_path)
    result = CliRunner().invoke(
        app,
        [
            "report",
            *args,
            "-m",
            "nugget_strict_vital",
            "-m",
            "nugget_coverage@5",
            "-o",
            str(page),
        ],
    )
    assert result.exit_code == 0, result.output
    text = page.read_text()
    # strict_vital (3 + 2/3) / 4 = 0.9167 and coverage@5 0.5750, by hand as in evaluate
    assert "0.9167" in text and "0.5750" in text
    assert "nuggets" in text  # the inputs named on the page
    refused = CliRunner().invoke(app, ["report", args[1], "-o", str(page)])
    assert refused.exit_code == 2 and "--nuggets" in refused.output


# -- citation support matched against the answers' citations -----------------------------------


def _support_rows() -> list[dict[str, Any]]:
    from ragmeter.data import example_path

    lines = example_path("citation_support.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _evaluate_support(support: Path) -> Any:
    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.data import example_path

    args = ["evaluate", str(example_path("rag_answers.jsonl"))]
    args += ["--citation-support", str(support), "--format", "json"]
    return CliRunner().invoke(app, args)


def test_support_of_a_passage_the_sentence_does_not_cite_is_an_error(tmp_path: Path) -> None:
    """A support row naming a passage its sentence does not cite was counted (precision
    0.5 → 0.75 on the example): it is an error naming the support file, line and doc id."""
    rows = _support_rows()
    # line 1: q01 sentence 0 cites [2] = p203 only; p102 is a reference it does not cite
    rows[0]["citations"].append({"docid": "p102", "support": "support"})
    path = _write_jsonl(tmp_path / "support.jsonl", rows)
    result = _evaluate_support(path)
    assert result.exit_code == 2, result.output
    assert "support.jsonl, line 1" in result.output
    assert "'p102'" in result.output
    assert "Traceback" not in result.output


def test_support_leaving_out_a_cited_passage_is_an_error(tmp_path: Path) -> None:
    rows = _support_rows()
    # q02 sentence 1 cites [3, 0] = p108, p110: drop p110's label
    line = next(i for i, r in enumerate(rows) if r["qid"] == "q02" and r["sentence"] == 1)
    rows[line]["citations"] = [c for c in rows[line]["citations"] if c["docid"] != "p110"]
    path = _write_jsonl(tmp_path / "support.jsonl", rows)
    result = _evaluate_support(path)
    assert result.exit_code == 2, result.output
    assert f"support.jsonl, line {line + 1}" in result.output
    assert "'p110'" in result.output


def test_support_of_a_sentence_the_answer_lacks_is_an_error(tmp_path: Path) -> None:
    rows = _support_rows()
    rows.append({"run_id": "vellmar-rag", "qid": "q01", "sentence": 2, "citations": []})
    path = _write_jsonl(tmp_path / "support.jsonl", rows)
    result = _evaluate_support(path)
    assert result.exit_code == 2, result.output
    assert f"line {len(rows)}" in result.output and "2 sentences" in result.output


def test_matching_support_in_another_order_is_accepted(tmp_path: Path) -> None:
    rows = _support_rows()
    for row in rows:
        row["citations"].reverse()
    result = _evaluate_support(_write_jsonl(tmp_path / "support.jsonl", rows))
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.stdout)["runs"]
    # per query (hand): citation_recall 0, 1, 2/3, 1/2, as in test_evaluate_command_with_nuggets
    assert run["metrics"]["citation_recall"]["mean"] == pytest.approx((0 + 1 + 2 / 3 + 0.5) / 4)
