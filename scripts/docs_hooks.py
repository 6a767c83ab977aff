"""MkDocs hooks of the documentation site (mkdocs.yml names this file): the pages made at build
time, so that nothing generated is committed and nothing can drift.

* ``metrics/<family>.md``: one page per module of ``ragmeter.metrics``, from the measure
  registry: each family's name, cutoff, parameters, aliases, inputs and summary, and its
  compute function's docstring (the formula and a worked example).
* Any ``docs/*.md`` the nav in mkdocs.yml does not list is added under "More": a page added
  later is never left out.

The guide pages are committed in docs/ (README.md is the short front page that links to
them); the CLI reference, docs/cli.md, is committed too, made by scripts/make_cli_reference.py.
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

#: titles of the metric pages, by module of ragmeter.metrics
METRIC_PAGES: dict[str, str] = {
    "ranking": "Classical ranking measures",
    "trec_measures": "trec_eval's other measures",
    "setwise": "Set-based measures (the prompt set)",
    "udcg": "UDCG",
    "coverage": "Coverage (CRUX)",
    "nuggets": "Nuggets and citation support (TREC RAG)",
    "ragchecker": "RAGChecker's context metrics",
    "answer_text": "Answer text measures",
    "containment": "Answer containment",
    "interop": "ir_measures' measures",
    "cwl": "C/W/L measures",
    "diversity": "Diversity measures (ndeval)",
    "spans": "Span measures (chunkings)",
}


def slug(title: str) -> str:
    """The anchor Python-Markdown's toc gives a heading."""
    text = re.sub(r"[^\w\s-]", "", title).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


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
    more = sorted(
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
    for module, title in METRIC_PAGES.items():
        content = metric_page(module, title)
        files.append(File.generated(config, f"metrics/{module}.md", content=content))
    return files
