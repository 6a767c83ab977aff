"""Judge tasks: a versioned prompt (package data, ``judges/prompts/<task>.txt``) and a parser.

| task            | inputs                          | value                                  |
|-----------------|---------------------------------|----------------------------------------|
| ``relevance``   | query, passage                  | grade 1..5 (seed 000's utility rubric) |
| ``answerability`` | question, passage             | rating 0..5 (seed 003's CRUX rubric)   |
| ``subquestions`` | query, reference (param ``n``) | list of ≤ n questions                  |
| ``correctness`` | query, reference, answer        | ``{"correct": 0|1, "reason": str}``    |
| ``udcg``        | query, passage                  | P(first token starts "NO ANSWER")      |
| ``nuggets``     | query, passages (param ``n``)   | list of ≤ n nuggets (TREC RAG)         |
| ``nugget_importance`` | query, nugget             | ``"vital"`` or ``"okay"``              |
| ``nugget_support`` | query, text, nugget          | ``support``, ``partial_support``,      |
|                 |                                 | ``not_support``                        |
| ``citation_support`` | query, sentence, passage   | the same three labels                  |
| ``umbrela``, ``umbrela-fewshot`` | query, passage | grade 0..3 (UMBRELA, TREC RAG's prompts) |
| ``erag``        | query, passage                  | the generated answer text (eRAG)       |

Every parser tries the **strict** form the prompt asks for first (a bare digit; numbered
questions; ``CORRECT``/``INCORRECT`` then a reason; the first token's log-probabilities), then
a **lenient** fallback (a grade after "Grade:"/"Rating:", ``N/5``, JSON, the only digit in
range; bulleted questions; yes/no; the reply text when the server returns no log-probabilities;
the one label word a reply contains).
Output neither reads is **unparsed**: the value is −1 (``{"correct": -1}``, ``None`` for
sub-questions, nuggets and labels), never 0, and the raw text is kept.

A prompt file starts with ``# task:`` and ``# version:`` lines; its identity in the cache key
is ``<version>-<first 8 hex of sha256(file)>``, so editing a prompt without bumping its
version still starts fresh judgments. The UMBRELA prompts are umbrela's own YAML templates
(:mod:`ragmeter.judges.umbrela`); their identity is ``<umbrela commit>-<sha256(file)>``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from ragmeter.judges.types import UNPARSED, ParseStatus

TASKS = (
    "relevance",
    "answerability",
    "subquestions",
    "correctness",
    "udcg",
    "nuggets",
    "nugget_importance",
    "nugget_support",
    "citation_support",
    "umbrela",
    "umbrela-fewshot",
    "erag",
)

#: the reply the udcg prompt asks for when the passage holds no answer
NO_ANSWER = "NO ANSWER"

Parsed = tuple[Any, ParseStatus]
TopLogprobs = tuple[tuple[str, float], ...] | None


@dataclass(frozen=True)
class Prompt:
    """A prompt template: ``system`` and ``user`` messages with ``{placeholders}``."""

    task: str
    version: str
    system: str
    user: str
    #: the hash in the cache key: sha256's first 8 hex digits (the full hash for UMBRELA's)
    digest: str
    #: SHA-256 of the whole template file (``digest`` is its first 8 hex digits)
    sha256: str = ""

    @property
    def identity(self) -> str:
        return f"{self.version}-{self.digest}"


def parse_prompt(text: str, name: str) -> Prompt:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        if current is None and line.startswith("# "):
            key, _, value = line[2:].partition(":")
            header[key.strip()] = value.strip()
        elif line.startswith("=== "):
            current = sections.setdefault(line[4:].strip(), [])
        elif current is not None:
            current.append(line)
    if "version" not in header or "user" not in sections:
        raise ValueError(f"prompt {name}: needs a '# version:' line and a '=== user' section")
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Prompt(
        task=header.get("task", name),
        version=header["version"],
        system="\n".join(sections.get("system", [])).strip(),
        user="\n".join(sections["user"]).strip(),
        digest=sha[:8],
        sha256=sha,
    )


@cache
def load_prompt(task: str) -> Prompt:
    """The packaged prompt of ``task``."""
    from ragmeter.judges import umbrela

    if task in umbrela.PROMPT_IDS:
        user, system, sha = umbrela.prompt_parts(task)
        return Prompt(task, umbrela.UMBRELA_COMMIT, system, user, sha, sha)
    text = resources.files("ragmeter.judges").joinpath(f"prompts/{task}.txt").read_text("utf-8")
    return parse_prompt(text, task)


# -- parsers ---------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_STRICT_DIGIT = re.compile(r"[*\s]*(\d)[*\s.]*")
_KEYWORD_DIGIT = re.compile(
    r"(?:grade|rating|score|relevance|answerability|rate|label)\**\s*(?:is|of|=|:|-)?\s*\**\s*"
    r"(\d)(?!\d)",
    re.IGNORECASE,
)
_OUT_OF = re.compile(r"(?<![\d.])(\d)\s*(?:/|out of)\s*5(?!\d)", re.IGNORECASE)
# a lone digit that begins ("4 - highly relevant") or ends ("I'd say 3.") the reply; a digit
# inside the text is often the query's own ("Line 4 tram") and is never taken for a grade
_EDGE_DIGIT = re.compile(r"^\W*(\d)(?![\d.,]\d|\d)|(?<![\d.,])(\d)\W*$")


def _json_value(text: str) -> Any:
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            return None
    return None


def parse_grade(text: str, low: int, high: int, top: TopLogprobs = None) -> Parsed:
    """A grade in ``low..high``: strict = the reply is one digit (bold/period allowed);
    lenient = JSON ``{"grade": n}``, a digit after "grade/rating/score", ``n/5``, a lone digit
    that begins or ends the reply, or — when the server returned the first token's top
    log-probabilities (``top``) — the most probable in-range digit among them (the reply was
    meant to be that digit). A digit in the middle of the text is never taken: it is often the
    query's own ("Line 4"). Ambiguous or anything else → (−1, "unparsed")."""
    match = _STRICT_DIGIT.fullmatch(text)
    if match and low <= int(match.group(1)) <= high:
        return int(match.group(1)), "ok"
    body = _THINK.sub(" ", text).strip()
    obj = _json_value(body)
    if isinstance(obj, dict):
        for key in ("grade", "rating", "score", "relevance", "answerability"):
            value = obj.get(key)
            if (
                isinstance(value, int | str)
                and str(value).strip().isdigit()
                and low <= int(value) <= high
            ):
                return int(value), "lenient"
    for pattern in (_KEYWORD_DIGIT, _OUT_OF):
        found = {int(m) for m in pattern.findall(body) if low <= int(m) <= high}
        if len(found) == 1:
            return found.pop(), "lenient"
    found = {int(a or b) for a, b in _EDGE_DIGIT.findall(body) if low <= int(a or b) <= high}
    if len(found) == 1:
        return found.pop(), "lenient"
    if top:
        digits = [
            (lp, int(tok.strip()))
            for tok, lp in top
            if tok.strip().isdigit() and len(tok.strip()) == 1 and low <= int(tok.strip()) <= high
        ]
        if digits:
            return max(digits)[1], "lenient"
    return UNPARSED, "unparsed"


_NUMBERED = re.compile(r"\s*(\d+)[.)]\s+(.+\?)\s*")
_BULLET = re.compile(r"^\s*(?:\d+[.):]|[-*•]|Q\d+[.:)]?|Question\s*\d+[.:)]?)\s*", re.IGNORECASE)


def _numbered_in_order(text: str, pattern: re.Pattern[str]) -> list[str] | None:
    """The items of a reply whose every non-blank line is ``pattern``'s ``1. …``, ``2. …``
    … numbered in order (group 1 the number, group 2 the item), else None."""
    lines = [line for line in text.strip().split("\n") if line.strip()]
    matches = [pattern.fullmatch(line) for line in lines]
    if all(m is not None and int(m.group(1)) == i for i, m in enumerate(matches, start=1)):
        return [m.group(2).strip() for m in matches if m is not None]
    return None


def _json_strings(body: str, key: str) -> list[str] | None:
    """The JSON array of strings in ``body`` (or the one under ``key`` of a JSON object),
    stripped; None without one."""
    parsed: Any = None
    start, end = body.find("["), body.rfind("]")
    if 0 <= start < end:
        try:
            parsed = json.loads(body[start : end + 1])
        except json.JSONDecodeError:
            parsed = None
    if parsed is None:
        obj = _json_value(body)
        parsed = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(parsed, list) and parsed and all(isinstance(q, str) for q in parsed):
        return [q.strip() for q in parsed]
    return None


def _first_unique(candidates: list[str], n: int) -> Parsed:
    """The first ``n`` of the non-empty candidates, each once (case-insensitively), read
    leniently; unparsed when none is left."""
    out: list[str] = []
    seen: set[str] = set()
    for c in candidates:
        if c and c.lower() not in seen:
            seen.add(c.lower())
            out.append(c)
    return (out[:n], "lenient") if out else (None, "unparsed")


def parse_subquestions(text: str, n: int) -> Parsed:
    """Strict: exactly ``n`` lines ``1. …?`` … ``n. …?``. Lenient: a JSON array (or
    ``{"questions": [...]}``) of strings, else every line ending in '?' with its number or
    bullet removed — deduplicated (case-insensitively), at most ``n``. None found → unparsed."""
    items = _numbered_in_order(text, _NUMBERED)
    if items is not None and len(items) == n:
        return items, "ok"
    body = _THINK.sub(" ", text)
    candidates = _json_strings(body, "questions")
    if candidates is None:
        candidates = []
        for line in body.split("\n"):
            stripped = _BULLET.sub("", line).strip().strip("*").strip()
            if stripped.endswith("?") and len(stripped) > 3:
                candidates.append(stripped)
    return _first_unique(candidates, n)


_VERDICT = re.compile(r"[\s*#]*(CORRECT|INCORRECT)[\s*.:!]*", re.IGNORECASE)
_LENIENT_NO = re.compile(
    r"^\W*(incorrect|not correct|wrong|no|false|0)\b|\b(incorrect|not correct)\b", re.IGNORECASE
)
_LENIENT_YES = re.compile(r"^\W*(correct|right|yes|true|1)\b|\bcorrect\b", re.IGNORECASE)


def parse_correctness(text: str) -> Parsed:
    """Strict: first line ``CORRECT`` or ``INCORRECT``, the rest the reason. Lenient: JSON
    ``{"correct": …, "reason": …}``, or a reply starting with (or saying) correct / incorrect /
    yes / no. Unparsed → ``{"correct": -1, "reason": None}``."""
    lines = text.strip().split("\n")
    first = _VERDICT.fullmatch(lines[0]) if lines else None
    if first:
        reason = " ".join(line.strip() for line in lines[1:] if line.strip())
        return {"correct": int(first.group(1).upper() == "CORRECT"), "reason": reason}, "ok"
    body = _THINK.sub(" ", text).strip()
    obj = _json_value(body)
    if isinstance(obj, dict) and "correct" in obj:
        verdict: Any = obj["correct"]
        if isinstance(verdict, str):
            verdict = verdict.strip().lower() in ("1", "true", "yes", "correct")
        if isinstance(verdict, bool | int) and int(verdict) in (0, 1):
            why = obj.get("reason")
            return {
                "correct": int(verdict),
                "reason": why if isinstance(why, str) else "",
            }, "lenient"
    if _LENIENT_NO.search(body):
        return {"correct": 0, "reason": body}, "lenient"
    if _LENIENT_YES.search(body):
        return {"correct": 1, "reason": body}, "lenient"
    return {"correct": UNPARSED, "reason": None}, "unparsed"


_NUMBERED_LINE = re.compile(r"\s*(\d+)[.)]\s+(.+?)\s*")


def parse_nuggets(text: str, n: int) -> Parsed:
    """Strict: lines ``1. …`` … ``k. …`` numbered in order, 1 ≤ k ≤ ``n``. Lenient: a JSON
    array of strings (or ``{"nuggets": [...]}``), else every numbered or bulleted line —
    deduplicated (case-insensitively), at most ``n``. None found → unparsed."""
    items = _numbered_in_order(text, _NUMBERED_LINE)
    if items is not None and 1 <= len(items) <= n:
        return items, "ok"
    body = _THINK.sub(" ", text)
    candidates = _json_strings(body, "nuggets")
    if candidates is None:
        candidates = [
            _BULLET.sub("", line).strip().strip("*").strip()
            for line in body.split("\n")
            if _BULLET.match(line) and _BULLET.sub("", line).strip()
        ]
    return _first_unique(candidates, n)


_IMPORTANCE = re.compile(r"\b(vital|okay)\b", re.IGNORECASE)


def parse_importance(text: str) -> Parsed:
    """Strict: the reply is ``vital`` or ``okay`` (any case, quotes / period allowed).
    Lenient: exactly one of the two words occurs in the reply (after any ``<think>``).
    Else unparsed (None)."""
    word = text.strip().strip("*\"'`.").strip().lower()
    if word in ("vital", "okay"):
        return word, "ok"
    found = {m.lower() for m in _IMPORTANCE.findall(_THINK.sub(" ", text))}
    if len(found) == 1:
        return found.pop(), "lenient"
    return None, "unparsed"


_SUPPORT = re.compile(r"\b(not|no|partial|partially)?[\s_-]?(support)(?:s|ed)?\b", re.IGNORECASE)
_SUPPORT_LABEL = {"": "support", "partial": "partial_support", "partially": "partial_support"}


def parse_support(text: str) -> Parsed:
    """Strict: the reply is ``support``, ``partial_support`` or ``not_support`` (any case;
    a space for the underscore, quotes / period allowed). Lenient: exactly one of the three
    labels occurs in the reply (``partially supported``, ``no support`` and the like count).
    Else unparsed (None)."""
    word = text.strip().strip("*\"'`.").strip().lower().replace(" ", "_").replace("-", "_")
    if word in ("support", "partial_support", "not_support"):
        return word, "ok"
    found = {
        _SUPPORT_LABEL.get((m.group(1) or "").lower(), "not_support")
        for m in _SUPPORT.finditer(_THINK.sub(" ", text))
    }
    if len(found) == 1:
        return found.pop(), "lenient"
    return None, "unparsed"


_ANSWER_PREFIX = re.compile(r"^\W*(?:final\s+)?answer\s*[:：-]\s*", re.IGNORECASE)


def parse_answer(text: str) -> Parsed:
    """The generator's answer (task ``erag``): the reply without ``<think>`` blocks and
    surrounding white space (strict); with an ``Answer:`` prefix dropped (lenient). A reply
    with no text left is unparsed (``None``): an empty answer is a server glitch, not an
    answer to score 0."""
    body = _THINK.sub("", text).strip()
    stripped = _ANSWER_PREFIX.sub("", body, count=1).strip()
    if not stripped:
        return None, "unparsed"
    return stripped, "ok" if stripped == body else "lenient"


def _is_marker_prefix(token: str) -> bool:
    t = token.strip().upper()
    return bool(t) and (NO_ANSWER.startswith(t) or t.startswith(NO_ANSWER))


def parse_no_answer(text: str, top: TopLogprobs) -> Parsed:
    """P(no answer) from the first token: strict = Σ exp(logprob) over the top first tokens
    that begin the reply ``NO ANSWER`` (case-insensitive, e.g. ``NO``, ``No``, ``N``); lenient
    (no log-probabilities returned) = 1.0 if the reply begins ``NO ANSWER``, else 0.0; an empty
    reply without log-probabilities is unparsed (−1)."""
    if top:
        p = sum(math.exp(lp) for tok, lp in top if _is_marker_prefix(tok) and lp > -math.inf)
        return min(1.0, p), "ok"
    if text.strip():
        head = text.strip().upper()
        return (1.0 if head.startswith(NO_ANSWER) or NO_ANSWER.startswith(head) else 0.0), (
            "lenient"
        )
    return float(UNPARSED), "unparsed"


# -- tasks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """A task: its prompt, its parser and the request parameters that go into the cache key.

    ``fields``: the inputs each judgment needs; ``params``: task parameters filled into the
    prompt too (``n`` for sub-questions); ``max_tokens`` and ``top_logprobs`` are sent with
    the request; ``expected_output_tokens`` feeds the dry-run estimate.
    """

    name: str
    fields: tuple[str, ...]
    max_tokens: int
    expected_output_tokens: int
    parser: Callable[[str, TopLogprobs, Mapping[str, Any]], Parsed]
    params: Mapping[str, Any] = field(default_factory=dict)
    top_logprobs: int | None = None
    #: further request fields sent as they are (UMBRELA's ``top_p``, ``frequency_penalty``…)
    request_options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> Prompt:
        return load_prompt(self.name)

    def messages(self, inputs: Mapping[str, str]) -> list[dict[str, str]]:
        missing = [f for f in self.fields if f not in inputs]
        if missing:
            raise KeyError(f"task {self.name}: inputs lack {', '.join(missing)}")
        values = {**{k: str(v) for k, v in self.params.items()}, **inputs}
        prompt = self.prompt
        out = []
        if prompt.system:
            out.append({"role": "system", "content": prompt.system})
        out.append({"role": "user", "content": prompt.user.format_map(values)})
        return out

    def parse(self, text: str, top: TopLogprobs = None) -> Parsed:
        return self.parser(text, top, self.params)

    def cache_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "params": dict(self.params),
            "max_tokens": self.max_tokens,
            "top_logprobs": self.top_logprobs,
        }
        if self.request_options:  # only then: the keys of the other tasks stay as they were
            out["request"] = dict(self.request_options)
        return out


def make_task(
    name: str,
    *,
    n: int = 10,
    max_tokens: int | None = None,
    top_logprobs: int = 20,
    grade_logprobs: int | None = None,
) -> Task:
    """The task called ``name`` (one of :data:`TASKS`). ``n``: sub-questions per query;
    ``max_tokens``: override the reply budget; ``top_logprobs``: alternatives asked for the
    udcg task's first token; ``grade_logprobs``: alternatives asked for the first token of a
    relevance / answerability reply, the fallback for replies the text parsers can't read
    (small models; the server must return log-probabilities)."""
    if name in ("relevance", "answerability"):
        lowest = 1 if name == "relevance" else 0
        return Task(
            name,
            ("query" if name == "relevance" else "question", "passage"),
            max_tokens or 8,
            1,
            lambda t, top, _: parse_grade(t, lowest, 5, top),
            top_logprobs=grade_logprobs,
        )
    if name == "subquestions":
        return _list_task(name, ("query", "reference"), n, max_tokens, 48, 20, parse_subquestions)
    if name == "correctness":
        return Task(
            name,
            ("query", "reference", "answer"),
            max_tokens or 96,
            30,
            lambda t, _, __: parse_correctness(t),
        )
    if name == "udcg":
        return Task(
            name,
            ("query", "passage"),
            max_tokens or 3,
            1,
            lambda t, top, _: parse_no_answer(t, top),
            top_logprobs=top_logprobs,
        )
    if name == "erag":
        return Task(
            name, ("query", "passage"), max_tokens or 64, 8, lambda t, _, __: parse_answer(t)
        )
    if name.startswith("umbrela"):  # umbrela, umbrela-fewshot, and the probe's variant
        return _umbrela_task(name, max_tokens=max_tokens, grade_logprobs=grade_logprobs)
    nugget_task = _nugget_task(name, n=n, max_tokens=max_tokens)
    if nugget_task is not None:
        return nugget_task
    raise ValueError(f"unknown task {name!r}; expected one of {', '.join(TASKS)}")


def _list_task(
    name: str,
    fields: tuple[str, ...],
    n: int,
    max_tokens: int | None,
    budget: int,
    expected: int,
    parse: Callable[[str, int], Parsed],
) -> Task:
    """A task asking for a list of at most ``n`` items (sub-questions, nuggets): ``budget``
    reply tokens an item (plus 16) unless ``max_tokens`` is given, ``expected`` an item for
    the dry-run estimate."""
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    return Task(
        name,
        fields,
        max_tokens or budget * n + 16,
        expected * n,
        lambda t, _, p: parse(t, int(p["n"])),
        params={"n": n},
    )


def _umbrela_task(name: str, *, max_tokens: int | None, grade_logprobs: int | None) -> Task:
    """UMBRELA's prompt ``name``: grade 0..3 read by umbrela's own parser, sent with
    umbrela's request parameters (see :mod:`ragmeter.judges.umbrela`)."""
    from ragmeter.judges import umbrela

    if name not in umbrela.PROMPT_IDS:
        raise ValueError(f"unknown task {name!r}; expected one of {', '.join(TASKS)}")
    if grade_logprobs:
        from ragmeter.judges.errors import JudgeConfigError

        raise JudgeConfigError(
            f"--prompt {name}: umbrela's parser reads the reply text only (no --logprobs)"
        )
    return Task(
        name,
        ("query", "passage"),
        max_tokens or umbrela.UMBRELA_MAX_TOKENS,
        8,
        lambda t, _, __: umbrela.parse_umbrela(t),
        request_options=umbrela.request_options(),
    )


def _nugget_task(name: str, *, n: int, max_tokens: int | None) -> Task | None:
    """The TREC RAG tasks (nuggets, importance, nugget and citation support), else None."""
    if name == "nuggets":
        return _list_task(name, ("query", "passages"), n, max_tokens, 40, 15, parse_nuggets)
    if name == "nugget_importance":
        return Task(
            name, ("query", "nugget"), max_tokens or 8, 2, lambda t, _, __: parse_importance(t)
        )
    if name in ("nugget_support", "citation_support"):
        fields = (
            ("query", "text", "nugget")
            if name == "nugget_support"
            else ("query", "sentence", "passage")
        )
        return Task(name, fields, max_tokens or 12, 4, lambda t, _, __: parse_support(t))
    return None


__all__ = [
    "NO_ANSWER",
    "TASKS",
    "Prompt",
    "Task",
    "load_prompt",
    "make_task",
    "parse_answer",
    "parse_correctness",
    "parse_grade",
    "parse_importance",
    "parse_no_answer",
    "parse_nuggets",
    "parse_subquestions",
    "parse_support",
]
