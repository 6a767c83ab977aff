"""The documentation site: ``mkdocs build --strict`` (warnings are errors) and the build-time
pages of scripts/docs_hooks.py: one page per metrics module from the registry, and every
docs/*.md in the nav."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import docs_hooks  # noqa: E402


def test_every_family_is_on_a_metric_page() -> None:
    from ragmeter.measures import REGISTRY

    pages = {m: docs_hooks.metric_page(m, t) for m, t in docs_hooks.METRIC_PAGES.items()}
    for fam in REGISTRY.families():
        page = pages[fam.compute.__module__.rpartition(".")[2]]
        assert f"## `{fam.name}`" in page
        # the formula is the compute function's docstring, as help() shows it
        first = (fam.compute.__doc__ or "").strip().splitlines()[0]
        assert docs_hooks.ROLE.sub(r"\1", first) in page


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="mkdocs and mkdocstrings not installed (the docs extra)",
)
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "metrics" / "ranking" / "index.html").is_file()
    assert (tmp_path / "cli" / "index.html").is_file()
    page = (tmp_path / "check" / "index.html").read_text(encoding="utf-8")
    assert "fail-if" in page
    # every docs page is in the site
    for md in (ROOT / "docs").glob("*.md"):
        name = "index.html" if md.stem == "index" else f"{md.stem}/index.html"
        assert (tmp_path / name).is_file(), md.name
