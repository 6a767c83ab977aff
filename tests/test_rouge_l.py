"""ROUGE-L computed by ragmeter: identical to rouge-score (the reference), and no nltk import.

rouge-score stays the reference implementation and does the scoring only with Porter
stemming (``--rouge-stem``); everything else is ragmeter's own LCS.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.metrics import answers as am

VOCAB = [
    "the", "The", "THE", "cat", "Cat's", "sat", "on", "mat", "mat.", "a", "an", "1889",
    "Eiffel-Tower", "naïve", "café", "straße", "\u212a", "x2", "--", "!", "  ", "\t", "巴黎",
    "铁塔", "天气", "很好", "iPhone", "Ünïcode", "e-mail", "don't", "of", "rouge", "L",
]  # fmt: skip


def _dp_lcs(a: list[str], b: list[str]) -> int:
    """The textbook dynamic-programming table, row by row."""
    prev = [0] * (len(b) + 1)
    for x in a:
        row = [0]
        for j, y in enumerate(b):
            row.append(prev[j] + 1 if x == y else max(prev[j + 1], row[j]))
        prev = row
    return prev[-1]


@given(
    st.lists(st.sampled_from("abcde"), max_size=70),
    st.lists(st.sampled_from("abcdef"), max_size=70),
)
def test_lcs_length_equals_the_dynamic_programming_table(a: list[str], b: list[str]) -> None:
    assert am.lcs_length(a, b) == _dp_lcs(a, b)
    assert am.lcs_length(b, a) == am.lcs_length(a, b)


def _random_text(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 40)))


@pytest.mark.parametrize("cjk", [False, True])
def test_identical_to_rouge_score_on_1000_random_pairs(cjk: bool) -> None:
    pytest.importorskip("rouge_score", reason="rouge-score, the reference, is not installed")
    from rouge_score import rouge_scorer, tokenizers

    tokenizer = None
    if cjk:
        # the reference for CJK: rouge-score's scorer on the bigram tokens, built from its
        # own tokenizer for the other runs
        default = tokenizers.DefaultTokenizer(use_stemmer=False)

        class Bigrams:
            def tokenize(self, text: str) -> list[str]:
                out: list[str] = []
                for part in am._CJK_OR_OTHER.findall(text):
                    if am._CJK_RUN.fullmatch(part):
                        out.extend(part[i : i + 2] for i in range(max(len(part) - 1, 1)))
                    else:
                        out.extend(default.tokenize(part))
                return out

        tokenizer = Bigrams()
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=tokenizer)
    rng = random.Random(20240522 + cjk)
    for _ in range(1000):
        generated, reference = _random_text(rng), _random_text(rng)
        expected = scorer.score(reference, generated)["rougeL"].fmeasure
        assert am.rouge_l(generated, reference, cjk=cjk) == expected, (generated, reference)


def test_stemming_goes_through_rouge_score() -> None:
    pytest.importorskip("rouge_score", reason="rouge-score is not installed")
    ref = "police killed the gunman"
    # stems: polic kill the gunman on both sides
    assert am.rouge_l("police kill the gunman", ref, stem=True) == 1.0
    assert am.rouge_l("police kill the gunman", ref) == pytest.approx(0.75)


def _modules_after(args: list[str]) -> dict[str, object]:
    code = (
        "import sys\n"
        "from ragmeter.cli import main\n"
        f"sys.argv = ['ragmeter', *{args!r}]\n"
        "code = 0\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "sys.stderr.write('MODULES ' + repr({'exit': code, **{m: m in sys.modules "
        "for m in ('nltk', 'rouge_score')}}) + '\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return dict(eval(line[len("MODULES ") :]))


def test_import_ragmeter_does_not_import_nltk() -> None:
    code = "import sys, ragmeter, ragmeter.metrics.answers; print('nltk' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_answers_imports_nltk_only_with_rouge_stem(tmp_path: Path) -> None:
    pytest.importorskip("rouge_score", reason="rouge-score is not installed")
    path = tmp_path / "s.json"
    rows = [
        {
            "query": "q",
            "context": ["a cat sat down"],
            "generated_answer": "the cat sat",
            "reference_answer": "a cat sat down",
        }
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    plain = _modules_after(["answers", str(path), "-t", "rouge_l", "-f", "json"])
    assert plain == {"exit": 0, "nltk": False, "rouge_score": False}
    stemmed = _modules_after(["answers", str(path), "-t", "rouge_l", "--rouge-stem", "-f", "json"])
    assert stemmed == {"exit": 0, "nltk": True, "rouge_score": True}
