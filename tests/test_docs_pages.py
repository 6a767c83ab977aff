"""The README and the pages of docs/ as a reader meets them in the repository: every relative
link leads to a file on disk (and to a heading of it, for a ``#anchor``), nothing says to
install ragmeter from PyPI (it is not published there), no command uses a deprecated option,
and the README stays a short front page."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PAGES: tuple[Path, ...] = (README, *sorted((REPO / "docs").glob("*.md")))
sys.path.insert(0, str(REPO / "scripts"))
import docs_hooks  # noqa: E402

#: pages that work on other branches adds; the README's map links to them already. A link to
#: one of these that is not on disk yet is reported (a skip), not a failure.
PENDING_PAGES = frozenset({"docs/ppi.md", "docs/trust-labels.md"})

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`]*`")


def _prose(page: Path) -> list[tuple[int, str]]:
    """``(line number, text)`` of the lines outside fenced code, inline code removed."""
    lines: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, INLINE_CODE.sub("", line)))
    return lines


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as Python-Markdown's toc (and GitHub, for these
    headings) makes them: the heading's text without its Markdown, slugged."""
    found = set()
    for _, line in _prose_with_code_headings(page):
        if m := re.match(r"^(#{1,6})\s+(.*?)\s*#*$", line):
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m[2]).replace("`", "")
            found.add(docs_hooks.slug(text))
    return found


def _prose_with_code_headings(page: Path) -> list[tuple[int, str]]:
    """Lines outside fenced code, inline code kept (a heading's `code` is part of its text)."""
    lines: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def relative_links(page: Path) -> list[tuple[int, str]]:
    return [
        (number, m[2])
        for number, line in _prose(page)
        for m in LINK.finditer(line)
        if not re.match(r"[a-z]+:", m[2])  # http:, https:, mailto:
    ]


def _broken(page: Path, target: str) -> str | None:
    """Why ``target``, linked from ``page``, does not resolve on disk (None when it does)."""
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    if not dest.exists():
        return "no such file"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"{dest.name} has no heading #{anchor}"
    return None


def _where(page: Path, number: int) -> str:
    return f"{page.relative_to(REPO)}:{number}"


def test_every_relative_link_resolves_on_disk() -> None:
    broken = []
    for page in PAGES:
        for number, target in relative_links(page):
            path = target.partition("#")[0]
            pending = (page.parent / path).resolve().relative_to(REPO).as_posix()
            if path and pending in PENDING_PAGES:
                continue
            why = _broken(page, target)
            if why is not None:
                broken.append(f"{_where(page, number)}: ({target}) {why}")
    assert not broken, "\n".join(broken)


def test_the_pages_other_branches_add() -> None:
    missing = sorted(p for p in PENDING_PAGES if not (REPO / p).is_file())
    linked = {
        (page.parent / target.partition("#")[0]).resolve().relative_to(REPO).as_posix()
        for page in PAGES
        for _, target in relative_links(page)
    }
    assert linked >= PENDING_PAGES, "the README's docs map no longer links to every page"
    if missing:
        pytest.skip(f"linked before they exist (their branches add them): {missing}")


def test_links_inside_docs_stay_inside_docs() -> None:
    """The site is built from docs/ alone: a page's link to a file outside it would break
    there (mkdocs --strict refuses it too); name such files in code instead."""
    docs = REPO / "docs"
    outside = [
        f"{_where(page, number)}: {target}"
        for page in PAGES
        if page.parent == docs
        for number, target in relative_links(page)
        if not (docs / target.partition("#")[0]).resolve().is_relative_to(docs)
    ]
    assert not outside, "\n".join(outside)


def test_the_link_checker_catches_a_broken_link_and_anchor(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    page.write_text("# A page\n\n## The `b` part\n\n```\n## not a heading\n```\n")
    assert _broken(page, "a.md#the-b-part") is None
    assert _broken(page, "#a-page") is None
    assert _broken(page, "#not-a-heading") == "a.md has no heading #not-a-heading"
    assert _broken(page, "b.md") == "no such file"
    assert relative_links(page) == []
    page.write_text("see [x](b.md) and `[y](c.md)` and [z](https://example.org)\n")
    assert relative_links(page) == [(1, "b.md")]


def test_nothing_says_to_install_ragmeter_from_pypi() -> None:
    from_pypi = re.compile(r"pip install\s+(?:-\S+\s+)*[\"']?ragmeter\b")
    found = [
        f"{_where(page, number)}: {line.strip()}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if from_pypi.search(line)
    ]
    assert not found, "ragmeter is not on PyPI; say pip install -e . in a clone:\n" + "\n".join(
        found
    )


# -- deprecated options ---------------------------------------------------------------------


def deprecated_options() -> dict[str, set[str]]:
    """Command path (``evaluate``, ``crux summary``) → the options it keeps only for old
    scripts: ``-q`` for ``--qrels`` where the group rewrites it (with a warning), and every
    hidden option (an older spelling)."""
    import typer.main

    from ragmeter.cli import app
    from ragmeter.commands.process import QRELS_SHORT_COMMANDS

    old: dict[str, set[str]] = {name: {"-q"} for name in QRELS_SHORT_COMMANDS}
    root = typer.main.get_command(app)

    def walk(command: object, ctx: object, path: str) -> None:
        for param in getattr(command, "params", []):
            if getattr(param, "hidden", False):
                old.setdefault(path, set()).update(param.opts)
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                walk(sub, type(ctx)(sub, info_name=name, parent=ctx), f"{path} {name}".strip())

    walk(root, root.make_context("ragmeter", [], resilient_parsing=True), "")
    return old


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote in prose: plain words are good enough
        return line.split()


def _command(words: list[str], old: dict[str, set[str]]) -> tuple[str, list[str]]:
    """The longest command path of ``old`` that ``words`` begin with (``crux summary``), and
    the words after it."""
    path = ""
    while words:
        candidate = f"{path} {words[0]}".strip()
        if not any(k == candidate or k.startswith(f"{candidate} ") for k in old):
            break
        path, words = candidate, words[1:]
    return path, words


def uses_of_deprecated(text: str, old: dict[str, set[str]]) -> list[str]:
    """The ``ragmeter CMD … OPTION`` uses of ``text`` (continued lines joined) whose option
    ``old`` lists for that command."""
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        words = _words(line)
        for i, word in enumerate(words):
            if word != "ragmeter":
                continue
            path, rest = _command(words[i + 1 :], old)
            stop = next((j for j, w in enumerate(rest) if w in {"|", "&&", ";", "||"}), None)
            for word_ in rest[:stop]:
                if word_ == "ragmeter":
                    break
                for opt in old.get(path, ()):
                    short = opt == "-q" and word_.startswith("-q") and not word_.startswith("--")
                    if word_ == opt or word_.startswith(f"{opt}=") or short:
                        found.append(f"ragmeter {path} … {word_}")
    return found


def test_the_deprecation_scanner_finds_old_spellings() -> None:
    old = {"evaluate": {"-q"}, "crux summary": {"--json"}}
    assert uses_of_deprecated("ragmeter evaluate run.txt -q qrels.txt -m map", old)
    assert uses_of_deprecated("ragmeter evaluate run.txt \\\n    -qqrels.txt", old)
    assert uses_of_deprecated("ragmeter crux summary j.jsonl --json", old)
    assert not uses_of_deprecated("ragmeter trec-eval -q qrels run", old)
    assert not uses_of_deprecated("ragmeter evaluate run --qrels q | grep -q map", old)
    assert not uses_of_deprecated("ragmeter crux build-qrels j --json", old)


def test_no_page_uses_a_deprecated_option() -> None:
    old = deprecated_options()
    assert "-q" in old["evaluate"]  # the scan below reads what the command line marks
    found = [
        f"{page.relative_to(REPO)}: {use}"
        for page in PAGES
        for use in uses_of_deprecated(page.read_text(encoding="utf-8"), old)
    ]
    assert not found, "\n".join(found)


def test_the_readme_is_a_short_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    # it starts with the command that installs and runs the demo, then the test command
    assert blocks[0].strip() == 'pip install -e ".[demo]" && ragmeter demo'
    assert blocks[1].strip() == 'pip install -e ".[dev]" && python -m pytest -q'
    before = text[: text.index("```bash")]
    assert "\n## " not in before
