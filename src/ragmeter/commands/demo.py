"""``ragmeter demo``: what ragmeter is for, in one command, on the shipped example collection.

Four baseline systems retrieve over the example (30 questions about a fictional city's
transit, 302 passages; :mod:`ragmeter.data`): BM25, dense (all-MiniLM-L6-v2), their hybrid
by reciprocal rank fusion, and MMR over the hybrid's top 50. Every system is evaluated on
every metric family, compared with BM25 (paired randomization test, Holm correction,
bootstrap CIs) and printed one family per table (the steps are
:mod:`ragmeter.workflows.demo`); the outputs go to ``--out``:

* ``runs/<system>.txt`` — the TREC runs;
* ``results.json`` — ``{"settings", "families", "evaluation", "comparison", "answers"}``
  (per-query values included; NA is ``null``);
* ``comparison.md`` — the comparison as a Markdown table;
* ``report.html`` — the HTML report, when this installation has it;
* the evaluation is saved into the default store when one exists (``ragmeter.store``).

Settings (the example's grades are on the 1..5 utility scale, 1 = off-topic):

* classical: relevant ⇔ grade ≥ 3 (``rel_level=3``), nDCG gains zero below 3;
* set-based: K = 10, plus a 250-token budget; PROC's pool is each system's own list, and for
  MMR the hybrid top 50 it reranked;
* coverage: the context is the top 10 (τ = 3);
* answers: the example's generated answers (seed-001 samples) against human labels, with
  ``context_coverage`` recomputed on each system's top 3 (how much of each answer that
  system's context supports).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import RagmeterError
from ragmeter.report.render import format_cell as fmt
from ragmeter.workflows.demo import (
    ANSWER_MEASURES,
    BASELINE,
    FAMILIES,
    SPAN_FAMILY,
    K,
    answer_reports,
    chunkings_side_by_side,
    compare_all,
    evaluate_all,
    example_labels,
    load_example,
    results_json,
    retrieve_all,
    save_to_store,
    write_report,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.comparison import Comparison


_MARK = {"better": "▲", "worse": "▼", "up": "△", "down": "▽", "ns": "·", "na": " "}


def family_table(
    family: str,
    measures: Sequence[str],
    evaluation: Evaluation,
    comparison: Comparison,
    *,
    title: str | None = None,
) -> Any:
    """Rows = systems, columns = the family's measures: mean and the verdict against the
    baseline."""
    from rich.table import Table

    from ragmeter.measures import parse_measure

    table = Table(title=title or f"{family} (K = {K})", title_justify="left")
    table.add_column("system")
    names = [str(parse_measure(m)) for m in measures]
    for name in names:
        table.add_column(name, justify="right")
    for run in evaluation.runs:
        cells = []
        for name in names:
            s = comparison.summary(run.name, name)
            value = "NA" if s.mean != s.mean else f"{s.mean:.4f}"
            if run.name != comparison.baseline:
                value += " " + _MARK[comparison.difference(run.name, name).verdict]
            cells.append(value)
        table.add_row(run.name, *cells)
    return table


def answers_table(answers: Mapping[str, Any], evaluation: Evaluation) -> Any:
    from rich.table import Table

    overall = answers["overall"]
    table = Table(title="answers (one set of generated answers)", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in overall["metrics"].items():
        table.add_row(name, fmt(value))
    c = overall["confusion"]
    table.add_row("confusion", f"TP {c['tp']} FP {c['fp']} TN {c['tn']} FN {c['fn']}")
    total = overall["latency"].get("total")
    if total:
        table.add_row("latency p50 / p95 (s)", f"{fmt(total['p50'])} / {fmt(total['p95'])}")
    first = evaluation.runs[0].means()
    for name in ANSWER_MEASURES:
        table.add_row(f"{name} (CRUX, sub-questions)", fmt(first.get(name)))
    for system, value in answers["context_coverage_by_system"].items():
        table.add_row(f"context_coverage by {system}'s top 3", fmt(value))
    return table


@contextmanager
def _step(progress: Progress, task: Any, label: str, seconds: dict[str, float]) -> Iterator[None]:
    progress.update(task, description=label)
    start = time.perf_counter()
    yield
    seconds[label] = round(time.perf_counter() - start, 3)
    progress.advance(task)


def run_demo(
    out: Path, *, report: bool = True, store: bool = True, console: Console | None = None
) -> dict[str, Any]:
    """Run the demo, write its files under ``out`` and print the comparison. Returns what
    was written and printed (for tests): ``{"files", "messages", "seconds"}``."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from ragmeter.io._common import atomic_write_text, writable_folder
    from ragmeter.io.trec import write_trec_run
    from ragmeter.report import comparison as render_comparison
    from ragmeter.report.tables import fit, table_console

    if console is None:
        console = table_console(wide=150)
    for folder in (out, out / "runs", out / "chunkings"):  # before 10 s of work, not after
        writable_folder(folder)
    seconds: dict[str, float] = {}
    files: list[Path] = []
    messages: list[str] = []
    started = time.perf_counter()
    stages = 13  # the labelled steps below and in retrieve_all: each advances the bar once
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("reading the example", total=stages)

        def step(label: str) -> Any:
            return _step(progress, task, label, seconds)

        with step("reading the example collection"):
            data = load_example()
        systems = retrieve_all(data, step)
        with step("writing the runs"):
            (out / "runs").mkdir(parents=True, exist_ok=True)
            for name, run in systems.runs.items():
                path = out / "runs" / f"{name.replace('+', '_')}.txt"
                write_trec_run(run, path)
                files.append(path)
        with step("evaluating every metric family"):
            evaluation = evaluate_all(data, systems)
        with step("comparing with BM25 (randomization test, bootstrap CIs)"):
            comparison = compare_all(evaluation)
        with step("answer metrics"):
            answers = answer_reports(data, systems)
        with step("three chunkings on span labels (200, 400, 800 tokens)"):
            chunked, chunk_comparison = chunkings_side_by_side(out / "chunkings")
        with step("report and store"):
            if report:
                messages.append(
                    write_report(out / "report.html", evaluation, comparison, data, systems)
                )
            if store:
                messages.append(save_to_store(evaluation, data, systems))
        with step("writing the results"):
            seconds["total"] = round(time.perf_counter() - started, 3)
            results = out / "results.json"
            atomic_write_text(results, results_json(evaluation, comparison, answers, seconds))
            markdown = out / "comparison.md"
            atomic_write_text(markdown, render_comparison.render(comparison, "markdown"))
            files += [results, markdown]
    if (out / "report.html").is_file():
        files.append(out / "report.html")
    console.print(
        f"[bold]ragmeter demo[/bold]: {len(data.queries.doc_ids)} questions, "
        f"{len(data.corpus.doc_ids)} passages; systems compared with {BASELINE} "
        "(paired randomization test, Holm; ▲ better, ▼ worse, · not significant)"
    )
    for family, measures in FAMILIES.items():
        console.print(fit(family_table(family, measures, evaluation, comparison)))
    console.print(fit(answers_table(answers, evaluation)))
    console.print(
        fit(
            family_table(
                "chunkings",
                SPAN_FAMILY,
                chunked,
                chunk_comparison,
                title="chunkings of the example's documents (BM25 top 5, span labels; "
                "against 200 tokens)",
            )
        )
    )
    messages.insert(0, f"labels: {example_labels(data).provenance}")
    for message in messages:
        console.print(message)
    console.print(f"outputs in {out}/ ({seconds['total']:.1f} s)")
    return {"files": files, "messages": messages, "seconds": seconds}


def demo_command(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output folder (runs, results, report).")
    ] = Path("ragmeter-demo"),
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write the HTML report when available.")
    ] = True,
    store: Annotated[
        bool,
        typer.Option("--store/--no-store", help="Save into the default store if it exists."),
    ] = True,
) -> None:
    """Run four baseline retrievers over the shipped example and compare them on every metric
    family (classical, set-based, coverage, answers)."""
    try:
        run_demo(out, report=report, store=store)
    except RagmeterError as exc:
        fail(exc)


def register(app: typer.Typer) -> None:
    """Add ``ragmeter demo`` to the command line."""
    app.command("demo")(demo_command)
