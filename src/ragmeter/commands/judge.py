"""``ragmeter judge TASK``: labels from an LLM judge on any OpenAI-compatible server (or a
plugged-in offline judge), cached in SQLite and resumable.

Every subcommand reads its inputs (errors name file, line and field), plans (cache look-up;
``--dry-run`` stops here and prints calls, cache hits, estimated tokens and cost), judges the
rest with a progress bar, and writes the output atomically from the cache, in input order.
Exit status: 0 done, every item labelled; 1 the output is incomplete — some items have no
label (the output leaves them out or rates them −1; the summary counts them by reason, cache
hits included: failed ones are asked again by a rerun, unparsed ones with --retry-unparsed) —
or the server refused the run (401/403/404); 2 bad input or options; 130 interrupted
(everything judged so far is cached: rerun to continue).

The options every subcommand shares are declared once, as the fields of :class:`Settings`;
:func:`judge_command` adds them to each subcommand's own parameters.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.commands.options import PassageTexts, Seed, fail
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.judges.cache import JudgmentCache

BaseUrl = Annotated[
    list[str] | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1 (repeatable: requests "
        "spread over the servers). Default: $RAGMETER_BASE_URL, then ragmeter.toml.",
    ),
]
Model = Annotated[
    str | None, typer.Option("--model", help="Model name. Default: $RAGMETER_MODEL, config.")
]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Environment variable holding the API key (default OPENAI_API_KEY; none set = "
        "no Authorization header).",
    ),
]
Concurrency = Annotated[
    int | None, typer.Option("--concurrency", "-j", help="Requests in flight (default 16).")
]
Rpm = Annotated[float | None, typer.Option("--rpm", help="Client-side limit: requests/minute.")]
Tpm = Annotated[float | None, typer.Option("--tpm", help="Client-side limit: tokens/minute.")]
CachePath = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="SQLite judgment cache (default: config 'cache', else judgments.sqlite in "
        "ragmeter's data folder; printed at start).",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run", help="Print calls, cache hits, estimated tokens and cost; send nothing."
    ),
]
Refresh = Annotated[
    bool, typer.Option("--refresh", help="Ignore cached judgments (ask again, overwrite).")
]
RetryUnparsed = Annotated[
    bool,
    typer.Option(
        "--retry-unparsed",
        help="Ask again the cached judgments whose reply could not be read (stored as -1), "
        "and replace them.",
    ),
]
Timeout = Annotated[
    float | None, typer.Option("--timeout", help="Seconds per request (default 60).")
]
MaxRetries = Annotated[
    int | None, typer.Option("--max-retries", help="Retries per request (default 6).")
]
MaxReplyBytes = Annotated[
    int | None,
    typer.Option(
        "--max-reply-bytes",
        help="Largest reply read, in bytes after decompression (default 4194304 = 4 MiB; "
        "config 'max_reply_bytes'); a larger one fails its request, read no further.",
    ),
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price",
        help="USD per 1M input,output tokens, e.g. 0.15,0.60 (default: config price table; "
        "else cost is reported as unknown).",
    ),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option("--config", help="TOML file with a 'judge' table (default ./ragmeter.toml)."),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
Offline = Annotated[
    bool,
    typer.Option(
        "--offline",
        help="Judge offline instead: MiniLM cosine cut into grades at fixed thresholds, a "
        "weak proxy for an LLM judge (similarity is not usefulness); 'models' extra.",
    ),
]
Learned = Annotated[
    Path | None,
    typer.Option(
        "--learned",
        help="Judge by a learned model instead: a directory of 'ragmeter judge learn' "
        "(grades on its training labels' scale, which its provenance names); 'models' extra.",
    ),
]
Depth = Annotated[int, typer.Option("--depth", help="Judge the top N of each run.")]
Runs = Annotated[
    list[Path],
    typer.Option("--run", help="Run file (TREC, JSONL, …); repeatable: pairs are pooled."),
]
Queries = Annotated[
    Path, typer.Option("--queries", help="Queries JSONL {id, text}, or irds:DATASET_ID.")
]
Corpus = Annotated[
    Path, typer.Option("--corpus", help="Passages JSONL {id, text}, or irds:DATASET_ID.")
]
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Output file (written atomically); not with --dry-run."),
]
MaxTokens = Annotated[
    int | None, typer.Option("--max-tokens", help="Reply budget per request (task default).")
]
GradeLogprobs = Annotated[
    int | None,
    typer.Option(
        "--logprobs",
        help="Ask for the first token's top N log-probabilities; a reply the parsers can't "
        "read is graded by its most probable digit (helps small models; the server must "
        "return logprobs).",
    ),
]
JudgeEngine = Annotated[
    str,
    typer.Option(
        "--engine",
        help="local, or ray[=ADDRESS] (as ragmeter evaluate's): the requests are made by Ray "
        "tasks, each talking to one --base-url server (chunks dealt to the servers in turn), "
        "recorded into the one cache; cached items are never sent.",
    ),
]
SummaryJson = Annotated[
    Path | None, typer.Option("--summary-json", help="Also write the summary here (JSON).")
]
Temperature = Annotated[
    float | None,
    typer.Option(
        "--temperature",
        help="Sampling temperature sent with every request (default 0; config "
        "'temperature'). Must be > 0 with --samples N ≥ 2.",
    ),
]
PromptId = Annotated[
    str,
    typer.Option(
        "--prompt",
        help="relevance (ragmeter's grades 1-5), umbrela (UMBRELA's zero-shot prompt of the "
        "TREC RAG track, grades 0-3) or umbrela-fewshot (its few-shot prompt).",
    ),
]
Samples = Annotated[
    int,
    typer.Option(
        "--samples",
        help="Ask each pair N times (needs --temperature > 0); the label is the mode of "
        "the N grades, ties to the lower grade (a pair with an unreadable sample has no "
        "label: exit 1).",
    ),
]
JudgeSpecs = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        help="One judge of an ensemble, url=URL,model=NAME[,api_key_env=VAR]; repeat "
        "for each. Labels combined by majority (ties to the lower grade); each judge's "
        "own labels go to OUT with .judge-N before the suffix.",
    ),
]
JudgesFile = Annotated[
    Path | None,
    typer.Option(
        "--judges",
        help="The ensemble's judges in a file: TOML (an array of tables named judges) or a "
        "JSON list, each {url, model, api_key_env?}.",
    ),
]


@dataclass
class Settings:
    """The options every judge subcommand shares, declared once: each field's type is the
    option's declaration (see :func:`judge_command`)."""

    base_url: BaseUrl = None
    model: Model = None
    api_key_env: ApiKeyEnv = None
    concurrency: Concurrency = None
    rpm: Rpm = None
    tpm: Tpm = None
    cache: CachePath = None
    dry_run: DryRun = False
    refresh: Refresh = False
    retry_unparsed: RetryUnparsed = False
    timeout: Timeout = None
    max_retries: MaxRetries = None
    max_reply_bytes: MaxReplyBytes = None
    price: PriceOpt = None
    config_file: ConfigFile = None
    quiet: Quiet = False
    summary_json: SummaryJson = None
    engine: JudgeEngine = "local"
    temperature: Temperature = None
    offline: Offline = False
    learned: Learned = None

    def cache_path(self) -> Path:
        """The judgment cache: --cache, else the config's, else ragmeter's data folder."""
        from ragmeter.judges.config import configured_cache

        return configured_cache(self.cache, self.config_file)

    def reuse(self) -> dict[str, bool]:
        """How cached judgments are reused (--refresh, --retry-unparsed): keywords of every
        job's estimate and run."""
        return {"refresh": self.refresh, "retry_unparsed": self.retry_unparsed}

    def progress(self, title: str) -> Any:
        """The progress bar titled ``title`` (none with --quiet)."""
        from ragmeter.judges.progress import RichProgress

        return RichProgress(title, enabled=not self.quiet)

    def judge(self, task: str, spec: Any = None) -> tuple[Any, Any]:
        """The judge (LLM, or offline) and the price to report; ``spec``: one member of an
        ensemble (its server, model and key replace the command's)."""
        from ragmeter.judges.api import build_judge

        return build_judge(
            task,
            offline=self.offline,
            learned=self.learned,
            price=self.price,
            base_urls=[spec.base_url] if spec is not None else self.base_url,
            model=spec.model if spec is not None else self.model,
            api_key_env=(spec.api_key_env if spec is not None else None) or self.api_key_env,
            concurrency=self.concurrency,
            rpm=self.rpm,
            tpm=self.tpm,
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_reply_bytes=self.max_reply_bytes,
            temperature=self.temperature,
            config_file=self.config_file,
        )


#: the exit statuses, shown under every subcommand's help
EXIT_STATUS = (
    "Exit status: 0 every item labelled; 1 output incomplete (items unparsed, failed or not "
    "judged: the summary counts them, cache hits included; a rerun asks failed ones again, "
    "--retry-unparsed unparsed ones) or the server refused the run; 2 bad input or options; "
    "130 interrupted (rerun to continue)."
)


@functools.cache
def _settings_hints() -> dict[str, Any]:
    """The annotations of :class:`Settings`, evaluated once (each start registers 11 judge
    commands; evaluating them for each took a tenth of the start-up)."""
    return typing.get_type_hints(Settings, include_extras=True)


def _shared_parameters(offline: bool, learned: bool = False) -> list[inspect.Parameter]:
    hints = _settings_hints()
    return [
        inspect.Parameter(
            f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name]
        )
        for f in fields(Settings)
        if (offline or f.name != "offline") and (learned or f.name != "learned")
    ]


def judge_command(
    app: typer.Typer, name: str, *, offline: bool = False, learned: bool = False
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``func(settings, **own)`` as ``ragmeter judge NAME``: its own parameters,
    then the shared options of :class:`Settings` (``--offline`` only where ``offline``,
    ``--learned`` only where ``learned``)."""

    def register(func: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(func, eval_str=True).parameters.values())[1:]
        shared = _shared_parameters(offline, learned)

        @functools.wraps(func)
        def command(**values: Any) -> None:
            settings = Settings(**{p.name: values.pop(p.name) for p in shared})  # type: ignore[arg-type]
            func(settings, **values)

        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + shared
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        app.command(name, epilog=EXIT_STATUS)(command)
        return func

    return register


def _needs_out(settings: Settings, out: Path | None) -> Path:
    """The output file: only a dry run, which writes nothing, goes without one (an error
    before any work otherwise); ``Path()`` stands for none in a dry run."""
    if out is None and not settings.dry_run:
        fail(RagmeterError("--out FILE is needed: the output file (only --dry-run goes without)"))
    return out if out is not None else Path()


def _open_cache(path: Path) -> JudgmentCache:
    """The judgment cache at ``path`` (for ``with``), its path said first on stderr."""
    from ragmeter.judges.cache import JudgmentCache

    typer.echo(f"judgment cache: {path}", err=True)
    return JudgmentCache(path)


def _execute(
    settings: Settings,
    build: Callable[[], Any],
    out: Path | None,
    write: Any,
    finish: Callable[[Any, Path], None] | None = None,
) -> None:
    """Build the job (input errors exit 2), dry-run or run it, write its output, print the
    summary, exit with the status the module docstring gives. ``finish(result, out)``, when
    given, writes the output and its provenance instead of ``write`` (hole filling)."""

    target = _needs_out(settings, out)

    try:
        job = build()
        judge, price = settings.judge(job.task.name)
        cache_path = settings.cache_path()
    except RagmeterError as exc:
        fail(exc)
    with _open_cache(cache_path) as cache:
        if settings.dry_run:
            estimate = job.estimate(judge, cache=cache, price=price, **settings.reuse())
            typer.echo(estimate.line())
            if settings.summary_json is not None:
                _write_json(settings.summary_json, estimate.to_dict())
            return
        progress = settings.progress(f"judge {job.task.name}")
        try:
            result = job.execute(
                judge,
                cache=cache,
                price=price,
                progress=progress,
                engine=settings.engine,
                **settings.reuse(),
            )
        except RagmeterError as exc:
            fail(exc)
    _report(settings, judge, result, target, write, finish)


def _report(
    settings: Settings,
    judge: Any,
    result: Any,
    out: Path,
    write: Any,
    finish: Callable[[Any, Path], None] | None = None,
) -> None:
    summary = result.summary
    for line in [*summary.lines(), *result.notes]:
        typer.echo(line, err=True)
    if getattr(judge, "note", None):  # e.g. the offline judge: a weak proxy, said every time
        typer.echo(str(judge.note), err=True)
    if settings.summary_json is not None:
        _write_json(settings.summary_json, summary.to_dict())
    if summary.interrupted:
        raise typer.Exit(code=130)
    if summary.fatal:
        raise typer.Exit(code=1)
    from ragmeter.judges.api import write_label_provenance, write_qrels

    if finish is not None:
        finish(result, out)
    else:
        write(result.labels, out)
        # utilities, eRAG's continuous labels are not qrels: their sidecar hashes their lines
        write_label_provenance(result, out, rows="qrels" if write is write_qrels else "records")
    if result.complete:
        typer.echo(f"wrote {out}", err=True)
        return
    what = "pair(s)" if result.pair_missing is not None else "item(s)"
    typer.echo(
        f"wrote {out}: INCOMPLETE, {len(result.missing)} {what} without a label (exit 1)",
        err=True,
    )
    raise typer.Exit(code=1)


def _write_json(path: Path, value: Any) -> None:
    from ragmeter.judges.api import write_json

    write_json(value, path)


def _read_runs(paths: list[Path]) -> list[Any]:
    from ragmeter.io.readers import read_run

    return [read_run(p) for p in paths]


def _read_texts(path: Path, what: str = "docs") -> Any:
    """Texts of a JSONL {id, text} file, or of an ir_datasets dataset (``irds:ID``): its
    queries (``what="queries"``) or its documents."""
    from ragmeter.io.irds import is_irds, read_irds_texts
    from ragmeter.io.judgments import read_corpus

    if is_irds(path):
        return read_irds_texts(path, what)
    return read_corpus(path, name=str(path))


HumanQrels = Annotated[
    Path | None,
    typer.Option("--qrels", help="Human qrels whose holes --holes fills."),
]
Holes = Annotated[
    bool,
    typer.Option(
        "--holes",
        help="Judge only the pairs of the top --depth that --qrels lacks (a grade < 0, "
        "pooled but unjudged, is a hole); --out gets --qrels with the holes filled, human "
        "grades unchanged, and a provenance sidecar.",
    ),
]
Overlap = Annotated[
    int,
    typer.Option(
        "--overlap",
        min=0,
        help="With --holes: also judge N human-labelled pairs per query (drawn with --seed) "
        "and print Cohen's kappa and Krippendorff's alpha on them.",
    ),
]
HoleGradeMap = Annotated[
    str | None,
    typer.Option(
        "--grade-map",
        help="With --holes: map the judge's grades onto the human scale, e.g. "
        "1:0,2:0,3:1,4:2,5:3 (or @FILE), before merging and agreement.",
    ),
]


def _hole_job(
    qrels: Path | None,
    holes: bool,
    overlap: int,
    seed: int,
    grade_map: str | None,
    depth: int,
) -> Any:
    """The hole filling asked for (:class:`ragmeter.judges.holes.HoleJob`), or ``None``;
    options that go with --holes without it exit 2."""
    if not holes:
        if qrels is not None or overlap or grade_map is not None:
            fail(ValueError("--qrels, --overlap and --grade-map go with --holes"))
        return None
    if qrels is None:
        fail(ValueError("--holes needs --qrels HUMAN, the qrels whose holes are filled"))
    from ragmeter.judges.holes import HoleJob
    from ragmeter.stats.agreement import read_label_map

    try:
        gmap = read_label_map(grade_map) if grade_map is not None else None
    except ValueError as exc:
        fail(exc)
    return HoleJob(qrels, depth=depth, overlap=overlap, seed=seed, grade_map=gmap)


def _finish_holes(job: Any) -> Callable[[Any, Path], None]:
    def finish(result: Any, out: Path) -> None:
        for line in job.finish(result, out).lines():
            typer.echo(line, err=True)

    return finish


def register(app: typer.Typer) -> None:
    judge_app = typer.Typer(
        name="judge",
        help="Label with an LLM judge (OpenAI-compatible server): cached, resumable, costed. "
        "Exit 1 when the output is incomplete (the summary says which items and why).",
        no_args_is_help=True,
    )
    app.add_typer(judge_app, name="judge")
    judge_command(judge_app, "relevance", offline=True, learned=True)(relevance)
    judge_command(judge_app, "udcg")(udcg)
    judge_command(judge_app, "answerability", offline=True)(answerability)
    judge_command(judge_app, "subquestions")(subquestions)
    judge_command(judge_app, "correctness")(correctness)
    judge_command(judge_app, "probe")(probe)


def relevance(
    settings: Settings,
    run: Runs,
    queries: Queries,
    corpus: Corpus,
    out: Out = None,
    depth: Depth = 20,
    max_tokens: MaxTokens = None,
    grade_logprobs: GradeLogprobs = None,
    qrels: HumanQrels = None,
    holes: Holes = False,
    overlap: Overlap = 0,
    seed: Seed = 0,
    grade_map: HoleGradeMap = None,
    prompt: PromptId = "relevance",
    samples: Samples = 1,
    judge: JudgeSpecs = None,
    judges: JudgesFile = None,
) -> None:
    """Grade (query, passage) pairs → TREC qrels.

    Each pair in the top --depth of the run(s) gets a grade: ragmeter's utility grade
    (5 decisive … 1 junk), or with --prompt umbrela / umbrela-fewshot UMBRELA's 0-3; the
    output is 'qid 0 docid grade'. Unparseable grades stay unjudged (−1 and the raw text
    in the cache), are counted, and make the exit status 1 (--retry-unparsed asks them
    again). --samples N asks each pair N times and keeps the mode; --judge (repeated) or
    --judges asks several judges and keeps their majority, and prints their agreement.
    With --qrels HUMAN --holes only the pairs HUMAN lacks are judged and --out gets HUMAN
    with the holes filled, and its provenance sidecar (one judge: not with --judge/--judges)."""
    from ragmeter.judges.api import relevance_job, write_qrels

    if samples < 1:
        fail(ValueError(f"--samples must be ≥ 1, got {samples}"))
    filling = _hole_job(qrels, holes, overlap, seed, grade_map, depth)

    def build() -> Any:
        runs: Any = _read_runs(run)
        if filling is not None:
            runs = filling.plan(runs)
            typer.echo(filling.planned.line(), err=True)
        job = relevance_job(
            runs,
            _read_texts(queries, "queries"),
            _read_texts(corpus),
            depth=None if filling is not None else depth,
            max_tokens=max_tokens,
            grade_logprobs=grade_logprobs,
            prompt=prompt,
            samples=samples,
        )
        if filling is not None:
            filling.check(job.task if settings.learned is None else _learned_scale(settings))
        return job

    if judge or judges is not None:
        if filling is not None:
            fail(RagmeterError("--holes fills holes with one judge: drop --judge/--judges"))
        _execute_ensemble(settings, build, out, write_qrels, judge or [], judges)
        return
    finish = None if filling is None else _finish_holes(filling)
    _execute(settings, build, out, write_qrels, finish)


def _learned_scale(settings: Settings) -> Any:
    """What the hole filling checks of a learned judge: its grade scale (its training
    labels'), in place of the prompt's."""
    from types import SimpleNamespace

    from ragmeter.judges.learned import load_model

    assert settings.learned is not None
    return SimpleNamespace(scale=load_model(settings.learned).scale)


def _member_specs(settings: Settings, specs: list[str], path: Path | None) -> list[Any]:
    """The ensemble's judges from --judge and --judges (input errors exit 2)."""
    from ragmeter.judges.config import parse_judge_spec, read_judges_file

    if settings.base_url or settings.model:
        raise RagmeterError("give the judges with --judge/--judges or --base-url/--model, not both")
    if settings.offline or settings.learned is not None:
        raise RagmeterError(
            "--offline and --learned are one judge: not a member of --judge/--judges"
        )
    members = [parse_judge_spec(s) for s in specs]
    if path is not None:
        members += read_judges_file(path)
    if len(members) < 2:
        raise RagmeterError(f"an ensemble needs at least 2 judges, got {len(members)}")
    return members


def _execute_ensemble(
    settings: Settings,
    build: Callable[[], Any],
    out: Path | None,
    write: Any,
    specs: list[str],
    path: Path | None,
) -> None:
    """:func:`_execute` for several judges: each judge's run and summary, then the combined
    labels, the judges' agreement, and the files (combined, and one per judge)."""
    from ragmeter.judges.ensemble import estimate_ensemble, run_ensemble

    target = _needs_out(settings, out)

    try:
        members = _member_specs(settings, specs, path)
        job = build()
        built = [settings.judge(job.task.name, spec) for spec in members]
        cache_path = settings.cache_path()
    except RagmeterError as exc:
        fail(exc)
    judges, prices = [j for j, _ in built], [p for _, p in built]
    with _open_cache(cache_path) as cache:
        try:
            if settings.dry_run:
                for i, estimate in enumerate(
                    estimate_ensemble(job, judges, cache=cache, prices=prices, **settings.reuse()),
                    start=1,
                ):
                    typer.echo(f"judge {i}: {estimate.line()}")
                return
            result = run_ensemble(
                job,
                judges,
                cache=cache,
                prices=prices,
                progress=lambda i, j: settings.progress(f"judge {i} ({j.model})"),
                engine=settings.engine,
                **settings.reuse(),
            )
        except RagmeterError as exc:
            fail(exc)
    _report_ensemble(settings, result, target, write)


def _report_ensemble(settings: Settings, result: Any, out: Path, write: Any) -> None:
    from ragmeter.judges.ensemble import write_ensemble

    for i, member in enumerate(result.members, start=1):
        typer.echo(f"judge {i}:", err=True)
        for line in [*member.summary.lines(), *member.notes]:
            typer.echo(f"  {line}", err=True)
    if settings.summary_json is not None:
        _write_json(settings.summary_json, result.to_dict())
    if result.stopped is not None:
        raise typer.Exit(code=130 if result.stopped.summary.interrupted else 1)
    for line in result.lines():
        typer.echo(line, err=True)
    written = write_ensemble(result, out, write)
    typer.echo(f"wrote {', '.join(str(p) for p in written)}", err=True)
    if not result.complete:
        typer.echo(
            f"{out}: INCOMPLETE, {len(result.missing)} pair(s) without a label (exit 1)",
            err=True,
        )
        raise typer.Exit(code=1)


def udcg(
    settings: Settings,
    run: Runs,
    queries: Queries,
    corpus: Corpus,
    out: Out = None,
    depth: Depth = 20,
    top_logprobs: Annotated[
        int, typer.Option("--top-logprobs", help="First-token alternatives to ask for.")
    ] = 20,
) -> None:
    """UDCG utilities of (query, passage) pairs → utilities file.

    u = 1 − P(the first token starts "NO ANSWER"); '.jsonl' rows, else 'qid docid
    utility' lines, for 'ragmeter evaluate --utilities'. Servers without log-probabilities
    give 0/1 from the reply text (counted as lenient parses)."""
    from ragmeter.judges.api import udcg_job, write_utilities

    def build() -> Any:
        return udcg_job(
            _read_runs(run),
            _read_texts(queries, "queries"),
            _read_texts(corpus),
            depth=depth,
            top_logprobs=top_logprobs,
        )

    _execute(settings, build, out, write_utilities)


def answerability(
    settings: Settings,
    questions: Annotated[
        Path, typer.Option("--questions", help="Sub-questions JSONL {query_id, questions}.")
    ],
    out: Out = None,
    run: Annotated[
        list[Path] | None,
        typer.Option("--run", help="Run file(s): rate the top --depth passages."),
    ] = None,
    corpus: PassageTexts = None,
    answers: Annotated[
        Path | None,
        typer.Option(
            "--answers",
            help="Generated answers JSONL {id, text}: rate each answer instead of passages "
            "(writes rated answers {query_id, ratings, text}).",
        ),
    ] = None,
    depth: Depth = 20,
    grade_logprobs: GradeLogprobs = None,
    max_tokens: MaxTokens = None,
) -> None:
    """Rate 0–5 (sub-question, passage) pairs → judgments JSONL.

    Writes {query_id, doc_id, ratings} for 'ragmeter evaluate --judgments' (with
    --answers: rated answers {query_id, ratings, text}). Unparseable or failed ratings
    are −1 (never answerable), never 0, and make the exit status 1."""
    from ragmeter.io.judgments import read_questions
    from ragmeter.judges.api import answerability_job, write_judgments

    if (answers is None) == (run is None and corpus is None):
        fail(ValueError("give --run and --corpus, or --answers"))
    if answers is None and (not run or corpus is None):
        fail(ValueError("rating passages needs both --run and --corpus"))

    def build() -> Any:
        common = {"max_tokens": max_tokens, "grade_logprobs": grade_logprobs}
        if answers is not None:
            return answerability_job(
                read_questions(questions), answers=_read_texts(answers), **common
            )
        assert run is not None and corpus is not None
        return answerability_job(
            read_questions(questions),
            runs=_read_runs(run),
            corpus=_read_texts(corpus),
            depth=depth,
            **common,
        )

    _execute(settings, build, out, write_judgments)


def subquestions(
    settings: Settings,
    queries: Queries,
    references: Annotated[
        Path, typer.Option("--references", help="Reference texts JSONL {id, text}.")
    ],
    out: Out = None,
    n: Annotated[int, typer.Option("--n", help="Sub-questions per query.")] = 10,
    max_tokens: MaxTokens = None,
) -> None:
    """Sub-questions from reference texts → sub-questions JSONL.

    Writes --n diverse sub-questions per query, {query_id, questions}. Queries whose reply
    holds no question are left out, counted, and make the exit status 1."""
    from ragmeter.judges.api import subquestions_job, write_questions

    if n < 1:
        fail(ValueError(f"--n must be ≥ 1, got {n}"))

    def build() -> Any:
        return subquestions_job(
            _read_texts(queries, "queries"),
            _read_texts(references),
            n=n,
            max_tokens=max_tokens,
        )

    _execute(settings, build, out, write_questions)


def correctness(
    settings: Settings,
    samples: Annotated[
        Path,
        typer.Option(
            "--samples",
            help="Answer samples JSON {query, generated_answer, reference_answer, label?}.",
        ),
    ],
    out: Out = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Keyword overlap > T is correct.")
    ] = 0.7,
    max_tokens: MaxTokens = None,
) -> None:
    """Answer correctness (0/1 with a reason) → JSON report.

    The LLM's verdict on each generated answer against its reference, beside the keyword
    overlap of ragmeter answers, and how each agrees with the human labels."""
    from ragmeter.io.answers import read_answer_samples
    from ragmeter.judges.api import correctness_job, write_json

    def build() -> Any:
        return correctness_job(
            read_answer_samples(samples), threshold=threshold, max_tokens=max_tokens
        )

    _execute(settings, build, out, write_json)


def probe(
    settings: Settings,
    run: Runs,
    queries: Queries,
    corpus: Corpus,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Also write the report here (JSON).")
    ] = None,
    depth: Depth = 20,
    pairs: Annotated[
        int, typer.Option("--pairs", help="Pairs to probe, drawn from the top --depth.")
    ] = 50,
    seed: Seed = 0,
    prompt: PromptId = "relevance",
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            help="Samples per prompt; N ≥ 2 (at --temperature > 0) measures self-consistency.",
        ),
    ] = 1,
    pad_words: Annotated[
        int, typer.Option("--pad-words", help="Neutral words appended for the length probe.")
    ] = 200,
    max_tokens: MaxTokens = None,
) -> None:
    """Bias probes of a relevance judge on a sample of pairs.

    Length: the same passage padded with neutral text; self-consistency: N samples of
    the same prompt; position (umbrela-fewshot, the one prompt holding several
    passages): its worked examples in reverse order. Each flip rate comes with its 95%
    Wilson interval. Every request is cached: a rerun asks nothing."""
    from ragmeter.judges.probes import probe_job, run_probes

    try:
        job = probe_job(
            _read_runs(run),
            _read_texts(queries, "queries"),
            _read_texts(corpus),
            depth=depth,
            pairs=pairs,
            seed=seed,
            prompt=prompt,
            samples=samples,
            pad_words=pad_words,
            max_tokens=max_tokens,
        )
        judge, price = settings.judge(job.plain.task.name)
        cache_path = settings.cache_path()
    except RagmeterError as exc:
        fail(exc)
    with _open_cache(cache_path) as cache:
        try:
            if settings.dry_run:
                parts = [("plain", job.plain), ("padded", job.padded)]
                parts += [("reordered", job.reordered)] if job.reordered else []
                for what, part in parts:
                    estimate = part.estimate(judge, cache=cache, price=price, **settings.reuse())
                    typer.echo(f"{what}: {estimate.line()}")
                return
            report = run_probes(
                job,
                judge,
                cache=cache,
                price=price,
                progress=settings.progress("judge probe"),
                engine=settings.engine,
                **settings.reuse(),
            )
        except RagmeterError as exc:
            fail(exc)
    for result in report.results:
        for line in result.summary.lines():
            typer.echo(line, err=True)
    if any(r.summary.interrupted for r in report.results):
        raise typer.Exit(code=130)
    for line in report.lines():
        typer.echo(line)
    if out is not None:
        _write_json(out, report.to_dict())
    if settings.summary_json is not None:
        _write_json(settings.summary_json, report.to_dict())
    if not report.complete:
        typer.echo(
            "INCOMPLETE: some pairs have no grade (see the summaries above; exit 1)", err=True
        )
        raise typer.Exit(code=1)
