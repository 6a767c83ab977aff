"""The help panels: where ``ragmeter --help`` lists each command, and under which heading a
command's help lists each option. One table each, so that every command groups the same
option under the same heading, and a new option of a known kind lands in its panel without a
word at its declaration (one that names its own ``rich_help_panel`` keeps it).

``ragmeter --help`` then says where to start, and ``ragmeter evaluate --help`` reads as
inputs, measures, labels, statistics, output, store and scale, not as one box of fifty
options."""

from __future__ import annotations

import re
from typing import Any

#: the panel of ``ragmeter --help`` each command is listed in, in the order shown
COMMAND_PANELS: dict[str, tuple[str, ...]] = {
    "Start here": ("demo", "evaluate", "compare", "report"),
    "Gates and history": ("check", "history", "correlate", "diagnose"),
    "Labels": ("judge", "agreement", "sample", "serve", "spans", "crux"),
    "Answers": ("answers",),
    "Production": ("monitor", "traces"),
    "Tools": ("trec-eval", "retrieve", "fuse", "chunk", "measures"),
}

INPUTS = "Inputs"
MEASURES = "Measures"
LABELS = "Labels and their provenance"
STATISTICS = "Statistics"
OUTPUT = "Output"
STORE = "Store"
SCALE = "Scale"
JUDGE = "Judge server"

#: the panel of each option (by its first long name) wherever it appears
OPTION_PANELS: dict[str, str] = {
    **dict.fromkeys(
        (
            "--qrels", "--queries", "--corpus", "--questions", "--answers", "--judgments",
            "--spans", "--chunks", "--gold-answers", "--nuggets", "--assignments",
            "--citation-support", "--utilities", "--pool", "--query-id-from", "--doc-id-from",
            "--stage", "--run", "--runs", "--subquestions", "--rag-answers", "--references",
            "--nugget-assignments", "--compare-qrels", "--compare-judgments",
            "--qrels-format", "--tokenizer", "--udcg-model",
        ),
        INPUTS,
    ),
    **dict.fromkeys(
        (
            "--measure", "--depth", "--rel-level", "--missing", "--default-k", "--k",
            "--context-k", "--tau", "--pool-depth", "--grade-map", "--sweep", "--curves",
            "--text-metric", "--coverage-denominator", "--cjk", "--rouge-stem", "--threshold",
            "--proc-threshold", "--pct-threshold", "--worst", "--per-sample",
        ),
        MEASURES,
    ),
    **dict.fromkeys(
        (
            "--human-qrels", "--human-judgments", "--human-assignments", "--calibration",
            "--save-calibration", "--labelled-queries", "--ppi", "--ppi-lambda", "--llm-qrels",
            "--judge-labels", "--min-kappa", "--min-tau", "--label", "--labels",
        ),
        LABELS,
    ),
    **dict.fromkeys(
        (
            "--test", "--alpha", "--correction", "--bootstrap", "--permutations", "--confidence",
            "--seed", "--all-pairs", "--tie-tolerance", "--baseline", "--fail-if",
            "--sequential", "--resamples", "--group", "--group-by",
        ),
        STATISTICS,
    ),
    **dict.fromkeys(
        (
            "--output", "--out", "--format", "--per-query", "--quiet", "--report", "--title",
            "--json", "--summary-json", "--name", "--tag",
        ),
        OUTPUT,
    ),
    **dict.fromkeys(("--store", "--save", "--window"), STORE),
    **dict.fromkeys(("--engine", "--workers"), SCALE),
    **dict.fromkeys(
        (
            "--base-url", "--model", "--api-key-env", "--concurrency", "--cache", "--timeout",
            "--max-retries", "--config", "--rpm", "--tpm", "--dry-run", "--refresh",
            "--retry-unparsed", "--price", "--temperature", "--max-tokens", "--samples",
            "--prompt", "--logprobs", "--top-logprobs", "--offline", "--read-timeout",
        ),
        JUDGE,
    ),
}  # fmt: skip


def place_options(command: Any) -> None:
    """Give each option of ``command`` (and of a group's subcommands) its panel from
    :data:`OPTION_PANELS`, unless the command has only a few options (a panel per option
    would only add boxes) or the option names its own."""
    for sub in getattr(command, "commands", {}).values():
        place_options(sub)
    options = [p for p in getattr(command, "params", ()) if p.param_type_name == "option"]
    if len(options) < 8:
        return
    for param in options:
        if getattr(param, "rich_help_panel", None):
            continue
        long = next((o for o in param.opts if o.startswith("--")), None)
        panel = OPTION_PANELS.get(long or "")
        if panel is not None:
            param.rich_help_panel = panel


def first_clause(text: str | None) -> str | None:
    """A command's one-line summary in the command list: its help up to the first colon or
    full stop (the whole help stays on ``ragmeter COMMAND --help``)."""
    if not text:
        return None
    words = " ".join(text.split("\n\n")[0].split())
    for cut in re.finditer(r"[.:](\s|$)", words):
        if not re.search(r"\b(e\.g|i\.e|vs)$", words[: cut.start()]):
            return words[: cut.start()]
    return words


def place_commands(app: Any) -> None:
    """Give each command of ``app`` its panel (:data:`COMMAND_PANELS`) and its one-line
    summary (the group lists the panels in that order:
    :meth:`ragmeter.commands.process.GuardedGroup.list_commands`)."""
    from typer.main import get_command_name
    from typer.models import DefaultPlaceholder

    def given(value: Any) -> Any:
        return None if isinstance(value, DefaultPlaceholder) else value

    def name_of(info: Any) -> str:
        return str(info.name or get_command_name(info.callback.__name__ if info.callback else ""))

    panel_of = {c: p for p, cs in COMMAND_PANELS.items() for c in cs}
    order = {c: i for i, c in enumerate(c for cs in COMMAND_PANELS.values() for c in cs)}
    for info in [*app.registered_commands, *app.registered_groups]:
        info.rich_help_panel = panel_of.get(name_of(info), "Tools")
        if given(info.short_help) is None:
            sub = getattr(info, "typer_instance", None)
            text = given(info.help) or (given(sub.info.help) if sub else None)
            info.short_help = first_clause(text or getattr(info.callback, "__doc__", None))
    app.registered_commands.sort(key=lambda c: order.get(name_of(c), len(order)))
    app.registered_groups.sort(key=lambda g: order.get(name_of(g), len(order)))
