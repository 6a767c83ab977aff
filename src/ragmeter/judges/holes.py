"""Hole filling: judge only the pairs of a run that the human qrels lack, and merge.

A **hole** is a (query, doc) pair of the run's top ``depth`` that the human qrels do not
grade: the pair is absent, or its grade is negative — trec_eval's "pooled but not judged",
which is no label, so the judge is asked and its grade replaces the negative one (the only
human line ever replaced). Every other human grade is kept as it is.

**Overlap** (``overlap=N``): besides the holes, up to N pairs per query that the human qrels
do grade (≥ 0) are asked too — drawn, for each query, from its judged pairs in the run's top
``depth`` by a generator seeded with ``(seed, query id)``, so a query's draw does not depend
on the other queries. On them the judge is compared with the people: Cohen's κ and
Krippendorff's α (:func:`ragmeter.stats.agreement.label_agreement`). Their judge grades never
enter the merged qrels.

**Scales.** The human grades and the judge's must be on one scale. The judge's scale is its
prompt's (``relevance``: 1–5; ``umbrela``: 0–3); a ``grade_map`` (``"1:0,2:0,3:1,4:2,5:3"``)
maps the judge's grades onto the human scale, before merging and before the agreement. A
human grade outside the (mapped) judge scale is refused before anything is asked.

**Provenance** of the merged file: the human file's own sidecar when it has one (its
sources kept), else every human label is recorded as ``human`` with the file name in the
note (ragmeter cannot know more); the filled holes are the judge's
(:meth:`ragmeter.core.provenance.LabelProvenance.merged_with`).
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.core.provenance import LabelProvenance, LabelSource, Pair
from ragmeter.errors import InputError

Grades = Mapping[str, Mapping[str, int]]

#: the grade scale of each relevance prompt, by prompt id (a task may also say ``scale``)
PROMPT_SCALES: dict[str, tuple[int, int]] = {
    "relevance": (1, 5),
    "umbrela": (0, 3),
    "umbrela-fewshot": (0, 3),
}


@dataclass(frozen=True)
class HolePlan:
    """The pairs to ask: ``holes`` and ``overlap``, per query in the run's rank order.

    ``unjudged`` counts the holes whose human grade was negative (pooled, not judged);
    ``judged_in_depth`` the run's top-``depth`` pairs the human qrels grade (≥ 0)."""

    depth: int
    holes: dict[str, list[str]]
    overlap: dict[str, list[str]] = field(default_factory=dict)
    unjudged: int = 0
    judged_in_depth: int = 0

    @property
    def n_holes(self) -> int:
        return sum(map(len, self.holes.values()))

    @property
    def n_overlap(self) -> int:
        return sum(map(len, self.overlap.values()))

    def rankings(self) -> dict[str, list[str]]:
        """``{query: [doc, …]}`` of every pair to ask (holes, then overlap), for the judge."""
        out: dict[str, list[str]] = {}
        for part in (self.holes, self.overlap):
            for q, docs in part.items():
                out.setdefault(q, []).extend(docs)
        return {q: docs for q, docs in out.items() if docs}

    def line(self) -> str:
        """One line for the command: what will be asked, and why."""
        pooled = (
            f", {self.unjudged} of them pooled but unjudged (grade < 0)" if self.unjudged else ""
        )
        text = (
            f"holes: {self.n_holes} pair(s) of the run's top {self.depth} have no human "
            f"label{pooled}; {self.judged_in_depth} have one"
        )
        if self.overlap:
            text += f"; overlap: {self.n_overlap} human-labelled pair(s) asked too"
        return text


def plan_holes(
    runs: Sequence[Any] | Any,
    human: Grades,
    *,
    depth: int,
    overlap: int = 0,
    seed: int = 0,
) -> HolePlan:
    """The holes in ``human`` of the top ``depth`` of ``runs`` (one run or several pooled:
    :func:`pooled_rankings`), and ``overlap`` judged pairs per query drawn with ``seed`` (see
    the module docstring)."""
    if depth < 1:
        raise InputError(f"--depth {depth} < 1; expected the number of pairs per query")
    if overlap < 0:
        raise InputError(f"--overlap {overlap} < 0; expected pairs per query")
    holes: dict[str, list[str]] = {}
    chosen: dict[str, list[str]] = {}
    unjudged = judged = 0
    for q, top in pooled_rankings(runs, depth).items():
        grades = human.get(q, {})
        missing = [d for d in top if grades.get(d, -1) < 0]
        known = [d for d in top if grades.get(d, -1) >= 0]
        holes[q] = missing
        unjudged += sum(1 for d in missing if d in grades)
        judged += len(known)
        if overlap and known:
            picked = set(random.Random(f"{seed}:{q}").sample(known, min(overlap, len(known))))
            chosen[q] = [d for d in known if d in picked]
    return HolePlan(depth, holes, chosen, unjudged, judged)


def judge_scale(task: Any) -> tuple[int, int] | None:
    """The grade scale of a relevance task: its own ``scale``, else its prompt id's
    (:data:`PROMPT_SCALES`); ``None`` when unknown."""
    own = getattr(task, "scale", None)
    if isinstance(own, tuple) and len(own) == 2:
        return int(own[0]), int(own[1])
    prompt = getattr(task, "prompt", None)
    prompt_id = getattr(prompt, "task", None) or getattr(task, "name", None)
    return PROMPT_SCALES.get(str(prompt_id))


def check_scales(
    human: Grades,
    scale: tuple[int, int] | None,
    *,
    grade_map: Mapping[int, int] | None = None,
    human_name: str = "human qrels",
) -> tuple[int, int] | None:
    """The judge's grade scale after ``grade_map`` (LO, HI); raises InputError naming
    ``--grade-map`` when a human grade falls outside it (the labels could not be merged)."""
    if scale is None:
        return None
    gmap = dict(grade_map or {})
    mapped = {gmap.get(g, g) for g in range(scale[0], scale[1] + 1)}
    lo, hi = min(mapped), max(mapped)
    seen = sorted({g for docs in human.values() for g in docs.values() if g >= 0})
    outside = [g for g in seen if not lo <= g <= hi]
    if outside:
        how = "mapped by --grade-map " if gmap else ""
        raise InputError(
            f"human grades {seen[0]}..{seen[-1]} and the judge's grades {how}{lo}..{hi} are "
            f"on different scales (human grade {outside[0]} is outside); give --grade-map "
            "JUDGE:HUMAN items mapping the judge's grades onto the human scale",
            source=human_name,
            field="grade",
        )
    return lo, hi


def human_provenance(existing: LabelProvenance | None, name: str) -> LabelProvenance:
    """The provenance of the human qrels: their sidecar's, else every label ``human`` with
    the file's name in the note (no sidecar: ragmeter records what it was told)."""
    if existing is not None:
        return existing
    note = f"labels of {name} (no provenance sidecar: taken as human)"
    return LabelProvenance.single(LabelSource(kind="human", note=note), "human")


@dataclass
class HoleFilling:
    """The merged qrels (``{query: {doc: grade}}``: human grades unchanged, holes filled by
    the judge), their provenance, the holes filled and those the judge left without a
    label, and the judge's agreement with the people on the overlap (``None`` without one)."""

    qrels: dict[str, dict[str, int]]
    provenance: LabelProvenance
    filled: list[Pair]
    unfilled: list[Pair]
    agreement: Any = None
    scale: tuple[int, int] | None = None

    def lines(self) -> list[str]:
        """What the command prints after judging."""
        out = [
            f"filled {len(self.filled)} hole(s)"
            + (f"; {len(self.unfilled)} left without a label" if self.unfilled else "")
        ]
        a = self.agreement
        if a is not None:
            on = f" on the scale {self.scale[0]}..{self.scale[1]}" if self.scale else ""
            kappa, alpha = a.kappa, a.alpha
            out.append(
                f"overlap: {a.n} human-labelled pair(s) judged{on}: Cohen's κ unweighted "
                f"{_fmt(kappa['unweighted'])}, linear {_fmt(kappa['linear'])}, quadratic "
                f"{_fmt(kappa['quadratic'])}; Krippendorff's α ordinal "
                f"{_fmt(alpha['ordinal'])}, nominal {_fmt(alpha['nominal'])}, interval "
                f"{_fmt(alpha['interval'])}"
            )
        return out


def _fmt(value: float) -> str:
    return "NA" if value != value else f"{value:.4f}"


def merge_holes(
    plan: HolePlan,
    judged: Grades,
    human: Grades,
    *,
    human_source: LabelProvenance,
    judge_source: LabelSource,
    grade_map: Mapping[int, int] | None = None,
    scale: tuple[int, int] | None = None,
) -> HoleFilling:
    """Merge the judge's grades of the plan's holes into ``human`` (see the module
    docstring); ``judged``: the judge's labels ``{query: {doc: grade}}`` (before the map)."""
    from ragmeter.stats.agreement import label_agreement

    gmap = dict(grade_map or {})
    merged = {q: dict(docs) for q, docs in human.items()}
    filled: list[Pair] = []
    unfilled: list[Pair] = []
    for q, docs in plan.holes.items():
        for d in docs:
            grade = judged.get(q, {}).get(d)
            if grade is None:
                unfilled.append((q, d))
                continue
            merged.setdefault(q, {})[d] = gmap.get(grade, grade)
            filled.append((q, d))
    if gmap:
        shown = ",".join(f"{k}:{v}" for k, v in sorted(gmap.items()))
        judge_source = _with_note(judge_source, f"grades mapped {shown}")
    provenance = human_source.merged_with(LabelProvenance.single(judge_source, "judge"), filled)
    agreement = None
    if plan.overlap:
        a: dict[tuple[str, str], int] = {}
        b: dict[tuple[str, str], int] = {}
        for q, docs in plan.overlap.items():
            for d in docs:
                grade = judged.get(q, {}).get(d)
                if grade is not None:
                    a[(q, d)], b[(q, d)] = int(human[q][d]), gmap.get(grade, grade)
        agreement = label_agreement(a, b, a_name="human", b_name="judge", scale=scale or (1, 5))
    return HoleFilling(merged, provenance, filled, unfilled, agreement, scale)


def _with_note(source: LabelSource, note: str) -> LabelSource:
    from dataclasses import replace

    return replace(source, note=f"{source.note}; {note}" if source.note else note)


def ordered_qrels(merged: Grades) -> Any:
    """The merged labels as :class:`~ragmeter.core.data.Qrels` (for the TREC writer)."""
    from ragmeter.core.data import Qrels

    rows = [(q, d, g) for q, docs in merged.items() for d, g in docs.items()]
    return Qrels.from_columns(
        [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], name="merged"
    )


def write_hole_filling(filling: HoleFilling, path: str | os.PathLike[str]) -> None:
    """Write the merged qrels (TREC, queries and docs in byte order) and their provenance
    sidecar beside them."""
    from ragmeter.io._common import atomic_write_text
    from ragmeter.io.provenance import write_provenance
    from ragmeter.io.trec import format_trec_qrels

    atomic_write_text(path, format_trec_qrels(ordered_qrels(filling.qrels)))
    write_provenance(path, filling.provenance)


def fill_holes(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    human: Any,
    *,
    judge: Any,
    human_name: str = "human qrels",
    human_sidecar: LabelProvenance | None = None,
    cache: Any = ":memory:",
    depth: int = 20,
    overlap: int = 0,
    seed: int = 0,
    grade_map: Mapping[int, int] | None = None,
) -> HoleFilling:
    """Judge the holes of ``runs`` (one run, or several pooled) in the ``human`` qrels
    (:class:`~ragmeter.core.data.Qrels` or ``{query: {doc: grade}}``) with the relevance
    task, and merge (see the module docstring). ``human_sidecar``: the human file's
    provenance (:func:`ragmeter.io.provenance.read_provenance`), ``None`` when it has none."""
    from ragmeter.judges.api import as_judge, relevance_job

    grades = human.to_dict() if hasattr(human, "to_dict") else human
    plan = plan_holes(runs, grades, depth=depth, overlap=overlap, seed=seed)
    job = relevance_job(plan.rankings(), queries, corpus, depth=None)
    scale = check_scales(grades, judge_scale(job.task), grade_map=grade_map, human_name=human_name)
    result = job.execute(as_judge(judge), cache=cache)
    assert result.source is not None
    return merge_holes(
        plan,
        result.labels,
        grades,
        human_source=human_provenance(human_sidecar, human_name),
        judge_source=result.source,
        grade_map=grade_map,
        scale=scale,
    )


class HoleJob:
    """Hole filling in three steps around a relevance job built by the caller (so that any
    prompt or judge option of ``ragmeter judge relevance`` applies): :meth:`plan` reads the
    human qrels and gives the pairs to ask; :meth:`check` refuses different scales before
    anything is asked; :meth:`finish` merges the judge's labels and writes the merged qrels
    with their provenance."""

    def __init__(
        self,
        qrels: str | os.PathLike[str],
        *,
        depth: int,
        overlap: int = 0,
        seed: int = 0,
        grade_map: Mapping[int, int] | None = None,
    ) -> None:
        self.qrels = qrels
        self.depth, self.overlap, self.seed = depth, overlap, seed
        self.grade_map = dict(grade_map) if grade_map else None
        self.human: dict[str, dict[str, int]] = {}
        self.planned = HolePlan(depth, {})
        self.scale: tuple[int, int] | None = None

    def plan(self, runs: Sequence[Any] | Any) -> dict[str, list[str]]:
        """Read the human qrels and plan the holes of ``runs``; the pairs to ask. A sidecar
        of the human qrels that does not prove it describes them is refused before anything
        is asked (the merged sidecar would otherwise vouch for its claims)."""
        from ragmeter.io.provenance import read_provenance, require_verified
        from ragmeter.io.readers import read_qrels

        self.human = read_qrels(self.qrels).to_dict()
        existing = read_provenance(self.qrels)
        if existing is not None:
            require_verified(existing, self.qrels)
        self.planned = plan_holes(
            runs, self.human, depth=self.depth, overlap=self.overlap, seed=self.seed
        )
        return self.planned.rankings()

    def check(self, task: Any) -> None:
        """Refuse grades on different scales (:func:`check_scales`)."""
        self.scale = check_scales(
            self.human, judge_scale(task), grade_map=self.grade_map, human_name=str(self.qrels)
        )

    def finish(self, result: Any, out: str | os.PathLike[str]) -> HoleFilling:
        """Merge ``result`` (the relevance job's :class:`~ragmeter.judges.api.TaskResult`)
        and write the merged qrels and their sidecar to ``out``."""
        from pathlib import Path

        from ragmeter.io.provenance import read_provenance

        filling = merge_holes(
            self.planned,
            result.labels,
            self.human,
            human_source=human_provenance(read_provenance(self.qrels), Path(self.qrels).name),
            judge_source=result.source,
            grade_map=self.grade_map,
            scale=self.scale,
        )
        write_hole_filling(filling, out)
        return filling


def pooled_rankings(runs: Sequence[Any] | Any, depth: int) -> dict[str, list[str]]:
    """``{query: docs}``: the top ``depth`` of each run, several runs pooled (each pair once,
    queries and docs in first-seen order, as the judge pools them); a run is a
    :class:`~ragmeter.core.data.Run` or ``{query: [docs in rank order]}``."""
    run_list: list[Any] = list(runs) if isinstance(runs, list | tuple) else [runs]
    pools: dict[str, dict[str, None]] = {}
    for run in run_list:
        ranked: Mapping[str, Sequence[str]] = run.ranked() if hasattr(run, "ranked") else run
        for q, docs in ranked.items():
            pools.setdefault(q, {}).update(dict.fromkeys(list(docs)[:depth]))
    return {q: list(docs) for q, docs in pools.items()}


__all__ = [
    "PROMPT_SCALES",
    "HoleFilling",
    "HoleJob",
    "HolePlan",
    "check_scales",
    "fill_holes",
    "human_provenance",
    "judge_scale",
    "merge_holes",
    "ordered_qrels",
    "plan_holes",
    "pooled_rankings",
    "write_hole_filling",
]
