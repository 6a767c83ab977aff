"""What a new user trips on in the first hour, each checked: the error without --qrels names
the option, serve warns when texts are missing, -q is spelled --qrels outside trec-eval,
correlate takes -f json, help texts wrap at 80 columns without breaking a sentence, the
containment figure is explained, and the examples the docs point to exist.

(``--version``: tests/test_accel_status.py; the ``all`` extra: tests/test_extras.py; a closed
pipe under ``trec-eval | head -1``: tests/reliability/test_output_failures.py; the data folder
and a history listing that creates nothing: tests/test_datadir.py; the judge's failures after
a dead server: tests/test_judges_faults.py.)
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
BM25 = str(EXAMPLES / "run_bm25.txt")
DENSE = str(EXAMPLES / "run_dense.txt")
QRELS = str(EXAMPLES / "qrels.txt")


def _invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


# -- a TREC run without --qrels -------------------------------------------------------------


@pytest.mark.parametrize("command", [["evaluate", BM25], ["compare", BM25, DENSE]])
def test_without_qrels_the_error_names_the_option(command: list[str]) -> None:
    done = _invoke(*command, "-m", "ndcg@10")
    assert done.exit_code == 2
    assert "no --qrels given" in done.output and "--qrels QRELS" in done.output
    assert "TREC run" in done.output
    assert "field(s); expected 4" not in done.output  # not the run's format blamed


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("run.json", '{"q1": {"d1": 3, "d2": 1}}'),
        ("run.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 2}\n'),
        ("run.csv", "query_id,doc_id,score\nq1,d1,2\nq1,d2,1\n"),
    ],
)
def test_a_run_is_never_its_own_qrels(tmp_path: Path, name: str, text: str) -> None:
    """Read as qrels, these runs' scores would be grades and the run would score itself
    perfect (mrr 1.0): without --qrels only samples files, which carry judgments, evaluate."""
    path = tmp_path / name
    path.write_text(text)
    done = _invoke("evaluate", str(path), "-m", "mrr")
    assert done.exit_code == 2, done.output
    assert "no --qrels given" in done.output and "a run without judgments" in done.output


def test_samples_with_expected_output_still_need_no_qrels() -> None:
    done = _invoke("evaluate", str(EXAMPLES / "ragas_sample.jsonl"), "-m", "mrr")
    assert done.exit_code == 0, done.output


# -- -q: --qrels outside trec-eval ------------------------------------------------------------


def test_qrels_is_spelled_qrels_and_the_old_short_form_still_works() -> None:
    help_text = _invoke("evaluate", "--help", env={"COLUMNS": "120"}).output
    assert "--qrels" in help_text and not re.search(r"(?<![\w-])-q(?![\w-])", help_text)
    new = _invoke("evaluate", BM25, "--qrels", QRELS, "-m", "map", "-f", "json")
    old = _invoke("evaluate", BM25, "-q", QRELS, "-m", "map", "-f", "json")
    glued = _invoke("evaluate", BM25, f"-q{QRELS}", "-m", "map", "-f", "json")
    assert new.exit_code == old.exit_code == glued.exit_code == 0
    assert "deprecated" in old.stderr and "--qrels" in old.stderr
    assert "deprecated" not in new.stderr
    assert json.loads(new.stdout) == json.loads(old.stdout) == json.loads(glued.stdout)


@pytest.mark.parametrize("command", ["compare", "diagnose", "report"])
def test_no_other_command_lists_q_for_qrels(command: str) -> None:
    help_text = _invoke(command, "--help", env={"COLUMNS": "120"}).output
    assert "--qrels" in help_text and not re.search(r"(?<![\w-])-q(?![\w-])", help_text)


def test_the_value_of_another_option_is_never_rewritten(tmp_path: Path) -> None:
    store = str(tmp_path / "h.db")
    done = _invoke(
        "evaluate", BM25, "--qrels", QRELS, "-m", "map", "--name", "-q", "--store", store
    )
    assert done.exit_code == 0, done.output
    assert "deprecated" not in done.stderr
    listed = _invoke("history", "--store", store, "-f", "json")
    assert [e["name"] for e in json.loads(listed.stdout)["evaluations"]] == ["-q"]


def test_trec_eval_keeps_its_own_q() -> None:
    from ragmeter.commands.process import QRELS_SHORT_COMMANDS

    assert "trec-eval" not in QRELS_SHORT_COMMANDS
    done = _invoke("trec-eval", "-q", "-m", "map", QRELS, BM25)
    assert done.exit_code == 0, done.output
    assert re.search(r"^map\s+\S+\s", done.stdout, re.M)  # a per-query line, as trec_eval -q


# -- correlate -f json ------------------------------------------------------------------------


def test_correlate_takes_format_json_like_the_others(tmp_path: Path) -> None:
    paths = []
    for name in ("run_bm25.txt", "run_dense.txt"):
        out = tmp_path / f"{name}.json"
        done = _invoke(
            "evaluate", str(EXAMPLES / name), "--qrels", QRELS, "-m", "map", "-m", "mrr",
            "-m", "P@10", "-f", "json", "-o", str(out),
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        paths.append(str(out))
    new = _invoke("correlate", *paths, "--target", "map", "-f", "json")
    old = _invoke("correlate", *paths, "--target", "map", "--json")
    assert new.exit_code == old.exit_code == 0, new.output
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert json.loads(new.stdout)["target"] == "map"
    assert "--format" in _invoke("correlate", "--help").output


# -- help texts at 80 columns ---------------------------------------------------------------


def _groups() -> list[list[str]]:
    """The command paths of every group: [], ["history"], ["crux"], ["judge"]…"""
    import typer.main

    root = typer.main.get_command(app)
    out: list[list[str]] = [[]]
    ctx: Any = None
    for name in root.list_commands(ctx):  # type: ignore[attr-defined]
        command = root.get_command(ctx, name)  # type: ignore[attr-defined]
        if getattr(command, "commands", None):
            out.append([name])
    return out


def _rows(panel: list[str]) -> list[list[str]]:
    """The description lines of each row of a rich commands panel."""
    rows: list[list[str]] = []
    for line in panel:
        inner = line[1:-1]
        if re.match(r" \S", inner):
            rows.append([inner])
        elif rows:
            rows[-1].append(inner)
    return rows


@pytest.mark.parametrize("group", _groups(), ids=lambda g: " ".join(g) or "ragmeter")
def test_command_summaries_wrap_only_where_the_line_is_full(group: list[str]) -> None:
    text = _invoke(*group, "--help", env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"}).output
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    # the commands' panels: "Commands", or the root's own (Start here, Labels, Tools…)
    starts = [
        i
        for i, line in enumerate(lines)
        if line.startswith("╭─") and not any(f"─ {p} ─" in line for p in ("Options", "Arguments"))
    ]
    assert starts
    rows = []
    for start in starts:
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("╰"))
        rows += _rows(lines[start + 1 : end])
    assert rows
    for row in rows:
        column = len(row[0]) - len(row[0][row[0].index("  ") :].lstrip())  # description start
        width = len(row[0]) - column - 1
        for this, after in itertools.pairwise(row):
            used = len(this[column:].rstrip())
            next_word = after[column:].split()[0]
            # a break is only where the next word did not fit on the line
            assert used + 1 + len(next_word) > width, f"{group}: {this.strip()!r}"


def _commands() -> list[list[str]]:
    """The command path of every command and group: ["evaluate"], ["judge", "relevance"]…"""
    import typer.main

    root: Any = typer.main.get_command(app)
    ctx: Any = None
    out: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        for name in command.list_commands(ctx):
            if name == "trec-eval":  # its own parser (test below)
                continue
            sub = command.get_command(ctx, name)
            out.append([*path, name])
            if getattr(sub, "commands", None):
                walk(sub, [*path, name])

    walk(root, [])
    return out


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_help_paragraphs_wrap_only_where_the_line_is_full(command: list[str]) -> None:
    text = _invoke(*command, "--help", env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"}).output
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    usage = next(i for i, line in enumerate(lines) if "Usage:" in line)
    panel = next(i for i, line in enumerate(lines) if line.startswith("╭"))
    width = 78  # rich pads the description by one column on each side
    for this, after in itertools.pairwise(lines[usage + 1 : panel]):
        if not this.strip() or not after.strip() or re.match(r"\s*(?:[-*•]|\d+\.)\s", after):
            continue
        used = len(this.rstrip()) - 1
        assert used + 1 + len(after.split()[0]) > width, f"{command}: {this.strip()!r}"


def test_trec_eval_help_fits_80_columns() -> None:
    from ragmeter.report.trec_eval import HELP

    assert all(len(line) <= 80 for line in HELP.splitlines()), max(HELP.splitlines(), key=len)


def test_no_option_help_carries_a_hard_line_break() -> None:
    import typer.main

    root: Any = typer.main.get_command(app)
    ctx: Any = None

    def walk(command: Any, path: str) -> list[str]:
        bad = [f"{path} {p.opts}" for p in command.params if "\n" in (getattr(p, "help", "") or "")]
        for name in getattr(command, "commands", {}):
            bad += walk(command.get_command(ctx, name), f"{path} {name}")
        return bad

    assert walk(root, "ragmeter") == []


# -- serve: warnings when texts are missing -------------------------------------------------


def test_serve_warns_once_at_start_when_texts_are_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("fastapi", reason="the web extra is needed")
    pytest.importorskip("uvicorn", reason="the web extra is needed")
    # bind and start nothing
    monkeypatch.setattr("ragmeter.web.server.listening_socket", lambda host, port: None)
    monkeypatch.setattr("ragmeter.web.server.serve_app", lambda *a: None)
    crux = EXAMPLES / "crux"
    runs = ["--run", str(crux / "run_bm25.txt"), "--labels", str(tmp_path / "l.db")]
    bare = _invoke("serve", *runs)
    assert bare.exit_code == 0, bare.output
    warned = [line for line in bare.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 2
    assert "no --queries given" in warned[0] and "no --corpus given" in warned[1]
    full = _invoke(
        "serve", *runs, "--queries", str(crux / "queries.jsonl"),
        "--corpus", str(crux / "passages.jsonl"),
    )  # fmt: skip
    assert full.exit_code == 0, full.output
    assert "warning:" not in full.stderr
    partial = tmp_path / "queries.jsonl"
    partial.write_text('{"id": "q1", "text": "How did the speech end?"}\n')
    some = _invoke(
        "serve", *runs, "--queries", str(partial), "--corpus", str(crux / "passages.jsonl")
    )
    assert "--queries has no text for 2 of the 3 queries to label (q2, q3)" in some.stderr


def test_the_documented_serve_example_names_queries() -> None:
    readme = (REPO / "docs" / "web.md").read_text()
    # the command in the code block, not the prose that names serve's options
    example = readme[readme.index("\nragmeter serve --") :].split("```")[0]
    assert "--queries" in example and "--corpus" in example
    for path in re.findall(r"examples/\S+", example):
        assert (REPO / path).is_file(), path


# -- containment explained -----------------------------------------------------------------


def test_containment_is_explained_under_the_table() -> None:
    from ragmeter.data import example_path

    done = _invoke("answers", str(example_path("answers.json")))
    assert done.exit_code == 0, done.output
    text = " ".join(done.stdout.split())
    assert "containment: share of answers whose whole reference answer occurs word for word" in text
    assert "0 here: no reference of the 30 samples" in text
    without = " ".join(_invoke("answers", str(EXAMPLES / "answers.json")).stdout.split())
    assert "NA: no sample lists retrieved texts" in without


# -- the docs name files that exist and documents that are in the repository --------------


def test_the_documented_retrieve_examples_name_files_that_exist() -> None:
    readme = "".join(p.read_text() for p in [REPO / "README.md", *(REPO / "docs").glob("*.md")])
    for block in re.findall(r"```bash\n(.*?)```", readme, re.S):
        if "ragmeter retrieve" not in block or "$EX" in block:
            continue
        for path in re.findall(r"--(?:corpus|queries) (\S+)", block):
            if "$" not in path:  # a file a loop of the block makes (texts-$n.jsonl)
                assert (REPO / path).is_file(), path


def test_the_docs_cite_no_document_outside_the_repository() -> None:
    # (every relative link resolves on disk: tests/test_docs_pages.py)
    for page in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        text = page.read_text()
        assert not re.search(r"\bSPEC\b", text), page  # the project's specification is not shipped
        assert not re.search(r"\bseeds?[- ]?0\d\d\b", text, re.I), page  # nor its seed documents


def test_the_root_help_says_where_to_start_and_groups_the_commands() -> None:
    text = _invoke("--help", env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"}).output
    assert "New here? Run 'ragmeter demo'" in text
    panels = [line.split("─ ")[1].split(" ─")[0] for line in text.splitlines() if "╭─ " in line]
    assert panels == [
        "Options", "Start here", "Gates and history", "Labels", "Answers", "Production", "Tools"
    ]  # fmt: skip
    start = text.index("Start here")
    assert all(text.index(f"│ {c} ") > start for c in ("demo", "evaluate", "compare"))
    assert text.index("│ demo ") < text.index("Gates and history")


def test_long_helps_group_their_options_in_panels() -> None:
    text = _invoke("evaluate", "--help", env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"}).output
    for panel in ("Inputs", "Measures", "Labels and their provenance", "Output", "Scale"):
        assert f"─ {panel} ─" in text, panel
    # (each panel fits a screen, and compare's statistics have theirs: tests/test_help_panels.py)
    inputs = text.index("─ Inputs ─")
    assert inputs < text.index("--qrels") < text.index("─ Measures ─")
