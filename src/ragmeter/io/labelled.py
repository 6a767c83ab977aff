"""The human-labelled queries of a prediction-powered estimate, from a text file.

One query per line: its id, and optionally its inclusion probability ``π`` in (0, 1] (the
chance the sampling design had of choosing it, for stratified or active sampling; at least
:data:`~ragmeter.io.label_queue.MIN_INCLUSION_PROBABILITY`, so that 1/π stays usable); either
every line has a probability or none. Blank lines and lines starting with ``#`` are skipped.
A labelling queue of ``ragmeter sample`` (JSONL, :mod:`ragmeter.io.label_queue`) is read too:
its queries, in queue order, with the inclusion probabilities it gives (an active queue
without them is refused).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "labelled.txt"
>>> _ = path.write_text("# chosen by active sampling\\nq1 0.5\\nq7 0.125\\n")
>>> read_labelled_queries(path)
(('q1', 'q7'), {'q1': 0.5, 'q7': 0.125})
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, check_text, decode, read_bytes
from ragmeter.io.label_queue import inclusion_problem

if TYPE_CHECKING:
    from ragmeter.io.label_queue import LabelQueue


def read_labelled_queries(path: PathLike) -> tuple[tuple[str, ...], dict[str, float] | None]:
    """The query ids of ``path`` in file order, and their inclusion probabilities (``None``
    when the file gives none)."""
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="query ids, one per line")
    if data.lstrip().startswith(b"{"):
        return _from_queue(path, source)
    ids: list[str] = []
    probabilities: dict[str, float] = {}
    for number, line in enumerate(decode(data, source).splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) > 2:
            raise InputError(
                f"{len(fields)} fields; expected a query id and an optional inclusion probability",
                source=source,
                line=number,
            )
        qid = fields[0]
        if qid in ids:
            raise InputError(f"query {qid!r} is listed twice", source=source, line=number)
        if ids and (len(fields) == 2) != bool(probabilities):
            raise InputError(
                "some lines give an inclusion probability and some do not; give it on every "
                "line or on none",
                source=source,
                line=number,
            )
        ids.append(qid)
        if len(fields) == 2:
            probabilities[qid] = _probability(fields[1], source, number)
    if not ids:
        raise InputError("no query ids; expected one per line", source=source)
    return tuple(ids), probabilities or None


def read_queue_strata(path: PathLike) -> dict[str, int] | None:
    """``{query_id: stratum}`` of a stratified labelling queue (``ragmeter sample --strategy
    stratified``), ``None`` for any other file: its strata, with ``π = n_h/N_h``, give the
    exact variance of a fixed number of labels per stratum."""
    data = read_bytes(path)
    if not data.lstrip().startswith(b"{"):
        return None
    from ragmeter.io.label_queue import read_label_queue

    queue = read_label_queue(path)
    strata = {e.query_id: e.stratum for e in queue.entries}
    if not queue.entries or any(e.strategy != "stratified" for e in queue.entries):
        return None
    if any(h is None for h in strata.values()):
        return None
    return {q: int(h) for q, h in strata.items() if h is not None}


def _from_queue(path: PathLike, source: str) -> tuple[tuple[str, ...], dict[str, float] | None]:
    from ragmeter.io.label_queue import read_label_queue

    queue = read_label_queue(path)
    _refuse_chosen(queue, source)
    given = {q: p for q, p in queue.probabilities().items() if p is not None}
    if given and len(given) != len(queue.entries):
        missing = next(q for q in queue.query_ids if q not in given)
        raise InputError(
            f"query {missing!r} has no inclusion probability while others have one; give it "
            "on every line or on none",
            source=source,
            field="inclusion_probability",
        )
    return tuple(queue.query_ids), given or None


def _refuse_chosen(queue: LabelQueue, source: str) -> None:
    """A queue of chosen pairs (:data:`~ragmeter.io.label_queue.CHOSEN`) is no sample."""
    from ragmeter.io.label_queue import CHOSEN

    chosen = next((e for e in queue.entries if e.strategy in CHOSEN), None)
    if chosen is not None:
        raise InputError(
            f"an {chosen.strategy} queue lists the pairs a learned judge is least sure of: "
            "they were chosen, not drawn, so their labels are no sample and an estimate "
            "weighting them as one would be biased (draw the labelled queries with "
            "--strategy random, stratified or active)",
            source=source,
            field="strategy",
        )


def _probability(text: str, source: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(
            f"inclusion probability {text!r} is not a number in (0, 1]",
            source=source,
            line=line,
            field="inclusion probability",
        ) from None
    problem = inclusion_problem(value)
    if problem is not None:
        raise InputError(problem, source=source, line=line, field="inclusion probability")
    return value
