"""UMBRELA's relevance prompts (castorini/umbrela, the prompts of the TREC 2024/2025 RAG
track's LLM assessments): the zero-shot and few-shot "bing" templates, grades 0–3.

Prompt ids: ``umbrela`` (``qrel_zeroshot_bing.yaml``) and ``umbrela-fewshot``
(``qrel_fewshot_bing.yaml``), shipped unmodified as package data in
``judges/prompts/umbrela/`` with umbrela's Apache-2.0 licence and a notice of where they come
from (castorini/umbrela at commit :data:`UMBRELA_COMMIT`). What ragmeter sends and reads is
what umbrela's OpenAI-compatible judge (``GPTJudge``) sends and reads at that commit:

* **user message**: the template's ``prefix_user`` (a YAML ``|-`` block) formatted with
  Python's ``str.format`` — ``{query}`` and ``{passage}`` replaced by the texts as they are,
  no truncation, no stripping (umbrela truncates nothing at that commit). The few-shot
  template carries its four worked examples inline; it has no ``{examples}`` placeholder,
  so umbrela's generated examples string (which needs pyserini and a qrels file) never
  reaches the prompt.
* **system message**: ``"You are a helpful assistant."`` — GPTJudge sends this fixed
  message, not the template's (empty) ``system_message``. (For model names containing
  ``o1``/``o3``/``o4`` umbrela folds it into the user message; ragmeter always sends it as a
  system message.)
* **request**: ``max_tokens`` 100 (umbrela's ``judge()`` default), ``top_p`` 1,
  ``frequency_penalty`` 0.5, ``presence_penalty`` 0; the temperature is ragmeter's (0 unless
  ``--temperature``), as is the seed.
* **reply**: umbrela's ``parse_fewshot_response``: the reply is lower-cased and stripped,
  then its patterns are tried in order, each taking its **last** match in the reply; the
  first pattern that matches gives the grade. umbrela turns a reply no pattern matches into
  grade **0** (flagged ``result_status`` 0, printed as "Invalid response"); ragmeter counts
  it as **unparsed** (−1 in the cache, left out of the labels) — never a silent 0. A grade
  read from the exact form the prompt asks for (``##final score: N``) is an ``ok`` parse;
  one read by any other of umbrela's patterns is counted as ``lenient`` (the grade is
  umbrela's either way). umbrela also appends a reasoning model's reasoning text to what it
  parses; ragmeter parses the message content only.

The regular expressions of :data:`UMBRELA_PATTERNS` are copied from umbrela's
``src/umbrela/utils/common_utils.py`` (Copyright castorini/umbrela authors, Apache License 2.0;
see ``judges/prompts/umbrela/LICENSE`` and ``NOTICE.md``).
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from ragmeter.judges.types import UNPARSED, ParseStatus

#: the castorini/umbrela commit the templates, the system message and the parser come from
UMBRELA_COMMIT = "e2c4e41"

#: prompt id → template file (package data, ``judges/prompts/umbrela/``)
UMBRELA_TEMPLATES = {
    "umbrela": "qrel_zeroshot_bing.yaml",
    "umbrela-fewshot": "qrel_fewshot_bing.yaml",
}

#: the system message umbrela's GPTJudge sends with every prompt
UMBRELA_SYSTEM = "You are a helpful assistant."

#: GPTJudge's request parameters besides the model, messages, temperature and max_tokens
UMBRELA_REQUEST = {"top_p": 1, "frequency_penalty": 0.5, "presence_penalty": 0}

#: GPTJudge's reply budget (``judge(max_new_tokens=100)``)
UMBRELA_MAX_TOKENS = 100

#: umbrela's ``parse_fewshot_response`` patterns, in its order (Apache-2.0, see above)
UMBRELA_PATTERNS = (
    r'"o"\s*[:-=]?\s*(0|1|2|3)',
    r"\'o\'\s*[:-=]?\s*(0|1|2|3)",
    r"o\s*[:-=]?\s*(0|1|2|3)",
    r'"overall_score"\s*[:-=]?\s*(0|1|2|3)',
    r'"overall"\s*[:-=]?\s*(0|1|2|3)',
    r'"overall score"\s*[:-=]?\s*(0|1|2|3)',
    r'"final score"\s*[:-=]?\s*(0|1|2|3)',
    r"final score\s*[:-=]?\s*(0|1|2|3)",
    r"final score is (0|1|2|3)",
    r'"final_score"\s*[:-=]?\s*(0|1|2|3)',
    r'"score"\s*[:-=]?\s*(0|1|2|3)',
    r'"o_score"\s*[:-=]?\s*(0|1|2|3)',
    r"output score is (0|1|2|3)",
    r"score is (0|1|2|3)",
    r"score of\s+(0|1|2|3)",
    r"assign(?:ing)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"conclude(?:s|d)?\s+with\s+(?:a\s+)?score of\s+(0|1|2|3)",
    r"give(?:n)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"i (?:would )?(?:give|assign)\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"score:\s*(0|1|2|3)",
    r"[a-zA-Z]+\s+is\s+(0|1|2|3)\s",
    r"relevance category\s*[:-=]?\s*(0|1|2|3)",
    r"relevance category\s*[:-=]?\s*(0|1|2|3)",
    r"relevance category is (0|1|2|3)",
    r"it falls into the category (0|1|2|3)",
    r"category\s*(0|1|2|3)",
    r"relevance category (0|1|2|3)",
    r"relevance category for this passage would be (0|1|2|3)",
    r"the relevance category would be (0|1|2|3)",
    r"\n*(0|1|2|3)",
)
_COMPILED = tuple(re.compile(p, re.IGNORECASE | re.MULTILINE | re.DOTALL) for p in UMBRELA_PATTERNS)
# the form the prompt asks for ("##final score: score"), the whole reply
_ASKED_FORM = re.compile(r"#+\s*final score\s*:\s*([0-3])\s*\.?")


def parse_umbrela(text: str) -> tuple[int, ParseStatus]:
    """The grade 0..3 umbrela's parser reads in ``text``: ``ok`` when the reply is exactly
    ``##final score: N``, ``lenient`` when another of umbrela's patterns read it (the same
    grade umbrela gives), ``(−1, "unparsed")`` where umbrela would answer 0 and flag the
    reply invalid."""
    response = text.strip().lower()
    for pattern in _COMPILED:
        matches = list(pattern.finditer(response))
        if matches:
            last = matches[-1]  # umbrela keeps each pattern's last match
            grade = int(last.group(1))
            exact = _ASKED_FORM.fullmatch(response)
            return grade, "ok" if exact and int(exact.group(1)) == grade else "lenient"
    return UNPARSED, "unparsed"


# -- templates -------------------------------------------------------------------------------


def read_template(text: str, name: str) -> dict[str, str]:
    """The top-level keys of an umbrela template: ``key: "double-quoted"`` scalars and
    ``key: |-`` literal blocks (YAML's rules for these two forms: the block's indentation is
    its first non-empty line's, empty lines are kept, the final line breaks are stripped).
    Anything else raises ``ValueError`` — ragmeter reads umbrela's templates, not YAML at
    large (no PyYAML needed)."""
    lines = text.split("\n")
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        value = value.strip()
        if not sep or line[0].isspace() or not key.strip():
            raise ValueError(f"{name}: line {i}: expected 'key: value'")
        if value == "|-":
            block, i = _literal_block(lines, i)
            out[key.strip()] = block
        elif value.startswith('"') and value.endswith('"') and len(value) >= 2:
            out[key.strip()] = json.loads(value)
        else:
            raise ValueError(f'{name}: line {i}: {key.strip()}: expected "…" or a |- block')
    return out


def _literal_block(lines: list[str], start: int) -> tuple[str, int]:
    indent: int | None = None
    body: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip():
            width = len(line) - len(line.lstrip(" "))
            if indent is None:
                indent = width
            if width < indent or indent == 0:
                break
            body.append(line[indent:])
        else:
            body.append("")
        i += 1
    while body and body[-1] == "":
        body.pop()
    return "\n".join(body), i


@cache
def template_bytes(prompt_id: str) -> bytes:
    """The template file of ``prompt_id`` (one of :data:`UMBRELA_TEMPLATES`), as shipped."""
    if prompt_id not in UMBRELA_TEMPLATES:
        known = ", ".join(UMBRELA_TEMPLATES)
        raise ValueError(f"unknown umbrela prompt {prompt_id!r}; expected one of {known}")
    path = f"prompts/umbrela/{UMBRELA_TEMPLATES[prompt_id]}"
    return resources.files("ragmeter.judges").joinpath(path).read_bytes()


def template_parts(prompt_id: str) -> tuple[str, str, str]:
    """(user template, system message sent, SHA-256 of the template file) of ``prompt_id``."""
    raw = template_bytes(prompt_id)
    parts = read_template(raw.decode("utf-8"), UMBRELA_TEMPLATES[prompt_id])
    if "prefix_user" not in parts:
        raise ValueError(f"{UMBRELA_TEMPLATES[prompt_id]}: no prefix_user")
    return parts["prefix_user"], UMBRELA_SYSTEM, hashlib.sha256(raw).hexdigest()


#: the position probe's variant of ``umbrela-fewshot``: its four worked examples (grades 0,
#: 1, 2, 3) in reverse order (3, 2, 1, 0), nothing else changed. Not a prompt to label with:
#: ``ragmeter judge probe`` compares its grades with the published prompt's.
REVERSED_EXAMPLES = "umbrela-fewshot-reversed"

#: every prompt id this module can render
PROMPT_IDS = (*UMBRELA_TEMPLATES, REVERSED_EXAMPLES)

_EXAMPLE_BREAK = "\n\n###\n\n"


def reverse_examples(user: str) -> str:
    """The few-shot template with its examples in reverse order: the parts between the
    ``###`` lines, the instructions before the first and after the last kept in place."""
    head, *examples, tail = user.split(_EXAMPLE_BREAK)
    if len(examples) < 2:
        raise ValueError("the template holds fewer than two examples: nothing to reorder")
    return _EXAMPLE_BREAK.join([head, *reversed(examples), tail])


def prompt_parts(prompt_id: str) -> tuple[str, str, str]:
    """(user template, system message, SHA-256) of any of :data:`PROMPT_IDS`; a variant's
    hash is that of its user template (UTF-8), it has no file of its own."""
    if prompt_id == REVERSED_EXAMPLES:
        user, system, _ = template_parts("umbrela-fewshot")
        variant = reverse_examples(user)
        return variant, system, hashlib.sha256(variant.encode("utf-8")).hexdigest()
    return template_parts(prompt_id)


def render_user(prompt_id: str, query: str, passage: str) -> str:
    """The user message umbrela renders for (query, passage)."""
    user, _, _ = prompt_parts(prompt_id)
    return user.format(query=query, passage=passage)


def request_options() -> dict[str, Any]:
    """GPTJudge's sampling parameters sent with every umbrela request (a copy)."""
    return dict(UMBRELA_REQUEST)


__all__ = [
    "PROMPT_IDS",
    "REVERSED_EXAMPLES",
    "UMBRELA_COMMIT",
    "UMBRELA_MAX_TOKENS",
    "UMBRELA_PATTERNS",
    "UMBRELA_REQUEST",
    "UMBRELA_SYSTEM",
    "UMBRELA_TEMPLATES",
    "parse_umbrela",
    "prompt_parts",
    "read_template",
    "render_user",
    "request_options",
    "reverse_examples",
    "template_bytes",
    "template_parts",
]
