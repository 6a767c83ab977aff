"""Compatibility name of :mod:`ragmeter.analysis.diagnosis` (the analysis moved out of
``report``, which only renders)."""

from ragmeter.analysis.diagnosis import Diagnosis, MissedPassage, QueryDiagnosis, diagnose

__all__ = ["Diagnosis", "MissedPassage", "QueryDiagnosis", "diagnose"]
