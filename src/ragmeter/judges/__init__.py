"""LLM judges: graded labels, sub-question ratings, sub-questions, answer verdicts and UDCG
utilities from any OpenAI-compatible chat server — cached, resumable, concurrent, costed.

Tasks (prompts ship as package data in ``judges/prompts/``; see :mod:`ragmeter.judges.tasks`):
``relevance`` (grade 1..5 → TREC qrels), ``answerability`` (rating 0..5 → judgments JSONL),
``subquestions`` (→ sub-questions JSONL), ``correctness`` (0/1 + reason, beside seed 001's
keyword overlap), ``udcg`` (1 − P(no answer) → utilities), and the TREC RAG tasks
``nuggets``, ``nugget_importance``, ``nugget_support`` and ``citation_support`` (their jobs
in :mod:`ragmeter.judges.nuggets`); UMBRELA's relevance prompts ``umbrela`` and
``umbrela-fewshot`` (grade 0..3, :mod:`ragmeter.judges.umbrela`); ``erag`` (the generator's
answer from one passage, scored against gold answers → qrels or utilities,
:mod:`ragmeter.judges.erag`). Several samples per pair
and several judges vote (:mod:`ragmeter.judges.votes`, :mod:`ragmeter.judges.ensemble`);
bias probes in :mod:`ragmeter.judges.probes`. Unparseable output is stored as −1
with its raw text, never as 0. A reply that is not a completion (no ``choices``, ``content``
null, empty or not a string) is retried like a 5xx and, if it persists, fails the item
without caching it. Nothing is left out silently: every result says which items have no
label and why (``missing``, ``summary.left_out``), cache hits included.

Python::

    from ragmeter.judges import JudgeConfig, judge_relevance, write_label_provenance, write_qrels
    config = JudgeConfig(base_urls=("http://127.0.0.1:8080/v1",), model="qwen2.5-7b",
                         concurrency=32)
    out = judge_relevance(run, queries, corpus, judge=config, cache="judgments.sqlite")
    write_qrels(out.labels, "qrels.txt"); print("\\n".join(out.summary.lines()))
    write_label_provenance(out, "qrels.txt")  # the sidecar: which judge made the labels
    if not out.complete:   # pairs left out: unparsed (cached −1), failed, or never asked
        print(out.missing[:5])   # [Missing(ident=("q1", "d7"), reason="failed", detail=…)]

**Plugging in another judge** (e.g. the offline embedding judge): implement the
:class:`Judge` protocol — a ``model`` property (its identity in the cache key) and
``judge(task, inputs) -> Judgment`` (optionally ``judge_many(task, [inputs, …])`` for a batch,
or ``async ajudge(task, inputs)``). ``task.name`` says what to produce, ``task.fields`` which
inputs arrive (``query``/``passage`` for relevance and udcg, ``question``/``passage`` for
answerability); return ``Judgment(value, "ok")`` (or ``"unparsed"`` with −1). Pass the judge
instead of a :class:`JudgeConfig` to any ``judge_*`` function; the runner caches, resumes and
reports exactly as for the LLM judge::

    class MyJudge:
        model = "minilm-cosine-v1"
        def judge(self, task, inputs):
            return Judgment(grade_for(inputs["query"], inputs["passage"]), "ok")

``ragmeter judge relevance --offline`` (and ``answerability --offline``) builds its judge with
``ragmeter.judges.offline.offline_judge(task_name) -> Judge``; the cache key then carries that
judge's ``model`` string, so its labels never mix with an LLM's.

``import ragmeter`` never imports this package; the HTTP client (aiohttp, the ``judges``
extra) is imported only when an LLM judge runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.judges.api import (
        TaskResult,
        judge_answerability,
        judge_correctness,
        judge_relevance,
        judge_subquestions,
        judge_udcg,
        write_judgments,
        write_label_provenance,
        write_qrels,
        write_questions,
        write_utilities,
    )
    from ragmeter.judges.cache import JudgmentCache
    from ragmeter.judges.config import JudgeConfig, Price, resolve_config
    from ragmeter.judges.ensemble import EnsembleResult, run_ensemble, write_ensemble
    from ragmeter.judges.erag import judge_erag, write_erag
    from ragmeter.judges.errors import FatalJudgeError, JudgeConfigError
    from ragmeter.judges.llm import LLMJudge
    from ragmeter.judges.probes import ProbeReport, probe_job, run_probes
    from ragmeter.judges.runner import Missing, arun_judgments, run_judgments
    from ragmeter.judges.tasks import TASKS, Task, make_task
    from ragmeter.judges.types import UNPARSED, Judge, JudgeItem, Judgment

#: every name loads on first use: the command line imports this package for the learned
#: judge's defaults (:mod:`ragmeter.judges.learned_defaults`) and nothing else of it
_LAZY = {
    "JudgeConfig": "ragmeter.judges.config",
    "Price": "ragmeter.judges.config",
    "resolve_config": "ragmeter.judges.config",
    "FatalJudgeError": "ragmeter.judges.errors",
    "JudgeConfigError": "ragmeter.judges.errors",
    "TASKS": "ragmeter.judges.tasks",
    "Task": "ragmeter.judges.tasks",
    "make_task": "ragmeter.judges.tasks",
    "UNPARSED": "ragmeter.judges.types",
    "Judge": "ragmeter.judges.types",
    "JudgeItem": "ragmeter.judges.types",
    "Judgment": "ragmeter.judges.types",
    "TaskResult": "ragmeter.judges.api",
    "judge_answerability": "ragmeter.judges.api",
    "judge_correctness": "ragmeter.judges.api",
    "judge_relevance": "ragmeter.judges.api",
    "judge_subquestions": "ragmeter.judges.api",
    "judge_udcg": "ragmeter.judges.api",
    "write_judgments": "ragmeter.judges.api",
    "write_label_provenance": "ragmeter.judges.api",
    "write_qrels": "ragmeter.judges.api",
    "write_questions": "ragmeter.judges.api",
    "write_utilities": "ragmeter.judges.api",
    "JudgmentCache": "ragmeter.judges.cache",
    "EnsembleResult": "ragmeter.judges.ensemble",
    "run_ensemble": "ragmeter.judges.ensemble",
    "write_ensemble": "ragmeter.judges.ensemble",
    "judge_erag": "ragmeter.judges.erag",
    "write_erag": "ragmeter.judges.erag",
    "ProbeReport": "ragmeter.judges.probes",
    "probe_job": "ragmeter.judges.probes",
    "run_probes": "ragmeter.judges.probes",
    "LLMJudge": "ragmeter.judges.llm",
    "Missing": "ragmeter.judges.runner",
    "run_judgments": "ragmeter.judges.runner",
    "arun_judgments": "ragmeter.judges.runner",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ragmeter.judges' has no attribute {name!r}")


__all__ = [
    "TASKS",
    "UNPARSED",
    "EnsembleResult",
    "FatalJudgeError",
    "Judge",
    "JudgeConfig",
    "JudgeConfigError",
    "JudgeItem",
    "Judgment",
    "JudgmentCache",
    "LLMJudge",
    "Missing",
    "Price",
    "ProbeReport",
    "Task",
    "TaskResult",
    "arun_judgments",
    "judge_answerability",
    "judge_correctness",
    "judge_erag",
    "judge_relevance",
    "judge_subquestions",
    "judge_udcg",
    "make_task",
    "probe_job",
    "resolve_config",
    "run_ensemble",
    "run_judgments",
    "run_probes",
    "write_ensemble",
    "write_erag",
    "write_judgments",
    "write_label_provenance",
    "write_qrels",
    "write_questions",
    "write_utilities",
]
