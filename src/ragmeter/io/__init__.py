"""Readers and writers, one module per format.

* :mod:`~ragmeter.io.readers` — :func:`read_run`, :func:`read_qrels`, :func:`read_samples`,
  :func:`write_run`, :func:`write_qrels`, :func:`as_run`, :func:`as_qrels`: dispatch on the
  file extension (or ``format=``).
* :mod:`~ragmeter.io.trec` — TREC run and qrels files.
* :mod:`~ragmeter.io.samples` — JSON / JSONL / YAML evaluation samples (seed 002 contract).
* :mod:`~ragmeter.io.jsonl` — runs and qrels as JSON row objects.
* :mod:`~ragmeter.io.tabular` — CSV, TSV and Parquet with named columns.
* :mod:`~ragmeter.io.frames` — pandas and Polars DataFrames (optional dependencies).
* :mod:`~ragmeter.io.dicts` — ``{qid: {doc: score}}`` and ``{qid: [docs]}`` mappings.

The names below are imported on first use, so ``import ragmeter.io`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.io.readers import (
        as_qrels,
        as_run,
        detect_format,
        read_qrels,
        read_run,
        read_samples,
        write_qrels,
        write_run,
    )
    from ragmeter.io.samples import Samples

__all__ = [
    "Samples",
    "as_qrels",
    "as_run",
    "detect_format",
    "read_qrels",
    "read_run",
    "read_samples",
    "write_qrels",
    "write_run",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ragmeter.io import readers

        return getattr(readers, name)
    raise AttributeError(f"module 'ragmeter.io' has no attribute {name!r}")
