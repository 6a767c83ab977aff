"""Answer metrics of SPEC §5 (seed 001): keyword overlap, confusion against human labels,
context coverage, containment and latency.

Plain functions on strings and numbers; NA (undefined, e.g. 0/0) is ``None`` in the results.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")

#: the pipeline stages a sample's timings may record (seconds)
STAGES: tuple[str, ...] = ("embed", "retrieve", "rerank", "generate")


def keywords(text: str, *, stopwords: Collection[str] | None = None) -> frozenset[str]:
    """The keyword set of ``text``.

    ``kw(text) = { t.lower() : t matches \\w+ (Unicode), len(t) > 1 } − stopwords``

    Stopwords are compared in lower case. A run of CJK characters is one token.
    """
    words = {t for t in _WORD.findall(text.lower()) if len(t) > 1}
    if stopwords:
        words -= {s.lower() for s in stopwords}
    return frozenset(words)


def keyword_overlap(
    reference: str, generated: str, *, stopwords: Collection[str] | None = None
) -> float | None:
    """``|kw(reference) ∩ kw(generated)| / |kw(reference)|``; ``None`` when kw(reference) = ∅."""
    ref = keywords(reference, stopwords=stopwords)
    if not ref:
        return None
    return len(ref & keywords(generated, stopwords=stopwords)) / len(ref)


def answer_correct(
    reference: str,
    generated: str,
    *,
    threshold: float = 0.7,
    stopwords: Collection[str] | None = None,
) -> bool:
    """``|kw(ref) ∩ kw(gen)| / |kw(ref)| > threshold`` (strict).

    A reference without keywords gives no overlap to exceed the threshold: ``False``.
    """
    overlap = keyword_overlap(reference, generated, stopwords=stopwords)
    return overlap is not None and overlap > threshold


@dataclass(frozen=True)
class Confusion:
    """Counts of (human label, predicted) pairs: ``tp`` = (1, 1), ``fp`` = (0, 1),
    ``tn`` = (0, 0), ``fn`` = (1, 0)."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    def to_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "fp": self.fp, "tn": self.tn, "fn": self.fn}


def confusion(y_true: Iterable[bool | int], y_pred: Iterable[bool | int]) -> Confusion:
    """The confusion counts of paired labels (1/True = correct); lengths must agree."""
    t = [bool(v) for v in y_true]
    p = [bool(v) for v in y_pred]
    if len(t) != len(p):
        raise ValueError(f"{len(t)} labels but {len(p)} predictions")
    tp = sum(a and b for a, b in zip(t, p, strict=True))
    fp = sum(b and not a for a, b in zip(t, p, strict=True))
    fn = sum(a and not b for a, b in zip(t, p, strict=True))
    return Confusion(tp=tp, fp=fp, tn=len(t) - tp - fp - fn, fn=fn)


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def accuracy(c: Confusion) -> float | None:
    """``(TP + TN) / N``; ``None`` when N = 0."""
    return _ratio(c.tp + c.tn, c.n)


def precision(c: Confusion) -> float | None:
    """``TP / (TP + FP)``; ``None`` when nothing is predicted correct."""
    return _ratio(c.tp, c.tp + c.fp)


def recall(c: Confusion) -> float | None:
    """``TP / (TP + FN)``; ``None`` when no label is correct."""
    return _ratio(c.tp, c.tp + c.fn)


def f1(c: Confusion) -> float | None:
    """``2TP / (2TP + FP + FN)``; ``None`` when the denominator is 0."""
    return _ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn)


def context_coverage(
    context: str | Sequence[str],
    generated: str,
    *,
    denominator: Literal["generated", "reference"] = "generated",
    reference: str | None = None,
    stopwords: Collection[str] | None = None,
) -> float | None:
    """Keyword coverage of the answer by the context.

    ``denominator="generated"`` (the seed's text):
    ``|kw(context) ∩ kw(gen)| / |kw(gen)|``;
    ``denominator="reference"`` (the seed's code; needs ``reference``):
    ``|kw(context) ∩ kw(gen)| / |kw(ref)|``.
    A list of context chunks is the union of their keywords. ``None`` when the denominator's
    keyword set is empty.
    """
    chunks = [context] if isinstance(context, str) else list(context)
    ctx: set[str] = set()
    for chunk in chunks:
        ctx |= keywords(chunk, stopwords=stopwords)
    gen = keywords(generated, stopwords=stopwords)
    if denominator == "generated":
        den = len(gen)
    elif denominator == "reference":
        if reference is None:
            raise ValueError("denominator='reference' needs the reference answer")
        den = len(keywords(reference, stopwords=stopwords))
    else:
        raise ValueError(f"denominator must be 'generated' or 'reference', not {denominator!r}")
    return None if den == 0 else len(ctx & gen) / den


def _collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def containment(
    expected: str, texts: Iterable[str], *, k: int | None = None, case_sensitive: bool = False
) -> int:
    """``containment@k``: 1 if ``expected`` occurs in any of the first ``k`` texts (all when
    ``k`` is None) after collapsing white space runs to one space (and case folding unless
    ``case_sensitive``), else 0. An empty expected string is contained nowhere (0)."""
    needle = _collapse(expected)
    if not case_sensitive:
        needle = needle.casefold()
    if not needle:
        return 0
    items = list(texts)
    if k is not None:
        items = items[:k]
    for text in items:
        hay = _collapse(text)
        if not case_sensitive:
            hay = hay.casefold()
        if needle in hay:
            return 1
    return 0


@dataclass(frozen=True)
class LatencySummary:
    """Mean and percentiles (linear interpolation, numpy's default) of the defined values;
    ``n`` samples, ``n_defined`` of them recorded. All ``None`` when none is recorded."""

    n: int
    n_defined: int
    mean: float | None
    p50: float | None
    p95: float | None
    p99: float | None

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "n_defined": self.n_defined,
            "mean": self.mean,
            "p50": self.p50,
            "p95": self.p95,
            "p99": self.p99,
        }


def summarize_latency(values: Iterable[float | None]) -> LatencySummary:
    """Summary of one series; ``None`` and NaN are unrecorded and never enter a statistic."""
    raw = [math.nan if v is None else float(v) for v in values]
    arr = np.asarray(raw, dtype=np.float64)
    defined = arr[~np.isnan(arr)]
    if defined.size == 0:
        return LatencySummary(len(raw), 0, None, None, None, None)
    p50, p95, p99 = (float(x) for x in np.percentile(defined, [50, 95, 99]))
    return LatencySummary(len(raw), int(defined.size), float(defined.mean()), p50, p95, p99)


def sample_total(timings: Mapping[str, float | None] | None) -> float | None:
    """A sample's total time: its ``total`` if recorded, else the sum of its recorded stages
    (``Total = T(embed) + T(retrieve) + T(rerank) + T(generate)``); ``None`` if none is."""
    if not timings:
        return None
    total = timings.get("total")
    if total is not None and not math.isnan(total):
        return float(total)
    parts = [timings.get(s) for s in STAGES]
    recorded = [float(v) for v in parts if v is not None and not math.isnan(v)]
    return math.fsum(recorded) if recorded else None


def latency(
    timings: Sequence[Mapping[str, float | None] | None],
) -> dict[str, LatencySummary]:
    """Per stage (only stages some sample records) and ``total``: :func:`summarize_latency`."""
    out: dict[str, LatencySummary] = {}
    for stage in STAGES:
        series = [None if t is None else t.get(stage) for t in timings]
        if any(v is not None for v in series):
            out[stage] = summarize_latency(series)
    out["total"] = summarize_latency(sample_total(t) for t in timings)
    return out


def mean_defined(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not ``None``/NaN; ``None`` if there is none."""
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return math.fsum(kept) / len(kept) if kept else None
