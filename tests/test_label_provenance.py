"""The label provenance sidecar: round trip, errors naming file/line/field, descriptions,
merging (hole filling), and the sidecar ``ragmeter judge relevance`` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.core.provenance import LabelProvenance, LabelSource, human_source
from ragmeter.errors import InputError
from ragmeter.io.provenance import provenance_path, read_provenance, write_provenance

JUDGE = LabelSource(
    kind="judge",
    model="m",
    host="127.0.0.1:8080",
    prompt_id="umbrela",
    prompt_version="1",
    prompt_sha256="ab" * 32,
    temperature=0.0,
)


def test_round_trip(tmp_path: Path) -> None:
    prov = LabelProvenance(
        sources={"human": human_source("alice"), "judge": JUDGE},
        pairs={("q1", "d2"): "judge", ("q2", "d1"): "judge"},
        default="human",
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n")  # a sidecar describes a file
    sidecar = write_provenance(qrels, prov)
    assert sidecar == provenance_path(qrels) == tmp_path / "qrels.txt.provenance.jsonl"
    back = read_provenance(qrels)
    assert back == prov
    assert back is not None and back.source_of("q1", "d2") == JUDGE
    assert back.source_of("q1", "d1") == human_source("alice")
    assert back.has_llm


def test_no_sidecar_is_unknown(tmp_path: Path) -> None:
    assert read_provenance(tmp_path / "qrels.txt") is None


def test_describe_counts_each_source() -> None:
    prov = LabelProvenance(
        sources={"human": human_source(), "judge": JUDGE},
        pairs={("q1", "d2"): "judge"},
        default="human",
    )
    line = prov.describe([("q1", "d1"), ("q1", "d2"), ("q2", "d1")])
    assert line == "human labels: 2 of 3 pairs; LLM labels (umbrela, model m): 1 of 3 pairs"
    assert LabelProvenance.single(JUDGE).describe() == "LLM labels (umbrela, model m)"
    assert not LabelProvenance.single(human_source()).has_llm


def test_identity_ignores_host_but_not_prompt() -> None:
    moved = LabelSource(**{**JUDGE.__dict__, "host": "other:1"})
    assert moved.same_judge(JUDGE)
    other_prompt = LabelSource(**{**JUDGE.__dict__, "prompt_sha256": "cd" * 32})
    assert not other_prompt.same_judge(JUDGE)


def test_merged_with_takes_the_holes_from_the_judge() -> None:
    human = LabelProvenance.single(human_source())
    llm = LabelProvenance.single(JUDGE)
    merged = human.merged_with(llm, [("q1", "d9")])
    assert merged.source_of("q1", "d9") == JUDGE
    assert merged.source_of("q1", "d1") == human_source()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("not json\n", "line 1"),
        ('{"ragmeter_label_provenance": 99, "sources": {"h": {"kind": "human"}}}\n', "line 1"),
        ('{"ragmeter_label_provenance": 1, "sources": {"h": {"kind": "robot"}}}\n', "sources.h"),
        (
            '{"ragmeter_label_provenance": 1, "sources": {"h": {"kind": "human"}}}\n'
            '{"query_id": "q", "doc_id": "d", "source": "x"}\n',
            "line 2",
        ),
    ],
)
def test_bad_sidecar_names_file_and_line(tmp_path: Path, text: str, where: str) -> None:
    qrels = tmp_path / "q.txt"
    provenance_path(qrels).write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_provenance(qrels)
    assert "q.txt.provenance.jsonl" in str(err.value) and where in str(err.value)


def test_judge_relevance_writes_the_sidecar(tmp_path: Path) -> None:
    from ragmeter.judges.api import judge_relevance, write_label_provenance, write_qrels

    class Fixed:
        model = "fixed-judge"

        def judge(self, task, inputs):  # type: ignore[no-untyped-def]
            from ragmeter.judges.types import Judgment

            return Judgment(3, "ok", model=self.model)

    result = judge_relevance(
        {"q1": ["d1", "d2"]}, {"q1": "a question"}, {"d1": "x", "d2": "y"}, judge=Fixed()
    )
    out = tmp_path / "qrels.txt"
    write_qrels(result.labels, out)
    write_label_provenance(result, out)
    header = json.loads(provenance_path(out).read_text().splitlines()[0])
    source = header["sources"][header["default"]]
    assert source["kind"] == "judge" and source["model"] == "fixed-judge"
    assert source["prompt_id"] == "relevance" and len(source["prompt_sha256"]) == 64


def test_a_device_or_fifo_is_written_in_place_and_gets_no_sidecar(tmp_path: Path) -> None:
    """``-o /dev/null`` or a pipe: the writer writes into it (renaming a temporary file over
    it would replace the device with a file) and writes no sidecar beside it."""
    import os
    import stat
    import threading

    from ragmeter.io._common import atomic_write_text

    fifo = tmp_path / "labels.txt"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    atomic_write_text(fifo, "q1 0 d1 3\n")
    reader.join(10)
    assert got == ["q1 0 d1 3\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert write_provenance(fifo, LabelProvenance.single(JUDGE)) is None
    assert not provenance_path(fifo).exists()
