"""Every input format gives the same Run / Qrels, and writers round-trip (SPEC §1)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import Qrels, Run, evaluate
from ragmeter.io.dicts import qrels_from_dict, run_from_dict
from ragmeter.io.frames import (
    qrels_from_frame,
    qrels_to_pandas,
    qrels_to_polars,
    run_from_frame,
    run_to_pandas,
    run_to_polars,
)
from ragmeter.io.readers import (
    as_qrels,
    as_run,
    detect_format,
    read_qrels,
    read_run,
    read_samples,
    write_qrels,
    write_run,
)

# A run with ties, numeric-looking ids, a doc id containing '#', and queries out of order.
RUN_ROWS: list[tuple[str, str, float]] = [
    ("q2", "d1", 0.5),
    ("q2", "d9", 2.25),
    ("q2", "d3", 0.5),  # ties with d1: doc id descending → d3 before d1
    ("007", "doc#1", 1.0),
    ("007", "x", 3.0),
    ("007", "a", 1.0),  # ties with doc#1: "doc#1" > "a" → doc#1 before a
    ("q10", "z", -1.5),
]
EXPECTED_RANKED = {
    "007": ["x", "doc#1", "a"],
    "q10": ["z"],
    "q2": ["d9", "d3", "d1"],
}
QRELS_ROWS: list[tuple[str, str, int]] = [
    ("q2", "d3", 2),
    ("q2", "d1", 0),
    ("007", "doc#1", 1),
    ("007", "y", 3),
    ("q10", "z", 1),
]
MEASURES = ["ndcg@3", "map", "mrr", "P@2", "recall@3"]


def _trec_run(path: Path) -> None:
    path.write_text("".join(f"{q} Q0 {d} {i} {s} tag\n" for i, (q, d, s) in enumerate(RUN_ROWS, 1)))


def _jsonl_run(path: Path) -> None:
    path.write_text(
        "".join(json.dumps({"query_id": q, "doc_id": d, "score": s}) + "\n" for q, d, s in RUN_ROWS)
    )


def _json_run(path: Path) -> None:
    # column-name variants: qid / docid
    path.write_text(json.dumps([{"qid": q, "docid": d, "score": s} for q, d, s in RUN_ROWS]))


def _json_nested_run(path: Path) -> None:
    nested: dict[str, dict[str, float]] = {}
    for q, d, s in RUN_ROWS:
        nested.setdefault(q, {})[d] = s
    path.write_text(json.dumps(nested))


def _yaml_nested_run(path: Path) -> None:
    lines = []
    for q in dict.fromkeys(q for q, _, _ in RUN_ROWS):
        lines.append(f"'{q}':")
        lines += [f"  '{d}': {s}" for qq, d, s in RUN_ROWS if qq == q]
    path.write_text("\n".join(lines) + "\n")


def _csv_run(path: Path) -> None:
    path.write_text("query_id,doc_id,score\n" + "".join(f"{q},{d},{s}\n" for q, d, s in RUN_ROWS))


def _tsv_run(path: Path) -> None:
    path.write_text("qid\tdocid\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in RUN_ROWS))


def _parquet_run(path: Path) -> None:
    q, d, s = zip(*RUN_ROWS, strict=True)
    pq.write_table(pa.table({"query_id": q, "doc_id": d, "score": s}), path)


RUN_WRITERS: dict[str, Callable[[Path], None]] = {
    "run.trec": _trec_run,
    "run.jsonl": _jsonl_run,
    "run.json": _json_run,
    "nested.json": _json_nested_run,
    "nested.yaml": _yaml_nested_run,
    "run.csv": _csv_run,
    "run.tsv": _tsv_run,
    "run.parquet": _parquet_run,
}


def _frame_rows() -> dict[str, list[Any]]:
    q, d, s = zip(*RUN_ROWS, strict=True)
    return {"query_id": list(q), "doc_id": list(d), "score": list(s)}


def _qrels_frame_rows() -> dict[str, list[Any]]:
    q, d, g = zip(*QRELS_ROWS, strict=True)
    return {"qid": list(q), "docid": list(d), "relevance": list(g)}


def _all_runs(tmp_path: Path) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    for name, write in RUN_WRITERS.items():
        path = tmp_path / name
        write(path)
        runs[name] = read_run(path)
    runs["pandas"] = run_from_frame(pd.DataFrame(_frame_rows()))
    runs["polars"] = run_from_frame(pl.DataFrame(_frame_rows()))
    runs["arrow"] = run_from_frame(pa.table(_frame_rows()))
    nested: dict[str, dict[str, float]] = {}
    for q, d, s in RUN_ROWS:
        nested.setdefault(q, {})[d] = s
    runs["dict"] = run_from_dict(nested)
    return runs


def _same_run(a: Run, b: Run) -> None:
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert a.offsets.tolist() == b.offsets.tolist()
    assert a.doc_ids.to_pylist() == b.doc_ids.to_pylist()
    assert a.scores.tolist() == b.scores.tolist()


def test_every_run_format_gives_the_same_run(tmp_path: Path) -> None:
    runs = _all_runs(tmp_path)
    reference = runs["run.trec"]
    assert reference.ranked() == EXPECTED_RANKED
    assert reference.query_ids.tolist() == ["007", "q10", "q2"]  # byte order
    for name, run in runs.items():
        assert run.ranked() == EXPECTED_RANKED, name
        _same_run(run, reference)


def _qrels_trec(path: Path) -> None:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS_ROWS))


def _qrels_jsonl(path: Path) -> None:
    path.write_text(
        "".join(json.dumps({"qid": q, "doc_id": d, "grade": g}) + "\n" for q, d, g in QRELS_ROWS)
    )


def _qrels_csv(path: Path) -> None:
    path.write_text(
        "query_id,doc_id,relevance\n" + "".join(f"{q},{d},{g}\n" for q, d, g in QRELS_ROWS)
    )


def _qrels_beir_tsv(path: Path) -> None:
    # BEIR's qrels layout: query-id, corpus-id, score
    path.write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in QRELS_ROWS)
    )


def _qrels_parquet(path: Path) -> None:
    q, d, g = zip(*QRELS_ROWS, strict=True)
    pq.write_table(pa.table({"qid": q, "docid": d, "rel": pa.array(g, pa.int8())}), path)


def _qrels_nested_yaml(path: Path) -> None:
    lines = []
    for q in dict.fromkeys(q for q, _, _ in QRELS_ROWS):
        lines.append(f"'{q}':")
        lines += [f"  '{d}': {g}" for qq, d, g in QRELS_ROWS if qq == q]
    path.write_text("\n".join(lines) + "\n")


QRELS_WRITERS: dict[str, Callable[[Path], None]] = {
    "qrels.txt": _qrels_trec,
    "qrels.jsonl": _qrels_jsonl,
    "qrels.csv": _qrels_csv,
    "qrels.tsv": _qrels_beir_tsv,
    "qrels.parquet": _qrels_parquet,
    "qrels.yaml": _qrels_nested_yaml,
}


def _all_qrels(tmp_path: Path) -> dict[str, Qrels]:
    out: dict[str, Qrels] = {}
    for name, write in QRELS_WRITERS.items():
        write(tmp_path / name)
        out[name] = read_qrels(tmp_path / name)
    out["pandas"] = qrels_from_frame(pd.DataFrame(_qrels_frame_rows()))
    out["polars"] = qrels_from_frame(pl.DataFrame(_qrels_frame_rows()))
    nested: dict[str, dict[str, int]] = {}
    for q, d, g in QRELS_ROWS:
        nested.setdefault(q, {})[d] = g
    out["dict"] = qrels_from_dict(nested)
    return out


def test_every_qrels_format_gives_the_same_qrels(tmp_path: Path) -> None:
    qrels = _all_qrels(tmp_path)
    reference = qrels["qrels.txt"]
    for name, q in qrels.items():
        assert q.query_ids.tolist() == reference.query_ids.tolist(), name
        assert q.offsets.tolist() == reference.offsets.tolist(), name
        assert q.doc_ids.to_pylist() == reference.doc_ids.to_pylist(), name
        assert q.grades.tolist() == reference.grades.tolist(), name
        assert q.grades.dtype == np.int32


def test_every_format_gives_the_same_metric_values(tmp_path: Path) -> None:
    runs = _all_runs(tmp_path)
    qrels = _all_qrels(tmp_path)
    reference = evaluate(runs["run.trec"], qrels["qrels.txt"], MEASURES).run.means()
    assert all(isinstance(v, float) for v in reference.values())
    for rname, run in runs.items():
        for qname, q in qrels.items():
            assert evaluate(run, q, MEASURES).run.means() == reference, (rname, qname)


# -- samples (seed 002) ---------------------------------------------------------------------

SAMPLES = [
    {
        "id": "q-1",
        "input": {"question": "What is our refund window?"},
        "actualOutput": json.dumps(
            {
                "retrieved": [
                    {"id": "doc-7", "text": "seven"},
                    {"id": "doc-3", "text": "refunds within 30 days"},
                    {"id": "doc-1", "text": "one"},
                    {"id": "doc-9", "text": "nine"},
                    {"id": "doc-2", "text": "two"},
                ]
            }
        ),
        "expected_output": ["doc-3", "doc-9"],
        "metadata": {"k": 5},
    },
    {
        "id": "q-2",
        "input": "plain question",
        "actual_output": ["doc-9", "doc-3", "doc-4"],
        "expected_output": {"doc-3": 3, "doc-9": 1},
    },
    {
        "id": 3,
        "retrieved": {"retrieved": ["b", "a"]},
        "expectedOutput": {"a": 2},
        "metadata": {"k": 1},
    },
]
SAMPLE_RANKED = {
    "q-1": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"],
    "q-2": ["doc-9", "doc-3", "doc-4"],
    "3": ["b", "a"],
}

SAMPLES_YAML = """\
samples:
  - id: q-1
    input: { question: "What is our refund window?" }
    actualOutput: '{"retrieved": [{"id": "doc-7", "text": "seven"}, {"id": "doc-3", "text": "refunds within 30 days"}, {"id": "doc-1", "text": "one"}, {"id": "doc-9", "text": "nine"}, {"id": "doc-2", "text": "two"}]}'
    expected_output: ["doc-3", "doc-9"]        # binary relevance
    metadata: { k: 5 }                          # optional per-sample cutoff
  - id: q-2
    input: plain question
    actual_output: [doc-9, doc-3, doc-4]
    expected_output: { "doc-3": 3, "doc-9": 1 } # graded gains
  - id: 3
    retrieved:
      retrieved: [b, a]
    expectedOutput: {a: 2}
    metadata: {k: 1}
"""  # noqa: E501


def _sample_files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "list.json": json.dumps(SAMPLES, indent=2),
        "wrapped.json": json.dumps({"samples": SAMPLES}),
        "samples.jsonl": "".join(json.dumps(s) + "\n" for s in SAMPLES),
        "samples.yaml": SAMPLES_YAML,
    }
    out = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        out[name] = tmp_path / name
    return out


def test_samples_in_every_format_agree(tmp_path: Path) -> None:
    files = _sample_files(tmp_path)
    reference = read_samples(files["list.json"])
    assert reference.run.ranked() == SAMPLE_RANKED
    assert reference.run.query_ids.tolist() == ["q-1", "q-2", "3"]  # order of appearance
    assert reference.run.cutoffs is not None
    assert reference.run.cutoffs.tolist() == [5, -1, 1]
    assert reference.qrels.to_dict() == {
        "3": {"a": 2},
        "q-1": {"doc-3": 1, "doc-9": 1},
        "q-2": {"doc-3": 3, "doc-9": 1},
    }
    assert reference.ids == ("q-1", "q-2", "3")
    assert reference.queries == {"q-1": "What is our refund window?", "q-2": "plain question"}
    assert reference.metadata == {"q-1": {"k": 5}, "3": {"k": 1}}
    assert reference.run.texts is not None
    assert reference.run.texts.to_pylist()[:2] == ["seven", "refunds within 30 days"]
    assert reference.run.texts.to_pylist()[5:] == [None] * 5
    for name, path in files.items():
        s = read_samples(path)
        _same_run(s.run, reference.run)
        assert s.run.cutoffs is not None and s.run.cutoffs.tolist() == [5, -1, 1], name
        assert s.run.texts is not None and s.run.texts.equals(reference.run.texts), name
        assert s.qrels.to_dict() == reference.qrels.to_dict(), name
        assert s.queries == reference.queries, name
        # read_run / read_qrels accept sample files too
        _same_run(read_run(path), reference.run)
        assert read_qrels(path).to_dict() == reference.qrels.to_dict()


def test_samples_match_lists_and_spec_values(tmp_path: Path) -> None:
    s = read_samples(_sample_files(tmp_path)["samples.yaml"])
    assert s.run.ranked() == Run.from_lists(SAMPLE_RANKED).ranked()
    per_query = evaluate(s.run, s.qrels, ["ndcg@5", "hit@5", "recall@5", "mrr"]).run.per_query()
    q1 = per_query["q-1"]
    # seed 002 worked example (SPEC §2)
    assert q1["ndcg@5"] == pytest.approx(0.6509209298, abs=1e-10)
    assert (q1["hit@5"], q1["recall@5"], q1["mrr"]) == (1.0, 1.0, 0.5)


def test_seed002_worked_example_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(
        "- id: q-1\n"
        '  actual_output: \'["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]\'\n'
        "  expected_output: [doc-3, doc-9]\n"
        "  metadata: {k: 5}\n"
    )
    s = read_samples(path)
    means = evaluate(s.run, s.qrels, ["ndcg@5", "hit@5", "recall@5", "mrr"]).run.means()
    assert means["ndcg@5"] == pytest.approx(0.6509209298, abs=1e-10)
    assert (means["hit@5"], means["recall@5"], means["mrr"]) == (1.0, 1.0, 0.5)


def test_given_order_versus_score_order(tmp_path: Path) -> None:
    # Samples keep the given order even where ids or scores would sort differently.
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "q",
                    "retrieved": [
                        {"id": "a", "score": 0.1},
                        {"id": "c", "score": 0.9},
                        {"id": "b"},
                    ],
                    "expected_output": ["c"],
                }
            ]
        )
    )
    assert read_run(path).ranked() == {"q": ["a", "c", "b"]}
    # The same rows as a score-bearing run are ordered by score…
    scored = tmp_path / "scored.jsonl"
    scored.write_text(
        '{"qid": "q", "docid": "a", "score": 0.1}\n'
        '{"qid": "q", "docid": "c", "score": 0.9}\n'
        '{"qid": "q", "docid": "b", "score": 0.5}\n'
    )
    assert read_run(scored).ranked() == {"q": ["c", "b", "a"]}
    # …by rank when only a rank is given, and in given order with neither.
    ranked = tmp_path / "ranked.csv"
    ranked.write_text("qid,docid,rank\nq,a,3\nq,c,1\nq,b,2\n")
    assert read_run(ranked).ranked() == {"q": ["c", "b", "a"]}
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        '{"qid": "q", "docid": "a"}\n{"qid": "p", "docid": "z"}\n{"qid": "q", "docid": "c"}\n'
    )
    run = read_run(plain)
    assert run.ranked() == {"q": ["a", "c"], "p": ["z"]}
    assert run.query_ids.tolist() == ["q", "p"]


def test_duplicates_keep_first_or_best(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text(
        json.dumps(
            [{"id": "q", "actual_output": ["a", "b", "a", "c", "b"], "expected_output": ["a"]}]
        )
    )
    s = read_samples(path)
    assert s.run.ranked() == {"q": ["a", "b", "c"]}
    assert any("duplicate" in w for w in s.run.warnings)
    trec = tmp_path / "dup.trec"
    trec.write_text("q Q0 a 1 1.0 t\nq Q0 b 2 5.0 t\nq Q0 a 3 7.0 t\n")
    run = read_run(trec)
    assert run.ranked() == {"q": ["a", "b"]}
    assert run.scores.tolist() == [7.0, 5.0]  # the best occurrence of 'a'
    csv = tmp_path / "dup.csv"
    csv.write_text("qid,docid,score\nq,a,1.0\nq,b,5.0\nq,a,7.0\n")
    _same_run(read_run(csv), run)


def test_trec_ties_broken_by_doc_id_descending(tmp_path: Path) -> None:
    path = tmp_path / "ties.run"
    path.write_text("q Q0 a 1 1.0 t\nq Q0 c 2 1.0 t\nq Q0 B 3 1.0 t\nq Q0 b 4 2 t\nq Q0 d 5 0 t\n")
    # "c" > "a" > "B" in byte order; the rank column is ignored.
    assert read_run(path).ranked() == {"q": ["b", "c", "a", "B", "d"]}


def test_trec_comments_and_hash_in_doc_ids(tmp_path: Path) -> None:
    path = tmp_path / "c.trec"
    path.write_text(
        "# a comment line\n"
        "q1 Q0 doc#1 1 2.0 run#tag\n"
        "   # an indented comment\n"
        "\n"
        "q1 Q0 #doc 2 1.0 run#tag\n"
    )
    run = read_run(path)
    assert run.ranked() == {"q1": ["doc#1", "#doc"]}
    assert run.tag == "run#tag"
    qrels = tmp_path / "c.qrels"
    qrels.write_text("# judged\nq1 0 doc#1 1\nq1 0 #doc 0\n")
    assert read_qrels(qrels).to_dict() == {"q1": {"#doc": 0, "doc#1": 1}}


def test_crlf_trec_is_read_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "crlf.trec"
    path.write_bytes(b"q Q0 a 1 2.0 t\r\nq Q0 b 2 1.0 t\r\n")
    run = read_run(path)
    assert run.ranked() == {"q": ["a", "b"]}
    assert any("CRLF" in w for w in run.warnings)
    csv = tmp_path / "crlf.csv"
    csv.write_bytes(b"qid,docid,score\r\nq,a,2.0\r\n\r\nq,b,1.0\r\n")
    _same_run(read_run(csv), run)


@pytest.mark.parametrize("ext", ["trec", "jsonl", "csv", "tsv", "parquet"])
def test_run_round_trip(tmp_path: Path, ext: str) -> None:
    run = Run.from_columns(
        ["q1", "q1", "q1", "q2", "q2"],
        ["d1", "d2", "d#3", "d1", "x"],
        [0.25, 1.5, -3.0, 10.0, 0.125],
        name="mine",
    )
    path = tmp_path / f"out.{ext}"
    write_run(run, path)
    back = read_run(path)
    _same_run(back, run)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


@pytest.mark.parametrize("ext", ["jsonl", "csv", "tsv", "parquet"])
def test_run_round_trip_keeps_exact_scores_and_texts(tmp_path: Path, ext: str) -> None:
    scores = [0.1 + 0.2, 1 / 3, 1e-300, -2.5e200]
    run = Run.from_columns(["q"] * 4, ["a", "b", "c", "d"], scores, texts=["t, 1", "tü", "", "x"])
    path = tmp_path / f"out.{ext}"
    write_run(run, path)
    back = read_run(path)
    _same_run(back, run)
    assert back.texts is not None and back.texts.to_pylist() == run.texts.to_pylist()  # type: ignore[union-attr]


@pytest.mark.parametrize("ext", ["txt", "jsonl", "csv", "tsv", "parquet"])
def test_qrels_round_trip(tmp_path: Path, ext: str) -> None:
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": -1}, "q2": ["z"]})
    path = tmp_path / f"qrels.{ext}"
    write_qrels(qrels, path)
    back = read_qrels(path)
    assert back.to_dict() == qrels.to_dict()
    assert back.query_ids.tolist() == qrels.query_ids.tolist()


def test_samples_run_written_as_trec_reads_back_in_the_same_order(tmp_path: Path) -> None:
    s = read_samples(_sample_files(tmp_path)["list.json"])
    write_run(s.run, tmp_path / "out.trec")
    assert read_run(tmp_path / "out.trec").ranked() == SAMPLE_RANKED


def test_writes_are_atomic(tmp_path: Path) -> None:
    path = tmp_path / "run.tsv"
    path.write_text("previous content\n")
    bad = Run.from_columns(["q"], ["has\ttab"], [1.0])
    with pytest.raises(Exception, match="tab"):
        write_run(bad, path)
    assert path.read_text() == "previous content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.tsv"]


def test_format_override_and_detection(tmp_path: Path) -> None:
    path = tmp_path / "data.dat"
    path.write_text('{"qid": "q", "docid": "a", "score": 1}\n')
    assert read_run(path, format="jsonl").ranked() == {"q": ["a"]}
    assert detect_format("x.yml") == "yaml"
    assert detect_format("results.test") == "trec"  # trec_eval's file names
    assert detect_format("x.JSONL") == "jsonl"
    trec = tmp_path / "results.test"
    trec.write_text("q Q0 a 1 1 t\n")
    assert read_run(trec, name="sys").name == "sys"
    assert read_run(trec).name == "results.test"


def test_as_run_and_as_qrels_accept_everything(tmp_path: Path) -> None:
    _trec_run(tmp_path / "r.trec")
    expected = read_run(tmp_path / "r.trec")
    _same_run(as_run(tmp_path / "r.trec"), expected)
    _same_run(as_run(str(tmp_path / "r.trec")), expected)
    _same_run(as_run(pd.DataFrame(_frame_rows())), expected)
    assert as_run(expected) is expected
    assert as_run({"q": ["b", "a"]}).ranked() == {"q": ["b", "a"]}  # lists: given order
    assert as_qrels({"q": ["a"]}).to_dict() == {"q": {"a": 1}}
    assert (
        as_qrels(pl.DataFrame(_qrels_frame_rows())).to_dict()
        == qrels_from_dict(
            {q: {d: g for qq, d, g in QRELS_ROWS if qq == q} for q, _, _ in QRELS_ROWS}
        ).to_dict()
    )


def test_frames_round_trip() -> None:
    run = Run.from_dict({"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 0.5}})
    _same_run(run_from_frame(run_to_pandas(run)), run)
    _same_run(run_from_frame(run_to_polars(run)), run)
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0}})
    assert qrels_from_frame(qrels_to_pandas(qrels)).to_dict() == qrels.to_dict()
    assert qrels_from_frame(qrels_to_polars(qrels)).to_dict() == qrels.to_dict()
    # a pandas index named like a column is read as one
    indexed = pd.DataFrame(_frame_rows()).set_index("query_id")
    assert run_from_frame(indexed).ranked() == EXPECTED_RANKED


def test_ids_are_strings_never_numbers(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("qid,docid,score\n007,0001,1\n7,1,2\n")
    assert read_run(path).ranked() == {"007": ["0001"], "7": ["1"]}
    pq.write_table(pa.table({"qid": [1, 2], "docid": [10, 20], "rel": [1, 0]}), tmp_path / "i.pq")
    assert read_qrels(tmp_path / "i.pq").to_dict() == {"1": {"10": 1}, "2": {"20": 0}}


def test_import_ragmeter_stays_light() -> None:
    code = (
        "import sys, ragmeter, ragmeter.io.readers\n"
        "heavy = [m for m in ('pandas', 'polars', 'yaml') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_jsonl_fast_and_line_by_line_paths_agree(tmp_path: Path) -> None:
    from ragmeter.io._documents import load_jsonl
    from ragmeter.io.jsonl import qrels_from_records, run_from_records

    regular = tmp_path / "regular.jsonl"
    _jsonl_run(regular)
    doc = load_jsonl(regular)
    assert doc.records is not None
    _same_run(read_run(regular), run_from_records(doc.records, source="x", name="x"))
    # Irregular files (key spellings changing per row, numeric ids mixed with strings, blank
    # lines) are read line by line, with the same result.
    irregular = tmp_path / "irregular.jsonl"
    irregular.write_text(
        '{"qid": 7, "docid": "a", "score": 1}\n\n'
        '{"query_id": "7", "doc_id": "b", "score": 2.5}\n'
        '{"queryId": "q", "docId": 3, "score": "0.5"}\n'
    )
    assert read_run(irregular).ranked() == {"7": ["b", "a"], "q": ["3"]}
    qrels = tmp_path / "q.jsonl"
    _qrels_jsonl(qrels)
    doc = load_jsonl(qrels)
    assert doc.records is not None
    assert (
        read_qrels(qrels).to_dict()
        == qrels_from_records(doc.records, source="x", name="x").to_dict()
    )


def test_io_package_exports() -> None:
    import ragmeter
    import ragmeter.io

    assert ragmeter.io.read_run is read_run
    assert ragmeter.io.read_samples is read_samples
    assert ragmeter.read_run is read_run


def test_sample_files_need_only_what_is_read(tmp_path: Path) -> None:
    path = tmp_path / "partial.json"
    path.write_text(json.dumps([{"id": "q", "retrieved": ["a", "b"]}]))
    assert read_run(path).ranked() == {"q": ["a", "b"]}  # no expected_output needed for a run
    path.write_text(json.dumps([{"id": "q", "expected_output": {"a": 2}}]))
    assert read_qrels(path).to_dict() == {"q": {"a": 2}}  # no retrieved list needed for qrels


_IDS = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters="\x85\xa0"
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(
            _IDS,
            _IDS,
            st.floats(allow_nan=False, allow_infinity=False, width=64),
        ),
        min_size=1,
        max_size=30,
    ),
    ext=st.sampled_from(["jsonl", "csv", "tsv", "parquet"]),
)
def test_any_run_round_trips_exactly(
    tmp_path: Path, rows: list[tuple[str, str, float]], ext: str
) -> None:
    q, d, s = zip(*rows, strict=True)
    run = Run.from_columns(list(q), list(d), list(s))
    path = tmp_path / f"prop.{ext}"
    write_run(run, path)
    _same_run(read_run(path), run)
