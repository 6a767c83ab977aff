"""``irds:DATASET_ID`` reads qrels (queries, documents) through ir_datasets; the tests register
a small dataset held in memory with ir_datasets' registry, so nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import Run, evaluate
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.io.irds import read_irds_docs, read_irds_queries
from ragmeter.io.readers import read_qrels

ir_datasets = pytest.importorskip("ir_datasets", reason="ir_datasets (dev extra) is needed")

QRELS = b"1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n2 0 d2 1\n"
QUERIES = b"1\twhat is a cat\n2\twhat is a dog\n"
DOCS = b"d1\tcats purr\nd2\tdogs bark\nd3\tcats nap\n"
DATASET = "ragmeter-test/tiny"
DUPLICATED = "ragmeter-test/diversity"


@pytest.fixture(scope="module", autouse=True)
def _registered() -> None:
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import StringFile

    defs = {0: "not relevant", 1: "relevant", 2: "highly relevant"}
    if DATASET not in ir_datasets.registry:
        ir_datasets.registry.register(
            DATASET,
            Dataset(
                TrecQrels(StringFile(QRELS), defs),
                TsvQueries(StringFile(QUERIES)),
                TsvDocs(StringFile(DOCS)),
            ),
        )
    if DUPLICATED not in ir_datasets.registry:
        ir_datasets.registry.register(
            DUPLICATED, Dataset(TrecQrels(StringFile(b"1 1 d1 1\n1 2 d1 1\n"), defs))
        )


def test_qrels_queries_docs() -> None:
    qrels = read_qrels(f"irds:{DATASET}")
    assert qrels.to_dict() == {"1": {"d1": 2, "d2": 0, "d3": 1}, "2": {"d2": 1}}
    assert read_irds_queries(f"irds:{DATASET}") == {"1": "what is a cat", "2": "what is a dog"}
    assert read_irds_docs(f"irds:{DATASET}")["d3"] == "cats nap"
    run = Run.from_dict({"1": {"d3": 2.0, "d1": 1.0}, "2": {"d1": 1.0}})
    # q1: first relevant at rank 1; q2: d2 not retrieved
    assert evaluate(run, qrels, ["mrr"]).run.means() == {"mrr": 0.5}


def test_cli_qrels_option(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d2 1 3 r\n1 Q0 d1 2 2 r\n2 Q0 d2 1 1 r\n")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(run),
            "--qrels",
            f"irds:{DATASET}",
            "-m",
            "mrr",
            "-f",
            "json",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.stdout
    assert json.loads(out.read_text())["runs"][0]["metrics"]["mrr"]["mean"] == pytest.approx(0.75)


def test_errors_name_the_dataset() -> None:
    with pytest.raises(InputError, match="no dataset 'no-such/set'"):
        read_qrels("irds:no-such/set")
    with pytest.raises(InputError, match="diversity qrels"):
        read_qrels(f"irds:{DUPLICATED}")


def test_texts_for_the_judges() -> None:
    from ragmeter.io.irds import read_irds_texts

    docs = read_irds_texts(f"irds:{DATASET}")
    queries = read_irds_texts(f"irds:{DATASET}", "queries")
    assert len(docs.doc_ids) == 3 and len(queries.doc_ids) == 2
