"""Aggregation and statistics over per-query values."""

from ragmeter.stats.aggregate import Aggregate, aggregate
from ragmeter.stats.agreement import (
    ConfusionMatrix,
    Correlation,
    cohen_kappa,
    confusion_matrix,
    kendall_tau_b,
    spearman_rho,
)

__all__ = [
    "Aggregate",
    "ConfusionMatrix",
    "Correlation",
    "aggregate",
    "cohen_kappa",
    "confusion_matrix",
    "kendall_tau_b",
    "spearman_rho",
]
