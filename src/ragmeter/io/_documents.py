"""Loading JSON, JSONL and YAML documents, keeping the line where each record starts.

Every loader returns plain Python values; records (the elements of a top-level array, of a
``{"samples": [...]}`` array, or the lines of a JSONL file) come with their 1-based line number
so that later errors can point at them. Syntax errors carry the decoder's line and column.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, check_text, decode, read_bytes

_WS = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class Document:
    """A loaded document: its value, and its records with their lines when it has records.

    ``records`` is the list of ``(record, line)`` of a top-level array or of the array under a
    top-level ``"samples"`` key; ``None`` for any other shape (e.g. a ``{qid: {...}}`` map).
    """

    value: Any
    records: list[tuple[Any, int | None]] | None
    source: str


class LineDict(dict[Any, Any]):
    """A mapping read from YAML that remembers the line it started on."""

    line: int | None = None


def _json_error(exc: json.JSONDecodeError, source: str, line: int | None = None) -> InputError:
    return InputError(
        f"invalid JSON at column {exc.colno}: {exc.msg}",
        source=source,
        line=line if line is not None else exc.lineno,
    )


#: what a value nested deeper than the decoder follows is called (Python's recursion limit,
#: about 1,000 levels: no data file of ragmeter nests more than a few)
TOO_DEEP = "JSON nested too deeply (more than about 1,000 levels of arrays or objects)"


def too_deep(source: str, line: int | None = None, *, expected: str = "") -> InputError:
    """The error for a JSON value nested past the decoder's depth (a ``RecursionError``)."""
    return InputError(
        TOO_DEEP + (f"; expected {expected}" if expected else ""), source=source, line=line
    )


def loads(text: str, source: str, line: int | None = None) -> Any:
    """``json.loads``; a syntax error or over-deep nesting is an :class:`InputError` naming
    ``source`` and the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(exc, source, line) from None
    except RecursionError:
        raise too_deep(source, line) from None


def loads_finite(text: str, source: str, line: int | None = None) -> Any:
    """:func:`loads` for files ragmeter writes itself (sidecars, calibrations, queues): also
    refuses a number JSON does not allow — ``NaN``, ``Infinity``, ``1e400`` (out of a
    float's range) or an integer of thousands of digits — naming the field that holds it."""
    try:
        value = loads(text, source, line)
    except ValueError as exc:  # an integer past Python's digit limit: not a decode error
        if isinstance(exc, InputError):
            raise
        raise InputError(f"invalid JSON: {exc}", source=source, line=line) from None
    bad = _non_finite(value)
    if bad is not None:
        where, number = bad
        got = "NaN" if math.isnan(number) else "Infinity or a number beyond a float's range"
        raise InputError(
            f"expected a finite number, got {got}", source=source, line=line, field=where or None
        )
    return value


def _non_finite(value: Any) -> tuple[str, float] | None:
    """The dotted path (``a.b[2]``) and value of the first non-finite float in ``value``.

    Walked with a stack, not recursion: the decoder already bounds the depth (about 1,000)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return where, item
        if isinstance(item, dict):  # reversed: the first field is looked at first
            stack.extend(
                (f"{where}.{k}" if where else str(k), v) for k, v in reversed(item.items())
            )
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def load_json(path: PathLike) -> Document:
    """Load a JSON file; records of a top-level array (or ``"samples"`` array) get lines."""
    source = str(path)
    data = read_bytes(path, lines=False)  # one document, often on one line (json.dump)
    check_text(data, source, what="a JSON document")
    text = decode(data, source)
    value = loads(text, source)
    records: list[tuple[Any, int | None]] | None = None
    if isinstance(value, list):
        records = list(zip(value, _array_lines(text, _skip(text, 0)), strict=True))
    elif isinstance(value, dict) and isinstance(value.get("samples"), list):
        pos = _member_position(text, "samples")
        lines = _array_lines(text, pos) if pos is not None else [None] * len(value["samples"])
        records = list(zip(value["samples"], lines, strict=True))
    return Document(value, records, source)


def load_jsonl(path: PathLike) -> Document:
    """Load a JSON Lines file: one JSON value per non-blank line."""
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="one JSON object per line")
    return parse_jsonl(data, source)


def parse_jsonl(data: bytes, source: str) -> Document:
    """Parse JSON Lines ``data`` (already checked for a BOM and emptiness)."""
    text = decode(data, source)
    records: list[tuple[Any, int | None]] = []
    decoder = json.JSONDecoder()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value, end = decoder.raw_decode(line, _skip(line, 0))
        except json.JSONDecodeError as exc:
            raise _json_error(exc, source, number) from None
        except RecursionError:
            raise too_deep(source, number) from None
        rest = _skip(line, end)
        if rest != len(line):
            raise InputError(
                f"invalid JSON at column {rest + 1}: extra data after the value; "
                "expected one JSON value per line",
                source=source,
                line=number,
            )
        records.append((value, number))
    return Document([r for r, _ in records], records, source)


def first_jsonl_value(data: bytes, source: str) -> Any:
    """The value on the first non-blank line of JSON Lines ``data``."""
    for raw in data.split(b"\n"):
        if raw.strip():
            try:
                return json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                parse_jsonl(data, source)  # raises the precise error (line, column)
                raise  # pragma: no cover - parse_jsonl always raises here
    raise InputError("file is empty; expected one JSON object per line", source=source)


def load_yaml(path: PathLike) -> Document:
    """Load a YAML file (needs PyYAML: the ``yaml`` extra)."""
    source = str(path)
    data = read_bytes(path, lines=False)  # one document
    check_text(data, source, what="a YAML document")
    text = decode(data, source)
    try:
        import yaml
    except ImportError:  # pragma: no cover - depends on the environment
        from ragmeter.errors import install_hint

        raise InputError(
            f"reading YAML needs PyYAML; install it with: {install_hint('yaml')}",
            source=source,
        ) from None
    loader_base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(loader_base):  # type: ignore[misc,valid-type]
        pass

    def construct_map(loader: Any, node: Any) -> Any:
        mapping = LineDict()
        mapping.line = node.start_mark.line + 1
        yield mapping
        mapping.update(loader.construct_mapping(node, deep=True))

    Loader.add_constructor("tag:yaml.org,2002:map", construct_map)
    try:
        if "*" in text:  # only a document with aliases can expand
            check_aliases(yaml.parse(text, Loader=loader_base), source)
        value = yaml.load(text, Loader=Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        column = f" at column {mark.column + 1}" if mark is not None else ""
        raise InputError(
            f"invalid YAML{column}: {exc.problem or exc.context}", source=source, line=line
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", source=source) from None
    records: list[tuple[Any, int | None]] | None = None
    items = None
    if isinstance(value, list):
        items = value
    elif isinstance(value, dict) and isinstance(value.get("samples"), list):
        items = value["samples"]
    if items is not None:
        records = [(r, r.line if isinstance(r, LineDict) else None) for r in items]
    return Document(value, records, source)


#: the most nodes YAML aliases may add to a document once expanded. An alias repeats the
#: node it names, and aliases of nodes holding aliases multiply: nine lines of nine aliases
#: each expand to 9⁹ (387 million) nodes (a "billion laughs"), which exhausts memory long
#: before anything can be said about them. Real run, qrels and sample files repeat little.
ALIAS_BUDGET = 10_000


def check_aliases(events: Iterable[Any], source: str, budget: int = ALIAS_BUDGET) -> None:
    """Refuse a YAML document whose aliases would add more than ``budget`` nodes, or that
    refers to a node from inside itself, from its parser ``events``, before anything is
    built: each anchored node's expanded size is counted once, each alias adds it."""
    import yaml

    sizes: dict[str, int] = {}
    open_nodes: list[tuple[str | None, int]] = [(None, 0)]  # (anchor, expanded size so far)
    added = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            size = sizes.get(str(event.anchor))
            if size is None:
                raise InputError(
                    f"YAML alias *{event.anchor} refers to a node that contains it (or to no "
                    "node); expected plain data",
                    source=source,
                    line=_mark_line(event),
                )
            added += size
            if added > budget:
                raise InputError(
                    f"YAML aliases expand to more than {budget:,} nodes (at alias "
                    f"*{event.anchor}); expected plain data without repeated aliases",
                    source=source,
                    line=_mark_line(event),
                )
            anchor, n = open_nodes[-1]
            open_nodes[-1] = (anchor, n + size)
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                sizes[event.anchor] = 1
            anchor, n = open_nodes[-1]
            open_nodes[-1] = (anchor, n + 1)
        elif isinstance(event, yaml.CollectionStartEvent):
            open_nodes.append((event.anchor, 1))
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, size = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = size
            outer, n = open_nodes[-1]
            open_nodes[-1] = (outer, n + size)


def _mark_line(event: Any) -> int | None:
    mark = event.start_mark
    return None if mark is None else int(mark.line) + 1


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _array_lines(text: str, pos: int) -> list[int | None]:
    """Start line of each element of the (valid) JSON array at ``text[pos]``."""
    decoder = json.JSONDecoder()
    out: list[int | None] = []
    assert text[pos] == "["
    i = _skip(text, pos + 1)
    last_pos, last_line = 0, 1
    while text[i] != "]":
        last_line += text.count("\n", last_pos, i)
        last_pos = i
        out.append(last_line)
        _, i = decoder.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return out


def _member_position(text: str, key: str) -> int | None:
    """Position of the value of the last top-level ``key`` of a (valid) JSON object."""
    decoder = json.JSONDecoder()
    i = _skip(text, 0)
    if text[i] != "{":
        return None
    i = _skip(text, i + 1)
    found = None
    while text[i] != "}":
        name, i = decoder.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)  # past ':'
        if name == key:
            found = i
        _, i = decoder.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return found


__all__ = [
    "ALIAS_BUDGET",
    "Document",
    "LineDict",
    "check_aliases",
    "first_jsonl_value",
    "load_json",
    "load_jsonl",
    "load_yaml",
    "loads",
    "loads_finite",
    "parse_jsonl",
    "too_deep",
]
