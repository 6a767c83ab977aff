"""A corpus of malformed inputs, one or more for every reader and format: each ends in an
:class:`~ragmeter.errors.InputError` naming the file (and the line and field where there is
one) or in the correct result, never in another exception.

The cases complement ``tests/test_io_errors.py`` (field-by-field errors of the run, qrels and
sample readers): here the encodings (UTF-16, BOM, CRLF, binary), sizes (empty, huge lines,
compressed files expanding to one endless line, CSV cells longer than the csv module's
default limit), numbers no integer type holds (``99999999999999999999``), JSON nested 100,000
deep, YAML alias bombs, Parquet columns of the wrong type and the readers of judgments,
sub-questions, corpora, rated answers, answer samples, utilities and passage lengths.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragmeter.errors import InputError
from ragmeter.io.answers import read_answer_samples
from ragmeter.io.judgments import read_answers, read_corpus, read_judgments, read_questions
from ragmeter.io.lengths import read_passage_lengths
from ragmeter.io.readers import read_qrels, read_run, read_samples
from ragmeter.io.utilities import read_utilities

READERS: dict[str, Callable[[Path], Any]] = {
    "run": read_run,
    "qrels": read_qrels,
    "samples": read_samples,
    "judgments": read_judgments,
    "questions": read_questions,
    "corpus": read_corpus,
    "answers": read_answers,
    "answer_samples": read_answer_samples,
    "utilities": read_utilities,
    "lengths": read_passage_lengths,
}

BIG = "99999999999999999999"  # more than any 64-bit integer holds
DEEP = "[" * 100_000 + "]" * 100_000
#: nine levels of nine aliases each: 9⁹ nodes once expanded
BOMB = "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" if p else f"{n}: &{n} [x, x, x, x, x, x, x, x, x]\n"
    for p, n in zip([None, *"abcdefgh"], "abcdefghi", strict=True)
)


def _gzip_bomb(head: bytes, size: int) -> Callable[[Path], None]:
    """A gzip file of ``head`` and then ``size`` bytes without a newline (compressed a MiB at
    a time: the uncompressed bytes are never held)."""

    def write(path: Path) -> None:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        block = b"d" * (1 << 20)
        with path.open("wb") as fh:
            fh.write(packer.compress(head))
            for _ in range(size >> 20):
                fh.write(packer.compress(block))
            fh.write(packer.flush())

    return write


def _ragas_csv(passages: int, size: int) -> str:
    """A RAGAS CSV row of ``passages`` retrieved passages of ``size`` characters each."""
    texts = [f"p{i} " + "x" * size for i in range(passages)]
    return f'user_input,retrieved_contexts,reference_contexts\nq,"{texts!r}","{[texts[1]]!r}"\n'


def _parquet(table: pa.Table) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        pq.write_table(table, path)

    return write


@dataclass(frozen=True)
class Bad:
    """A malformed file and what its error must say."""

    reader: str
    name: str
    content: bytes | str | Callable[[Path], None]
    line: int | None = None
    field: str | None = None
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class Good:
    """An unusual but valid file and a check of what it reads as."""

    reader: str
    name: str
    content: bytes | str | Callable[[Path], None]
    check: Callable[[Any], bool] = field(default=lambda _: True)


TREC_RUN = "q Q0 a 1 2.0 t\nq Q0 b 2 1.0 t\n"
QRELS = "q 0 a 1\nq 0 b 0\n"
JUDGED = '{"query_id": "q", "doc_id": "a", "ratings": [1, 2]}\n'

CASES: list[Bad | Good] = [
    # -- TREC runs and qrels -----------------------------------------------------------
    Bad("run", "utf16.trec", TREC_RUN.encode("utf-16"), 1, None, ("binary",)),
    Bad("run", "utf16le.trec", TREC_RUN.encode("utf-16-le"), None, None, ()),
    Bad("run", "binary.trec", bytes(range(256)) * 4, None, None, ()),
    Bad("run", "nul.trec", "q Q0 a 1 2.0 t\nq Q0 b\x00 2 1.0 t\n", 2, None, ()),
    # fields after the tag are ignored, as trec_eval does
    Good("run", "seven.trec", "q Q0 a 1 2.0 t extra\n", lambda r: r.to_dict() == {"q": {"a": 2.0}}),
    Bad("run", "one.trec", "q\n", 1, None, ("expected 6",)),
    Bad("run", "bigscore.trec", f"q Q0 a 1 {BIG}e999 t\n", 1, "score", ("finite",)),
    Bad("run", "hexscore.trec", "q Q0 a 1 0x10 t\n", 1, "score", ("number",)),
    Bad("run", "truncated.trec", "q Q0 a 1 2.0 t\nq Q0 b 2", 2, None, ("expected 6",)),
    Bad("run", "space.trec", "   \n\t\n", None, None, ("no data lines",)),
    Bad("qrels", "big.qrels", f"q 0 a {BIG}\n", 1, "grade", ("out of range",)),
    Bad("qrels", "negbig.qrels", f"q 0 a 1\nq 0 b -{BIG}\n", 2, "grade", ("out of range",)),
    Bad("qrels", "float.qrels", "q 0 a 1e3\n", 1, "grade", ("integer",)),
    Bad("qrels", "five.qrels", "q 0 a 1 1\n", 1, None, ("expected 4",)),
    Bad("qrels", "bom.qrels", b"\xef\xbb\xbf" + QRELS.encode(), 1, None, ("byte-order",)),
    Bad("qrels", "latin1.qrels", "q 0 caf\xe9 1\n".encode("latin-1"), 1, None, ("UTF-8",)),
    Good("run", "crlf.trec", TREC_RUN.replace("\n", "\r\n"), lambda r: len(r) == 2),
    Good("qrels", "crlf.qrels", QRELS.replace("\n", "\r\n"), lambda q: len(q) == 2),
    Good("qrels", "nonl.qrels", QRELS.rstrip("\n"), lambda q: len(q) == 2),
    Good(
        "run",
        "hugeline.trec",
        f"q Q0 {'d' * 1_000_000} 1 2.0 t\n",
        lambda r: len(r) == 1,
    ),
    # -- CSV / TSV ---------------------------------------------------------------------
    Bad("qrels", "big.csv", f"qid,docid,grade\nq,a,{BIG}\n", 2, "grade", ()),
    Bad("qrels", "big.tsv", f"qid\tdocid\tgrade\nq\ta\t1\nq\tb\t{BIG}\n", 3, "grade", ()),
    Bad("run", "wide.csv", "qid,docid,score\nq,a,1,9\n", 2, None, ("expected 3",)),
    Bad("run", "inf.csv", "qid,docid,score\nq,a,inf\n", 2, "score", ()),
    Bad("run", "noidcol.csv", "query,docid,score\nq,a,1\n", 1, None, ("qid",)),
    Bad("run", "utf16.csv", "qid,docid,score\nq,a,1\n".encode("utf-16"), None, None, ()),
    Bad("run", "binary.csv", b"\x00\x01\x02\xff" * 100, None, None, ()),
    Bad("qrels", "quote.csv", 'qid,docid,grade\nq,"a,1\n', None, None, ()),
    Good("run", "crlf.csv", "qid,docid,score\r\nq,a,1\r\nq,b,2\r\n", lambda r: len(r) == 2),
    # a cell over the csv module's default limit (131,072 characters): 33 passages
    Good("run", "longcell.csv", _ragas_csv(33, 4_500), lambda r: len(r) == 33),
    # -- compressed files expanding to one endless line ----------------------------------
    Bad("qrels", "bomb.qrels.gz", _gzip_bomb(b"q 0 a 1\nq 0 ", 80 << 20), 2, None, ("64 MiB",)),
    Bad("run", "bomb.jsonl.gz", _gzip_bomb(b'{"qid": "', 80 << 20), 1, None, ("64 MiB",)),
    # -- Parquet -----------------------------------------------------------------------
    Bad(
        "run",
        "strscore.parquet",
        _parquet(pa.table({"qid": ["q"], "docid": ["a"], "score": ["high"]})),
        None,
        "score",
        (),
    ),
    Bad(
        "qrels",
        "floatgrade.parquet",
        _parquet(pa.table({"qid": ["q"], "docid": ["a"], "grade": [1.5]})),
        None,
        "grade",
        ("integer",),
    ),
    Bad(
        "qrels",
        "strgrade.parquet",
        _parquet(pa.table({"qid": ["q"], "docid": ["a"], "grade": [BIG]})),
        None,
        "grade",
        (),
    ),
    Bad(
        "run",
        "listid.parquet",
        _parquet(pa.table({"qid": [["q"]], "docid": ["a"], "score": [1.0]})),
        None,
        None,
        (),
    ),
    Bad(
        "run",
        "nodoc.parquet",
        _parquet(pa.table({"qid": ["q"], "score": [1.0]})),
        None,
        None,
        ("doc",),
    ),
    Bad("run", "notparquet.parquet", "qid,docid,score\nq,a,1\n", None, None, ("Parquet",)),
    Bad("run", "truncated.parquet", b"PAR1\x00\x00", None, None, ()),
    # -- JSON / JSONL rows and documents ----------------------------------------------
    Bad("run", "deep.json", DEEP, None, None, ("nested too deeply",)),
    Bad("qrels", "deep.jsonl", '{"qid": "q", "docid": "a", "rel": ' + DEEP + "}\n", 1, None, ()),
    Bad("qrels", "big.jsonl", f'{{"qid": "q", "docid": "a", "rel": {BIG}}}\n', 1, "rel", ()),
    Bad("qrels", "big.json", f'{{"q": {{"a": {BIG}}}}}', None, "grade", ("integers",)),
    Bad("run", "truncated.json", '[{"qid": "q", "docid": "a", "sco', 1, None, ("invalid JSON",)),
    Bad(
        "run",
        "midline.jsonl",
        '{"qid": "q", "docid": "a", "score": 1}\n{"qid": "q", "docid": \n'
        '{"qid": "q", "docid": "c", "score": 3}\n',
        2,
        None,
        ("invalid JSON",),
    ),
    Bad("run", "utf16.jsonl", '{"qid": "q"}\n'.encode("utf-16"), None, None, ()),
    Bad("run", "binary.json", bytes(range(256)), None, None, ()),
    Bad("run", "nan.jsonl", '{"qid": "q", "docid": "a", "score": NaN}\n', 1, "score", ()),
    Bad("run", "array.jsonl", "[1, 2, 3]\n", 1, None, ()),
    Bad("run", "wrongnest.json", '{"q": [["a", 1]]}', None, "q", ("element 0 is list",)),
    Good(
        "run",
        "crlf.jsonl",
        '{"qid": "q", "docid": "a", "score": 1}\r\n{"qid": "q", "docid": "b", "score": 2}\r\n',
        lambda r: len(r) == 2,
    ),
    # -- YAML --------------------------------------------------------------------------
    Bad("samples", "bomb.yaml", BOMB, None, None, ("aliases expand",)),
    Bad("run", "bomb.yml", BOMB, None, None, ("aliases expand",)),
    Bad("samples", "selfref.yaml", "- &s [*s]\n", 1, None, ("contains it",)),
    Bad("samples", "deep.yaml", DEEP, 1, None, ("YAML",)),
    Bad("samples", "tab.yaml", "- id: q\n\tretrieved: [a]\n", 2, None, ("invalid YAML",)),
    Bad("samples", "scalar.yaml", "just text\n", None, None, ()),
    Bad(
        "samples",
        "biggrade.yaml",
        f"- id: q\n  retrieved: [a]\n  expected_output: {{a: {BIG}}}\n",
        1,
        "expected_output.a",
        (),
    ),
    Good(
        "samples",
        "alias.yaml",
        "- &one {id: q1, retrieved: [a, b], expected_output: [a]}\n"
        "- {id: q2, retrieved: [a, b], expected_output: [b]}\n",
        lambda s: len(s.qrels) == 2,
    ),
    # -- sub-question judgments, sub-questions, corpora, rated answers ----------------
    Bad("judgments", "big.jsonl", f'{{"query_id": "q", "doc_id": "a", "ratings": [{BIG}]}}\n', 1),
    Bad("judgments", "float.jsonl", '{"query_id": "q", "doc_id": "a", "ratings": [1.5]}\n', 1),
    Bad("judgments", "nan.jsonl", '{"query_id": "q", "doc_id": "a", "ratings": [NaN]}\n', 1),
    Bad("judgments", "deep.jsonl", JUDGED + '{"query_id": "q", "ratings": ' + DEEP + "}\n", 2),
    Bad(
        "judgments", "width.jsonl", JUDGED + '{"query_id": "q", "doc_id": "b", "ratings": [1]}\n', 2
    ),
    Bad("judgments", "big.tsv", f"q\t1\ta\t{BIG}\n", 1, None, ()),
    Bad("judgments", "cols.tsv", "q\t1\ta\n", 1, None, ()),
    Bad("judgments", "big.qrels", f"q 1 a {BIG}\n", 1, None, ()),
    Bad("judgments", "empty.jsonl", "", None, None, ("empty",)),
    Bad("questions", "notlist.jsonl", '{"query_id": "q", "questions": "why?"}\n', 1, "questions"),
    Bad("questions", "deep.jsonl", '{"query_id": "q", "questions": ' + DEEP + "}\n", 1),
    Bad("questions", "noid.jsonl", '{"questions": ["why?"]}\n', 1, None, ()),
    Bad("corpus", "numtext.jsonl", '{"id": "a", "text": 5}\n', 1, "text", ("string",)),
    Bad("corpus", "dup.jsonl", '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', 2, "id"),
    Bad("corpus", "bom.jsonl", b'\xef\xbb\xbf{"id": "a", "text": "x"}\n', 1, None, ("byte-order",)),
    Bad("answers", "big.jsonl", f'{{"query_id": "q", "ratings": [{BIG}], "text": "x"}}\n', 1),
    Bad("answers", "textnum.jsonl", '{"query_id": "q", "ratings": [1], "text": 5}\n', 1, "text"),
    # -- answer samples, utilities, passage lengths -----------------------------------
    Bad("answer_samples", "deep.json", DEEP, None, None, ("nested too deeply",)),
    Bad("answer_samples", "truncated.json", '[{"id": "q", "question": "wh', 1, None, ("JSON",)),
    Bad("answer_samples", "obj.json", '{"x": 1}', None, None, ("list of samples",)),
    Bad("utilities", "big.txt", f"q a {BIG}e400\n", 1, None, ()),
    Bad("utilities", "range.txt", "q a 1.5\n", 1, None, ("[0, 1]",)),
    Bad("utilities", "cols.txt", "q a\n", 1, None, ()),
    Bad("utilities", "deep.json", DEEP, None, None, ("nested too deeply",)),
    Bad("lengths", "big.jsonl", f'{{"id": "a", "length": {BIG}}}\n', 1, None, ()),
    Bad("lengths", "neg.tsv", "id\tlength\na\t-3\n", 2, None, ()),
    Bad("lengths", "nan.csv", "id,length\na,nan\n", 2, None, ()),
]


def _ids(case: Bad | Good) -> str:
    return f"{case.reader}-{case.name}"


def _write(tmp_path: Path, case: Bad | Good) -> Path:
    path = tmp_path / case.name
    if callable(case.content):
        case.content(path)
    elif isinstance(case.content, str):
        path.write_bytes(case.content.encode("utf-8"))
    else:
        path.write_bytes(case.content)
    return path


def test_corpus_size() -> None:
    assert sum(isinstance(c, Bad) for c in CASES) >= 60
    assert len({_ids(c) for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_malformed_input(case: Bad | Good, tmp_path: Path) -> None:
    path = _write(tmp_path, case)
    reader = READERS[case.reader]
    start = time.perf_counter()
    if isinstance(case, Good):
        assert case.check(reader(path))
        return
    with pytest.raises(InputError) as caught:
        reader(path)
    assert time.perf_counter() - start < 5.0  # refused at once, not after expanding it
    error = caught.value
    message = str(error)
    assert error.source is not None and Path(error.source).name == case.name, message
    if case.line is not None:
        assert error.line == case.line, message
    if case.field is not None:
        assert error.field == case.field, message
    for word in case.words:
        assert word in message, message
    assert "\n" not in message.strip() and len(message) < 2000  # one readable line
