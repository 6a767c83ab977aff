"""Commands for coverage of the retrieval context (SPEC §4; CRUX).

* ``ragmeter crux build-qrels J --out-graded G --out-diversity D``: graded qrels (required 3,
  partially redundant 2, fully redundant 1 — the released CRUX code's mapping) and diversity
  qrels ``qid subtopic docid 0/1`` (1 ⇔ rating ≥ τ), written atomically.
* ``ragmeter crux summary J``: ``|P*|``, ``|Q_ans|`` and the redundancy counts per query.
* ``ragmeter correlate RESULTS.json … --target answer_coverage``: Kendall τ-b and Spearman ρ
  between each metric's system ranking and the target's, over the runs of the results files
  (the JSON ``ragmeter evaluate -f json`` writes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.commands.options import FormatChoice, TableOrJson, fail
from ragmeter.errors import InputError, RagmeterError

crux_app = typer.Typer(
    name="crux",
    help="Coverage of the retrieval context (CRUX): qrels from sub-question judgments.",
    no_args_is_help=True,
)

CruxQuestions = Annotated[Path | None, typer.Option("--questions", help="Sub-questions JSONL.")]
CruxTau = Annotated[int, typer.Option("--tau", help="Answerable ⇔ rating ≥ tau.")]


@crux_app.command("build-qrels")
def build_qrels(
    judgments: Annotated[Path, typer.Argument(help="Sub-question judgments (JSONL, TSV, …).")],
    out_graded: Annotated[
        Path | None,
        typer.Option("--out-graded", help="Graded qrels: required 3, partly 2, fully 1."),
    ] = None,
    out_diversity: Annotated[
        Path | None,
        typer.Option("--out-diversity", help="Diversity qrels: qid subtopic docid 0/1."),
    ] = None,
    questions: CruxQuestions = None,
    tau: CruxTau = 3,
) -> None:
    """Write graded and diversity qrels derived from sub-question judgments."""
    from ragmeter.io.judgments import read_judgments, write_crux_qrels
    from ragmeter.io.provenance import carry_provenance

    if out_graded is None and out_diversity is None:
        fail(InputError("nothing to write: give --out-graded and/or --out-diversity"))
    try:
        if not 1 <= tau <= 5:
            raise InputError(f"--tau {tau}: expected 1..5")
        jud = read_judgments(judgments, questions=questions)
        skipped = write_crux_qrels(jud, graded=out_graded, diversity=out_diversity, tau=tau)
        # the ratings' makers made the labels derived from them; diversity qrels hold one
        # line per (query, subtopic, doc), not one grade per pair: their lines are hashed
        for derived, rows in ((out_graded, "qrels"), (out_diversity, "records")):
            if derived is not None:
                carry_provenance(judgments, derived, rows=rows)  # type: ignore[arg-type]
    except RagmeterError as exc:
        fail(exc)
        return
    for w in jud.warnings:
        typer.echo(f"warning: {w}", err=True)
    if skipped:
        typer.echo(
            f"warning: {skipped} quer{'y' if skipped == 1 else 'ies'} without an answerable "
            f"sub-question (rating ≥ {tau}) left out",
            err=True,
        )


@crux_app.command("summary")
def summary(
    judgments: Annotated[Path, typer.Argument(help="Sub-question judgments.")],
    questions: CruxQuestions = None,
    tau: CruxTau = 3,
) -> None:
    """Per query: sub-questions, |Q_ans|, passages, |P*| (in greedy order) and redundancy."""
    import numpy as np

    from ragmeter.io.judgments import read_judgments

    try:
        jud = read_judgments(judgments, questions=questions)
    except RagmeterError as exc:
        fail(exc)
        return
    offsets, rows = jud.required(tau)
    labels = jud.labels(tau)
    docs = jud.doc_ids.to_pylist()
    n_ans = jud.n_answerable(tau)
    out = []
    for q in range(jud.n_queries):
        a, b = int(jud.offsets[q]), int(jud.offsets[q + 1])
        lab = labels[a:b]
        out.append(
            {
                "query_id": str(jud.query_ids[q]),
                "questions": int(jud.widths[q]),
                "answerable": int(n_ans[q]),
                "passages": b - a,
                "required": [docs[r] for r in rows[offsets[q] : offsets[q + 1]].tolist()],
                "partly_redundant": int(np.sum(lab == 2)),
                "fully_redundant": int(np.sum(lab == 1)),
            }
        )
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")


def _load_results(paths: list[Path]) -> dict[str, dict[str, float]]:
    """``{run: {metric: value}}`` from ``evaluate -f json`` files (runs must be distinct)."""
    systems: dict[str, dict[str, float]] = {}
    for path in paths:
        from ragmeter.io._common import decode, read_bytes
        from ragmeter.io._documents import too_deep

        source = str(path)
        try:
            doc = json.loads(decode(read_bytes(path, lines=False), source))
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", source=source, line=exc.lineno) from None
        except RecursionError:
            raise too_deep(source) from None
        runs = doc.get("runs") if isinstance(doc, dict) else None
        if not isinstance(runs, list):
            raise InputError(
                'expected the JSON of `ragmeter evaluate -f json` ({"runs": [...]})',
                source=source,
            )
        for i, run in enumerate(runs):
            if not isinstance(run, dict) or not isinstance(run.get("metrics"), dict):
                raise InputError(f"runs[{i}] has no metrics", source=source, field="runs")
            name = str(run.get("name", f"{path.stem}#{i + 1}"))
            if name in systems:
                name = f"{path.stem}:{name}"
            if name in systems:
                raise InputError(f"run '{name}' appears twice", source=source)
            values: dict[str, float] = {}
            for metric, agg in run["metrics"].items():
                value = agg.get("mean") if isinstance(agg, dict) else agg
                if isinstance(agg, dict) and value is None:
                    value = agg.get("sum")
                values[str(metric)] = float("nan") if value is None else float(value)
            systems[name] = values
    return systems


def correlate(
    results: Annotated[
        list[Path], typer.Argument(help="Results JSON of `ragmeter evaluate -f json` (runs).")
    ],
    target: Annotated[
        str, typer.Option("--target", "-t", help="The metric the others are compared with.")
    ] = "answer_coverage",
    out_format: TableOrJson = FormatChoice.table,
    as_json: Annotated[
        bool, typer.Option("--json", hidden=True, help="The same as -f json (older spelling).")
    ] = False,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Significance level the note on small n refers to.")
    ] = 0.05,
) -> None:
    """Rank correlation (Kendall τ-b, Spearman ρ) of each metric's system ranking with the
    target's, over the runs of the results files."""
    from ragmeter.stats.correlation import rank_correlations

    try:
        systems = _load_results(results)
        if len(systems) < 2:
            raise InputError(f"{len(systems)} run(s) in the results; need at least 2 systems")
        rows = rank_correlations(systems, target, alpha=alpha)
    except KeyError as exc:
        fail(InputError(str(exc.args[0])))
        return
    except RagmeterError as exc:
        fail(exc)
        return
    if as_json or out_format is FormatChoice.json:
        doc = {
            "target": target,
            "systems": sorted(systems),
            "alpha": alpha,
            "p_methods": _P_METHODS,
            "correlations": rows,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    from ragmeter.report.tables import fit

    def fmt(v: float | None) -> str:
        return "NA" if v is None else f"{v:.4f}"

    table = Table(
        title=f"rank correlation with {target} over {len(systems)} systems", title_justify="left"
    )
    for col in ("metric", "n", "kendall τ-b", "p (τ)", "spearman ρ", "p (ρ)"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["metric"],
            str(r["n_systems"]),
            fmt(r["kendall_tau_b"]),
            f"{fmt(r['kendall_p'])} ({r['kendall_method']})",
            fmt(r["spearman_rho"]),
            f"{fmt(r['spearman_p'])} ({r['spearman_method']})",
        )
    console = Console()
    console.print(fit(table))
    console.print(f"p-values: {'; '.join(f'{k}: {v}' for k, v in _P_METHODS.items())}")
    for r in rows:
        if r["too_small"]:
            smallest = min(v for v in (r["kendall_min_p"], r["spearman_min_p"]) if v is not None)
            console.print(
                f"{r['metric']}: n = {r['n_systems']} is too small for significance: the "
                f"smallest attainable p is {smallest:.4f} > alpha {alpha}"
            )


_P_METHODS = {
    "exact": "exact null distribution (Kendall without ties n <= 50; Spearman all n! "
    "pairings, n <= 9)",
    "asymptotic": "normal approximation with tie-corrected variance (Kendall)",
    "t": "Student's t with n - 2 df (Spearman, n > 9)",
}


def register(app: typer.Typer) -> None:
    app.add_typer(crux_app, name="crux")
    app.command("correlate")(correlate)
