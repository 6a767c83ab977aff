"""A judge's calibration record, the gate that requires it, and the one line every view prints.

A **calibration** (``ragmeter agreement HUMAN LLM --save-calibration cal.json``) records how
well one LLM judge agreed with human labels: the judge's identity (from the LLM labels'
provenance sidecar, :class:`ragmeter.core.provenance.LabelSource`), the number of pairs both
label, each grade's base rate in both label sets, Cohen's κ (unweighted, linear, quadratic),
Krippendorff's ordinal α, and — when runs were given — each measure's leaderboard τ and
τ_AP with their intervals; with ragmeter's version, the date, and the SHA-256 of its own
canonical content (the JSON without the ``sha256`` key, keys sorted, no spaces, UTF-8), so
that a file edited by hand is refused when read.

**The gate** (:func:`gate`, ``ragmeter check --calibration``) passes when every LLM label of
the gated qrels was made by the calibrated judge (:meth:`LabelSource.same_judge`: same model,
prompt id, version and hash, samples, temperature, ensemble — not the server's host) and the
calibration reaches the thresholds asked (unweighted κ; the smallest leaderboard τ-b).

**Describing labels** (:func:`describe_labels`): every view that prints numbers computed on
a label file calls this one function for the line(s) to print beside them — the labels'
provenance when any label comes from a judge, and the calibration's figures when a
calibration is given or lies beside the qrels as ``<qrels>.calibration.json``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import InputError, RagmeterError

if TYPE_CHECKING:
    from ragmeter.core.provenance import LabelProvenance, LabelSource, Pair

# ragmeter.core.provenance is imported where a label source is made: describing qrels without
# a sidecar or a calibration (every evaluation's case) never needs it

FORMAT_KEY = "ragmeter_calibration"
FORMAT_VERSION = 1
#: a calibration found beside a qrels file ``Q`` is ``Q`` + this suffix
SUFFIX = ".calibration.json"


class CalibrationError(RagmeterError):
    """A calibration file that cannot be used: edited by hand, from a newer ragmeter, bad."""


class MalformedCalibration(CalibrationError, InputError):
    """A calibration whose fields are not what ragmeter writes (named with the file and the
    field): refused like an edited one, even when its hash was made again to match."""


@dataclass(frozen=True)
class Calibration:
    """A calibration record (see the module docstring); ``content`` is its JSON."""

    content: Mapping[str, Any]
    path: str | None = None

    @property
    def judge(self) -> LabelSource:
        from ragmeter.core.provenance import LabelSource

        return LabelSource.from_json(self.content["judge"])

    @property
    def n_pairs(self) -> int:
        return int(self.content["labels"]["n_pairs"])

    @property
    def kappa(self) -> float | None:
        """Unweighted Cohen's κ."""
        value = self.content["kappa"]["unweighted"]
        return None if value is None else float(value)

    @property
    def tau(self) -> float | None:
        """The smallest defined leaderboard Kendall τ-b over the measures (None without runs,
        or when none is defined; :attr:`undefined_tau` names the measures without one)."""
        taus = [m["kendall_tau"] for m in self.content.get("leaderboard") or []]
        defined = [float(t) for t in taus if t is not None]
        return min(defined) if defined else None

    @property
    def undefined_tau(self) -> list[str]:
        """The measures whose leaderboard τ-b is undefined (NA: e.g. every run tied under
        one of the two labelings): the LLM labels' ranking of runs is unknown there."""
        return [
            str(m["measure"])
            for m in self.content.get("leaderboard") or []
            if m.get("kendall_tau") is None
        ]

    def summary(self) -> str:
        """``LLM labels (umbrela, model M): κ 0.41, τ 0.87 against 4,423 human labels``."""
        figures = [f"κ {_fmt(self.kappa)}"]
        alpha = self.content.get("alpha", {}).get("ordinal")
        figures.append(f"ordinal α {_fmt(alpha)}")
        undefined = self.undefined_tau
        if self.tau is not None or undefined:
            na = f" (undefined on {', '.join(undefined)})" if undefined else ""
            figures.append(f"τ {_fmt(self.tau)}{na}")
        tau_aps = [m["tau_ap"] for m in self.content.get("leaderboard") or []]
        if any(t is not None for t in tau_aps):
            figures.append(f"τ_AP {_fmt(min(t for t in tau_aps if t is not None))}")
        from ragmeter.core.provenance import labels_head

        return (
            f"{labels_head(self.judge)}: {', '.join(figures)} against {self.n_pairs:,} human labels"
        )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.2f}"


def canonical_sha256(content: Mapping[str, Any]) -> str:
    """SHA-256 of the content without ``sha256``: JSON, keys sorted, no spaces, UTF-8."""
    import hashlib  # here: OpenSSL loads only where a digest is made (not at every start)

    body = {k: v for k, v in content.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def calibration_judge(provenance: LabelProvenance | None, pairs: Iterable[Pair]) -> LabelSource:
    """The one judge that made the LLM labels on ``pairs``; a one-line error when there is
    no sidecar, no judge, or several judges (a calibration is of one judge)."""
    if provenance is None:
        raise CalibrationError(
            "the LLM labels have no provenance sidecar, so the judge that made them is "
            "unknown: label them with `ragmeter judge` (which writes it), or name the judge "
            "with --judge-id"
        )
    common = list(pairs)
    if not common:
        # not "made by no judge": there is no label to ask the sidecar about
        raise CalibrationError(
            "the two label files grade no (query, passage) pair in common: there is nothing "
            "to calibrate the judge on (are they labels of the same queries and corpus?)"
        )
    used = {sid for sid in provenance.counts(common) if sid is not None}
    judges = {sid: provenance.sources[sid] for sid in used if provenance.sources[sid].is_llm}
    if not judges:
        raise CalibrationError(
            f"none of the {len(common):,} pairs both files grade was labelled by an LLM judge "
            "(the compared labels' sidecar says)"
        )
    distinct = {json.dumps(j.identity(), sort_keys=True) for j in judges.values()}
    if len(distinct) > 1:
        raise CalibrationError(
            f"the compared labels come from {len(distinct)} judges; a calibration is of one "
            "judge (split the labels by judge first)"
        )
    return next(iter(judges.values()))


def declared_judge(judge_id: str) -> LabelSource:
    """The judge named with ``--judge-id`` when the LLM labels carry no sidecar."""
    from ragmeter.core.provenance import LabelSource

    if not judge_id.strip():
        raise CalibrationError("--judge-id must not be empty")
    return LabelSource(kind="judge", model=judge_id, note="declared with --judge-id")


def build_calibration(
    *,
    judge: LabelSource,
    pairs: Mapping[str, Any],
    leaderboard: list[dict[str, Any]] | None,
    version: str,
    reference_origin: str = "unknown (no provenance sidecar)",
    now: datetime | None = None,
) -> dict[str, Any]:
    """The calibration's JSON content, hashed. ``pairs`` is the pair-level agreement (the
    ``agreement`` report: n_common, scale, confusion, kappa, krippendorff_alpha …);
    ``reference_origin`` what the reference labels' sidecar says of them."""
    matrix = pairs["confusion"]
    scale = pairs["scale"]
    n = int(pairs["n_common"])
    rows = [sum(r) for r in matrix]
    cols = [sum(c) for c in zip(*matrix, strict=True)] if matrix else []
    content: dict[str, Any] = {
        FORMAT_KEY: FORMAT_VERSION,
        "ragmeter_version": version,
        "created": (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "judge": judge.to_json(),
        "labels": {
            "reference": pairs["a"],
            "reference_origin": reference_origin,
            "compared": pairs["b"],
            "n_pairs": n,
            "scale": scale,
            "base_rates": {
                "reference": {
                    str(g): (r / n if n else None) for g, r in zip(scale, rows, strict=True)
                },
                "compared": {
                    str(g): (c / n if n else None) for g, c in zip(scale, cols, strict=True)
                },
            },
            "grade_map": pairs.get("grade_map", {}),
            "clip": pairs.get("clip"),
            # one-side maps only where given: records made without them keep their form
            **{key: pairs[key] for key in ("grade_map_a", "grade_map_b") if pairs.get(key)},
        },
        "kappa": dict(pairs["kappa"]),
        "alpha": {"ordinal": pairs["krippendorff_alpha"].get("ordinal")},
        "leaderboard": [
            {
                key: m[key]
                for key in ("measure", "n_runs", "kendall_tau", "tau_ap", "tau_ap_variant", "ci")
            }
            for m in leaderboard
        ]
        if leaderboard
        else None,
    }
    content["sha256"] = canonical_sha256(content)
    return content


def write_calibration(path: Path, content: Mapping[str, Any]) -> None:
    from ragmeter.io._common import atomic_write_text

    atomic_write_text(path, json.dumps(content, indent=2, ensure_ascii=False) + "\n")


def read_calibration(path: Path) -> Calibration:
    """Read and verify a calibration: a newer format or a hash that no longer matches its
    content (edited by hand) is refused with :class:`CalibrationError`."""
    from ragmeter.io._documents import loads_finite

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such calibration file", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the calibration: {exc}", source=str(path)) from None
    content = loads_finite(text, str(path))
    if not isinstance(content, dict) or FORMAT_KEY not in content:
        raise CalibrationError(f"{path}: not a ragmeter calibration (no {FORMAT_KEY!r} field)")
    version = content[FORMAT_KEY]
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CalibrationError(
            f"{path}: calibration format {version!r} comes from a newer ragmeter "
            f"({content.get('ragmeter_version', '?')}); this one reads format {FORMAT_VERSION}"
        )
    if content.get("sha256") != canonical_sha256(content):
        raise CalibrationError(
            f"{path}: its SHA-256 no longer matches its content (edited by hand?); "
            "make it again with `ragmeter agreement … --save-calibration`"
        )
    check_content(content, str(path))
    return Calibration(content, str(path))


def check_content(content: Mapping[str, Any], source: str) -> None:
    """Every field a view or the gate reads has the type ragmeter writes, else
    :class:`MalformedCalibration` naming it (the hash proves no more than that nobody edited
    the file without making it again)."""

    def bad(field: str, expected: str) -> MalformedCalibration:
        return MalformedCalibration(f"expected {expected}", source=source, field=field)

    judge = content.get("judge")
    if not isinstance(judge, dict):
        raise bad("judge", "an object (the judge's label source)")
    from ragmeter.core.provenance import LabelSource

    try:
        LabelSource.from_json(judge)
    except (TypeError, ValueError) as exc:
        raise MalformedCalibration(str(exc), source=source, field="judge") from None
    labels = content.get("labels")
    if not isinstance(labels, dict):
        raise bad("labels", "an object")
    if not _count(labels.get("n_pairs")):
        raise bad("labels.n_pairs", "a count of pairs")
    kappa = content.get("kappa")
    if not isinstance(kappa, dict) or "unweighted" not in kappa:
        raise bad("kappa", "an object with the unweighted κ")
    for key, block in (("kappa", kappa), ("alpha", content.get("alpha", {}))):
        if not isinstance(block, dict):
            raise bad(key, "an object")
        for name, value in block.items():
            if not _number(value):
                raise bad(f"{key}.{name}", "a number or null")
    board = content.get("leaderboard")
    if board is None:
        return
    if not isinstance(board, list):
        raise bad("leaderboard", "a list of measures or null")
    for i, m in enumerate(board):
        if not isinstance(m, dict) or not isinstance(m.get("measure"), str):
            raise bad(f"leaderboard[{i}]", "an object naming its measure")
        for name in ("kendall_tau", "tau_ap"):
            if name not in m or not _number(m[name]):
                raise bad(f"leaderboard[{i}].{name}", "a number or null")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


@dataclass(frozen=True)
class GateVerdict:
    """``passed`` or not, and the one-line ``reason``."""

    passed: bool
    reason: str


def gate(
    calibration: Calibration,
    provenance: LabelProvenance | None,
    pairs: Iterable[Pair],
    *,
    qrels_name: str,
    min_kappa: float | None = None,
    min_tau: float | None = None,
) -> GateVerdict:
    """Whether the qrels' LLM labels (their ``provenance`` on ``pairs``) are vouched for by
    ``calibration``, at least ``min_kappa`` (unweighted κ) and ``min_tau`` (the smallest
    leaderboard τ-b over the calibration's measures)."""
    judge = calibration.judge
    if provenance is None:
        return GateVerdict(
            False,
            f"{qrels_name} has no provenance sidecar: which judge made its labels is unknown, "
            f"so the calibration of {judge.describe()} cannot vouch for them",
        )
    if provenance.unverified is not None:
        return GateVerdict(
            False,
            f"{qrels_name}: unverified provenance ({provenance.unverified}): who made its "
            f"labels is not proven, so the calibration of {judge.describe()} cannot vouch for them",
        )
    counts = provenance.counts(pairs)
    for sid in counts:
        source = None if sid is None else provenance.sources[sid]
        if source is None:
            return GateVerdict(False, f"{qrels_name}: {counts[sid]:,} labels of unknown origin")
        if source.is_llm and not source.same_judge(judge):
            return GateVerdict(
                False,
                f"{qrels_name}: {counts[sid]:,} labels were made by another judge or prompt "
                f"({_identity(source)}) than the calibration's ({_identity(judge)})",
            )
    if not any(sid is not None and provenance.sources[sid].is_llm for sid in counts):
        return GateVerdict(True, f"{qrels_name} holds no LLM labels: nothing to vouch for")
    failures = _below(calibration, min_kappa, min_tau)
    if failures:
        return GateVerdict(False, "calibration below the threshold: " + "; ".join(failures))
    return GateVerdict(True, f"calibration holds: {calibration.summary()}")


def _identity(source: LabelSource) -> str:
    sha = f", prompt sha256 {source.prompt_sha256[:12]}" if source.prompt_sha256 else ""
    return f"{source.describe()}{sha}"


def _below(calibration: Calibration, min_kappa: float | None, min_tau: float | None) -> list[str]:
    out = []
    if min_kappa is not None:
        kappa = calibration.kappa
        if kappa is None or kappa < min_kappa:
            out.append(f"κ {_fmt(kappa)} < --min-kappa {min_kappa:g}")
    if min_tau is not None:
        tau, undefined = calibration.tau, calibration.undefined_tau
        if undefined:  # undefined is no evidence the labels rank runs as people's do
            out.append(
                f"τ undefined (NA) on {', '.join(undefined)}: --min-tau {min_tau:g} cannot "
                "be met (every run tied under one of the labelings?)"
            )
        if tau is None and not undefined:
            out.append("no leaderboard τ (the calibration was made without --runs)")
        elif tau is not None and tau < min_tau:
            out.append(f"τ {_fmt(tau)} < --min-tau {min_tau:g}")
    return out


def calibration_beside(qrels: Path) -> Path:
    """Where a calibration of the qrels ``qrels`` is looked for: ``<qrels>.calibration.json``."""
    return qrels.with_name(qrels.name + SUFFIX)


def describe_labels(
    qrels: Path,
    *,
    calibration: Path | None = None,
    pairs: Iterable[Pair] | None = None,
) -> list[str]:
    """The line(s) every view prints beside numbers computed on the labels of ``qrels``.

    The labels' provenance (:meth:`LabelProvenance.describe` on the qrels' judged pairs)
    whenever they have a sidecar — LLM, human or mixed, and ``unverified provenance (why)``
    when the sidecar does not prove it describes the file; and the calibration's figures
    when ``calibration`` is given or ``<qrels>.calibration.json`` exists — or, when the
    calibration is of another judge, a line saying that its figures do not apply. Nothing
    for labels without a sidecar and without a calibration (of unknown origin: the JSON
    outputs say so, :func:`label_description`).
    """
    from ragmeter.io.provenance import read_provenance

    provenance = read_provenance(qrels)
    calibration = _calibration_for(qrels, calibration)
    if provenance is None and calibration is None:
        return []
    judged = list(pairs) if pairs is not None else _judged_pairs(qrels)
    lines, _ = _lines(qrels, provenance, calibration, judged)
    return lines


@dataclass(frozen=True)
class LabelsDescription:
    """What the machine-readable views (JSON outputs, the store) record of the labels their
    numbers were computed on: the same :func:`describe_labels` lines, and their parts.

    ``provenance`` is one line for every case (``labels of unknown origin`` without a
    sidecar); ``llm`` whether any label comes from a judge (``None``: unknown — no sidecar,
    or no judge among the known makers while some labels' maker is unknown);
    ``n_pairs`` the judged pairs (``None``: not counted, for labels of unknown origin);
    ``counts`` the judged pairs each source made (``"unknown"``: of no known source);
    ``sources`` each source's fields (:meth:`LabelSource.to_json`); ``calibration`` the
    calibration's figures and whether they apply (``None`` without a calibration);
    ``verified`` whether the sidecar proved it describes the file (``None``: no sidecar;
    ``False``: its claims are unverified, ``llm`` is then ``None`` and ``provenance`` starts
    ``unverified provenance``).
    """

    qrels: str
    lines: tuple[str, ...]
    provenance: str
    llm: bool | None
    n_pairs: int | None
    counts: Mapping[str, int]
    sources: Mapping[str, Mapping[str, Any]]
    calibration: Mapping[str, Any] | None = None
    verified: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``labels`` object of the JSON outputs (no NaN: undefined figures are null)."""
        return {
            "qrels": self.qrels,
            "lines": list(self.lines),
            "provenance": self.provenance,
            "llm": self.llm,
            "n_pairs": self.n_pairs,
            "counts": dict(self.counts),
            "sources": {sid: dict(src) for sid, src in self.sources.items()},
            "calibration": None if self.calibration is None else dict(self.calibration),
            "verified": self.verified,
        }


def label_description(
    qrels: Path,
    *,
    calibration: Path | None = None,
    pairs: Iterable[Pair] | None = None,
    format: str | None = None,
) -> LabelsDescription:
    """The :class:`LabelsDescription` of the labels of ``qrels`` (its ``lines`` are what
    :func:`describe_labels` returns for the same arguments; ``format``: the qrels file's
    format, when its extension says otherwise)."""
    from ragmeter.io.provenance import read_provenance

    provenance = read_provenance(qrels)
    calibration = _calibration_for(qrels, calibration)
    unknown = "labels of unknown origin"
    if provenance is None and calibration is None and pairs is None:
        # nothing to count them by: the qrels are not read a second time
        return LabelsDescription(qrels.name, (), unknown, None, None, {}, {})
    judged = list(pairs) if pairs is not None else _judged_pairs(qrels, format)
    lines, figures = _lines(qrels, provenance, calibration, judged)
    if provenance is None:
        counts: dict[str, int] = {"unknown": len(judged)} if judged else {}
        return LabelsDescription(
            qrels.name, tuple(lines), unknown, None, len(judged), counts, {}, figures
        )
    counts = {
        (sid if sid is not None else "unknown"): n for sid, n in provenance.counts(judged).items()
    }
    used = {sid: provenance.sources[sid].to_json() for sid in counts if sid in provenance.sources}
    return LabelsDescription(
        qrels.name,
        tuple(lines),
        provenance.describe(judged) if judged else provenance.describe(),
        _any_llm(provenance, used, "unknown" in counts),
        len(judged),
        counts,
        used,
        figures,
        provenance.verified,
    )


def span_label_description(spans: Path) -> LabelsDescription:
    """What the span measures' outputs record of the span labels ``spans`` (the labels line
    of ``evaluate --spans`` without ``--qrels``): their sidecar's account when they have one
    (:func:`label_description` on the spans' (query, doc) pairs); else who marked each span
    where the file says (``annotator``, as the web app exports them) — ``human (alice)
    labels: 12 of 14 spans; span labels of unknown origin: 2 of 14 spans``; else nothing
    printed and ``labels of unknown origin`` recorded, as for qrels without a sidecar."""
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.spans import read_spans

    labels = read_spans(spans)
    if read_provenance(spans) is not None:
        pairs = dict.fromkeys(zip(labels.query_ids.tolist(), labels.doc_ids.tolist(), strict=True))
        return label_description(spans, pairs=[(str(q), str(d)) for q, d in pairs])
    who = Counter(labels.annotators or (None,) * len(labels))
    total = len(labels)
    parts = [
        f"{f'human ({a}) labels' if a else 'span labels of unknown origin'}: "
        f"{k:,} of {total:,} spans"
        for a, k in sorted(who.items(), key=lambda kv: (-kv[1], str(kv[0])))
    ]
    from ragmeter.core.provenance import LabelSource

    line = "; ".join(parts) if total else "labels of unknown origin"
    known = {a for a in who if a is not None}
    return LabelsDescription(
        spans.name,
        (line,) if known else (),
        line if known else "labels of unknown origin",
        None if None in who else False,
        total,
        {(f"human:{a}" if a else "unknown"): k for a, k in who.items()},
        {f"human:{a}": LabelSource(kind="human", annotator=a).to_json() for a in sorted(known)},
    )


def recorded_label_lines(labels: Mapping[str, Any] | None) -> list[str]:
    """The line(s) a view of a saved evaluation prints of its labels, from the ``labels``
    object recorded with it (:meth:`LabelsDescription.to_json`): the provenance line — said
    even for labels of unknown origin or made by people — then the calibration's line."""
    if labels is None:
        return ["not recorded (saved without a qrels file, or by an older ragmeter)"]
    lines = [str(line) for line in labels.get("lines") or []]
    provenance = str(labels.get("provenance") or "labels of unknown origin")
    return lines if provenance in lines else [provenance, *lines]


def labels_kind(labels: Mapping[str, Any] | None) -> str:
    """One word for a list of saved evaluations: ``LLM`` (some labels from a judge),
    ``human``, ``unverified`` (a sidecar that does not prove it describes the file),
    ``unknown`` (no sidecar) or ``""`` (not recorded)."""
    if labels is None:
        return ""
    if labels.get("verified") is False:
        return "unverified"
    llm = labels.get("llm")
    return "unknown" if llm is None else ("LLM" if llm else "human")


def _any_llm(provenance: LabelProvenance, used: Iterable[str], unknown: bool) -> bool | None:
    """``True`` when a judge made some label; else ``None`` when some label's maker is
    unknown (it may have been a judge) or the sidecar is unverified (its claims are not
    proven), ``False`` when every label was made by people."""
    if not provenance.verified:
        return None
    if any(provenance.sources[sid].is_llm for sid in used):
        return True
    return None if unknown else False


def _calibration_for(qrels: Path, calibration: Path | None) -> Path | None:
    if calibration is None and calibration_beside(qrels).is_file():
        return calibration_beside(qrels)
    return calibration


def _lines(
    qrels: Path,
    provenance: LabelProvenance | None,
    calibration: Path | None,
    judged: list[Pair],
) -> tuple[list[str], dict[str, Any] | None]:
    """The :func:`describe_labels` lines, and the calibration's figures (``None``: none)."""
    lines = []
    if provenance is not None:
        lines.append(provenance.describe(judged) if judged else provenance.describe())
    if calibration is None:
        return lines, None
    cal = read_calibration(calibration)
    verdict = gate(cal, provenance, judged, qrels_name=qrels.name)
    applies = verdict.passed and provenance is not None and provenance.has_llm
    if provenance is not None and not provenance.has_llm:
        lines.append(f"calibration {calibration.name} not used: {verdict.reason}")
    elif verdict.passed:
        lines.append(f"calibration: {cal.summary()}")
    else:
        lines.append(f"calibration {calibration.name} does not apply: {verdict.reason}")
    return lines, _figures(cal, calibration, applies, verdict.reason)


def _figures(cal: Calibration, path: Path, applies: bool, reason: str) -> dict[str, Any]:
    """A calibration's figures for the JSON outputs (undefined ones null, never NaN)."""
    tau_aps = [m["tau_ap"] for m in cal.content.get("leaderboard") or [] if m["tau_ap"] is not None]
    return {
        "file": path.name,
        "sha256": cal.content.get("sha256"),
        "applies": applies,
        "reason": reason,
        "judge": cal.judge.describe(),
        "n_pairs": cal.n_pairs,
        "kappa": _finite(cal.kappa),
        "alpha": _finite(cal.content.get("alpha", {}).get("ordinal")),
        "tau": _finite(cal.tau),
        "tau_ap": _finite(min(tau_aps)) if tau_aps else None,
    }


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _judged_pairs(qrels: Path, format: str | None = None) -> list[Pair]:
    from ragmeter.io.readers import read_qrels

    docs_of = read_qrels(qrels, format=format).to_dict()
    return [(q, d) for q, docs in docs_of.items() for d, g in docs.items() if g >= 0]


__all__ = [
    "SUFFIX",
    "Calibration",
    "CalibrationError",
    "GateVerdict",
    "LabelsDescription",
    "MalformedCalibration",
    "build_calibration",
    "calibration_beside",
    "calibration_judge",
    "canonical_sha256",
    "check_content",
    "declared_judge",
    "describe_labels",
    "gate",
    "label_description",
    "labels_kind",
    "read_calibration",
    "recorded_label_lines",
    "span_label_description",
    "write_calibration",
]
