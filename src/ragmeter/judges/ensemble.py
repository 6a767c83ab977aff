"""Several judges on one job (an ensemble): each judge labels every pair (its own cached
requests, its own labels kept), the labels are combined by majority as umbrela's
``EnsembleJudge`` combines them (:func:`ragmeter.judges.votes.combine`: ties to the lowest
grade; a pair some judge has no label for has no combined label, never a vote of fewer
judges), and the judges' agreement is measured on the
pairs they labelled: pairwise Cohen's κ (unweighted and quadratic) and Krippendorff's α
(ordinal and nominal) over all of them (:mod:`ragmeter.stats.agreement`).

>>> result = run_ensemble(relevance_job(run, queries, corpus, prompt="umbrela"),  # doctest: +SKIP
...                       [config_a, config_b, config_c], cache="judgments.sqlite")
>>> result.labels, result.agreement.lines(), result.source.describe()      # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.core.provenance import LabelSource
from ragmeter.judges.api import Job, TaskResult, as_judge
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.config import JudgeConfig, Price
from ragmeter.judges.runner import Estimate, Missing, Progress
from ragmeter.judges.types import Judge


@dataclass(frozen=True)
class PairwiseAgreement:
    """Two judges (1-based, in the order given) on the ``n`` pairs both labelled."""

    a: int
    b: int
    n: int
    kappa: float
    kappa_quadratic: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": [self.a, self.b],
            "n": self.n,
            "kappa": _finite(self.kappa),
            "kappa_quadratic": _finite(self.kappa_quadratic),
        }


@dataclass(frozen=True)
class JudgesAgreement:
    """The agreement between an ensemble's judges: pairwise κ, and α over all judges on the
    ``units`` pairs at least two of them labelled."""

    pairwise: tuple[PairwiseAgreement, ...]
    alpha_ordinal: float
    alpha_nominal: float
    units: int

    def lines(self) -> list[str]:
        out = [
            f"agreement between the judges: Krippendorff's alpha {_fmt(self.alpha_ordinal)} "
            f"(ordinal), {_fmt(self.alpha_nominal)} (nominal) on {self.units} pairs"
        ]
        out += [
            f"  judges {p.a} and {p.b}: Cohen's kappa {_fmt(p.kappa)} "
            f"(quadratic {_fmt(p.kappa_quadratic)}) on {p.n} pairs"
            for p in self.pairwise
        ]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "krippendorff_alpha_ordinal": _finite(self.alpha_ordinal),
            "krippendorff_alpha_nominal": _finite(self.alpha_nominal),
            "units": self.units,
            "pairwise": [p.to_dict() for p in self.pairwise],
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _fmt(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "NA"


def judges_agreement(
    labels: Sequence[dict[str, dict[str, int]]], pairs: Sequence[tuple[str, str]]
) -> JudgesAgreement:
    """Pairwise Cohen's κ (unweighted; quadratic weights over the grade scale from the lowest
    to the highest grade given) and Krippendorff's α (judges × pairs, a pair a judge did not
    label is missing) of the judges' ``labels`` on ``pairs``. NA where undefined (one grade
    only, or nothing in common)."""
    import numpy as np

    from ragmeter.stats.agreement import cohen_kappa, krippendorff_alpha

    matrix = np.full((len(labels), len(pairs)), np.nan)
    for i, member in enumerate(labels):
        for j, (q, d) in enumerate(pairs):
            if d in member.get(q, {}):
                matrix[i, j] = member[q][d]
    seen = matrix[~np.isnan(matrix)]
    scale = list(range(int(seen.min()), int(seen.max()) + 1)) if seen.size else []
    pairwise = []
    for a in range(len(labels)):
        for b in range(a + 1, len(labels)):
            both = ~np.isnan(matrix[a]) & ~np.isnan(matrix[b])
            x, y = matrix[a, both].astype(int), matrix[b, both].astype(int)
            n = int(both.sum())
            kappa = cohen_kappa(x, y, labels=scale) if n else math.nan
            quad = cohen_kappa(x, y, labels=scale, weights="quadratic") if n else math.nan
            pairwise.append(PairwiseAgreement(a + 1, b + 1, n, kappa, quad))
    units = int(np.sum(np.sum(~np.isnan(matrix), axis=0) >= 2))
    return JudgesAgreement(
        tuple(pairwise),
        krippendorff_alpha(matrix, "ordinal") if units else math.nan,
        krippendorff_alpha(matrix, "nominal") if units else math.nan,
        units,
    )


@dataclass
class EnsembleResult:
    """``labels``: the combined ``{qid: {docid: grade}}``; ``members``: each judge's own
    result (its labels, summary, source); ``missing``: the pairs without a combined label;
    ``source``: the combined labels' provenance (the member judges, the aggregation, the
    samples and temperature); ``stopped``: a member run that stopped the ensemble
    (interrupted, or a fatal server error), the later judges not run."""

    labels: dict[str, dict[str, int]]
    members: list[TaskResult]
    source: LabelSource
    agreement: JudgesAgreement
    missing: list[Missing] = field(default_factory=list)
    stopped: TaskResult | None = None

    @property
    def complete(self) -> bool:
        return not self.missing and self.stopped is None

    def lines(self) -> list[str]:
        """The combination's account (after each member's own summary)."""
        n = sum(len(d) for d in self.labels.values()) + len(self.missing)
        out = [
            f"ensemble of {len(self.members)} judges ({self.source.aggregation}): "
            f"{n - len(self.missing)} of {n} pairs labelled"
        ]
        reasons: dict[str, int] = {}
        for m in self.missing:
            reasons[m.reason] = reasons.get(m.reason, 0) + 1
        out += [
            f"  {reason} {k} (some judge has no label for them: "
            "not written as a vote of fewer judges)"
            for reason, k in reasons.items()
        ]
        silent = [i for i, m in enumerate(self.members, start=1) if not any(m.labels.values())]
        if silent:
            out.append(
                f"  judge(s) {', '.join(map(str, silent))} labelled no pair "
                "(not named in the combined labels' provenance)"
            )
        return out + self.agreement.lines()

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": [m.summary.to_dict() for m in self.members],
            "pairs_labelled": sum(len(d) for d in self.labels.values()),
            "pairs_missing": len(self.missing),
            "agreement": self.agreement.to_dict(),
            "complete": self.complete,
        }


def ensemble_source(members: Sequence[LabelSource]) -> LabelSource:
    """The provenance of the combined labels: the prompt, samples and temperature its
    members share, the members themselves and :data:`~ragmeter.judges.votes.MAJORITY`."""
    from ragmeter.judges.votes import MAJORITY

    first = members[0]
    return LabelSource(
        kind="judge",
        prompt_id=first.prompt_id,
        prompt_version=first.prompt_version,
        prompt_sha256=first.prompt_sha256,
        samples=first.samples,
        temperature=first.temperature,
        aggregation=MAJORITY,
        judges=tuple(members),
    )


def run_ensemble(
    job: Job,
    judges: Sequence[Judge | JudgeConfig],
    *,
    cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
    prices: Sequence[Price | None] | None = None,
    refresh: bool = False,
    retry_unparsed: bool = False,
    progress: Callable[[int, Judge], Progress | None] | None = None,
    engine: str | None = None,
) -> EnsembleResult:
    """Run ``job`` with each of ``judges`` in turn (one cache: each judge's requests are its
    own keys), then combine their labels (a job whose labels are ``{qid: {docid: grade}}``).
    ``progress(i, judge)``: the progress of judge i (1-based). A member run that is
    interrupted or stopped by a fatal error stops the ensemble (``stopped``)."""
    from ragmeter.judges import votes

    if len(judges) < 2:
        raise ValueError(f"an ensemble needs at least 2 judges, got {len(judges)}")
    built = [as_judge(j) for j in judges]
    for judge in built:
        job.check_judge(judge)
    members: list[TaskResult] = []
    opened = cache if isinstance(cache, JudgmentCache) else JudgmentCache(cache)
    try:
        for i, judge in enumerate(built, start=1):
            result = job.execute(
                judge,
                cache=opened,
                refresh=refresh,
                retry_unparsed=retry_unparsed,
                price=(prices[i - 1] if prices is not None else _price(judges[i - 1])),
                progress=progress(i, judge) if progress is not None else None,
                engine=engine,
            )
            members.append(result)
            if result.summary.interrupted or result.summary.fatal:
                break
    finally:
        if opened is not cache:
            opened.close()
    pairs = [(str(p[0]), str(p[1])) for p in job.label_idents()]
    member_labels = [m.labels for m in members]
    labels, missing = votes.combine(member_labels, [m.missing for m in members], pairs)
    sources = labelled_sources(members)
    stopped = members[-1] if len(members) < len(built) or _stopped(members[-1]) else None
    return EnsembleResult(
        labels,
        members,
        ensemble_source(sources),
        judges_agreement(member_labels, pairs),
        missing,
        stopped,
    )


def labelled_sources(members: Sequence[TaskResult]) -> list[LabelSource]:
    """The provenance of the members that labelled at least one pair — the judges the
    combined labels' sidecar names. A judge whose replies could not be read labelled
    nothing and is not named (a combined label needs every judge, so when any pair is
    labelled this is every member). Where no member labelled anything (the combined file is
    empty) every member run is named, there being no label to attribute."""
    ran = [m for m in members if m.source is not None]
    labelled = [m for m in ran if any(m.labels.values())]
    return [m.source for m in (labelled or ran) if m.source is not None]


def _stopped(result: TaskResult) -> bool:
    return bool(result.summary.interrupted or result.summary.fatal)


def _price(judge: Judge | JudgeConfig) -> Price | None:
    return judge.price if isinstance(judge, JudgeConfig) else None


def estimate_ensemble(
    job: Job,
    judges: Sequence[Judge],
    *,
    cache: JudgmentCache,
    prices: Sequence[Price | None],
    refresh: bool = False,
    retry_unparsed: bool = False,
) -> list[Estimate]:
    """Each judge's dry run (nothing is sent)."""
    return [
        job.estimate(j, cache=cache, refresh=refresh, retry_unparsed=retry_unparsed, price=p)
        for j, p in zip(judges, prices, strict=True)
    ]


def member_path(out: str | os.PathLike[str], i: int) -> Path:
    """Where judge i's own labels go: ``OUT`` with ``.judge-i`` before its suffix
    (``qrels.txt`` → ``qrels.judge-2.txt``)."""
    p = Path(out)
    return p.with_name(f"{p.stem}.judge-{i}{p.suffix}")


def write_ensemble(
    result: EnsembleResult,
    out: str | os.PathLike[str],
    write: Callable[[Any, Path], None],
) -> list[Path]:
    """Write the combined labels to ``out`` and each judge's to :func:`member_path`, each
    with its provenance sidecar; returns the label files written, combined first."""
    from ragmeter.core.provenance import LabelProvenance
    from ragmeter.io.provenance import write_provenance

    written = [Path(out)]
    write(result.labels, Path(out))
    write_provenance(out, LabelProvenance.single(result.source))
    for i, member in enumerate(result.members, start=1):
        path = member_path(out, i)
        write(member.labels, path)
        if member.source is not None:
            write_provenance(path, LabelProvenance.single(member.source))
        written.append(path)
    return written


__all__ = [
    "EnsembleResult",
    "JudgesAgreement",
    "PairwiseAgreement",
    "ensemble_source",
    "estimate_ensemble",
    "judges_agreement",
    "member_path",
    "run_ensemble",
    "write_ensemble",
]
