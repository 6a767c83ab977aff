"""pandas and Polars DataFrames (and Arrow tables) with named columns.

The column names are those of :mod:`ragmeter.io._columns` (``query_id``/``qid``,
``doc_id``/``docid``, ``score`` or ``rank``, ``relevance``/``grade``…). pandas and Polars are
optional: they are never imported here; a frame is recognised by its type's module and
converted column by column through Arrow, so an unconvertible column is named in the error.
A pandas index with names (e.g. after ``set_index("qid")``) is read as columns.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError, import_extra
from ragmeter.io import _columns as cols
from ragmeter.io.tabular import qrels_table, run_table


def _library(frame: Any) -> str:
    module = type(frame).__module__.split(".", 1)[0]
    if isinstance(frame, pa.Table):
        return "arrow"
    if module in ("pandas", "polars"):
        return module
    raise InputError(
        f"{type(frame).__name__} is not a DataFrame; expected a pandas or Polars DataFrame "
        "or an Arrow table",
        source="<frame>",
    )


def frame_to_table(frame: Any, *, source: str = "<frame>") -> pa.Table:
    """A pandas / Polars DataFrame (or an Arrow table) as an Arrow table, column by column."""
    library = _library(frame)
    if library == "arrow":
        table: pa.Table = frame
        return table
    if library == "pandas":
        if any(n is not None for n in frame.index.names):
            frame = frame.reset_index()
        columns = {}
        for name in frame.columns:
            series = frame[name]
            try:
                columns[str(name)] = pa.array(series, from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise InputError(
                    f"cannot convert column (dtype {series.dtype}): {exc}; expected strings "
                    "or numbers",
                    source=source,
                    field=str(name),
                ) from None
        return pa.table(columns) if columns else pa.table({})
    columns = {}
    for name in frame.columns:
        try:
            columns[str(name)] = frame[name].to_arrow()
        except Exception as exc:  # polars raises several exception types
            raise InputError(
                f"cannot convert column: {exc}", source=source, field=str(name)
            ) from None
    return pa.table(columns) if columns else pa.table({})


def run_from_frame(frame: Any, *, name: str = "run", source: str = "<frame>") -> Run:
    """A run from a DataFrame with query id, doc id and score (or rank) columns.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [1.0, 2.0]})
        >>> run_from_frame(df).ranked()
        {'q1': ['b', 'a']}
    """
    return cols.run_from_table(frame_to_table(frame, source=source), source=source, name=name)


def qrels_from_frame(frame: Any, *, name: str = "qrels", source: str = "<frame>") -> Qrels:
    """Qrels from a DataFrame with query id, doc id and relevance (grade) columns."""
    return cols.qrels_from_table(frame_to_table(frame, source=source), source=source, name=name)


def run_to_pandas(run: Run) -> Any:
    """``run`` as a pandas DataFrame ``query_id, doc_id, rank, score`` (+ ``text``)."""
    import_extra("pandas", feature="run_to_pandas()", package="pandas", extra="frames")
    return run_table(run).to_pandas()


def qrels_to_pandas(qrels: Qrels) -> Any:
    """``qrels`` as a pandas DataFrame ``query_id, doc_id, relevance``."""
    import_extra("pandas", feature="qrels_to_pandas()", package="pandas", extra="frames")
    return qrels_table(qrels).to_pandas()


def run_to_polars(run: Run) -> Any:
    """``run`` as a Polars DataFrame ``query_id, doc_id, rank, score`` (+ ``text``)."""
    pl = import_extra("polars", feature="run_to_polars()", package="polars", extra="frames")

    return pl.from_arrow(run_table(run))


def qrels_to_polars(qrels: Qrels) -> Any:
    """``qrels`` as a Polars DataFrame ``query_id, doc_id, relevance``."""
    pl = import_extra("polars", feature="qrels_to_polars()", package="polars", extra="frames")

    return pl.from_arrow(qrels_table(qrels))


__all__ = [
    "frame_to_table",
    "qrels_from_frame",
    "qrels_to_pandas",
    "qrels_to_polars",
    "run_from_frame",
    "run_to_pandas",
    "run_to_polars",
]
