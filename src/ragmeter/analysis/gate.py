"""A regression gate: did a run fall (or rise) past a threshold against a baseline?

What ``ragmeter check`` and the ``ragmeter.pytest`` plugin decide. A *rule* names a measure,
a direction and a threshold, and may ask for significance::

    RULE      := MEASURE ("drop" | "rise") (">" | ">=") AMOUNT ["%"] ["significant"]

    ndcg@10 drop > 0.01 significant      fail when nDCG@10 fell by more than 0.01 and a paired
                                         test says the fall is real
    recall@100 drop >= 5%                fail when recall@100 fell by 5 % of the baseline or more
    harm@10 rise > 0.02                  fail when harm (lower is better) rose by more than 0.02

For a rule on measure m, with μ_run and μ_base the means ``ragmeter evaluate`` reports:

* drop = μ_base − μ_run and rise = μ_run − μ_base (a rule reads the direction it names; it
  does not guess which way is better);
* an absolute AMOUNT compares the change itself; ``AMOUNT%`` compares the change relative to
  the baseline, 100 · change / |μ_base| (with μ_base = 0 a positive change is +∞, none is 0);
* ``significant`` adds a paired test (``--test``: randomization by default, as ``ragmeter
  compare``; on the queries both runs define) whose two-sided p-values are adjusted by Holm
  over every ``significant`` rule of the gate; the rule then breaks only when the change is
  past the threshold *and* p̃ ≤ α *and* the test's effect points the rule's way.

A rule is broken when its change passes the threshold (and, with ``significant``, the test
agrees); the gate fails when any rule is broken. A mean that is undefined (NA on every
query) cannot be checked: that is an error, never a pass.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragmeter.errors import MeasureError, RagmeterError

if TYPE_CHECKING:
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.stats.paired import TestName

_RULE = re.compile(
    r"^\s*(?P<measure>\S+)\s+(?P<direction>\S+)\s+(?P<op>\S+)\s+(?P<amount>[^\s%]+)"
    r"(?P<percent>\s*%)?(?:\s+(?P<flag>\S+))?\s*$"
)
GRAMMAR = 'MEASURE drop|rise >|>= AMOUNT[%] [significant], e.g. "ndcg@10 drop > 0.01 significant"'


class RuleError(RagmeterError, ValueError):
    """A ``--fail-if`` rule that does not parse."""


@dataclass(frozen=True)
class Rule:
    """One gate rule (see the module docstring for its grammar and meaning).

    Attributes:
        text: the rule as written.
        measure: the measure's name as written (``ndcg@10``).
        direction: ``drop`` or ``rise``.
        inclusive: ``>=`` rather than ``>``.
        amount: the threshold (a fraction of 1 for an absolute rule, percent for a relative).
        relative: the threshold is a percentage of the baseline's mean.
        significant: the change must also pass a paired test (Holm over such rules).
    """

    text: str
    measure: str
    direction: Literal["drop", "rise"]
    inclusive: bool
    amount: float
    relative: bool
    significant: bool

    def change(self, base: float, run: float) -> float:
        """The change this rule reads: absolute, or in percent of ``base`` when relative."""
        delta = (base - run) if self.direction == "drop" else (run - base)
        if not self.relative:
            return delta
        if base == 0.0:
            return math.inf if delta > 0 else 0.0
        return 100.0 * delta / abs(base)

    def passes_threshold(self, change: float) -> bool:
        return change >= self.amount if self.inclusive else change > self.amount

    def threshold_text(self) -> str:
        return f"{'>=' if self.inclusive else '>'} {self.amount:g}{'%' if self.relative else ''}"


def parse_rule(text: str) -> Rule:
    """Parse one rule; a :class:`RuleError` says what is wrong and shows the grammar."""
    from ragmeter.measures import REGISTRY

    def bad(why: str) -> RuleError:
        return RuleError(f"--fail-if {text!r}: {why}; a rule reads {GRAMMAR}")

    m = _RULE.match(text)
    if m is None:
        raise bad("expected a measure, drop or rise, > or >=, and an amount")
    direction, op, flag = m["direction"].lower(), m["op"], m["flag"]
    if direction not in ("drop", "rise"):
        raise bad(f"{m['direction']!r} is not a direction (drop or rise)")
    if op not in (">", ">="):
        raise bad(f"{op!r} is not a comparison (> or >=)")
    try:
        amount = float(m["amount"])
    except ValueError:
        raise bad(f"{m['amount']!r} is not a number") from None
    if not math.isfinite(amount) or amount < 0:
        raise bad(f"the amount {m['amount']!r} must be a finite number ≥ 0")
    if flag is not None and flag.lower() != "significant":
        raise bad(f"{flag!r} is not a flag (the only one is significant)")
    try:
        parsed = REGISTRY.parse(m["measure"])
    except MeasureError as exc:
        raise bad(str(exc)) from None
    if len(parsed) != 1:
        raise bad(f"{m['measure']!r} names {len(parsed)} measures; a rule checks one")
    return Rule(
        text=text.strip(),
        measure=str(parsed[0]),
        direction="drop" if direction == "drop" else "rise",
        inclusive=op == ">=",
        amount=amount,
        relative=m["percent"] is not None,
        significant=flag is not None,
    )


def parse_rules(texts: Sequence[str]) -> list[Rule]:
    """Parse every rule (at least one)."""
    if not texts:
        raise RuleError(f"no rule given; give one or more --fail-if {GRAMMAR}")
    return [parse_rule(t) for t in texts]


@dataclass(frozen=True)
class RuleOutcome:
    """One rule checked: both means, the change it reads, and the test when it asks for one.

    ``p_value`` is the paired test's two-sided p; ``p_adjusted`` after Holm over the gate's
    significant rules (both NaN for a rule without ``significant``); ``direction`` is the sign
    of the test's effect (run − baseline).
    """

    rule: Rule
    baseline_mean: float
    run_mean: float
    change: float
    past_threshold: bool
    p_value: float
    p_adjusted: float
    direction: int
    n: int
    broken: bool
    #: a sequential check's reading of the rule (``None`` for a fixed test)
    sequence: SequentialReading | None = None

    def to_dict(self) -> dict[str, Any]:
        def clean(v: float) -> float | str | None:
            if math.isnan(v):
                return None
            return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")

        sequence = self.sequence
        return {
            "rule": self.rule.text,
            "measure": self.rule.measure,
            "baseline": clean(self.baseline_mean),
            "run": clean(self.run_mean),
            "change": clean(self.change),
            "threshold": self.rule.threshold_text(),
            "past_threshold": self.past_threshold,
            "p_value": clean(self.p_value),
            "p_adjusted": clean(self.p_adjusted),
            "n": self.n,
            "broken": self.broken,
            **(
                {
                    "sequence": {
                        "method": sequence.method,
                        "alpha": sequence.alpha,
                        "interval": [clean(sequence.lower), clean(sequence.upper)],
                        "looks": sequence.looks,
                        "fired_at": sequence.fired_at,
                        "since": sequence.since,
                    }
                }
                if sequence is not None
                else {}
            ),
        }


@dataclass(frozen=True)
class SequentialReading:
    """How a sequential check read one significant rule: the interval for the change (in the
    rule's direction and unit) at the look it fired, else at the last look, read on the values
    since the look ``since``; its method and level (α over the significant rules,
    Bonferroni), how many looks there were, and the look at which a reading first lay wholly
    past the threshold (``None``: never)."""

    method: str
    alpha: float
    lower: float
    upper: float
    looks: int
    fired_at: str | None
    #: the look from which the values of the interval shown were read
    since: str | None = None


@dataclass(frozen=True)
class GateResult:
    """Every rule of a gate checked; ``failed`` when any is broken."""

    run: str
    baseline: str
    outcomes: tuple[RuleOutcome, ...]
    test: str
    alpha: float
    warnings: tuple[str, ...] = ()
    #: what the labels of the qrels file the runs were evaluated on are (the ``to_json()`` of
    #: :class:`ragmeter.analysis.calibration.LabelsDescription`); its ``lines`` are printed
    #: after the verdict by :meth:`describe`, the whole object is in :meth:`to_dict`
    labels: Mapping[str, Any] | None = None
    #: how the significant rules' levels are shared: Holm (a fixed test) or Bonferroni (a
    #: sequential check, where each rule's sequence gets α / their number)
    correction: str = "holm"
    #: where a check re-run against one baseline stands in its history (``check
    #: --sequential``: the ``to_dict()`` of :class:`ragmeter.analysis.sequential_gate.Look`)
    look: Mapping[str, Any] | None = None

    @property
    def sequential(self) -> bool:
        """Whether the significant rules were read on confidence sequences."""
        return any(o.sequence is not None for o in self.outcomes)

    @property
    def label_lines(self) -> list[str]:
        """The labels' line(s): their provenance when a judge made some (else none)."""
        return [str(line) for line in (self.labels or {}).get("lines") or []]

    @property
    def failed(self) -> bool:
        return any(o.broken for o in self.outcomes)

    @property
    def broken(self) -> tuple[RuleOutcome, ...]:
        return tuple(o for o in self.outcomes if o.broken)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "baseline": self.baseline,
            "failed": self.failed,
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "rules": [o.to_dict() for o in self.outcomes],
            "warnings": list(self.warnings),
            **({"labels": dict(self.labels)} if self.labels is not None else {}),
            **({"look": dict(self.look)} if self.look is not None else {}),
        }

    def describe(self) -> str:
        """One line per broken rule (an assertion message), or ``passed``."""
        labels = [f"  labels: {line}" for line in self.label_lines]
        if not self.failed:
            return "\n".join([f"{self.run} against {self.baseline}: every rule passed", *labels])
        lines = [f"{self.run} against {self.baseline}: {len(self.broken)} rule(s) broken"]
        for o in self.broken:
            sig = "" if math.isnan(o.p_adjusted) else f", p (Holm) {o.p_adjusted:.4g}"
            if o.sequence is not None:
                sig = f", sequence [{o.sequence.lower:.4g}, {o.sequence.upper:.4g}]"
            lines.append(
                f"  {o.rule.text}: {o.rule.measure} {o.baseline_mean:.4f} → {o.run_mean:.4f} "
                f"({o.rule.direction} {o.change:.4g}{'%' if o.rule.relative else ''}{sig})"
            )
        return "\n".join([*lines, *labels])


def check_evaluation(
    evaluation: Evaluation,
    rules: Sequence[Rule],
    *,
    baseline: int | str = 0,
    test: TestName = "randomization",
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int | None = 0,
) -> GateResult:
    """Check ``rules`` on an evaluation of two runs: the baseline and the run to gate."""
    from ragmeter.stats.comparison import compare
    from ragmeter.stats.correction import holm

    if len(evaluation.runs) != 2:
        raise RagmeterError(f"a gate compares two runs, got {len(evaluation.runs)}")
    base = evaluation[baseline]
    run = next(r for r in evaluation.runs if r is not base)
    means = [(_mean(base, r.measure), _mean(run, r.measure)) for r in rules]
    tested = sorted({r.measure for r in rules if r.significant})
    tests: dict[str, tuple[float, int, int]] = {}
    if tested:
        # correction "none": the p-values are adjusted below, over the rules, not the measures
        comparison = compare(
            evaluation,
            baseline=base.name,
            measures=tested,
            test=test,
            correction="none",
            alpha=alpha,
            permutations=permutations,
            bootstrap=1000,
            seed=seed,
        )
        for m in tested:
            d = comparison.difference(run.name, m)
            if math.isnan(d.p_value):
                raise RagmeterError(
                    f"{m}: no query is defined in both {base.name!r} and {run.name!r}; "
                    "a significant rule cannot be tested"
                )
            sign = 0 if d.difference == 0 else (1 if d.difference > 0 else -1)
            tests[m] = (d.p_value, sign, d.n)
    significant = [i for i, r in enumerate(rules) if r.significant]
    adjusted = holm([tests[rules[i].measure][0] for i in significant]) if significant else ()
    p_adj = {i: float(p) for i, p in zip(significant, adjusted, strict=True)}
    outcomes = []
    for i, (rule, (mu_base, mu_run)) in enumerate(zip(rules, means, strict=True)):
        change = rule.change(mu_base, mu_run)
        past = rule.passes_threshold(change)
        p, sign, n = tests[rule.measure] if rule.significant else (math.nan, 0, 0)
        broken = past
        if rule.significant:
            wanted = -1 if rule.direction == "drop" else 1
            broken = past and p_adj[i] <= alpha and sign == wanted
        p_rule = p_adj.get(i, math.nan)
        outcomes.append(
            RuleOutcome(rule, mu_base, mu_run, change, past, p, p_rule, sign, n, broken)
        )
    return GateResult(run.name, base.name, tuple(outcomes), test, alpha, evaluation.warnings)


def _mean(result: RunResult, measure: str) -> float:
    try:
        value = result.aggregate(measure).value
    except KeyError as exc:
        raise RagmeterError(f"run {result.name!r}: {exc.args[0]}") from None
    if value is None or math.isnan(value):
        raise RagmeterError(
            f"{measure} is undefined (NA) on every query of {result.name!r}: "
            "the rule cannot be checked"
        )
    return float(value)


def check_runs(
    run: Run | str | Path,
    baseline: Run | str | Path,
    qrels: Qrels | Mapping[str, Mapping[str, int]] | str | Path,
    rules: Sequence[str | Rule],
    *,
    test: TestName = "randomization",
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int | None = 0,
    **options: Any,
) -> GateResult:
    """Evaluate ``run`` and ``baseline`` (Runs or run files) on ``qrels`` with the rules'
    measures and check the rules; ``options`` go to :func:`ragmeter.evaluation.evaluate`.
    A qrels file's labels are described in the result's ``labels`` (their provenance when a
    judge made some, a calibration found beside them).

    Example:
        >>> from ragmeter.core.data import Run
        >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
        >>> base = Run.from_lists({"q1": ["a"], "q2": ["b"]}, name="base")
        >>> new = Run.from_lists({"q1": ["x", "a"], "q2": ["b"]}, name="new")
        >>> check_runs(new, base, qrels, ["mrr drop > 0.1"]).failed
        True
    """
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels, read_run

    parsed = [r if isinstance(r, Rule) else parse_rule(r) for r in rules]
    if not parsed:
        raise RuleError(f"no rule given; a rule reads {GRAMMAR}")
    run_obj = run if not isinstance(run, (str, Path)) else read_run(run)
    base_obj = baseline if not isinstance(baseline, (str, Path)) else read_run(baseline)
    if base_obj.name == run_obj.name:
        base_obj = replace(base_obj, name=f"baseline {base_obj.name}")
    labels = read_qrels(qrels) if isinstance(qrels, (str, Path)) else qrels
    measures = list(dict.fromkeys(r.measure for r in parsed))
    evaluation = evaluate([base_obj, run_obj], labels, measures, **options)
    result = check_evaluation(
        evaluation, parsed, test=test, alpha=alpha, permutations=permutations, seed=seed
    )
    if not isinstance(qrels, (str, Path)):
        return result  # labels in memory carry no provenance sidecar: nothing to say
    from ragmeter.analysis.calibration import label_description

    return replace(result, labels=label_description(Path(qrels)).to_json())
