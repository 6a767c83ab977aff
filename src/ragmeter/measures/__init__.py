"""The measure spec: :class:`Measure`, :class:`Param`, :class:`Family`, the registry and the
parser for measure names.

This package sits below ``core``: it knows nothing of alignments but the :class:`Aligned`
protocol a family's compute function reads. Families register themselves from their modules
(``ragmeter.metrics``); a lookup imports the module registering the name it reads
(:mod:`ragmeter.measures.catalogue`), and a list of every name imports them all.

A :class:`Measure` is a small immutable object — family, cutoff, non-default parameters — whose
canonical string (``ndcg@10``, ``ndcg@10(rel_level=2)``) is its identity everywhere: JSON keys,
tables, the store. Names are parsed by one grammar::

    name[@cutoff][(param=value, ...)]

plus trec_eval's spellings (``P_10``, ``P.5,10``, ``ndcg_cut.5,10``, ``recip_rank``,
``all_trec`` …), which expand to the same measures. Parameters are validated by one rule set,
so every error message looks the same, and unknown names get the closest valid suggestions.
"""

from __future__ import annotations

import difflib
import importlib
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ragmeter.errors import MeasureError
from ragmeter.measures import catalogue, irm

FloatArray = npt.NDArray[np.float64]
CutoffKind = Literal["none", "optional", "required"]
Aggregation = Literal["mean", "sum", "gmean"]


class Aligned(Protocol):
    """What every family's compute function may rely on: a run's items segmented by evaluated
    query (the concrete class is :class:`ragmeter.core.align.Aligned`)."""

    @property
    def n_queries(self) -> int: ...

    @property
    def options(self) -> Mapping[str, Any]: ...


_A = TypeVar("_A", bound=Aligned)
Compute = Callable[[Any, "Measure"], FloatArray]

#: Minimum value a per-query score is clamped to before the log of a geometric mean
#: (trec_eval's ``MIN_GEO_MEAN``).
MIN_GEO_MEAN = 1e-5


@dataclass(frozen=True)
class Param:
    """A validated parameter of a measure family.

    ``kind`` is ``int``, ``float``, ``str`` or ``bool``; a value given as text
    (``ndcg@10(rel_level=2)``) is read as that type. ``low`` / ``high`` bound a number
    (inclusive), ``choices`` lists the values allowed, and ``check(value)`` returns a problem in
    words (``"must be > 0"``) or ``None``; a value that breaks any of them is a
    :class:`~ragmeter.errors.MeasureError` naming the measure, the parameter and the value.
    ``default`` may be ``None`` ("not set": the family decides).
    """

    name: str
    kind: type
    default: Any
    doc: str = ""
    check: Callable[[Any], str | None] | None = None
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] | None = None

    def coerce(self, family: str, raw: Any) -> Any:
        value = raw
        if isinstance(raw, str) and self.kind is not str:
            value = _parse_scalar(raw)
        elif isinstance(raw, str) and len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
            value = raw[1:-1]  # a quoted string (needed when it holds commas)
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.kind is bool and isinstance(value, str):
            value = {"true": True, "false": False}.get(value.lower(), value)
        if not isinstance(value, self.kind) or (self.kind is int and isinstance(value, bool)):
            raise MeasureError(
                f"{family}: parameter '{self.name}' must be {self.kind.__name__}, got {raw!r}"
            )
        problem = self.problem(value)
        if problem:
            raise MeasureError(f"{family}: parameter '{self.name}' {problem}, got {raw!r}")
        return value

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` (of the right type) in words, or ``None``."""
        if self.low is not None and not value >= self.low:
            return f"must be ≥ {_format_value(self.low)}"
        if self.high is not None and not value <= self.high:
            return f"must be ≤ {_format_value(self.high)}"
        if self.choices is not None and value not in self.choices:
            return f"must be one of {', '.join(_format_value(c) for c in self.choices)}"
        return self.check(value) if self.check is not None else None


def parses(
    parse: Callable[[str], object], errors: type[Exception] = ValueError
) -> Callable[[str], str | None]:
    """A :attr:`Param.check` for a text parameter: the message of the ``errors`` that
    ``parse`` raises on the value, or ``None`` when it parses."""

    def check(text: str) -> str | None:
        try:
            parse(text)
        except errors as exc:
            return str(exc)
        return None

    return check


@dataclass(frozen=True)
class Family:
    """A family of measures that share one compute function.

    ``compute(aligned, measure)`` returns one float per evaluated query, NaN where the value
    is undefined (NA). ``needs`` names the inputs the family requires besides the run
    (``qrels``, ``judgments``, ``corpus``, ``answers``, ``utilities``, ``nuggets``,
    ``citations``; ``lengths`` comes with
    a token budget, see :attr:`Measure.needs`): the evaluation joins exactly those onto the
    alignment, and nothing else.

    The cutoff rule (the same in every view: evaluate, sweep, compare, report, store):
    ``m@K`` is ``m`` computed on the top K of each ranking. Without ``@K`` a family uses its
    own default — the whole ranking (classical), its context default (``context`` families:
    :attr:`default_context`). An evaluation's ``default_k`` fills in K only where the
    family requires one, its ``context_k`` only in ``context`` families, and the filled-in
    K is then part of the measure's name.
    """

    name: str
    compute: Compute
    summary: str
    cutoff: CutoffKind = "none"
    cutoff_type: type = int
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    aggregate: Aggregation = "mean"
    needs: frozenset[str] = frozenset({"qrels"})
    #: largest valid cutoff (e.g. 1.0 for a recall level); ints must be ≥ 1, floats ≥ 0
    cutoff_max: float | None = None
    #: the family reads the candidate pool (the run itself unless one is given)
    uses_pool: bool = False
    #: the grade scale the family's labels must be on (after any grade map), e.g. (1, 5)
    grade_scale: tuple[int, int] | None = None
    #: the family's ``@K`` is the size of the context it reads (coverage, density,
    #: alpha_ndcg): the top K of each ranking; the evaluation's ``context_k`` fills it in
    context: bool = False
    #: what the family reads without ``@K``, in words (for docs and ``ragmeter measures``)
    default_context: str = "the whole ranking"
    #: the family reads every cutoff from one head of each query gathered at the
    #: evaluation's largest cutoff of such families (the set-based family)
    shared_head: bool = False
    #: the family reads the retrieved doc ids and scores: the evaluation joins them onto the
    #: alignment (``side["item_doc_ids"]``, ``side["item_scores"]``)
    reads_run: bool = False
    #: the family reads the evaluated queries' ids (a message naming a query, a custom
    #: measure's rankings); ``False``: only how many there are, and an evaluation in blocks
    #: need not make the ids' strings for it (:mod:`ragmeter.evaluation.native_blocks`)
    reads_query_ids: bool = True
    #: whether a larger value is better (comparisons mark ▲ / ▼ by it); ``None``: neither;
    #: ``"unset"``: the comparison's tables decide (the built-in families)
    higher_is_better: bool | Literal["unset"] | None = "unset"
    #: the module that defined a measure through the public API
    #: (:func:`ragmeter.define_measure`); ``None`` for ragmeter's own families
    origin: str | None = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass(frozen=True)
class Measure:
    """One measure: a family, an optional cutoff and its non-default parameters.

    Measures sort by family, then no cutoff before cutoffs in increasing order, then params.
    """

    family: str
    k: int | float | None = None
    params: tuple[tuple[str, Any], ...] = field(default=())
    #: the spelling the user gave when it is another tool's (ir_measures' ``AP(rel=2)``):
    #: kept for display, not part of the identity (equal measures are equal whatever the
    #: spelling); :attr:`canonical` is ragmeter's name
    alias: str | None = field(default=None, compare=False)

    def _sort_key(self) -> tuple[str, bool, float, str]:
        return (self.family, self.k is not None, float(self.k or 0), repr(self.params))

    def __lt__(self, other: Measure) -> bool:
        return self._sort_key() < other._sort_key()

    def __str__(self) -> str:
        return self.alias if self.alias is not None else self.canonical

    @property
    def canonical(self) -> str:
        """ragmeter's own name of the measure (``precision@10(rel_level=2)``), whatever the
        spelling it was given in."""
        text = self.family
        params = self.params
        if self.k is not None:
            text += f"@{_format_cutoff(self.k)}"
        elif self.budget is not None:
            text += f"@{self.budget}t"  # a token budget is spelled as a cutoff: ra_nwg@512t
            params = tuple(p for p in params if p[0] != BUDGET)
        if params:
            inner = ",".join(f"{k}={_format_value(v)}" for k, v in params)
            text += f"({inner})"
        return text

    @property
    def name(self) -> str:
        return str(self)

    @property
    def spec(self) -> Family:
        return REGISTRY.family(self.family)

    @property
    def budget(self) -> int | None:
        """The token budget B of ``name@Bt`` (parameter ``budget``), or ``None``."""
        for key, value in self.params:
            if key == BUDGET:
                return int(value)
        return None

    @property
    def needs(self) -> frozenset[str]:
        """The inputs this measure needs: its family's, plus ``lengths`` for a token budget."""
        return self.spec.needs | ({"lengths"} if self.budget is not None else frozenset())

    def param(self, name: str) -> Any:
        """The value of parameter ``name`` (its default when not given)."""
        for key, value in self.params:
            if key == name:
                return value
        return self.spec.param(name).default

    def with_params(self, **overrides: Any) -> Measure:
        """A copy with parameters set (validated); defaults are not stored."""
        return REGISTRY.make(self.family, self.k, {**dict(self.params), **overrides})


#: the parameter holding a token budget; ``name@512t`` is ``name(budget=512)``
BUDGET = "budget"


def _format_cutoff(k: int | float) -> str:
    if isinstance(k, float):
        short = f"{k:.2f}"  # trec_eval's spelling of levels (0.10), where it is exact
        return short if float(short) == k else repr(k)
    return str(k)


def _format_value(v: Any) -> str:
    if isinstance(v, str):
        return v if re.fullmatch(r"[A-Za-z0-9_.:;+\-]+", v) else repr(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def _parse_scalar(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


TrecExpander = Callable[[str | None], list[Measure]]


class Registry:
    """Maps names and aliases to families; parses and validates measure names."""

    def __init__(self) -> None:
        self._families: dict[str, Family] = {}
        self._aliases: dict[str, str] = {}
        self._trec: dict[str, TrecExpander] = {}
        self._groups: dict[str, Callable[[], list[Measure]]] = {}
        #: names and aliases as registered (case-sensitive): ir_measures' spelling of one of
        #: them (nDCG, P) is ragmeter's own, any other (ERR, Bpref) is kept for display
        self._exact: set[str] = set()

    # -- registration -----------------------------------------------------------------
    def add(self, family: Family) -> Family:
        for key in (family.name, *family.aliases):
            owner = self._aliases.get(key.lower())
            if owner is not None and owner != family.name:
                raise ValueError(f"measure name '{key}' registered twice")
            self._aliases[key.lower()] = family.name
            self._exact.add(key)
        self._families[family.name] = family
        return family

    def remove(self, name: str) -> Family:
        """Remove a family defined through the public API (not one of ragmeter's own)."""
        fam = self.family(name)
        if fam.origin is None:
            raise MeasureError(f"'{fam.name}' is one of ragmeter's own measures; it stays")
        for key in (fam.name, *fam.aliases):
            self._aliases.pop(key.lower(), None)
            self._exact.discard(key)
        del self._families[fam.name]
        return fam

    def owner(self, name: str) -> Family | None:
        """The family a name or alias (any case) belongs to, or ``None``."""
        _load_family(name)
        canonical = self._aliases.get(name.lower())
        return None if canonical is None else self._families[canonical]

    def is_reserved(self, name: str) -> str | None:
        """What ``name`` (in any case) means besides the families' own names and aliases, or
        ``None``: a group (``all_trec``), a trec_eval measure name or a trec_eval form of one
        (``recip_rank``, ``P_10``), or an ir_measures name (``R``, ``SetP``)."""
        _load_families()
        low = name.lower()
        trec = {t.lower(): t for t in (*self._trec, *self._groups)}
        if low in trec:
            return f"trec_eval's {trec[low]}"
        base, _, rest = low.rpartition("_")
        if base in trec and rest:
            try:  # P_10 is precision@10; recall_weighted reads as nothing of trec_eval's
                if self._parse_trec(f"{trec[base]}_{rest}"):
                    return f"trec_eval's {trec[base]}_{rest}"
            except MeasureError:
                pass
        theirs = next((n for n in irm.IRM_NAMES if n.lower() == low), None)
        return None if theirs is None else f"ir_measures' {theirs}"

    def add_trec(self, trec_name: str, expand: TrecExpander) -> None:
        """Register a trec_eval measure name and how its ``name.params`` form expands."""
        self._trec[trec_name] = expand

    def add_group(self, name: str, members: Callable[[], list[Measure]]) -> None:
        """Register a named group of measures, such as ``all_trec``."""
        self._groups[name] = members

    # -- lookup -----------------------------------------------------------------------
    def family(self, name: str) -> Family:
        _load_family(name)
        canonical = self._aliases.get(name.lower())
        if canonical is None:
            raise MeasureError(self._unknown(name))
        return self._families[canonical]

    def families(self) -> list[Family]:
        _load_families()
        return list(self._families.values())

    def make(self, family: str, k: int | float | None, params: Mapping[str, Any]) -> Measure:
        """Build a validated measure; parameters equal to their default are not stored."""
        spec = self.family(family)
        if k is not None:
            if spec.cutoff == "none":
                raise MeasureError(f"{spec.name} takes no cutoff (got @{k})")
            k = _coerce_cutoff(spec, k)
        known = {p.name for p in spec.params}
        stored: list[tuple[str, Any]] = []
        for key, raw in params.items():
            if key not in known:
                hint = difflib.get_close_matches(key, sorted(known), n=3)
                msg = f"{spec.name}: unknown parameter '{key}'"
                if known:
                    msg += f"; valid: {', '.join(sorted(known))}"
                if hint:
                    msg += f" (did you mean {', '.join(hint)}?)"
                raise MeasureError(msg)
            value = spec.param(key).coerce(spec.name, raw)
            if value != spec.param(key).default:
                stored.append((key, value))
        if k is not None and any(key == BUDGET for key, _ in stored):
            raise MeasureError(
                f"{spec.name}: give either a cutoff @K or a token budget @Bt, not both"
            )
        return Measure(spec.name, k, tuple(sorted(stored)))

    def parse(self, text: str) -> list[Measure]:
        """Parse one name into the measures it denotes (trec forms may expand to several)."""
        name = text.strip()
        if not name:
            raise MeasureError("empty measure name")
        _load_group(name)
        if name in self._groups:
            return self._groups[name]()
        # ragmeter's names are case-insensitive: an ir_measures spelling is read as ragmeter's
        # name of the same letters (nDCG@10, AP, Bpref) unless that means another number
        # (Judged); one ragmeter does not know (R@50, SetP) or cannot read (AP(rel=2)) is
        # read as ir_measures' and keeps its spelling
        theirs = irm.irm_name(name)
        if theirs is not None:
            _load_family(theirs.name)
        if theirs is not None and (theirs.shadows or theirs.name.lower() not in self._aliases):
            return [self._parse_irm(name)]
        try:
            measures = self._parse_own(name)
        except MeasureError as own:
            if theirs is None:
                raise
            try:
                return [self._parse_irm(name)]  # P(rel=2)@10, nDCG(dcg='exp-log2')@10
            except MeasureError as why:
                raise MeasureError(f"{own}; as an ir_measures name: {why}") from None
        if theirs is not None and theirs.name not in self._exact and len(measures) == 1:
            # ir_measures' spelling of a ragmeter measure (ERR@10, IPrec@0.2): kept for display
            return [replace(measures[0], alias=name)]
        return measures

    def _parse_irm(self, name: str) -> Measure:
        """An ir_measures spelling as the measure it denotes, keeping the spelling."""
        family, k, params = irm.translate(name)
        measure = self.make(family, k, params)
        return replace(measure, alias=name)

    def _parse_own(self, name: str) -> list[Measure]:
        match = _GRAMMAR.fullmatch(name)
        if match:
            _load_family(match["base"])
        if match and match["base"].lower() in self._aliases:
            params = _parse_params(name, match["params"])
            k = match["k"]
            budget = re.fullmatch(r"\s*(\d+)\s*[tT]\s*", k) if k else None
            if budget is not None:
                spec = self.family(match["base"])
                if not any(p.name == BUDGET for p in spec.params):
                    raise MeasureError(f"{spec.name} takes no token budget (got @{k})")
                if BUDGET in params:
                    raise MeasureError(f"{name}: token budget given twice")
                params[BUDGET] = budget[1]
                return [self.make(match["base"], None, params)]
            return [self.make(match["base"], _parse_cutoff_text(name, k) if k else None, params)]
        trec = self._parse_trec(name)
        if trec is not None:
            return trec
        if match and "@" not in name and "(" not in name:
            raise MeasureError(self._unknown(name))
        raise MeasureError(self._unknown(match["base"] if match else name))

    def parse_trec(self, name: str) -> list[Measure]:
        """Parse a name the way trec_eval reads ``-m``: trec_eval spellings first.

        ``P`` is then trec_eval's ``P`` at its default cutoffs, not ``precision@default_k``.
        """
        _load_group(name)
        if name in self._groups:
            return self._groups[name]()
        trec = self._parse_trec(name.strip())
        return trec if trec is not None else self.parse(name)

    def _parse_trec(self, name: str) -> list[Measure] | None:
        _load_trec(name)
        if name in self._trec:
            return self._trec[name](None)
        if "." in name:
            base, _, rest = name.partition(".")
            _load_trec(base)
            if base in self._trec:
                return self._trec[base](rest)
        if "_" in name:
            base, _, rest = name.rpartition("_")
            _load_trec(base)
            if base in self._trec and rest:
                return self._trec[base](rest)
        return None

    def valid_names(self) -> list[str]:
        _load_families()
        names = set(self._families)
        for fam in self._families.values():
            names.update(fam.aliases)
        names.update(self._trec)
        names.update(self._groups)
        return sorted(names)

    def _unknown(self, name: str) -> str:
        base = name.split("@")[0].split("(")[0]
        candidates = self.valid_names()
        lowered = {c.lower(): c for c in candidates}
        close = difflib.get_close_matches(base.lower(), list(lowered), n=4, cutoff=0.5)
        msg = f"unknown measure '{name}'"
        if close:
            msg += f"; did you mean {', '.join(lowered[c] for c in close)}?"
        else:
            msg += "; run `ragmeter measures` for the list"
        return msg


_GRAMMAR = re.compile(r"(?P<base>[A-Za-z][A-Za-z0-9_]*)(?:@(?P<k>[^()]+))?(?:\((?P<params>.*)\))?")


def _parse_cutoff_text(name: str, text: str) -> int | float:
    value = _parse_scalar(text)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise MeasureError(f"{name}: cutoff '{text}' is not a number")
    return value


#: the largest whole-number cutoff: the largest 64-bit integer, which trec_eval reads for any
#: larger number (``P.99999999999999999999`` is ``P_9223372036854775807`` there); a larger
#: number (``ndcg@99999999999999999999``) is a range error, not an overflow
MAX_CUTOFF = 2**63 - 1
#: the largest evaluation depth (``--depth``, pool depth, default K): ranks are counted in
#: 32-bit integers
MAX_DEPTH = 2**31 - 1


def _coerce_cutoff(spec: Family, k: int | float) -> int | float:
    if spec.cutoff_type is int and k > MAX_CUTOFF:  # before float(k): a huge int overflows it
        raise MeasureError(f"{spec.name}: cutoff must be ≤ {MAX_CUTOFF}, got {k}")
    if spec.cutoff_type is int:
        if isinstance(k, float):
            if not k.is_integer():
                raise MeasureError(f"{spec.name}: cutoff must be a whole number, got {k}")
            k = int(k)
        if k < 1:
            raise MeasureError(f"{spec.name}: cutoff must be ≥ 1, got {k}")
    else:
        k = float(k)
        if not k >= 0:
            raise MeasureError(f"{spec.name}: cutoff must be ≥ 0, got {k}")
    if spec.cutoff_max is not None and k > spec.cutoff_max:
        raise MeasureError(f"{spec.name}: cutoff must be ≤ {spec.cutoff_max}, got {k}")
    return k


def _parse_params(name: str, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    params: dict[str, Any] = {}
    for part in _split_top_level(text):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise MeasureError(f"{name}: malformed parameter '{part}'; expected key=value")
        if key.strip() in params:
            raise MeasureError(f"{name}: parameter '{key.strip()}' given twice")
        params[key.strip()] = value.strip()
    return params


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside quotes."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for ch in text:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in (s.strip() for s in parts) if p]


REGISTRY = Registry()

#: the modules providing the built-in families (each registers its families on import)
PROVIDERS = catalogue.MODULES
_loaded = False


def _load_families() -> None:
    """Import every family provider once (by name: this layer does not depend on them)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for provider in PROVIDERS:
        importlib.import_module(provider)


def _load_family(name: str) -> None:
    """Import the module registering the built-in family or alias ``name`` (any case), if it
    is one: a lookup imports only the families it reads (:mod:`ragmeter.measures.catalogue`)."""
    module = catalogue.FAMILY_MODULES.get(name.lower())
    if module is not None and not _loaded:
        _import(f"ragmeter.metrics.{module}")


def _load_trec(name: str) -> None:
    """Import the module registering trec_eval's names and groups if ``name`` is a name."""
    if name in catalogue.TREC_NAMES and not _loaded:
        _import(catalogue.TREC_MODULE)


def _load_group(name: str) -> None:
    """Import the module registering the groups of measures if ``name`` is one."""
    if name in catalogue.TREC_GROUPS and not _loaded:
        _import(catalogue.TREC_MODULE)


def _import(module: str) -> None:
    """Import ``module`` unless it is imported (each lookup of a family passes here)."""
    if module not in sys.modules:
        importlib.import_module(module)


def register(
    name: str,
    *,
    summary: str | None = None,
    cutoff: CutoffKind = "none",
    cutoff_type: type = int,
    params: tuple[Param, ...] = (),
    aliases: tuple[str, ...] = (),
    aggregate: Aggregation = "mean",
    needs: Iterable[str] = ("qrels",),
    cutoff_max: float | None = None,
    uses_pool: bool = False,
    grade_scale: tuple[int, int] | None = None,
    context: bool = False,
    default_context: str = "the whole ranking",
    shared_head: bool = False,
    reads_query_ids: bool = True,
) -> Callable[[Callable[[_A, Measure], FloatArray]], Callable[[_A, Measure], FloatArray]]:
    """Decorator registering a compute function ``(aligned, measure) -> values`` as a family.

    The function's first argument is any :class:`Aligned` (the protocol); it returns one float
    per evaluated query, NaN where undefined.
    """

    def wrap(fn: Callable[[_A, Measure], FloatArray]) -> Callable[[_A, Measure], FloatArray]:
        # the docstring's first paragraph, on one line (its first line alone can stop
        # mid-phrase where the source wrapped it)
        doc = " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())
        REGISTRY.add(
            Family(
                name=name,
                compute=fn,
                summary=summary or doc or name,
                cutoff=cutoff,
                cutoff_type=cutoff_type,
                params=params,
                aliases=aliases,
                aggregate=aggregate,
                needs=frozenset(needs),
                cutoff_max=cutoff_max,
                uses_pool=uses_pool,
                grade_scale=grade_scale,
                context=context,
                default_context=default_context,
                shared_head=shared_head,
                reads_query_ids=reads_query_ids,
            )
        )
        return fn

    return wrap


def parse_measure(name: str) -> Measure:
    """Parse a name that denotes exactly one measure."""
    measures = REGISTRY.parse(name)
    if len(measures) != 1:
        raise MeasureError(f"'{name}' denotes {len(measures)} measures; expected one")
    return measures[0]


def parse_measures(names: str | Iterable[str | Measure]) -> list[Measure]:
    """Parse names (or pass measures through), expanding groups, dropping duplicates."""
    if isinstance(names, str):
        names = [names]
    out: list[Measure] = []
    seen: set[Measure] = set()
    for item in names:
        batch = [item] if isinstance(item, Measure) else REGISTRY.parse(str(item))
        for m in batch:
            if m not in seen:
                seen.add(m)
                out.append(m)
    return out


def reads_subtopics(names: Iterable[str | Measure]) -> bool:
    """Whether any of the measures ``names`` is one of ndeval's, which read a TREC diversity
    qrels file's subtopics (:data:`ragmeter.measures.irm.SUBTOPIC_FAMILIES`)."""
    return any(m.family in irm.SUBTOPIC_FAMILIES for m in parse_measures(list(names)))
