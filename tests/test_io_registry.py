"""The format registry: one table from names, aliases and extensions to readers and writers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io.formats import FORMATS_REGISTRY, FileFormat, FormatRegistry
from ragmeter.io.readers import FORMATS, detect_format, read_run, write_run


def test_every_extension_selects_its_format() -> None:
    # the table of the readers' module docstring, written out by hand
    expected = {
        "a.txt": "trec",
        "a.trec": "trec",
        "a.run": "trec",
        "a.qrels": "trec",
        "results.test": "trec",  # unknown extension: TREC, as trec_eval reads it
        "a.json": "json",
        "a.jsonl": "jsonl",
        "a.NDJSON": "jsonl",
        "a.yaml": "yaml",
        "a.yml": "yaml",
        "a.parquet": "parquet",
        "a.pq": "parquet",
        "a.csv": "csv",
        "a.tsv": "tsv",
    }
    assert {path: detect_format(path) for path in expected} == expected
    assert detect_format("a.txt", "YML") == "yaml"
    assert detect_format("a.txt", ".csv") == "csv"
    assert set(FORMATS) == {
        *("trec", "json", "jsonl", "yaml", "parquet", "csv", "tsv"),
        *("otlp", "phoenix"),
    }


def test_unknown_format_names_the_choices() -> None:
    with pytest.raises(InputError, match="unknown format 'xml'; expected one of trec"):
        FORMATS_REGISTRY.get("xml")


def test_only_formats_with_writers_are_writable() -> None:
    assert set(FORMATS_REGISTRY.writable()) == {"trec", "jsonl", "csv", "tsv", "parquet"}


def test_registering_a_format_dispatches_to_it(tmp_path: Path) -> None:
    seen: list[str] = []

    def read(path: object, name: str | None) -> Run:
        seen.append(str(path))
        return Run.from_lists({"q": ["d"]}, name=name or "x")

    def read_qrels(path: object, name: str | None) -> Qrels:
        return Qrels.from_dict({"q": ["d"]})

    registry = FormatRegistry(default="mine")
    registry.register(FileFormat("mine", (".mine",), "a test format", read, read_qrels))
    fmt = registry.for_path(tmp_path / "run.other")
    assert fmt.name == "mine"  # the default serves unknown extensions
    assert fmt.read_run(tmp_path / "r.mine", None).name == "x"
    assert seen == [str(tmp_path / "r.mine")]
    with pytest.raises(ValueError, match="already registered"):
        registry.register(FileFormat("other", (".mine",), "clash", read, read_qrels))


def test_round_trip_through_every_writable_format(tmp_path: Path) -> None:
    run = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 0.5}}, name="r")
    for name in FORMATS_REGISTRY.writable():
        ext = FORMATS_REGISTRY.get(name).extensions[0]
        path = tmp_path / f"run{ext}"
        write_run(run, path)
        back = read_run(path)
        assert back.ranked() == run.ranked(), name
