"""NA-aware aggregation of per-query values.

Per-query values are float arrays with NaN marking NA (undefined); NaN never enters a mean.
Every aggregate carries ``n`` (queries evaluated) and ``n_defined`` (queries where the value
is defined). The rule is the family's: arithmetic mean, sum (trec_eval's counts), or
geometric mean with trec_eval's clamp (``gm_map``, ``gm_bpref``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragmeter.core.sums import geometric_mean, sequential_mean, sequential_sum
from ragmeter.measures import Aggregation


@dataclass(frozen=True)
class Aggregate:
    """An aggregate of one measure over queries.

    Attributes:
        mean: the family's mean (geometric for gm_* measures); ``None`` if no value is defined.
        n: number of queries evaluated.
        n_defined: number of queries where the value is defined.
        sum: the sum of defined values, for count measures (``num_ret``…); else ``None``.
    """

    mean: float | None
    n: int
    n_defined: int
    sum: float | None = None

    @property
    def value(self) -> float | None:
        """The headline number: the sum for count measures, the mean otherwise."""
        return self.sum if self.sum is not None else self.mean

    @property
    def defined_note(self) -> str:
        """``" (n=45/50)"`` when the mean covers fewer queries than were evaluated (the rest
        are NA), else ``""``: what every table prints beside such a mean."""
        return defined_note(self.n_defined, self.n)

    def to_dict(self) -> dict[str, float | int | None]:
        out: dict[str, float | int | None] = {
            "mean": self.mean,
            "n": self.n,
            "n_defined": self.n_defined,
        }
        if self.sum is not None:
            out["sum"] = self.sum
        return out


def defined_note(n_defined: int, n: int) -> str:
    """``" (n=k/N)"`` for a mean over k of N queries when k < N, else ``""``."""
    return f" (n={n_defined}/{n})" if n_defined != n else ""


def aggregate(values: npt.NDArray[np.float64], rule: Aggregation = "mean") -> Aggregate:
    """Aggregate per-query ``values`` (NaN = NA) by ``rule``.

    mean = Σ v / n_defined; gmean = exp(Σ log(max(v, 1e-5)) / n_defined); sum = Σ v. Every Σ
    adds in query order, one value after the other, as trec_eval (:mod:`ragmeter.core.sums`).
    """
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    n, n_defined = len(values), len(defined)
    if n_defined == 0:
        return Aggregate(None, n, 0, 0.0 if rule == "sum" else None)
    if rule == "gmean":
        return Aggregate(geometric_mean(defined), n, n_defined)
    mean = sequential_mean(defined)
    if rule == "sum":
        return Aggregate(mean, n, n_defined, sequential_sum(defined))
    return Aggregate(mean, n, n_defined)
