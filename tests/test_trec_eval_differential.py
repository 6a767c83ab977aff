"""``ragmeter trec-eval`` against trec_eval 10.0 itself, byte for byte, on random input.

Seeded random qrels and runs — ties in scores, negative grades, odd C white space, CRLF,
comments, duplicate docs, judged queries missing from the run and run queries without
judgments, runs read from standard input — under random combinations of every flag of the
drop-in, go through the trec_eval binary named by ``RAGMETER_TREC_EVAL`` and through ours
(in-process); standard output and the exit status must be identical, except for the
documented deliberate differences (``docs/trec_eval.md``), which :func:`deliberate` names.

Without ``RAGMETER_TREC_EVAL`` the test skips, saying so. Build trec_eval in a scratch copy::

    T=$(mktemp -d) && cp -r ../shared/reference/trec_eval-10.0/. "$T" && make -s -C "$T"
    RAGMETER_TREC_EVAL="$T/trec_eval" python -m pytest -q tests/test_trec_eval_differential.py

``RAGMETER_DIFF_N`` sets the number of comparisons (default 2,000, about a minute on two
cores); ``RAGMETER_DIFF_SEED`` the first seed. A difference prints its case in full (the first
five; ``RAGMETER_DIFF_SHOW`` sets how many), and ``-s`` shows the count of each category.
"""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragmeter.report import trec_eval

BINARY = os.environ.get("RAGMETER_TREC_EVAL", "")
N_CASES = int(os.environ.get("RAGMETER_DIFF_N", "2000"))
FIRST_SEED = int(os.environ.get("RAGMETER_DIFF_SEED", "0"))

pytestmark = pytest.mark.skipif(
    not (BINARY and os.access(BINARY, os.X_OK)),
    reason="RAGMETER_TREC_EVAL does not name a trec_eval 10.0 binary (see this module's "
    "docstring to build one from ../shared/reference/trec_eval-10.0)",
)

QUERIES = ("q1", "q2", "10", "9", "301", "Q1", "q-\u00e9")
DOCS = (*tuple(f"d{i}" for i in range(1, 13)), "D1", "d\xa0x", "doc#1")
SCORES = ("1", "2", "3", "0.5", "-1", "2.25", "0", "1e1", "-0.5", "10", "3.0", ".5", "+2")
MEASURES = (
    "official",
    "all_trec",
    "set",
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "iprec_at_recall.0.2,0.55",
    "P",
    "P.1,3,5",
    "relstring",
    "relstring.4",
    "recall.2,4",
    "unj.3",
    "rbp",
    "rbp.p=0.5",
    "rbp_resid",
    "infAP",
    "gm_bpref",
    "utility",
    "utility.2,-1,0,0",
    "11pt_avg",
    "ndcg",
    "ndcg.1=1,2=3",
    "relative_P.2,5",
    "Rprec_mult",
    "Rprec_mult.0.5,2.0",
    "success.1,3",
    "map_cut.3,10",
    "ndcg_cut.2,5",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "G.1=2,2=5",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "set_F.0.5",
    "num_nonrel_judged_ret",
    "yaap",
)
#: malformed or extreme parameters, where trec_eval's grammar decides (issue 21 items 2, 3, 8)
ODD_MEASURES = (
    "rbp.p=0.5,p=0.8",
    "ndcg.1=2=3",
    "rbp_resid.p=0.5",
    "rbp_resid.0.5",
    "P.99999999999999999999",
)
#: beyond a C long: atol and strtol saturate
SATURATED = "99999999999999999999"
#: measures whose gain parameters trec_eval 10.0 frees twice when two are given
_GAIN_PARAMS = ("ndcg.", "G.")


@dataclass
class Case:
    """One comparison: the two files' bytes and the command line (``RUN`` is the run)."""

    seed: int
    qrels: bytes
    run: bytes
    args: list[str] = field(default_factory=list)
    stdin: bool = False

    def describe(self) -> str:
        """The case, reproducible by hand."""
        redirect = " < RUN" if self.stdin else ""
        return (
            f"seed {self.seed}: trec_eval {' '.join(self.args)}{redirect}\n"
            f"QRELS={self.qrels!r}\nRUN={self.run!r}"
        )


def _sep(rnd: random.Random) -> str:
    return rnd.choice((" ", " ", " ", "\t", "\t", "  ", " \t", "\v", "\f", "\t "))


@dataclass(frozen=True)
class Shape:
    """How large a case is: its id pools and the most judgments and documents per query."""

    queries: tuple[str, ...]
    docs: tuple[str, ...]
    judged: int
    retrieved: int


SMALL = Shape(QUERIES, DOCS, 8, 12)
#: long rankings and many queries, where the order of summation shows in the last digit
LARGE = Shape(
    QUERIES + tuple(f"t{i}" for i in range(20)), DOCS + tuple(f"x{i}" for i in range(60)), 30, 60
)


def _qrels(
    rnd: random.Random, queries: list[str], shape: Shape
) -> tuple[bytes, dict[str, set[str]]]:
    lines = []
    judged: dict[str, set[str]] = {}
    tab_file = rnd.random() < 0.3
    for q in queries:
        docs = rnd.sample(shape.docs, rnd.randint(1, shape.judged))
        judged[q] = set(docs)
        for d in docs:
            grade = rnd.choice((-1, 0, 0, 1, 1, 1, 2, 3))
            if rnd.random() < 0.15:
                sep = [_sep(rnd) for _ in range(3)]
            else:
                sep = ["\t" if tab_file else " "] * 3
            lead = rnd.choice(("", "", "", "", " ", "\t"))
            trail = rnd.choice(("", "", "", "", " ", "\t"))
            line = f"{lead}{q}{sep[0]}0{sep[1]}{d}{sep[2]}{grade}{trail}"
            lines.append(line)
    rnd.shuffle(lines)
    # A comment only at the start of a line and followed by a judgment: trec_eval 10.0
    # misreads other comments and blank lines (a documented difference).
    if rnd.random() < 0.2:
        lines.insert(rnd.randrange(len(lines)), "# a comment")
    eol = "\r\n" if rnd.random() < 0.1 else "\n"
    return (eol.join(lines) + eol).encode(), judged


def _run(
    rnd: random.Random, queries: list[str], judged: dict[str, set[str]], shape: Shape
) -> bytes:
    lines = []
    tab_file = rnd.random() < 0.3
    number_format = rnd.choice(("pick", "pick", "uniform", "%g", "%.3f", "%e"))
    for q in queries:
        pool = list(shape.docs)
        n = rnd.randint(1, shape.retrieved)
        docs: list[str] = []
        # judged documents twice as likely, so that measures see relevant ones
        candidates = sorted(judged.get(q, set())) + pool
        seen: set[str] = set()
        for _ in range(n):
            d = rnd.choice(candidates)
            if d in seen and rnd.random() > 0.03:
                continue
            seen.add(d)
            docs.append(d)
        for rank, d in enumerate(docs, start=1):
            if number_format == "pick":
                score = rnd.choice(SCORES)
            elif number_format == "uniform":
                score = repr(round(rnd.uniform(-5, 5), rnd.choice((0, 1, 3, 17))))
            else:
                score = number_format % rnd.choice((1.0, 0.5, 2.0, rnd.uniform(0, 3)))
            tag = rnd.choice(("runA", "runA", "t2", "run.x"))
            if rnd.random() < 0.15:
                sep = [_sep(rnd) for _ in range(5)]
            else:
                sep = ["\t" if tab_file else " "] * 5
            lead = rnd.choice(("", "", "", "", " ", "\t"))
            extra = " extra field" if rnd.random() < 0.05 else ""
            line = (
                f"{lead}{q}{sep[0]}Q0{sep[1]}{d}{sep[2]}{rank}{sep[3]}{score}{sep[4]}{tag}{extra}"
            )
            lines.append(line)
    rnd.shuffle(lines)
    if rnd.random() < 0.15:
        lines.insert(rnd.randrange(len(lines) + 1), rnd.choice(("# note", "  # note", "")))
    eol = "\r\n" if rnd.random() < 0.1 else "\n"
    return (eol.join(lines) + eol).encode()


def _flags(rnd: random.Random) -> list[str]:
    """Random options of the drop-in, in random order and spelling."""
    groups: list[list[str]] = []
    switches = [f for f, p in (("q", 0.5), ("c", 0.3), ("n", 0.1), ("J", 0.15)) if rnd.random() < p]
    if switches and rnd.random() < 0.3:
        groups.append(["-" + "".join(switches)])  # -qc
    else:
        groups += [["-" + f] for f in switches]
    valued = (
        ("-l", 0.2, ("0", "1", "1", "2", "3")),
        ("-M", 0.25, ("0", "1", "2", "3", "5", "8", "1000", "-5", "7x", SATURATED)),
        ("-N", 0.15, ("0", "20", "100", "20", "100", "1e20")),
        ("-R", 0.05, ("qrels",)),
        ("-T", 0.05, ("trec_results",)),
        ("-D", 0.03, ("0", "0.q1", "0.10")),
    )
    for flag, p, values in valued:
        if rnd.random() < p:
            groups.append(_valued(rnd, flag, rnd.choice(values)))
    if rnd.random() < 0.03:
        groups.append(["-o"])
    if rnd.random() < 0.01:
        groups.append(["-v"])
    if rnd.random() < 0.85:
        chosen = rnd.sample(MEASURES, rnd.randint(1, 3))
        if rnd.random() < 0.03:
            chosen.append(rnd.choice(ODD_MEASURES))
        # trec_eval 10.0 frees shared gain parameters twice: one such measure per case
        with_gains = [m for m in chosen if m.startswith(_GAIN_PARAMS)]
        for m in (m for m in chosen if m not in with_gains[1:]):
            groups.append(["--measure=" + m] if rnd.random() < 0.1 else _valued(rnd, "-m", m))
    rnd.shuffle(groups)
    return [part for g in groups for part in g]


def _valued(rnd: random.Random, flag: str, value: str) -> list[str]:
    """``-M5`` or ``-M 5``."""
    return [f"{flag}{value}"] if rnd.random() < 0.5 else [flag, value]


def make_case(seed: int) -> Case:
    """The random case of ``seed``."""
    rnd = random.Random(seed)
    shape = LARGE if rnd.random() < 0.1 else SMALL
    judged_queries = rnd.sample(shape.queries, rnd.randint(1, len(shape.queries) // 2))
    qrels, judged = _qrels(rnd, judged_queries, shape)
    run_queries = [q for q in judged_queries if rnd.random() < 0.95]
    if rnd.random() < 0.3:
        run_queries += rnd.sample([q for q in shape.queries if q not in judged_queries], 1)
    if not run_queries:
        run_queries = judged_queries[:1]
    run = _run(rnd, run_queries, judged, shape)
    stdin = rnd.random() < 0.15
    run_arg = "-" if stdin else "RUN"
    options = _flags(rnd)
    # options before or after the two files: trec_eval reads them with GNU getopt
    args = [*options, "QRELS", run_arg] if rnd.random() < 0.85 else ["QRELS", run_arg, *options]
    return Case(seed, qrels, run, args, stdin=stdin)


def _ours(case: Case, argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    if case.stdin:
        sys.stdin = io.TextIOWrapper(io.BytesIO(case.run))
    try:
        status = trec_eval.run(argv, out, err)
    except Exception as exc:  # a traceback is a difference like any other: shown, not raised
        return -1, f"{out.getvalue()}<{type(exc).__name__}: {exc}>"
    finally:
        sys.stdin = saved
    return status, out.getvalue()


def _theirs(case: Case, argv: list[str]) -> tuple[int, str]:
    proc = subprocess.run(
        [BINARY, *argv],
        input=case.run if case.stdin else b"",
        capture_output=True,
        timeout=30,
        check=False,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


def _grades_by_query(qrels: bytes) -> dict[str, list[int]]:
    grades: dict[str, list[int]] = {}
    for raw in qrels.split(b"\n"):
        fields = raw.split()
        if len(fields) == 4 and not fields[0].startswith(b"#"):
            grades.setdefault(fields[0].decode(), []).append(int(fields[3]))
    return grades


def _judged_only_negative(qrels: bytes) -> bool:
    return any(max(g) < 0 for g in _grades_by_query(qrels).values())


def _missing_from_run(case: Case) -> bool:
    def queries(data: bytes, n: int) -> set[bytes]:
        return {
            f[0]
            for f in (raw.split() for raw in data.split(b"\n"))
            if len(f) >= n and not f[0].startswith(b"#")
        }

    return bool(queries(case.qrels, 4) - queries(case.run, 6))


def _switch(case: Case, letter: str) -> bool:
    """Whether the command line has switch ``-letter``, alone or grouped (``-qc``)."""
    return any(
        a.startswith("-") and len(a) > 1 and letter in a[1:] and set(a[1:]) <= set("qcnJov")
        for a in case.args
    )


def deliberate(case: Case, theirs: tuple[int, str], ours: tuple[int, str]) -> str | None:
    """The documented differences (docs/trec_eval.md) a differing case falls under, or None.

    With the same exit status and as many lines, every differing line must be explained.
    """
    status, stdout = theirs
    if status < 0 and ours[0] >= 0:
        return "trec_eval crashes"
    if _judged_only_negative(case.qrels) and status == 4:
        return "query judged only negative: trec_eval cannot calculate a measure"
    a, b = stdout.splitlines(), ours[1].splitlines()
    if status != ours[0] or len(a) != len(b):
        return None
    reasons = set()
    for x, y in zip(a, b, strict=True):
        if x != y:
            reason = _line_reason(case, x)
            if reason is None:
                return None
            reasons.add(reason)
    return " + ".join(sorted(reasons)) or None


def _line_reason(case: Case, line: str) -> str | None:
    """The documented difference that explains trec_eval's output ``line``, or None."""
    label = line.split("\t")[0].strip()
    if line.endswith("-nan"):
        return "trec_eval prints -nan"
    # trec_eval 10.0's rbp rescales its gains by a range read from uninitialised memory,
    # left there by the measures computed before it (with a range initialised, every such
    # difference goes)
    if label.startswith("rbp") and not label.startswith("rbp_resid"):
        return "rbp: trec_eval rescales the gains by an uninitialised range"
    if not _switch(case, "c"):
        return None
    summary = line.split("\t")[1:2] == ["all"]
    if label == "num_rel" and summary and any(a.startswith("-l") for a in case.args):
        return "-c -l N: summary num_rel is the sum of the per-query lines"
    if _missing_from_run(case) and (
        label.startswith(("utility_", "rbp_resid_", "relstring_")) or label == "num_rel"
    ):
        return "-c scores a missing query as an empty ranking"
    return None


def test_trec_eval_differential(tmp_path: Path) -> None:
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    tally: Counter[str] = Counter()
    differences: list[str] = []
    for seed in range(FIRST_SEED, FIRST_SEED + N_CASES):
        case = make_case(seed)
        qrels_path.write_bytes(case.qrels)
        run_path.write_bytes(case.run)
        where = {"QRELS": str(qrels_path), "RUN": str(run_path)}
        argv = [where.get(a, a) for a in case.args]
        theirs, ours = _theirs(case, argv), _ours(case, argv)
        if theirs == ours:
            tally["identical" if theirs[0] == 0 else "both refuse identically"] += 1
            continue
        reason = deliberate(case, theirs, ours)
        if reason is not None:
            tally[f"deliberate: {reason}"] += 1
            continue
        tally["different"] += 1
        if len(differences) < int(os.environ.get("RAGMETER_DIFF_SHOW", "5")):
            differences.append(
                f"{case.describe()}\ntrec_eval exit {theirs[0]}:\n{theirs[1]}"
                f"ragmeter exit {ours[0]}:\n{ours[1]}"
            )
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(tally.items()))
    print(f"\n{N_CASES} comparisons — {summary}")
    assert not differences, f"{tally['different']} difference(s) ({summary}); first:\n\n" + (
        "\n\n".join(differences)
    )
