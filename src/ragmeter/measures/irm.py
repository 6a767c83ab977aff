"""ir_measures' measure names, read beside ragmeter's own.

ir_measures (MacAvaney et al.) spells a measure as a Python expression,
``Name(param=value, ...)@at`` (``P(rel=2)@10``, ``nDCG(dcg='exp-log2')@10``, ``IPrec@0.2``,
``Compat(p=0.8)``); ragmeter also reads ``Name@at(param=value)``. Each name translates to one
ragmeter measure with ir_measures' definition — where ragmeter's own family of that name
defines it otherwise (``Judged@k``, ``IPrec@x``), to the family that gives ir_measures'
number — and the user's spelling stays on the measure (:attr:`Measure.alias`), so tables and
JSON keep it while the measure's identity is ragmeter's canonical name.

ir_measures' parameters and ragmeter's:

====================  ==========================================================
``cutoff`` / ``@k``   the cutoff ``@k``
``rel``               ``rel_level`` (binary measures); ``NumRet(rel=r)`` counts the
                      retrieved items of grade ≥ r (``num_rel_ret``)
``dcg``               ``'log2'`` → ``ndcg``, ``'exp-log2'`` → ``ndcg_exp`` (gdeval's)
``gains``             a dict ``{grade: gain}`` → ``gains='grade=gain,…'``
``p``, ``beta``,      the parameters of the same name
``alpha``, ``T``
``judged_only``       ``True`` → the family's ``judged_only=true`` (trec_eval's -J:
                      unjudged and negatively judged items dropped); refused by the
                      diversity measures
====================  ==========================================================

This module is part of the spec layer: it knows the names of families, not their code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import MeasureError

#: ir_measures' parameter values after reading: literals only
Args = dict[str, Any]
#: a translation: (ragmeter family, cutoff, ragmeter parameters) from ir_measures' arguments
Translate = Callable[[str, Args], tuple[str, "int | float | None", dict[str, Any]]]


@dataclass(frozen=True)
class IrmName:
    """One ir_measures measure name and how it becomes a ragmeter measure."""

    name: str
    translate: Translate
    #: ir_measures' parameters this name accepts (others are an error naming these)
    params: tuple[str, ...]
    #: the parameter ``@`` sets (``recall`` for ``IPrec``)
    at: str = "cutoff"
    #: read as ir_measures' even where a ragmeter name matches it case-insensitively (that
    #: name means another number: ``Judged`` is not ``judged``)
    shadows: bool = False


def _take(name: str, args: Args, key: str, default: Any = None) -> Any:
    return args.pop(key, default)


def _no_judged_only(name: str, args: Args) -> None:
    if _take(name, args, "judged_only", False):
        raise MeasureError(
            f"{name}: judged_only=True is not supported; unjudged items count as non-relevant"
            " (filter the run to judged documents first, or use `ragmeter trec-eval -J`)"
        )


def _judged_only(args: Args, params: dict[str, Any]) -> None:
    """``judged_only=True`` → the family's ``judged_only`` (trec_eval's -J)."""
    if args.pop("judged_only", False):
        params["judged_only"] = True


def _rel(args: Args, params: dict[str, Any], key: str = "rel_level") -> None:
    rel = args.pop("rel", None)
    if rel is not None:
        params[key] = rel


def _binary(family: str, *, cutoff: bool = True) -> Translate:
    """A binary measure: ``rel`` → ``rel_level``, ``cutoff`` → ``@k``."""

    def translate(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
        params: dict[str, Any] = {}
        _judged_only(args, params)
        _rel(args, params)
        k = args.pop("cutoff", None) if cutoff else None
        return family, k, params

    return translate


def _ndcg(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
    dcg = args.pop("dcg", "log2")
    gains = args.pop("gains", None)
    params: dict[str, Any] = {}
    _judged_only(args, params)
    if dcg == "log2":
        family = "ndcg"
    elif dcg == "exp-log2":
        family = "ndcg_exp"
    else:
        raise MeasureError(f"{name}: dcg must be 'log2' or 'exp-log2', got {dcg!r}")
    if gains is not None:
        if family != "ndcg" or not isinstance(gains, Mapping):
            raise MeasureError(f"{name}: gains must be a dict {{grade: gain}} with dcg='log2'")
        params["gains"] = ",".join(f"{int(g)}={float(v)!r}" for g, v in sorted(gains.items()))
    return family, args.pop("cutoff", None), params


def _num_ret(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
    rel = args.pop("rel", None)
    if rel is None:
        return "num_ret", None, {}
    return "num_rel_ret", None, {"rel_level": rel}


def _num_rel_ret(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
    return "num_rel_ret", None, {"rel_level": args.pop("rel", 1)}


def _set_p(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
    params: dict[str, Any] = {}
    _judged_only(args, params)
    _rel(args, params)
    relative = bool(args.pop("relative", name == "SetRelP"))
    return ("set_relative_precision" if relative else "set_precision"), None, params


def _set_f(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
    params: dict[str, Any] = {}
    _judged_only(args, params)
    _rel(args, params)
    if "beta" in args:
        params["beta"] = args.pop("beta")
    return "set_f", None, params


def _passthrough(family: str, keys: Mapping[str, str], *, cutoff: bool = False) -> Translate:
    """ir_measures' parameters renamed by ``keys`` (``{irm name: ragmeter name}``)."""

    def translate(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
        _no_judged_only(name, args)
        params = {ours: args.pop(theirs) for theirs, ours in keys.items() if theirs in args}
        k = args.pop("cutoff", None) if cutoff else None
        return family, k, params

    return translate


def _rbp(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
    params: dict[str, Any] = {"p": args.pop("p", 0.8)}  # ir_measures' default persistence
    _rel(args, params)
    if args.pop("cutoff", None) is not None:
        raise MeasureError(f"{name}: a cutoff is not supported (RBP reads the whole ranking)")
    return "rbp", None, params


def _cwl(family: str, *, cutoff: bool = False) -> Translate:
    """cwl_eval's graded measures: ``min_rel``/``max_rel`` scale grades to gains; ``T``."""

    def translate(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
        if args.pop("dcg", "log2") != "log2":
            raise MeasureError(f"{name}: dcg must be 'log2'")
        keys = ("T", "p", "min_rel", "max_rel")
        params: dict[str, Any] = {key: args.pop(key) for key in keys if key in args}
        return family, args.pop("cutoff", None) if cutoff else None, params

    return translate


def _iprec(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
    params: dict[str, Any] = {}
    _judged_only(args, params)
    _rel(args, params)
    if "recall" not in args:
        raise MeasureError(f"{name}: needs a recall level, e.g. IPrec@0.2")
    return "iprec", args.pop("recall"), params


def _diversity(family: str, keys: tuple[str, ...], *, cutoff: bool = True) -> Translate:
    """A diversity measure over sub-questions (subtopics): ``rel`` must be 1, since a
    diversity qrels judgment > 0 is read as answering (rating 5); ``alpha``/``beta`` pass."""

    def translate(name: str, args: Args) -> tuple[str, int | float | None, dict[str, Any]]:
        _no_judged_only(name, args)
        rel = args.pop("rel", 1)
        if rel != 1:
            raise MeasureError(
                f"{name}: rel={rel!r} is not supported; ragmeter reads a positive subtopic"
                " judgment as answering (set the answerability threshold with tau on ratings)"
            )
        params = {key: args.pop(key) for key in keys if key in args}
        k = args.pop("cutoff", None) if cutoff else None
        return family, k, params

    return translate


_BIN = ("cutoff", "rel", "judged_only")
_DIV = ("cutoff", "rel", "judged_only")
#: ndeval's measures (and α-nDCG): they read subtopics, which ir_measures and pyndeval take
#: from the second column of TREC qrels (``qid subtopic docid judgment``)
SUBTOPIC_FAMILIES = frozenset(
    {"err_ia", "nerr_ia", "alpha_dcg", "alpha_ndcg", "nrbp", "nnrbp", "p_ia", "strecall", "ap_ia"}
)


_COMPAT = ("p", "normalize")
_NRBP = ("rel", "alpha", "beta")

#: every ir_measures name ragmeter reads, by its exact (case-sensitive) spelling
IRM_NAMES: dict[str, IrmName] = {
    n.name: n
    for n in (
        IrmName("P", _binary("precision"), _BIN),
        IrmName("Precision", _binary("precision"), _BIN),
        IrmName("R", _binary("recall"), _BIN),
        IrmName("Recall", _binary("recall"), _BIN),
        IrmName("AP", _binary("map"), _BIN),
        IrmName("MAP", _binary("map"), _BIN),
        IrmName("RR", _binary("mrr"), _BIN),
        IrmName("MRR", _binary("mrr"), _BIN),
        IrmName("Success", _binary("success"), _BIN),
        IrmName("Rprec", _binary("rprec", cutoff=False), ("rel", "judged_only")),
        IrmName("RPrec", _binary("rprec", cutoff=False), ("rel", "judged_only")),
        IrmName("Bpref", _binary("bpref", cutoff=False), ("rel",)),
        IrmName("BPref", _binary("bpref", cutoff=False), ("rel",)),
        IrmName("infAP", _binary("infap", cutoff=False), ("rel",)),
        IrmName("nDCG", _ndcg, ("cutoff", "dcg", "gains", "judged_only")),
        IrmName("NDCG", _ndcg, ("cutoff", "dcg", "gains", "judged_only")),
        IrmName("Judged", _passthrough("judged_rate", {}, cutoff=True), ("cutoff",), shadows=True),
        IrmName("NumQ", _passthrough("num_queries", {}), ()),
        IrmName("NumRel", _binary("num_rel", cutoff=False), ("rel",)),
        IrmName("NumRet", _num_ret, ("rel",)),
        IrmName("NumRelRet", _num_rel_ret, ("rel",)),
        IrmName("SetP", _set_p, ("rel", "relative", "judged_only")),
        IrmName("SetRelP", _set_p, ("rel", "relative", "judged_only")),
        IrmName("SetR", _binary("set_recall", cutoff=False), ("rel",)),
        IrmName("SetF", _set_f, ("rel", "beta", "judged_only")),
        IrmName("SetAP", _binary("set_map", cutoff=False), ("rel", "judged_only")),
        IrmName("IPrec", _iprec, ("recall", "rel", "judged_only"), at="recall"),
        IrmName("Compat", _passthrough("compat", {"p": "p", "normalize": "normalize"}), _COMPAT),
        IrmName("ERR", _passthrough("err", {}, cutoff=True), ("cutoff",)),
        IrmName("Accuracy", _binary("accuracy"), ("cutoff", "rel")),
        IrmName("RBP", _rbp, ("cutoff", "p", "rel"), shadows=True),
        IrmName("SDCG", _cwl("sdcg", cutoff=True), ("cutoff", "dcg", "min_rel", "max_rel")),
        IrmName("INST", _cwl("inst"), ("T", "min_rel", "max_rel")),
        IrmName("INSQ", _cwl("insq"), ("T", "min_rel", "max_rel")),
        IrmName("BPM", _cwl("bpm", cutoff=True), ("cutoff", "T", "min_rel", "max_rel")),
        IrmName("NERR8", _cwl("nerr8", cutoff=True), ("cutoff", "min_rel", "max_rel")),
        IrmName("NERR9", _cwl("nerr9", cutoff=True), ("cutoff", "min_rel", "max_rel")),
        IrmName("NERR10", _cwl("nerr10"), ("p", "min_rel", "max_rel")),
        IrmName("NERR11", _cwl("nerr11"), ("T", "min_rel", "max_rel")),
        IrmName("ERR_IA", _diversity("err_ia", ()), _DIV),
        IrmName("nERR_IA", _diversity("nerr_ia", ()), _DIV),
        IrmName("alpha_DCG", _diversity("alpha_dcg", ("alpha",)), (*_DIV, "alpha")),
        IrmName("alpha_nDCG", _diversity("alpha_ndcg", ("alpha",)), (*_DIV, "alpha")),
        IrmName("NRBP", _diversity("nrbp", ("alpha", "beta"), cutoff=False), _NRBP),
        IrmName("nNRBP", _diversity("nnrbp", ("alpha", "beta"), cutoff=False), _NRBP),
        IrmName("P_IA", _diversity("p_ia", ()), _DIV),
        IrmName("StRecall", _diversity("strecall", ()), ("cutoff", "rel")),
        IrmName("AP_IA", _diversity("ap_ia", (), cutoff=False), ("rel", "judged_only")),
    )
}


def register_irm(name: IrmName) -> None:
    """Add (or replace) an ir_measures name, e.g. from a module defining its family."""
    IRM_NAMES[name.name] = name


# ``Name@at(params)`` (ragmeter's order) is rewritten to ir_measures' ``Name(params)@at``
_AT_FIRST = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*@\s*([^()@]+?)\s*(\(.*\))\s*")


def irm_name(text: str) -> IrmName | None:
    """The ir_measures name ``text`` starts with, if ragmeter reads it."""
    # the name must end where ir_measures' grammar goes on (@, parameters, or nothing):
    # R-prec, P.5,10 and P_10 are ragmeter's and trec_eval's names, not R or P
    match = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?=$|[@(])", text)
    return IRM_NAMES.get(match[1]) if match else None


def translate(text: str) -> tuple[str, int | float | None, dict[str, Any]]:
    """``(family, cutoff, params)`` of an ir_measures spelling; :class:`MeasureError` if it is
    not one (or its parameters are wrong)."""
    name, at, args = _read(text)
    spec = IRM_NAMES.get(name)
    if spec is None:
        raise MeasureError(f"unknown ir_measures measure '{name}'")
    if at is not None:
        if spec.at in args:
            raise MeasureError(f"{text}: {spec.at} given twice (@ and as a parameter)")
        args[spec.at] = at
    unknown = sorted(set(args) - set(spec.params))
    if unknown:
        valid = ", ".join(spec.params) or "none"
        raise MeasureError(
            f"{text}: ir_measures' {name} takes no parameter {', '.join(unknown)} (valid: {valid})"
        )
    return spec.translate(name, dict(args))


def _read(text: str) -> tuple[str, Any, Args]:
    """Read ``Name``, ``Name@at``, ``Name(k=v, …)``, ``Name(k=v)@at`` or ``Name@at(k=v)``."""
    source = text.strip()
    moved = _AT_FIRST.fullmatch(source)
    if moved:
        source = f"{moved[1]}{moved[3]}@{moved[2]}"
    try:
        node: ast.AST = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise MeasureError(f"'{text}' is not an ir_measures measure: {exc.msg}") from None
    at: Any = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at = _literal(text, node.right)
        node = node.left
    args: Args = {}
    if isinstance(node, ast.Call):
        if node.args:
            raise MeasureError(f"{text}: ir_measures' parameters are named (key=value)")
        for kw in node.keywords:
            if kw.arg is None:
                raise MeasureError(f"{text}: ir_measures' parameters are named (key=value)")
            args[kw.arg] = _literal(text, kw.value)
        node = node.func
    if not isinstance(node, ast.Name):
        raise MeasureError(f"'{text}' is not an ir_measures measure")
    return node.id, at, args


def _literal(text: str, node: ast.AST) -> Any:
    if isinstance(node, ast.Name) and node.id in ("true", "false"):
        return node.id == "true"  # ragmeter's spelling of booleans
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise MeasureError(f"{text}: '{ast.unparse(node)}' is not a literal value") from None
