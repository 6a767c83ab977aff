"""The answer metrics of SPEC §5 (seed 001) as registered per-sample families.

Each family scores one answer sample (``{query, context, generated_answer,
reference_answer, retrieved}``, :mod:`ragmeter.io.answers`) with the plain functions of
:mod:`ragmeter.metrics.answers`, so ``ragmeter answers`` and
:func:`ragmeter.evaluation.evaluate_samples` give the same numbers. Their options are
parameters, so the name says them (``token_f1(cjk=true)``). NA (``None`` there) is NaN here.

* ``keyword_overlap = |kw(ref) ∩ kw(gen)| / |kw(ref)|``; NA if kw(ref) = ∅.
* ``answer_correct = [keyword_overlap > threshold]`` (0 when kw(ref) = ∅).
* ``context_coverage = |kw(context) ∩ kw(gen)| / |kw(gen)|`` (``denominator=reference``:
  ``/ |kw(ref)|``); NA when the denominator's keyword set is empty.
* ``containment@k = 1`` if the reference occurs in one of the first k retrieved texts (white
  space collapsed, case folded), else 0; NA for a sample without retrieved texts.
* ``token_f1``: SQuAD token F1 (normalized: lower case, no punctuation or articles); NA for an
  empty reference. ``exact_match``: SQuAD exact match (0/1).
* ``rouge_l``: ROUGE-L F-measure (computed here, identical to ``rouge-score``, which scores
  only with stemming); ``bleu``: sentence BLEU (``sacrebleu``); both need the ``text`` extra
  only where a library does the work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.errors import MissingInputError
from ragmeter.io.answers import AnswerSample
from ragmeter.measures import FloatArray, Measure, Param, register
from ragmeter.metrics import answers as A


@dataclass(frozen=True, eq=False)
class SampleView:
    """Answer samples seen as evaluated queries (one per sample): what the per-sample
    families read (it satisfies :class:`ragmeter.measures.Aligned`)."""

    samples: tuple[AnswerSample, ...]
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return len(self.samples)

    @property
    def query_ids(self) -> npt.NDArray[np.object_]:
        return np.array([s.id for s in self.samples], dtype=object)


def _view(al: Any, m: Measure) -> SampleView:
    if not isinstance(al, SampleView):
        raise MissingInputError(
            f"{m} scores answer samples, not a run: evaluate them with "
            "ragmeter.evaluation.evaluate_samples (or `ragmeter answers`)"
        )
    return al


def _per_sample(
    al: Any, m: Measure, score: Callable[[AnswerSample], float | int | bool | None]
) -> FloatArray:
    values = [score(s) for s in _view(al, m).samples]
    return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def _stopwords(m: Measure) -> frozenset[str] | None:
    return A.ENGLISH_STOPWORDS if m.param("stopwords") == "english" else None


def _stopword_check(value: str) -> str | None:
    return None if value in ("none", "english") else "must be none or english"


def _denominator_check(value: str) -> str | None:
    return None if value in ("generated", "reference") else "must be generated or reference"


def _unit(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else "must be in [0, 1]"


CJK = Param("cjk", bool, False, "segment CJK text (bigrams of Han/kana runs)")
STOPWORDS = Param("stopwords", str, "none", "stopwords dropped from keywords: none, english",
                  _stopword_check)  # fmt: skip
DENOMINATOR = Param(
    "denominator", str, "generated", "keywords of: generated, reference", _denominator_check
)
SAMPLES = ("samples",)


@register(
    "keyword_overlap",
    params=(STOPWORDS, CJK),
    needs=SAMPLES,
    summary="Share of the reference's keywords the generated answer has",
)
def keyword_overlap(al: Any, m: Measure) -> FloatArray:
    """keyword_overlap = |kw(ref) ∩ kw(gen)| / |kw(ref)|; NA if kw(ref) = ∅."""
    sw, cjk = _stopwords(m), bool(m.param("cjk"))
    return _per_sample(
        al,
        m,
        lambda s: A.keyword_overlap(s.reference_answer, s.generated_answer, stopwords=sw, cjk=cjk),
    )


@register(
    "answer_correct",
    params=(Param("threshold", float, 0.7, "correct ⇔ overlap > threshold", _unit), STOPWORDS, CJK),
    needs=SAMPLES,
    summary="Keyword overlap above the threshold: the answer counts as correct",
)
def answer_correct(al: Any, m: Measure) -> FloatArray:
    """answer_correct = [|kw(ref) ∩ kw(gen)| / |kw(ref)| > threshold] (0 if kw(ref) = ∅)."""
    sw, cjk, t = _stopwords(m), bool(m.param("cjk")), float(m.param("threshold"))
    return _per_sample(
        al,
        m,
        lambda s: A.answer_correct(
            s.reference_answer, s.generated_answer, threshold=t, stopwords=sw, cjk=cjk
        ),
    )


@register(
    "context_coverage",
    params=(DENOMINATOR, STOPWORDS, CJK),
    needs=SAMPLES,
    summary="Share of the answer's keywords found in its context",
)
def context_coverage(al: Any, m: Measure) -> FloatArray:
    """context_coverage = |kw(context) ∩ kw(gen)| / |kw(gen)| (or / |kw(ref)|); NA when the
    denominator's keyword set is empty."""
    sw, cjk, den = _stopwords(m), bool(m.param("cjk")), m.param("denominator")
    return _per_sample(
        al, m, lambda s: A.sample_coverage(s, denominator=den, stopwords=sw, cjk=cjk)
    )


@register(
    "containment",
    cutoff="optional",
    default_context="every retrieved text",
    needs=SAMPLES,
    summary="The reference occurs in one of the first k retrieved texts (0/1)",
)
def containment(al: Any, m: Measure) -> FloatArray:
    """containment@k = 1 if the reference occurs in one of the first k retrieved texts
    (white space collapsed, case folded), else 0; NA without retrieved texts."""
    k = None if m.k is None else int(m.k)
    return _per_sample(
        al,
        m,
        lambda s: (
            None if s.retrieved is None else A.containment(s.reference_answer, s.retrieved, k=k)
        ),
    )


def _text(
    al: Any, m: Measure, fn: Callable[[AnswerSample, bool], float | int | None]
) -> FloatArray:
    cjk = bool(m.param("cjk"))
    return _per_sample(al, m, lambda s: fn(s, cjk))


@register("token_f1", params=(CJK,), needs=SAMPLES, summary="SQuAD token F1 of the answer")
def token_f1(al: Any, m: Measure) -> FloatArray:
    """token_f1 = 2·P·R / (P + R) over the normalized tokens (multiset overlap); NA for an
    empty reference."""
    return _text(al, m, lambda s, cjk: A.token_f1(s.generated_answer, s.reference_answer, cjk=cjk))


@register("exact_match", params=(CJK,), needs=SAMPLES, summary="SQuAD exact match (0/1)")
def exact_match(al: Any, m: Measure) -> FloatArray:
    """exact_match = [normalize(gen) = normalize(ref)]."""
    return _text(
        al, m, lambda s, cjk: A.exact_match(s.generated_answer, s.reference_answer, cjk=cjk)
    )


@register(
    "rouge_l",
    params=(CJK, Param("stem", bool, False, "Porter stemming (rouge-score's use_stemmer)")),
    needs=SAMPLES,
    summary="ROUGE-L F-measure of the answer",
)
def rouge_l(al: Any, m: Measure) -> FloatArray:
    """rouge_l = 2PR/(P+R), P = LCS/|gen|, R = LCS/|ref| over rouge-score's tokens."""
    stem = bool(m.param("stem"))
    return _text(
        al,
        m,
        lambda s, cjk: A.rouge_l(s.generated_answer, s.reference_answer, stem=stem, cjk=cjk),
    )


@register("bleu", params=(CJK,), needs=SAMPLES, summary="Sentence BLEU of the answer (sacrebleu)")
def bleu(al: Any, m: Measure) -> FloatArray:
    """bleu = sentence BLEU (sacrebleu's default smoothing) / 100, on 0..1."""
    return _text(
        al, m, lambda s, cjk: A.sentence_bleu(s.generated_answer, s.reference_answer, cjk=cjk)
    )


def sample_view(samples: Sequence[AnswerSample]) -> SampleView:
    return SampleView(tuple(samples))
