"""``ragmeter agreement QRELS_A QRELS_B``: how well two labelings agree (e.g. an LLM judge
against human assessors), pair by pair and, with ``--runs``, leaderboard by leaderboard.

On the (query, passage) pairs both files grade (a negative grade, "pooled but not judged",
is no grade): Cohen's κ unweighted, with linear and with quadratic weights over the grade
scale (every integer from the lowest to the highest grade either file holds), the confusion
matrix (rows A = reference, columns B), per-grade precision and recall of B against A, and the
same at a binary threshold (relevant ⇔ grade ≥ T; by default the scale's upper half), and
Krippendorff's α (nominal, ordinal, interval). Labels on different scales are refused.

``--grade-map 4:3,5:3`` (or ``--grade-map @FILE``, the same FROM:TO items, one or more per
line) relabels both files (``--grade-map-a`` / ``--grade-map-b``: one file each, for labels
on two scales), then ``--clip LO:HI`` clips every grade to LO..HI (as published
LLM-judge studies do with grades outside the scale); the output counts what each changed.

``--runs R1 R2 … -m ndcg@10``: Kendall τ-b, Spearman ρ, τ_AP (τ_AP-b with ties), top-k
overlap, the largest rank change, bootstrap intervals over queries.
``--save-calibration cal.json``: the judge's calibration record, for ``check --calibration``.
The work is :mod:`ragmeter.workflows.agreement`; this module parses and prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.commands.options import FormatChoice, Output, Seed, TableOrJson, fail
from ragmeter.commands.output import emit_text
from ragmeter.errors import RagmeterError
from ragmeter.report.render import format_cell as fmt

if TYPE_CHECKING:
    from ragmeter.analysis.leaderboard import LeaderboardAgreement
    from ragmeter.workflows.agreement import AgreementOutcome


def _print_table(report: dict[str, Any], file: Any) -> None:
    from rich.table import Table

    from ragmeter.report.tables import fit, table_console

    console = table_console(file, wide=120)
    console.print(
        f"{report['n_common']} pairs graded by both ({report['only_a']} only in "
        f"{report['a']}, {report['only_b']} only in {report['b']})"
    )
    _print_relabelled(report, console)
    kappa = report["kappa"]
    console.print(
        f"Cohen's κ: unweighted {fmt(kappa['unweighted'])}, linear {fmt(kappa['linear'])}, "
        f"quadratic {fmt(kappa['quadratic'])}; accuracy {fmt(report['accuracy'])}; "
        f"Krippendorff's α: "
        + ", ".join(f"{k} {fmt(v)}" for k, v in report["krippendorff_alpha"].items())
    )
    matrix = Table(title=f"confusion (rows {report['a']}, columns {report['b']})")
    matrix.add_column("", no_wrap=True)
    for g in report["scale"]:
        matrix.add_column(str(g), justify="right")
    for g, row in zip(report["scale"], report["confusion"], strict=True):
        matrix.add_row(str(g), *(str(c) for c in row))
    console.print(fit(matrix))
    grades = Table(title=f"per grade ({report['b']} against {report['a']})")
    for name in ("grade", "precision", "recall", "support"):
        grades.add_column(name, justify="right")
    for g, v in report["per_grade"].items():
        grades.add_row(g, fmt(v["precision"]), fmt(v["recall"]), str(v["support"]))
    console.print(fit(grades))
    binary = report["binary"]
    rel = binary["relevant"]
    console.print(
        f"binary (relevant ⇔ grade ≥ {binary['threshold']}, from {binary['threshold_from']}): "
        f"κ {fmt(binary['kappa'])}, "
        f"accuracy {fmt(binary['accuracy'])}, precision {fmt(rel['precision'])}, "
        f"recall {fmt(rel['recall'])}, confusion {binary['confusion']}"
    )


def _print_relabelled(report: dict[str, Any], console: Any) -> None:
    """What the grade map and clipping changed, per file (nothing when neither was asked)."""
    if not any(report[k] for k in ("grade_map", "grade_map_a", "grade_map_b", "clip")):
        return
    steps = []
    for key, whose in (("grade_map", ""), ("grade_map_a", "a"), ("grade_map_b", "b")):
        if report[key]:
            of = f" of {report[whose]}" if whose else ""
            steps.append(f"grade map{of} " + ",".join(f"{k}:{v}" for k, v in report[key].items()))
    if report["clip"] is not None:
        steps.append(f"clipped to {report['clip'][0]}..{report['clip'][1]}")
    console.print(" then ".join(steps) + ":", highlight=False)
    for side, name in (("a", report["a"]), ("b", report["b"])):
        changes = [c for c in report["relabelled"]["changes"] if c["side"] == side]
        detail = ", ".join(f"{c['from']}→{c['to']} ×{c['count']} ({c['how']})" for c in changes)
        console.print(
            f"  {name}: {report['relabelled'][side]} label(s) changed"
            + (f": {detail}" if detail else ""),
            highlight=False,
        )


def _print_leaderboard(board: LeaderboardAgreement, a: str, b: str, console: Any) -> None:
    """Per measure: the coefficients with their intervals, the rankings, overlap, changes;
    short lines (80 columns)."""
    console.print(
        f"\nleaderboard: the runs ranked under {a} (reference) and {b};\n"
        f"{board.level:.0%} intervals: {board.resamples:,} bootstrap resamples of the "
        f"queries, seed {board.seed}",
        highlight=False,
    )
    for m in board.measures:
        ci = m.ci
        variant = "τ_AP" if m.tau_ap.variant == "tau_ap" else "τ_AP-b (ties)"
        rows = (
            ("Kendall τ-b", m.kendall_tau.statistic, ci["kendall_tau"]),
            ("Spearman ρ", m.spearman.statistic, ci["spearman"]),
            (variant, m.tau_ap.value, ci["tau_ap"]),
        )
        console.print(f"{m.measure} ({len(m.ranking_a)} runs):", highlight=False)
        for name, value, interval in rows:
            console.print(
                f"  {name:<14} {fmt(value):>7} {_interval(interval.to_list())}", highlight=False
            )
        console.print(f"  ranking under {a}: {', '.join(m.ranking_a)}", highlight=False)
        console.print(f"  ranking under {b}: {', '.join(m.ranking_b)}", highlight=False)
        overlap = ", ".join(f"top {k} {fmt(v)}" for k, v in m.top_overlap.items())
        big = m.largest_change
        moved = f"{big.name} {big.rank_a} → {big.rank_b}" if big.shift else "none"
        console.print(f"  overlap: {overlap}", highlight=False)
        console.print(f"  largest rank change: {moved}", highlight=False)


def _interval(bounds: list[float | None]) -> str:
    return f"[{fmt(bounds[0])}, {fmt(bounds[1])}]"


def _render(outcome: AgreementOutcome, fmt_: FormatChoice) -> str:
    if fmt_ is FormatChoice.json:
        return json.dumps(outcome.to_dict(), indent=2) + "\n"
    import io

    buffer = io.StringIO()
    _print_outcome(outcome, buffer)
    return buffer.getvalue()


def _print_outcome(outcome: AgreementOutcome, file: Any) -> None:
    """The pairs' agreement, then the leaderboard's (``file`` None: the terminal)."""
    from ragmeter.report.tables import table_console

    _print_table(outcome.pairs, file)
    if outcome.leaderboard is not None:
        console = table_console(file, wide=120)
        _print_leaderboard(outcome.leaderboard, outcome.pairs["a"], outcome.pairs["b"], console)


Runs = Annotated[
    list[Path] | None,
    typer.Option(
        "--runs",
        help="Run files to rank under both label sets: --runs R1 R2 … (or --runs "
        "repeated); needs -m.",
    ),
]
Measures = Annotated[
    list[str] | None,
    typer.Option("--measure", "-m", help="Measure of the leaderboard (repeatable)."),
]
Resamples = Annotated[
    int,
    typer.Option("--resamples", min=1, help="Bootstrap resamples of the queries."),
]
SaveCalibration = Annotated[
    Path | None,
    typer.Option(
        "--save-calibration",
        help="Write the judge's calibration record (QRELS_B's judge against QRELS_A) "
        "for `ragmeter check --calibration`.",
    ),
]
JudgeId = Annotated[
    str | None,
    typer.Option(
        "--judge-id",
        help="Name the judge of --save-calibration when QRELS_B has no provenance "
        "sidecar (labels not made by `ragmeter judge`).",
    ),
]


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_extra_args": True})
    def agreement(
        ctx: typer.Context,
        qrels_a: Annotated[Path, typer.Argument(help="Reference labels (e.g. human qrels).")],
        qrels_b: Annotated[Path, typer.Argument(help="Compared labels (e.g. LLM qrels).")],
        threshold: Annotated[
            int | None,
            typer.Option(
                "--threshold",
                "-t",
                help="Binary: relevant ⇔ grade ≥ T (default: the upper half of the "
                "scale, printed: 2 on 0–3, 4 on 1–5).",
            ),
        ] = None,
        grade_map: Annotated[
            str | None,
            typer.Option(
                "--grade-map",
                help="Relabel grades of both files first, e.g. 4:3,5:3, or @FILE with the "
                "same FROM:TO items (one or more per line, # comments). Files on two scales "
                "need --grade-map-a/--grade-map-b instead.",
            ),
        ] = None,
        grade_map_a: Annotated[
            str | None,
            typer.Option(
                "--grade-map-a",
                help="Relabel QRELS_A's grades only (FROM:TO items or @FILE), e.g. human "
                "1-5 onto UMBRELA's 0-3: 1:0,2:1,3:2,4:3,5:3.",
            ),
        ] = None,
        grade_map_b: Annotated[
            str | None,
            typer.Option(
                "--grade-map-b",
                help="Relabel QRELS_B's grades only (FROM:TO items or @FILE); not with "
                "--grade-map.",
            ),
        ] = None,
        clip: Annotated[
            str | None,
            typer.Option(
                "--clip",
                help="Clip every grade (after --grade-map) to LO..HI, e.g. 0:3; the output "
                "counts what was clipped.",
            ),
        ] = None,
        runs: Runs = None,
        measure: Measures = None,
        resamples: Resamples = 1000,
        seed: Seed = 0,
        save_calibration: SaveCalibration = None,
        judge_id: JudgeId = None,
        fmt: TableOrJson = FormatChoice.table,
        output: Output = None,
    ) -> None:
        """Agreement of two qrels files (e.g. LLM vs human): pairs and leaderboards.

        Cohen's κ (unweighted, linear, quadratic), Krippendorff's α (nominal, ordinal,
        interval), the confusion matrix, per-grade precision and recall, and the same at a
        binary threshold; optionally after a grade map and clipping. With --runs and -m:
        Kendall τ-b, Spearman ρ and τ_AP of the runs' rankings under both label sets, with
        bootstrap intervals over queries. --save-calibration records the judge's figures
        for `ragmeter check --calibration`."""
        from ragmeter import __version__
        from ragmeter.workflows.agreement import AgreementRequest, run_agreement

        extra = [Path(arg) for arg in ctx.args]
        if extra and not runs:
            fail(RagmeterError(f"unexpected argument {ctx.args[0]!r}"))
        request = AgreementRequest(
            qrels_a=qrels_a,
            qrels_b=qrels_b,
            threshold=threshold,
            grade_map=grade_map,
            grade_map_a=grade_map_a,
            grade_map_b=grade_map_b,
            clip=clip,
            runs=[*(runs or []), *extra],
            measures=measure or [],
            resamples=resamples,
            seed=seed,
            save_calibration=save_calibration,
            judge_id=judge_id,
        )
        try:
            outcome = run_agreement(request, version=__version__)
        except (RagmeterError, ValueError) as exc:
            fail(exc)
        if fmt is FormatChoice.table and output is None:  # the terminal's own width
            _print_outcome(outcome, None)
        else:
            emit_text(_render(outcome, fmt), output)
        # the same warnings whatever the format (stderr: the output stays clean)
        for note in outcome.notes:
            typer.echo(f"warning: {note}", err=True)
        if save_calibration is not None:
            typer.echo(f"calibration written to {save_calibration}", err=True)
