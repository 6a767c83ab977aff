"""Compatibility name of :mod:`ragmeter.evaluation.sweep` (cutoff sweeps)."""

from ragmeter.evaluation.sweep import Sweep, expand, parse_ks, sweep, sweep_evaluation, sweepable

__all__ = ["Sweep", "expand", "parse_ks", "sweep", "sweep_evaluation", "sweepable"]
