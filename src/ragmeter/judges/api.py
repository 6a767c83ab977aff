"""The judge tasks as Python functions: build the items from runs, queries, passages,
sub-questions or answer samples; run them (cached); shape the labels; write the files the rest
of ragmeter reads.

>>> from ragmeter.judges import JudgeConfig, judge_relevance   # doctest: +SKIP
>>> config = JudgeConfig(base_urls=("http://127.0.0.1:8080/v1",), model="m")
>>> out = judge_relevance({"q1": ["d1", "d2"]}, {"q1": "who?"}, {"d1": "…", "d2": "…"},
...                       judge=config, cache="judgments.sqlite")
>>> out.labels        # {"q1": {"d1": 5, "d2": 2}}; unparsed pairs are left out
>>> out.complete      # False when some pair has no label; out.missing says which and why
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ragmeter.core.provenance import LabelSource, RowsKind
from ragmeter.errors import InputError
from ragmeter.io._common import atomic_write_text
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.config import JudgeConfig, Price
from ragmeter.judges.runner import (
    Estimate,
    JudgeRun,
    Missing,
    Progress,
    cache_params,
    make_plan,
    run_judgments,
)
from ragmeter.judges.tasks import Task, make_task
from ragmeter.judges.types import UNPARSED, Judge, JudgeItem, Judgment

Rankings = Mapping[str, Sequence[str]]


@dataclass
class TaskResult:
    """``labels``: the task's output (shape per task, see each function); ``run``: the plan,
    the per-item judgments and the summary. ``missing`` lists every item without a label
    (left out of ``labels``, or rated −1) and why; ``complete`` is True when there is none."""

    labels: Any
    run: JudgeRun
    #: who made the labels (judge model, server host, prompt id and hash), for the sidecar
    source: LabelSource | None = None
    #: with several samples per pair: the pairs without a label (``run.missing`` lists the
    #: samples without one)
    pair_missing: list[Missing] | None = None
    #: lines for the report besides the summary (e.g. the samples' vote)
    notes: list[str] = field(default_factory=list)

    @property
    def summary(self) -> Any:
        return self.run.summary

    @property
    def missing(self) -> list[Missing]:
        return self.run.missing if self.pair_missing is None else self.pair_missing

    @property
    def complete(self) -> bool:
        return not self.missing


def as_judge(judge: Judge | JudgeConfig) -> Judge:
    """A :class:`JudgeConfig` becomes an :class:`~ragmeter.judges.llm.LLMJudge` (needs aiohttp)."""
    if isinstance(judge, JudgeConfig):
        from ragmeter.judges.llm import LLMJudge

        return LLMJudge(judge)
    return judge


def build_judge(
    task: str,
    *,
    offline: bool = False,
    learned: str | os.PathLike[str] | None = None,
    price: str | None = None,
    **options: Any,
) -> tuple[Judge, Price | None]:
    """The judge of a command and the price to report: the offline embedding judge of
    ``task`` (``offline``; needs the 'models' extra), the learned judge in the directory
    ``learned`` (relevance only), or an LLM judge from ``options``, the
    keyword arguments of :func:`~ragmeter.judges.config.resolve_config` (options beat the
    environment, which beats the config file). Raises :class:`~ragmeter.errors.RagmeterError`
    when the judge cannot be built (missing extra, no server or model)."""
    from ragmeter.errors import RagmeterError
    from ragmeter.judges.config import resolve_config

    if learned is not None:
        return _learned_judge(task, learned, offline), Price.parse(price) if price else None
    if offline:
        import importlib

        try:
            module = importlib.import_module("ragmeter.judges.offline")
        except ImportError as exc:
            from ragmeter.errors import install_hint

            raise RagmeterError(
                f"the offline judge is not available ({exc}); {install_hint('models')}"
            ) from None
        if task not in module.OFFLINE_TASKS:
            raise RagmeterError(_offline_refusal(task, module.OFFLINE_TASKS))
        return module.offline_judge(task), Price.parse(price) if price else None
    config = resolve_config(price=price, **options)
    try:
        from ragmeter.judges.llm import LLMJudge
    except ImportError as exc:
        raise RagmeterError(str(exc)) from None
    return LLMJudge(config), config.price


def _learned_judge(task: str, directory: str | os.PathLike[str], offline: bool) -> Judge:
    """The learned judge in ``directory``; refused with --offline or for another task."""
    from ragmeter.errors import RagmeterError
    from ragmeter.judges.learned import LearnedJudge

    if offline:
        raise RagmeterError("give --offline or --learned, not both: each is one judge")
    if task != "relevance":
        raise RagmeterError(
            f"--learned grades relevance on its training labels' scale; it cannot judge with "
            f"the {task} task (drop --prompt, or use an LLM judge)"
        )
    return LearnedJudge.from_directory(directory)


def _offline_refusal(task: str, tasks: Sequence[str]) -> str:
    """Why --offline cannot judge ``task`` (a prompt or task of an LLM judge), and what to
    use instead."""
    what = f"--prompt {task}" if task.startswith("umbrela") else f"the {task} task"
    return (
        f"--offline cannot judge with {what}: the offline embedding judge grades "
        f"{' and '.join(tasks)} only (relevance on ragmeter's 1-5 scale, --prompt relevance); "
        f"for {what} use an LLM judge (--base-url URL --model NAME), or to try it without a "
        "model or key the stand-in server: python -m ragmeter.judges.testserver"
    )


def _rankings(run: Any) -> Rankings:
    return run.ranked() if hasattr(run, "ranked") else run  # type: ignore[no-any-return]


def _texts(values: Any) -> Mapping[str, str]:
    """``{id: text}`` from a mapping or a :class:`~ragmeter.core.judgments.Corpus`."""
    if isinstance(values, Mapping):
        return values
    return dict(zip(values.doc_ids.to_pylist(), values.texts.to_pylist(), strict=True))


def _source(values: Any, default: str) -> str:
    return str(getattr(values, "name", default)) if not isinstance(values, Mapping) else default


def _require(ids: Sequence[str], known: Mapping[str, str], what: str, source: str) -> None:
    missing = [i for i in ids if i not in known]
    if missing:
        shown = ", ".join(f"'{m}'" for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise InputError(f"no text for {what} {shown}{more}", source=source, field="id")


def pair_items(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    *,
    depth: int | None = 20,
) -> list[JudgeItem]:
    """(query, passage) items: the top ``depth`` of each run (several runs are pooled, each
    pair once), queries in first-seen order, passages in rank order."""
    run_list = list(runs) if isinstance(runs, list | tuple) else [runs]
    qtext, ptext = _texts(queries), _texts(corpus)
    pairs: dict[str, dict[str, None]] = {}
    for run in run_list:
        for q, docs in _rankings(run).items():
            cut = docs if depth is None else docs[:depth]
            pairs.setdefault(q, {}).update(dict.fromkeys(cut))
    _require(list(pairs), qtext, "query", _source(queries, "queries"))
    _require(
        list(dict.fromkeys(d for ds in pairs.values() for d in ds)),
        ptext,
        "passage",
        _source(corpus, "corpus"),
    )
    return [
        JudgeItem((q, d), {"query": qtext[q], "passage": ptext[d]})
        for q, docs in pairs.items()
        for d in docs
    ]


def _run(
    task: Task,
    items: Sequence[JudgeItem],
    judge: Judge | JudgeConfig,
    cache: JudgmentCache | str | os.PathLike[str],
    refresh: bool,
    price: Price | None,
    progress: Progress | None,
    retry_unparsed: bool = False,
    engine: str | None = None,
) -> JudgeRun:
    the_judge = as_judge(judge)
    if price is None and isinstance(judge, JudgeConfig):
        price = judge.price
    options: dict[str, Any] = {
        "refresh": refresh,
        "price": price,
        "progress": progress,
        "retry_unparsed": retry_unparsed,
    }
    run: Callable[..., JudgeRun] = run_judgments
    if engine is not None and engine != "local":  # the requests as Ray tasks, one server each
        from ragmeter.evaluation.partitioned import Engine
        from ragmeter.judges.fanout import run_judgments_on_ray

        options["engine"] = Engine.parse(engine)
        run = run_judgments_on_ray
    if isinstance(cache, JudgmentCache):
        return run(task, items, the_judge, cache=cache, **options)
    with JudgmentCache(cache) as opened:
        return run(task, items, the_judge, cache=opened, **options)


@dataclass
class Job:
    """A prepared task: its items, and how to shape their judgments into the output."""

    task: Task
    items: list[JudgeItem]
    shape: Callable[[Sequence[JudgeItem], Sequence[Judgment | None]], Any]
    #: answers asked per labelled item (``--samples``; each sample's ident ends with its
    #: index, and ``shape`` votes)
    samples: int = 1

    def check_judge(self, judge: Judge) -> None:
        """Several samples need a judge that samples: temperature > 0 (else every sample
        would be the same answer). Raises :class:`JudgeConfigError`."""
        from ragmeter.judges.errors import JudgeConfigError

        if self.samples <= 1:
            return
        temperature = dict(getattr(judge, "request_params", {}) or {}).get("temperature")
        if temperature is None:
            raise JudgeConfigError(
                f"--samples {self.samples} needs a judge that samples (an LLM judge at "
                f"--temperature > 0); {judge.model} gives one answer per pair"
            )
        if float(temperature) <= 0:
            raise JudgeConfigError(
                f"--samples {self.samples} needs --temperature > 0 (at temperature "
                f"{temperature} the {self.samples} samples would all be the same answer)"
            )

    def label_idents(self) -> list[tuple[Any, ...]]:
        """The idents of the labels, in item order (a sample's index dropped)."""
        if self.samples == 1:
            return [item.ident for item in self.items]
        return list(dict.fromkeys(item.ident[:-1] for item in self.items))

    def execute(
        self,
        judge: Judge | JudgeConfig,
        *,
        cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
        refresh: bool = False,
        price: Price | None = None,
        progress: Progress | None = None,
        retry_unparsed: bool = False,
        engine: str | None = None,
    ) -> TaskResult:
        """Run the task (cached) and shape its labels; ``retry_unparsed`` asks the cached
        unparsed items again. ``engine="ray"`` (``"ray=ADDRESS"``, ``"ray://host:port"``)
        makes the requests in Ray tasks, each talking to one of the judge's servers
        (:mod:`ragmeter.judges.fanout`)."""
        the_judge = as_judge(judge)
        self.check_judge(the_judge)
        run = _run(
            self.task, self.items, judge, cache, refresh, price, progress, retry_unparsed, engine
        )
        source = label_source(self.task, the_judge)
        result = TaskResult(self.shape(self.items, run.results), run, source)
        if self.samples > 1:
            self._account_for_samples(result)
        return result

    def _account_for_samples(self, result: TaskResult) -> None:
        from ragmeter.judges import votes

        run = result.run
        result.pair_missing = votes.pair_missing(run.missing, self.samples)
        if result.source is not None:
            result.source = replace(result.source, samples=self.samples, aggregation=votes.MODE)
        pairs = len(self.items) // self.samples
        unparsed = votes.unparsed_samples(run.missing)
        result.notes += [
            f"samples: {self.samples} per pair, the label the mode of all {self.samples} "
            "(ties to the lowest grade)",
            f"{pairs - len(result.pair_missing)} of {pairs} pairs labelled",
        ]
        if unparsed:
            result.notes.append(
                f"  {unparsed} unparsed sample(s): their pairs have no label, not a mode of "
                "fewer samples (--retry-unparsed asks them again)"
            )

    def estimate(
        self,
        judge: Judge,
        *,
        cache: JudgmentCache,
        refresh: bool = False,
        retry_unparsed: bool = False,
        price: Price | None = None,
    ) -> Estimate:
        """A dry run: the calls a run would make (cache hits left out), estimated tokens and
        cost; nothing is sent."""
        self.check_judge(judge)
        plan = make_plan(
            self.task,
            self.items,
            model=judge.model,
            cache=cache,
            refresh=refresh,
            params=cache_params(self.task, judge),
            retry_unparsed=retry_unparsed,
        )
        return plan.estimate(price)


def label_source(task: Task, judge: Judge) -> LabelSource:
    """The provenance of the labels ``judge`` gives on ``task``: its model, its servers'
    hosts (``host:port``, no path or credentials), the prompt's id, version and SHA-256, and
    the sampling temperature. A judge may describe itself instead (``judge.label_source``,
    e.g. an ensemble of judges)."""
    own = getattr(judge, "label_source", None)
    if isinstance(own, LabelSource):
        return own
    config = getattr(judge, "config", None)
    hosts = [urlsplit(u).netloc.rpartition("@")[2] for u in getattr(config, "base_urls", ())]
    prompt = task.prompt
    return LabelSource(
        kind="judge",
        model=judge.model,
        host=",".join(hosts) or None,
        prompt_id=prompt.task,
        prompt_version=prompt.version,
        prompt_sha256=prompt.sha256 or None,
        temperature=getattr(config, "temperature", None),
    )


def write_label_provenance(
    result: TaskResult, path: str | os.PathLike[str], *, rows: RowsKind = "qrels"
) -> Path | None:
    """Write the provenance sidecar of the label file ``path`` written from ``result``
    (every label by the one judge), with the digest of its labels — ``rows``: ``qrels``, or
    ``records`` for a label file that is not qrels (utilities); returns the sidecar's path
    (``None`` without a source)."""
    from ragmeter.core.provenance import LabelProvenance
    from ragmeter.io.provenance import write_provenance

    if result.source is None:
        return None
    return write_provenance(path, LabelProvenance.single(result.source), rows=rows)


def _ok(j: Judgment | None) -> bool:
    return j is not None and j.status in ("ok", "lenient")


def judge_relevance(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    *,
    judge: Judge | JudgeConfig,
    cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
    depth: int | None = 20,
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    retry_unparsed: bool = False,
    max_tokens: int | None = None,
    grade_logprobs: int | None = None,
    prompt: str = "relevance",
    samples: int = 1,
) -> TaskResult:
    """Grade 1..5 (seed 000's utility rubric; ``prompt="umbrela"`` or ``"umbrela-fewshot"``:
    UMBRELA's grade 0..3, :mod:`ragmeter.judges.umbrela`) of each (query, passage) in the top
    ``depth`` of the run(s). ``labels``: ``{qid: {docid: grade}}``; unparsed (−1 in the
    cache) and failed pairs are left out — they stay unjudged, ``missing`` lists them and the
    summary counts them; ``retry_unparsed`` asks the cached unparsed pairs again.
    ``grade_logprobs``: ask for the first token's top alternatives, the fallback grade of a
    reply the text parsers can't read (see :func:`ragmeter.judges.tasks.parse_grade`).
    ``samples``: ask each pair that many times (the judge's temperature must be > 0) and
    keep the mode of the N grades, ties to the lowest; a pair with an unread sample has
    no label (:mod:`ragmeter.judges.votes`)."""
    job = relevance_job(
        runs,
        queries,
        corpus,
        depth=depth,
        max_tokens=max_tokens,
        grade_logprobs=grade_logprobs,
        prompt=prompt,
        samples=samples,
    )
    return job.execute(
        judge,
        cache=cache,
        refresh=refresh,
        price=price,
        progress=progress,
        retry_unparsed=retry_unparsed,
    )


def relevance_job(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    *,
    depth: int | None = 20,
    max_tokens: int | None = None,
    grade_logprobs: int | None = None,
    prompt: str = "relevance",
    samples: int = 1,
) -> Job:
    """The relevance task's items and shaping (see :func:`judge_relevance`)."""
    from ragmeter.judges import votes

    if prompt not in RELEVANCE_PROMPTS:
        from ragmeter.judges.errors import JudgeConfigError

        raise JudgeConfigError(
            f"unknown prompt {prompt!r}; expected one of {', '.join(RELEVANCE_PROMPTS)}"
        )

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        labels: dict[str, dict[str, int]] = {}
        for item, j in zip(items, results, strict=True):
            if j is not None and _ok(j):
                labels.setdefault(item.ident[0], {})[item.ident[1]] = int(j.value)
        return labels

    def shape_votes(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        labels: dict[str, dict[str, int]] = {}
        for (q, d), grade in votes.vote_samples(items, results).items():
            labels.setdefault(q, {})[d] = grade
        return labels

    task = make_task(prompt, max_tokens=max_tokens, grade_logprobs=grade_logprobs)
    items = pair_items(runs, queries, corpus, depth=depth)
    if samples == 1:
        return Job(task, items, shape)
    return Job(task, votes.sampled_items(items, samples), shape_votes, samples=samples)


#: the prompts ``judge relevance`` can ask with (``--prompt``)
RELEVANCE_PROMPTS = ("relevance", "umbrela", "umbrela-fewshot")


def judge_udcg(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    *,
    judge: Judge | JudgeConfig,
    cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
    depth: int | None = 20,
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    retry_unparsed: bool = False,
    top_logprobs: int = 20,
) -> TaskResult:
    """UDCG utilities ``u = 1 − P(no answer)`` of each (query, passage), P from the first
    token's log-probabilities. ``labels``: ``{qid: {docid: (utility, no_res_prob, status)}}``
    (unparsed and failed pairs left out)."""
    job = udcg_job(runs, queries, corpus, depth=depth, top_logprobs=top_logprobs)
    return job.execute(
        judge,
        cache=cache,
        refresh=refresh,
        price=price,
        progress=progress,
        retry_unparsed=retry_unparsed,
    )


def udcg_job(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    *,
    depth: int | None = 20,
    top_logprobs: int = 20,
) -> Job:
    """The udcg task's items and shaping (see :func:`judge_udcg`)."""

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        labels: dict[str, dict[str, tuple[float, float, str]]] = {}
        for item, j in zip(items, results, strict=True):
            if j is not None and _ok(j):
                p = float(j.value)
                labels.setdefault(item.ident[0], {})[item.ident[1]] = (1.0 - p, p, j.status)
        return labels

    task = make_task("udcg", top_logprobs=top_logprobs)
    return Job(task, pair_items(runs, queries, corpus, depth=depth), shape)


def judge_answerability(
    questions: Mapping[str, Sequence[str]],
    *,
    judge: Judge | JudgeConfig,
    runs: Sequence[Any] | Any | None = None,
    corpus: Any = None,
    answers: Mapping[str, str] | None = None,
    cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
    depth: int | None = 20,
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    retry_unparsed: bool = False,
    max_tokens: int | None = None,
    grade_logprobs: int | None = None,
) -> TaskResult:
    """Ratings 0..5 (seed 003's rubric) of every sub-question against every passage in the
    top ``depth`` of the run(s) — or against each query's generated answer (``answers``:
    ``{qid: text}``). ``labels``: ``[(qid, docid or None, [r_1..r_n], text or None)]`` rows,
    an unparsed or failed cell rated −1 (never answerable, never 0)."""
    job = answerability_job(
        questions,
        runs=runs,
        corpus=corpus,
        answers=answers,
        depth=depth,
        max_tokens=max_tokens,
        grade_logprobs=grade_logprobs,
    )
    return job.execute(
        judge,
        cache=cache,
        refresh=refresh,
        price=price,
        progress=progress,
        retry_unparsed=retry_unparsed,
    )


def answerability_job(
    questions: Mapping[str, Sequence[str]],
    *,
    runs: Sequence[Any] | Any | None = None,
    corpus: Any = None,
    answers: Mapping[str, str] | Any | None = None,
    depth: int | None = 20,
    max_tokens: int | None = None,
    grade_logprobs: int | None = None,
) -> Job:
    """The answerability task's items and shaping (see :func:`judge_answerability`)."""
    task = make_task("answerability", max_tokens=max_tokens, grade_logprobs=grade_logprobs)
    texts: dict[tuple[str, str | None], str] = {}
    if answers is not None:
        answer_text = _texts(answers)
        for q in questions:
            if q in answer_text:
                texts[(q, None)] = answer_text[q]
    else:
        if runs is None or corpus is None:
            raise ValueError("answerability needs runs and a corpus, or answers")
        ptext = _texts(corpus)
        rankings = [_rankings(r) for r in (runs if isinstance(runs, list | tuple) else [runs])]
        for q in questions:
            for ranking in rankings:
                cut = list(ranking.get(q, ()))[: depth if depth is not None else None]
                _require(cut, ptext, "passage", _source(corpus, "corpus"))
                for d in cut:
                    texts.setdefault((q, d), ptext[d])
    items = [
        JudgeItem((q, d, i), {"question": question, "passage": text})
        for (q, d), text in texts.items()
        for i, question in enumerate(questions[q])
    ]

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        ratings: dict[tuple[str, str | None], list[int]] = {
            key: [UNPARSED] * len(questions[key[0]]) for key in texts
        }
        for item, j in zip(items, results, strict=True):
            q, d, i = item.ident
            ratings[(q, d)][i] = int(j.value) if j is not None and _ok(j) else UNPARSED
        return [
            (q, d, ratings[(q, d)], text if d is None else None) for (q, d), text in texts.items()
        ]

    return Job(task, items, shape)


def judge_subquestions(
    queries: Any,
    references: Any,
    *,
    judge: Judge | JudgeConfig,
    n: int = 10,
    cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    retry_unparsed: bool = False,
    max_tokens: int | None = None,
) -> TaskResult:
    """``n`` diverse sub-questions per query from its reference text (queries without a
    reference are skipped). ``labels``: ``{qid: [questions]}``; unparsed queries left out."""
    job = subquestions_job(queries, references, n=n, max_tokens=max_tokens)
    return job.execute(
        judge,
        cache=cache,
        refresh=refresh,
        price=price,
        progress=progress,
        retry_unparsed=retry_unparsed,
    )


def subquestions_job(
    queries: Any, references: Any, *, n: int = 10, max_tokens: int | None = None
) -> Job:
    """The sub-questions task's items and shaping (see :func:`judge_subquestions`)."""
    task = make_task("subquestions", n=n, max_tokens=max_tokens)
    qtext, rtext = _texts(queries), _texts(references)
    items = [
        JudgeItem((q,), {"query": text, "reference": rtext[q]})
        for q, text in qtext.items()
        if q in rtext
    ]

    return Job(task, items, values_by_query)


def values_by_query(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
    """``{query: list of values}`` of the items judged and read (a job whose items are one
    per query and whose values are lists); items without a readable reply are left out."""
    return {
        item.ident[0]: list(j.value)
        for item, j in zip(items, results, strict=True)
        if j is not None and _ok(j)
    }


def judge_correctness(
    samples: Sequence[Any],
    *,
    judge: Judge | JudgeConfig,
    cache: JudgmentCache | str | os.PathLike[str] = ":memory:",
    refresh: bool = False,
    price: Price | None = None,
    progress: Progress | None = None,
    retry_unparsed: bool = False,
    threshold: float = 0.7,
    max_tokens: int | None = None,
) -> TaskResult:
    """The LLM's verdict (0/1 with a reason) on each seed-001 sample's generated answer,
    beside seed 001's keyword overlap (``overlap > threshold``) and the human label.
    ``labels``: the report dict (per sample, and each verdict's agreement with the labels)."""
    job = correctness_job(samples, threshold=threshold, max_tokens=max_tokens)
    return job.execute(
        judge,
        cache=cache,
        refresh=refresh,
        price=price,
        progress=progress,
        retry_unparsed=retry_unparsed,
    )


def correctness_job(
    samples: Sequence[Any], *, threshold: float = 0.7, max_tokens: int | None = None
) -> Job:
    """The correctness task's items and shaping (see :func:`judge_correctness`)."""
    from ragmeter.metrics import answers as am

    task = make_task("correctness", max_tokens=max_tokens)
    items = [
        JudgeItem(
            (s.id,),
            {"query": s.query, "reference": s.reference_answer, "answer": s.generated_answer},
        )
        for s in samples
    ]

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> Any:
        per_sample = []
        for s, j in zip(samples, results, strict=True):
            overlap = am.keyword_overlap(s.reference_answer, s.generated_answer)
            verdict = j.value if j is not None else {"correct": UNPARSED, "reason": None}
            per_sample.append(
                {
                    "id": s.id,
                    "llm_correct": verdict["correct"] if _ok(j) else None,
                    "reason": verdict.get("reason"),
                    "status": j.status if j is not None else "error",
                    "keyword_overlap": overlap,
                    "keyword_correct": overlap is not None and overlap > threshold,
                    "label": s.label,
                }
            )
        return {"per_sample": per_sample, "agreement": _correctness_agreement(per_sample)}

    return Job(task, items, shape)


def _correctness_agreement(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each verdict (LLM, keywords) against the human labels, and against each other: the
    seed-001 confusion counts, accuracy, precision, recall, F1 (None = NA)."""
    from ragmeter.metrics import answers as am

    def scores(truth: str, pred: str) -> dict[str, Any]:
        pairs = [
            (int(r[truth]), int(r[pred]))
            for r in rows
            if r[truth] is not None and r[pred] is not None
        ]
        c = am.confusion([t for t, _ in pairs], [p for _, p in pairs])
        return {
            "n": c.n,
            "confusion": c.to_dict(),
            "accuracy": am.accuracy(c),
            "precision": am.precision(c),
            "recall": am.recall(c),
            "f1": am.f1(c),
        }

    return {
        "llm_vs_label": scores("label", "llm_correct"),
        "keyword_vs_label": scores("label", "keyword_correct"),
        "llm_vs_keyword": scores("keyword_correct", "llm_correct"),
    }


# -- writers ---------------------------------------------------------------------------------


def write_qrels(labels: Mapping[str, Mapping[str, int]], path: str | os.PathLike[str]) -> None:
    """TREC qrels ``qid 0 docid grade``, atomically, in the given order."""
    atomic_write_text(
        path, "".join(f"{q} 0 {d} {g}\n" for q, docs in labels.items() for d, g in docs.items())
    )


def write_judgments(rows: Sequence[tuple[Any, ...]], path: str | os.PathLike[str]) -> None:
    """The judgments JSONL read by :func:`ragmeter.io.judgments.read_judgments`
    (``{"query_id", "doc_id", "ratings"}``), or for rated answers (doc None) the rated-answers
    JSONL read by :func:`ragmeter.io.judgments.read_answers` (``{"query_id", "ratings",
    "text"}``)."""
    lines = []
    for q, d, ratings, text in rows:
        record: dict[str, Any] = {"query_id": q}
        if d is not None:
            record["doc_id"] = d
        record["ratings"] = ratings
        if d is None:
            record["text"] = text
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    atomic_write_text(path, "".join(lines))


def write_questions(labels: Mapping[str, Sequence[str]], path: str | os.PathLike[str]) -> None:
    """Sub-questions JSONL ``{"query_id", "questions"}`` (read by ``read_questions``)."""
    atomic_write_text(
        path,
        "".join(
            json.dumps({"query_id": q, "questions": list(qs)}, ensure_ascii=False) + "\n"
            for q, qs in labels.items()
        ),
    )


def write_utilities(
    labels: Mapping[str, Mapping[str, tuple[float, float, str]]], path: str | os.PathLike[str]
) -> None:
    """Utilities read by :func:`ragmeter.io.utilities.read_utilities`: JSONL rows
    ``{"query_id", "doc_id", "utility", "no_res_prob"}`` for ``.jsonl``, else
    ``qid docid utility`` lines."""
    jsonl = Path(path).suffix.lower() == ".jsonl"
    lines = []
    for q, docs in labels.items():
        for d, (u, p, _status) in docs.items():
            u, p = round(u, 12), round(p, 12)
            if not (math.isfinite(u) and 0.0 <= u <= 1.0):
                continue
            if jsonl:
                record = {"query_id": q, "doc_id": d, "utility": u, "no_res_prob": p}
                lines.append(json.dumps(record, ensure_ascii=False) + "\n")
            else:
                lines.append(f"{q} {d} {u!r}\n")
    atomic_write_text(path, "".join(lines))


def write_json(value: Any, path: str | os.PathLike[str]) -> None:
    atomic_write_text(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


__all__ = [
    "RELEVANCE_PROMPTS",
    "Job",
    "Missing",
    "TaskResult",
    "answerability_job",
    "as_judge",
    "build_judge",
    "correctness_job",
    "judge_answerability",
    "judge_correctness",
    "judge_relevance",
    "judge_subquestions",
    "judge_udcg",
    "label_source",
    "pair_items",
    "relevance_job",
    "subquestions_job",
    "udcg_job",
    "write_json",
    "write_judgments",
    "write_label_provenance",
    "write_qrels",
    "write_questions",
    "write_utilities",
]
