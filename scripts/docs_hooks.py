"""MkDocs hooks of the documentation site (mkdocs.yml names this file): the pages made at build
time, so that nothing generated is committed and nothing can drift.

* ``metrics/<family>.md``: one page per module of ``ragmeter.metrics``, from the measure
  registry: each family's name, cutoff, parameters, aliases, inputs and summary, and its
  compute function's docstring (the formula and a worked example).
* Guide pages cut from README.md by heading (``README_PAGES``): the README stays the one
  source of these sections; a heading that is gone fails the build, naming it.
* Any ``docs/*.md`` the nav in mkdocs.yml does not list, and any top-level README section no
  page claims (``more.md``), is added under "More": what is added later is never left out.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
ROLE = re.compile(r":(?:func|class|mod|data|attr|meth|obj):`~?([^`]+)`")

#: the guide pages cut from the README: page → (title, README headings, in order)
README_PAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "getting-started.md": (
        "Getting started",
        (
            "Try it",
            "Use it from Python",
            "The command line",
            "Where ragmeter keeps its files",
            "Run the tests",
        ),
    ),
    "comparing.md": ("Comparing runs", ("Did it get better? Comparing runs",)),
    "history.md": ("History of evaluations", ("Keep a history of evaluations",)),
    "cutoffs.md": (
        "Cutoffs and contexts",
        ("One name, one number: cutoffs and contexts", "Conventions"),
    ),
    "measures.md": ("Measures", ("Measures",)),
    "set-based.md": ("Set-based metrics", ("Set-based metrics for the prompt set",)),
    "coverage.md": ("Coverage (CRUX)", ("Coverage of the retrieval context",)),
    "nuggets.md": ("Nuggets (TREC RAG)", ("Nuggets and citation support (TREC RAG)",)),
    "report.md": ("HTML report", ("HTML report",)),
    "answers.md": ("Answers", ("Answers",)),
    "judges.md": ("Judges", ("Judge with an LLM", "Judge with a local model")),
    "pipeline.md": (
        "Your own pipeline",
        ("Evaluate your own RAG pipeline", "Baseline retrievers"),
    ),
    "web.md": ("Web app", ("Label and review in the browser",)),
    "layout.md": ("Source layout", ("Layout",)),
}

#: pages other work adds to docs/, placed in a nav section when present: page → (section, title)
OPTIONAL_PAGES: dict[str, tuple[str, str]] = {"scale.md": ("Guide", "Scaling")}

#: titles of the metric pages, by module of ragmeter.metrics
METRIC_PAGES: dict[str, str] = {
    "ranking": "Classical ranking measures",
    "trec_measures": "trec_eval's other measures",
    "setwise": "Set-based measures (the prompt set)",
    "udcg": "UDCG",
    "coverage": "Coverage (CRUX)",
    "nuggets": "Nuggets and citation support (TREC RAG)",
    "answer_text": "Answer text measures",
    "interop": "ir_measures' measures",
    "cwl": "C/W/L measures",
    "diversity": "Diversity measures (ndeval)",
    "spans": "Span measures (chunkings)",
}


def slug(title: str) -> str:
    """The anchor Python-Markdown's toc gives a heading."""
    text = re.sub(r"[^\w\s-]", "", title).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def readme_sections(text: str) -> dict[str, tuple[int, list[str]]]:
    """Each heading of the README (outside code blocks) → (level, its lines up to the next
    heading of the same or a higher level, heading included)."""
    lines = text.splitlines()
    heads: list[tuple[int, int, str]] = []
    fenced = False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            heads.append((i, len(m[1]), m[2]))
    sections: dict[str, tuple[int, list[str]]] = {}
    for n, (start, level, title) in enumerate(heads):
        end = next((s for s, lv, _ in heads[n + 1 :] if lv <= level), len(lines))
        sections[title] = (level, lines[start:end])
    return sections


def _link(target: str, anchors: dict[str, str], page: str) -> str:
    """A README link as the docs site needs it: docs/X → X, #anchor → its page, another
    repository file → None (shown as text)."""
    if "://" in target or target.startswith("mailto:"):
        return target
    if target.startswith("#"):
        where = anchors.get(target[1:])
        return target if where in (None, page) else f"{where}{target}"
    if target.startswith("docs/"):
        return target[len("docs/") :]
    return ""


def readme_pages(readme: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """README_PAGES, plus ``more.md`` with every top-level README section no page claims (a
    section added to the README later is on the site too)."""
    sections = readme_sections(readme)
    claimed = {h for _, heads in README_PAGES.values() for h in heads}
    for heads in list(README_PAGES.values()):
        for h in heads[1]:
            if h in sections:  # what a claimed section holds is claimed with it
                claimed |= {m[2] for line in sections[h][1] if (m := HEADING.match(line))}
    top = min((lv for lv, _ in sections.values()), default=1)
    rest = tuple(h for h, (lv, _) in sections.items() if lv == top + 1 and h not in claimed)
    return {**README_PAGES, **({"more.md": ("More", rest)} if rest else {})}


def readme_page(page: str, title: str, headings: tuple[str, ...], readme: str) -> str:
    """The page made of the README's ``headings``; a subsection another page claims is a link
    to it there, not a second copy."""
    sections = readme_sections(readme)
    pages = readme_pages(readme)
    owner = {h: other for other, (_, heads) in pages.items() for h in heads}
    anchors: dict[str, str] = {}
    for other, (_, heads) in pages.items():
        for h in heads:
            for line in sections[h][1] if h in sections else ():
                if m := HEADING.match(line):
                    anchors.setdefault(slug(m[2]), owner.get(m[2], other))
    out = [f"# {title}", ""]
    for heading in headings:
        if heading not in sections:
            raise SystemExit(f"docs: README.md has no heading {heading!r} (README_PAGES)")
        level, lines = sections[heading]
        fenced, skip_below = False, 0
        for line in lines:
            if FENCE.match(line):
                fenced = not fenced
            m = None if fenced else HEADING.match(line)
            if m and skip_below and len(m[1]) > skip_below:
                continue
            if m:
                skip_below = 0
                if m[2] != heading and owner.get(m[2], page) != page:
                    skip_below = len(m[1])
                    out.append(f"See [{m[2]}]({owner[m[2]]}#{slug(m[2])}).")
                    continue
                # the README's ## is the page's ##: its title is the page's #
                line = f"{'#' * max(2, len(m[1]) - level + 2)} {m[2]}"
            elif skip_below:
                continue
            elif not fenced:
                line = _plain_links(line, anchors, page)
            out.append(line)
        out.append("")
    return "\n".join(out)


def _plain_links(line: str, anchors: dict[str, str], page: str) -> str:
    """Rewrite the links of one line; a link to a repository file outside docs/ becomes its
    text with the path in code (the site has no copy of that file)."""

    def repl(m: re.Match[str]) -> str:
        text, target = m[1], m[2]
        new = _link(target, anchors, page)
        if new:
            return f"[{text}]({new})"
        return text if text.strip("`") == target else f"{text} (`{target}` in the repository)"

    return re.sub(r"\[([^\]]*)\]\(([^)\s]+)\)", repl, line)


def _docstring(obj: Any) -> str:
    return ROLE.sub(r"\1", inspect.cleandoc(obj.__doc__ or ""))


def metric_page(module: str, title: str) -> str:
    """The families whose compute function lives in ``ragmeter.metrics.<module>``."""
    import importlib

    from ragmeter.measures import REGISTRY

    mod = importlib.import_module(f"ragmeter.metrics.{module}")
    families = sorted(
        (f for f in REGISTRY.families() if f.compute.__module__ == mod.__name__),
        key=lambda f: f.name,
    )
    if not families:
        raise SystemExit(f"docs: no measure family is computed in ragmeter.metrics.{module}")
    out = [
        f"# {title}",
        "",
        f"Generated from the measure registry and the docstrings of `ragmeter.metrics.{module}`"
        " (the same text as `ragmeter measures` and `help()` give).",
        "",
        "```text",
        _docstring(mod),
        "```",
        "",
    ]
    for fam in families:
        cutoff = {"none": "none", "optional": "`@k` optional", "required": "`@k` required"}
        rows = [
            ("cutoff", cutoff[fam.cutoff]),
            ("without `@k`", fam.default_context if fam.cutoff == "optional" else ""),
            ("parameters", ", ".join(f"`{p.name}`" for p in fam.params)),
            ("aliases", ", ".join(f"`{a}`" for a in fam.aliases)),
            ("reads", ", ".join(sorted(fam.needs))),
            ("aggregate", fam.aggregate),
        ]
        out += [f"## `{fam.name}`", "", fam.summary, "", "| | |", "|---|---|"]
        out += [f"| {k} | {v} |" for k, v in rows if v]
        out += ["", "```text", _docstring(fam.compute), "```", ""]
    return "\n".join(out)


# -- the hooks ------------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    """Put src/ on the path (the registry is read from this checkout) and add every docs page
    the nav does not list under "More"."""
    src = str(ROOT / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    listed: set[str] = set()

    def walk(items: Any) -> None:
        for item in items or []:
            if isinstance(item, dict):
                for value in item.values():
                    walk(value) if isinstance(value, list) else listed.add(str(value))
            else:
                listed.add(str(item))

    walk(config["nav"])
    docs = Path(config["docs_dir"])
    more: list[str] = []
    if "more.md" in readme_pages((ROOT / "README.md").read_text(encoding="utf-8")):
        more.append("more.md")
    for page, (section, title) in OPTIONAL_PAGES.items():
        if (docs / page).is_file() and page not in listed:
            for item in config["nav"]:
                if isinstance(item, dict) and section in item:
                    item[section].append({title: page})
                    listed.add(page)
    more += sorted(
        p.name for p in docs.glob("*.md") if p.name not in listed and p.name != "index.md"
    )
    if more:
        config["nav"].append({"More": more})
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    from ragmeter.measures import REGISTRY

    modules = {f.compute.__module__.rpartition(".")[2] for f in REGISTRY.families()}
    unlisted = sorted(modules - set(METRIC_PAGES))
    if unlisted:
        raise SystemExit(f"docs: metrics modules without a page (METRIC_PAGES): {unlisted}")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page, (title, headings) in readme_pages(readme).items():
        content = readme_page(page, title, headings, readme)
        files.append(File.generated(config, page, content=content))
    for module, title in METRIC_PAGES.items():
        content = metric_page(module, title)
        files.append(File.generated(config, f"metrics/{module}.md", content=content))
    return files
