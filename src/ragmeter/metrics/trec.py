"""trec_eval measure names: aliases that expand to ragmeter measures, and groups.

trec_eval writes a measure as ``name`` (its default parameters), ``name_value`` (one cutoff)
or ``name.v1,v2`` (a parameter list). Each trec_eval name is registered here with how it
expands; :func:`trec_label` gives back the name trec_eval prints for a measure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragmeter.errors import MeasureError
from ragmeter.metrics.registry import REGISTRY, Measure

#: trec_eval's default cutoffs for P, recall, ndcg_cut, map_cut, relative_P
LONG_CUTOFFS: tuple[int, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: (family, has a cutoff) → how trec_eval prints a measure of that family with default params
_LABELS: dict[tuple[str, bool], Callable[[Measure], str]] = {}


def trec_label(measure: Measure) -> str:
    """The name trec_eval prints for ``measure`` (its canonical name when it has none)."""
    rule = _LABELS.get((measure.family, measure.k is not None))
    if rule is None or measure.params:
        return str(measure)
    return rule(measure)


def set_label(family: str, with_cutoff: bool, rule: Callable[[Measure], str]) -> None:
    """Declare how trec_eval prints ``family``'s measures (first declaration wins)."""
    _LABELS.setdefault((family, with_cutoff), rule)


def _split_values(trec_name: str, text: str) -> list[str]:
    values = [v for v in text.split(",") if v]
    if not values:
        raise MeasureError(f"{trec_name}: empty parameter list")
    return values


def _as_long(trec_name: str, text: str) -> int:
    # trec_eval reads cutoffs with atol: "23.4" is 23.
    try:
        value = int(float(text))
    except ValueError:
        raise MeasureError(f"{trec_name}: cutoff '{text}' is not a number") from None
    if value <= 0:
        raise MeasureError(f"{trec_name}: cutoffs must be positive, got '{text}'")
    return value


def _as_double(trec_name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise MeasureError(f"{trec_name}: parameter '{text}' is not a number") from None


def cutoff_alias(
    trec_name: str,
    family: str,
    defaults: Sequence[int | float],
    *,
    kind: type = int,
    label: Callable[[int | float], str] | None = None,
) -> None:
    """Register ``trec_name`` as a cutoff-list measure of ``family`` (``P``, ``ndcg_cut``…)."""
    fmt = label or (lambda v: f"{trec_name}_{v}")

    def expand(params: str | None) -> list[Measure]:
        if params is None:
            values: list[int | float] = list(defaults)
        else:
            parse = _as_long if kind is int else _as_double
            values = [parse(trec_name, v) for v in _split_values(trec_name, params)]
        return [REGISTRY.make(family, v, {}) for v in values]

    REGISTRY.add_trec(trec_name, expand)
    set_label(family, True, lambda m: fmt(m.k if m.k is not None else 0))


def plain_alias(trec_name: str, family: str) -> None:
    """Register a parameterless trec_eval measure name."""

    def expand(params: str | None) -> list[Measure]:
        if params:
            raise MeasureError(f"{trec_name} takes no parameters (got '{params}')")
        return [REGISTRY.make(family, None, {})]

    REGISTRY.add_trec(trec_name, expand)
    set_label(family, False, lambda m: trec_name)


plain_alias("num_ret", "num_ret")
plain_alias("num_rel", "num_rel")
plain_alias("num_rel_ret", "num_rel_ret")
plain_alias("map", "map")
plain_alias("gm_map", "gm_map")
plain_alias("Rprec", "rprec")
plain_alias("bpref", "bpref")
plain_alias("recip_rank", "mrr")
cutoff_alias(
    "iprec_at_recall",
    "iprec_at_recall",
    RECALL_LEVELS,
    kind=float,
    label=lambda v: f"iprec_at_recall_{v:.2f}",
)
cutoff_alias("P", "precision", LONG_CUTOFFS)
cutoff_alias("recall", "recall", LONG_CUTOFFS)
cutoff_alias("ndcg_cut", "ndcg", LONG_CUTOFFS)
cutoff_alias("map_cut", "map", LONG_CUTOFFS)
cutoff_alias("success", "success", (1, 5, 10))

#: trec_eval's default measure set (``trec_eval qrels run`` with no ``-m``), in print order.
OFFICIAL: tuple[str, ...] = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)

#: ``-m all_trec`` in trec_eval's print order; names not (yet) implemented are skipped by
#: the trec-eval command with a note on stderr.
ALL_TREC: tuple[str, ...] = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj",
)


def implemented(names: Sequence[str]) -> tuple[list[Measure], list[str]]:
    """Expand trec_eval names; returns the measures and the names not implemented."""
    measures: list[Measure] = []
    missing: list[str] = []
    for name in names:
        try:
            measures.extend(REGISTRY.parse_trec(name))
        except MeasureError:
            missing.append(name)
    return measures, missing


REGISTRY.add_group("all_trec", lambda: implemented(ALL_TREC)[0])
REGISTRY.add_group("official", lambda: implemented(OFFICIAL)[0])
