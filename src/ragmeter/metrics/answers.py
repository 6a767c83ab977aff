"""Answer metrics of SPEC §5 (seed 001): keyword overlap, confusion against human labels,
context coverage, containment and latency; beside them the usual text metrics of generated
answers: SQuAD token F1 and exact match, ROUGE-L and BLEU (``sacrebleu``).

Plain functions on strings and numbers; NA (undefined, e.g. 0/0) is ``None`` in the results.
BLEU comes from its reference library (extra ``text``), imported on first use; ROUGE-L is
computed here (identical to ``rouge-score``), which does the scoring only with Porter stemming.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ragmeter.errors import MissingExtraError
from ragmeter.io.answers import STAGES  # the timing stages, defined with the reader

if TYPE_CHECKING:
    from ragmeter.io.answers import AnswerSample

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
#: Han ideographs (with extensions and compatibility forms), hiragana and katakana: scripts
#: written without spaces between words. Hangul is left out: Korean separates words by spaces.
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_CJK_OR_OTHER = re.compile(f"[{_CJK_CHARS}]+|[^{_CJK_CHARS}]+")
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+")

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself of off on once only or other our ours ourselves
    out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves
"""
#: A small English stopword list for the keyword metrics (``--stopwords english``): articles,
#: pronouns, auxiliaries, common prepositions and conjunctions. Negations ("not", "no", "nor")
#: are deliberately absent: dropping them would give an answer and its opposite the same
#: keywords.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


def cjk_bigrams(run: str) -> list[str]:
    """The overlapping character bigrams of a run of CJK characters (a lone character stays
    itself): ``"北京大学"`` → ``["北京", "京大", "大学"]``."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def segment(token: str, *, cjk: bool = False) -> list[str]:
    """Split one token into words; with ``cjk``, each run of CJK characters inside it becomes
    its character bigrams (:func:`cjk_bigrams`) and the rest keeps its runs.

    Why bigrams, not single characters: Chinese and Japanese are written without spaces, so
    without segmentation a whole sentence is one token and two answers never overlap. Most
    Chinese words are two characters long, so overlapping bigrams are the standard
    dictionary-free segmentation of CJK text in retrieval (Lucene's ``CJKBigramFilter``);
    unlike single characters, they keep the word order inside a phrase and do not let function
    characters (的, 是, 了) match everything. A bigram also has the seed's keyword length (> 1).
    """
    if not cjk or not _CJK_RUN.search(token):
        return [token]
    out: list[str] = []
    for part in _CJK_OR_OTHER.findall(token):
        if _CJK_RUN.fullmatch(part):
            out.extend(cjk_bigrams(part))
        else:
            out.append(part)
    return out


def _is_cjk(token: str) -> bool:
    return _CJK_RUN.fullmatch(token) is not None


def keywords(
    text: str, *, stopwords: Collection[str] | None = None, cjk: bool = False
) -> frozenset[str]:
    """The keyword set of ``text``.

    ``kw(text) = { t.lower() : t matches \\w+ (Unicode), len(t) > 1 } − stopwords``

    Stopwords are compared in lower case (:data:`ENGLISH_STOPWORDS` is a ready list). By
    default a run of CJK characters is one token (the seed's rule); with ``cjk`` it is split
    into character bigrams (:func:`segment`), and a lone CJK character is kept although it is
    one character long (unlike a Latin letter, it is usually a word: 水, 猫).

    >>> sorted(keywords("北京是中国的首都", cjk=True))
    ['中国', '京是', '北京', '国的', '是中', '的首', '首都']
    """
    words: set[str] = set()
    for raw in _WORD.findall(canonical(text).lower()):
        for t in segment(raw, cjk=cjk):
            if len(t) > 1 or (cjk and _is_cjk(t)):
                words.add(t)
    if stopwords:
        words -= {s.lower() for s in stopwords}
    return frozenset(words)


def keyword_overlap(
    reference: str,
    generated: str,
    *,
    stopwords: Collection[str] | None = None,
    cjk: bool = False,
) -> float | None:
    """``|kw(reference) ∩ kw(generated)| / |kw(reference)|``; ``None`` when kw(reference) = ∅."""
    ref = keywords(reference, stopwords=stopwords, cjk=cjk)
    if not ref:
        return None
    return len(ref & keywords(generated, stopwords=stopwords, cjk=cjk)) / len(ref)


def answer_correct(
    reference: str,
    generated: str,
    *,
    threshold: float = 0.7,
    stopwords: Collection[str] | None = None,
    cjk: bool = False,
) -> bool:
    """``|kw(ref) ∩ kw(gen)| / |kw(ref)| > threshold`` (strict).

    A reference without keywords gives no overlap to exceed the threshold: ``False``.
    """
    overlap = keyword_overlap(reference, generated, stopwords=stopwords, cjk=cjk)
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
    cjk: bool = False,
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
        ctx |= keywords(chunk, stopwords=stopwords, cjk=cjk)
    gen = keywords(generated, stopwords=stopwords, cjk=cjk)
    if denominator == "generated":
        den = len(gen)
    elif denominator == "reference":
        if reference is None:
            raise ValueError("denominator='reference' needs the reference answer")
        den = len(keywords(reference, stopwords=stopwords, cjk=cjk))
    else:
        raise ValueError(f"denominator must be 'generated' or 'reference', not {denominator!r}")
    return None if den == 0 else len(ctx & gen) / den


def sample_coverage(
    sample: AnswerSample,
    *,
    denominator: Literal["generated", "reference"] = "generated",
    stopwords: Collection[str] | None = None,
    cjk: bool = False,
) -> float | None:
    """:func:`context_coverage` of one sample's generated answer by its context (its
    reference answer the denominator's, when asked)."""
    return context_coverage(
        sample.context,
        sample.generated_answer,
        denominator=denominator,
        reference=sample.reference_answer,
        stopwords=stopwords,
        cjk=cjk,
    )


# -- text metrics of the answer against its reference(s) ---------------------------------

#: the text metrics ``ragmeter answers`` can add (``--text-metric``)
TEXT_METRICS: tuple[str, ...] = ("token_f1", "exact_match", "rouge_l", "bleu")
_SQUAD_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")

References = str | Sequence[str]


def _references(references: References) -> list[str]:
    return [references] if isinstance(references, str) else list(references)


#: the Unicode normal form every string match of answers starts from (:func:`canonical`)
UNICODE_FORM: Literal["NFKC"] = "NFKC"


def canonical(text: str) -> str:
    """``text`` in Unicode normal form NFKC: the first step of every string match of answers
    (:func:`normalize_answer`, :func:`containment`, :func:`keywords`), so that one string
    written two ways matches itself. NFKC rather than NFC: besides composing "u" + U+0308
    into "ü" (NFC's work), it folds the compatibility variants that text extraction leaves
    behind — the no-break space to a space, ligatures ("ﬁ" → "fi"), full-width letters and
    digits ("Ｚ" → "Z") — which an answer typed by a person never has.

    >>> canonical("Zu\u0308rich") == "Z\u00fcrich"
    True
    """
    return unicodedata.normalize(UNICODE_FORM, text)


def normalize_answer(text: str, *, cjk: bool = False) -> str:
    """SQuAD v1.1's answer normalisation on the NFKC form (:func:`canonical`): lower case, drop
    ASCII punctuation, drop the articles *a*, *an*, *the*, collapse white space. With ``cjk``
    every Unicode punctuation character (category P*: "，", "。", "「") is dropped too, since
    SQuAD's list is ASCII only.

    The one normalisation of answers matched as tokens: ``answer_recall``/``answer_precision``
    (:mod:`ragmeter.metrics.containment`), ``exact_match``, ``token_f1`` and eRAG's labels
    all go through it, and :func:`answer_forms` drops the answers it empties.

    >>> normalize_answer("The  Eiffel-Tower!")
    'eiffeltower'
    """
    lowered = canonical(text).lower()
    if cjk:
        kept = (
            ch
            for ch in lowered
            if ch not in _SQUAD_PUNCTUATION and not unicodedata.category(ch).startswith("P")
        )
    else:
        kept = (ch for ch in lowered if ch not in _SQUAD_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", "".join(kept)).split())


def answer_forms(answers: Iterable[str], *, cjk: bool = False) -> list[str]:
    """The gold answers that can match, normalised (:func:`normalize_answer`): an answer that
    normalises to nothing ("The", "!") is dropped, since the empty string would match every
    text (and every empty answer). No form left means the query has no gold answer: its
    scores are NA, never a match.

    >>> answer_forms(["The", "Zürich"])
    ['zürich']
    """
    forms = (normalize_answer(a, cjk=cjk) for a in answers)
    return [f for f in forms if f]


def answer_tokens(text: str, *, cjk: bool = False) -> list[str]:
    """The tokens of :func:`normalize_answer` (white space split; CJK runs as bigrams with
    ``cjk``, see :func:`segment`)."""
    return [t for word in normalize_answer(text, cjk=cjk).split() for t in segment(word, cjk=cjk)]


def _token_f1_one(generated: list[str], reference: list[str]) -> float:
    if not generated or not reference:
        return float(generated == reference)
    same = sum((Counter(generated) & Counter(reference)).values())
    if same == 0:
        return 0.0
    p, r = same / len(generated), same / len(reference)
    return 2 * p * r / (p + r)


def token_f1(generated: str, references: References, *, cjk: bool = False) -> float | None:
    """SQuAD token F1, the maximum over the references.

    With ``G``, ``R`` the token multisets (:func:`answer_tokens`) and ``c = |G ∩ R|``
    (multiset intersection): ``P = c/|G|``, ``R = c/|R|``, ``F1 = 2PR/(P+R)``; 0 when ``c = 0``;
    an answer without a token scores 0. ``None`` (NA) when no reference has a token
    (:func:`answer_forms`: "The" is no reference; the SQuAD script would score an empty
    answer 1 against it).

    >>> round(token_f1("the cat sat on a mat", "a cat sat on the mat"), 4)
    1.0
    >>> token_f1("Paris, France", "Paris")  # P = 1/2, R = 1: 2·½·1/(½+1)
    0.6666666666666666
    """
    refs = answer_forms(_references(references), cjk=cjk)
    if not refs:
        return None
    gen = answer_tokens(generated, cjk=cjk)
    return max(_token_f1_one(gen, _form_tokens(r, cjk)) for r in refs)


def _form_tokens(form: str, cjk: bool) -> list[str]:
    """The tokens of an already normalised answer (as :func:`answer_tokens`)."""
    return [t for word in form.split() for t in segment(word, cjk=cjk)]


def exact_match(generated: str, references: References, *, cjk: bool = False) -> int | None:
    """1 if :func:`normalize_answer` of the answer equals that of any reference, else 0;
    ``None`` (NA) when no reference normalises to a word (:func:`answer_forms`), so that an
    empty answer never matches an empty reference.

    >>> exact_match("The Eiffel Tower.", ["eiffel tower", "Tour Eiffel"])
    1
    >>> exact_match("A", ["The"]) is None
    True
    """
    refs = answer_forms(_references(references), cjk=cjk)
    if not refs:
        return None
    return int(normalize_answer(generated, cjk=cjk) in refs)


def _require(module: str, feature: str) -> Any:
    """Import ``module`` of the extra ``text`` on first use (keeps ``import ragmeter`` light)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0].replace("_", "-")
        raise MissingExtraError(feature, package=package, extra="text") from None


_ROUGE_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def rouge_tokens(text: str, *, cjk: bool = False) -> list[str]:
    """ROUGE's tokens (rouge-score's tokenizer, without stemming): lower case, ``[a-z0-9]+`` runs.

    Lower-casing comes first (``str.lower``), so e.g. the Kelvin sign becomes ``k``; every
    other character separates tokens. With ``cjk``, each run of CJK characters becomes its
    character bigrams instead, since ``[a-z0-9]`` alone would leave a Chinese answer with no
    token at all.

    >>> rouge_tokens("The Eiffel-Tower, 1889!")
    ['the', 'eiffel', 'tower', '1889']
    >>> rouge_tokens("巴黎铁塔 in Paris", cjk=True)
    ['巴黎', '黎铁', '铁塔', 'in', 'paris']
    """
    if not cjk:
        return _ROUGE_NON_ALNUM.sub(" ", text.lower()).split()
    out: list[str] = []
    for part in _CJK_OR_OTHER.findall(text):
        if _CJK_RUN.fullmatch(part):
            out.extend(cjk_bigrams(part))
        else:
            out.extend(_ROUGE_NON_ALNUM.sub(" ", part.lower()).split())
    return out


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences.

    Bit-parallel (Allison & Dix 1986; Hyyrö 2004): bit ``i`` of ``match[t]`` is set where
    ``a[i] == t``; ``V`` starts as ``len(a)`` one bits and, for each token ``t`` of ``b``,
    ``U = V & match[t]``, ``V = (V + U) | (V - U)``; the LCS length is the number of zero
    bits of ``V``. The same value as the dynamic-programming table
    ``L[i][j] = L[i-1][j-1] + 1 if a[i] == b[j] else max(L[i-1][j], L[i][j-1])``, in
    ``len(b)`` big-integer steps instead of ``len(a)·len(b)`` Python steps.

    >>> lcs_length("the cat sat on the mat".split(), "the cat on a mat".split())
    4
    >>> lcs_length([], ["x"])
    0
    """
    if not a or not b:
        return 0
    match: dict[str, int] = {}
    for i, token in enumerate(a):
        match[token] = match.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & match.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def _rouge_l_one(reference: list[str], generated: list[str]) -> float:
    """rouge-score's ``_score_lcs`` F-measure, same operations in the same order."""
    if not reference or not generated:
        return 0.0
    lcs = lcs_length(reference, generated)
    precision = lcs / len(generated)
    recall = lcs / len(reference)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


class _CJKRougeTokenizer:
    """rouge-score's stemming tokenizer for everything but CJK runs, which become bigrams."""

    def __init__(self) -> None:
        tokenizers = _require("rouge_score.tokenizers", "ROUGE-L with stemming")
        self._default = tokenizers.DefaultTokenizer(use_stemmer=True)

    def tokenize(self, text: str) -> list[str]:
        out: list[str] = []
        for part in _CJK_OR_OTHER.findall(text):
            if _CJK_RUN.fullmatch(part):
                out.extend(cjk_bigrams(part))
            else:
                out.extend(self._default.tokenize(part))
        return out


_STEMMING_ROUGE_SCORERS: dict[bool, Any] = {}


def _stemming_rouge_scorer(*, cjk: bool) -> Any:
    """rouge-score's scorer with nltk's Porter stemmer: the only use of rouge-score."""
    if cjk not in _STEMMING_ROUGE_SCORERS:
        scorer = _require("rouge_score.rouge_scorer", "ROUGE-L with stemming")
        tokenizer = _CJKRougeTokenizer() if cjk else None
        _STEMMING_ROUGE_SCORERS[cjk] = scorer.RougeScorer(
            ["rougeL"], use_stemmer=True, tokenizer=tokenizer
        )
    return _STEMMING_ROUGE_SCORERS[cjk]


def rouge_l(
    generated: str, references: References, *, stem: bool = False, cjk: bool = False
) -> float | None:
    """ROUGE-L F-measure (Lin 2004), the maximum over the references.

    With ``L`` = the length of the longest common subsequence of the token sequences:
    ``P = L/|gen|``, ``R = L/|ref|``, ``F = 2PR/(P+R)`` (0 when ``L = 0`` or a side has no
    token). Tokens are rouge-score's (:func:`rouge_tokens`): lower case, ``[a-z0-9]+`` runs;
    with ``cjk``, CJK runs become character bigrams. ``None`` when there is no reference.

    Computed here, identical to rouge-score's ``rougeL`` (tested on random pairs); with
    ``stem`` (Porter stems of words longer than 3 characters) rouge-score and its nltk
    stemmer do the scoring, which needs the extra ``text``.

    >>> rouge_l("the cat sat on the mat", ["the cat on a mat"])  # L = 4, P = 4/6, R = 4/5
    0.7272727272727272
    """
    refs = _references(references)
    if not refs:
        return None
    if stem:
        scorer = _stemming_rouge_scorer(cjk=cjk)
        return max(float(scorer.score(r, generated)["rougeL"].fmeasure) for r in refs)
    gen = rouge_tokens(generated, cjk=cjk)
    return max(_rouge_l_one(rouge_tokens(r, cjk=cjk), gen) for r in refs)


_BLEUS: dict[tuple[str, bool], Any] = {}


def _bleu(tokenize: str, *, sentence: bool) -> Any:
    key = (tokenize, sentence)
    if key not in _BLEUS:
        metrics = _require("sacrebleu.metrics", "BLEU")
        _BLEUS[key] = metrics.BLEU(tokenize=tokenize, effective_order=sentence)
    return _BLEUS[key]


def _bleu_tokenize(tokenize: str | None, cjk: bool) -> str:
    if tokenize is not None:
        return tokenize
    return "zh" if cjk else "13a"


def sentence_bleu(
    generated: str, references: References, *, cjk: bool = False, tokenize: str | None = None
) -> float | None:
    """Sentence BLEU from ``sacrebleu`` (its ``sentence_bleu`` settings), on a 0–1 scale.

    ``BLEU = BP · exp(Σₙ log pₙ / N)``, ``pₙ`` the clipped n-gram precisions (n ≤ 4, counts
    clipped by the maximum over the references), ``BP = min(1, exp(1 − r/c))`` with ``c`` the
    answer's length and ``r`` the closest reference length; "exp" smoothing (the m-th zero
    precision counts as ``1 / (2^m · total)``) and effective order (orders the answer is too
    short to have are left out of ``N``). sacrebleu reports 0–100; we divide by 100 so that
    every answer metric is on 0–1. Tokenizer: sacrebleu's ``13a`` (case-sensitive), ``zh``
    (one token per Chinese character) with ``cjk``, or ``tokenize``. ``None`` when there is no
    reference. Needs the extra ``text``.
    """
    refs = _references(references)
    if not refs:
        return None
    bleu = _bleu(_bleu_tokenize(tokenize, cjk), sentence=True)
    return float(bleu.sentence_score(generated, refs).score) / 100.0


def corpus_bleu(
    generated: Sequence[str],
    references: Sequence[References],
    *,
    cjk: bool = False,
    tokenize: str | None = None,
) -> float | None:
    """Corpus BLEU from ``sacrebleu`` over all answers at once, on a 0–1 scale.

    The n-gram matches, totals and lengths are summed over the answers before the formula of
    :func:`sentence_bleu` (no smoothing needed, no effective order) — the score MT papers
    report, which is not the mean of the sentence scores. Answers without a reference are left
    out; ``None`` when none is left.
    """
    if len(generated) != len(references):
        raise ValueError(f"{len(generated)} answers but {len(references)} reference entries")
    pairs = [(g, _references(r)) for g, r in zip(generated, references, strict=True)]
    pairs = [(g, refs) for g, refs in pairs if refs]
    if not pairs:
        return None
    width = max(len(refs) for _, refs in pairs)
    # sacrebleu wants reference *streams*; a sample with fewer references pads with None
    streams = [[refs[j] if j < len(refs) else None for _, refs in pairs] for j in range(width)]
    bleu = _bleu(_bleu_tokenize(tokenize, cjk), sentence=False)
    return float(bleu.corpus_score([g for g, _ in pairs], streams).score) / 100.0


def _collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def containment(
    expected: str, texts: Iterable[str], *, k: int | None = None, case_sensitive: bool = False
) -> int | None:
    """``containment@k``: 1 if ``expected`` occurs in any of the first ``k`` texts (all when
    ``k`` is None) after Unicode NFKC (:func:`canonical`) and collapsing white space runs to
    one space (and case folding unless ``case_sensitive``), else 0. ``None`` (NA) when the
    expected string is empty after that: it is no answer, and would be in every text."""
    needle = _collapse(canonical(expected))
    if not case_sensitive:
        needle = needle.casefold()
    if not needle:
        return None
    items = list(texts)
    if k is not None:
        items = items[:k]
    for text in items:
        hay = _collapse(canonical(text))
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


# -- the whole report of `ragmeter answers` ------------------------------------------------


def _text_scores(
    sample: AnswerSample, chosen: Sequence[str], *, cjk: bool, rouge_stem: bool
) -> dict[str, float | int | None]:
    gen, ref = sample.generated_answer, sample.reference_answer
    out: dict[str, float | int | None] = {}
    for name in chosen:
        if name == "token_f1":
            out[name] = token_f1(gen, ref, cjk=cjk)
        elif name == "exact_match":
            out[name] = exact_match(gen, ref, cjk=cjk)
        elif name == "rouge_l":
            out[name] = rouge_l(gen, ref, stem=rouge_stem, cjk=cjk)
        elif name == "bleu":
            out[name] = sentence_bleu(gen, ref, cjk=cjk)
    return out


def check_text_metrics(names: Iterable[str]) -> list[str]:
    """The chosen text metrics in :data:`TEXT_METRICS` order; ``"all"`` means every one."""
    chosen = set(names)
    if "all" in chosen:
        chosen = set(TEXT_METRICS)
    unknown = chosen - set(TEXT_METRICS)
    if unknown:
        raise ValueError(
            f"unknown text metric(s) {', '.join(sorted(unknown))}; "
            f"expected {', '.join(TEXT_METRICS)} or all"
        )
    return [m for m in TEXT_METRICS if m in chosen]


def evaluate_answers(
    samples: Sequence[AnswerSample],
    *,
    threshold: float = 0.7,
    default_label: int | None = None,
    denominator: Literal["generated", "reference"] = "generated",
    k: int | None = None,
    text_metrics: Iterable[str] = ("token_f1", "exact_match"),
    stopwords: Collection[str] | None = None,
    cjk: bool = False,
    rouge_stem: bool = False,
) -> dict[str, Any]:
    """The ``ragmeter answers`` report as a JSON-ready dict (``None`` for NA).

    ``y_true`` is each sample's label (``default_label`` where it has none; samples without
    either stay out of the confusion matrix), ``y_pred`` is :func:`answer_correct`.
    ``text_metrics`` (names in :data:`TEXT_METRICS`, or ``"all"``) add per-sample scores and
    their means; ``"bleu"`` adds both the mean sentence BLEU (``bleu``) and the corpus BLEU
    (``corpus_bleu``). ``stopwords`` apply to the keyword metrics (overlap, correctness,
    coverage) only; ``cjk`` segments CJK text for every metric.
    """
    chosen = check_text_metrics(text_metrics)
    per_sample: list[dict[str, Any]] = []
    y_true: list[int] = []
    y_pred: list[bool] = []
    columns: dict[str, list[float | None]] = {
        "context_coverage": [],
        "containment": [],
        **{m: [] for m in chosen},
    }
    for s in samples:
        overlap = keyword_overlap(
            s.reference_answer, s.generated_answer, stopwords=stopwords, cjk=cjk
        )
        correct = overlap is not None and overlap > threshold
        label = s.label if s.label is not None else default_label
        if label is not None:
            y_true.append(label)
            y_pred.append(correct)
        coverage = sample_coverage(s, denominator=denominator, stopwords=stopwords, cjk=cjk)
        hit = None if s.retrieved is None else containment(s.reference_answer, s.retrieved, k=k)
        scores = _text_scores(s, chosen, cjk=cjk, rouge_stem=rouge_stem)
        columns["context_coverage"].append(coverage)
        columns["containment"].append(None if hit is None else float(hit))
        for name, value in scores.items():
            columns[name].append(None if value is None else float(value))
        per_sample.append(
            {
                "id": s.id,
                "keyword_overlap": overlap,
                "correct": correct,
                "label": label,
                "context_coverage": coverage,
                "containment": hit,
                **scores,
                "latency": sample_total(s.timings),
            }
        )
    c = confusion(y_true, y_pred)
    metrics: dict[str, Any] = {
        "accuracy": accuracy(c),
        "precision": precision(c),
        "recall": recall(c),
        "f1": f1(c),
        **{name: mean_defined(values) for name, values in columns.items()},
    }
    if "bleu" in chosen:
        metrics["corpus_bleu"] = corpus_bleu(
            [s.generated_answer for s in samples], [s.reference_answer for s in samples], cjk=cjk
        )
    metrics["n"] = len(samples)
    metrics["n_labeled"] = c.n
    summaries = latency([s.timings for s in samples])
    lat = {name: summary.to_dict() for name, summary in summaries.items()}
    return {"metrics": metrics, "confusion": c.to_dict(), "latency": lat, "per_sample": per_sample}
