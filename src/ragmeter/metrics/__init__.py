"""The built-in measure families: each module registers its families on import.

The registry (:mod:`ragmeter.measures`) imports a family's module on the first lookup of one
of its names (the table :data:`ragmeter.measures.catalogue.FAMILY_MODULES`), so an evaluation
of two ranking measures does not import the answer, coverage, span or nugget families; a
module of this package is also imported on first use of its attribute here
(``ragmeter.metrics.spans``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ragmeter.measures import REGISTRY, Family, Measure, parse_measure, parse_measures
from ragmeter.measures.catalogue import MODULES

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


def __getattr__(name: str) -> ModuleType:
    if f"{__name__}.{name}" in MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
