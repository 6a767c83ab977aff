"""Aggregation and statistics over per-query values."""

from ragmeter.stats.aggregate import Aggregate, aggregate

__all__ = ["Aggregate", "aggregate"]
