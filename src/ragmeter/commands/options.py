"""Options shared by the ragmeter commands, defined once so that they read the same everywhere.

Each alias is an ``Annotated`` type that typer reads as the option's declaration; a command
writes ``rel_level: RelLevel = 1``.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.workflows.compare import CompareSettings
    from ragmeter.workflows.evaluate import CoverageInputs, EvaluationSettings, NuggetInputs
    from ragmeter.workflows.spans import SpanFiles


class MissingPolicy(StrEnum):
    """What to do with a judged query that a run does not rank."""

    zero = "zero"
    skip = "skip"


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


PairedTest = Annotated[TestChoice, typer.Option("--test", help="Paired test.")]
Correction = Annotated[
    CorrectionChoice,
    typer.Option(
        "--correction",
        help="Correction across all comparisons of the report: holm, bonferroni (family-wise "
        "error), bh (Benjamini–Hochberg, false discovery rate) or none.",
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
        "started on this machine, or $RAY_ADDRESS), ray=auto (this machine's cluster), "
        "ray=HOST:PORT or ray=ray://HOST:10001. Same numbers either way.",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="Processes that evaluate a large TREC run file's blocks or a folder's partitions "
        "on this machine (default: 2 for inputs of 64 MiB or more, else 1, or "
        "$RAGMETER_WORKERS); with --engine ray: CPUs of the cluster started here (default: "
        "all), and the most tasks in flight.",
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


PerQuery = Annotated[bool, typer.Option("--per-query", help="Include per-query values.")]
Tau = Annotated[int, typer.Option("--tau", help="Answerable ⇔ rating ≥ tau (coverage measures).")]
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
        help="Traces: where a ranking's query id comes from: hash (of the normalised query "
        "text), text, or a span attribute (session.id, metadata.query_id). Default: "
        "$RAGMETER_QUERY_ID_FROM, else hash.",
    ),
]
DocIdFrom = Annotated[
    str | None,
    typer.Option(
        "--doc-id-from",
        help="Traces: where a document's id comes from: document.id, metadata.KEY (a key of "
        "the document's metadata, e.g. metadata.id) or content (a hash of its text). Default: "
        "document.id, else the metadata's id, doc_id or document_id (the notes say which).",
    ),
]
TraceStage = Annotated[
    str | None,
    typer.Option(
        "--stage",
        help="Traces: which ranking of each trace: retriever, reranker, step:N (the N-th "
        "retriever step) or gathered (the union of the steps). Default: every stage the file "
        "holds, each a run of its own.",
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
        help="With --judgments, N: the coverage measures given without @K (coverage, "
        "density, alpha_ndcg) are read at the top N and named so (coverage@N); 'oracle': "
        "their defaults (|P*| per query; 20 for alpha_ndcg). Without --judgments, or as a "
        "range/list (1:50, 1,5,10, 1:50:5): a cutoff sweep of the -m measures (given "
        "without @K), every K in one pass; a swept m at K is m@K.",
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
        help="Chunk table (chunk_id, doc_id, start, end) of the runs' chunking, for --spans; "
        "repeat it once per chunking (each run is scored on the table holding its chunk ids), "
        "or RUN=FILE to name a run's table.",
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


def evaluation_settings(
    *,
    missing: MissingPolicy,
    rel_level: int,
    depth: int | None = None,
    default_k: int = 5,
    pool: Path | None,
    pool_depth: int | None,
    grade_map: str | None,
    engine: str = "local",
    workers: int | None = None,
) -> EvaluationSettings:
    """The evaluation settings that ``evaluate``, ``compare`` and ``report`` take from the same
    command-line options."""
    from ragmeter.evaluation.partitioned import Engine
    from ragmeter.workflows.evaluate import EvaluationSettings

    try:
        Engine.parse(engine, workers=workers)  # refused before any file is read
    except RagmeterError as exc:
        fail(exc)
    return EvaluationSettings(
        missing=missing.value,
        rel_level=rel_level,
        depth=depth,
        default_k=default_k,
        pool=pool,
        pool_depth=pool_depth,
        grade_map=grade_map,
        engine=engine,
        workers=workers,
    )


def nugget_inputs(
    nuggets: Path | None, assignments: list[Path] | None, citation_support: Path | None
) -> NuggetInputs | None:
    """The nugget and citation inputs that ``evaluate``, ``compare`` and ``report`` take from
    the same options, or ``None`` without any."""
    from ragmeter.workflows.evaluate import NuggetInputs

    if not (nuggets or assignments or citation_support):
        return None
    return NuggetInputs(nuggets, tuple(assignments or ()), citation_support)


def span_files(
    spans: Path | None, chunks: list[str] | None, corpus: Path | None
) -> SpanFiles | None:
    """The span inputs of ``--spans`` / ``--chunks`` (``None`` without ``--spans``);
    ``--chunks`` alone is a usage error."""
    if spans is None:
        if chunks:
            raise typer.BadParameter("--chunks is read with --spans", param_hint="--chunks")
        return None
    from ragmeter.workflows.spans import SpanFiles

    return SpanFiles(spans, tuple(chunks or ()), corpus)


def coverage_inputs(
    judgments: Path | None,
    questions: Path | None,
    corpus: Path | None,
    answers: list[Path] | None,
    context_k: str,
    tau: int,
) -> CoverageInputs | None:
    """The coverage inputs of ``--judgments`` and what goes with it (``None`` without it);
    ``--questions`` or ``--answers`` without ``--judgments`` is a usage error."""
    from ragmeter.workflows.evaluate import CoverageInputs

    for given, flag in ((questions, "--questions"), (answers, "--answers")):
        if given and judgments is None:  # both only serve the coverage measures
            fail(RagmeterError(f"{flag} is used with --judgments; give the judgments too"))
    if judgments is None:
        return None
    return CoverageInputs(judgments, questions, corpus, answers or (), context_k, tau)


def compare_settings(
    *,
    test: TestChoice,
    correction: CorrectionChoice | CompareCorrectionChoice,
    permutations: int,
    bootstrap: int,
    seed: int,
    alpha: float = 0.05,
    confidence: float = 0.95,
    tie_tolerance: float = 0.0,
) -> CompareSettings:
    """The paired-test settings of ``compare``, ``history compare`` and ``report``."""
    from ragmeter.workflows.compare import CompareSettings

    return CompareSettings(
        test=test.value,  # type: ignore[arg-type]
        correction=correction.value,  # type: ignore[arg-type]
        alpha=alpha,
        confidence=confidence,
        permutations=permutations,
        bootstrap=bootstrap,
        seed=seed,
        tie_tolerance=tie_tolerance,
    )


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
