"""Measure families and the registry that names them."""

from ragmeter.metrics.registry import REGISTRY, Family, Measure, parse_measure, parse_measures

__all__ = ["REGISTRY", "Family", "Measure", "parse_measure", "parse_measures"]
