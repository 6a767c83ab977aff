"""Per-sample evaluation: answer samples scored by the registered per-sample families
(:mod:`ragmeter.metrics.answer_text`), as an :class:`Evaluation` like any other."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ragmeter.errors import MeasureError
from ragmeter.evaluation.engine import compute, resolve_measures
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.measures import Measure

if TYPE_CHECKING:
    from ragmeter.io.answers import AnswerSample


def evaluate_samples(
    samples: Sequence[AnswerSample],
    measures: Iterable[str | Measure] | str,
    *,
    name: str = "answers",
) -> Evaluation:
    """Score each sample with every measure (one row per sample, its id as query id).

    Example:
        >>> from ragmeter.io.answers import AnswerSample
        >>> s = AnswerSample("q1", "q", ("Paris is in France",), "Paris", "Paris")
        >>> evaluate_samples([s], ["token_f1", "exact_match"]).run.means()
        {'token_f1': 1.0, 'exact_match': 1.0}
    """
    from ragmeter.metrics.answer_text import SampleView

    measure_list = resolve_measures(measures, default_k=1)
    other = [str(m) for m in measure_list if "samples" not in m.needs]
    if other:
        raise MeasureError(
            f"{', '.join(other)}: not per-sample answer measures; evaluate runs with evaluate()"
        )
    view = SampleView(tuple(samples))
    result = RunResult(
        name=name,
        query_ids=view.query_ids,
        measures=tuple(measure_list),
        values=compute(view, measure_list),  # type: ignore[arg-type]
    )
    return Evaluation((result,), tuple(measure_list))
