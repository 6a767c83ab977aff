"""Python mappings: ``{qid: {doc_id: score}}`` runs, ``{qid: [doc_id, ...]}`` ordered runs,
and ``{qid: {doc_id: grade}}`` / ``{qid: [relevant ids]}`` qrels (the pytrec_eval / ranx shapes).

Thin wrappers over the core constructors, so that every input shape has a reader in
:mod:`ragmeter.io`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError


def run_from_dict(
    data: Mapping[str, Mapping[str, float] | Sequence[str]],
    *,
    name: str = "run",
    source: str = "<dict>",
) -> Run:
    """A run from ``{qid: {doc_id: score}}`` (score order) or ``{qid: [doc_id, ...]}``
    (given order, rank 1 first). Mixing the two shapes is an error."""
    shapes = {_shape(v, str(q), source) for q, v in data.items()}
    if len(shapes) > 1:
        raise InputError(
            "some queries map to {doc: score} and others to [doc, ...]; expected one shape",
            source=source,
        )
    if shapes == {"list"}:
        return Run.from_lists(data, name=name, source=source)  # type: ignore[arg-type]
    return Run.from_dict(data, name=name, source=source)  # type: ignore[arg-type]


def qrels_from_dict(
    data: Mapping[str, Mapping[str, int] | Iterable[str]],
    *,
    name: str = "qrels",
    source: str = "<dict>",
) -> Qrels:
    """Qrels from ``{qid: {doc_id: grade}}`` or ``{qid: [relevant doc ids]}`` (grade 1)."""
    for q, v in data.items():
        _shape(v, str(q), source)
    return Qrels.from_dict(data, name=name, source=source)


def _shape(value: Any, qid: str, source: str) -> str:
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if not isinstance(item, str | int) or isinstance(item, bool):
                raise InputError(
                    f"query {qid!r}: element {i} is {type(item).__name__}; expected a doc id "
                    "(a string)",
                    source=source,
                    field=qid,
                )
        return "list"
    raise InputError(
        f"query {qid!r} maps to {type(value).__name__}; expected {{doc_id: value}} or a list "
        "of doc ids",
        source=source,
        field=qid,
    )
