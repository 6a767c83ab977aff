"""``ragmeter answers``: answer correctness against human labels, context coverage, latency
(SPEC §5, seed 001), and the text metrics token F1, exact match, ROUGE-L and BLEU.

The formulas live in :mod:`ragmeter.metrics.answers`; this module reads, computes and prints.
"""

from __future__ import annotations

import json
import sys
import textwrap
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.options import FormatChoice, TableOrJson, fail
from ragmeter.errors import InputError, RagmeterError
from ragmeter.report.render import format_cell as fmt

__all__ = ["register"]

#: the names of :data:`ragmeter.metrics.answers.TEXT_METRICS` for the help (importing the
#: measure families at every start costs numpy; a test keeps the two equal)
TEXT_METRIC_NAMES = ("token_f1", "exact_match", "rouge_l", "bleu")


class Denominator(StrEnum):
    generated = "generated"
    reference = "reference"


def load_stopwords(value: str | None) -> frozenset[str] | None:
    """``--stopwords``: ``english`` (the built-in list), ``none``, or a UTF-8 file with one word
    per line (blank lines and lines starting with ``#`` skipped)."""
    from ragmeter.metrics.answers import ENGLISH_STOPWORDS

    if value is None or value == "none":
        return None
    if value == "english":
        return ENGLISH_STOPWORDS
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            "no such file; --stopwords takes 'english', 'none' or a file of words", source=value
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the stopword list: {exc}", source=value) from None
    words = (line.strip() for line in text.splitlines())
    return frozenset(w.lower() for w in words if w and not w.startswith("#"))


def register(app: typer.Typer) -> None:
    @app.command()
    def answers(
        samples: Annotated[
            Path,
            typer.Argument(
                help="JSON list of {query, context, generated_answer, reference_answer} "
                "with optional label (0/1), id, retrieved, timings; or a RAGAS / DeepEval "
                "dataset (JSON, JSONL, CSV, TSV, Parquet)."
            ),
        ],
        label: Annotated[
            int | None,
            typer.Option(
                "--label",
                min=0,
                max=1,
                help="Human label (1 correct, 0 incorrect) of samples that carry none.",
            ),
        ] = None,
        threshold: Annotated[
            float,
            typer.Option("--threshold", help="Correct ⇔ keyword overlap > this (strict)."),
        ] = 0.7,
        denominator: Annotated[
            Denominator,
            typer.Option(
                "--coverage-denominator",
                help="context_coverage over the generated answer's keywords (default) or "
                "the reference's.",
            ),
        ] = Denominator.generated,
        k: Annotated[
            int | None,
            typer.Option("--k", min=1, help="containment@k over the top k retrieved texts."),
        ] = None,
        text_metric: Annotated[
            list[str] | None,
            typer.Option(
                "--text-metric",
                "-t",
                help=f"Text metric of answer vs reference: {', '.join(TEXT_METRIC_NAMES)} or all "
                "(repeatable; default token_f1 and exact_match). bleu needs the extra 'text' "
                "and also reports corpus_bleu.",
            ),
        ] = None,
        stopwords: Annotated[
            str | None,
            typer.Option(
                "--stopwords",
                help="Drop stopwords from the keywords: 'english' (built-in list), 'none', "
                "or a file with one word per line.",
            ),
        ] = None,
        cjk: Annotated[
            bool,
            typer.Option(
                "--cjk/--no-cjk",
                help="Split runs of Chinese/Japanese characters into character bigrams "
                "(BLEU: one token per character), so CJK answers can overlap.",
            ),
        ] = False,
        rouge_stem: Annotated[
            bool,
            typer.Option(
                "--rouge-stem", help="Porter-stem words for ROUGE-L (rouge-score, extra 'text')."
            ),
        ] = False,
        per_sample: Annotated[
            bool,
            typer.Option("--per-sample", help="Table: also one row per sample (JSON always has)."),
        ] = False,
        fmt: TableOrJson = FormatChoice.table,
    ) -> None:
        """Answer accuracy, precision, recall and F1 against human labels (keyword overlap >
        threshold), context coverage, containment, token F1 / exact match / ROUGE-L / BLEU
        and latency percentiles."""
        from ragmeter.io.answers import read_answer_samples
        from ragmeter.metrics.answers import evaluate_answers

        try:
            report = evaluate_answers(
                read_answer_samples(samples),
                threshold=threshold,
                default_label=label,
                denominator=denominator.value,  # type: ignore[arg-type]
                k=k,
                text_metrics=text_metric or ("token_f1", "exact_match"),
                stopwords=load_stopwords(stopwords),
                cjk=cjk,
                rouge_stem=rouge_stem,
            )
        except (RagmeterError, ValueError) as exc:
            fail(exc)
        if fmt is FormatChoice.json:
            sys.stdout.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
            return
        _print(report, per_sample=per_sample)
        typer.echo(textwrap.fill(containment_note(report, k), width=79))


def containment_note(report: dict[str, Any], k: int | None) -> str:
    """What the table's ``containment`` is, so that a 0 is not a riddle."""
    value = report["metrics"].get("containment")
    where = f"its top {k} retrieved texts" if k is not None else "its retrieved texts"
    what = (
        f"containment: share of answers whose whole reference answer occurs word for word "
        f"(white space collapsed, case folded) in {where}."
    )
    n_with = sum(s.get("containment") is not None for s in report["per_sample"])
    if value is None:
        return f"{what} NA: no sample lists retrieved texts ('retrieved')."
    if value == 0:
        return (
            f"{what} 0 here: no reference of the {n_with} samples with retrieved texts "
            "appears verbatim, as is usual for references longer than a few words; "
            "context_coverage (shared keywords) is the measure for those."
        )
    return f"{what} Over the {n_with} samples with retrieved texts."


def _print(report: dict[str, Any], *, per_sample: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table

    from ragmeter.report.tables import fit

    console = Console()
    table = Table(title="answers", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in report["metrics"].items():
        table.add_row(name, fmt(value))
    console.print(fit(table))
    if per_sample:
        console.print(fit(_per_sample_table(report["per_sample"])))
    c = report["confusion"]
    console.print(f"confusion: TP {c['tp']}, FP {c['fp']}, TN {c['tn']}, FN {c['fn']}")
    lat = Table(title="latency (s)", title_justify="left")
    for col in ("stage", "n", "mean", "p50", "p95", "p99"):
        lat.add_column(col, justify="right" if col != "stage" else "left")
    for stage, s in report["latency"].items():
        lat.add_row(
            stage,
            f"{s['n_defined']}/{s['n']}",
            *(fmt(s[x]) for x in ("mean", "p50", "p95", "p99")),
        )
    console.print(fit(lat))


#: short headers so that the per-sample table fits 80 columns
_SHORT = {
    "keyword_overlap": "overlap",
    "correct": "pred",
    "context_coverage": "cover",
    "containment": "cont",
    "token_f1": "tok_f1",
    "exact_match": "em",
    "rouge_l": "rougeL",
    "latency": "time",
}


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.3f}"
    return fmt(value)


def _per_sample_table(rows: list[dict[str, Any]]) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(
        title="per sample",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    columns = list(rows[0]) if rows else []
    for col in columns:
        header = _SHORT.get(col, col)
        table.add_column(header, justify="left" if col == "id" else "right", min_width=len(header))
    for row in rows:
        table.add_row(*(_cell(row[col]) for col in columns))
    return table
