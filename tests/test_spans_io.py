"""Span-label and chunk-table readers: the formats, chunking_evaluation's questions_df.csv as
written, LangChain / LlamaIndex exports, and one-line errors naming file, line and field."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.judgments import Corpus
from ragmeter.core.spans import SpanLabels
from ragmeter.errors import InputError
from ragmeter.io.spans import read_chunks, read_spans

TEXT = "The capital of France is Paris. Berlin is in Germany."
CORPUS = Corpus.from_dict({"d1": TEXT, "d2": "short"})


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_span_rows_in_three_formats(tmp_path: Path) -> None:
    rows = [
        {"query_id": "q1", "doc_id": "d1", "start": 25, "end": 30, "grade": 2},
        {"query_id": "q2", "doc_id": "d1", "start": 32, "end": 38},
    ]
    jsonl = read_spans(_jsonl(tmp_path / "s.jsonl", rows))
    (tmp_path / "s.csv").write_text(
        "query_id,doc_id,start,end,grade\nq1,d1,25,30,2\nq2,d1,32,38,\n", encoding="utf-8"
    )
    csv = read_spans(tmp_path / "s.csv")
    pq.write_table(
        pa.table(
            {
                "query_id": ["q1", "q2"],
                "doc_id": ["d1", "d1"],
                "start": [25, 32],
                "end": [30, 38],
                "grade": [2, 1],
            }
        ),
        tmp_path / "s.parquet",
    )
    parquet = read_spans(tmp_path / "s.parquet")
    for spans in (jsonl, csv, parquet):
        assert spans.query_ids.tolist() == ["q1", "q2"]
        assert spans.doc_ids.tolist() == ["d1", "d1"]
        assert spans.starts.tolist() == [25, 32]
        assert spans.ends.tolist() == [30, 38]
        assert spans.grades.tolist() == [2, 1]
    assert TEXT[25:30] == "Paris"


QUESTIONS_DF = (
    "question,references,corpus_id\n"
    '"Where is Paris?","[{""content"": ""Paris"", ""start_index"": 25, ""end_index"": 30}, '
    '{""content"": ""France"", ""start_index"": 15, ""end_index"": 21}]",d1\n'
    '"Where is Berlin?","[{""content"": ""Berlin is in Germany"", ""start_index"": 32, '
    '""end_index"": 52}]",d1\n'
)


def test_questions_df_as_written(tmp_path: Path) -> None:
    path = tmp_path / "questions_df.csv"
    path.write_text(QUESTIONS_DF, encoding="utf-8")
    spans = read_spans(path, corpus=CORPUS)
    # the query id is the 0-based row number, as chunking_evaluation numbers its questions
    assert spans.query_ids.tolist() == ["0", "0", "1"]
    assert spans.doc_ids.tolist() == ["d1"] * 3
    assert [TEXT[s:e] for s, e in zip(spans.starts, spans.ends, strict=True)] == [
        "Paris",
        "France",
        "Berlin is in Germany",
    ]
    assert spans.warnings == ()


def test_questions_df_text_mismatch_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "questions_df.csv"
    path.write_text(QUESTIONS_DF.replace('""Paris""', '""Lyon""'), encoding="utf-8")
    spans = read_spans(path, corpus=CORPUS)
    assert len(spans.warnings) == 1
    assert "1 span(s) whose text differs" in spans.warnings[0]
    assert "line 2" in spans.warnings[0]


@pytest.mark.parametrize(
    ("row", "field", "needle"),
    [
        ({"query_id": "q", "doc_id": "d1", "start": 5, "end": 2}, "end", "before start"),
        ({"query_id": "q", "doc_id": "d1", "start": 5, "end": 5}, "end", "empty span"),
        ({"query_id": "q", "doc_id": "d1", "start": -1, "end": 2}, "start", "negative"),
        ({"query_id": "q", "doc_id": "d1", "start": 1.5, "end": 2}, "start", "not an integer"),
        ({"query_id": "q", "doc_id": "d1", "start": "x", "end": 2}, "start", "not an integer"),
        ({"query_id": "q", "doc_id": "d1", "start": True, "end": 2}, "start", "not an integer"),
        ({"query_id": "q", "start": 1, "end": 2}, "doc_id", "missing"),
    ],
)
def test_bad_span_rows(tmp_path: Path, row: dict[str, object], field: str, needle: str) -> None:
    good = {"query_id": "q", "doc_id": "d1", "start": 0, "end": 3}
    path = _jsonl(tmp_path / "s.jsonl", [good, row])
    with pytest.raises(InputError) as info:
        read_spans(path)
    message = str(info.value)
    assert f"{path}, line 2, field '{field}'" in message and needle in message
    assert "\n" not in message


def test_span_past_end_and_unknown_doc(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "s.jsonl",
        [
            {"query_id": "q", "doc_id": "d2", "start": 0, "end": 5},
            {"query_id": "q", "doc_id": "d2", "start": 0, "end": 6},
        ],
    )
    with pytest.raises(InputError, match=r"line 2, field 'end': end 6 is past the end"):
        read_spans(path, corpus=CORPUS)
    path = _jsonl(tmp_path / "u.jsonl", [{"query_id": "q", "doc_id": "d9", "start": 0, "end": 1}])
    with pytest.raises(InputError, match=r"line 1, field 'doc_id': document 'd9' is not in"):
        read_spans(path, corpus=CORPUS)


def test_chunk_rows_and_errors(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "c.jsonl",
        [
            {"chunk_id": "c1", "doc_id": "d1", "start": 0, "end": 31},
            {"chunk_id": "c2", "doc_id": "d1", "start": 31, "end": 53},
            {"chunk_id": "c1", "doc_id": "d1", "start": 0, "end": 31},  # a repeat: kept once
            {"chunk_id": "x9", "doc_id": "elsewhere", "start": 0, "end": 4},
        ],
    )
    table = read_chunks(path, corpus=CORPUS)
    assert table.chunk_ids.tolist() == ["c1", "c2", "x9"]
    assert table.ends.tolist() == [31, 53, 4]
    assert table.warnings == (f"{path}: 1 chunk(s) of documents absent from the corpus corpus",)
    bad = _jsonl(
        tmp_path / "b.jsonl",
        [
            {"chunk_id": "c1", "doc_id": "d1", "start": 0, "end": 31},
            {"chunk_id": "c1", "doc_id": "d1", "start": 0, "end": 30},
        ],
    )
    with pytest.raises(InputError, match=r"line 2, field 'chunk_id': chunk 'c1' given twice"):
        read_chunks(bad)
    (tmp_path / "c.csv").write_text("chunk_id,doc_id,start,end\nc1,d1,0,3.5\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c.csv, line 2, field 'end': offset '3.5' is not"):
        read_chunks(tmp_path / "c.csv")


def test_langchain_and_llamaindex_exports(tmp_path: Path) -> None:
    langchain = _jsonl(
        tmp_path / "lc.jsonl",
        [
            {
                "id": "lc-0",
                "page_content": TEXT[:31],
                "metadata": {"source": "d1", "start_index": 0},
            },
            {
                "id": None,
                "page_content": TEXT[32:],
                "metadata": {"source": "d1", "start_index": 32, "chunk_id": "lc-1"},
            },
        ],
    )
    table = read_chunks(langchain)
    assert table.chunk_ids.tolist() == ["lc-0", "lc-1"]
    assert table.starts.tolist() == [0, 32] and table.ends.tolist() == [31, 53]
    llama = _jsonl(
        tmp_path / "li.jsonl",
        [
            {"id_": "n0", "start_char_idx": 0, "end_char_idx": 31, "ref_doc_id": "d1"},
            {
                "id_": "n1",
                "start_char_idx": 32,
                "end_char_idx": 53,
                "relationships": {"1": {"node_id": "d1", "node_type": "4"}},
            },
        ],
    )
    nodes = read_chunks(llama)
    assert nodes.chunk_ids.tolist() == ["n0", "n1"]
    assert nodes.doc_ids.tolist() == ["d1", "d1"]
    assert nodes.ends.tolist() == [31, 53]
    missing = _jsonl(tmp_path / "m.jsonl", [{"page_content": "x", "metadata": {"source": "d"}}])
    with pytest.raises(InputError, match=r"line 1, field 'chunk_id': missing"):
        read_chunks(missing)


def test_chunk_errors_name_the_file_line(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(
        "chunk_id,doc_id,start,end\nc1,d1,0,3\nc2,d1,3,9\nc1,d1,0,4\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"c.csv, line 4, field 'chunk_id': chunk 'c1' given"):
        read_chunks(path)
    path.write_text("chunk_id,doc_id,start,end\nc1,d2,0,3\nc2,d2,3,9\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c.csv, line 3, field 'end': chunk 'c2': end 9 is past"):
        read_chunks(path, corpus=CORPUS)


# -- spans marked more than once (issue #39, T6) -----------------------------------------------


def _span_recall(spans_path: Path, chunk: tuple[int, int]) -> float:
    """span_recall of a run retrieving the one chunk ``chunk`` of d1 for q1."""
    from ragmeter import Run, evaluate
    from ragmeter.core.spans import ChunkTable, SpanInputs

    table = ChunkTable.from_rows([("d1#0", "d1", *chunk), ("d1#1", "d1", chunk[1], 53)])
    run = Run.from_lists({"q1": ["d1#0"]})
    inputs = SpanInputs(read_spans(spans_path), table)
    return float(
        evaluate(run, None, ["span_recall"], spans=inputs).means()[run.name]["span_recall"]
    )


def test_two_annotators_marking_the_same_evidence_count_it_once(tmp_path: Path) -> None:
    """T6: the web app's everyone-export writes one row per annotator; the same evidence
    twice must not halve span_recall (a chunk holding all of it: recall 1, not 0.5)."""
    row = {"query_id": "q1", "doc_id": "d1", "start": 0, "end": 26, "grade": 5}
    path = _jsonl(
        tmp_path / "s.jsonl", [{**row, "annotator": "alice"}, {**row, "annotator": "bob"}]
    )
    spans = read_spans(path)
    assert (spans.starts.tolist(), spans.ends.tolist(), spans.grades.tolist()) == ([0], [26], [5])
    assert spans.annotators == ("alice+bob",)
    assert any("2 span rows combined into 1 span(s)" in w for w in spans.warnings)
    assert _span_recall(path, (0, 30)) == 1.0


def test_annotators_are_combined_as_the_union_of_their_characters(tmp_path: Path) -> None:
    # q1/d1: alice [0, 10) g5, bob [5, 20) g3, dan [20, 25) g1 touch into [0, 25) (grade 5);
    # carol [30, 40) g2 stays apart; q2's span and d2's are other pairs: untouched
    rows = [
        ("q1", "d1", 30, 40, 2, "carol"),
        ("q1", "d1", 5, 20, 3, "bob"),
        ("q1", "d1", 0, 10, 5, "alice"),
        ("q2", "d1", 0, 10, 1, "alice"),
        ("q1", "d2", 0, 3, 1, "bob"),
        ("q1", "d1", 20, 25, 1, "dan"),
    ]
    keys = ("query_id", "doc_id", "start", "end", "grade", "annotator")
    path = _jsonl(tmp_path / "s.jsonl", [dict(zip(keys, r, strict=True)) for r in rows])
    spans = read_spans(path)
    got = list(
        zip(
            spans.query_ids.tolist(),
            spans.doc_ids.tolist(),
            spans.starts.tolist(),
            spans.ends.tolist(),
            spans.grades.tolist(),
            spans.annotators or (),
            strict=True,
        )
    )
    # in the order of each span's first row in the file
    assert got == [
        ("q1", "d1", 30, 40, 2, "carol"),
        ("q1", "d1", 0, 25, 5, "alice+bob+dan"),
        ("q2", "d1", 0, 10, 1, "alice"),
        ("q1", "d2", 0, 3, 1, "bob"),
    ]
    assert spans.lines is not None and spans.lines.tolist() == [1, 2, 4, 5]


def test_overlapping_annotators_recall_by_hand(tmp_path: Path) -> None:
    # alice [0, 10), bob [5, 20): the evidence is [0, 20), 20 characters; the chunk [0, 10)
    # covers 10 of them: 10/20 = 0.5 (each span on its own would give 10 / (10 + 15))
    keys = ("query_id", "doc_id", "start", "end", "annotator")
    rows = [("q1", "d1", 0, 10, "alice"), ("q1", "d1", 5, 20, "bob")]
    path = _jsonl(tmp_path / "s.jsonl", [dict(zip(keys, r, strict=True)) for r in rows])
    assert _span_recall(path, (0, 10)) == pytest.approx(0.5)


def test_without_annotators_duplicates_merge_and_overlaps_stay(tmp_path: Path) -> None:
    # no annotator: the same span twice is one (largest grade); overlapping spans stay two
    # (chunking_evaluation's references, whose quirks span_recall keeps)
    keys = ("query_id", "doc_id", "start", "end", "grade")
    rows = [("q1", "d1", 0, 10, 1), ("q1", "d1", 5, 20, 1), ("q1", "d1", 0, 10, 4)]
    path = _jsonl(tmp_path / "s.jsonl", [dict(zip(keys, r, strict=True)) for r in rows])
    spans = read_spans(path)
    assert list(
        zip(spans.starts.tolist(), spans.ends.tolist(), spans.grades.tolist(), strict=True)
    ) == [
        (0, 10, 4),
        (5, 20, 1),
    ]
    assert any("3 span rows combined into 2 span(s)" in w for w in spans.warnings)
    # chunk [0, 10): 10 evidence characters covered / Σ span lengths (10 + 15), the
    # documented chunking_evaluation denominator
    assert _span_recall(path, (0, 10)) == pytest.approx(10 / 25)
    single = read_spans(_jsonl(tmp_path / "one.jsonl", [dict(zip(keys, rows[0], strict=True))]))
    assert single.warnings == ()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2"]),
            st.sampled_from(["d1", "d2"]),
            st.integers(0, 30),
            st.integers(1, 8),
            st.integers(1, 5),
        ),
        min_size=1,
        max_size=12,
    ),
    st.booleans(),
)
def test_combined_spans_keep_every_character_once(
    rows: list[tuple[str, str, int, int, int]], named: bool
) -> None:
    """Counted character by character: with annotators, each (query, document)'s spans become
    disjoint, non-touching ranges whose characters are exactly those marked, each with the
    largest grade of a span it touches; without, only exact duplicates go."""
    from ragmeter.core.spans import combine_spans

    spans = SpanLabels.from_rows([(q, d, s, s + n, g) for q, d, s, n, g in rows])
    if named:
        spans = replace(spans, annotators=tuple(f"a{i % 2}" for i in range(len(rows))))
    out = combine_spans(spans)
    marked: dict[tuple[str, str], set[int]] = {}
    for q, d, s, n, _ in rows:
        marked.setdefault((q, d), set()).update(range(s, s + n))
    got: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for q, d, s, e in zip(
        out.query_ids, out.doc_ids, out.starts.tolist(), out.ends.tolist(), strict=True
    ):
        got.setdefault((q, d), []).append((s, e))
    assert {k: {x for s, e in v for x in range(s, e)} for k, v in got.items()} == marked
    if named:
        for ranges in got.values():
            ranges.sort()
            assert all(a[1] < b[0] for a, b in itertools.pairwise(ranges))
    else:
        distinct = {(q, d, s, s + n) for q, d, s, n, _ in rows}
        assert len(out) == len(distinct)
    assert int(out.grades.max()) == max(g for *_, g in rows)


# -- integers past int64, and a grade is a grade (issue #39, T14 and item 19) ----------------

HUGE = 99999999999999999999999  # past int64: numpy cannot hold it


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"start": 0, "end": HUGE}, "end", "offset 99999999999999999999999 is too large"),
        ({"start": HUGE, "end": HUGE + 1}, "start", "offset 99999999999999999999999 is too"),
        ({"start": 0, "end": 5, "grade": HUGE}, "grade", "grade 99999999999999999999999 is too"),
        ({"start": 0, "end": 5, "grade": 2**31}, "grade", "grade 2147483648 is too large"),
        ({"start": 0, "end": 5, "grade": "high"}, "grade", "grade 'high' is not an integer"),
        ({"start": 0, "end": 5, "relevance": 2.5}, "relevance", "grade 2.5 is not an integer"),
    ],
)
def test_bad_span_numbers_name_file_line_field(
    tmp_path: Path, row: dict[str, object], field: str, message: str
) -> None:
    path = _jsonl(tmp_path / "s.jsonl", [{"query_id": "q", "doc_id": "d1", **row}])
    with pytest.raises(InputError) as caught:
        read_spans(path)
    err = caught.value
    assert (err.source, err.line, err.field) == (str(path), 1, field)
    assert message in str(err)


def test_huge_offsets_in_csv_and_chunk_tables(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text(f"query_id,doc_id,start,end\nq,d1,0,5\nq,d1,0,{HUGE}\n")
    with pytest.raises(InputError, match=r"line 3, field 'end': offset .* is too large"):
        read_spans(tmp_path / "s.csv")
    table = _jsonl(
        tmp_path / "c.jsonl", [{"chunk_id": "c", "doc_id": "d", "start": 0, "end": HUGE}]
    )
    with pytest.raises(InputError, match="line 1, field 'end'"):
        read_chunks(table)
    lc = {"page_content": "abc", "metadata": {"start_index": HUGE, "source": "d", "id": "x"}}
    with pytest.raises(InputError, match=r"line 1, field 'metadata\.start_index'"):
        read_chunks(_jsonl(tmp_path / "lc.jsonl", [lc]))
    # the largest offset read, 2^40 − 1, is read
    ok = read_spans(
        _jsonl(
            tmp_path / "ok.jsonl", [{"query_id": "q", "doc_id": "d", "start": 0, "end": 2**40 - 1}]
        )
    )
    assert ok.ends.tolist() == [2**40 - 1]
    with pytest.raises(InputError, match="field 'end'"):
        read_spans(
            _jsonl(
                tmp_path / "no.jsonl", [{"query_id": "q", "doc_id": "d", "start": 0, "end": 2**40}]
            )
        )


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_span_labels_given_as_qrels_point_to_spans(tmp_path: Path, suffix: str) -> None:
    """Item 18: a spans file given as --qrels graded whole documents and scored a chunk run
    0; it is an error that says to use --spans."""
    from ragmeter.io.readers import read_qrels

    path = tmp_path / f"spans.{suffix}"
    row = {"query_id": "q1", "doc_id": "d1", "start": 0, "end": 26, "grade": 5}
    if suffix == "jsonl":
        _jsonl(path, [row])
    elif suffix == "csv":
        path.write_text("query_id,doc_id,start,end,grade\nq1,d1,0,26,5\n")
    else:
        pq.write_table(pa.table({k: [v] for k, v in row.items()}), path)
    with pytest.raises(InputError, match=r"span labels .* --spans"):
        read_qrels(path)


def test_a_chunk_table_given_as_qrels_points_to_chunks(tmp_path: Path) -> None:
    from ragmeter.io.readers import read_qrels

    path = _jsonl(
        tmp_path / "c.jsonl", [{"chunk_id": "d1#0", "doc_id": "d1", "start": 0, "end": 9}]
    )
    with pytest.raises(InputError, match=r"a chunk table, not qrels; give it with --chunks"):
        read_qrels(path)
