"""The public entry of an evaluation: :func:`evaluate`.

Runs held in memory are evaluated by :func:`~ragmeter.evaluation.evaluate_inputs`; run files,
folders and globs of partitions, and any run on another engine (``engine="ray"``) by
:func:`~ragmeter.evaluation.distributed.evaluate_sources`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ragmeter.core.align import Missing
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import MissingInputError
from ragmeter.evaluation.engine import evaluate_inputs, resolve_measures
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.results import Evaluation
from ragmeter.measures import Measure

if TYPE_CHECKING:
    from ragmeter.core.judgments import Answers, Corpus, Judgments, TokenCounter
    from ragmeter.core.nuggets import CitationSupport, NuggetAssignments, Nuggets
    from ragmeter.evaluation.partitioned import Engine
    from ragmeter.io.lengths import PassageLengths
    from ragmeter.io.utilities import Utilities

RunPath: TypeAlias = str | os.PathLike[str]
RunLike: TypeAlias = Run | Mapping[str, Mapping[str, float]]
QrelsLike: TypeAlias = Qrels | Mapping[str, Any]


def _as_runs(
    runs: RunLike | RunPath | Sequence[RunLike | RunPath] | Mapping[str, RunLike | RunPath],
) -> tuple[list[Run | RunPath], list[str | None]]:
    """The runs (in memory, or files) and the name each is given (``None``: its own)."""
    if isinstance(runs, Run | str | os.PathLike):
        return [runs], [None]
    if isinstance(runs, Mapping):
        named = {str(k): v for k, v in runs.items() if isinstance(v, Run | str | os.PathLike)}
        if named and len(named) == len(runs):
            return list(named.values()), list(named)
        return [Run.from_dict(runs)], [None]  # type: ignore[arg-type]
    out: list[Run | RunPath] = []
    for i, r in enumerate(runs):
        keep = isinstance(r, Run | str | os.PathLike)
        out.append(r if keep else Run.from_dict(r, name=f"run{i + 1}"))  # type: ignore[arg-type]
    return out, [None] * len(out)


def evaluate(
    runs: RunLike | RunPath | Sequence[RunLike | RunPath] | Mapping[str, RunLike | RunPath],
    qrels: QrelsLike | RunPath | None,
    measures: Iterable[str | Measure] | str,
    *,
    missing: Missing = "zero",
    rel_level: int = 1,
    depth: int | None = None,
    default_k: int = 5,
    pool: Run | None = None,
    pool_depth: int | None = None,
    grade_map: str | None = None,
    judgments: Judgments | None = None,
    corpus: Corpus | None = None,
    answers: Answers | Sequence[Answers | None] | None = None,
    context_k: int | Literal["oracle"] | None = None,
    tau: int = 3,
    token_counter: TokenCounter | None = None,
    passage_lengths: PassageLengths | None = None,
    utilities: Utilities | None = None,
    nuggets: Nuggets | None = None,
    nugget_assignments: NuggetAssignments | None = None,
    citation_support: CitationSupport | None = None,
    engine: str | Engine = "local",
    workers: int | None = None,
) -> Evaluation:
    """Evaluate one or more runs against ``qrels``.

    Args:
        runs: a :class:`Run`, a ``{qid: {doc: score}}`` dict, a file, a folder or glob of
            files partitioned by query (evaluated one partition at a time, see
            :mod:`ragmeter.io.partitions`), a list of them, or ``{name: run or path}``.
        qrels: :class:`Qrels`, ``{qid: {doc: grade}}`` / ``{qid: [relevant docs]}``, a file,
            or a folder or glob of partitions.
        measures: names such as ``"ndcg@10"``, ``"P_10"``, ``"map"``, or measure objects.
        missing: qrels queries absent from a run are scored as empty runs (``"zero"``) or
            dropped (``"skip"``, trec_eval without ``-c``). Either way they are counted.
        rel_level: default relevance threshold (relevant ⇔ grade ≥ rel_level).
        depth: evaluate only the first ``depth`` items of each ranking.
        default_k: cutoff for measures that need one and were given none.
        pool: the retriever's candidate list for pool-based measures (``proc@K``…); by default
            each run is its own pool.
        pool_depth: use only the first ``pool_depth`` candidates of each query as the pool.
        grade_map: default grade mapping onto the 1..5 utility scale for the set-based
            measures, e.g. ``"0:1,1:3,2:4,3:5"`` for TREC 0..3 grades.
        judgments: sub-question judgments for the coverage measures (``coverage``,
            ``alpha_ndcg@K``, ``density``, ``answer_*``). Without ``qrels``, the evaluated
            queries are the judged ones and the classical measures use the CRUX graded qrels
            derived from them (required 3, partially redundant 2, fully redundant 1).
        corpus: passage texts (for ``density``).
        answers: rated generated answers (for ``answer_*``): one for every run, or one per run.
        context_k: ``@K`` written into the context measures (coverage, density, alpha_ndcg)
            given without one: ``coverage`` is then ``coverage@context_k``, under that
            name. ``"oracle"``/``None``: each family's default (``|P*|`` per query for
            coverage and density, the paper's setting; 20 for alpha_ndcg). It never changes
            a measure whose name does not say so.
        tau: answerability threshold of the coverage measures (rating ≥ tau).
        token_counter: tokenizer of ``density`` (text → token count); whitespace tokens
            by default.
        passage_lengths: token length of each passage, for token budgets (``ra_nwg@512t``);
            see :func:`ragmeter.io.lengths.read_passage_lengths`.
        utilities: per-passage utilities for ``udcg@K``; see :mod:`ragmeter.metrics.udcg`.
        nuggets: the nuggets of each query, for the nugget measures (``nugget_vital``…);
            without ``qrels`` (and judgments) the evaluated queries are those with nuggets
            (else, with ``citation_support`` alone, those with judged answers).
        nugget_assignments: assignments of the nuggets to each run's answers (matched by the
            run's name) and to retrieved passages (``nugget_coverage@K``); see
            :mod:`ragmeter.metrics.nuggets`.
        citation_support: support of each answer sentence by its citations
            (``citation_precision``, ``citation_recall``).
        engine: where the runs are evaluated: ``"local"`` (this process), ``"ray"`` (Ray
            tasks on a cluster started on this machine, or ``$RAY_ADDRESS``), ``"ray=auto"``,
            ``"ray://host:port"``; see :mod:`ragmeter.evaluation.distributed`.
        workers: with ``engine="ray"``, the CPUs of a cluster started here (default: all)
            and the most tasks in flight.

    Example:
        >>> from ragmeter import Run, Qrels, evaluate
        >>> run = Run.from_lists({"q1": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]})
        >>> qrels = Qrels.from_dict({"q1": ["doc-3", "doc-9"]})
        >>> round(evaluate(run, qrels, ["ndcg@5"]).run.means()["ndcg@5"], 10)
        0.6509209298
    """
    run_list, names = _as_runs(runs)
    labels = _labels(qrels, measures, default_k, judgments, tau, nuggets, citation_support)
    inputs = EvalInputs(
        qrels=labels,
        missing=missing,
        rel_level=rel_level,
        depth=depth,
        default_k=default_k,
        pool=pool,
        pool_depth=pool_depth,
        grade_map=grade_map,
        judgments=judgments,
        corpus=corpus,
        answers=answers,
        context_k=context_k,
        tau=tau,
        token_counter=token_counter,
        passage_lengths=passage_lengths,
        utilities=utilities,
        nuggets=nuggets,
        nugget_assignments=nugget_assignments,
        citation_support=citation_support,
    )
    if engine != "local" or workers is not None or not all(isinstance(r, Run) for r in run_list):
        from ragmeter.evaluation.distributed import evaluate_sources
        from ragmeter.evaluation.partitioned import Engine

        chosen = Engine.parse(engine, workers=workers)
        return evaluate_sources(run_list, inputs, measures, engine=chosen, names=names)
    in_memory = [r for r in run_list if isinstance(r, Run)]  # every one, here
    named = [r if n is None else replace(r, name=n) for r, n in zip(in_memory, names, strict=True)]
    return evaluate_inputs(named, inputs, measures)


def _labels(
    qrels: QrelsLike | RunPath | None,
    measures: Iterable[str | Measure] | str,
    default_k: int,
    judgments: Judgments | None,
    tau: int,
    nuggets: Nuggets | None,
    citation_support: CitationSupport | None,
) -> Qrels:
    """The qrels of an evaluation: given (in memory, or a file, folder or glob of partitions
    to read), else derived from the judgments, the nuggets or the citation support."""
    if isinstance(qrels, str | os.PathLike):
        from ragmeter.io.readers import read_qrels

        qrels = read_qrels(qrels)
    if qrels is None and judgments is not None:
        # judged queries only; the classical measures use the CRUX graded qrels
        coverage_only = all(
            "judgments" in m.spec.needs for m in resolve_measures(measures, default_k=default_k)
        )
        qrels = judgments.query_qrels() if coverage_only else judgments.graded_qrels(tau)
    if qrels is None and nuggets is not None:
        qrels = nuggets.query_qrels()
    elif qrels is None and citation_support is not None:
        qrels = citation_support.query_qrels()
    if qrels is None:
        raise MissingInputError("these measures need qrels")
    return qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
