"""Data model: runs, qrels and their aligned view."""

from ragmeter.core.align import Aligned, align
from ragmeter.core.data import Qrels, Run

__all__ = ["Aligned", "Qrels", "Run", "align"]
