"""False alarms and detection delay of ``ragmeter monitor check``: sequential against per window.

Each stream is a monitor's life: a reference of R per-query values (the release's stored
evaluation, ``--baseline stored:REF``) and L looks (daily windows) of W sampled values each,
every value ~ Beta(6, 4) (mean 0.6). The rule is ``ndcg@5 drop > 0 significant`` at α = 0.05.

* (a) **unchanged streams**: the share of streams that *ever* alarm over the L looks —
  the sequential check (:func:`ragmeter.analysis.monitor.check_sequential`, the default) and
  the per-window check (Welch's t of each window against the reference at level α, the
  ``--per-window`` mode re-run every day);
* (b) **a drop of 0.05** (Beta(5.5, 4.5): mean 0.55) from look C on: the share of streams
  alarmed after C, and the detection delay (the alarm's look − C + 1) among them; alarms
  before C are false.

Each share has its Monte Carlo standard error √(p(1 − p)/n).

    python benchmarks/sequential_study.py [--streams 1000] [--looks 100] [--window 50]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ragmeter.analysis.gate import parse_rule
from ragmeter.analysis.monitor import check_sequential, welch_test

RULE = parse_rule("ndcg@5 drop > 0 significant")


def stream(
    rng: np.random.Generator, looks: int, window: int, change_at: int | None
) -> list[np.ndarray]:
    """L windows of values; from look ``change_at`` (1-based) on the mean drops by 0.05."""
    out = []
    for look in range(1, looks + 1):
        a, b = (5.5, 4.5) if change_at is not None and look >= change_at else (6.0, 4.0)
        out.append(rng.beta(a, b, window))
    return out


def sequential_alarm(reference: np.ndarray, windows: list[np.ndarray], alpha: float) -> int | None:
    """The look (1-based) the sequential check first fires at, or ``None``."""
    looks = [(str(i + 1), {"ndcg@5": w.tolist()}) for i, w in enumerate(windows)]
    result = check_sequential(
        looks,
        {"ndcg@5": reference.tolist()},
        [RULE],
        current_name="stream",
        baseline_name="reference",
        alpha=alpha,
    )
    (outcome,) = result.outcomes
    fired = outcome.sequence.fired_at if outcome.sequence is not None else None
    return None if fired is None else int(fired)


def per_window_alarm(reference: np.ndarray, windows: list[np.ndarray], alpha: float) -> int | None:
    """The first look whose window alone is significantly below the reference (Welch, α)."""
    for look, w in enumerate(windows, start=1):
        test = welch_test(w, reference)
        if test.p_value <= alpha and w.mean() < reference.mean():
            return look
    return None


def share(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:6.3f} ± {math.sqrt(p * (1 - p) / n):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--looks", type=int, default=100)
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--reference", type=int, default=500)
    parser.add_argument("--change-at", type=int, default=31)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    unchanged = {"sequential": 0, "per window": 0}
    detected = {"sequential": [], "per window": []}  # type: dict[str, list[int]]
    early = {"sequential": 0, "per window": 0}
    for _ in range(args.streams):
        reference = rng.beta(6.0, 4.0, args.reference)
        calm = stream(rng, args.looks, args.window, None)
        dropped = stream(rng, args.looks, args.window, args.change_at)
        for name, alarm in (("sequential", sequential_alarm), ("per window", per_window_alarm)):
            unchanged[name] += alarm(reference, calm, args.alpha) is not None
            look = alarm(reference, dropped, args.alpha)
            if look is not None and look < args.change_at:
                early[name] += 1
            elif look is not None:
                detected[name].append(look - args.change_at + 1)
    n = args.streams
    print(
        f"{n} streams × {args.looks} looks of {args.window} values, reference {args.reference}, "
        f"α = {args.alpha}; a drop of 0.05 (0.60 → 0.55) from look {args.change_at}"
    )
    print()
    print(
        "| check | (a) unchanged: ever alarmed | (b) alarmed before the drop | "
        "(b) detected after it | delay (looks): median [p90] |"
    )
    print("|---|---|---|---|---|")
    for name in ("sequential", "per window"):
        delays = np.asarray(detected[name])
        delay = f"{np.median(delays):.0f} [{np.quantile(delays, 0.9):.0f}]" if len(delays) else "—"
        print(
            f"| {name} | {share(unchanged[name], n)} | {share(early[name], n)} | "
            f"{share(len(delays), n)} | {delay} |"
        )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
