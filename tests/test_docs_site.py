"""The documentation site: ``mkdocs build --strict`` (warnings are errors) and the build-time
pages of scripts/docs_hooks.py: one page per metrics module from the registry, guide pages cut
from README.md, and every docs/*.md in the nav."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import docs_hooks  # noqa: E402


def test_readme_sections_skip_code_blocks_and_nest() -> None:
    text = "# T\n## A\na\n```bash\n# not a heading\n```\n### A1\nx\n## B\nb\n"
    sections = docs_hooks.readme_sections(text)
    assert set(sections) == {"T", "A", "A1", "B"}
    level, lines = sections["A"]
    assert level == 2 and lines[0] == "## A" and "# not a heading" in lines and "### A1" in lines
    assert "## B" not in lines


def test_readme_links_are_rewritten_for_the_site() -> None:
    anchors = {"one-name": "cutoffs.md"}
    line = (
        "see [docs/x.md](docs/x.md), [rule](#one-name), [b](benchmarks/README.md), [h](https://a.b)"
    )
    out = docs_hooks._plain_links(line, anchors, "getting-started.md")
    assert "[docs/x.md](x.md)" in out and "[rule](cutoffs.md#one-name)" in out
    assert "b (`benchmarks/README.md` in the repository)" in out and "(https://a.b)" in out


def test_a_missing_readme_heading_fails_the_build() -> None:
    with pytest.raises(SystemExit, match="no heading 'Gone'"):
        docs_hooks.readme_page("p.md", "P", ("Gone",), "# R\n## Here\n")


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
    page = (tmp_path / "check" / "index.html").read_text(encoding="utf-8")
    assert "fail-if" in page
    # every docs page is in the site
    for md in (ROOT / "docs").glob("*.md"):
        name = "index.html" if md.stem == "index" else f"{md.stem}/index.html"
        assert (tmp_path / name).is_file(), md.name


def test_unclaimed_readme_sections_go_to_more_and_claimed_subsections_link() -> None:
    readme = "# R\n## Try it\nt\n## Measures\nm\n### Sub\ns\n## New section\nn [x](#sub)\n"
    pages = dict(docs_hooks.README_PAGES)
    try:
        docs_hooks.README_PAGES.clear()
        docs_hooks.README_PAGES.update(
            {"a.md": ("A", ("Try it",)), "m.md": ("M", ("Measures",)), "s.md": ("S", ("Sub",))}
        )
        found = docs_hooks.readme_pages(readme)
        assert found["more.md"] == ("More", ("New section",))
        measures = docs_hooks.readme_page("m.md", "M", ("Measures",), readme)
        assert "See [Sub](s.md#sub)." in measures and "\ns\n" not in measures
        more = docs_hooks.readme_page("more.md", "More", ("New section",), readme)
        assert "[x](s.md#sub)" in more
    finally:
        docs_hooks.README_PAGES.clear()
        docs_hooks.README_PAGES.update(pages)
