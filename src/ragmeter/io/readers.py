"""Format dispatch: read a run or qrels from any supported file by its extension."""

from __future__ import annotations

import os

from ragmeter.core.data import Qrels, Run
from ragmeter.io.trec import read_trec_qrels, read_trec_run


def read_run(path: str | os.PathLike[str], *, name: str | None = None) -> Run:
    """Read a run: TREC text by default."""
    return read_trec_run(path, name=name)


def read_qrels(path: str | os.PathLike[str], *, name: str | None = None) -> Qrels:
    """Read qrels: TREC text by default."""
    return read_trec_qrels(path, name=name)
