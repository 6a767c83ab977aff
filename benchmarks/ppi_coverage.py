"""Coverage study of the prediction-powered intervals (``ragmeter.stats.ppi``).

Each draw makes a fresh collection of M queries: the measure under human labels
``Y ~ Beta(2, 3)`` (true mean 0.4) and under a biased, noisy judge
``Ŷ = clip(0.15 + 0.7·Y + σ·ε, 0, 1)``, ``ε ~ N(0, 1)``, with a per-query noise ``σ ~ U(0.02,
0.3)`` the judge knows (its disagreement across samples). Then n of the M queries are
labelled, by one of four designs:

* random: a uniform sample of n queries (PPI++ and classic PPI, ppi-python's conventions);
* stratified: four strata by quartiles of Ŷ, n split across them in proportion to
  ``N_h · mean σ`` (Neyman allocation with σ as the proxy), a uniform sample of fixed size
  within each; ``π = n_h / N_h``; and the same strata with each query labelled
  independently with probability ``n_h / N_h`` (Poisson sampling: the estimator's variance
  assumes independent inclusions, so it is exact there and conservative for fixed sizes);
* active: each query labelled independently with ``π = ½·n·σ/Σσ + ½·n/M`` (mean n; half by
  the judge's noise, half uniform so that no weight is huge), as in Zrnic & Candès (2024).

The weighted designs use the inverse-probability estimator (``weights = 1/π``); the
stratified design also the exact stratified variance (``strata``). A table per design, a row
per estimator (classic PPI, PPI++, cross-fit PPI++, the human labels alone with the normal
and with the t quantile, the LLM labels alone), a column per n: how often the 1 − α interval
covers the true mean 0.4, ± its Monte Carlo standard error, and its mean width
(:func:`ragmeter.stats.validation.coverages`; every estimator of a cell sees the same draws).
``--folds`` instead compares numbers of folds of cross-fit PPI++.

    python benchmarks/ppi_coverage.py [--draws 2000] [--queries 500] [--labelled 8 15 30 60]
    python benchmarks/ppi_coverage.py --draws 1000 --labelled 8 15 30 --folds 2 5 10
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from ragmeter.stats.ppi import PPIEstimate, ppi_mean
from ragmeter.stats.validation import Coverage, coverages

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


#: the estimators of every design: ``(name, ppi_mean keywords)``; the stratified design adds
#: the exact stratified variance (``strata``) to PPI and PPI++
ESTIMATORS: tuple[tuple[str, dict[str, object]], ...] = (
    ("PPI (λ = 1)", {"estimator": "classic"}),
    ("PPI++", {"estimator": "plusplus"}),
    ("cross-fit PPI++", {"estimator": "crossfit"}),
)
EXACT: tuple[tuple[str, dict[str, object]], ...] = (
    ("PPI (λ = 1), exact stratified", {"estimator": "classic", "strata": True}),
    ("PPI++, exact stratified", {"estimator": "plusplus", "strata": True}),
)
HUMAN = "human only (normal)"
HUMAN_T = "human only (t, n − 1 df)"
LLM = "LLM only"


def one_draw(
    rng: np.random.Generator, design_name: str, m: int, n: int, alpha: float
) -> dict[str, tuple[float, float] | None]:
    """One collection, one labelled sample, every estimator's interval on it."""
    y, yhat, sigma = collection(rng, m)
    chosen, pi = DESIGNS[design_name](rng, yhat, sigma, n)
    rest = np.ones(m, dtype=bool)
    rest[chosen] = False
    weights = None if pi is None else 1.0 / pi
    out: dict[str, tuple[float, float] | None] = {}
    extra = EXACT if design_name == "stratified" else ()
    strata = _strata(yhat, sigma, n)[0][chosen]
    results: dict[str, PPIEstimate] = {}
    for name, options in (*ESTIMATORS, *extra):
        kwargs = dict(options)
        if kwargs.pop("strata", False):
            kwargs["strata"] = strata
        if chosen.shape[0] == 0:  # a Poisson design may draw no label at all: no interval
            out[name] = None
            continue
        results[name] = ppi_mean(
            y[chosen], yhat[chosen], yhat[rest], alpha=alpha, weights=weights, **kwargs
        )  # type: ignore[arg-type]
        out[name] = results[name].ci
    # the human-only interval as PPI++ shows it (normal quantile) and as cross-fit PPI++
    # does (Student's t on n − 1 df, unbiased variance)
    out[HUMAN] = results["PPI++"].human_ci if results else None
    out[HUMAN_T] = results["cross-fit PPI++"].human_ci if results else None
    out[LLM] = results["PPI++"].llm_ci if results else None
    out["labels"] = (float(chosen.shape[0]), 0.0)  # carried as an "interval" to average
    return out


SIZES = (8, 15, 30, 60)


def study(
    draws: int, m: int, sizes: tuple[int, ...], alpha: float, seed: int
) -> dict[str, dict[int, dict[str, Coverage]]]:
    """``{design: {n: {estimator: coverage}}}``, every cell over the same ``draws``
    collections of a design and n."""
    out: dict[str, dict[int, dict[str, Coverage]]] = {}
    for name in DESIGNS:
        for n in sizes:
            cells = coverages(
                lambda rng, name=name, n=n: one_draw(rng, name, m, n, alpha),
                TRUE_MEAN,
                draws=draws,
                seed=seed + n,
            )
            out.setdefault(name, {})[n] = cells
    return out


def table(design: str, cells: dict[int, dict[str, Coverage]]) -> list[str]:
    """A markdown table of one design: a row per estimator, a column per n; each cell the
    coverage ± its Monte Carlo standard error, and the mean width."""
    sizes = list(cells)
    labels = [cells[n]["labels"] for n in sizes]
    head = ["estimator"] + [
        f"n = {n}" + ("" if abs(c.mean_width - n) < 1e-9 else f" (mean {c.mean_width:.1f})")
        for n, c in zip(sizes, [tally_labels(lab) for lab in labels], strict=True)
    ]
    lines = [f"**{design}**", "", "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    names = [k for k in cells[sizes[0]] if k != "labels"]
    for name in names:
        row = [name]
        for n in sizes:
            c = cells[n][name]
            width = "–" if np.isnan(c.mean_width) else f"{c.mean_width:.3f}"
            row.append(f"{c.text()} ({width})")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def tally_labels(c: Coverage) -> Coverage:
    """The "labels" pseudo-interval ``(count, 0)`` has width ``−count``: its mean width
    negated is the mean number of labels."""
    return Coverage(c.hits, c.draws, c.missing, -c.mean_width)


def folds_study(
    draws: int, m: int, sizes: tuple[int, ...], folds: tuple[int, ...], alpha: float, seed: int
) -> list[str]:
    """Cross-fit PPI++ under random sampling with each number of folds: a markdown table of
    coverage ± Monte Carlo error (mean width), a row per K, a column per n."""

    def draw(rng: np.random.Generator, n: int) -> dict[str, tuple[float, float] | None]:
        y, yhat, sigma = collection(rng, m)
        chosen, _ = random_design(rng, yhat, sigma, n)
        rest = np.ones(m, dtype=bool)
        rest[chosen] = False
        return {
            f"K = {k}": ppi_mean(
                y[chosen], yhat[chosen], yhat[rest], alpha=alpha, estimator="crossfit", folds=k
            ).ci
            for k in folds
        }

    cells = {
        n: coverages(lambda rng, n=n: draw(rng, n), TRUE_MEAN, draws=draws, seed=seed + n)
        for n in sizes
    }
    lines = ["| folds | " + " | ".join(f"n = {n}" for n in sizes) + " |"]
    lines.append("|---" * (len(sizes) + 1) + "|")
    for k in folds:
        row = [
            f"{cells[n][f'K = {k}'].text()} ({cells[n][f'K = {k}'].mean_width:.3f})" for n in sizes
        ]
        lines.append(f"| {k} | " + " | ".join(row) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--labelled", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--folds",
        type=int,
        nargs="+",
        help="instead: cross-fit PPI++ under random sampling with each of these numbers of folds",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    if args.folds:
        sizes = tuple(args.labelled)
        print(f"{args.draws} draws per cell, random sampling, cross-fit PPI++\n")
        print(
            "\n".join(
                folds_study(
                    args.draws, args.queries, sizes, tuple(args.folds), args.alpha, args.seed
                )
            )
        )
        print(f"({time.perf_counter() - start:.1f} s)")
        return
    results = study(args.draws, args.queries, tuple(args.labelled), args.alpha, args.seed)
    print(
        f"{args.draws} draws per cell, {args.queries} queries, {1 - args.alpha:.0%} "
        f"intervals, seed {args.seed}; cell: coverage ± Monte Carlo standard error "
        "(mean width)\n"
    )
    for design, cells in results.items():
        print("\n".join(table(design, cells)) + "\n")
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
