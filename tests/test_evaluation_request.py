"""The evaluation request: the side inputs of an evaluation travel as one value, checked once.

``ragmeter.evaluate(**keywords)`` builds an :class:`EvalInputs`; its keywords are the fields
of that value (``Options``), so a new kind of input is a field of :class:`SideInputs` and
a key of ``Options`` (this file holds the two equal), and nothing in between changes.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.evaluation.inputs import EvalInputs, Options, SideInputs

RUN = Run.from_lists({"q1": ["a", "b", "c"], "q2": ["d", "e"]})
QRELS = Qrels.from_dict({"q1": ["b"], "q2": ["d", "x"]})


def test_the_keywords_of_evaluate_are_the_fields_of_the_request() -> None:
    keywords = set(Options.__annotations__)
    assert keywords == {f.name for f in fields(EvalInputs)} - {"qrels"}
    # every side input is a keyword, and every keyword is optional
    assert {f.name for f in fields(SideInputs)} <= keywords
    assert Options.__required_keys__ == frozenset()


def test_an_unknown_keyword_is_refused_by_name() -> None:
    with pytest.raises(
        TypeError, match="evaluate\\(\\) got an unexpected keyword argument 'nugets'"
    ):
        ragmeter.evaluate(RUN, QRELS, ["P@1"], nugets=None)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("keyword", "value", "field"),
    [("rel_level", -1, "rel_level"), ("depth", 0, "depth"), ("context_k", 0, "context_k")],
)
def test_the_request_is_checked_in_one_place(keyword: str, value: int, field: str) -> None:
    # the same rule, the same error, whether the value is built or reached through evaluate()
    with pytest.raises(InputError) as built:
        EvalInputs(QRELS, **{keyword: value})  # type: ignore[arg-type]
    with pytest.raises(InputError) as called:
        ragmeter.evaluate(RUN, QRELS, ["P@1"], **{keyword: value})  # type: ignore[arg-type]
    assert built.value.field == called.value.field == field
    assert str(built.value) == str(called.value)


def test_the_side_inputs_given_are_keywords_again() -> None:
    assert SideInputs().given() == {}
    qrels_only = EvalInputs(QRELS, rel_level=2)
    assert qrels_only.given() == {}
    # P@1: q1 b is 2nd (0), q2 d is 1st (1) -> 0.5; the keywords of given() evaluate alike
    again = ragmeter.evaluate(RUN, QRELS, ["P@1"], **SideInputs().given())
    assert again.run.means()[str(ragmeter.parse_measure("P@1"))] == pytest.approx(0.5)


def test_a_new_side_input_is_one_field() -> None:
    # a field added to SideInputs reaches the engine's value with no other change: EvalInputs
    # inherits it, and given() hands it on by name
    names = [f.name for f in fields(SideInputs)]
    assert names == [f.name for f in fields(EvalInputs)][: len(names)]


# -- the side inputs as files: one value from the command line to the engine ----------------


def test_every_request_carries_the_side_inputs_as_one_value() -> None:
    from ragmeter.workflows.compare import CompareRequest
    from ragmeter.workflows.evaluate import EvaluateRequest
    from ragmeter.workflows.inputs import InputFiles
    from ragmeter.workflows.report import ReportRequest

    side = {f.name for f in fields(InputFiles)}
    for request in (EvaluateRequest, CompareRequest, ReportRequest):
        own = {f.name: f.type for f in fields(request)}
        # a new kind of input is a field of InputFiles: no request names one of its own
        assert not side & set(own), request.__name__
        assert own["inputs"] == "InputFiles", request.__name__


def test_nothing_given_reads_nothing() -> None:
    from ragmeter.workflows.inputs import InputFiles

    assert InputFiles().problems() == []
    assert InputFiles().read(["ndcg@10"], []) == {}


@pytest.mark.parametrize(
    ("given", "option", "message"),
    [
        ({"questions": Path("q.jsonl")}, "--questions", "--questions is used with --judgments"),
        ({"answers": (Path("a.jsonl"),)}, "--answers", "--answers is used with --judgments"),
        ({"chunks": ("c.jsonl",)}, "--chunks", "--chunks is read with --spans"),
        ({"assignments": (Path("a.jsonl"),)}, "--assignments", "--assignments are read against"),
    ],
)
def test_the_rules_of_the_side_inputs_live_in_one_place(
    given: dict[str, Any], option: str, message: str
) -> None:
    from ragmeter.errors import RagmeterError
    from ragmeter.workflows.inputs import InputFiles

    files = InputFiles(**given)
    [(flag, text)] = files.problems()
    assert flag == option and text.startswith(message)
    with pytest.raises(RagmeterError, match=message):  # a library caller meets the same rule
        files.read([], [])


def test_assignments_without_nuggets_read_the_same_in_every_command() -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    runner = CliRunner()
    args = ["--assignments", "a.jsonl"]
    said = []
    for command in (
        ["evaluate", "run.txt", "--qrels", "q.txt"],
        ["compare", "a.txt", "b.txt", "--qrels", "q.txt"],
        ["report", "run.txt", "--qrels", "q.txt", "-o", "r.html"],
    ):
        result = runner.invoke(app, [*command, *args])
        assert result.exit_code == 2, result.output
        said.append(result.stderr.strip().splitlines()[-1])
    expected = "ragmeter: error: --assignments are read against the nuggets; give --nuggets too"
    assert said == [expected] * 3


# -- the report's options: one value from the workflow to the model --------------------------


def test_the_report_keywords_are_the_fields_of_its_options() -> None:
    from ragmeter.analysis.report import ReportKeywords, ReportOptions

    assert set(ReportKeywords.__annotations__) == {f.name for f in fields(ReportOptions)}
    assert ReportKeywords.__required_keys__ == frozenset()


def test_the_report_takes_its_options_whole_or_as_keywords() -> None:
    from ragmeter.analysis.report import ReportOptions, build_report, report_options

    two = ragmeter.evaluate(
        [Run.from_lists({"q1": ["a", "b"], "q2": ["d"]}, name="x"), RUN], QRELS, ["P@1"]
    )
    whole = build_report(two, ReportOptions(bootstrap=200, permutations=300, seed=3))
    keywords = build_report(two, bootstrap=200, permutations=300, seed=3)
    assert whole.comparison is not None and keywords.comparison is not None
    assert whole.comparison.to_dict() == keywords.comparison.to_dict()
    assert (whole.bootstrap, whole.seed) == (200, 3)
    # keywords replace the fields of the options given
    assert report_options(ReportOptions(k=5, tau=2), {"k": 7}) == ReportOptions(k=7, tau=2)
    with pytest.raises(
        TypeError, match="build_report\\(\\) got an unexpected keyword argument 'kk'"
    ):
        build_report(two, kk=3)  # type: ignore[call-arg]


def test_the_first_arguments_may_still_be_named() -> None:
    from ragmeter.analysis.report import build_report

    named = ragmeter.evaluate(runs=RUN, qrels=QRELS, measures=["P@1"], rel_level=1)
    model = build_report(evaluation=named, bootstrap=200, worst=0)
    assert model.evaluation is named and model.bootstrap == 200
