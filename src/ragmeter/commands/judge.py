"""``ragmeter judge TASK``: labels from an LLM judge on any OpenAI-compatible server (or a
plugged-in offline judge), cached in SQLite and resumable.

Every subcommand reads its inputs (errors name file, line and field), plans (cache look-up;
``--dry-run`` stops here and prints calls, cache hits, estimated tokens and cost), judges the
rest with a progress bar, and writes the output atomically from the cache, in input order.
Exit status: 0 done; 1 some judgments failed (written output leaves them out or rates them −1;
rerun to retry) or the server refused the run (401/403/404); 2 bad input or options;
130 interrupted (everything judged so far is cached: rerun to continue).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError

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
        help="SQLite judgment cache (default ragmeter-judgments.sqlite, or config 'cache').",
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
Timeout = Annotated[
    float | None, typer.Option("--timeout", help="Seconds per request (default 60).")
]
MaxRetries = Annotated[
    int | None, typer.Option("--max-retries", help="Retries per request (default 6).")
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
        help="Use the offline embedding judge instead of a server: MiniLM cosine cut into "
        "grades by fixed thresholds, a weak proxy for an LLM judge (similarity is not "
        "usefulness); needs the 'models' extra.",
    ),
]
Depth = Annotated[int, typer.Option("--depth", help="Judge the top N of each run.")]
Runs = Annotated[
    list[Path],
    typer.Option("--run", help="Run file (TREC, JSONL, …); repeatable: pairs are pooled."),
]
Queries = Annotated[Path, typer.Option("--queries", help="Queries JSONL {id, text}.")]
Corpus = Annotated[Path, typer.Option("--corpus", help="Passages JSONL {id, text}.")]
Out = Annotated[Path, typer.Option("--out", "-o", help="Output file (written atomically).")]
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
SummaryJson = Annotated[
    Path | None, typer.Option("--summary-json", help="Also write the run summary here (JSON).")
]


@dataclass
class Settings:
    """The shared judge options of one command."""

    base_url: list[str] | None = None
    model: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    timeout: float | None = None
    max_retries: int | None = None
    price: str | None = None
    config_file: Path | None = None
    cache: Path | None = None
    dry_run: bool = False
    refresh: bool = False
    quiet: bool = False
    offline: bool = False
    summary_json: Path | None = None

    @classmethod
    def pick(cls, values: dict[str, Any]) -> Settings:
        """The settings among a command's parameters (``locals()``)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    def config(self) -> Any:
        from ragmeter.judges.config import resolve_config

        return resolve_config(
            base_urls=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            concurrency=self.concurrency,
            rpm=self.rpm,
            tpm=self.tpm,
            timeout=self.timeout,
            max_retries=self.max_retries,
            price=self.price,
            config_file=self.config_file,
        )


def _judge_and_price(settings: Settings, task: str) -> tuple[Any, Any]:
    """The judge (LLM from the settings, or the offline one) and the price to report."""
    from ragmeter.judges.config import Price

    if settings.offline:
        import importlib

        try:
            factory = importlib.import_module("ragmeter.judges.offline").offline_judge
        except (ImportError, AttributeError) as exc:
            raise RagmeterError(
                f"the offline judge is not available ({exc}); install 'ragmeter[models]'"
            ) from None
        judge = factory(task)
        price = Price.parse(settings.price) if settings.price else None
        return judge, price
    config = settings.config()
    try:
        from ragmeter.judges.llm import LLMJudge
    except ImportError as exc:
        raise RagmeterError(str(exc)) from None

    return LLMJudge(config), config.price


def _execute(settings: Settings, job: Any, out: Path, write: Any) -> None:
    """Dry-run or run ``job``, write its output, print the summary, exit with the status."""
    from ragmeter.judges.cache import JudgmentCache
    from ragmeter.judges.config import configured_cache
    from ragmeter.judges.progress import RichProgress
    from ragmeter.judges.runner import cache_params, make_plan, run_judgments

    try:
        judge, price = _judge_and_price(settings, job.task.name)
        cache_path = configured_cache(settings.cache, settings.config_file)
    except RagmeterError as exc:
        fail(exc)
    with JudgmentCache(cache_path) as cache:
        if settings.dry_run:
            plan = make_plan(
                job.task,
                job.items,
                model=judge.model,
                cache=cache,
                refresh=settings.refresh,
                params=cache_params(job.task, judge),
            )
            est = plan.estimate(price)
            cost = "unknown (no price)" if est.cost is None else f"${est.cost:.4f}"
            typer.echo(
                f"dry run: {job.task.name} with {judge.model}: {len(job.items)} items, "
                f"{plan.n_unique} unique, {est.cached} cached, {est.calls} calls to make, "
                f"~{est.input_tokens:,} input + ~{est.output_tokens:,} output tokens "
                f"(estimated: chars/4), cost {cost}"
            )
            if settings.summary_json is not None:
                _write_json(settings.summary_json, est.to_dict())
            return
        progress = RichProgress(f"judge {job.task.name}", enabled=not settings.quiet)
        try:
            run = run_judgments(
                job.task,
                job.items,
                judge,
                cache=cache,
                refresh=settings.refresh,
                price=price,
                progress=progress,
            )
        except RagmeterError as exc:
            fail(exc)
    summary = run.summary
    for line in summary.lines():
        typer.echo(line, err=True)
    if getattr(judge, "note", None):  # e.g. the offline judge: a weak proxy, said every time
        typer.echo(str(judge.note), err=True)
    if settings.summary_json is not None:
        _write_json(settings.summary_json, summary.to_dict())
    if summary.interrupted:
        raise typer.Exit(code=130)
    if summary.fatal:
        raise typer.Exit(code=1)
    write(job.shape(job.items, run.results), out)
    typer.echo(f"wrote {out}", err=True)
    if summary.failures:
        raise typer.Exit(code=1)


def _write_json(path: Path, value: Any) -> None:
    from ragmeter.io._common import atomic_write_text

    atomic_write_text(path, json.dumps(value, indent=2) + "\n")


def _read_runs(paths: list[Path]) -> list[Any]:
    from ragmeter.io.readers import read_run

    return [read_run(p) for p in paths]


def _read_texts(path: Path) -> Any:
    from ragmeter.io.judgments import read_corpus

    return read_corpus(path, name=str(path))


def register(app: typer.Typer) -> None:
    judge_app = typer.Typer(
        name="judge",
        help="Label with an LLM judge (OpenAI-compatible server): cached, resumable, costed.",
        no_args_is_help=True,
    )
    app.add_typer(judge_app, name="judge")

    @judge_app.command("relevance")
    def relevance(
        run: Runs,
        queries: Queries,
        corpus: Corpus,
        out: Out,
        depth: Depth = 20,
        base_url: BaseUrl = None,
        model: Model = None,
        api_key_env: ApiKeyEnv = None,
        concurrency: Concurrency = None,
        rpm: Rpm = None,
        tpm: Tpm = None,
        cache: CachePath = None,
        dry_run: DryRun = False,
        refresh: Refresh = False,
        timeout: Timeout = None,
        max_retries: MaxRetries = None,
        price: PriceOpt = None,
        config_file: ConfigFile = None,
        quiet: Quiet = False,
        offline: Offline = False,
        max_tokens: MaxTokens = None,
        grade_logprobs: GradeLogprobs = None,
        summary_json: SummaryJson = None,
    ) -> None:
        """Grade 1–5 (query, passage) pairs → TREC qrels.

        Each pair in the top --depth of the run(s) gets a utility grade (5 decisive … 1 junk);
        the output is 'qid 0 docid grade'. Unparseable grades stay unjudged (−1 and the raw
        text in the cache) and are counted."""
        from ragmeter.judges.api import relevance_job, write_qrels

        settings = Settings.pick(locals())
        try:
            job = relevance_job(
                _read_runs(run),
                _read_texts(queries),
                _read_texts(corpus),
                depth=depth,
                max_tokens=max_tokens,
                grade_logprobs=grade_logprobs,
            )
        except RagmeterError as exc:
            fail(exc)
        _execute(settings, job, out, write_qrels)

    @judge_app.command("udcg")
    def udcg(
        run: Runs,
        queries: Queries,
        corpus: Corpus,
        out: Out,
        depth: Depth = 20,
        top_logprobs: Annotated[
            int, typer.Option("--top-logprobs", help="First-token alternatives to ask for.")
        ] = 20,
        base_url: BaseUrl = None,
        model: Model = None,
        api_key_env: ApiKeyEnv = None,
        concurrency: Concurrency = None,
        rpm: Rpm = None,
        tpm: Tpm = None,
        cache: CachePath = None,
        dry_run: DryRun = False,
        refresh: Refresh = False,
        timeout: Timeout = None,
        max_retries: MaxRetries = None,
        price: PriceOpt = None,
        config_file: ConfigFile = None,
        quiet: Quiet = False,
        summary_json: SummaryJson = None,
    ) -> None:
        """UDCG utilities of (query, passage) pairs → utilities file.

        u = 1 − P(the first token starts "NO ANSWER"); '.jsonl' rows, else 'qid docid
        utility' lines, for 'ragmeter evaluate --utilities'. Servers without log-probabilities
        give 0/1 from the reply text (counted as lenient parses)."""
        from ragmeter.judges.api import udcg_job, write_utilities

        settings = Settings.pick(locals())
        try:
            job = udcg_job(
                _read_runs(run),
                _read_texts(queries),
                _read_texts(corpus),
                depth=depth,
                top_logprobs=top_logprobs,
            )
        except RagmeterError as exc:
            fail(exc)
        _execute(settings, job, out, write_utilities)

    @judge_app.command("answerability")
    def answerability(
        questions: Annotated[
            Path, typer.Option("--questions", help="Sub-questions JSONL {query_id, questions}.")
        ],
        out: Out,
        run: Annotated[
            list[Path] | None,
            typer.Option("--run", help="Run file(s): rate the top --depth passages."),
        ] = None,
        corpus: Annotated[
            Path | None, typer.Option("--corpus", help="Passages JSONL {id, text}.")
        ] = None,
        answers: Annotated[
            Path | None,
            typer.Option(
                "--answers",
                help="Generated answers JSONL {id, text}: rate each answer instead of passages "
                "(writes rated answers {query_id, ratings, text}).",
            ),
        ] = None,
        depth: Depth = 20,
        base_url: BaseUrl = None,
        model: Model = None,
        api_key_env: ApiKeyEnv = None,
        concurrency: Concurrency = None,
        rpm: Rpm = None,
        tpm: Tpm = None,
        cache: CachePath = None,
        dry_run: DryRun = False,
        refresh: Refresh = False,
        timeout: Timeout = None,
        max_retries: MaxRetries = None,
        price: PriceOpt = None,
        config_file: ConfigFile = None,
        quiet: Quiet = False,
        offline: Offline = False,
        grade_logprobs: GradeLogprobs = None,
        max_tokens: MaxTokens = None,
        summary_json: SummaryJson = None,
    ) -> None:
        """Rate 0–5 (sub-question, passage) pairs → judgments JSONL.

        Writes {query_id, doc_id, ratings} for 'ragmeter evaluate --judgments' (with
        --answers: rated answers {query_id, ratings, text}). Unparseable or failed ratings
        are −1 (never answerable), never 0."""
        from ragmeter.io.judgments import read_questions
        from ragmeter.judges.api import answerability_job, write_judgments

        settings = Settings.pick(locals())
        if (answers is None) == (run is None and corpus is None):
            fail(ValueError("give --run and --corpus, or --answers"))
        if answers is None and (not run or corpus is None):
            fail(ValueError("rating passages needs both --run and --corpus"))
        try:
            qs = read_questions(questions)
            if answers is not None:
                texts = _read_texts(answers)
                job = answerability_job(
                    qs,
                    answers=dict(
                        zip(texts.doc_ids.to_pylist(), texts.texts.to_pylist(), strict=True)
                    ),
                    max_tokens=max_tokens,
                    grade_logprobs=grade_logprobs,
                )
            else:
                assert run is not None and corpus is not None
                job = answerability_job(
                    qs,
                    runs=_read_runs(run),
                    corpus=_read_texts(corpus),
                    depth=depth,
                    max_tokens=max_tokens,
                    grade_logprobs=grade_logprobs,
                )
        except RagmeterError as exc:
            fail(exc)
        _execute(settings, job, out, write_judgments)

    @judge_app.command("subquestions")
    def subquestions(
        queries: Queries,
        references: Annotated[
            Path, typer.Option("--references", help="Reference texts JSONL {id, text}.")
        ],
        out: Out,
        n: Annotated[int, typer.Option("--n", help="Sub-questions per query.")] = 10,
        base_url: BaseUrl = None,
        model: Model = None,
        api_key_env: ApiKeyEnv = None,
        concurrency: Concurrency = None,
        rpm: Rpm = None,
        tpm: Tpm = None,
        cache: CachePath = None,
        dry_run: DryRun = False,
        refresh: Refresh = False,
        timeout: Timeout = None,
        max_retries: MaxRetries = None,
        price: PriceOpt = None,
        config_file: ConfigFile = None,
        quiet: Quiet = False,
        max_tokens: MaxTokens = None,
        summary_json: SummaryJson = None,
    ) -> None:
        """Sub-questions from reference texts → sub-questions JSONL.

        Writes --n diverse sub-questions per query, {query_id, questions}. Queries whose reply
        holds no question are left out and counted."""
        from ragmeter.judges.api import subquestions_job, write_questions

        settings = Settings.pick(locals())
        if n < 1:
            fail(ValueError(f"--n must be ≥ 1, got {n}"))
        try:
            job = subquestions_job(
                _read_texts(queries), _read_texts(references), n=n, max_tokens=max_tokens
            )
        except RagmeterError as exc:
            fail(exc)
        _execute(settings, job, out, write_questions)

    @judge_app.command("correctness")
    def correctness(
        samples: Annotated[
            Path,
            typer.Option(
                "--samples",
                help="Seed-001 samples JSON {query, generated_answer, reference_answer, label?}.",
            ),
        ],
        out: Out,
        threshold: Annotated[
            float, typer.Option("--threshold", help="Keyword overlap > T is correct.")
        ] = 0.7,
        base_url: BaseUrl = None,
        model: Model = None,
        api_key_env: ApiKeyEnv = None,
        concurrency: Concurrency = None,
        rpm: Rpm = None,
        tpm: Tpm = None,
        cache: CachePath = None,
        dry_run: DryRun = False,
        refresh: Refresh = False,
        timeout: Timeout = None,
        max_retries: MaxRetries = None,
        price: PriceOpt = None,
        config_file: ConfigFile = None,
        quiet: Quiet = False,
        max_tokens: MaxTokens = None,
        summary_json: SummaryJson = None,
    ) -> None:
        """Answer correctness (0/1 with a reason) → JSON report.

        The LLM's verdict on each generated answer against its reference, beside seed 001's
        keyword overlap, and how each agrees with the human labels."""
        from ragmeter.io.answers import read_answer_samples
        from ragmeter.judges.api import correctness_job, write_json

        settings = Settings.pick(locals())
        try:
            job = correctness_job(
                read_answer_samples(samples), threshold=threshold, max_tokens=max_tokens
            )
        except RagmeterError as exc:
            fail(exc)
        _execute(settings, job, out, write_json)
