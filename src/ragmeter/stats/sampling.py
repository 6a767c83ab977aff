"""Sampling designs for choosing which queries people label, with their inclusion
probabilities π_i (the chance that query i is drawn), so that an estimate weighting each
labelled query by 1/π_i stays unbiased (Horvitz–Thompson; Zrnic & Candès 2024, "Active
statistical inference").

Every design draws exactly ``n`` of the ``N`` units without replacement, so Σ_i π_i = n:

* **random** — simple random sampling: π_i = n / N.
* **stratified** — the units are cut into ``K`` (at most n) strata of (nearly) equal size by
  the rank r = 0 … N−1 of a value (e.g. a query's ndcg@10 under LLM labels): stratum
  ⌊r·K/N⌋, ties ranked in unit order, NaN last; proportional allocation
  n_h = n·N_h/N, rounded by largest remainder (ties to the lower stratum) so that Σ n_h = n;
  a simple random sample of n_h in each: π_i = n_h / N_h. With at most n strata of nearly
  equal size every stratum gets n_h ≥ 1 (a stratum that would get none is refused: its
  queries could never be drawn).
* **active** — π_i ∝ an uncertainty score u_i ≥ 0, mixed with the uniform design so that no
  probability is degenerate: π_i = n·((1 − τ)·u_i/Σu + τ/N), every π_i ≥ τ·n/N (the floor);
  probabilities above 1 are set to 1 and the excess is spread over the others in proportion
  to their π (repeated until none exceeds 1). Without any uncertainty (Σu = 0) it is the
  uniform design. Drawn by randomized systematic sampling (Goodman & Kish 1950): the units
  in a random order, a uniform start U in [0, 1), unit i drawn when one of U, U+1, …, U+n−1
  falls in its slice of the cumulated π — each unit is drawn with probability exactly π_i,
  and exactly n are drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Design",
    "active_probabilities",
    "draw",
    "proportional_allocation",
    "quantile_strata",
    "systematic_sample",
]

STRATEGIES = ("random", "stratified", "active")


@dataclass(frozen=True)
class Design:
    """A drawn sample: the chosen unit indices (ascending), every unit's π_i, and each
    unit's stratum (``None`` outside the stratified design)."""

    strategy: str
    chosen: tuple[int, ...]
    probabilities: tuple[float, ...]
    strata: tuple[int, ...] | None = None


def _check(n: int, size: int) -> None:
    if size < 1:
        raise ValueError("nothing to sample from: no unit")
    if not 1 <= n <= size:
        raise ValueError(f"n = {n}: expected 1 ≤ n ≤ {size}, the number of units")


def quantile_strata(values: Sequence[float], k: int) -> list[int]:
    """The stratum (0 … k−1) of each value: equal-size groups by rank (see the module
    docstring); NaN values sort last."""
    if k < 1:
        raise ValueError(f"strata = {k}: expected at least 1")
    v = np.asarray(values, dtype=np.float64)
    order = np.lexsort((np.arange(v.size), np.where(np.isnan(v), np.inf, v)))
    strata = np.empty(v.size, dtype=np.int64)
    strata[order] = (np.arange(v.size) * k) // max(v.size, 1)
    return [int(s) for s in strata]


def proportional_allocation(sizes: Sequence[int], n: int) -> list[int]:
    """n_h = n·N_h/N by largest remainder (Hamilton), each n_h ≤ N_h, Σ n_h = n."""
    total = sum(sizes)
    _check(n, total)
    exact = [n * s / total for s in sizes]
    alloc = [int(e) for e in exact]
    by_remainder = sorted(range(len(sizes)), key=lambda h: (-(exact[h] - alloc[h]), h))
    for h in by_remainder[: n - sum(alloc)]:
        alloc[h] += 1
    if 0 in alloc:
        raise ValueError(
            f"stratum {alloc.index(0)} would get no draw (its units could never be drawn); "
            "use fewer strata"
        )
    return alloc


def active_probabilities(uncertainty: Sequence[float], n: int, mix: float) -> list[float]:
    """π_i of the active design (module docstring): ∝ ``uncertainty``, mixed with the uniform
    design by ``mix`` (τ, 0 < τ ≤ 1), capped at 1; Σ π_i = n."""
    u = np.asarray(uncertainty, dtype=np.float64)
    _check(n, u.size)
    if not 0.0 < mix <= 1.0:
        raise ValueError(f"mix = {mix}: expected 0 < mix ≤ 1 (the uniform share)")
    if np.any(~np.isfinite(u)) or np.any(u < 0):
        raise ValueError("uncertainty scores must be finite and ≥ 0")
    total = float(u.sum())
    share = u / total if total > 0 else np.full(u.size, 1.0 / u.size)
    pi = n * ((1.0 - mix) * share + mix / u.size)
    capped = np.zeros(u.size, dtype=bool)
    while np.any(pi[~capped] > 1.0 + 1e-12):
        capped |= pi >= 1.0
        pi[capped] = 1.0
        rest = ~capped
        pi[rest] *= (n - capped.sum()) / pi[rest].sum()
    return [float(p) for p in np.minimum(pi, 1.0)]


def systematic_sample(probabilities: Sequence[float], rng: np.random.Generator) -> list[int]:
    """Randomized systematic sampling: each unit i drawn with probability π_i exactly, Σπ_i
    (an integer) units drawn; returns the indices, ascending."""
    pi = np.asarray(probabilities, dtype=np.float64)
    n = round(float(pi.sum()))
    if abs(pi.sum() - n) > 1e-6:
        raise ValueError(f"inclusion probabilities sum to {pi.sum()}, not an integer")
    order = rng.permutation(pi.size)
    upper = np.cumsum(pi[order])
    upper *= n / upper[-1]  # the last slice ends at n exactly, whatever the rounding
    points = rng.uniform() + np.arange(n)
    hit = np.searchsorted(upper, points, side="right")  # lower_j ≤ point < upper_j
    return sorted(int(i) for i in order[np.minimum(hit, pi.size - 1)])


def draw(
    strategy: str,
    n: int,
    *,
    size: int,
    seed: int,
    values: Sequence[float] | None = None,
    strata: int = 4,
    uncertainty: Sequence[float] | None = None,
    mix: float = 0.2,
) -> Design:
    """Draw ``n`` of ``size`` units by ``strategy`` (module docstring), seeded; ``values``:
    the stratified design's values, ``uncertainty``: the active design's scores."""
    _check(n, size)
    rng = np.random.default_rng(seed)
    if strategy == "random":
        chosen = rng.choice(size, n, replace=False)
        return Design(strategy, tuple(sorted(int(i) for i in chosen)), (n / size,) * size)
    if strategy == "stratified":
        if values is None or len(values) != size:
            raise ValueError("the stratified design needs one value per unit")
        of = quantile_strata(values, min(strata, n))
        return _stratified(of, n, rng)
    if strategy == "active":
        if uncertainty is None or len(uncertainty) != size:
            raise ValueError("the active design needs one uncertainty score per unit")
        pi = active_probabilities(uncertainty, n, mix)
        return Design(strategy, tuple(systematic_sample(pi, rng)), tuple(pi))
    raise ValueError(f"strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")


def _stratified(of: list[int], n: int, rng: np.random.Generator) -> Design:
    groups: dict[int, list[int]] = {}
    for i, h in enumerate(of):
        groups.setdefault(h, []).append(i)
    keys = sorted(groups)
    alloc = proportional_allocation([len(groups[h]) for h in keys], n)
    chosen: list[int] = []
    pi = np.zeros(len(of))
    for h, n_h in zip(keys, alloc, strict=True):
        members = np.asarray(groups[h])
        pi[members] = n_h / members.size
        chosen.extend(int(i) for i in rng.choice(members, n_h, replace=False))
    return Design("stratified", tuple(sorted(chosen)), tuple(float(p) for p in pi), tuple(of))
