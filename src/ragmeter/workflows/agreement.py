"""Agreement of two label files: what ``ragmeter agreement`` does between parsing and printing.

* **Pairs**: on the (query, passage) pairs both files grade, Cohen's κ, Krippendorff's α, the
  confusion matrix, per-grade precision and recall and the same at a binary threshold
  (:func:`ragmeter.stats.agreement.label_agreement`). The scale is every grade from the
  lowest to the highest either file holds (after ``--grade-map``), or ``--clip``'s LO..HI.
  The binary threshold defaults to the scale's upper half: the smallest grade above its
  midpoint (2 on 0–3, 4 on 1–5, 1 on 0–1).
* **Scales**: when the compared labels (b) hold a grade outside the reference's (a) range —
  0–3 against 1–5 — the two are on different scales and comparing them grade by grade means
  nothing: an error naming ``--grade-map`` and ``--clip`` (``--clip`` declares the scale and
  lifts the check).
* **Grade maps**: ``--grade-map`` relabels both files; ``--grade-map-a`` / ``--grade-map-b``
  one file each (labels on two scales — UMBRELA's 0–3 against human 1–5 — need a map per
  side). A map for both files is refused where it would rewrite a grade that both files hold
  while their scales differ (the same number meaning two grades), and so is ``--grade-map``
  together with a one-side map.
* **Leaderboard** (with runs): every run is evaluated under both label files by
  :func:`ragmeter.evaluate` with ``evaluate``'s default settings — the label files as they
  are, so each score is what ``ragmeter evaluate`` prints for that run on that file — and
  :func:`ragmeter.analysis.leaderboard.leaderboard_agreement` compares the rankings.
* **Calibration**: with ``save_calibration``, the record of
  :mod:`ragmeter.analysis.calibration`, computed on the pairs the judge made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.analysis.leaderboard import LeaderboardAgreement
    from ragmeter.core.provenance import LabelProvenance, LabelSource, Pair

Grades = dict[tuple[str, str], int]


@dataclass(frozen=True)
class AgreementRequest:
    """What ``ragmeter agreement`` was asked."""

    qrels_a: Path
    qrels_b: Path
    threshold: int | None = None
    grade_map: str | None = None
    clip: str | None = None
    runs: Sequence[Path] = ()
    #: a grade map of one file only (``--grade-map-a`` / ``--grade-map-b``)
    grade_map_a: str | None = None
    grade_map_b: str | None = None
    measures: Sequence[str] = ()
    resamples: int = 1000
    seed: int = 0
    save_calibration: Path | None = None
    judge_id: str | None = None


@dataclass(frozen=True)
class AgreementOutcome:
    """The pair-level report (JSON-ready), the leaderboard agreement, the notes to print."""

    pairs: dict[str, Any]
    leaderboard: LeaderboardAgreement | None = None
    notes: list[str] = field(default_factory=list)
    calibration: dict[str, Any] | None = None
    #: what each label file's labels are, ``{"reference": …, "compared": …}`` (each the
    #: ``to_json()`` of :class:`ragmeter.analysis.calibration.LabelsDescription`)
    labels: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.pairs)
        if self.leaderboard is not None:
            out["leaderboard"] = self.leaderboard.to_list()
            out["leaderboard_queries"] = self.leaderboard.coverage.to_dict()
        if self.calibration is not None:
            out["calibration"] = {"sha256": self.calibration["sha256"]}
        if self.labels is not None:
            out["labels"] = self.labels
        return out


def read_grades(path: Path) -> Grades:
    """The judged (query, doc) pairs of a label file and their grades (negative: unjudged)."""
    from ragmeter.io.readers import read_qrels

    qrels = read_qrels(path)
    return {
        (q, d): int(g) for q, docs in qrels.to_dict().items() for d, g in docs.items() if g >= 0
    }


def default_threshold(scale: Sequence[int]) -> int:
    """The smallest grade above the scale's midpoint: 2 on 0–3, 4 on 1–5, 1 on 0–1."""
    lo, hi = min(scale), max(scale)
    return math.floor((lo + hi) / 2) + 1


def check_scales(a: Grades, b: Grades, a_name: str, b_name: str) -> None:
    """An error when ``b`` holds a grade outside the range of ``a``'s grades."""
    if not a or not b:
        return
    lo, hi = min(a.values()), max(a.values())
    outside = sorted({g for g in b.values() if not lo <= g <= hi})
    if outside:
        b_lo, b_hi = min(b.values()), max(b.values())
        shown = ", ".join(map(str, outside[:5]))
        raise RagmeterError(
            f"{b_name} has grades {b_lo}–{b_hi} and {a_name} {lo}–{hi} ({b_name}'s "
            f"{shown} outside): the label sets are on different scales; map one onto the "
            f"other with --grade-map (e.g. --grade-map {_example_map(outside, hi)}), a map "
            f"per file (--grade-map-a, --grade-map-b: two scales such as 0–3 and 1–5) or "
            f"--clip {lo}:{hi}"
        )


def _example_map(outside: list[int], hi: int) -> str:
    return ",".join(f"{g}:{hi}" for g in outside[:3])


def _span(grades: Grades) -> str:
    return f"{min(grades.values())}–{max(grades.values())}" if grades else "none"


def check_grade_maps(
    a: Grades,
    b: Grades,
    *,
    grade_map: dict[int, int] | None,
    grade_map_a: dict[int, int] | None,
    grade_map_b: dict[int, int] | None,
    a_name: str = "A",
    b_name: str = "B",
) -> None:
    """An error for a grade map that cannot say which file's grade it means: ``grade_map``
    (both files) beside a one-side map, or ``grade_map`` naming a grade both files hold while
    their grade ranges differ (grade 1 on 0–3 and grade 1 on 1–5 are different grades)."""
    if grade_map and (grade_map_a or grade_map_b):
        raise RagmeterError(
            "--grade-map relabels both files: give it alone, or give each file its own map "
            "with --grade-map-a and --grade-map-b"
        )
    if not grade_map or not a or not b:
        return
    range_a = (min(a.values()), max(a.values()))
    range_b = (min(b.values()), max(b.values()))
    if range_a == range_b:
        return
    shared = sorted(set(grade_map) & set(a.values()) & set(b.values()))
    if shared:
        shown = ", ".join(map(str, shared[:5]))
        raise RagmeterError(
            f"--grade-map relabels both files, and {a_name} ({_span(a)}) and {b_name} "
            f"({_span(b)}) are on different scales: grade(s) {shown} of the map are in both, "
            "where they mean different grades, and would be rewritten in both; give each "
            f"file its own map: --grade-map-a for {a_name}, --grade-map-b for {b_name}"
        )


def pair_report(
    a: Grades,
    b: Grades,
    *,
    threshold: int | None = None,
    a_name: str = "A",
    b_name: str = "B",
    grade_map: dict[int, int] | None = None,
    clip: tuple[int, int] | None = None,
    grade_map_a: dict[int, int] | None = None,
    grade_map_b: dict[int, int] | None = None,
) -> dict[str, Any]:
    """The agreement of ``b`` against ``a`` as a JSON-ready dict (NaN → None); see the
    module docstring for the grade maps, the scale, its check and the default threshold."""
    from ragmeter.stats.agreement import label_agreement, relabel

    check_grade_maps(
        a,
        b,
        grade_map=grade_map,
        grade_map_a=grade_map_a,
        grade_map_b=grade_map_b,
        a_name=a_name,
        b_name=b_name,
    )
    mapped_a, _ = relabel(a, grade_map=grade_map_a or grade_map, clip=clip)
    mapped_b, _ = relabel(b, grade_map=grade_map_b or grade_map, clip=clip)
    if clip is None:
        check_scales(mapped_a, mapped_b, a_name, b_name)
    seen = [*mapped_a.values(), *mapped_b.values()] or [0, 1]
    scale = clip if clip is not None else (min(seen), max(seen))
    chosen = threshold if threshold is not None else default_threshold(scale)
    r = label_agreement(
        a,
        b,
        a_name=a_name,
        b_name=b_name,
        scale=scale,
        threshold=chosen,
        clip=clip,
        grade_map=grade_map,
        grade_map_a=grade_map_a,
        grade_map_b=grade_map_b,
    )
    return _report_dict(r, a, b, chosen, threshold is None)


def _clean(v: float) -> float | None:
    return None if isinstance(v, float) and math.isnan(v) else v


def _report_dict(r: Any, a: Grades, b: Grades, threshold: int, default: bool) -> dict[str, Any]:
    per_binary = r.binary_per_class
    return {
        "a": r.a,
        "b": r.b,
        "n_common": r.n,
        "only_a": len(set(a) - set(b)),
        "only_b": len(set(b) - set(a)),
        "scale": list(r.scale),
        "grade_map": {str(k): v for k, v in r.grade_map.items()},
        "grade_map_a": {str(k): v for k, v in r.grade_map_a.items()},
        "grade_map_b": {str(k): v for k, v in r.grade_map_b.items()},
        "clip": list(r.clip) if r.clip is not None else None,
        "relabelled": {
            "a": r.changed("a"),
            "b": r.changed("b"),
            "changes": [c.to_dict() for c in r.relabelled],
        },
        "kappa": {k: _clean(v) for k, v in r.kappa.items()},
        "krippendorff_alpha": {k: _clean(v) for k, v in r.alpha.items()},
        "accuracy": _clean(r.accuracy),
        "confusion": r.matrix,
        "per_grade": {str(g): v for g, v in r.per_grade.items()},
        "binary": {
            "threshold": threshold,
            "threshold_from": "the scale's upper half" if default else "--threshold",
            "kappa": _clean(r.binary_kappa),
            "accuracy": _clean(r.binary_accuracy),
            "confusion": r.binary_matrix,
            "relevant": per_binary[True],
            "not_relevant": per_binary[False],
        },
    }


def run_agreement(request: AgreementRequest, *, version: str) -> AgreementOutcome:
    """Pairs, then the leaderboard (with runs), then the calibration (when asked)."""
    from ragmeter.io.provenance import read_provenance
    from ragmeter.stats.agreement import parse_clip, read_label_map

    if request.measures and not request.runs:
        raise RagmeterError("-m/--measure needs --runs: the leaderboard is of runs")
    if request.runs and not request.measures:
        raise RagmeterError("--runs needs at least one -m/--measure (e.g. -m ndcg@10)")
    try:
        grade_map, map_a, map_b = (
            read_label_map(value) if value is not None else None
            for value in (request.grade_map, request.grade_map_a, request.grade_map_b)
        )
        clip = parse_clip(request.clip) if request.clip is not None else None
    except ValueError as exc:
        raise RagmeterError(str(exc)) from None
    a, b = read_grades(request.qrels_a), read_grades(request.qrels_b)
    prov_b = read_provenance(request.qrels_b)
    judge = _judge(request, prov_b, sorted(set(a) & set(b)))
    notes = _reference_notes(request.qrels_a)
    if prov_b is not None and prov_b.unverified is not None:
        notes.append(  # like --judge-id, the judge is then as declared, not proven
            f"{request.qrels_b.name}: unverified provenance ({prov_b.unverified}); the judge "
            "it names is taken as declared"
        )
    if judge is not None and prov_b is not None:
        own = _made_by(b, prov_b, judge)  # a calibration is of the judge's own labels
        if len(own) < len(b):
            notes.append(
                f"only the {len(own):,} labels of {request.qrels_b.name} made by the judge "
                f"count; {len(b) - len(own):,} made by others are left out"
            )
        b = own
    pairs = pair_report(
        a,
        b,
        threshold=request.threshold,
        grade_map=grade_map,
        grade_map_a=map_a,
        grade_map_b=map_b,
        clip=clip,
        a_name=request.qrels_a.name,
        b_name=request.qrels_b.name,
    )
    board = _leaderboard(request) if request.runs else None
    if board is not None:
        notes.extend(board.coverage.notes(request.qrels_a.name, request.qrels_b.name))
        notes.extend(board.warnings)
    calibration = None
    if request.save_calibration is not None and judge is not None:
        from ragmeter.analysis.calibration import build_calibration, write_calibration

        calibration = build_calibration(
            judge=judge,
            pairs=pairs,
            leaderboard=board.to_list() if board is not None else None,
            version=version,
            reference_origin=_origin(request.qrels_a),
        )
        write_calibration(request.save_calibration, calibration)
    return AgreementOutcome(pairs, board, notes, calibration, _labels(request))


def _labels(request: AgreementRequest) -> dict[str, Any]:
    """What each label file's labels are (its provenance, a calibration found beside it)."""
    from ragmeter.analysis.calibration import label_description

    return {
        "reference": label_description(request.qrels_a).to_json(),
        "compared": label_description(request.qrels_b).to_json(),
    }


def _judge(
    request: AgreementRequest, provenance: LabelProvenance | None, common: list[Pair]
) -> LabelSource | None:
    """The judge a calibration is made of (None when no calibration is asked)."""
    from ragmeter.analysis.calibration import calibration_judge, declared_judge

    if request.save_calibration is None:
        if request.judge_id is not None:
            raise RagmeterError("--judge-id names the judge of --save-calibration; give both")
        return None
    if provenance is None and request.judge_id is not None:
        return declared_judge(request.judge_id)
    if provenance is not None and request.judge_id is not None:
        raise RagmeterError(
            f"{request.qrels_b.name} has a provenance sidecar naming its judge: drop --judge-id"
        )
    return calibration_judge(provenance, common)


def _made_by(b: Grades, provenance: LabelProvenance, judge: LabelSource) -> Grades:
    return {
        pair: g
        for pair, g in b.items()
        if (src := provenance.source_of(*pair)) is not None and src.same_judge(judge)
    }


def _origin(path: Path) -> str:
    from ragmeter.io.provenance import read_provenance

    provenance = read_provenance(path)
    return "unknown (no provenance sidecar)" if provenance is None else provenance.describe()


def _reference_notes(qrels_a: Path) -> list[str]:
    """A warning when the reference labels are themselves LLM labels (their sidecar says)."""
    from ragmeter.io.provenance import read_provenance

    provenance = read_provenance(qrels_a)
    if provenance is not None and provenance.unverified is not None:
        return [f"the reference {qrels_a.name}: {provenance.describe()}"]
    if provenance is not None and provenance.has_llm:
        return [f"the reference {qrels_a.name} holds LLM labels: {provenance.describe()}"]
    return []


def _leaderboard(request: AgreementRequest) -> LeaderboardAgreement:
    from ragmeter.analysis.leaderboard import leaderboard_agreement
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels
    from ragmeter.workflows.evaluate import distinct_names, read_runs

    runs = distinct_names(read_runs(request.runs), list(request.runs))
    measures = list(request.measures)
    eval_a = evaluate(runs, read_qrels(request.qrels_a), measures)
    eval_b = evaluate(runs, read_qrels(request.qrels_b), measures)
    board = leaderboard_agreement(eval_a, eval_b, resamples=request.resamples, seed=request.seed)
    warnings = tuple(dict.fromkeys([*eval_a.warnings, *eval_b.warnings]))
    from dataclasses import replace

    return replace(board, warnings=warnings)
