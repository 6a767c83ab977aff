"""The built-in measure families: each module registers its families on import.

The registry (:mod:`ragmeter.measures`) imports this package on its first lookup.
"""

from ragmeter.measures import REGISTRY, Family, Measure, parse_measure, parse_measures
from ragmeter.metrics import (
    answer_text,
    containment,
    coverage,
    cwl,
    diversity,
    interop,
    nuggets,
    ragchecker,
    ranking,
    setwise,
    spans,
    trec,
    trec_measures,
    udcg,
)

__all__ = [
    "REGISTRY",
    "Family",
    "Measure",
    "answer_text",
    "containment",
    "coverage",
    "cwl",
    "diversity",
    "interop",
    "nuggets",
    "parse_measure",
    "parse_measures",
    "ragchecker",
    "ranking",
    "setwise",
    "spans",
    "trec",
    "trec_measures",
    "udcg",
]
