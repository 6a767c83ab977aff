"""Span-label and chunk-table readers: the formats, chunking_evaluation's questions_df.csv as
written, LangChain / LlamaIndex exports, and one-line errors naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragmeter.core.judgments import Corpus
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
