"""Passage lengths for token budgets (``ra_nwg@512t``): a corpus and a token counter.

A corpus gives each doc id a length in tokens, from a ``length`` field (used as given) or by
counting the tokens of a ``text`` field:

* JSONL / JSON rows ``{"id": ..., "text": ...}`` or ``{"id": ..., "length": 123}``;
* TSV / CSV / Parquet with an ``id`` column and a ``text`` or ``length`` column.

Id columns also answer to ``_id``, ``doc_id``, ``docid``, ``docno``, ``pid``; text to
``contents``, ``passage``, ``body``; length to ``tokens``, ``n_tokens``, ``num_tokens``.
When a row has both, the given length wins. Only the ``text`` is counted (not a ``title``).

Token counters (``counter=``, ``--tokenizer``):

* ``whitespace`` (default): ``len(text.split())``, Python's whitespace split;
* ``tiktoken:<encoding>`` (e.g. ``tiktoken:cl100k_base``): needs the ``tiktoken`` package;
* ``hf:<path>``: a Hugging Face tokenizer — a ``tokenizer.json`` file (needs ``tokenizers``)
  or a directory / hub name (needs ``transformers``); special tokens are not counted.

The optional packages are imported only when asked for; a missing one is a clear error.
"""

from __future__ import annotations

import csv
import importlib
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.errors import InputError, MissingInputError
from ragmeter.io._common import PathLike, csv_cells, decode, format_suffix, read_bytes

IntArray = npt.NDArray[np.int64]
TokenCounter = Callable[[Sequence[str]], IntArray]

ID_NAMES = ("id", "_id", "doc_id", "docid", "docno", "pid")
TEXT_NAMES = ("text", "contents", "passage", "body")
LENGTH_NAMES = ("length", "tokens", "n_tokens", "num_tokens")


def _whitespace(texts: Sequence[str]) -> IntArray:
    return np.fromiter((len(t.split()) for t in texts), dtype=np.int64, count=len(texts))


def make_token_counter(spec: str | None = None) -> TokenCounter:
    """The token counter named by ``spec`` (see the module docstring)."""
    name = (spec or "whitespace").strip()
    if name in ("whitespace", "ws", ""):
        return _whitespace
    kind, sep, arg = name.partition(":")
    if sep and kind == "tiktoken" and arg:
        return _tiktoken(arg)
    if sep and kind == "hf" and arg:
        return _hf(arg)
    raise MissingInputError(
        f"unknown tokenizer '{name}'; use whitespace, tiktoken:<encoding> or hf:<path>"
    )


def _package(name: str, tokenizer: str, instead: str = "") -> Any:
    """The package ``name``, which the tokenizer ``tokenizer`` needs (``instead``: what else
    would do, for the error)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise MissingInputError(
            f"tokenizer '{tokenizer}' needs the {name} package (pip install {name}){instead}"
        ) from None


def _tiktoken(encoding: str) -> TokenCounter:
    enc = _package("tiktoken", f"tiktoken:{encoding}").get_encoding(encoding)

    def count(texts: Sequence[str]) -> IntArray:
        return np.array([len(t) for t in enc.encode_ordinary_batch(list(texts))], np.int64)

    return count


def _hf(path: str) -> TokenCounter:
    if path.endswith(".json") and Path(path).is_file():
        tok = _package("tokenizers", f"hf:{path}").Tokenizer.from_file(path)

        def count_file(texts: Sequence[str]) -> IntArray:
            encoded = tok.encode_batch(list(texts), add_special_tokens=False)
            return np.array([len(e.ids) for e in encoded], dtype=np.int64)

        return count_file
    instead = ", or give the path of a tokenizer.json file (needs tokenizers)"
    auto = _package("transformers", f"hf:{path}", instead).AutoTokenizer.from_pretrained(path)

    def count_auto(texts: Sequence[str]) -> IntArray:
        ids = auto(list(texts), add_special_tokens=False)["input_ids"]
        return np.array([len(x) for x in ids], dtype=np.int64)

    return count_auto


@dataclass(frozen=True, eq=False)
class PassageLengths:
    """Token length of each passage: ``doc_ids`` (unique) and ``lengths`` (≥ 0)."""

    doc_ids: pa.Array
    lengths: IntArray
    source: str = "<corpus>"

    @classmethod
    def from_dict(cls, lengths: dict[str, int], *, source: str = "<dict>") -> PassageLengths:
        """A corpus from ``{doc_id: length}``."""
        ids = pa.array([str(k) for k in lengths], type=pa.string())
        values = np.array([int(v) for v in lengths.values()], dtype=np.int64)
        return cls._checked(ids, values, source)

    @classmethod
    def from_texts(
        cls, texts: dict[str, str], *, counter: str | None = None, source: str = "<dict>"
    ) -> PassageLengths:
        """A corpus from ``{doc_id: text}``, counted with ``counter``."""
        ids = pa.array([str(k) for k in texts], type=pa.string())
        return cls._checked(ids, make_token_counter(counter)(list(texts.values())), source)

    @classmethod
    def _checked(cls, ids: pa.Array, lengths: IntArray, source: str) -> PassageLengths:
        if len(lengths) and int(lengths.min()) < 0:
            i = int(np.argmin(lengths))
            raise InputError(
                f"doc '{ids[i].as_py()}': negative length {int(lengths[i])}", source=source
            )
        import pyarrow.compute as pc

        codes = pc.dictionary_encode(ids).indices.to_numpy(zero_copy_only=False)
        if len(np.unique(codes)) != len(ids):
            first = np.zeros(len(ids), dtype=bool)
            _, where = np.unique(codes, return_index=True)
            first[where] = True
            i = int(np.flatnonzero(~first)[0])
            raise InputError(f"doc '{ids[i].as_py()}' appears twice", source=source)
        return cls(ids, lengths.astype(np.int64), source)

    def lookup(self, doc_ids: pa.Array) -> IntArray:
        """Length of each of ``doc_ids``; -1 where the corpus has none."""
        import pyarrow.compute as pc

        if not len(doc_ids):
            return np.zeros(0, dtype=np.int64)
        value_set = self.doc_ids
        if doc_ids.type != value_set.type:
            doc_ids = doc_ids.cast(pa.large_string())
            value_set = value_set.cast(pa.large_string())
        pos = pc.index_in(doc_ids, value_set=value_set)
        where = pos.to_numpy(zero_copy_only=False)
        found = ~pos.is_null().to_numpy(zero_copy_only=False)
        out = np.full(len(doc_ids), -1, dtype=np.int64)
        out[found] = self.lengths[where[found].astype(np.int64)]
        return out


def read_passage_lengths(path: PathLike, *, counter: str | None = None) -> PassageLengths:
    """Read passage lengths from a corpus file (JSONL/JSON, TSV/CSV or Parquet)."""
    source = str(path)
    suffix = format_suffix(source)
    data = read_bytes(path, lines=suffix not in (".parquet", ".json"))
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pq.read_table(pa.BufferReader(data))
        columns = {name: table.column(name).to_pylist() for name in table.column_names}
        return _from_columns(columns, source, counter)
    text = decode(data, source)
    if suffix.endswith((".tsv", ".csv")):
        delimiter = "\t" if suffix.endswith(".tsv") else ","
        reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
        with csv_cells(source, lambda: reader.reader.line_num):  # DictReader's lags a row
            rows = list(reader)
        names = list(reader.fieldnames or [])
        return _from_columns({n: [r.get(n) for r in rows] for n in names}, source, counter)
    from ragmeter.io._documents import load_json, load_jsonl

    doc = load_json(path) if suffix.endswith(".json") else load_jsonl(path)
    if doc.records is None:
        if isinstance(doc.value, dict):  # {doc_id: length} or {doc_id: text}
            value = doc.value
            if all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
                return PassageLengths.from_dict(value, source=source)
            if all(isinstance(v, str) for v in value.values()):
                return PassageLengths.from_texts(value, counter=counter, source=source)
        raise InputError("expected rows with an id and a text or length", source=source)
    return _from_records(doc.records, source, counter)


def _pick(names: Sequence[str], wanted: Sequence[str]) -> str | None:
    lowered = {n.lower(): n for n in names}
    for w in wanted:
        if w in lowered:
            return lowered[w]
    return None


def _from_records(
    records: list[tuple[Any, int | None]], source: str, counter: str | None
) -> PassageLengths:
    ids: list[str] = []
    lengths: list[int] = []
    texts: list[str] = []
    text_at: list[int] = []
    for record, line in records:
        if not isinstance(record, dict):
            raise InputError("expected an object per row", source=source, line=line)
        names = list(record)
        id_key = _pick(names, ID_NAMES)
        if id_key is None or record[id_key] is None:
            raise InputError(f"row without an id ({', '.join(ID_NAMES)})", source=source, line=line)
        ids.append(str(record[id_key]))
        length_key = _pick(names, LENGTH_NAMES)
        if length_key is not None and record[length_key] is not None:
            lengths.append(_length(record[length_key], source, line))
            continue
        text_key = _pick(names, TEXT_NAMES)
        if text_key is None or not isinstance(record[text_key], str):
            raise InputError(f"doc '{ids[-1]}': no text or length field", source=source, line=line)
        lengths.append(-1)
        texts.append(record[text_key])
        text_at.append(len(ids) - 1)
    values = np.array(lengths, dtype=np.int64)
    if texts:
        values[np.array(text_at, dtype=np.int64)] = make_token_counter(counter)(texts)
    return PassageLengths._checked(pa.array(ids, type=pa.string()), values, source)


def _from_columns(
    columns: dict[str, list[Any]], source: str, counter: str | None
) -> PassageLengths:
    names = list(columns)
    id_key = _pick(names, ID_NAMES)
    if id_key is None:
        raise InputError(f"no id column ({', '.join(ID_NAMES)}); have {names}", source=source)
    ids = ["" if v is None else str(v) for v in columns[id_key]]
    length_key = _pick(names, LENGTH_NAMES)
    if length_key is not None:
        values = np.array(
            [_length(v, source, i + 2) for i, v in enumerate(columns[length_key])], np.int64
        )
    else:
        text_key = _pick(names, TEXT_NAMES)
        if text_key is None:
            raise InputError(
                f"no text ({', '.join(TEXT_NAMES)}) or length ({', '.join(LENGTH_NAMES)}) "
                f"column; have {names}",
                source=source,
            )
        values = make_token_counter(counter)(
            ["" if v is None else str(v) for v in columns[text_key]]
        )
    return PassageLengths._checked(pa.array(ids, type=pa.string()), values, source)


def _length(value: Any, source: str, line: int | None) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"length {value!r} is not a number", source=source, line=line) from None
    if not number.is_integer() or number < 0:
        raise InputError(f"length {value!r} is not a whole number ≥ 0", source=source, line=line)
    if number > _MAX_LENGTH:
        raise InputError(
            f"length {value!r} is out of range; expected at most {_MAX_LENGTH} tokens",
            source=source,
            line=line,
        )
    return int(number)


#: the longest passage length read (what a 32-bit count holds; lengths are summed in 64 bits)
_MAX_LENGTH = 2**31 - 1
