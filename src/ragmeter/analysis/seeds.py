"""Several seeds or folds of one system compared as one system.

:func:`merge_groups` replaces the runs of each group by one run named after the group, whose
value on a query is the mean of its seeds' values there: v_group(q) = Σ_{s defines q} v_s(q) /
#{s defines q} (NA where no seed defines q). That run is then compared like any other (paired
tests over queries, all pairs); :func:`ragmeter.stats.seed_summaries` gives the spread across
seeds (mean ± t-interval of the seed means).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.stats.seeds import check_groups


def _merged(name: str, members: Sequence[RunResult]) -> RunResult:
    ids = np.unique(
        np.concatenate([np.asarray(r.query_ids, dtype=object).astype(str) for r in members])
    )
    stack = np.full((len(members), ids.shape[0], len(members[0].measures)), np.nan)
    for i, r in enumerate(members):
        rows = np.searchsorted(ids, np.asarray(r.query_ids, dtype=object).astype(str))
        stack[i, rows, :] = r.values
    defined = ~np.isnan(stack)
    count = defined.sum(axis=0)
    total = np.where(defined, stack, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return RunResult(
        name=name,
        query_ids=ids.astype(object),
        measures=members[0].measures,
        values=values,
        n_missing=sum(r.n_missing for r in members),
        n_skipped=sum(r.n_skipped for r in members),
        n_unjudged_queries=sum(r.n_unjudged_queries for r in members),
    )


def merge_groups(evaluation: Evaluation, groups: Mapping[str, Sequence[str]]) -> Evaluation:
    """``evaluation`` with each group's runs replaced, at the place of its first run, by one
    run of per-query means over the group's seeds (see the module docs).

    >>> import ragmeter
    >>> qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    >>> runs = {
    ...     "base": ragmeter.Run.from_lists({"q1": ["x"], "q2": ["a"]}),
    ...     "s1": ragmeter.Run.from_lists({"q1": ["a"], "q2": ["a"]}),
    ...     "s2": ragmeter.Run.from_lists({"q1": ["x", "a"], "q2": ["a"]}),
    ... }
    >>> merged = merge_groups(ragmeter.evaluate(runs, qrels, ["mrr"]), {"sys": ["s1", "s2"]})
    >>> [r.name for r in merged.runs], merged["sys"].column("mrr").tolist()
    (['base', 'sys'], [0.75, 1.0])
    """
    names = [r.name for r in evaluation.runs]
    check_groups(names, groups)
    group_of = {run: g for g, members in groups.items() for run in members}
    out: list[RunResult] = []
    done: set[str] = set()
    for r in evaluation.runs:
        group = group_of.get(r.name)
        if group is None:
            out.append(r)
        elif group not in done:
            done.add(group)
            out.append(_merged(group, [evaluation[m] for m in groups[group]]))
    return Evaluation(tuple(out), evaluation.measures, evaluation.warnings)
