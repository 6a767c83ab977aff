"""Shared fixtures: where the conformance data lives (beside the repository, read-only)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFORMANCE = REPO.parent / "shared" / "conformance" / "trec_eval"


@pytest.fixture(scope="session")
def trec_conformance() -> Path:
    """The trec_eval 10.0 test-suite folder; tests using it skip visibly when it is absent."""
    if not (CONFORMANCE / "qrels.test").is_file():
        pytest.skip(f"trec_eval conformance data not found at {CONFORMANCE}")
    return CONFORMANCE
