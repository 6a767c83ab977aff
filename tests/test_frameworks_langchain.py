"""LangChain traced by OpenInference's own instrumentor, read back by ragmeter.

The example collection's 30 questions go through LangChain's BM25 retriever
(langchain-community, on rank_bm25; its tokenizer is ``str.split``, nothing is downloaded).
The instrumentor records each document's content and metadata, not ``Document.id``: the
passage ids live in the metadata, where ragmeter must be told (or find) them. Every
per-query ranking and value must be the one of the ranking LangChain itself returned (see
``frameworks_util``).

Skipped where the ``frameworks`` extra is not installed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="the frameworks extra (langchain-core)")
pytest.importorskip("rank_bm25", reason="the frameworks extra (rank-bm25)")
with warnings.catch_warnings():
    # langchain-community warns on import that it is being sunset; its BM25Retriever is
    # still LangChain's BM25 retriever
    warnings.simplefilter("ignore", DeprecationWarning)
    lc_retrievers = pytest.importorskip(
        "langchain_community.retrievers", reason="the frameworks extra (langchain-community)"
    )
oi_langchain = pytest.importorskip(
    "openinference.instrumentation.langchain",
    reason="the frameworks extra (openinference-instrumentation-langchain)",
)

from langchain_core.documents import Document  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from frameworks_util import (  # noqa: E402
    QUERY_ID_FROM,
    Collection,
    Rankings,
    Traced,
    assert_same_values,
    example_collection,
    instrumented,
    query_id,
    ragmeter_values,
    reference_values,
    write_otlp,
    write_trec,
)
from ragmeter.cli import app  # noqa: E402
from ragmeter.errors import InputError  # noqa: E402
from ragmeter.io.readers import read_run  # noqa: E402


@pytest.fixture(scope="module")
def collection() -> Collection:
    return example_collection()


@pytest.fixture(scope="module")
def exporter() -> Iterator[Any]:
    with instrumented(oi_langchain.LangChainInstrumentor()) as exporter:
        yield exporter


def _traced(collection: Collection, exporter: Any, path: Path, id_key: str, k: int = 10) -> Traced:
    """The 30 questions through LangChain's BM25 retriever, each passage's id in its
    metadata under ``id_key`` (``Document.id`` left unset, as loaders leave it)."""
    docs = [Document(page_content=t, metadata={id_key: p}) for p, t in collection.passages.items()]
    retriever = lc_retrievers.BM25Retriever.from_documents(docs, k=k)
    exporter.clear()
    rankings: Rankings = {}
    for qid, text in collection.queries.items():
        with query_id(qid):
            found = retriever.invoke(text)
        rankings[qid] = [d.metadata[id_key] for d in found]
    spans = exporter.get_finished_spans()
    exporter.clear()
    return Traced(write_otlp(spans, path), rankings)


@pytest.fixture(scope="module")
def metadata_id(
    collection: Collection, exporter: Any, tmp_path_factory: pytest.TempPathFactory
) -> Traced:
    path = tmp_path_factory.mktemp("langchain") / "metadata_id.json"
    return _traced(collection, exporter, path, "id")


@pytest.fixture(scope="module")
def metadata_pid(
    collection: Collection, exporter: Any, tmp_path_factory: pytest.TempPathFactory
) -> Traced:
    path = tmp_path_factory.mktemp("langchain") / "metadata_pid.json"
    return _traced(collection, exporter, path, "pid")


def test_the_instrumentor_records_metadata_not_document_ids(metadata_id: Traced) -> None:
    """Why ``doc_id_from`` exists: LangChain's spans carry no ``document.id``."""
    text = metadata_id.path.read_text(encoding="utf-8")
    assert "document.metadata" in text and "document.id" not in text


def test_ids_in_metadata_id_are_langchain_own(metadata_id: Traced, collection: Collection) -> None:
    own = metadata_id.rankings
    expected = reference_values(own, collection.qrels)
    for doc_id_from in ("metadata.id", None):  # None: found in the metadata (and said so)
        run = read_run(metadata_id.path, query_id_from=QUERY_ID_FROM, doc_id_from=doc_id_from)
        assert run.ranked() == own, doc_id_from
        assert_same_values(ragmeter_values(run, collection.qrels_path), expected)
        # found alone, it says where it found them
        said = [w for w in run.warnings if "(--doc-id-from metadata.id)" in w]
        assert len(said) == (1 if doc_id_from is None else 0), run.warnings


def test_the_framework_ranking_as_trec_gives_the_same_values(
    metadata_id: Traced, collection: Collection, tmp_path: Path
) -> None:
    run = read_run(metadata_id.path, query_id_from=QUERY_ID_FROM, doc_id_from="metadata.id")
    trec = write_trec(metadata_id.rankings, tmp_path / "own.trec")
    assert ragmeter_values(trec, collection.qrels_path) == ragmeter_values(
        run, collection.qrels_path
    )


def test_ids_under_another_key_are_an_error_naming_doc_id_from(
    metadata_pid: Traced, collection: Collection
) -> None:
    """Without ``--doc-id-from`` no retrieved passage is judged: an error, never 0.0000."""
    args = ["evaluate", str(metadata_pid.path), "--qrels", str(collection.qrels_path)]
    args += ["--query-id-from", QUERY_ID_FROM, "-m", "ndcg@10"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code != 0
    assert "--doc-id-from" in out.output and "Traceback" not in out.output
    with pytest.raises(InputError, match="--doc-id-from"):
        run = read_run(metadata_pid.path, query_id_from=QUERY_ID_FROM)
        ragmeter_values(run, collection.qrels_path)

    # told where the ids are, the values are LangChain's own
    out = CliRunner().invoke(app, [*args, "--doc-id-from", "metadata.pid", "-f", "json"])
    assert out.exit_code == 0, out.output
    run = read_run(metadata_pid.path, query_id_from=QUERY_ID_FROM, doc_id_from="metadata.pid")
    assert run.ranked() == metadata_pid.rankings
    assert_same_values(
        ragmeter_values(run, collection.qrels_path),
        reference_values(metadata_pid.rankings, collection.qrels),
    )
