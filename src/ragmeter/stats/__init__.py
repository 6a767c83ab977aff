"""Aggregation and statistics over per-query values.

``compare`` (runs against a baseline: CIs, paired tests, corrections, effect sizes),
``all_pairs`` (every run against every other, Tukey's HSD), ``seed_summaries`` (mean ± CI
across seeds or folds of one system) and the paired tests, bootstrap and corrections are
imported on first use.
"""

from typing import TYPE_CHECKING, Any

from ragmeter.stats.aggregate import Aggregate, aggregate

if TYPE_CHECKING:
    from ragmeter.stats.agreement import (
        ConfusionMatrix,
        Correlation,
        cohen_kappa,
        confusion_matrix,
        kendall_tau_b,
        krippendorff_alpha,
        spearman_rho,
    )

#: lazily imported names → their module (comparison reads an evaluation.Evaluation, a layer
#: above; the agreement measures are not needed by an evaluation, which imports this package)
_LAZY = {
    "ConfusionMatrix": "agreement",
    "Correlation": "agreement",
    "cohen_kappa": "agreement",
    "confusion_matrix": "agreement",
    "kendall_tau_b": "agreement",
    "krippendorff_alpha": "agreement",
    "spearman_rho": "agreement",
    "compare": "comparison",
    "Comparison": "comparison",
    "Difference": "comparison",
    "MetricSummary": "comparison",
    "win_tie_loss": "comparison",
    "all_pairs": "allpairs",
    "AllPairs": "allpairs",
    "Pair": "allpairs",
    "tukey_hsd": "tukey",
    "TukeyHSD": "tukey",
    "seed_summaries": "seeds",
    "seed_interval": "seeds",
    "SeedSummary": "seeds",
    "PairedTest": "paired",
    "paired_t_test": "paired",
    "randomization_test": "paired",
    "wilcoxon_test": "paired",
    "cohens_d": "paired",
    "rank_biserial": "paired",
    "smallest_pvalue": "paired",
    "bootstrap_ci": "bootstrap",
    "paired_bootstrap_ci": "bootstrap",
    "min_bootstrap_n": "bootstrap",
    "adjust": "correction",
    "holm": "correction",
    "bonferroni": "correction",
    "benjamini_hochberg": "correction",
    "ppi_mean": "ppi",
    "ppi_paired_difference": "ppi",
    "PPIEstimate": "ppi",
    "ConfidenceSequence": "confseq",
    "confidence_sequence": "confseq",
    "paired_difference_sequence": "confseq",
    "difference_from_reference": "confseq",
}

__all__ = [
    "Aggregate",
    "ConfusionMatrix",
    "Correlation",
    "aggregate",
    "cohen_kappa",
    "confusion_matrix",
    "kendall_tau_b",
    "krippendorff_alpha",
    "spearman_rho",
    *(name for name in _LAZY if _LAZY[name] != "agreement"),
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"ragmeter.stats.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'ragmeter.stats' has no attribute {name!r}")
