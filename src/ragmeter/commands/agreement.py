"""``ragmeter agreement QRELS_A QRELS_B``: how well two labelings agree (e.g. an LLM judge
against human assessors) — the comparison CRUX reports for its judge.

On the (query, passage) pairs both files grade (a negative grade, "pooled but not judged",
is no grade): Cohen's κ unweighted, with linear and with quadratic weights over the grade
scale (every integer from the lowest to the highest grade seen, at least 1..5), the confusion
matrix (rows A = reference, columns B), per-grade precision and recall of B against A, and the
same at a binary threshold (relevant ⇔ grade ≥ T), and Krippendorff's α (nominal, ordinal,
interval). The computation is :func:`ragmeter.stats.agreement.label_agreement`.

``--grade-map 4:3,5:3`` (or ``--grade-map @FILE``, the same FROM:TO items, one or more per
line) relabels both files, then ``--clip LO:HI`` clips every grade to LO..HI (as published
LLM-judge studies do with grades outside the scale); the output counts what each changed.
"""

from __future__ import annotations

import json
import math
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.options import Output, fail
from ragmeter.errors import RagmeterError
from ragmeter.report.render import format_cell as fmt


class AgreementFormat(StrEnum):
    table = "table"
    json = "json"


def _grades(path: Path) -> dict[tuple[str, str], int]:
    from ragmeter.io.readers import read_qrels

    qrels = read_qrels(path)
    return {
        (q, d): int(g) for q, docs in qrels.to_dict().items() for d, g in docs.items() if g >= 0
    }


def agreement_report(
    a: dict[tuple[str, str], int],
    b: dict[tuple[str, str], int],
    *,
    threshold: int = 4,
    a_name: str = "A",
    b_name: str = "B",
    grade_map: dict[int, int] | None = None,
    clip: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The agreement of ``b`` against ``a`` as a JSON-ready dict (NaN → None)."""
    from ragmeter.stats.agreement import label_agreement

    r = label_agreement(
        a, b, a_name=a_name, b_name=b_name, threshold=threshold, grade_map=grade_map, clip=clip
    )
    per_binary = r.binary_per_class

    def clean(v: float) -> float | None:
        return None if isinstance(v, float) and math.isnan(v) else v

    return {
        "a": a_name,
        "b": b_name,
        "n_common": r.n,
        "only_a": len(set(a) - set(b)),
        "only_b": len(set(b) - set(a)),
        "scale": list(r.scale),
        "grade_map": {str(k): v for k, v in r.grade_map.items()},
        "clip": list(r.clip) if r.clip is not None else None,
        "relabelled": {
            "a": r.changed("a"),
            "b": r.changed("b"),
            "changes": [c.to_dict() for c in r.relabelled],
        },
        "kappa": {k: clean(v) for k, v in r.kappa.items()},
        "krippendorff_alpha": {k: clean(v) for k, v in r.alpha.items()},
        "accuracy": clean(r.accuracy),
        "confusion": r.matrix,
        "per_grade": {str(g): v for g, v in r.per_grade.items()},
        "binary": {
            "threshold": threshold,
            "kappa": clean(r.binary_kappa),
            "accuracy": clean(r.binary_accuracy),
            "confusion": r.binary_matrix,
            "relevant": per_binary[True],
            "not_relevant": per_binary[False],
        },
    }


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
        f"binary (relevant ⇔ grade ≥ {binary['threshold']}): κ {fmt(binary['kappa'])}, "
        f"accuracy {fmt(binary['accuracy'])}, precision {fmt(rel['precision'])}, "
        f"recall {fmt(rel['recall'])}, confusion {binary['confusion']}"
    )


def _print_relabelled(report: dict[str, Any], console: Any) -> None:
    """What the grade map and clipping changed, per file (nothing when neither was asked)."""
    if not report["grade_map"] and report["clip"] is None:
        return
    steps = []
    if report["grade_map"]:
        steps.append("grade map " + ",".join(f"{k}:{v}" for k, v in report["grade_map"].items()))
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


def register(app: typer.Typer) -> None:
    @app.command()
    def agreement(
        qrels_a: Annotated[Path, typer.Argument(help="Reference labels (e.g. human qrels).")],
        qrels_b: Annotated[Path, typer.Argument(help="Compared labels (e.g. LLM qrels).")],
        threshold: Annotated[
            int, typer.Option("--threshold", "-t", help="Binary: relevant ⇔ grade ≥ T.")
        ] = 4,
        grade_map: Annotated[
            str | None,
            typer.Option(
                "--grade-map",
                help="Relabel grades of both files first, e.g. 4:3,5:3, or @FILE with the "
                "same FROM:TO items (one or more per line, # comments).",
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
        fmt: Annotated[AgreementFormat, typer.Option("--format", "-f")] = AgreementFormat.table,
        output: Output = None,
    ) -> None:
        """Agreement of two qrels files (e.g. LLM vs human).

        Cohen's κ (unweighted, linear, quadratic), Krippendorff's α (nominal, ordinal,
        interval), the confusion matrix, per-grade precision and recall, and the same at a
        binary threshold; optionally after a grade map and clipping."""
        from ragmeter.stats.agreement import parse_clip, read_label_map

        try:
            report = agreement_report(
                _grades(qrels_a),
                _grades(qrels_b),
                threshold=threshold,
                a_name=qrels_a.name,
                b_name=qrels_b.name,
                grade_map=read_label_map(grade_map) if grade_map is not None else None,
                clip=parse_clip(clip) if clip is not None else None,
            )
        except (RagmeterError, ValueError) as exc:
            fail(exc)
        if fmt is AgreementFormat.json:
            text = json.dumps(report, indent=2) + "\n"
        elif output is None:  # the terminal's own width
            _print_table(report, None)
            return
        else:
            import io

            buffer = io.StringIO()
            _print_table(report, buffer)
            text = buffer.getvalue()
        if output is not None:
            from ragmeter.io._common import atomic_write_text

            atomic_write_text(output, text)
        else:
            sys.stdout.write(text)
