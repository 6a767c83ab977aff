"""The evaluation request: the side inputs of an evaluation travel as one value, checked once.

``ragmeter.evaluate(**keywords)`` builds an :class:`EvalInputs`; its keywords are the fields
of that value (``Options``), so a new kind of input is a field of :class:`SideInputs` and
a key of ``Options`` (this file holds the two equal), and nothing in between changes.
"""

from __future__ import annotations

from dataclasses import fields

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
