"""``ragmeter trec-eval``: a drop-in for trec_eval 10.0's command line.

::

    ragmeter trec-eval [-h] [-v] [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N]
                       [-m measure[.params]]... QRELS RUN

Options follow trec_eval's GNU getopt syntax (``-M100`` or ``-M 100``, ``-qc``,
``--measure=P.5,10``, options after the file names). Standard output is trec_eval's, line for
line: ``%-22s\\t%s\\t%6.4f`` for real values, integers for counts, ``runid`` and ``num_q`` at
the top of the ``all`` block, per-query lines (``-q``) in qrels order before it, ``relstring``
per query only, ``gm_*`` in the summary only. Anything else — reader warnings, run queries
without judgments, measures ragmeter does not implement — goes to standard error.

Behaviour kept from trec_eval 10.0:

* Without ``-c`` a judged query the run does not answer is an error, exit 4, after the
  per-query lines (``-q``) of the queries before it (trec_eval 10.0: "result qid not found");
  the message names every such query. With ``-c`` it is scored as an empty ranking and every
  mean is over all qrels queries (``num_ret``, ``utility``, ``unj``, ``rbp_resid`` 0,
  ``relstring`` empty, gm_* clamped at 1e-5).
* A doc id repeated within an evaluated query (within ``-M``) is an error, exit 4, after the
  per-query lines of the queries before it.
* The preference and judgment-group measures (``prefs_*``, ``*_avgjg``, nicknames ``prefs``,
  ``all_prefs``, ``qrels_jg``) need ``-R prefs``/``qrels_jg`` input, which ragmeter does not
  read: asked on a qrels file they fail at the first query, exit 4, as in trec_eval.
* ``-D <level>.<qid>`` evaluates that query only (with ``-c`` the means still divide by the
  number of qrels queries, and the summary ``num_rel`` counts every qrels query's); debugging
  output (level > 0) is not printed.
* Numbers in options and cutoffs are read like C ``atol``/``atof``: ``-M 1e3`` is 1, and
  ``-M 99999999999999999999`` saturates at 9223372036854775807.
* Exit codes: 1 usage or unknown measure, 2 unreadable input or bad measure parameters,
  4 duplicate docs, a judged query without a ranking (no ``-c``) or a measure that cannot be
  computed on qrels, 7 no query with both results and judgments.
"""

from __future__ import annotations

import getopt
import itertools
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TextIO

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned, align, judged_only
from ragmeter.core.data import Qrels, Run
from ragmeter.core.sums import geometric_mean, sequential_mean, sequential_sum
from ragmeter.errors import MeasureError, RagmeterError
from ragmeter.io._common import read_bytes
from ragmeter.measures import Measure
from ragmeter.metrics.trec import BY_NAME, NICKNAMES, TREC_MEASURES, TrecMeasure, c_atol
from ragmeter.metrics.trec_measures import relstring_text

VERSION = "10.0 (ragmeter)"

USAGE = """Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_qrels' prints all qrels measures, '-m official' is default)
"""

HELP = """ragmeter trec-eval [-h] [-v] [-q] [-c] [-n] [-J] [-l <num>] [-M <num>]
   [-N <num>] [-m measure[.params]]... rel_info_file results_file

A drop-in for trec_eval 10.0 (qrels and trec_results formats).
 -q: also print the evaluation of each query.
 -m measure[.params]: add a measure (or a nickname: official, all_trec, set);
    repeatable.
 -c: average over every query of the qrels (missing queries score 0).
 -l<num>: minimum grade of a relevant document (default 1).
 -M<num>: evaluate only the first <num> documents of each ranking.
 -N<num>: number of documents in the collection (utility).
 -J: evaluate over judged documents only (DO NOT USE unless you know why).
 -n: no summary.
 -v: print the version.
If results_file is '-', the run is read from standard input.
"""

SHORT_OPTS = "hvqm:cl:nD:JN:M:R:T:oZ:"
LONG_OPTS = [
    "help",
    "version",
    "query_eval_wanted",
    "measure=",
    "complete_rel_info_wanted",
    "level_for_rel=",
    "nosummary",
    "Debug_level=",
    "Judged_docs_only",
    "Number_docs_in_coll=",
    "Max_retrieved_per_topic=",
    "Rel_info_format=",
    "Results_format=",
    "Output_old_results_format=",
    "Zscore=",
]
_LONG_TO_SHORT = {
    "--help": "-h",
    "--version": "-v",
    "--query_eval_wanted": "-q",
    "--measure": "-m",
    "--complete_rel_info_wanted": "-c",
    "--level_for_rel": "-l",
    "--nosummary": "-n",
    "--Debug_level": "-D",
    "--Judged_docs_only": "-J",
    "--Number_docs_in_coll": "-N",
    "--Max_retrieved_per_topic": "-M",
    "--Rel_info_format": "-R",
    "--Results_format": "-T",
    "--Output_old_results_format": "-o",
    "--Zscore": "-Z",
}
KNOWN_REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")


class _Exit(Exception):
    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Options:
    """The parsed command line."""

    query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    rel_level: int = 1
    depth: int | None = None
    num_docs: int = 0
    measures: list[tuple[str, str | None]] = field(default_factory=list)
    qrels: str = ""
    run: str = ""
    debug_query: str | None = None


def _atol(text: str) -> int:
    """C ``atol``: leading integer saturated to a C ``long``, 0 when there is none."""
    value = c_atol(text)
    return 0 if value is None else value


def parse_args(argv: Sequence[str], err: TextIO) -> Options:
    """Parse trec_eval's command line; raises :class:`_Exit` for help, version and errors."""
    try:
        opts, args = getopt.gnu_getopt(list(argv), SHORT_OPTS, LONG_OPTS)
    except getopt.GetoptError as exc:
        err.write(f"trec_eval: {exc.msg}\n")
        raise _Exit(1, USAGE) from None
    o = Options()
    help_wanted = False
    for raw_flag, value in opts:
        flag = _LONG_TO_SHORT.get(raw_flag, raw_flag)
        if flag == "-h":
            help_wanted = True
        elif flag == "-v":
            err.write(f"trec_eval version {VERSION}\n")
            raise _Exit(0)
        elif flag == "-q":
            o.query = True
        elif flag == "-m":
            name, dot, params = value.partition(".")
            if dot and not params:
                err.write(f"trec_eval: improper measure in parameter '{name}'\n")
                raise _Exit(1, f"trec_eval: illegal measure '{name}'\n")
            if name not in NICKNAMES and name not in BY_NAME:
                raise _Exit(1, f"trec_eval: illegal measure '{name}'\n")
            o.measures.append((name, params if dot else None))
        elif flag == "-c":
            o.complete = True
        elif flag == "-l":
            o.rel_level = _atol(value)
            if o.rel_level < 0:
                # below 0, unjudged (-1) and pooled-unjudged (-2) documents would count as
                # relevant: trec_eval 10.0 does so silently
                raise _Exit(1, f"trec_eval: -l {value}: the relevance level must be at least 0\n")
        elif flag == "-n":
            o.summary = False
        elif flag == "-D":
            level, dot, qid = value.partition(".")
            if dot:
                o.debug_query = qid
            if _atol(level) > 0:
                err.write("ragmeter trec-eval: -D: debugging output is not implemented\n")
        elif flag == "-J":
            o.judged_only = True
        elif flag == "-N":
            o.num_docs = _atol(value)
        elif flag == "-M":
            o.depth = max(_atol(value), 0)
        elif flag == "-R":
            if value != "qrels":
                if value in KNOWN_REL_FORMATS:
                    raise _Exit(
                        2,
                        f"ragmeter trec-eval: rel_info format '{value}' is not "
                        "implemented (only 'qrels')\n",
                    )
                raise _Exit(2, f"trec_eval: Illegal rel_format '{value}'\n")
        elif flag == "-T":
            if value != "trec_results":
                raise _Exit(2, f"trec_eval: Illegal retrieval results format '{value}'\n")
        elif flag == "-o":
            pass  # obsolete in trec_eval too
        elif flag == "-Z":
            raise _Exit(2, "ragmeter trec-eval: -Z (z-scores) is not implemented\n")
    if help_wanted:
        raise _Exit(0, HELP)
    if len(args) != 2:
        raise _Exit(1, USAGE)
    o.qrels, o.run = args
    if not o.measures:
        o.measures.append(("official", None))
    return o


@dataclass(frozen=True)
class Column:
    """One printed value: its label, the measure computing it, how it prints."""

    label: str
    spec: TrecMeasure
    measure: Measure | None


def select(o: Options, err: TextIO) -> list[Column]:
    """The printed columns, in trec_eval's order, from the ``-m`` arguments."""
    marked: set[str] = set()
    params: dict[str, str] = {}
    for name, p in o.measures:
        if p is not None:
            params.setdefault(name, p)
        marked.update(NICKNAMES.get(name, (name,)))
    columns: list[Column] = []
    for spec in TREC_MEASURES:
        if spec.name not in marked:
            continue
        if spec.kind == "output" or spec.family is None:
            columns.append(Column(spec.name, spec, None))
            continue
        p = params.get(spec.name) if spec.kind != "plain" else None
        try:
            pairs = spec.expand(p)
        except MeasureError as exc:
            err.write(f"trec_eval: {exc}\n")
            raise _Exit(2, f"trec_eval: Cannot initialize measure '{spec.name}'\n") from None
        for label, m in pairs:
            if spec.name == "utility" and o.num_docs:
                m = m.with_params(n_docs=o.num_docs)
            columns.append(Column(label, spec, m))
    return columns


def _quit(exc: Exception, path: str) -> str:
    return f"ragmeter trec-eval: {exc}\ntrec_eval: Quit in file '{path}'\n"


def _read_qrels(o: Options) -> Qrels:
    from ragmeter.io.trec import read_trec_qrels

    try:
        return read_trec_qrels(o.qrels)
    except RagmeterError as exc:
        raise _Exit(2, _quit(exc, o.qrels)) from None


def _read(o: Options, qrels: Qrels, err: TextIO) -> tuple[Qrels, Run, bytes | None]:
    """The qrels and the run read whole, and the run's bytes when it came from standard
    input."""
    from ragmeter.io.trec import parse_trec_run, read_trec_run

    stdin = sys.stdin.buffer.read() if o.run == "-" else None
    try:
        if stdin is not None:
            run = parse_trec_run(stdin, source="-", name="-")
        else:
            run = read_trec_run(o.run, name=o.run)
    except RagmeterError as exc:
        raise _Exit(2, _quit(exc, o.run)) from None
    for w in (*qrels.warnings, *run.warnings):
        err.write(f"ragmeter trec-eval: warning: {w}\n")
    return qrels, run, stdin


#: bytes of run file per block when ``trec-eval`` streams a run file
BLOCK_BYTES = 32 << 20


@dataclass
class _Merged:
    """Per-query values of every qrels query (qrels order), filled block by block."""

    values: list[npt.NDArray[np.float64]]
    relstrings: dict[str, list[str]]

    def fill(
        self, o: Options, columns: list[Column], al: Aligned, positions: npt.NDArray[np.int64]
    ) -> None:
        """Compute the columns on ``al`` (the qrels queries at ``positions``) and keep them."""
        if o.judged_only:
            al = judged_only(al)
        for target, v in zip(self.values, _values(al, columns), strict=True):
            target[positions] = v
        for label, texts in _relstrings(al, columns).items():
            kept = self.relstrings[label]
            for p, text in zip(positions.tolist(), texts, strict=True):
                kept[p] = text


def _compute_streamed(o: Options, columns: list[Column], qrels: Qrels, err: TextIO) -> _Computed:
    """The run file read, aligned and computed one block of queries at a time (memory
    bounded by the block): the :class:`_Computed` of :func:`_compute`, value for value.
    A judged query in two blocks: :class:`~ragmeter.evaluation.blocks.RepeatedQueryError`."""
    from ragmeter.evaluation.blocks import (
        RepeatedQueryError,
        empty_run,
        merge_reading_warnings,
        qrels_index,
        qrels_subset,
    )
    from ragmeter.io.trec_blocks import TrecRunBlocks

    n = qrels.n_queries
    index = qrels_index(qrels)
    present = np.zeros(n, dtype=bool)
    merged = _Merged(
        [np.zeros(n, dtype=np.float64) for _ in columns],
        {c.label: [""] * n for c in columns if c.spec.name == "relstring"},
    )
    unjudged: set[str] = set()
    warnings: list[str] = []
    runid = o.run
    blocks = TrecRunBlocks(o.run, name=o.run, block_bytes=BLOCK_BYTES)
    for run in blocks:
        qids = run.query_ids.tolist()
        pos = index.positions(qids)
        positions = np.sort(pos[pos >= 0])
        again = positions[present[positions]]
        if len(again):
            qid = str(qrels.query_ids[int(again[0])])
            raise RepeatedQueryError(qid, source=blocks.source, line=blocks.line_of(qid))
        unjudged.update(str(q) for q, p in zip(qids, pos.tolist(), strict=True) if p < 0)
        warnings.extend(run.warnings)
        runid = run.tag or run.name
        if len(positions):
            sub = qrels_subset(qrels, positions)
            al = align(run, sub, missing="skip", depth=o.depth, rel_level=o.rel_level)
            merged.fill(o, columns, al, positions)
            present[positions] = True
    absent = np.flatnonzero(~present)
    if o.complete and len(absent):  # scored as empty rankings
        sub = qrels_subset(qrels, absent)
        al = align(empty_run(o.run), sub, missing="zero", depth=o.depth, rel_level=o.rel_level)
        merged.fill(o, columns, al, absent)
    warnings = merge_reading_warnings(warnings)
    for w in (*qrels.warnings, *warnings):
        err.write(f"ragmeter trec-eval: warning: {w}\n")
    _unjudged_note(len(unjudged), err)
    evaluated = np.arange(n) if o.complete else np.flatnonzero(present)
    query_ids = [str(q) for q in qrels.query_ids[evaluated].tolist()]
    run_ids = {str(q) for q in qrels.query_ids[present].tolist()}
    halts = [] if o.complete else [_missing_query(qrels, run_ids, query_ids, None)]
    if not query_ids and not any(halts):
        raise _Exit(7, "trec_eval: No queries with both results and relevance info\n")
    in_run = present[evaluated]
    halt = _first_halt(o, columns, halts, (warnings, query_ids, in_run, None))
    return _Computed(
        query_ids,
        in_run,
        [v[evaluated] for v in merged.values],
        {k: [texts[i] for i in evaluated.tolist()] for k, texts in merged.relstrings.items()},
        halt,
        runid,
        len(query_ids),
    )


def _computed(o: Options, columns: list[Column], err: TextIO) -> _Computed:
    """The qrels read, and the run streamed in blocks of queries (a file, without ``-D``)
    or read whole; a run file not grouped by query is read whole, which standard error
    says."""
    from ragmeter.evaluation.blocks import RepeatedQueryError

    qrels = _read_qrels(o)
    if o.run != "-" and o.debug_query is None:
        try:
            return _compute_streamed(o, columns, qrels, err)
        except RepeatedQueryError as exc:
            err.write(
                f"ragmeter trec-eval: note: {exc.reason.split(';')[0]} ({exc.source}, line "
                f"{exc.line}): the run is not grouped by query, so it is read whole\n"
            )
        except RagmeterError as exc:
            raise _Exit(2, _quit(exc, o.run)) from None
    return _compute(o, columns, _read(o, qrels, err), err)


def _first_duplicate(
    o: Options,
    warnings: Sequence[str],
    query_ids: Sequence[str],
    in_run: npt.NDArray[np.bool_],
    stdin: bytes | None,
) -> tuple[int, str] | None:
    """The first evaluated query (index) with a repeated doc id within -M, and the doc id.

    Only called when reading dropped duplicates; re-reads the run (the error path): the file,
    or the bytes read from standard input. The run was read without error, so every line
    has its fields and a valid score; ``bytes.split`` splits on C white space as the reader.
    """
    if not any("duplicate" in w for w in warnings):
        return None
    wanted = {str(q): i for i, q in enumerate(query_ids) if in_run[i]}
    rows: dict[str, list[tuple[float, str]]] = {}
    data = stdin if stdin is not None else read_bytes(o.run)
    for raw in data.split(b"\n"):
        fields = [f.decode("utf-8") for f in raw.split()]
        if len(fields) < 6 or fields[0].startswith("#") or fields[0] not in wanted:
            continue
        rows.setdefault(fields[0], []).append((float(fields[4]), fields[2]))
    found: list[tuple[int, str]] = []
    for qid, items in rows.items():
        if len({d for _, d in items}) == len(items):
            continue
        items.sort(key=lambda t: (-t[0], _Desc(t[1])))
        if o.depth is not None:
            items = items[: o.depth]
        docs = sorted(d.encode() for _, d in items)
        dups = [a for a, b in itertools.pairwise(docs) if a == b]
        if dups:
            found.append((wanted[qid], dups[0].decode()))
    return min(found) if found else None


@dataclass(frozen=True, order=False)
class _Desc:
    """Sort key wrapper: byte order reversed."""

    text: str

    def __lt__(self, other: _Desc) -> bool:
        return self.text.encode() > other.text.encode()


def _values(al: Aligned, columns: list[Column]) -> list[npt.NDArray[np.float64]]:
    out = []
    for c in columns:
        if c.measure is None:
            out.append(np.zeros(al.n_queries))
            continue
        v = np.asarray(c.measure.spec.compute(al, c.measure), dtype=np.float64)
        if c.spec.name == "utility":
            v = np.where(al.in_run, v, 0.0)  # trec_eval zeroes it for a missing query
        out.append(v)
    return out


def _line(label: str, qid: str, value: float, integer: bool) -> str:
    if integer:
        return f"{label:<22}\t{qid}\t{int(value)}\n"
    return f"{label:<22}\t{qid}\t{value:6.4f}\n"


def _query_block(
    qid: str,
    i: int,
    columns: list[Column],
    values: list[npt.NDArray[np.float64]],
    relstrings: dict[str, list[str]],
) -> str:
    return "".join(
        f"{c.label:<22}\t{qid}\t'{relstrings[c.label][i]}'\n"
        if c.spec.name == "relstring"
        else _line(c.label, qid, float(v[i]), c.spec.integer)
        for c, v in zip(columns, values, strict=True)
        if c.spec.per_query
    )


def _summary(
    columns: list[Column], values: list[npt.NDArray[np.float64]], runid: str, n: int
) -> str:
    # trec_eval adds the per-query values in query order and divides by the query count ``n``
    # (the qrels' with -c, even when -D evaluates one query)
    parts = []
    for c, v in zip(columns, values, strict=True):
        if not c.spec.summary:
            continue
        if c.spec.name == "runid":
            parts.append(f"{'runid':<22}\tall\t{runid}\n")
        elif c.spec.name == "num_q":
            parts.append(f"{'num_q':<22}\tall\t{n}\n")
        elif c.spec.integer:
            parts.append(_line(c.label, "all", sequential_sum(v), True))
        elif c.measure is not None and c.measure.spec.aggregate == "gmean":
            parts.append(_line(c.label, "all", geometric_mean(v, n), False))
        else:
            parts.append(_line(c.label, "all", sequential_mean(v, n), False))
    return "".join(parts)


@dataclass(frozen=True)
class _Halt:
    """Where trec_eval stops with an error: before printing query ``index`` (evaluated order)."""

    index: int
    code: int
    message: str


def _missing_query(
    qrels: Qrels, run_ids: set[str], evaluated: Sequence[str], only: str | None
) -> _Halt | None:
    """The first judged query without a ranking (no ``-c``): trec_eval stops there, exit 4."""
    absent = sorted(set(qrels.query_ids.tolist()) - run_ids)
    if only is not None:
        absent = [q for q in absent if q == only]
    if not absent:
        return None
    # trec_eval walks the qrels queries in byte order and stops at the first absent one
    key = absent[0].encode()
    index = sum(1 for q in evaluated if str(q).encode() < key)
    shown = ", ".join(f"'{q}'" for q in absent[:5]) + (" …" if len(absent) > 5 else "")
    many = len(absent) != 1
    return _Halt(
        index,
        4,
        f"trec_eval: {len(absent)} judged quer{'ies' if many else 'y'} without a ranking in "
        f"the run ({shown}); trec_eval 10.0 stops at the first (\"result qid '{absent[0]}' "
        'not found"): give -c to score them as empty rankings\n',
    )


def _not_computable(columns: list[Column]) -> _Halt | None:
    """A preference or judgment-group measure: it cannot be computed from a qrels file."""
    name = next(
        (c.spec.name for c in columns if c.spec.kind != "output" and c.measure is None), None
    )
    if name is None:
        return None
    return _Halt(
        0,
        4,
        f"ragmeter trec-eval: measure '{name}' is not implemented (it needs a prefs or "
        f"qrels_jg rel_info file)\ntrec_eval: Can't calculate measure '{name}'\n",
    )


def _only_query(al: Aligned, qid: str) -> Aligned:
    """``al`` restricted to query ``qid`` (``-D level.qid``); no query if it is not evaluated."""
    ids = [str(q) for q in al.query_ids.tolist()]
    i = ids.index(qid) if qid in ids else al.n_queries
    keep = slice(i, min(i + 1, al.n_queries))
    a, b = int(al.offsets[keep.start]), int(al.offsets[keep.stop])
    la, lb = int(al.label_offsets[keep.start]), int(al.label_offsets[keep.stop])
    item_label = al.item_label[a:b] if len(al.item_label) else al.item_label
    return replace(
        al,
        query_ids=al.query_ids[keep],
        offsets=al.offsets[keep.start : keep.stop + 1] - a,
        grades=al.grades[a:b],
        run_rows=al.run_rows[a:b],
        label_offsets=al.label_offsets[keep.start : keep.stop + 1] - la,
        label_grades=al.label_grades[la:lb],
        in_run=al.in_run[keep],
        cutoffs=None if al.cutoffs is None else al.cutoffs[keep],
        label_rows=al.label_rows[la:lb] if len(al.label_rows) else al.label_rows,
        item_label=np.where(item_label >= 0, item_label - la, -1),
        label_in_pool=None if al.label_in_pool is None else al.label_in_pool[la:lb],
    )


@dataclass
class _Computed:
    """What is printed: the evaluated queries (qrels order), whether the run has each, the
    columns' per-query values, the relstrings, and where trec_eval would stop."""

    query_ids: list[str]
    in_run: npt.NDArray[np.bool_]
    values: list[npt.NDArray[np.float64]]
    relstrings: dict[str, list[str]]
    halt: _Halt | None
    runid: str
    n_avg: int
    summary_values: list[npt.NDArray[np.float64]] | None = None


def _unjudged_note(n: int, err: TextIO) -> None:
    if n:
        err.write(
            f"ragmeter trec-eval: {n} run quer{'y' if n == 1 else 'ies'} without "
            "judgments, not evaluated (as trec_eval)\n"
        )


def _first_halt(
    o: Options,
    columns: list[Column],
    halts: list[_Halt | None],
    duplicate_of: tuple[Sequence[str], Sequence[str], npt.NDArray[np.bool_], bytes | None],
) -> _Halt | None:
    """The first place trec_eval stops: a missing query (``halts``), a measure it cannot
    compute, or a duplicate doc (``duplicate_of``: the run's warnings, the evaluated
    queries, whether the run has each, the standard input's bytes)."""
    halts = [*halts, _not_computable(columns)]
    # trec_eval finds duplicates when a measure ranks the documents: not for runid, num_q
    if any(c.measure is not None for c in columns):
        duplicate = _first_duplicate(o, *duplicate_of)
        if duplicate is not None:
            first = next((c.spec.name for c in columns if c.measure is not None), "num_ret")
            halts.append(
                _Halt(
                    duplicate[0],
                    4,
                    f"trec_eval.form_res_qrels: duplicate docs {duplicate[1]}"
                    f"trec_eval: Can't calculate measure '{first}'\n",
                )
            )
    return min((h for h in halts if h is not None), key=lambda h: h.index, default=None)


def _relstrings(al: Aligned, columns: list[Column]) -> dict[str, list[str]]:
    return {
        c.label: relstring_text(al, int(c.measure.param("length")))
        for c in columns
        if c.spec.name == "relstring" and c.measure is not None
    }


def _compute(
    o: Options,
    columns: list[Column],
    inputs: tuple[Qrels, Run, bytes | None],
    err: TextIO,
) -> _Computed:
    """The run read whole: aligned once, every column computed."""
    qrels, run_obj, stdin = inputs
    al = align(
        run_obj,
        qrels,
        missing="zero" if o.complete else "skip",
        depth=o.depth,
        rel_level=o.rel_level,
    )
    _unjudged_note(al.n_unjudged_queries, err)
    n_avg = al.n_queries  # with -c trec_eval divides by the number of qrels queries
    evaluated = [str(q) for q in al.query_ids.tolist()]
    run_ids = {str(q) for q in run_obj.query_ids.tolist()}
    halts = [] if o.complete else [_missing_query(qrels, run_ids, evaluated, o.debug_query)]
    every_query = al
    if o.debug_query is not None:
        al = _only_query(al, o.debug_query)
    if al.n_queries == 0 and not any(halts):
        raise _Exit(7, "trec_eval: No queries with both results and relevance info\n")
    query_ids = [str(q) for q in al.query_ids.tolist()]
    halt = _first_halt(o, columns, halts, (run_obj.warnings, query_ids, al.in_run, stdin))
    if o.judged_only:
        al = judged_only(al)
    values = _values(al, columns)
    summary_values = None
    if o.complete and al is not every_query:
        summary_values = _num_rel_of_every_query(every_query, columns, values)
    return _Computed(
        query_ids,
        al.in_run,
        values,
        _relstrings(al, columns),
        halt,
        run_obj.tag or run_obj.name,
        n_avg,
        summary_values,
    )


def _emit(o: Options, columns: list[Column], done: _Computed, out: TextIO) -> None:
    """Print the ``-q`` lines and the summary; raises :class:`_Exit` where trec_eval stops."""
    halt, values = done.halt, done.values
    n_queries = len(done.query_ids)
    stop = n_queries if halt is None else min(halt.index, n_queries)
    if o.query:
        out.write(
            "".join(
                _query_block(done.query_ids[i], i, columns, values, done.relstrings)
                for i in range(stop)
            )
        )
    if halt is not None:
        raise _Exit(halt.code, halt.message)
    if o.summary:
        n = done.n_avg if o.complete else n_queries
        summary = done.summary_values if done.summary_values is not None else values
        out.write(_summary(columns, summary, done.runid, n))


def _num_rel_of_every_query(
    al: Aligned, columns: list[Column], values: list[npt.NDArray[np.float64]]
) -> list[npt.NDArray[np.float64]]:
    """``values`` with num_rel's over every qrels query: with ``-c`` trec_eval's summary
    counts the relevant documents of all qrels queries, even when ``-D`` evaluates one."""
    return [
        _values(al, [c])[0] if c.spec.name == "num_rel" else v
        for c, v in zip(columns, values, strict=True)
    ]


def run(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """Run the command; writes to ``out``/``err`` and returns the exit status."""
    try:
        o = parse_args(argv, err)
        columns = select(o, err)
        _emit(o, columns, _computed(o, columns, err), out)
        return 0
    except _Exit as exc:
        if exc.message:
            (out if exc.code == 0 else err).write(exc.message)
        return exc.code
    except RagmeterError as exc:
        err.write(f"ragmeter trec-eval: error: {exc}\n")
        return 2


def main(argv: list[str]) -> int:
    """Entry point of ``ragmeter trec-eval``: trec_eval's command line, exit status returned."""
    return run(argv, sys.stdout, sys.stderr)
