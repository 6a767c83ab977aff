"""Monitoring in production: time windows, seeded sampling per window, per-window means with
intervals, latency percentiles, and the drift gate of ``ragmeter monitor check``.

**Windows.** A span belongs to the window ``⌊start / W⌋·W`` (seconds since the epoch, UTC)
where W is the window length (``15m``, ``1h``, ``1d``): windows are aligned on the epoch, so a
day window runs from 00:00 UTC; spans are placed by their start time, whatever order they come
in.

**Sampling** (seeded, stratified by window). Each span gets the key
``u = int(SHA-256("seed:trace_id:span_id")[:8]) / 2⁶⁴`` in [0, 1) (a span is known by its
trace id and span id: OpenTelemetry span ids are unique only within their trace):

* a rate r (``--sample 0.05``): a span is sampled when u < r — each span independently with
  probability r, and the decision of a span never changes when more traffic arrives;
* a count N (``--sample 200``): each window keeps N spans: those sampled by earlier runs, then
  the new spans of smallest key until N (a simple random sample of the window's spans when
  they come in one run).

**Per-window figures.** For a measure with per-span values x₁…xₙ in a window (NA left out):
the mean x̄ = Σxᵢ/n and the seeded percentile bootstrap interval of the mean
(:func:`ragmeter.stats.bootstrap.bootstrap_ci`, 10 000 replicates at 95 %). Latencies: the
p50, p95 and p99 of the stage's span durations in the window (``numpy.quantile``'s linear
interpolation between order statistics), over every span read, not only the sample.

**Drift gate.** ``ragmeter check``'s rules (:mod:`ragmeter.analysis.gate`) read the change of a
measure's window mean against a baseline (another window, or a stored evaluation). Windows are
independent samples, not paired queries, so ``significant`` uses Welch's unequal-variance t
test: t = (x̄ − ȳ)/√(s²ₓ/nₓ + s²ᵧ/nᵧ), with the Welch–Satterthwaite degrees of freedom
ν = (s²ₓ/nₓ + s²ᵧ/nᵧ)² / ((s²ₓ/nₓ)²/(nₓ−1) + (s²ᵧ/nᵧ)²/(nᵧ−1)); the two-sided p-values of the
gate's significant rules are adjusted by Holm, as ``ragmeter check`` does. That test holds at
level α *at one look*; a gate re-run every day needs :func:`check_sequential` (the default of
``ragmeter monitor check``), whose chance of ever a false alarm is at most α over every look.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from ragmeter.errors import RagmeterError
from ragmeter.stats.confseq import Method

if TYPE_CHECKING:
    from ragmeter.analysis.gate import GateResult

_WINDOW = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
K = TypeVar("K", bound=Hashable)
_LATENCY = re.compile(r"^latency_ms\.p([0-9]{1,2})\(stage=([^()]+)\)$")
#: the latency percentiles reported per stage
LATENCY_QUANTILES: tuple[float, ...] = (0.5, 0.95, 0.99)


class MonitorError(RagmeterError, ValueError):
    """A bad monitor option (window, sample, baseline)."""


def parse_window(text: str) -> int:
    """A window length in seconds from ``30m``, ``1h``, ``1d``."""
    m = _WINDOW.match(text)
    if m is None or int(m[1]) == 0:
        raise MonitorError(
            f"--window {text!r}: expected a positive length with a unit s, m, h or d (1h, 1d)"
        )
    return int(m[1]) * _UNIT[m[2]]


def window_text(seconds: int) -> str:
    """``1d``, ``6h``, ``15m`` or ``40s``: the shortest exact spelling."""
    for unit in ("d", "h", "m"):
        if seconds % _UNIT[unit] == 0:
            return f"{seconds // _UNIT[unit]}{unit}"
    return f"{seconds}s"


def window_label(start: int, window_s: int) -> str:
    """``2026-01-05`` for a day window, ``2026-01-05T13:00Z`` for shorter ones."""
    from datetime import UTC, datetime

    when = datetime.fromtimestamp(start, UTC)
    if window_s % 86400 == 0:
        return when.strftime("%Y-%m-%d")
    return when.strftime("%Y-%m-%dT%H:%MZ")


@dataclass(frozen=True)
class SampleSpec:
    """How many spans to judge per window: a count, or a rate in (0, 1]."""

    count: int | None = None
    rate: float | None = None

    def describe(self) -> str:
        return f"{self.count} per window" if self.count is not None else f"rate {self.rate:g}"


def parse_sample(text: str) -> SampleSpec:
    """``200`` (spans per window) or ``0.05`` (a rate)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise MonitorError(f"--sample {text!r}: expected a count (200) or a rate in (0, 1]")
    if value > 1 or text.strip().isdigit():
        if value != int(value):
            raise MonitorError(f"--sample {text!r}: a count must be a whole number")
        return SampleSpec(count=int(value))
    return SampleSpec(rate=value)


def window_of(start_ns: int, window_s: int) -> int:
    """The start (seconds since the epoch) of the window holding a span that started at
    ``start_ns`` nanoseconds since the epoch."""
    seconds = start_ns // 1_000_000_000
    return seconds - seconds % window_s


def sample_key(seed: int, span: str) -> float:
    """The span's key u in [0, 1): the first 8 bytes of SHA-256(``seed:span``) / 2⁶⁴, where
    ``span`` is ``trace_id:span_id`` (:func:`span_text`)."""
    digest = hashlib.sha256(f"{seed}:{span}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def span_text(key: tuple[str, str]) -> str:
    """``trace_id:span_id``: the text a span's sample key is computed from."""
    return f"{key[0]}:{key[1]}"


def choose(
    spans: Iterable[tuple[int, K]],
    spec: SampleSpec,
    seed: int,
    already: Mapping[int, int] | None = None,
    *,
    text: Callable[[K], str] = str,
) -> set[K]:
    """The spans to sample among new ``(window start, span)`` pairs, a span's key computed
    from ``text(span)`` (:func:`span_text` for the monitor's (trace id, span id) pairs);
    ``already``: how many spans each window holds from earlier runs (see the module
    docstring). Equal keys are ordered by the spans themselves."""
    if spec.rate is not None:
        rate = spec.rate
        return {s for _, s in spans if sample_key(seed, text(s)) < rate}
    assert spec.count is not None
    by_window: dict[int, list[tuple[float, K]]] = {}
    for window, span in spans:
        by_window.setdefault(window, []).append((sample_key(seed, text(span)), span))
    held = already or {}
    chosen: set[K] = set()
    for window, keyed in by_window.items():
        room = max(0, spec.count - held.get(window, 0))
        chosen.update(s for _, s in sorted(keyed)[:room])
    return chosen


@dataclass(frozen=True)
class WindowFigure:
    """One measure in one window: the sample size, mean and interval (NaN when undefined)."""

    window_start: int
    measure: str
    n: int
    mean: float
    low: float
    high: float


def mean_figure(
    window_start: int, measure: str, values: Sequence[float], *, seed: int = 0
) -> WindowFigure:
    """The mean of the defined ``values`` with its bootstrap interval (module docstring)."""
    from ragmeter.stats.bootstrap import bootstrap_ci

    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return WindowFigure(window_start, measure, 0, math.nan, math.nan, math.nan)
    low, high = bootstrap_ci(v, seed=seed)
    return WindowFigure(window_start, measure, len(v), float(v.mean()), low, high)


def latency_name(stage: str, quantile: float) -> str:
    """``latency_ms.p95(stage=retriever)``."""
    return f"latency_ms.p{round(quantile * 100):d}(stage={stage})"


def latency_quantile(measure: str) -> float | None:
    """The quantile a latency measure names (``latency_ms.p95(stage=retriever)`` → 0.95),
    ``None`` for another measure."""
    m = _LATENCY.match(measure)
    return None if m is None else int(m[1]) / 100


def _statistic(measure: str, values: np.ndarray) -> float:
    """A window's figure: the mean, or the quantile of a latency measure."""
    q = latency_quantile(measure)
    return float(values.mean()) if q is None else float(np.quantile(values, q))


def parse_monitor_rule(text: str) -> Any:
    """A ``--fail-if`` rule of ``ragmeter check``'s grammar, whose measure may also be a
    stage's latency quantile in ms: ``latency_ms.p95(stage=retriever) rise > 50``."""
    from ragmeter.analysis.gate import _RULE, GRAMMAR, RuleError, parse_rule

    m = _RULE.match(text)
    if m is None or latency_quantile(m["measure"]) is None:
        return parse_rule(text)
    # the measure is ours; the rest of the grammar is read by parse_rule on a stand-in
    stand_in = parse_rule(text.replace(m["measure"], "mrr", 1))
    if not 0 < int(_LATENCY.match(m["measure"])[1]) < 100:  # type: ignore[index]
        raise RuleError(
            f"--fail-if {text!r}: a quantile between p1 and p99; a rule reads {GRAMMAR}"
        )
    # the stand-in's reading, with the rule as written and our measure
    return replace(stand_in, text=text.strip(), measure=m["measure"])


def latency_figures(
    window_start: int, durations: Mapping[str, Sequence[float]]
) -> list[WindowFigure]:
    """p50, p95, p99 of each stage's durations (ms) in one window (NaN, no duration, left
    out); no interval."""
    out = []
    for stage in sorted(durations):
        d = np.asarray(durations[stage], dtype=np.float64)
        d = d[~np.isnan(d)]
        if len(d) == 0:
            continue
        for q in LATENCY_QUANTILES:
            value = float(np.quantile(d, q))
            out.append(
                WindowFigure(
                    window_start, latency_name(stage, q), len(d), value, math.nan, math.nan
                )
            )
    return out


@dataclass(frozen=True)
class Welch:
    """Welch's two-sample t test of x against y (see the module docstring)."""

    t: float
    df: float
    p_value: float


def welch_test(x: npt.ArrayLike, y: npt.ArrayLike) -> Welch:
    """Welch's t test of the means of x and y (NaN left out); NaN when either side has fewer
    than two values. With both variances 0: p = 1 when the means are equal, else 0."""
    from ragmeter.stats._common import t_two_sided

    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if len(a) < 2 or len(b) < 2:
        return Welch(math.nan, math.nan, math.nan)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se2 = va + vb
    diff = float(a.mean() - b.mean())
    if se2 == 0:  # no spread on either side: equal means are no evidence, unequal ones are
        return (
            Welch(0.0, math.inf, 1.0)
            if diff == 0
            else Welch(math.copysign(math.inf, diff), math.inf, 0.0)
        )
    t = diff / math.sqrt(se2)
    df = se2**2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return Welch(t, float(df), t_two_sided(t, float(df)))


def check_windows(
    current: Mapping[str, Sequence[float]],
    baseline: Mapping[str, Sequence[float]],
    rules: Sequence[Any],
    *,
    current_name: str,
    baseline_name: str,
    alpha: float = 0.05,
    warnings: Sequence[str] = (),
) -> GateResult:
    """Check gate rules (:class:`ragmeter.analysis.gate.Rule`) on per-span values:
    ``current[measure]`` (the window checked) against ``baseline[measure]``; returns a
    :class:`~ragmeter.analysis.gate.GateResult` (its test is Welch's t)."""
    from ragmeter.analysis.gate import GateResult, RuleOutcome
    from ragmeter.stats.correction import holm

    pairs = [
        (_defined(current, r.measure, current_name), _defined(baseline, r.measure, baseline_name))
        for r in rules
    ]
    for r in rules:
        if r.significant and latency_quantile(r.measure) is not None:
            raise MonitorError(
                f"--fail-if {r.text!r}: significant tests a mean; a latency rule compares "
                "the windows' quantiles (drop it)"
            )
    tests = [
        welch_test(x, y) if r.significant else None for r, (x, y) in zip(rules, pairs, strict=True)
    ]
    significant = [i for i, t in enumerate(tests) if t is not None]
    for i in significant:
        if math.isnan(tests[i].p_value):  # type: ignore[union-attr]
            raise MonitorError(
                f"{rules[i].measure}: a significant rule needs at least 2 values on each side "
                f"({len(pairs[i][0])} in {current_name}, {len(pairs[i][1])} in {baseline_name})"
            )
    adjusted = holm([tests[i].p_value for i in significant]) if significant else ()  # type: ignore[union-attr]
    p_adj = {i: float(p) for i, p in zip(significant, adjusted, strict=True)}
    outcomes = []
    for i, (rule, (x, y)) in enumerate(zip(rules, pairs, strict=True)):
        mu_run, mu_base = _statistic(rule.measure, x), _statistic(rule.measure, y)
        change = rule.change(mu_base, mu_run)
        past = rule.passes_threshold(change)
        test = tests[i]
        sign = 0 if mu_run == mu_base else (1 if mu_run > mu_base else -1)
        broken = past
        if test is not None:
            wanted = -1 if rule.direction == "drop" else 1
            broken = past and p_adj[i] <= alpha and sign == wanted
        outcomes.append(
            RuleOutcome(
                rule,
                mu_base,
                mu_run,
                change,
                past,
                test.p_value if test is not None else math.nan,
                p_adj.get(i, math.nan),
                sign,
                len(x),
                broken,
            )
        )
    return GateResult(current_name, baseline_name, tuple(outcomes), "welch", alpha, tuple(warnings))


def check_sequential(
    looks: Sequence[tuple[str, Mapping[str, Sequence[float]]]],
    reference: Mapping[str, Sequence[float]],
    rules: Sequence[Any],
    *,
    current_name: str,
    baseline_name: str,
    alpha: float = 0.05,
    warnings: Sequence[str] = (),
) -> GateResult:
    """Check gate rules on a stream read look by look (anytime-valid; the module docs).

    ``looks`` are the windows after the reference, oldest first, each ``(label, values by
    measure)``; every window is a look. A ``significant`` rule fires at the first look where
    the confidence sequence for mean(stream so far) − mean(reference)
    (:func:`ragmeter.stats.confseq.difference_from_reference`, at α / the number of significant
    rules) lies wholly past the rule's threshold in its direction; so the chance that any rule
    ever fires on an unchanged stream is at most α, however many looks are taken. A relative
    threshold is taken of the reference's mean. A rule without ``significant`` compares the
    last window's mean with the reference's, as the per-window check does.
    """
    from ragmeter.analysis.gate import GateResult, RuleOutcome

    if not looks:
        raise MonitorError(f"no judged window after {baseline_name} to check")
    tested = [r for r in rules if r.significant]
    for r in tested:
        if latency_quantile(r.measure) is not None:
            raise MonitorError(
                f"--fail-if {r.text!r}: a sequential check reads means, and a latency rule "
                "compares quantiles (drop 'significant' from it)"
            )
    level = alpha / max(len(tested), 1)
    outcomes = []
    for rule in rules:
        ref = _defined(reference, rule.measure, baseline_name)
        last = _defined(looks[-1][1], rule.measure, f"{current_name} ({looks[-1][0]})")
        if not rule.significant:
            base, run = _statistic(rule.measure, ref), _statistic(rule.measure, last)
            change = rule.change(base, run)
            past = rule.passes_threshold(change)
            sign = 0 if run == base else (1 if run > base else -1)
            outcomes.append(
                RuleOutcome(
                    rule, base, run, change, past, math.nan, math.nan, sign, len(last), past
                )
            )
            continue
        outcomes.append(_sequential_outcome(rule, ref, looks, level, current_name))
    return GateResult(
        current_name,
        baseline_name,
        tuple(outcomes),
        "confidence sequence",
        alpha,
        tuple(warnings),
        correction="bonferroni",
    )


def _defined(side: Mapping[str, Sequence[float]], measure: str, name: str) -> np.ndarray:
    """A side's defined (non-NA) values of ``measure``; an error when it has none."""
    if measure not in side:
        raise MonitorError(f"{name} has no {measure}; measured: {', '.join(sorted(side))}")
    v = np.asarray(side[measure], dtype=np.float64)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        why = " (a span that ends before it starts has none)" if latency_quantile(measure) else ""
        raise MonitorError(f"{measure} is undefined (NA) on every span of {name}{why}")
    return v


#: the confidence sequences of the sequential check. The asymptotic ones (Waudby-Smith et al.
#: 2024): on a window of 40 values an empirical-Bernstein sequence is at least
#: log(2/α)/(t/2) wide (0.38 at α = 0.025), too wide to see even a halved nDCG, while the
#: asymptotic one is close to a t interval's width; benchmarks/sequential_study.py measures
#: its ever-false-alarm rate
SEQUENTIAL_METHOD: Method = "asymptotic"


def _sequential_outcome(
    rule: Any,
    ref: np.ndarray,
    looks: Sequence[tuple[str, Mapping[str, Sequence[float]]]],
    level: float,
    stream_name: str,
) -> Any:
    """One significant rule read on the change scan from the reference
    (:func:`ragmeter.stats.confseq.scan_from_reference`): it fires at the first look where a
    reading lies wholly past the threshold in the rule's direction."""
    from ragmeter.analysis.gate import RuleOutcome, SequentialReading
    from ragmeter.stats.confseq import scan_from_reference

    parts = [_defined_or_empty(values, rule.measure) for _, values in looks]
    stream = np.concatenate(parts)
    if len(stream) == 0:
        raise MonitorError(f"{rule.measure} is undefined (NA) on every span of {stream_name}")
    method: Method = SEQUENTIAL_METHOD
    scan = scan_from_reference(ref, parts, alpha=level, method=method)
    base = float(ref.mean())
    scale = 100.0 / abs(base) if rule.relative and base != 0 else 1.0
    drop = rule.direction == "drop"
    readings = scan.lowest_upper if drop else scan.highest_lower

    def interval(t: int) -> tuple[float, float]:
        """The change's interval at look t in the rule's direction and unit (a drop reads
        baseline − run)."""
        r = readings[t]
        return (-r.upper * scale, -r.lower * scale) if drop else (r.lower * scale, r.upper * scale)

    fired = next((t for t in range(len(looks)) if interval(t)[0] > rule.amount), None)
    shown = len(looks) - 1 if fired is None else fired
    low, high = interval(shown)
    start = readings[shown].start
    reading = SequentialReading(
        method,
        level,
        float(low),
        float(high),
        len(looks),
        None if fired is None else looks[fired][0],
        looks[start - 1][0] if start else None,
    )
    run = float(np.concatenate(parts[start - 1 :]).mean()) if start else math.nan
    change = rule.change(base, run)
    sign = 0 if run == base else (1 if run > base else -1)
    return RuleOutcome(
        rule,
        base,
        run,
        change,
        rule.passes_threshold(change),
        math.nan,
        math.nan,
        sign,
        len(stream),
        fired is not None,
        reading,
    )


def _defined_or_empty(values: Mapping[str, Sequence[float]], measure: str) -> np.ndarray:
    v = np.asarray(values.get(measure, ()), dtype=np.float64)
    return v[~np.isnan(v)]
