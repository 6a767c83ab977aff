"""Reading gold answers: JSONL ``{"query_id": …, "answers": [ … ]}``, one query a line, as
NQ and TriviaQA ship them (``qid`` / ``id`` name the query too; a JSON array of such objects
in a ``.json`` file). Every answer is a string; a query listed twice is an error.
"""

from __future__ import annotations

from typing import Any

from ragmeter.core.gold_answers import GoldAnswers
from ragmeter.errors import InputError
from ragmeter.io.nuggets import _records, _text

#: the fields naming the query, in the order they are looked for
QUERY_FIELDS = ("query_id", "qid", "id")


def read_gold_answers(path: Any) -> GoldAnswers:
    """Read gold answers (see the module docstring); errors name the file, line and field."""
    records, source = _records(path)
    by_query: dict[str, tuple[str, ...]] = {}
    for record, line in records:
        q = _text(record, QUERY_FIELDS, source, line)
        if q in by_query:
            raise InputError(f"query '{q}' listed twice", source=source, line=line)
        if "answers" not in record:
            raise InputError("missing field", source=source, line=line, field="answers")
        answers = record["answers"]
        if not isinstance(answers, list):
            raise InputError(
                f"expected a list of strings, got {type(answers).__name__}",
                source=source,
                line=line,
                field="answers",
            )
        for i, answer in enumerate(answers):
            if not isinstance(answer, str):
                raise InputError(
                    f"expected a string, got {answer!r}",
                    source=source,
                    line=line,
                    field=f"answers[{i}]",
                )
        by_query[q] = tuple(answers)
    return GoldAnswers(by_query, source)
