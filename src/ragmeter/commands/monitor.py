"""``ragmeter monitor``: production traces sampled per time window, judged, stored as trends
and checked for drift. The logic is :mod:`ragmeter.workflows.monitor`.

``ragmeter monitor TRACES… --store URL`` is ``ragmeter monitor run TRACES… --store URL``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from ragmeter.commands.judge import (
    ApiKeyEnv,
    BaseUrl,
    CachePath,
    Concurrency,
    ConfigFile,
    MaxRetries,
    Model,
    Offline,
    Quiet,
    Timeout,
)
from ragmeter.commands.options import (
    Alpha,
    DocIdFrom,
    HtmlOutput,
    Output,
    QueryIdFrom,
    Seed,
    fail,
    option_groups,
)
from ragmeter.commands.output import emit_text
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.workflows.monitor import Trend

MonitorStage = Annotated[
    str | None,
    typer.Option(
        "--stage",
        help="Which spans are sampled: every retriever span (default), reranker (the "
        "rerankers' output) or step:N (the N-th retriever step of each trace).",
    ),
]


class _MonitorGroup(TyperGroup):
    """``monitor TRACES…`` runs ``monitor run TRACES…`` (the subcommands keep their names)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)  # type: ignore[no-any-return]


monitor_app = typer.Typer(
    name="monitor",
    help="Watch a RAG system in production: judged samples of its traces per time window, "
    "trends, drift checks and Prometheus metrics.",
    no_args_is_help=True,
    cls=_MonitorGroup,
)

Stream = Annotated[
    str, typer.Option("--name", help="The monitored system (a stream of the store).")
]
Window = Annotated[
    str, typer.Option("--window", help="Window length: 15m, 1h, 1d (aligned on UTC).")
]
RequiredStore = Annotated[
    str | None,
    typer.Option("--store", help="Store URL (sqlite:///monitor.db, postgresql+psycopg://…)."),
]


@dataclass(frozen=True)
class MonitoredStream:
    """The store, stream and window length that ``monitor check``, ``metrics``, ``report``
    and ``ppi`` read: one option group (see :func:`option_groups`)."""

    store: RequiredStore = None
    name: Stream = "production"
    window: Window = "1d"

    def url(self) -> str:
        """--store, else the default store."""
        return _store(self.store)

    def window_s(self) -> int:
        """The window length in seconds (a bad --window raises :class:`RagmeterError`)."""
        from ragmeter.analysis.monitor import parse_window

        return parse_window(self.window)

    def trend(self) -> Trend:
        """The stream's stored windows, as ``report`` and ``metrics`` show them."""
        from ragmeter.workflows import monitor as flow

        return flow.stored_trend(self.url(), self.name, self.window_s())


def register(app: typer.Typer) -> None:
    app.add_typer(monitor_app, name="monitor")


@monitor_app.command("run")
def run_command(
    traces: Annotated[
        list[Path], typer.Argument(help="Trace files: OTLP JSON lines, Phoenix JSONL/Parquet.")
    ],
    store: RequiredStore = None,
    sample: Annotated[
        str, typer.Option("--sample", help="Spans judged per window (200) or a rate (0.05).")
    ] = "100",
    window: Window = "1d",
    name: Stream = "production",
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "--measure",
            "-m",
            help="Judged measures (repeatable; default ndcg@5 and P@5(rel_level=2)).",
        ),
    ] = None,
    depth: Annotated[int, typer.Option("--depth", min=1, help="Passages judged per span.")] = 10,
    prompt: Annotated[
        str, typer.Option("--prompt", help="Relevance prompt: umbrela (0..3) or relevance (1..5).")
    ] = "umbrela",
    query_id_from: QueryIdFrom = None,
    doc_id_from: DocIdFrom = None,
    stage: MonitorStage = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Qrels to label the sampled spans with (by query id) instead of a judge; "
            "its provenance sidecar must say who made them.",
        ),
    ] = None,
    grade_map: Annotated[
        str | None,
        typer.Option(
            "--grade-map",
            help="Map grades before scoring, as evaluate's (RA-nWG reads 1..5: 0:1,1:3,2:4,3:5 "
            "for UMBRELA's 0..3).",
        ),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Write this run's sampled spans to this folder for people to label with "
            "ragmeter serve (queries, corpus, run, and their labels named by who made them).",
        ),
    ] = None,
    seed: Seed = 0,
    base_url: BaseUrl = None,
    model: Model = None,
    api_key_env: ApiKeyEnv = None,
    concurrency: Concurrency = None,
    timeout: Timeout = None,
    max_retries: MaxRetries = None,
    cache: CachePath = None,
    config_file: ConfigFile = None,
    offline: Offline = False,
    quiet: Quiet = False,
) -> None:
    """Sample each window's retriever spans (seeded), judge their passages (cached), store
    the spans, the judged samples and each window's means with 95% intervals and latency
    percentiles. A rerun on overlapping traces judges and adds only new spans."""
    from ragmeter.analysis.monitor import parse_sample, parse_window
    from ragmeter.judges.api import build_judge
    from ragmeter.judges.cache import JudgmentCache
    from ragmeter.judges.config import configured_cache
    from ragmeter.judges.progress import RichProgress
    from ragmeter.report.monitor import print_outcome
    from ragmeter.workflows import monitor as flow

    try:
        request = flow.MonitorRequest(
            traces=traces,
            store=_store(store),
            sample=parse_sample(sample),
            window_s=parse_window(window),
            stream=name,
            seed=seed,
            measures=measure or flow.DEFAULT_MEASURES,
            depth=depth,
            prompt=prompt,
            query_id_from=query_id_from,
            doc_id_from=doc_id_from,
            stage=stage,
            labels=labels,
            grade_map=grade_map,
            export=export,
        )
        if labels is not None:
            outcome = flow.run_monitor(request, None)
            print_outcome(outcome)
            return
        judge, _ = build_judge(
            prompt,
            offline=offline,
            base_urls=base_url,
            model=model,
            api_key_env=api_key_env,
            concurrency=concurrency,
            timeout=timeout,
            max_retries=max_retries,
            config_file=config_file,
        )
        cache_path = configured_cache(cache, config_file)
        with JudgmentCache(cache_path) as opened:
            progress = RichProgress("judge sampled spans", enabled=not quiet)
            outcome = flow.run_monitor(request, judge, cache=opened, progress=progress)
    except RagmeterError as exc:
        fail(exc)
    print_outcome(outcome)


def _store(url: str | None) -> str:
    if url is None:
        from ragmeter.store import default_store_url

        return default_store_url()
    return url


@monitor_app.command("check")
@option_groups
def check_command(
    fail_if: Annotated[
        list[str],
        typer.Option(
            "--fail-if",
            help='A rule of ragmeter check, e.g. "ndcg@5 drop > 0.05 significant" (repeatable).',
        ),
    ],
    stream: MonitoredStream,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            "-b",
            help="first (default with --sequential), previous (default with --per-window), a "
            "window's time (2026-01-05) or stored:REF (a saved evaluation).",
        ),
    ] = None,
    at: Annotated[
        str, typer.Option("--at", help="The window checked: latest (default) or its time.")
    ] = "latest",
    alpha: Alpha = 0.05,
    sequential: Annotated[
        bool,
        typer.Option(
            "--sequential/--per-window",
            help="Significant rules on an anytime-valid confidence sequence over every window "
            "after the baseline (default: P(ever a false alarm) ≤ α over any number of looks), "
            "or Welch's t test on the window checked alone (α at each look).",
        ),
    ] = True,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json or markdown.")] = "table",
) -> None:
    """Exit 3 (as ragmeter check) when a rule is broken against the baseline; 0 when every
    rule passes. Significant rules: a confidence sequence over the windows since the
    baseline (--sequential, the default), or Welch's t test of one window (--per-window)."""
    from ragmeter.commands.check import BROKEN
    from ragmeter.report.gate import print_table, render
    from ragmeter.workflows import monitor as flow

    if fmt not in ("table", "json", "markdown"):
        fail(RagmeterError(f"--format {fmt!r}: expected table, json or markdown"))
    try:
        request = flow.MonitorCheckRequest(
            store=stream.url(),
            rules=fail_if,
            window_s=stream.window_s(),
            stream=stream.name,
            baseline=baseline or ("first" if sequential else "previous"),
            at=at,
            alpha=alpha,
            sequential=sequential,
        )
        result = flow.check_monitor(request)
    except RagmeterError as exc:
        fail(exc)
    if fmt == "table":
        print_table(result)
    else:
        typer.echo(render(result, fmt), nl=False)  # type: ignore[arg-type]
    raise typer.Exit(code=BROKEN if result.failed else 0)


@monitor_app.command("metrics")
@option_groups
def metrics_command(
    stream: MonitoredStream,
    output: Output = None,
) -> None:
    """Print the latest window's figures in the Prometheus text exposition format."""
    from ragmeter.report.monitor import prometheus_text

    try:
        text = prometheus_text(stream.trend())
    except RagmeterError as exc:
        fail(exc)
    emit_text(text, output)


@monitor_app.command("report")
@option_groups
def report_command(
    stream: MonitoredStream,
    output: HtmlOutput = Path("monitor.html"),
) -> None:
    """Write an HTML page: per measure, each window's mean with its interval, changes
    against the previous window marked."""
    from ragmeter.report.monitor import trend_html

    try:
        html = trend_html(stream.trend())
        emit_text(html, output)
    except RagmeterError as exc:
        fail(exc)
    typer.echo(f"wrote {output}", err=True)


@monitor_app.command("ppi")
@option_groups
def ppi_command(
    human_qrels: Annotated[
        Path,
        typer.Option(
            "--human-qrels",
            help="People's labels (e.g. exported from ragmeter serve) of sampled passages.",
        ),
    ],
    stream: MonitoredStream,
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="Measures (default: the stream's)."),
    ] = None,
    grade_map: Annotated[
        str | None, typer.Option("--grade-map", help="The grade map of the monitor run.")
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0, max=1.0, help="1 − the interval's level.")
    ] = 0.05,
) -> None:
    """Correct each window's judged means with people's labels of some sampled spans
    (prediction-powered inference, cross-fit PPI++ as evaluate --ppi): the estimate of the
    mean under human labels, with its interval, printed and stored with the windows'
    figures."""
    from ragmeter.report.monitor import print_ppi
    from ragmeter.workflows import monitor as flow

    try:
        result = flow.monitor_ppi(
            stream.url(),
            stream.name,
            stream.window_s(),
            human_qrels,
            measures=measure,
            grade_map=grade_map,
            alpha=alpha,
        )
    except RagmeterError as exc:
        fail(exc)
    print_ppi(result)
    typer.echo(
        "stored with the windows' figures (ragmeter monitor report, monitor metrics, /metrics)",
        err=True,
    )


@monitor_app.command("demo")
def demo_command(
    out: Annotated[Path, typer.Argument(help="The folder to write the traces and labels in.")],
    days: Annotated[int, typer.Option("--days", min=2, help="Days of traffic.")] = 7,
    degrade_day: Annotated[
        int, typer.Option("--degrade-day", min=2, help="The first degraded day (1-based).")
    ] = 5,
    per_day: Annotated[int, typer.Option("--per-day", min=2, help="Requests per day.")] = 60,
    seed: Seed = 0,
) -> None:
    """Write a week of synthetic traffic as OTLP traces (retrieval degrading on day 5) and
    the labels of its passages, then print the commands that monitor and check it."""
    from ragmeter.workflows.monitor_demo import write_demo_week

    if degrade_day > days:
        fail(RagmeterError(f"--degrade-day {degrade_day} is after the last day ({days})"))
    files = write_demo_week(out, days=days, degrade_day=degrade_day, per_day=per_day, seed=seed)
    store = f"sqlite:///{out / 'monitor.db'}"
    typer.echo(f"wrote {files.traces} ({files.requests} requests) and {files.labels}")
    typer.echo(f"  ragmeter monitor {files.traces} --labels {files.labels} --store {store}")
    typer.echo(
        f'  ragmeter monitor check --store {store} --fail-if "ndcg@5 drop > 0.05 significant"'
    )
