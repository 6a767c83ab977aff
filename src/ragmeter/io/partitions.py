"""Runs and qrels partitioned by query: a folder, or a glob, of files holding some queries each.

A partitioned input is what Spark, Dask, Ray Data or a sharded retriever writes:
``run/part-0000.parquet``, ``run/part-0001.parquet`` … (or TREC files, or any one format
ragmeter reads), each query's lines in one partition. :meth:`Partitions.find` lists them:

* a **folder**: every file below it, subfolders included (hive-style ``bucket=3/`` folders
  are walked; their ``key=value`` names are not read as columns), leaving out names that begin
  with ``.`` or ``_`` (``_SUCCESS``, ``_metadata``, ``.crc`` files);
* a **glob** (``runs/bm25/part-*.parquet``, ``**`` for any depth): the files it matches.

Any other listed name that is not a readable regular file (a link to a missing file, as an
unmounted share leaves, a link to a folder, a pipe) is a :class:`PartitionError` naming it:
left out, its queries would be scored as absent. An empty partition (0 bytes, or a Parquet
file of no rows, as Spark and Dask write) holds no queries, with a note in the warnings.

Partitions are listed in a stable order (their paths below the folder, or the glob's matches,
sorted), all in one format (by extension, or ``format=``), and each is read by the format's
reader: the same checks and messages, naming the partition's file, line and field. A query in
two partitions is a :class:`PartitionError` naming both files. The run's name is the folder's
name (or the glob as given), not each file's.

:func:`read_partitioned_run` and :func:`read_partitioned_qrels` join the partitions into one
:class:`~ragmeter.core.data.Run` / :class:`~ragmeter.core.data.Qrels` (queries in byte
order, as the readers give them); the evaluation reads a partitioned run one partition at a
time instead (:mod:`ragmeter.evaluation.partitioned`), holding one partition in memory.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from ragmeter import _accel
from ragmeter.core.data import IntArray, Qrels, Run
from ragmeter.errors import InputError

# their home is io._common (every reader asks, few read partitions); named here as before
from ragmeter.io._common import GLOB_CHARS as GLOB_CHARS
from ragmeter.io._common import is_partitioned as is_partitioned
from ragmeter.io.formats import FORMATS_REGISTRY

_D = TypeVar("_D", Run, Qrels)

PathLike = str | os.PathLike[str]


class PartitionError(InputError):
    """A partitioned input that cannot be read as one: empty, mixed formats, or a query in
    two partitions."""


def _hidden(parts: Sequence[str]) -> bool:
    return any(part.startswith((".", "_")) for part in parts)


def _unreadable(path: Path) -> PartitionError:
    """The error of a listed name that is not a regular file: leaving it out would drop its
    queries without a word (a link into an unmounted share reads as absent queries)."""
    if path.is_symlink():
        target = os.readlink(path)
        if path.is_dir():
            what = f"is a link to a folder ({target}); partition folders are not followed"
            return PartitionError(f"{what}: give the folder itself", source=str(path))
        if not path.exists():
            return PartitionError(
                f"is a link to a file that does not exist ({target}); its queries cannot be "
                "read (an unmounted share?)",
                source=str(path),
            )
    return PartitionError(
        "is not a regular file; a partition folder holds partition files (names beginning "
        "with '.' or '_' are left out)",
        source=str(path),
    )


def _folder_files(root: Path) -> list[Path]:
    found: list[tuple[tuple[str, ...], Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not _hidden([d])]
        for d in dirnames:
            if Path(dirpath, d).is_symlink():  # os.walk would silently not enter it
                raise _unreadable(Path(dirpath, d))
        for f in filenames:
            path = Path(dirpath, f)
            if _hidden([f]):
                continue
            if not path.is_file():
                raise _unreadable(path)
            found.append((path.relative_to(root).parts, path))
    return [p for _, p in sorted(found)]


def _glob_files(pattern: str) -> list[Path]:
    found = []
    for match in sorted(glob.glob(pattern, recursive=True)):
        path = Path(match)
        if _hidden([path.name]) or (path.is_dir() and not path.is_symlink()):
            continue  # a pattern may match folders too (``**``)
        if not path.is_file():
            raise _unreadable(path)
        found.append(path)
    return found


@dataclass(frozen=True)
class Partitions:
    """The partition files of one input, in order, with their format and the input's name.

    Attributes:
        source: the folder or glob as given.
        paths: the partition files, in the stable order described in the module docstring.
        format: the format name of every partition (see :mod:`ragmeter.io.formats`).
        name: the run's (or qrels') name: the folder's name, or the glob as given.
    """

    source: str
    paths: tuple[Path, ...]
    format: str
    name: str

    @classmethod
    def find(
        cls, path: PathLike, *, format: str | None = None, name: str | None = None
    ) -> Partitions:
        """The partitions of the folder or glob ``path``; :class:`PartitionError` when there
        are none or they mix formats."""
        source = str(path)
        root = Path(path)
        if root.is_dir():
            paths = _folder_files(root)
            default_name = root.resolve().name
            if not paths:
                raise PartitionError(
                    "is a directory; expected a file, or a folder of partition files "
                    "(this one holds none)",
                    source=source,
                )
        else:
            paths = _glob_files(source)
            default_name = source
            if not paths:
                raise PartitionError("no file matches this pattern", source=source)
        formats = {p: FORMATS_REGISTRY.for_path(p, format).name for p in paths}
        kinds = sorted(set(formats.values()))
        if len(kinds) > 1:
            examples = ", ".join(
                f"{next(p for p, f in formats.items() if f == k)} ({k})" for k in kinds
            )
            raise PartitionError(
                f"partitions mix formats: {examples}; give one format per partitioned input",
                source=source,
                field="format",
            )
        return cls(source, tuple(paths), kinds[0], name or default_name)

    def __len__(self) -> int:
        return len(self.paths)

    def only(self, index: int) -> Partitions:
        """Partition ``index`` alone (what one task needs to read it)."""
        return replace(self, paths=(self.paths[index],))

    def read_run(self, index: int) -> Run:
        """The run of partition ``index`` (named as the whole input); an empty partition
        (see :func:`is_empty_partition`) holds no queries, with a note."""
        empty = Run.from_lists({}, name=self.name)
        return self._read(index, empty, FORMATS_REGISTRY.get(self.format).read_run)

    def read_qrels(self, index: int) -> Qrels:
        """The qrels of partition ``index`` (an empty partition: none, with a note)."""
        empty = Qrels.from_dict({}, name=self.name)
        return self._read(index, empty, FORMATS_REGISTRY.get(self.format).read_qrels)

    def _read(self, index: int, empty: _D, read: Callable[[Path, str], _D]) -> _D:
        """Partition ``index`` read by ``read`` (``empty``, with a note, for an empty one)."""
        path = self.paths[index]
        if is_empty_partition(path, self.format):
            return replace(empty, warnings=(_empty_note(path),))
        data = read(path, self.name)
        _accel.check_large_input(len(data), str(path))
        return data

    def runs(self) -> Iterator[Run]:
        """The partitions' runs, one at a time, in order."""
        for i in range(len(self)):
            yield self.read_run(i)

    def repeated(self, query_id: str, first: int, again: int) -> PartitionError:
        """The error of a query found in partitions ``first`` and ``again``."""
        return PartitionError(
            f"query '{query_id}' is in two partitions, {self.paths[first]} and "
            f"{self.paths[again]}; a partitioned input holds each query in one partition",
            source=self.source,
        )


def is_empty_partition(path: Path, format: str) -> bool:
    """Whether ``path`` is an empty partition: a file of 0 bytes, or a Parquet file of no
    rows (what Spark and Dask write for a partition that received none). A file given on its
    own is refused when empty; in a partitioned input, it holds no queries."""
    try:
        if path.stat().st_size == 0:
            return True
    except OSError:
        return False  # the reader names the file and the reason
    if format != "parquet":
        return False
    import pyarrow.parquet as pq

    try:
        return bool(pq.ParquetFile(path).metadata.num_rows == 0)
    except (OSError, pa.ArrowException):
        return False  # not Parquet: the reader says so


def _empty_note(path: Path) -> str:
    return f"partition {path} is empty: it holds no queries"


class QueryOwners:
    """Which partition holds each query: :meth:`claim` raises when a query comes back."""

    def __init__(self, partitions: Partitions) -> None:
        self.partitions = partitions
        self._owner: dict[str, int] = {}

    def claim(self, query_ids: Sequence[str], index: int) -> None:
        """Record partition ``index``'s queries; :class:`PartitionError` on a repeat."""
        owner = self._owner
        for q in query_ids:
            held = owner.setdefault(q, index)
            if held != index:
                raise self.partitions.repeated(q, held, index)


def _segments(
    parts: Sequence[Run | Qrels],
) -> tuple[list[str], IntArray, IntArray, IntArray]:
    """The parts' query ids in byte order, each query's row start and length in the
    concatenation of the parts' rows, and the permutation of the parts' queries into it."""
    qids: list[str] = [q for part in parts for q in part.query_ids.tolist()]
    bases = np.cumsum([0] + [int(p.offsets[-1]) for p in parts])
    empty = np.zeros(0, dtype=np.int64)
    starts = np.concatenate(
        [empty] + [p.offsets[:-1] + b for p, b in zip(parts, bases[:-1], strict=True)]
    )
    lengths = np.concatenate([empty] + [np.diff(p.offsets) for p in parts])
    perm = np.asarray(sorted(range(len(qids)), key=qids.__getitem__), dtype=np.int64)
    return [qids[i] for i in perm.tolist()], starts[perm], lengths[perm], perm


def _rows(starts: IntArray, lengths: IntArray) -> tuple[IntArray, IntArray]:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    rows = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]), dtype=np.int64)
    return offsets, rows


def _strings(arrays: Sequence[pa.Array | None], lengths: Sequence[int]) -> pa.Array:
    """One string array of ``arrays`` (``None``: that many nulls)."""
    typed = [a for a in arrays if a is not None]
    kind = pa.large_string() if any(pa.types.is_large_string(a.type) for a in typed) else None
    kind = kind or pa.string()
    out = [
        (a if a.type == kind else a.cast(kind)) if a is not None else pa.nulls(n, kind)
        for a, n in zip(arrays, lengths, strict=True)
    ]
    return pa.concat_arrays(out) if out else pa.array([], type=kind)


def _check_disjoint(partitions: Partitions, parts: Sequence[Run | Qrels]) -> None:
    owners = QueryOwners(partitions)
    for i, part in enumerate(parts):
        owners.claim(part.query_ids.tolist(), i)


def _joined(
    partitions: Partitions, parts: Sequence[Run] | Sequence[Qrels]
) -> tuple[dict[str, Any], IntArray, IntArray, list[int]]:
    """The columns a joined run and joined qrels share (query ids in byte order, offsets,
    doc ids, name, warnings), the source row of each joined row, the source position of
    each joined query, and the parts' sizes."""
    _check_disjoint(partitions, parts)
    qids, starts, lengths, perm = _segments(parts)
    offsets, rows = _rows(starts, lengths)
    sizes = [len(p) for p in parts]
    shared = {
        "query_ids": np.array(qids, dtype=object),
        "offsets": offsets,
        "doc_ids": _accel.take_strings(_strings([p.doc_ids for p in parts], sizes), rows),
        "name": partitions.name,
        "warnings": tuple(w for p in parts for w in p.warnings),
    }
    return shared, rows, perm, sizes


def join_runs(partitions: Partitions, parts: Sequence[Run]) -> Run:
    """One run of the partitions' runs ``parts`` (queries in byte order)."""
    shared, rows, perm, sizes = _joined(partitions, parts)
    cutoffs = None
    if any(p.cutoffs is not None for p in parts):
        per_query = [
            p.cutoffs if p.cutoffs is not None else np.full(p.n_queries, -1, dtype=np.int64)
            for p in parts
        ]
        cutoffs = np.concatenate(per_query)[perm]
    texts = None
    if any(p.texts is not None for p in parts):
        texts = _accel.take_strings(_strings([p.texts for p in parts], sizes), rows)
    return Run(
        **shared,
        scores=np.concatenate([p.scores for p in parts])[rows],
        cutoffs=cutoffs,
        texts=texts,
        tag=next((p.tag for p in reversed(parts) if p.tag is not None), None),
    )


def join_qrels(partitions: Partitions, parts: Sequence[Qrels]) -> Qrels:
    """One qrels of the partitions' qrels ``parts`` (queries in byte order)."""
    shared, rows, _, _ = _joined(partitions, parts)
    return Qrels(**shared, grades=np.concatenate([p.grades for p in parts])[rows])


def read_partitioned_run(
    path: PathLike, *, format: str | None = None, name: str | None = None
) -> Run:
    """The run of the partitions at ``path`` (a folder or a glob), joined in memory."""
    partitions = Partitions.find(path, format=format, name=name)
    return join_runs(partitions, list(partitions.runs()))


def read_partitioned_qrels(
    path: PathLike, *, format: str | None = None, name: str | None = None
) -> Qrels:
    """The qrels of the partitions at ``path`` (a folder or a glob), joined in memory."""
    partitions = Partitions.find(path, format=format, name=name)
    parts = [partitions.read_qrels(i) for i in range(len(partitions))]
    return join_qrels(partitions, parts)
