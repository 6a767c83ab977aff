"""Options shared by the ragmeter commands, defined once so that they read the same everywhere.

Each alias is an ``Annotated`` type that typer reads as the option's declaration; a command
writes ``rel_level: RelLevel = 1``.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, is_dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.workflows.compare import CompareSettings
    from ragmeter.workflows.evaluate import EvaluationSettings
    from ragmeter.workflows.inputs import InputFiles


class MissingPolicy(StrEnum):
    """What to do with a judged query that a run does not rank."""

    zero = "zero"
    skip = "skip"


class FormatChoice(StrEnum):
    """What a command prints (``--format``): a table, or the same figures as JSON."""

    table = "table"
    json = "json"


class TestChoice(StrEnum):
    """The paired significance test."""

    randomization = "randomization"
    t = "t"
    wilcoxon = "wilcoxon"


class CorrectionChoice(StrEnum):
    """The correction for multiple comparisons."""

    holm = "holm"
    bonferroni = "bonferroni"
    bh = "bh"
    none = "none"


class CompareCorrectionChoice(StrEnum):
    """The correction for multiple comparisons of ``compare`` (tukey: all pairs only)."""

    holm = "holm"
    bonferroni = "bonferroni"
    bh = "bh"
    none = "none"
    tukey = "tukey"


TableOrJson = Annotated[FormatChoice, typer.Option("--format", "-f")]
PairedTest = Annotated[TestChoice, typer.Option("--test", help="Paired test.")]
Correction = Annotated[
    CorrectionChoice,
    typer.Option(
        "--correction",
        help="Correction over all the report's comparisons: holm, bonferroni (family-wise "
        "error), bh (Benjamini–Hochberg: false discovery rate) or none.",
    ),
]
CompareCorrection = Annotated[
    CompareCorrectionChoice,
    typer.Option(
        "--correction",
        help="Correction over all comparisons: holm, bonferroni (family-wise error), bh "
        "(Benjamini–Hochberg: false discovery rate), none; with --all-pairs, tukey (Tukey's "
        "HSD for repeated measures, instead of the paired test).",
    ),
]
Permutations = Annotated[
    int,
    typer.Option("--permutations", min=1, help="Random sign flips of the randomization test."),
]
Bootstrap = Annotated[
    int, typer.Option("--bootstrap", min=1, help="Bootstrap resamples of the CIs.")
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the random draws.")]
Alpha = Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")]
Confidence = Annotated[float, typer.Option("--confidence", min=0.0, max=1.0, help="CI level.")]
Baseline = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        "-b",
        help="The baseline run (path, file name or run name); default: the first.",
    ),
]
HtmlOutput = Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")]

Measures = Annotated[
    list[str] | None,
    typer.Option("--measure", "-m", help="Measure, e.g. ndcg@10, P_10, map (repeatable)."),
]
Missing = Annotated[
    MissingPolicy,
    typer.Option(help="Judged queries absent from a run: score as empty, or skip."),
]
RelLevel = Annotated[int, typer.Option("--rel-level", help="Relevant ⇔ grade ≥ N.")]
Depth = Annotated[
    int | None, typer.Option("--depth", help="Evaluate only the top N of each ranking.")
]
DefaultK = Annotated[int, typer.Option("--default-k", help="Cutoff for measures given without @k.")]
Pool = Annotated[
    Path | None,
    typer.Option(
        "--pool",
        help="The retriever's candidate run, for pool-based measures (proc@K, pct_proc@K); "
        "by default each run is its own pool.",
    ),
]
PoolDepth = Annotated[
    int | None, typer.Option("--pool-depth", help="Use only the top N of the pool.")
]
GradeMap = Annotated[
    str | None,
    typer.Option(
        "--grade-map",
        help="Map grades onto the 1..5 utility scale of the set-based measures, "
        "e.g. 0:1,1:3,2:4,3:5 for TREC 0..3.",
    ),
]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write here.")]
EngineChoice = Annotated[
    str,
    typer.Option(
        "--engine",
        help="Where runs are evaluated: local (this process), ray (Ray tasks on a cluster "
        "started here, or $RAY_ADDRESS), ray=auto (this machine's cluster), ray=HOST:PORT "
        "or ray=ray://HOST:10001. Same numbers either way.",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="Processes evaluating a large TREC run file's blocks or a folder's partitions "
        "(default: 2 for inputs of 64 MiB or more, else 1, or $RAGMETER_WORKERS); with "
        "--engine ray: the local cluster's CPUs (default: all) and most tasks in flight.",
    ),
]
StoreUrl = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Evaluation store: sqlite:///file.db, postgresql://user@host/db or a file path "
        "(default: $RAGMETER_STORE, else store.db in ragmeter's data folder, "
        "~/.local/share/ragmeter on Linux).",
    ),
]
Save = Annotated[
    bool,
    typer.Option("--save", help="Save the evaluation in the store (see ragmeter history)."),
]
SaveName = Annotated[
    str | None,
    typer.Option("--name", help="Label of the saved evaluation, e.g. 'hybrid wk47' (saves)."),
]


Worst = Annotated[
    int, typer.Option("--worst", min=0, help="Worst queries listed per run (0: none).")
]
PerQuery = Annotated[bool, typer.Option("--per-query", help="Include per-query values.")]
Tau = Annotated[int, typer.Option("--tau", help="Answerable ⇔ rating ≥ tau (coverage measures).")]
QueryTexts = Annotated[Path | None, typer.Option("--queries", help="Query texts JSONL {id, text}.")]
PassageTexts = Annotated[
    Path | None, typer.Option("--corpus", help="Passage texts JSONL {id, text}.")
]
Questions = Annotated[
    Path | None, typer.Option("--questions", help="Sub-questions JSONL {query_id, questions}.")
]

# -- the inputs of ``ragmeter evaluate`` ----------------------------------------------------

RunFiles = Annotated[
    list[Path],
    typer.Argument(
        help="Run files: TREC, samples JSON/JSONL/YAML, CSV, TSV, Parquet; or traces "
        "(OTLP JSON, Phoenix span exports)."
    ),
]


QueryIdFrom = Annotated[
    str | None,
    typer.Option(
        "--query-id-from",
        help="A ranking's query id: hash (of the normalised query text), text, or a span "
        "attribute (session.id, metadata.query_id). Default: $RAGMETER_QUERY_ID_FROM, else "
        "hash.",
    ),
]
DocIdFrom = Annotated[
    str | None,
    typer.Option(
        "--doc-id-from",
        help="A document's id: document.id, metadata.KEY (e.g. metadata.id) or content (a "
        "hash of its text). Default: document.id, else the metadata's id, doc_id or "
        "document_id (the notes say which).",
    ),
]
TraceStage = Annotated[
    str | None,
    typer.Option(
        "--stage",
        help="Which ranking of each trace: retriever, reranker, step:N (the N-th retriever "
        "step) or gathered (the steps' union). Default: every stage, each a run of its own.",
    ),
]
QrelsFile = Annotated[
    Path | None,
    typer.Option(
        "--qrels",
        help="Relevance judgments. Without it, each run must be a samples file whose "
        "expected_output gives its judgments.",
    ),
]
QrelsFormat = Annotated[
    str | None,
    typer.Option(
        "--qrels-format",
        help="The --qrels file's format when its extension says otherwise: trec for a TREC "
        "qrels file named .tsv (any name of ragmeter formats).",
    ),
]
JudgmentsFile = Annotated[
    Path | None,
    typer.Option(
        "--judgments",
        help="Sub-question judgments for coverage, alpha_ndcg@K, density (JSONL, long TSV "
        "or diversity qrels). Without --qrels, the judged queries are evaluated.",
    ),
]
CorpusFile = Annotated[
    Path | None,
    typer.Option(
        "--corpus",
        help="Passage texts JSONL {id, text} (for density); for token budgets "
        "(ra_nwg@512t) also {id, length} rows, TSV/CSV/Parquet with id + text/length.",
    ),
]
GoldAnswersFile = Annotated[
    Path | None,
    typer.Option(
        "--gold-answers",
        help="Gold answers JSONL {query_id, answers: [...]} for answer_recall@K and "
        "answer_precision@K (passage texts from --corpus). Without --qrels, its queries "
        "are evaluated.",
    ),
]
AnswerFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--answers",
        help="Rated answers JSONL {query_id, ratings, text} for answer_coverage and "
        "answer_density: one file, or one per run (repeatable).",
    ),
]
ContextOrSweep = Annotated[
    str,
    typer.Option(
        "--k",
        help="With --judgments, N: coverage, density and alpha_ndcg given without @K are "
        "read at the top N (coverage@N); 'oracle': their defaults (|P*| per query; 20 for "
        "alpha_ndcg). Otherwise, or as a range/list (1:50, 1,5,10, 1:50:5): a sweep of the "
        "-m measures given without @K, one pass for every K (m@K).",
    ),
]
Tokenizer = Annotated[
    str | None,
    typer.Option(
        "--tokenizer",
        help="Token counter of --corpus texts for token budgets (ra_nwg@512t): "
        "whitespace (default), tiktoken:<encoding>, hf:<tokenizer path>.",
    ),
]
UtilitiesFile = Annotated[
    Path | None,
    typer.Option(
        "--utilities",
        help="Per-passage utilities for udcg@K: 'qid docid utility' lines, JSON/JSONL "
        "rows, or the UDCG reference data (with --udcg-model).",
    ),
]
UdcgModel = Annotated[
    str | None,
    typer.Option("--udcg-model", help="Model whose no_res_prob the reference data give."),
]
SpansFile = Annotated[
    Path | None,
    typer.Option(
        "--spans",
        help="Evidence spans (query_id, doc_id, start, end: character offsets, end "
        "exclusive; JSONL/CSV/Parquet, or chunking_evaluation's questions_df.csv) for the "
        "span measures (span_recall@K, …); checked against --corpus when given.",
    ),
]
ChunkFiles = Annotated[
    list[str] | None,
    typer.Option(
        "--chunks",
        help="Chunk table (chunk_id, doc_id, start, end) of the runs' chunking, for --spans: "
        "one per chunking (a run is scored on the table holding its chunk ids), or RUN=FILE "
        "to name a run's table.",
    ),
]
NuggetsFile = Annotated[
    Path | None,
    typer.Option(
        "--nuggets",
        help="Nuggets per query (JSONL, as nuggetizer writes them or one per line), for the "
        "nugget measures (nugget_vital, nugget_strict_vital, …).",
    ),
]
AssignmentFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--assignments",
        help="Nugget assignments (JSONL) to the runs' answers (matched by run name) or to "
        "retrieved passages (lines with a docid, for nugget_coverage@K); repeatable.",
    ),
]
CitationSupportFile = Annotated[
    Path | None,
    typer.Option(
        "--citation-support",
        help="Support of each answer sentence by its citations (JSONL), for "
        "citation_precision and citation_recall.",
    ),
]
CurvesFile = Annotated[
    Path | None,
    typer.Option("--curves", help="With a --k sweep: write the curves here (.json or .csv)."),
]


@dataclass(frozen=True)
class EvaluationOptions:
    """How runs are scored: the options ``evaluate`` and ``compare`` declare together (see
    :func:`option_groups`); ``check`` and ``report`` build one from the few they take."""

    missing: Missing = MissingPolicy.zero
    rel_level: RelLevel = 1
    depth: Depth = None
    default_k: DefaultK = 5
    pool: Pool = None
    pool_depth: PoolDepth = None
    grade_map: GradeMap = None


@dataclass(frozen=True)
class EngineOptions:
    """Where and by how many processes runs are evaluated: ``evaluate`` and ``compare``."""

    engine: EngineChoice = "local"
    workers: Workers = None


def evaluation_settings(
    options: EvaluationOptions, engine: EngineOptions | None = None
) -> EvaluationSettings:
    """The evaluation settings that ``evaluate``, ``compare``, ``check`` and ``report`` take
    from the same command-line options."""
    from ragmeter.workflows.evaluate import EvaluationSettings

    engine = engine or EngineOptions()
    if engine != EngineOptions():  # the default (this process) needs no check, nor its module
        from ragmeter.evaluation.partitioned import Engine

        try:
            Engine.parse(engine.engine, workers=engine.workers)  # refused before any file is read
        except RagmeterError as exc:
            fail(exc)
    values = {**asdict(options), "missing": options.missing.value}
    return EvaluationSettings(**values, **asdict(engine))


def input_files(
    *,
    judgments: Path | None = None,
    questions: Path | None = None,
    corpus: Path | None = None,
    answers: list[Path] | None = None,
    context_k: str = "oracle",
    tau: int = 3,
    tokenizer: str | None = None,
    utilities: Path | None = None,
    udcg_model: str | None = None,
    gold_answers: Path | None = None,
    nuggets: Path | None = None,
    assignments: list[Path] | None = None,
    citation_support: Path | None = None,
    spans: Path | None = None,
    chunks: list[str] | None = None,
) -> InputFiles:
    """The side inputs of ``evaluate``, ``compare`` and ``report``, one value from their
    options; what :meth:`~ragmeter.workflows.inputs.InputFiles.problems` finds is an error
    (``--chunks`` without ``--spans`` a usage error)."""
    from ragmeter.workflows.inputs import InputFiles

    files = InputFiles(
        judgments, questions, corpus, tuple(answers or ()), context_k, tau, tokenizer,
        utilities, udcg_model, gold_answers, nuggets, tuple(assignments or ()),
        citation_support, spans, tuple(chunks or ()),
    )  # fmt: skip
    for option, message in files.problems()[:1]:
        if option == "--chunks":
            raise typer.BadParameter(message, param_hint=option)
        fail(RagmeterError(message))
    return files


@dataclass(frozen=True)
class PairedTests:
    """The paired test and its resampling: options that ``report`` and ``history compare``
    declare together (see :func:`option_groups`)."""

    test: PairedTest = TestChoice.randomization
    correction: Correction = CorrectionChoice.holm
    permutations: Permutations = 10_000
    bootstrap: Bootstrap = 10_000
    seed: Seed = 0


@dataclass(frozen=True)
class ComparePairedTests(PairedTests):
    """``compare``'s paired tests: its correction may also be tukey (all pairs only)."""

    # the field stays in its place (dataclasses keep a base field's order); only its type grows
    correction: CompareCorrection = CompareCorrectionChoice.holm  # type: ignore[assignment]


def compare_settings(
    tests: PairedTests,
    *,
    alpha: float = 0.05,
    confidence: float = 0.95,
    tie_tolerance: float = 0.0,
) -> CompareSettings:
    """The paired-test settings of ``compare``, ``history compare`` and ``report``."""
    from ragmeter.workflows.compare import CompareSettings

    return CompareSettings(
        test=tests.test.value,  # type: ignore[arg-type]
        correction=tests.correction.value,  # type: ignore[arg-type]
        alpha=alpha,
        confidence=confidence,
        permutations=tests.permutations,
        bootstrap=tests.bootstrap,
        seed=tests.seed,
        tie_tolerance=tie_tolerance,
    )


def option_groups(func: Callable[..., None]) -> Callable[..., None]:
    """Let a command take a group of options as one dataclass parameter: typer is shown the
    group's fields in the parameter's place (so the options keep their order), and the
    command gets them back as one value of the group's class."""
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type[Any], list[str]]] = {}
    for param in inspect.signature(func, eval_str=True).parameters.values():
        group = param.annotation
        if not (isinstance(group, type) and is_dataclass(group)):
            params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        hints = typing.get_type_hints(group, include_extras=True)
        members = [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name]
            )
            for f in fields(group)
        ]
        groups[param.name] = (group, [m.name for m in members])
        params.extend(members)

    @functools.wraps(func)
    def command(**values: Any) -> None:
        for name, (group, members) in groups.items():
            values[name] = group(**{m: values.pop(m) for m in members})
        func(**values)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command


def fail(exc: Exception) -> NoReturn:
    """Report an input or usage error on stderr and exit with status 2."""
    typer.echo(f"ragmeter: error: {exc}", err=True)
    raise typer.Exit(code=2)


def _version(value: bool) -> None:
    if value:
        from ragmeter import __version__
        from ragmeter._accel import describe

        typer.echo(f"ragmeter {__version__}\n{describe()}")
        raise typer.Exit()


VersionFlag = Annotated[
    bool,
    typer.Option(
        "--version",
        is_eager=True,
        callback=_version,
        help="Print the version and whether the C accelerator is in use, and exit.",
    ),
]
