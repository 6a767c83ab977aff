"""Compatibility name of :mod:`ragmeter.measures` (the measure spec moved below ``core``)."""

from ragmeter.measures import (
    BUDGET,
    MIN_GEO_MEAN,
    REGISTRY,
    Aggregation,
    Aligned,
    CutoffKind,
    Family,
    FloatArray,
    Measure,
    Param,
    Registry,
    parse_measure,
    parse_measures,
    register,
)

__all__ = [
    "BUDGET",
    "MIN_GEO_MEAN",
    "REGISTRY",
    "Aggregation",
    "Aligned",
    "CutoffKind",
    "Family",
    "FloatArray",
    "Measure",
    "Param",
    "Registry",
    "parse_measure",
    "parse_measures",
    "register",
]
