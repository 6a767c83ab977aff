"""``--spans`` / ``--chunks`` on the command line: evaluate, sweep and compare runs of
different chunkings on one set of span labels; the numbers are the library's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter import Run, evaluate
from ragmeter.cli import app
from ragmeter.core.spans import SpanInputs
from ragmeter.io.spans import read_chunks, read_spans

runner = CliRunner()

SPANS = [
    {"query_id": "q1", "doc_id": "d1", "start": 10, "end": 20},
    {"query_id": "q1", "doc_id": "d1", "start": 30, "end": 40},
    {"query_id": "q2", "doc_id": "d2", "start": 0, "end": 5},
]
CHUNKS_A = [("c1", "d1", 0, 15), ("c2", "d1", 15, 30), ("c3", "d1", 30, 45), ("e1", "d2", 0, 10)]
CHUNKS_B = [("c1", "d1", 0, 22), ("c3", "d1", 22, 45), ("e1", "d2", 0, 20)]


def _write(tmp: Path, name: str, rows: list[dict[str, object]]) -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    keys = ("chunk_id", "doc_id", "start", "end")
    out = {
        "spans": _write(tmp_path, "spans.jsonl", SPANS),  # type: ignore[arg-type]
        "chunks_a": _write(
            tmp_path, "a.jsonl", [dict(zip(keys, c, strict=True)) for c in CHUNKS_A]
        ),
        "chunks_b": _write(
            tmp_path, "b.jsonl", [dict(zip(keys, c, strict=True)) for c in CHUNKS_B]
        ),
        "run_a": tmp_path / "run_a.txt",
        "run_b": tmp_path / "run_b.txt",
    }
    out["run_a"].write_text("q1 Q0 c2 1 3 a\nq1 Q0 c1 2 2 a\nq2 Q0 e1 1 1 a\n", encoding="utf-8")
    out["run_b"].write_text("q1 Q0 c1 1 3 b\nq1 Q0 c3 2 2 b\nq2 Q0 e1 1 1 b\n", encoding="utf-8")
    return out


def test_evaluate_prints_the_library_numbers(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    args = ["evaluate", str(files["run_a"]), "--spans", str(files["spans"])]
    args += ["--chunks", str(files["chunks_a"]), "-m", "span_recall@1", "-m", "span_iou@2"]
    result = runner.invoke(app, [*args, "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    metrics = json.loads(out.read_text())["runs"][0]["metrics"]
    inputs = SpanInputs(read_spans(files["spans"]), read_chunks(files["chunks_a"]))
    run = Run.from_lists({"q1": ["c2", "c1"], "q2": ["e1"]})
    lib = evaluate(run, None, ["span_recall@1", "span_iou@2"], spans=inputs).run.means()
    assert metrics["span_recall@1"]["mean"] == lib["span_recall@1"]
    assert metrics["span_iou@2"]["mean"] == lib["span_iou@2"]
    # by hand: q1 @1 c2 covers [15, 20) of 20 span characters; q2 e1 covers all of [0, 5)
    assert lib["span_recall@1"] == pytest.approx((5 / 20 + 1) / 2, abs=1e-15)


def test_compare_two_chunkings(files: dict[str, Path]) -> None:
    args = ["compare", str(files["run_a"]), str(files["run_b"]), "--spans", str(files["spans"])]
    args += [
        "--chunks",
        f"run_a.txt={files['chunks_a']}",
        "--chunks",
        f"run_b.txt={files['chunks_b']}",
    ]
    result = runner.invoke(
        app, [*args, "--permutations", "100", "--bootstrap", "100", "-f", "json"]
    )
    assert result.exit_code == 0, result.stderr
    assert "span_precision_omega" in result.stdout and "run_b.txt" in result.stdout


def test_errors_are_one_line(files: dict[str, Path]) -> None:
    base = ["evaluate", str(files["run_a"]), "--spans", str(files["spans"])]
    result = runner.invoke(app, base)
    assert result.exit_code == 2 and "--spans needs the chunk table" in result.stderr
    result = runner.invoke(app, [*base, "--chunks", str(files["chunks_b"])])
    assert result.exit_code == 2
    assert "retrieved chunk 'c2'" in result.stderr and str(files["chunks_b"]) in result.stderr
    result = runner.invoke(app, [*base, "--chunks", str(files["chunks_a"]), "-m", "ndcg@3"])
    assert result.exit_code == 2 and "ndcg@3 needs chunk qrels" in result.stderr
    result = runner.invoke(app, [*base, "--chunks", f"nope={files['chunks_a']}"])
    assert result.exit_code == 2 and "'nope' is none of the runs" in result.stderr


def test_report_on_two_chunkings(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    args = ["report", str(files["run_a"]), str(files["run_b"]), "--spans", str(files["spans"])]
    args += [
        "--chunks",
        f"run_a.txt={files['chunks_a']}",
        "--chunks",
        f"run_b.txt={files['chunks_b']}",
    ]
    result = runner.invoke(
        app, [*args, "-o", str(out), "--permutations", "100", "--bootstrap", "100"]
    )
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert "span_recall@5" in page and "span_precision_omega" in page


def test_spans_to_qrels_records_the_rule(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "chunk.qrels"
    args = ["spans", "to-qrels", "--spans", str(files["spans"]), "--chunks", str(files["chunks_a"])]
    result = runner.invoke(app, [*args, "-o", str(out), "--rule", "span=0.5"])
    assert result.exit_code == 0, result.stderr
    assert "rule span=0.5, grade max" in result.stderr
    # q1's spans [10, 20), [30, 40): c1, c2 hold half of the first, c3 all of the second
    assert out.read_text().split("\n")[:4] == ["q1 0 c1 1", "q1 0 c2 1", "q1 0 c3 1", "q2 0 e1 1"]
    sidecar = (tmp_path / "chunk.qrels.provenance.jsonl").read_text()
    assert "rule span=0.5, grade max" in sidecar
    evaluated = runner.invoke(
        app, ["evaluate", str(files["run_a"]), "--qrels", str(out), "-m", "P@2"]
    )
    assert evaluated.exit_code == 0, evaluated.stderr


def test_to_qrels_names_who_marked_the_spans(files: dict[str, Path], tmp_path: Path) -> None:
    """Spans exported by the labelling app name their annotator: each chunk label's
    provenance is the person whose span graded it, the rule in the note."""
    from ragmeter.io.provenance import read_provenance

    rows = [dict(s, annotator=who) for s, who in zip(SPANS, ["alice", "bob", "bob"], strict=True)]
    spans = _write(tmp_path, "marked.jsonl", rows)  # type: ignore[arg-type]
    out = tmp_path / "marked.qrels"
    args = ["spans", "to-qrels", "--spans", str(spans), "--chunks", str(files["chunks_a"])]
    result = runner.invoke(app, [*args, "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    provenance = read_provenance(out)
    assert provenance is not None and not provenance.has_llm
    # q1's first span [10, 20) (alice) grades c1 and c2; its second [30, 40) (bob) c3
    assert provenance.source_of("q1", "c1").annotator == "alice"  # type: ignore[union-attr]
    assert provenance.source_of("q1", "c3").annotator == "bob"  # type: ignore[union-attr]
    assert "rule any, grade max" in (provenance.source_of("q2", "e1").note or "")  # type: ignore[union-attr]


def test_a_span_of_a_document_without_chunks_is_an_error(
    files: dict[str, Path], tmp_path: Path
) -> None:
    spans = _write(
        tmp_path, "typo.jsonl", [*SPANS, {"query_id": "q2", "doc_id": "d9", "start": 0, "end": 3}]
    )  # type: ignore[list-item]
    args = [
        "evaluate",
        str(files["run_a"]),
        "--spans",
        str(spans),
        "--chunks",
        str(files["chunks_a"]),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert f"{spans}, line 4, field 'doc_id': document 'd9' has no chunk" in result.stderr


def test_chunks_of_documents_absent_from_the_corpus_are_reported(
    files: dict[str, Path], tmp_path: Path
) -> None:
    corpus = _write(
        tmp_path, "docs.jsonl", [{"id": "d1", "text": "x" * 45}, {"id": "d2", "text": "y" * 30}]
    )
    extra = [dict(zip(("chunk_id", "doc_id", "start", "end"), c, strict=True)) for c in CHUNKS_A]
    chunks = _write(
        tmp_path, "more.jsonl", [*extra, {"chunk_id": "z", "doc_id": "d7", "start": 0, "end": 4}]
    )
    args = [
        "evaluate",
        str(files["run_a"]),
        "--spans",
        str(files["spans"]),
        "--chunks",
        str(chunks),
    ]
    result = runner.invoke(app, [*args, "--corpus", str(corpus), "-m", "span_recall@2"])
    assert result.exit_code == 0, result.stderr
    assert "1 chunk(s) of documents absent from the corpus" in result.output


def test_offsets_past_int64_are_one_line_errors(files: dict[str, Path], tmp_path: Path) -> None:
    """T14: an offset past int64 in the span labels or the chunk table is an error naming
    the file, line and field, from evaluate and from spans to-qrels: never a traceback."""
    huge = _write(
        tmp_path,
        "huge.jsonl",
        [{"query_id": "q1", "doc_id": "d1", "start": 0, "end": 99999999999999999999999}],
    )
    evaluate_args = ["evaluate", str(files["run_a"]), "--spans", str(huge)]
    evaluate_args += ["--chunks", str(files["chunks_a"]), "-m", "span_recall@5"]
    to_qrels = ["spans", "to-qrels", "--spans", str(huge), "--chunks", str(files["chunks_a"])]
    to_qrels += ["-o", str(tmp_path / "q.txt")]
    table = _write(
        tmp_path,
        "chunks.jsonl",
        [{"chunk_id": "c1", "doc_id": "d1", "start": 0, "end": 2**64}],
    )
    bad_table = ["spans", "to-qrels", "--spans", str(files["spans"]), "--chunks", str(table)]
    bad_table += ["-o", str(tmp_path / "q2.txt")]
    for args, where in (
        (evaluate_args, f"{huge}, line 1, field 'end'"),
        (to_qrels, f"{huge}, line 1, field 'end'"),
        (bad_table, f"{table}, line 1, field 'end'"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert where in result.stderr and "too large" in result.stderr
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "q.txt").exists()


def test_span_labels_as_qrels_say_use_spans(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["evaluate", str(files["run_a"]), "--qrels", str(files["spans"])])
    assert result.exit_code == 2
    assert "span labels" in result.stderr and "--spans" in result.stderr


# -- each run on its own chunking's table (issue #39, item 12) -----------------------------------


@pytest.fixture
def chunkings(tmp_path: Path) -> dict[str, Path]:
    """One 20-character document cut in 5- and 10-character chunks by ``ragmeter chunk``;
    q1's evidence is [0, 10); each run retrieves the document's first chunk of its chunking
    (by hand: span_recall 5/10 on the 5-character chunking, 10/10 on the other)."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d", "text": "abcdefghij" * 2}) + "\n", encoding="utf-8")
    out = {
        "spans": _write(
            tmp_path, "spans.jsonl", [{"query_id": "q1", "doc_id": "d", "start": 0, "end": 10}]
        )
    }
    for size in (5, 10):
        table, texts = tmp_path / f"chunks-{size}.jsonl", tmp_path / f"texts-{size}.jsonl"
        args = [
            "chunk",
            str(docs),
            "--size",
            str(size),
            "--table",
            str(table),
            "--texts",
            str(texts),
        ]
        assert runner.invoke(app, args).exit_code == 0
        first = json.loads(texts.read_text().splitlines()[0])["id"]
        run = tmp_path / f"run-{size}.txt"
        run.write_text(f"q1 Q0 {first} 1 1.0 c{size}\n", encoding="utf-8")
        out[f"table{size}"], out[f"run{size}"] = table, run
    return out


def _recalls(result: Any, path: Path) -> dict[str, float]:
    assert result.exit_code == 0, result.stderr
    return {
        r["name"]: r["metrics"]["span_recall"]["mean"] for r in json.loads(path.read_text())["runs"]
    }


def test_a_run_scored_on_another_chunkings_table_is_an_error(chunkings: dict[str, Path]) -> None:
    """The repro: compare run-200 run-400 --chunks chunks-200.jsonl scored run-400 on the
    200-token table (chunk ids DOC#N in both) and reported the difference as significant."""
    args = [
        "compare",
        str(chunkings["run5"]),
        str(chunkings["run10"]),
        "--spans",
        str(chunkings["spans"]),
    ]
    result = runner.invoke(app, [*args, "--chunks", str(chunkings["table5"]), "-m", "span_recall"])
    assert result.exit_code == 2
    assert "run 'run-10.txt' retrieved chunk 'd#0@" in result.stderr
    assert "the run's chunk ids are of chunking" in result.stderr
    assert "(characters, size 5, overlap 0)" in result.stderr


def test_one_chunks_option_per_chunking_matches_runs_by_their_ids(
    chunkings: dict[str, Path], tmp_path: Path
) -> None:
    base = [
        "evaluate",
        str(chunkings["run5"]),
        str(chunkings["run10"]),
        "--spans",
        str(chunkings["spans"]),
    ]
    base += ["-m", "span_recall", "-f", "json"]
    plain = [*base, "--chunks", str(chunkings["table10"]), "--chunks", str(chunkings["table5"])]
    got = _recalls(
        runner.invoke(app, [*plain, "-o", str(tmp_path / "a.json")]), tmp_path / "a.json"
    )
    assert got == {"run-5.txt": 0.5, "run-10.txt": 1.0}  # 5/10 and 10/10, by hand
    named = [
        *base,
        "--chunks",
        f"run-5.txt={chunkings['table5']}",
        "--chunks",
        f"run-10.txt={chunkings['table10']}",
    ]
    assert (
        _recalls(runner.invoke(app, [*named, "-o", str(tmp_path / "b.json")]), tmp_path / "b.json")
        == got
    )
    # the same table twice: both hold run-5's ids, so which one is meant is not known
    twice = [*base, "--chunks", str(chunkings["table5"]), "--chunks", str(chunkings["table5"])]
    result = runner.invoke(app, twice)
    assert result.exit_code == 2 and "are in 2 of the chunk tables" in result.stderr
    mixed = [
        *base,
        "--chunks",
        str(chunkings["table5"]),
        "--chunks",
        f"run-10.txt={chunkings['table10']}",
    ]
    assert runner.invoke(app, mixed).exit_code == 2


def test_chunk_texts_the_table_does_not_fit_are_an_error() -> None:
    """Tables without a record (chunk ids DOC#N of an older ragmeter): where the run carries
    the chunks' texts, a text whose length is not the table's extent is caught."""
    from ragmeter.core.spans import ChunkTable, SpanLabels
    from ragmeter.errors import InputError

    table = ChunkTable.from_rows([("d#0", "d", 0, 5), ("d#1", "d", 5, 10)], source="chunks-5")
    spans = SpanInputs(SpanLabels.from_rows([("q1", "d", 0, 10)]), table)
    fits = Run.from_columns(["q1"], ["d#0"], [1.0], texts=["abcde"])
    assert evaluate(fits, None, ["span_recall"], spans=spans).run.means()["span_recall"] == 0.5
    other = Run.from_columns(["q1"], ["d#0"], [1.0], texts=["abcdefghij"], name="run-10")
    with pytest.raises(InputError, match=r"'d#0' with a text of 10 characters.*\[0, 5\)"):
        evaluate(other, None, ["span_recall"], spans=spans)


def test_span_measures_alone_warn_of_no_unjudged_documents(tmp_path: Path) -> None:
    """Without --qrels the span labels name the evaluated queries and judge no document: the
    check that a run's document ids meet the qrels (for traces read with the wrong ids) has
    nothing to check, and says nothing."""
    (tmp_path / "docs.jsonl").write_text('{"id": "d1", "text": "Trams run every 10 minutes."}\n')
    (tmp_path / "chunks.jsonl").write_text(
        '{"chunk_id": "d1#0", "doc_id": "d1", "start": 0, "end": 27}\n'
    )
    (tmp_path / "spans.jsonl").write_text(
        '{"query_id": "q1", "doc_id": "d1", "start": 0, "end": 9, "grade": 5}\n'
    )
    (tmp_path / "run.txt").write_text("q1 Q0 d1#0 1 1.0 r\n")
    args = ["evaluate", str(tmp_path / "run.txt"), "--spans", str(tmp_path / "spans.jsonl")]
    args += ["--chunks", str(tmp_path / "chunks.jsonl"), "--corpus", str(tmp_path / "docs.jsonl")]
    out = runner.invoke(app, [*args, "-m", "span_recall@1", "-f", "json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["runs"][0]["metrics"]["span_recall@1"]["mean"] == 1.0
    assert not any("judged in the qrels" in w for w in result["warnings"])


def test_ppi_with_spans_evaluates_the_merged_labels(tmp_path: Path) -> None:
    """``evaluate --ppi --spans``: the human side is evaluated on the merged labels, not on
    ``--qrels`` read again (which compared the LLM labels with themselves)."""
    spans = _write(
        tmp_path, "spans.jsonl",
        [{"query_id": f"q{i}", "doc_id": f"d{i}", "start": 0, "end": 5} for i in (1, 2, 3, 4)],
    )  # fmt: skip
    keys = ("chunk_id", "doc_id", "start", "end")
    chunks = [
        (f"{c}{i}", f"d{i}", s, s + 10) for i in (1, 2, 3, 4) for c, s in (("e", 0), ("f", 10))
    ]
    table = _write(tmp_path, "chunks.jsonl", [dict(zip(keys, c, strict=True)) for c in chunks])
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q{i} Q0 f{i} 1 2 a\nq{i} Q0 e{i} 2 1 a\n" for i in (1, 2, 3, 4)))
    llm, human = tmp_path / "llm.txt", tmp_path / "human.txt"
    llm.write_text("".join(f"q{i} 0 e{i} 1\nq{i} 0 f{i} 1\n" for i in (1, 2, 3, 4)))
    human.write_text("".join(f"q{i} 0 e{i} 1\nq{i} 0 f{i} {int(i == 1)}\n" for i in (1, 2, 3, 4)))
    out = tmp_path / "out.json"
    args = ["evaluate", str(run), "--spans", str(spans), "--chunks", str(table), "-m", "P@1"]
    args += ["--qrels", str(llm), "--ppi", "--human-qrels", str(human), "-f", "json"]
    result = runner.invoke(app, [*args, "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    metric = json.loads(out.read_text())["runs"][0]["metrics"]["precision@1"]
    # by hand: the top chunk f_i is relevant to the LLM on every query, to people on q1 only
    assert metric["mean"] == 1.0
    assert metric["ppi"]["human_mean"] == 0.25
    assert metric["ppi"]["estimate"] == 0.25  # every query labelled: the human mean
