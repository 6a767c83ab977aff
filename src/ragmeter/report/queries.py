"""Compatibility name of :mod:`ragmeter.analysis.queries` (the analysis moved out of
``report``, which only renders)."""

from ragmeter.analysis.queries import (
    Missed,
    QuestionRow,
    SubquestionCoverage,
    WorstQuery,
    subquestion_coverage,
    worst_queries,
)

__all__ = [
    "Missed",
    "QuestionRow",
    "SubquestionCoverage",
    "WorstQuery",
    "subquestion_coverage",
    "worst_queries",
]
