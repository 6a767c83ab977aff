"""``ragmeter demo``: what ragmeter is for, in one command, on the shipped example collection.

Four baseline systems retrieve over the example (30 questions about a fictional city's
transit, 302 passages; :mod:`ragmeter.data`): BM25, dense (all-MiniLM-L6-v2), their hybrid
by reciprocal rank fusion, and MMR over the hybrid's top 50. Every system is evaluated on
every metric family, compared with BM25 (paired randomization test, Holm correction,
bootstrap CIs) and printed one family per table; the outputs go to ``--out``:

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

import importlib.util
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.commands.options import fail
from ragmeter.errors import MissingExtraError, RagmeterError
from ragmeter.report.render import format_cell as fmt

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from ragmeter.core.data import Qrels, Run
    from ragmeter.core.judgments import Answers, Corpus, Judgments
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.answers import AnswerSample
    from ragmeter.stats.comparison import Comparison

BASELINE = "bm25"
K = 10
POOL_DEPTH = 100
MMR_CANDIDATES = 50
TOKEN_BUDGET = 250
REL_LEVEL = 3

#: the measures of each family, in the order they are printed
FAMILIES: dict[str, tuple[str, ...]] = {
    "classical": ("ndcg@10(rel_level=3)", "map", "recall@20", "mrr", "P@10"),
    "set-based": (
        "ra_nwg@10",
        "proc@10",
        "pct_proc@10",
        "n_recall4p@10",
        "precision4p@10",
        "harm@10",
        f"ra_nwg@{TOKEN_BUDGET}t",
    ),
    # the context is in the name: coverage of the top K (coverage alone is the oracle |P*|)
    "coverage": (f"coverage@{K}", "alpha_ndcg@20", f"density@{K}"),
}
#: the same for every system (one set of generated answers), so shown but not compared
ANSWER_MEASURES = ("answer_coverage",)


@dataclass
class ExampleData:
    """The example collection, read with ragmeter's own readers."""

    corpus: Corpus
    queries: Corpus
    qrels: Qrels
    judgments: Judgments
    answers: Answers
    samples: list[AnswerSample]
    qrels_path: Path

    @property
    def corpus_texts(self) -> dict[str, str]:
        return dict(
            zip(self.corpus.doc_ids.to_pylist(), self.corpus.texts.to_pylist(), strict=True)
        )

    @property
    def query_texts(self) -> dict[str, str]:
        return dict(
            zip(self.queries.doc_ids.to_pylist(), self.queries.texts.to_pylist(), strict=True)
        )


def load_example() -> ExampleData:
    """Read every file of the example collection."""
    from ragmeter.data import example_path
    from ragmeter.io.answers import read_answer_samples
    from ragmeter.io.judgments import read_answers, read_corpus, read_judgments
    from ragmeter.io.readers import read_qrels

    return ExampleData(
        corpus=read_corpus(example_path("corpus.jsonl"), name="corpus"),
        queries=read_corpus(example_path("queries.jsonl"), name="queries"),
        qrels=read_qrels(example_path("qrels.txt")),
        judgments=read_judgments(
            example_path("judgments.jsonl"), questions=example_path("subquestions.jsonl")
        ),
        answers=read_answers(example_path("answers_rated.jsonl")),
        samples=read_answer_samples(example_path("answers.json")),
        qrels_path=example_path("qrels.txt"),
    )


@dataclass
class Systems:
    """The demo's runs, by name, and each one's PROC pool."""

    runs: dict[str, Run]
    pools: dict[str, Run]
    seconds: dict[str, float] = field(default_factory=dict)


def retrieve_all(data: ExampleData, step: Callable[[str], Any]) -> Systems:
    """BM25, dense, hybrid (RRF) and hybrid + MMR over the example; ``step(label)`` wraps
    each stage (progress and timing)."""
    from ragmeter.pipeline.baselines import (
        BM25Retriever,
        DenseRetriever,
        Texts,
        mmr_rerank,
        reciprocal_rank_fusion,
    )

    corpus = Texts.from_corpus(data.corpus)
    queries = Texts.from_corpus(data.queries)
    with step("BM25 (bm25s)"):
        bm25 = BM25Retriever(corpus).search(queries, depth=POOL_DEPTH, name="bm25")
    with step(f"encoding {len(corpus)} passages (all-MiniLM-L6-v2)"):
        dense_index = DenseRetriever(corpus)
    with step("dense retrieval"):
        query_rows = dense_index.encode(queries.texts, "queries")
        dense = dense_index.search(
            queries, depth=POOL_DEPTH, name="dense", query_embeddings=query_rows
        )
    with step("hybrid (reciprocal rank fusion, k = 60)"):
        hybrid = reciprocal_rank_fusion([bm25, dense], depth=POOL_DEPTH, name="hybrid")
    with step(f"MMR over the hybrid top {MMR_CANDIDATES} (λ = 0.5)"):
        mmr = mmr_rerank(
            hybrid,
            queries,
            dense_index,
            candidates=MMR_CANDIDATES,
            name="hybrid+mmr",
            query_embeddings=dict(zip(queries.ids, query_rows, strict=True)),
        )
    runs = {"bm25": bm25, "dense": dense, "hybrid": hybrid, "hybrid+mmr": mmr}
    pools = {"bm25": bm25, "dense": dense, "hybrid": hybrid, "hybrid+mmr": hybrid}
    return Systems(runs=runs, pools=pools)


def evaluate_all(data: ExampleData, systems: Systems) -> Evaluation:
    """Every family for every system (one evaluation; each system with its own pool)."""
    from ragmeter.evaluation import evaluate
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.lengths import read_passage_lengths

    measures = [m for family in FAMILIES.values() for m in family] + list(ANSWER_MEASURES)
    from ragmeter.data import example_path

    lengths = read_passage_lengths(example_path("corpus.jsonl"))
    parts = [
        evaluate(
            {name: run},
            data.qrels,
            measures,
            rel_level=REL_LEVEL,
            pool=systems.pools[name],
            pool_depth=MMR_CANDIDATES if name == "hybrid+mmr" else None,
            judgments=data.judgments,
            corpus=data.corpus,
            answers=data.answers,
            passage_lengths=lengths,
        )
        for name, run in systems.runs.items()
    ]
    return Evaluation.concat(parts)


def compare_all(evaluation: Evaluation) -> Comparison:
    """Each system against BM25 on the compared families."""
    from ragmeter.stats.comparison import compare

    compared = [m for family in FAMILIES.values() for m in family]
    return compare(evaluation, baseline=BASELINE, measures=compared)


def answer_reports(data: ExampleData, systems: Systems) -> dict[str, Any]:
    """The seed-001 answer metrics of the example's generated answers, and per system the
    context coverage of those answers by the system's own top 3."""
    from ragmeter.metrics.answers import evaluate_answers, mean_defined

    text_metrics: tuple[str, ...] = ("token_f1", "exact_match")
    if _has("rouge_score") and _has("sacrebleu"):
        text_metrics = ("token_f1", "exact_match", "rouge_l", "bleu")
    overall = evaluate_answers(data.samples, text_metrics=text_metrics)
    corpus = data.corpus_texts
    coverage: dict[str, float | None] = {}
    for name, run in systems.runs.items():
        ranked = run.ranked()
        resampled = [
            replace(
                s,
                context=tuple(corpus[d] for d in ranked.get(s.id, [])[:3]),
                retrieved=tuple(corpus[d] for d in ranked.get(s.id, [])[:5]),
            )
            for s in data.samples
        ]
        report = evaluate_answers(resampled, text_metrics=())
        coverage[name] = mean_defined([row["context_coverage"] for row in report["per_sample"]])
    return {"overall": overall, "context_coverage_by_system": coverage}


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# -- optional integrations -------------------------------------------------------------------


def write_report(
    path: Path, evaluation: Evaluation, comparison: Comparison, data: ExampleData, systems: Systems
) -> str:
    """The HTML report (:mod:`ragmeter.report.html`; needs the report extra); the message to
    print."""
    from ragmeter.report.html import write_html_report

    try:
        write_html_report(
            path,
            evaluation,
            runs=list(systems.runs.values()),
            qrels=data.qrels,
            judgments=data.judgments,
            comparison=comparison,
            baseline=BASELINE,
            k=K,
            pools={
                name: (systems.pools[name], MMR_CANDIDATES if name == "hybrid+mmr" else None)
                for name in systems.runs
            },
            rel_level=REL_LEVEL,
            title="ragmeter demo: four retrievers on the Vellmar transit example",
        )
    except MissingExtraError as exc:  # matplotlib is not installed
        return f"HTML report: skipped ({exc})"
    return f"HTML report: {path}"


def save_to_store(evaluation: Evaluation, data: ExampleData, systems: Systems) -> str:
    """Save into the default store only when it exists (:mod:`ragmeter.store`); the message
    to print."""
    from ragmeter.store import default_store_exists, default_store_url, save_evaluation

    if not default_store_exists():
        return (
            f"store: no store at {default_store_url()}, results not saved (the demo saves only "
            "into an existing store)"
        )
    try:
        saved = save_evaluation(
            evaluation,
            name="demo",
            command="demo",
            parameters={"k": K, "rel_level": REL_LEVEL, "mmr_candidates": MMR_CANDIDATES},
            qrels=data.qrels_path,
            runs=list(systems.runs.values()),
        )
    except MissingExtraError as exc:  # sqlalchemy is not installed
        return f"store: not saved ({exc})"
    return f"store: saved as evaluation {saved.id}"


# -- printing ---------------------------------------------------------------------------------

_MARK = {"better": "▲", "worse": "▼", "up": "△", "down": "▽", "ns": "·", "na": " "}


def family_table(
    family: str, measures: Sequence[str], evaluation: Evaluation, comparison: Comparison
) -> Any:
    """Rows = systems, columns = the family's measures: mean and the verdict against BM25."""
    from rich.table import Table

    from ragmeter.measures import parse_measure

    table = Table(title=f"{family} (K = {K})", title_justify="left")
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
    table = Table(
        title="answers (seed-001 samples, one set of generated answers)", title_justify="left"
    )
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


def _results_json(
    evaluation: Evaluation,
    comparison: Comparison,
    answers: Mapping[str, Any],
    seconds: Mapping[str, float],
) -> str:
    from ragmeter.measures import parse_measure

    doc = {
        "settings": {
            "baseline": BASELINE,
            "k": K,
            "rel_level": REL_LEVEL,
            "token_budget": TOKEN_BUDGET,
            "pool_depth": POOL_DEPTH,
            "mmr_candidates": MMR_CANDIDATES,
            "coverage_context_k": K,
        },
        "families": {
            **{f: [str(parse_measure(m)) for m in ms] for f, ms in FAMILIES.items()},
            "answers": [*ANSWER_MEASURES, "seed-001 answer metrics"],
        },
        "evaluation": evaluation.to_dict(per_query=True),
        "comparison": comparison.to_dict(),
        "answers": answers,
        "seconds": dict(seconds),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def run_demo(
    out: Path, *, report: bool = True, store: bool = True, console: Console | None = None
) -> dict[str, Any]:
    """Run the demo, write its files under ``out`` and print the comparison. Returns what
    was written and printed (for tests): ``{"files", "messages", "seconds"}``."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from ragmeter.io._common import atomic_write_text
    from ragmeter.io.trec import write_trec_run
    from ragmeter.report import comparison as render_comparison

    if console is None:
        console = Console()
        if not console.is_terminal:  # files and pipes get the full tables
            console.width = max(console.width, 150)
    seconds: dict[str, float] = {}
    files: list[Path] = []
    messages: list[str] = []
    started = time.perf_counter()
    stages = 11
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
        with step("report and store"):
            if report:
                messages.append(
                    write_report(out / "report.html", evaluation, comparison, data, systems)
                )
            if store:
                messages.append(save_to_store(evaluation, data, systems))
        seconds["total"] = round(time.perf_counter() - started, 3)
        results = out / "results.json"
        atomic_write_text(results, _results_json(evaluation, comparison, answers, seconds))
        markdown = out / "comparison.md"
        atomic_write_text(markdown, render_comparison.render(comparison, "markdown"))
        files += [results, markdown]
        progress.advance(task)
    if (out / "report.html").is_file():
        files.append(out / "report.html")
    console.print(
        f"[bold]ragmeter demo[/bold]: {len(data.queries.doc_ids)} questions, "
        f"{len(data.corpus.doc_ids)} passages; systems compared with {BASELINE} "
        "(paired randomization test, Holm; ▲ better, ▼ worse, · not significant)"
    )
    for family, measures in FAMILIES.items():
        console.print(family_table(family, measures, evaluation, comparison))
    console.print(answers_table(answers, evaluation))
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
