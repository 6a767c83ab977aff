"""trec_eval measure names: how each expands to ragmeter measures, and what trec_eval prints.

trec_eval 10.0 writes a measure as ``name`` (its default parameters), ``name.params`` (a
parameter list: ``P.5,10``, ``iprec_at_recall..1,.5``, ``utility.2,-1,0,0``,
``ndcg.1=3,2=9``), and prints ``name`` or ``name_value`` per value (``P_5``,
``iprec_at_recall_0.10``, ``utility_2,-1,0,0``). :data:`TREC_MEASURES` lists every trec_eval
measure in trec_eval's print order with the kind of parameters it takes;
:func:`expand` turns ``(name, params)`` into ``(label, measure)`` pairs, and every name is also
registered with the registry, so ``ragmeter.evaluate(..., ["ndcg_cut.5,10", "Rprec_mult"])``
works.

Parameter kinds (trec_eval's):

* ``plain``: none; parameters given anyway are ignored by trec_eval.
* ``long_cut``: integer cutoffs (read like C ``atol``: ``23.4`` is 23), sorted, positive, no
  duplicates; printed ``name_%ld``.
* ``double_cut``: real cutoffs, sorted, no duplicates; printed ``name_%3.2f``.
* ``params``: a list of reals for one value; printed ``name_<params as given>``.
* ``pairs``: ``key=value`` pairs for one value; printed ``name_<params as given>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragmeter.errors import MeasureError
from ragmeter.measures import REGISTRY, Measure
from ragmeter.metrics import trec_measures as _families  # noqa: F401  (registers families)

#: trec_eval's default cutoffs for P, recall, ndcg_cut, map_cut, relative_P
LONG_CUTOFFS: tuple[int, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
RPREC_MULTIPLES: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

Kind = Literal["plain", "long_cut", "double_cut", "params", "pairs", "output"]
Builder = Callable[[str | None], Measure]


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure.

    Attributes:
        name: trec_eval's name.
        kind: the kind of parameters it takes (see the module docstring).
        family: the ragmeter family computing it; ``None`` for output-only names
            (``runid``, ``num_q``) and measures ragmeter does not implement.
        defaults: default cutoffs (cut kinds).
        integer: printed as an integer (``%ld``) and summed over queries.
        per_query: printed for each query with ``-q`` (``gm_*`` and ``runid`` are not).
        summary: printed in the ``all`` block (``relstring`` is not).
        build: for ``params``/``pairs`` kinds, the measure for a parameter string (``None`` =
            defaults).
    """

    name: str
    kind: Kind
    family: str | None
    defaults: tuple[int | float, ...] = ()
    integer: bool = False
    per_query: bool = True
    summary: bool = True
    build: Builder | None = None

    @property
    def implemented(self) -> bool:
        return self.family is not None or self.kind == "output"

    def expand(self, params: str | None = None) -> list[tuple[str, Measure]]:
        """``(label, measure)`` pairs for ``name`` or ``name.params``, in print order."""
        if self.family is None:
            raise MeasureError(f"trec_eval measure '{self.name}' is not implemented")
        if self.kind == "plain":
            return [(self.name, REGISTRY.make(self.family, None, {}))]
        if self.kind in ("long_cut", "double_cut"):
            if params is None:
                values = list(self.defaults)
            elif self.kind == "long_cut":
                values = _long_cutoffs(self.name, params)
            else:
                values = _double_cutoffs(self.name, params)
            fmt = _label_long if self.kind == "long_cut" else _label_double
            return [(fmt(self.name, v), REGISTRY.make(self.family, v, {})) for v in values]
        assert self.build is not None
        label = self.name if params is None else f"{self.name}_{params}"
        return [(label, self.build(params))]


def _label_long(name: str, value: int | float) -> str:
    return f"{name}_{int(value)}"


def _label_double(name: str, value: int | float) -> str:
    return f"{name}_{float(value):3.2f}"


# C's isspace and isdigit in the "C" locale: ASCII only (Python's \s and \d are Unicode)
_C_SPACE = "[ \t\n\v\f\r]*"
_ATOL = re.compile(_C_SPACE + r"([+-]?[0-9]+)")
_ATOF = re.compile(_C_SPACE + r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
#: C ``long`` range: ``atol``/``strtol`` saturate there
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def c_atol(text: str) -> int | None:
    """C ``atol``: the leading integer of ``text``, saturated to the range of a C ``long``.

    ``"23.4"`` → 23, ``"1e20"`` → 1, ``"99999999999999999999"`` → 9223372036854775807;
    ``None`` when ``text`` has no leading integer (C gives 0).
    """
    match = _ATOL.match(text)
    if not match:
        return None
    return min(max(int(match.group(1)), LONG_MIN), LONG_MAX)


def atol(name: str, text: str) -> int:
    """:func:`c_atol` of a measure parameter; no digits is an error."""
    value = c_atol(text)
    if value is None:
        raise MeasureError(f"{name}: parameter '{text}' is not a number")
    return value


def atof(name: str, text: str) -> float:
    """C ``atof``: the leading real of ``text`` (``".25"`` → 0.25); no number is an error."""
    match = _ATOF.match(text)
    if not match:
        raise MeasureError(f"{name}: parameter '{text}' is not a number")
    return float(match.group(1))


def _split(name: str, text: str) -> list[str]:
    if not text:
        raise MeasureError(f"{name}: empty parameter list")
    return text.split(",")


def _long_cutoffs(name: str, text: str) -> list[int | float]:
    values = sorted(atol(name, v) for v in _split(name, text))
    if values[0] <= 0:
        raise MeasureError(f"{name}: cutoffs must be positive (got '{text}')")
    if len(set(values)) != len(values):
        raise MeasureError(f"{name}: duplicate cutoffs in '{text}'")
    return list(values)


def _double_cutoffs(name: str, text: str) -> list[int | float]:
    values = sorted(atof(name, v) for v in _split(name, text))
    if len(set(values)) != len(values):
        raise MeasureError(f"{name}: duplicate cutoffs in '{text}'")
    return list(values)


def _doubles(name: str, text: str) -> list[float]:
    return [atof(name, v) for v in _split(name, text)]


def pairs(name: str, text: str) -> list[tuple[str, float]]:
    """trec_eval's ``name=value`` pair list (``ndcg.1=3,2=9``, ``rbp.p=0.95``), in order.

    Every comma-separated part holds exactly one ``=`` (``1=2=3``, ``0.5``, ``p=1,`` are
    malformed, as in trec_eval); the name may be empty, the value is read like C ``atof``.
    """
    parts = text.split(",")
    if any(part.count("=") != 1 for part in parts):
        raise MeasureError(f"malformed pair parameters in '{text}'")
    out: list[tuple[str, float]] = []
    for part in parts:
        key, _, value = part.partition("=")
        out.append((key, atof(name, value)))
    return out


#: a gain level: trec_eval's ``valid_int`` (optional sign, ASCII digits only)
_LEVEL = re.compile(r"[+-]?[0-9]+")


def _pairs_builder(family: str, named: Sequence[str] = (), gains: bool = True) -> Builder:
    """Builder of a pairs measure: integer names are gain levels (when the family takes a gain
    map), ``named`` the other names it reads; a name given twice takes its last value, as
    trec_eval's loops over the pairs do."""

    def build(params: str | None) -> Measure:
        if params is None:
            return REGISTRY.make(family, None, {})
        values: dict[str, Any] = {}
        levels: list[str] = []
        for key, value in pairs(family, params):
            if _LEVEL.fullmatch(key):
                levels.append(f"{atol(family, key)}={value!r}")
            elif key in named:
                values[key] = value
        if gains:
            values["gains"] = ",".join(levels)
        return REGISTRY.make(family, None, values)

    return build


def _build_relstring(params: str | None) -> Measure:
    if params is None:
        return REGISTRY.make("relstring", None, {})
    return REGISTRY.make("relstring", None, {"length": int(_doubles("relstring", params)[0])})


def _build_utility(params: str | None) -> Measure:
    if params is None:
        return REGISTRY.make("utility", None, {})
    values = _doubles("utility", params)
    if len(values) != 4:
        raise MeasureError("utility: improper number of coefficients (expected 4)")
    return REGISTRY.make("utility", None, dict(zip("abcd", values, strict=True)))


def _build_11pt(params: str | None) -> Measure:
    if params is None:
        return REGISTRY.make("avg_iprec", None, {})
    levels = ",".join(repr(v) for v in _doubles("11pt_avg", params))
    return REGISTRY.make("avg_iprec", None, {"levels": levels})


def _build_set_f(params: str | None) -> Measure:
    if params is None:
        return REGISTRY.make("set_f", None, {})
    return REGISTRY.make("set_f", None, {"beta": _doubles("set_F", params)[0]})


def _plain(name: str, family: str | None, **kw: Any) -> TrecMeasure:
    return TrecMeasure(name, "plain", family, **kw)


def _long(name: str, family: str | None, defaults: Sequence[int]) -> TrecMeasure:
    return TrecMeasure(name, "long_cut", family, tuple(defaults))


#: the measures of trec_eval's preference format (-R prefs): the ``prefs`` nickname's, and
#: the rest of ``all_prefs``
_PREFS = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
)
_ALL_PREFS = (
    *_PREFS,
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
#: the measures of the judgment-group format (qrels_jg)
_QRELS_JG = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")

#: Every trec_eval 10.0 measure, in the order trec_eval computes and prints them.
TREC_MEASURES: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "output", None, per_query=False),
    TrecMeasure("num_q", "output", None, integer=True, per_query=False),
    _plain("num_ret", "num_ret", integer=True),
    _plain("num_rel", "num_rel", integer=True),
    _plain("num_rel_ret", "num_rel_ret", integer=True),
    _plain("map", "map"),
    _plain("gm_map", "gm_map", per_query=False),
    _plain("Rprec", "rprec"),
    _plain("bpref", "bpref"),
    _plain("recip_rank", "mrr"),
    TrecMeasure("iprec_at_recall", "double_cut", "iprec_at_recall", RECALL_LEVELS),
    _long("P", "precision", LONG_CUTOFFS),
    TrecMeasure("relstring", "params", "relstring", summary=False, build=_build_relstring),
    _long("recall", "recall", LONG_CUTOFFS),
    _plain("infAP", "infap"),
    _plain("gm_bpref", "gm_bpref", per_query=False),
    TrecMeasure("Rprec_mult", "double_cut", "rprec_mult", RPREC_MULTIPLES),
    TrecMeasure("utility", "params", "utility", build=_build_utility),
    TrecMeasure("11pt_avg", "params", "avg_iprec", build=_build_11pt),
    _plain("binG", "bing"),
    TrecMeasure("G", "pairs", "ngain", build=_pairs_builder("ngain")),
    TrecMeasure("dcg", "pairs", "dcg", build=_pairs_builder("dcg")),
    TrecMeasure("ideal_dcg", "pairs", "idcg", build=_pairs_builder("idcg")),
    TrecMeasure("ndcg", "pairs", "ndcg", build=_pairs_builder("ndcg")),
    TrecMeasure("ndcg_rel", "pairs", "ndcg_rel", build=_pairs_builder("ndcg_rel")),
    TrecMeasure("Rndcg", "pairs", "rndcg", build=_pairs_builder("rndcg")),
    _long("ndcg_cut", "ndcg", LONG_CUTOFFS),
    _long("map_cut", "map", LONG_CUTOFFS),
    _long("relative_P", "relative_precision", LONG_CUTOFFS),
    _long("success", "success", (1, 5, 10)),
    _plain("set_P", "set_precision"),
    _plain("set_relative_P", "set_relative_precision"),
    _plain("set_recall", "set_recall"),
    _plain("set_map", "set_map"),
    TrecMeasure("set_F", "params", "set_f", build=_build_set_f),
    _plain("num_nonrel_judged_ret", "num_nonrel_judged_ret", integer=True),
    # preference and judgment-group measures need other input formats (-R prefs, qrels_jg)
    *(_plain(name, None) for name in (*_ALL_PREFS, *_QRELS_JG)),
    _plain("yaap", "yaap"),
    TrecMeasure("rbp", "pairs", "rbp", build=_pairs_builder("rbp", named=("p",))),
    TrecMeasure(
        "rbp_resid", "pairs", "rbp_resid", build=_pairs_builder("rbp_resid", ("p",), gains=False)
    ),
    _long("unj", "unjudged", (5, 10, 20)),
)

BY_NAME: dict[str, TrecMeasure] = {t.name: t for t in TREC_MEASURES}

#: the counts every nickname but the prefs' starts with
_COUNTS = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret")
#: the set-based measures (the ``set`` nickname's, after ``utility``)
_SET = ("set_P", "set_recall", "set_relative_P", "set_map", "set_F")

#: trec_eval's default measure set (no ``-m``): the ``official`` nickname.
OFFICIAL: tuple[str, ...] = (
    *_COUNTS,
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)

#: ``-m all_trec`` (trec_eval 10.0's nickname list; printing follows :data:`TREC_MEASURES`).
ALL_TREC: tuple[str, ...] = (
    *OFFICIAL,
    "relstring",
    "recall",
    "unj",
    "rbp",
    "rbp_resid",
    "infAP",
    "gm_bpref",
    "utility",
    "11pt_avg",
    "ndcg",
    "relative_P",
    "Rprec_mult",
    "success",
    "map_cut",
    "ndcg_cut",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    *_SET,
    "num_nonrel_judged_ret",
)


#: trec_eval's measure nicknames (``all_prefs``, ``prefs`` and ``qrels_jg`` name measures
#: of the prefs and qrels_jg formats, which ragmeter does not implement).
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": OFFICIAL,
    "all_trec": ALL_TREC,
    "set": (*_COUNTS, "utility", *_SET),
    "all_prefs": ("runid", "num_q", *_ALL_PREFS),
    "prefs": ("runid", "num_q", *_PREFS),
    "qrels_jg": ("runid", "num_q", *_QRELS_JG),
}


def expand(name: str, params: str | None = None) -> list[tuple[str, Measure]]:
    """``(label, measure)`` pairs of trec_eval measure ``name`` with optional ``params``."""
    spec = BY_NAME.get(name)
    if spec is None:
        raise MeasureError(f"unknown trec_eval measure '{name}'")
    return spec.expand(params)


def trec_label(measure: Measure) -> str:
    """The name trec_eval prints for ``measure`` (its canonical ragmeter name when none)."""
    for spec in TREC_MEASURES:
        if spec.family != measure.family or spec.kind == "output":
            continue
        if spec.kind in ("long_cut", "double_cut") and measure.k is not None and not measure.params:
            fmt = _label_long if spec.kind == "long_cut" else _label_double
            return fmt(spec.name, measure.k)
        if spec.kind not in ("long_cut", "double_cut") and measure.k is None and not measure.params:
            return spec.name
    return str(measure)


def _register(spec: TrecMeasure) -> None:
    if spec.family is None:
        return

    def expand_measures(params: str | None) -> list[Measure]:
        if params is not None and spec.kind == "plain":
            raise MeasureError(f"{spec.name} takes no parameters (got '{params}')")
        return [m for _, m in spec.expand(params)]

    REGISTRY.add_trec(spec.name, expand_measures)


for _spec in TREC_MEASURES:
    _register(_spec)


def implemented(names: Sequence[str]) -> tuple[list[Measure], list[str]]:
    """Expand trec_eval names (defaults); returns the measures and the names not implemented.

    Output-only names (``runid``, ``num_q``) yield no measure and are not reported missing.
    """
    measures: list[Measure] = []
    missing: list[str] = []
    for name in names:
        spec = BY_NAME.get(name)
        if spec is None or not spec.implemented:
            missing.append(name)
        elif spec.family is not None:
            measures.extend(m for _, m in spec.expand(None))
    return measures, missing


def _in_print_order(names: Sequence[str]) -> list[str]:
    wanted = set(names)
    return [t.name for t in TREC_MEASURES if t.name in wanted]


REGISTRY.add_group("all_trec", lambda: implemented(_in_print_order(ALL_TREC))[0])
REGISTRY.add_group("official", lambda: implemented(_in_print_order(OFFICIAL))[0])
