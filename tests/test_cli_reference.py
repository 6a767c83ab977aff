"""docs/cli.md, the command-line reference, is generated from the command line by
scripts/make_cli_reference.py; the committed page must be what the script writes now."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import make_cli_reference  # noqa: E402


def test_the_committed_cli_reference_is_up_to_date() -> None:
    committed = make_cli_reference.PAGE.read_text(encoding="utf-8")
    current = make_cli_reference.render()
    diff = "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            current.splitlines(keepends=True),
            "docs/cli.md (committed)",
            "docs/cli.md (from the command line)",
            n=1,
        )
    )
    assert committed == current, (
        "docs/cli.md is out of date: run python scripts/make_cli_reference.py and commit it\n"
        + diff[:4000]
    )


def test_the_reference_has_every_command_and_no_hidden_option() -> None:
    page = make_cli_reference.render()
    commands = ["evaluate", "compare", "trec-eval", "check", "judge relevance", "serve"]
    for command in [*commands, "judge nuggets assign", "history compare", "crux summary"]:
        assert f"`ragmeter {command}`" in page, command
    # correlate's --json is an older spelling of -f json, hidden from --help
    correlate = page.split("`ragmeter correlate`", 1)[1].split("\n### ", 1)[0]
    assert "`--format`" in correlate and "`--json`" not in correlate
    # a table row is one line, and a | inside a cell does not split it
    assert "`<table\\|json\\|csv\\|trec>`" in page
