"""Coverage study of the prediction-powered intervals (``ragmeter.stats.ppi``).

Each draw makes a fresh collection of M queries: the measure under human labels
``Y ~ Beta(2, 3)`` (true mean 0.4) and under a biased, noisy judge
``Ŷ = clip(0.15 + 0.7·Y + σ·ε, 0, 1)``, ``ε ~ N(0, 1)``, with a per-query noise ``σ ~ U(0.02,
0.3)`` the judge knows (its disagreement across samples). Then n of the M queries are
labelled, by one of three designs:

* random: a uniform sample of n queries (PPI++ and classic PPI, ppi-python's conventions);
* stratified: four strata by quartiles of Ŷ, n split across them in proportion to
  ``N_h · mean σ`` (Neyman allocation with σ as the proxy), a uniform sample of fixed size
  within each; ``π = n_h / N_h``; and the same strata with each query labelled
  independently with probability ``n_h / N_h`` (Poisson sampling: the estimator's variance
  assumes independent inclusions, so it is exact there and conservative for fixed sizes);
* active: each query labelled independently with ``π = ½·n·σ/Σσ + ½·n/M`` (mean n; half by
  the judge's noise, half uniform so that no weight is huge), as in Zrnic & Candès (2024).

The weighted designs use the inverse-probability estimator (``weights = 1/π``). The table
gives how often the 1 − α interval covers the true mean 0.4 and its mean width, for PPI, the
human labels alone (the classical interval on the n labelled queries, weighted for the
designs) and the LLM labels alone.

    python benchmarks/ppi_coverage.py [--draws 2000] [--queries 500] [--labelled 40]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from ragmeter.stats.ppi import PPIEstimate, ppi_mean

TRUE_MEAN = 0.4  # mean of Beta(2, 3)


def collection(rng: np.random.Generator, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human values, the judge's values and the judge's known noise, for m queries."""
    y = rng.beta(2.0, 3.0, m)
    sigma = rng.uniform(0.02, 0.3, m)
    yhat = np.clip(0.15 + 0.7 * y + sigma * rng.standard_normal(m), 0.0, 1.0)
    return y, yhat, sigma


def random_design(
    rng: np.random.Generator, yhat: np.ndarray, sigma: np.ndarray, n: int
) -> tuple[np.ndarray, None]:
    return rng.choice(yhat.shape[0], size=n, replace=False), None


def _strata(
    yhat: np.ndarray, sigma: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratum of each query (quartiles of Ŷ), stratum sizes, labels allocated to each."""
    edges = np.quantile(yhat, [0.25, 0.5, 0.75])
    stratum = np.searchsorted(edges, yhat, side="right")
    sizes = np.bincount(stratum, minlength=4)
    need = np.array([sigma[stratum == h].mean() * sizes[h] for h in range(4)])
    alloc = np.maximum(2, np.round(n * need / need.sum()).astype(int))
    return stratum, sizes, np.minimum(alloc, sizes)


def stratified_poisson_design(
    rng: np.random.Generator, yhat: np.ndarray, sigma: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    stratum, sizes, alloc = _strata(yhat, sigma, n)
    pi = (alloc / sizes)[stratum]
    chosen = np.flatnonzero(rng.random(yhat.shape[0]) < pi)
    return chosen, pi[chosen]


def stratified_design(
    rng: np.random.Generator, yhat: np.ndarray, sigma: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    stratum, sizes, alloc = _strata(yhat, sigma, n)
    chosen, pi = [], []
    for h in range(4):
        members = np.flatnonzero(stratum == h)
        pick = rng.choice(members, size=alloc[h], replace=False)
        chosen.append(pick)
        pi.append(np.full(alloc[h], alloc[h] / sizes[h]))
    return np.concatenate(chosen), np.concatenate(pi)


def active_design(
    rng: np.random.Generator, yhat: np.ndarray, sigma: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    # half by the noise, half uniform: no query gets a tiny π (a huge weight), the mix
    # Zrnic & Candès recommend for a stable interval
    pi = np.clip(0.5 * n * sigma / sigma.sum() + 0.5 * n / sigma.shape[0], 0.0, 1.0)
    chosen = np.flatnonzero(rng.random(yhat.shape[0]) < pi)
    return chosen, pi[chosen]


Design = Callable[
    [np.random.Generator, np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray | None]
]
DESIGNS: dict[str, Design] = {
    "random": random_design,
    "stratified": stratified_design,
    "stratified, Poisson": stratified_poisson_design,
    "active": active_design,
}


def one_draw(
    rng: np.random.Generator, design: Design, m: int, n: int, alpha: float, lam: float | None
) -> PPIEstimate:
    y, yhat, sigma = collection(rng, m)
    chosen, pi = design(rng, yhat, sigma, n)
    rest = np.ones(m, dtype=bool)
    rest[chosen] = False
    weights = None if pi is None else 1.0 / pi
    return ppi_mean(y[chosen], yhat[chosen], yhat[rest], alpha=alpha, lam=lam, weights=weights)


def covers(ci: tuple[float, float] | None) -> bool:
    return ci is not None and ci[0] <= TRUE_MEAN <= ci[1]


def width(ci: tuple[float, float] | None) -> float:
    return float("nan") if ci is None else ci[1] - ci[0]


def study(draws: int, m: int, n: int, alpha: float, seed: int) -> list[tuple[str, ...]]:
    rows = []
    for name, design in DESIGNS.items():
        for lam, method in ((None, "PPI++"), (1.0, "PPI (λ = 1)")):
            rng = np.random.default_rng(seed)
            results = [one_draw(rng, design, m, n, alpha, lam) for _ in range(draws)]
            labels = np.mean([r.n_labelled for r in results])
            ppi_cover = np.mean([covers(r.ci) for r in results])
            human_cover = np.mean([covers(r.human_ci) for r in results])
            llm_cover = np.mean([covers(r.llm_ci) for r in results])
            rows.append(
                (
                    name,
                    method,
                    f"{labels:.1f}",
                    f"{ppi_cover:.1%}",
                    f"{np.nanmean([width(r.ci) for r in results]):.4f}",
                    f"{human_cover:.1%}",
                    f"{np.nanmean([width(r.human_ci) for r in results]):.4f}",
                    f"{llm_cover:.1%}",
                )
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--labelled", type=int, default=40)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = study(args.draws, args.queries, args.labelled, args.alpha, args.seed)
    header = (
        "design",
        "method",
        "labels (mean)",
        "PPI coverage",
        "PPI width",
        "human-only coverage",
        "human-only width",
        "LLM-only coverage",
    )
    print(
        f"{args.draws} draws, {args.queries} queries, {args.labelled} labelled, "
        f"{1 - args.alpha:.0%} intervals, seed {args.seed}"
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
