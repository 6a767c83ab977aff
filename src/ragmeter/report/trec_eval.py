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

* Without ``-c`` a judged query the run does not answer is ignored (as trec_eval documents;
  trec_eval 10.0's code actually re-evaluates the previous query's ranking there, or crashes
  when it is the first, see usnistgov/trec_eval#46). With ``-c`` it is scored as an empty
  ranking and every mean is over all qrels queries (``num_ret``, ``utility``, ``unj``,
  ``rbp_resid`` 0, ``relstring`` empty, gm_* clamped at 1e-5).
* A doc id repeated within an evaluated query (within ``-M``) is an error, exit 4, after the
  per-query lines of the queries before it.
* Exit codes: 1 usage or unknown measure, 2 unreadable input or bad measure parameters,
  4 duplicate docs, 7 no query with both results and judgments.
"""

from __future__ import annotations

import getopt
import itertools
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

import numpy as np
import numpy.typing as npt

from ragmeter.core.align import Aligned, align
from ragmeter.core.data import Qrels, Run
from ragmeter.core.sums import geometric_mean, sequential_mean, sequential_sum
from ragmeter.errors import MeasureError, RagmeterError
from ragmeter.measures import Measure
from ragmeter.metrics.trec import BY_NAME, NICKNAMES, TREC_MEASURES, TrecMeasure
from ragmeter.metrics.trec_measures import relstring_text

VERSION = "10.0 (ragmeter)"

USAGE = """Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_qrels' prints all qrels measures, '-m official' is default)
"""

HELP = """ragmeter trec-eval [-h] [-v] [-q] [-c] [-n] [-J] [-l <num>] [-M <num>] [-N <num>]
   [-m measure[.params]]... rel_info_file results_file

A drop-in for trec_eval 10.0 (qrels and trec_results formats).
 -q: also print the evaluation of each query.
 -m measure[.params]: add a measure (or a nickname: official, all_trec, set); repeatable.
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


def _atol(text: str) -> int:
    """C ``atol``: leading integer, 0 when there is none."""
    text = text.strip()
    sign = 1
    if text[:1] in "+-" and text:
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    digits = ""
    for ch in text:
        if not ch.isdigit():
            break
        digits += ch
    return sign * int(digits) if digits else 0


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
            if "." in value:
                err.write("ragmeter trec-eval: -D <level>.<qid> is not supported; ignored\n")
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
    skipped: list[str] = []
    for spec in TREC_MEASURES:
        if spec.name not in marked:
            continue
        if spec.kind == "output":
            columns.append(Column(spec.name, spec, None))
            continue
        if spec.family is None:
            skipped.append(spec.name)
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
    for name in skipped:
        err.write(f"ragmeter trec-eval: measure '{name}' is not implemented; not printed\n")
    return columns


def _quit(exc: Exception, path: str) -> str:
    return f"ragmeter trec-eval: {exc}\ntrec_eval: Quit in file '{path}'\n"


def _read(o: Options, err: TextIO) -> tuple[Qrels, Run, bytes | None]:
    """The qrels and the run, and the run's bytes when it came from standard input."""
    from ragmeter.io.trec import parse_trec_run, read_trec_qrels, read_trec_run

    try:
        qrels = read_trec_qrels(o.qrels)
    except RagmeterError as exc:
        raise _Exit(2, _quit(exc, o.qrels)) from None
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


def _judged_only(al: Aligned) -> Aligned:
    """trec_eval -J: drop unjudged items, ranks close up."""
    keep = al.grades >= 0
    lengths = np.bincount(al.query_of_item[keep], minlength=al.n_queries)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return replace(al, offsets=offsets, grades=al.grades[keep], run_rows=al.run_rows[keep])


def _first_duplicate(
    o: Options, run: Run, al: Aligned, stdin: bytes | None
) -> tuple[int, str] | None:
    """The first evaluated query (index) with a repeated doc id within -M, and the doc id.

    Only called when reading dropped duplicates; re-reads the run (the error path): the file,
    or the bytes read from standard input. The run was read without error, so every line
    has its fields and a valid score; ``bytes.split`` splits on C white space as the reader.
    """
    if not any("duplicate" in w for w in run.warnings):
        return None
    wanted = {str(q): i for i, q in enumerate(al.query_ids) if al.in_run[i]}
    rows: dict[str, list[tuple[float, str]]] = {}
    data = stdin if stdin is not None else Path(o.run).read_bytes()
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
    al: Aligned,
    i: int,
    columns: list[Column],
    values: list[npt.NDArray[np.float64]],
    relstrings: dict[str, list[str]],
) -> str:
    qid = str(al.query_ids[i])
    parts = []
    for c, v in zip(columns, values, strict=True):
        if not c.spec.per_query:
            continue
        if c.spec.name == "relstring":
            parts.append(f"{c.label:<22}\t{qid}\t'{relstrings[c.label][i]}'\n")
        else:
            parts.append(_line(c.label, qid, float(v[i]), c.spec.integer))
    return "".join(parts)


def _summary(
    al: Aligned, columns: list[Column], values: list[npt.NDArray[np.float64]], runid: str
) -> str:
    # trec_eval adds the per-query values in query order and divides by the query count
    n = al.n_queries
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


def run(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """Run the command; writes to ``out``/``err`` and returns the exit status."""
    try:
        o = parse_args(argv, err)
        columns = select(o, err)
        qrels, run_obj, stdin = _read(o, err)
        al = align(
            run_obj,
            qrels,
            missing="zero" if o.complete else "skip",
            depth=o.depth,
            rel_level=o.rel_level,
        )
        if al.n_unjudged_queries:
            k = al.n_unjudged_queries
            err.write(
                f"ragmeter trec-eval: {k} run quer{'y' if k == 1 else 'ies'} without "
                "judgments, not evaluated (as trec_eval)\n"
            )
        if al.n_skipped:
            # trec_eval 10.0 cannot evaluate a judged query that has no ranking without -c
            # (it crashes or reuses another query's ranking); refuse with a clear message.
            absent = sorted(set(qrels.query_ids.tolist()) - set(run_obj.query_ids.tolist()))
            shown = ", ".join(f"'{q}'" for q in absent[:5]) + (" …" if len(absent) > 5 else "")
            raise _Exit(
                3,
                f"trec_eval: {len(absent)} judged quer{'y' if len(absent) == 1 else 'ies'} "
                f"without a ranking in the run ({shown}); trec_eval 10.0 refuses this: "
                "give -c to score them as empty rankings\n",
            )
        if al.n_queries == 0:
            raise _Exit(7, "trec_eval: No queries with both results and relevance info\n")
        # trec_eval finds duplicates when a measure ranks the documents: not for runid, num_q
        ranked = any(c.measure is not None for c in columns)
        duplicate = _first_duplicate(o, run_obj, al, stdin) if ranked else None
        if o.judged_only:
            al = _judged_only(al)
        values = _values(al, columns)
        relstrings = {
            c.label: relstring_text(al, int(c.measure.param("length")))
            for c in columns
            if c.spec.name == "relstring" and c.measure is not None
        }
        stop = duplicate[0] if duplicate is not None else al.n_queries
        if o.query:
            out.write(
                "".join(_query_block(al, i, columns, values, relstrings) for i in range(stop))
            )
        if duplicate is not None:
            first = next((c.spec.name for c in columns if c.measure is not None), "num_ret")
            raise _Exit(
                4,
                f"trec_eval.form_res_qrels: duplicate docs {duplicate[1]}"
                f"trec_eval: Can't calculate measure '{first}'\n",
            )
        if o.summary:
            out.write(_summary(al, columns, values, run_obj.tag or run_obj.name))
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
