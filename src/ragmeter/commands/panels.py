"""The help panels: where ``ragmeter --help`` lists each command, and under which heading a
command's help lists each option. One table each, so that every command groups the same
option under the same heading, and a new option of a known kind lands in its panel without a
word at its declaration (one that names its own ``rich_help_panel`` keeps it).

``ragmeter --help`` then says where to start, and ``ragmeter evaluate --help`` reads as
inputs, measures, labels, statistics, output, store and scale, not as one box of fifty
options. A kind with many options is split (Inputs: answers and nuggets, Inputs: spans…;
Judge server, Judge: prompt and sampling…) so that every panel fits a screen,
:data:`SCREEN_LINES` lines at 80 columns; an option whose name means another thing in one
command gets that command's panel (:data:`COMMAND_OPTION_PANELS`)."""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperCommand

#: the panel of ``ragmeter --help`` each command is listed in, in the order shown
COMMAND_PANELS: dict[str, tuple[str, ...]] = {
    "Start here": ("demo", "evaluate", "compare", "report"),
    "Gates and history": ("check", "history", "correlate", "diagnose"),
    "Labels": ("judge", "agreement", "sample", "serve", "spans", "crux"),
    "Answers": ("answers",),
    "Production": ("monitor", "traces"),
    "Tools": ("trec-eval", "retrieve", "fuse", "chunk", "measures"),
}

#: a screen: every panel of every command's help fits in this many lines at 80 columns
#: (tests/test_help_panels.py), so that a panel is read without scrolling
SCREEN_LINES = 24

INPUTS = "Inputs"
INPUTS_SUBQUESTIONS = "Inputs: sub-questions and utilities"
INPUTS_ANSWERS = "Inputs: answers and nuggets"
INPUTS_REVIEW = "Inputs: labels to review against"
INPUTS_SPANS = "Inputs: spans"
INPUTS_TRACES = "Inputs: traces"
MEASURES = "Measures"
CUTOFFS = "Measures: cutoffs and coverage"
TEXT_MEASURES = "Measures: answer text"
LABELS = "Labels and their provenance"
PPI = "Labels: human labels for PPI"
PPI_ESTIMATOR = "Labels: the PPI estimator"
COMPARISONS = "Comparisons"
GROUPS = "Comparisons: seeds and folds"
TESTS = "Statistics: tests"
STATISTICS = "Statistics"
OUTPUT = "Output"
STORE = "Store"
SCALE = "Scale"
JUDGE = "Judge server"
JUDGE_ASKING = "Judge: prompt and sampling"
JUDGE_CACHE = "Judge: cache, rate and cost"
JUDGE_OTHERS = "Judge: ensembles and local judges"
HOLES = "Holes in human qrels"
WEB = "Web server"
RETRIEVER = "Retriever"
RERANKER = "Reranker"
FUSION = "Fusion"
TUNING = "Fusion: tuning"
LEARNING = "Learning"
SAMPLING = "Sampling"
SAMPLING_HOW = "Sampling: stratified and active"
HELD_OUT = "Learning: held-out agreement"

#: the order of the panels in a command's help (typer prints the plain "Options" panel,
#: with --help, first)
PANEL_ORDER: tuple[str, ...] = (
    INPUTS, INPUTS_SUBQUESTIONS, INPUTS_ANSWERS, INPUTS_REVIEW, INPUTS_SPANS, INPUTS_TRACES,
    HOLES, MEASURES, CUTOFFS, TEXT_MEASURES, RETRIEVER, RERANKER, FUSION, TUNING, LEARNING,
    HELD_OUT, SAMPLING, SAMPLING_HOW, LABELS, PPI, PPI_ESTIMATOR, COMPARISONS, GROUPS, TESTS,
    STATISTICS, JUDGE, JUDGE_ASKING, JUDGE_OTHERS, JUDGE_CACHE, OUTPUT, STORE, SCALE, WEB,
)  # fmt: skip

#: the panel of each option (by its first long name) wherever it appears
OPTION_PANELS: dict[str, str] = {
    **dict.fromkeys(
        (
            "--qrels", "--queries", "--corpus", "--pool", "--run", "--runs", "--qrels-format",
            "--tokenizer", "--queue", "--pairs",
        ),
        INPUTS,
    ),
    **dict.fromkeys(("--query-id-from", "--doc-id-from", "--stage"), INPUTS_TRACES),
    **dict.fromkeys(
        ("--judgments", "--questions", "--subquestions", "--utilities", "--udcg-model"),
        INPUTS_SUBQUESTIONS,
    ),
    **dict.fromkeys(
        (
            "--answers", "--gold-answers", "--nuggets", "--assignments", "--citation-support",
            "--rag-answers", "--references",
        ),
        INPUTS_ANSWERS,
    ),
    **dict.fromkeys(
        ("--compare-qrels", "--compare-judgments", "--nugget-assignments", "--llm-qrels"),
        INPUTS_REVIEW,
    ),
    **dict.fromkeys(("--spans", "--chunks"), INPUTS_SPANS),
    **dict.fromkeys(
        (
            "--measure", "--depth", "--rel-level", "--missing", "--default-k", "--pool-depth",
            "--grade-map", "--threshold", "--proc-threshold", "--pct-threshold", "--worst",
            "--coverage-denominator", "--grade-map-a", "--grade-map-b", "--clip", "--metric",
            "--binarize", "--stopwords",
        ),
        MEASURES,
    ),
    **dict.fromkeys(("--k", "--context-k", "--tau", "--sweep", "--curves"), CUTOFFS),
    **dict.fromkeys(("--text-metric", "--cjk", "--rouge-stem", "--per-sample"), TEXT_MEASURES),
    **dict.fromkeys(
        (
            "--calibration", "--save-calibration", "--judge-labels", "--min-kappa",
            "--min-tau", "--label", "--labels", "--judge-id",
        ),
        LABELS,
    ),
    **dict.fromkeys(
        (
            "--ppi", "--human-qrels", "--human-judgments", "--human-assignments",
            "--labelled-queries",
        ),
        PPI,
    ),
    **dict.fromkeys(("--ppi-lambda", "--ppi-estimator"), PPI_ESTIMATOR),
    **dict.fromkeys(
        ("--baseline", "--all-pairs", "--tie-tolerance", "--fail-if", "--at"), COMPARISONS
    ),
    **dict.fromkeys(("--group", "--group-by"), GROUPS),
    **dict.fromkeys(("--test", "--correction", "--permutations", "--alpha"), TESTS),
    **dict.fromkeys(
        ("--bootstrap", "--confidence", "--seed", "--sequential", "--resamples"), STATISTICS
    ),
    **dict.fromkeys(
        (
            "--output", "--out", "--format", "--per-query", "--quiet", "--report", "--title",
            "--json", "--summary-json", "--name", "--tag", "--export", "--export-dir",
        ),
        OUTPUT,
    ),
    **dict.fromkeys(("--store", "--save", "--window"), STORE),
    **dict.fromkeys(("--engine", "--workers"), SCALE),
    **dict.fromkeys(
        (
            "--base-url", "--model", "--api-key-env", "--config", "--timeout", "--max-retries",
            "--max-reply-bytes",
        ),
        JUDGE,
    ),
    **dict.fromkeys(
        (
            "--prompt", "--samples", "--temperature", "--max-tokens", "--logprobs",
            "--top-logprobs", "--n", "--max-passages", "--pad-words",
        ),
        JUDGE_ASKING,
    ),
    **dict.fromkeys(("--judge", "--judges", "--learned", "--offline"), JUDGE_OTHERS),
    **dict.fromkeys(
        (
            "--cache", "--refresh", "--retry-unparsed", "--dry-run", "--concurrency", "--rpm",
            "--tpm", "--price",
        ),
        JUDGE_CACHE,
    ),
    **dict.fromkeys(
        (
            "--host", "--port", "--token", "--max-body", "--read-timeout", "--ssl-certfile",
            "--ssl-keyfile",
        ),
        WEB,
    ),
}  # fmt: skip

#: where one command's option belongs elsewhere than :data:`OPTION_PANELS` says (the same
#: name means another thing there), and the panels of options only one command has
COMMAND_OPTION_PANELS: dict[str, dict[str, str]] = {
    # evaluate's --alpha is the error level of the PPI intervals only
    "evaluate": {"--alpha": PPI_ESTIMATOR},
    # the store of a sequential gate's looks goes with --sequential
    "check": {"--history": STATISTICS},
    "judge relevance": {
        **dict.fromkeys(("--holes", "--overlap", "--qrels", "--grade-map", "--seed"), HOLES),
        "--depth": INPUTS,
    },
    "judge learn": {
        **dict.fromkeys(("--per-topic", "--min-labels", "--adapter-alpha", "--alpha"), LEARNING),
        **dict.fromkeys(("--folds", "--held-out", "--resamples", "--seed"), HELD_OUT),
    },
    "monitor run": dict.fromkeys(("--sample", "--seed"), INPUTS_TRACES),
    "retrieve": {
        **dict.fromkeys(("--method", "--k1", "--b", "--stopwords", "--rrf-k"), RETRIEVER),
        **dict.fromkeys(("--rerank", "--candidates", "--mmr-lambda", "--cross-encoder"), RERANKER),
    },
    "fuse": {
        **dict.fromkeys(("--method", "--norm", "--weights", "--rrf-k"), FUSION),
        **dict.fromkeys(
            (
                "--tune", "--split", "--train-queries", "--test-queries", "--step", "--rrf-ks",
                "--show-grid", "--seed",
            ),
            TUNING,
        ),
    },
    "sample": {
        **dict.fromkeys(("--n", "--strategy", "--depth", "--seed", "--per-topic"), SAMPLING),
        **dict.fromkeys(
            ("--measure", "--strata", "--mix", "--threshold", "--judge-labels"), SAMPLING_HOW
        ),
    },
}  # fmt: skip


def place_options(command: Any, path: str = "") -> None:
    """Give each option of ``command`` (its ``path``: "evaluate", "judge relevance"; and of a
    group's subcommands) its panel: from :data:`COMMAND_OPTION_PANELS`, else from
    :data:`OPTION_PANELS`, unless the command has only a few options (a panel per option
    would only add boxes) or the option names its own. The help then lists the panels in the
    order of :data:`PANEL_ORDER` (:class:`PanelledCommand`)."""
    path = path or str(getattr(command, "name", "") or "")
    for name, sub in getattr(command, "commands", {}).items():
        place_options(sub, f"{path} {name}")
    options = [p for p in getattr(command, "params", ()) if p.param_type_name == "option"]
    if len(options) < 8:
        return
    own = COMMAND_OPTION_PANELS.get(path, {})
    for param in options:
        if getattr(param, "rich_help_panel", None):
            continue
        long = next((o for o in param.opts if o.startswith("--")), "")
        panel = own.get(long) or OPTION_PANELS.get(long)
        if panel is not None:
            param.rich_help_panel = panel


def panel_rank(param: Any) -> int:
    """Where ``param``'s panel comes in a command's help: :data:`PANEL_ORDER`; arguments and
    the plain options first (typer prints those panels first anyway)."""
    panel = getattr(param, "rich_help_panel", None)
    if param.param_type_name == "argument" or not panel:
        return -1
    order = {p: i for i, p in enumerate(PANEL_ORDER)}
    return order.get(panel, len(order))


class PanelledCommand(TyperCommand):
    """A command whose help lists its panels in the order of :data:`PANEL_ORDER`, whatever
    the order of its options' declarations (which stays as it is: it is the order in which
    click processes them, and names the first of several missing options)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        declared = self.params
        self.params = sorted(declared, key=panel_rank)
        try:
            super().format_help(ctx, formatter)
        finally:
            self.params = declared


def use_panelled_commands(app: Any) -> None:
    """Make every command of ``app`` and of its groups a :class:`PanelledCommand`, unless it
    names a class of its own (typer gives each command its plain class when declared)."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = PanelledCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            use_panelled_commands(group.typer_instance)


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


def command_rank(name: str) -> int:
    """Where command ``name`` comes in ``ragmeter --help``: its place in
    :data:`COMMAND_PANELS`, panel by panel; a command of none comes last (in Tools)."""
    order = [c for cs in COMMAND_PANELS.values() for c in cs]
    return order.index(name) if name in order else len(order)


def _given(value: Any) -> Any:
    """``value``, or ``None`` where typer left its default placeholder."""
    from typer.models import DefaultPlaceholder

    return None if isinstance(value, DefaultPlaceholder) else value


def registered_name(info: Any) -> str:
    """The name a registered command or group (``typer``'s ``CommandInfo`` or
    ``TyperInfo``) is run by: its own, its sub-app's (a group added without a name keeps a
    placeholder in ``info.name``), or its callback's."""
    from typer.main import get_command_name

    sub = getattr(info, "typer_instance", None)
    name = _given(info.name) or (_given(sub.info.name) if sub else None)
    return str(name or get_command_name(info.callback.__name__ if info.callback else ""))


def place_commands(app: Any) -> None:
    """Give each command of ``app`` its panel (:data:`COMMAND_PANELS`) and its one-line
    summary (the group lists the panels in that order:
    :meth:`ragmeter.commands.process.GuardedGroup.list_commands`)."""
    name_of = registered_name
    panel_of = {c: p for p, cs in COMMAND_PANELS.items() for c in cs}
    order = {c: i for i, c in enumerate(c for cs in COMMAND_PANELS.values() for c in cs)}
    for info in [*app.registered_commands, *app.registered_groups]:
        info.rich_help_panel = panel_of.get(name_of(info), "Tools")
        if _given(info.short_help) is None:
            sub = getattr(info, "typer_instance", None)
            text = _given(info.help) or (_given(sub.info.help) if sub else None)
            info.short_help = first_clause(text or getattr(info.callback, "__doc__", None))
    app.registered_commands.sort(key=lambda c: order.get(name_of(c), len(order)))
    use_panelled_commands(app)
    app.registered_groups.sort(key=lambda g: order.get(name_of(g), len(order)))
