"""Qrels, queries and documents of an ir_datasets dataset: ``irds:DATASET_ID``.

``read_qrels("irds:msmarco-passage/dev/small")`` (and ``--qrels irds:…`` on the command line;
``ragmeter judge --queries irds:… --corpus irds:…`` reads its queries and documents)
reads the dataset's qrels through ir_datasets (an optional dependency: ``pip install
ir_datasets``), which fetches and caches the dataset's files on first use as it always does;
ragmeter itself downloads nothing. A dataset neither cached nor downloadable (no network) is
one error naming it and ir_datasets' cache folder. A dataset whose qrels hold several
judgments of one document for one query (diversity qrels: one per subtopic) is refused,
naming them: read those with ``--judgments``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragmeter.core.data import Qrels

if TYPE_CHECKING:
    from ragmeter.core.judgments import Corpus
from ragmeter.errors import InputError

PREFIX = "irds:"


def is_irds(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names an ir_datasets dataset (``irds:DATASET_ID``)."""
    return isinstance(path, str | os.PathLike) and os.fspath(path).startswith(PREFIX)


def load_dataset(spec: str | os.PathLike[str]) -> Any:
    """The ir_datasets dataset ``irds:DATASET_ID`` names."""
    text = os.fspath(spec)
    dataset_id = text[len(PREFIX) :]
    try:
        import ir_datasets
    except ImportError:
        raise InputError(
            f"{text}: reading ir_datasets needs the ir_datasets package (pip install ir_datasets)",
            source=text,
        ) from None
    if not dataset_id:
        raise InputError("irds: names no dataset; expected irds:DATASET_ID", source=text)
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(
            f"ir_datasets has no dataset {dataset_id!r} (see `ir_datasets list`)", source=text
        ) from None


def cache_folder() -> Path:
    """Where ir_datasets keeps the files it downloads: ``$IR_DATASETS_HOME``, else
    ``~/.ir_datasets`` (ir_datasets' own rule; read here, not created)."""
    return Path(os.environ.get("IR_DATASETS_HOME") or Path.home() / ".ir_datasets")


def _records(spec: str, records: Callable[[], Iterable[Any]]) -> Iterator[Any]:
    """The records ``records()`` gives (ir_datasets fetches a dataset's files as they are
    first read); a download that fails is one :class:`InputError` naming the dataset and
    ir_datasets' cache, not the traceback of its downloader."""
    try:
        yield from records()
    except (OSError, RuntimeError) as exc:  # requests' errors are OSErrors; all mirrors: Runtime
        reason = " ".join(str(exc.args[0] if exc.args else exc).split())[:300]
        raise InputError(
            f"ir_datasets dataset {spec[len(PREFIX) :]!r} could not be downloaded, and its "
            f"files are not in ir_datasets' cache ({cache_folder()}): {reason}; fetch it where "
            "there is network and copy that folder (or set IR_DATASETS_HOME)",
            source=spec,
        ) from None


def read_irds_qrels(spec: str | os.PathLike[str], *, name: str | None = None) -> Qrels:
    """The qrels of the ir_datasets dataset ``irds:DATASET_ID``."""
    text = os.fspath(spec)
    dataset = load_dataset(text)
    if not dataset.has_qrels():
        raise InputError(f"ir_datasets dataset {text[len(PREFIX) :]!r} has no qrels", source=text)
    queries: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for row, qrel in enumerate(_records(text, dataset.qrels_iter), start=1):
        key = (str(qrel.query_id), str(qrel.doc_id))
        if key in seen:
            raise InputError(
                f"qrels row {row} judges doc {key[1]!r} for query {key[0]!r} again (first: row "
                f"{seen[key]}); several judgments per document are diversity qrels: read them "
                "with --judgments",
                source=text,
            )
        seen[key] = row
        queries.append(key[0])
        docs.append(key[1])
        grades.append(int(qrel.relevance))
    return Qrels.from_columns(
        pa.array(queries, type=pa.string()),
        pa.array(docs, type=pa.string()),
        np.asarray(grades, dtype=np.int64),
        name=name or text,
        source=text,
    )


def read_irds_queries(spec: str | os.PathLike[str]) -> dict[str, str]:
    """``{query_id: text}`` of the dataset (its ``text`` field, else its first text field)."""
    dataset = load_dataset(spec)
    return {str(q.query_id): _text(q) for q in _records(os.fspath(spec), dataset.queries_iter)}


def read_irds_docs(spec: str | os.PathLike[str]) -> dict[str, str]:
    """``{doc_id: text}`` of the dataset (its ``text`` field, else its first text field)."""
    dataset = load_dataset(spec)
    return {str(d.doc_id): _text(d) for d in _records(os.fspath(spec), dataset.docs_iter)}


def read_irds_texts(spec: str | os.PathLike[str], what: str = "docs") -> Corpus:
    """The dataset's queries (``what="queries"``) or documents as a :class:`Corpus`, the
    form the judges read texts in."""
    from ragmeter.core.judgments import Corpus

    texts = read_irds_queries(spec) if what == "queries" else read_irds_docs(spec)
    return Corpus.from_dict(texts, name=os.fspath(spec))


def _text(record: Any) -> str:
    if hasattr(record, "default_text"):
        return str(record.default_text())
    return str(getattr(record, "text", record[1]))
