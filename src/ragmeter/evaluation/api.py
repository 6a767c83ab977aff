"""The public entry of an evaluation: :func:`evaluate`.

Runs held in memory are evaluated by :func:`~ragmeter.evaluation.evaluate_inputs`; run files
and iterators of blocks by :func:`~ragmeter.evaluation.stream.evaluate_run_files`, one block
of queries at a time; folders and globs of partitions, and any run on another engine
(``engine="ray"``), by :func:`~ragmeter.evaluation.distributed.evaluate_sources`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias, Unpack

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import MissingInputError
from ragmeter.evaluation.engine import evaluate_inputs, resolve_measures
from ragmeter.evaluation.inputs import EvalInputs, Options
from ragmeter.evaluation.results import Evaluation
from ragmeter.evaluation.stream import (
    RunPath,
    RunSource,
    evaluate_run_files,
    is_blocks,
    is_run_path,
)
from ragmeter.measures import Measure

if TYPE_CHECKING:
    from ragmeter.core.judgments import Judgments
    from ragmeter.evaluation.partitioned import Engine

RunLike: TypeAlias = Run | Mapping[str, Mapping[str, float]]
QrelsLike: TypeAlias = Qrels | Mapping[str, Any]


def _as_runs(runs: RunLike | Sequence[RunLike] | Mapping[str, RunLike]) -> list[Run]:
    if isinstance(runs, Run):
        return [runs]
    if isinstance(runs, Mapping):
        named = {str(k): v for k, v in runs.items() if isinstance(v, Run)}
        if named and len(named) == len(runs):
            return [replace(v, name=k) for k, v in named.items()]
        return [Run.from_dict(runs)]  # type: ignore[arg-type]
    out = []
    for i, r in enumerate(runs):
        out.append(r if isinstance(r, Run) else Run.from_dict(r, name=f"run{i + 1}"))
    return out


def evaluate(
    runs: RunLike
    | RunPath
    | Iterable[Run]
    | Sequence[RunLike | RunPath | Iterable[Run]]
    | Mapping[str, RunLike | RunPath | Iterable[Run]],
    qrels: QrelsLike | RunPath | None,
    measures: Iterable[str | Measure] | str,
    *,
    workers: int | None = None,
    engine: str | Engine = "local",
    **options: Unpack[Options],
) -> Evaluation:
    """Evaluate one or more runs against ``qrels``.

    The keywords besides ``workers`` and ``engine`` (:class:`~ragmeter.evaluation.inputs.Options`)
    are the fields of one :class:`~ragmeter.evaluation.inputs.EvalInputs`, checked once when it
    is built (:func:`evaluation_inputs`); the runs, sorted out once, go down to the engine.

    Args:
        runs: a :class:`Run`, a ``{qid: {doc: score}}`` dict, a list of them, or ``{name:
            Run}``; or a run file's path (``{name: path}`` names it), or an iterator of blocks
            of one run (each a :class:`Run` of whole queries), or a list mixing them. A TREC run
            file is evaluated in blocks of queries, so that memory is bounded by the block, not
            the file (it must be grouped by query; see :mod:`ragmeter.evaluation.stream`); a
            file in another format is read whole. A folder or glob of files partitioned by query
            is evaluated one partition at a time (:mod:`ragmeter.io.partitions`).
        qrels: :class:`Qrels`, ``{qid: {doc: grade}}`` / ``{qid: [relevant docs]}``, a file,
            or a folder or glob of partitions.
        measures: names such as ``"ndcg@10"``, ``"P_10"``, ``"map"``, or measure objects.
        workers: processes that read and evaluate blocks of a plain TREC run file, or the
            partitions of a folder or glob (default: ``min(2, os.cpu_count())`` for 64 MiB or
            more, else 1; or the ``RAGMETER_WORKERS`` environment variable); 1 evaluates in this
            process. With ``engine="ray"``: the CPUs of a Ray instance started here, and the
            most tasks in flight.
        engine: where the runs are evaluated: ``"local"`` (this process), ``"ray"`` (Ray tasks
            on a cluster started on this machine, or ``$RAY_ADDRESS``), ``"ray=auto"``,
            ``"ray://host:port"``; see :mod:`ragmeter.evaluation.distributed`.

    Keyword Args:
        missing (str): qrels queries absent from a run are scored as empty runs (``"zero"``) or
            dropped (``"skip"``, trec_eval without ``-c``). Either way they are counted.
        rel_level (int): default relevance threshold (relevant ⇔ grade ≥ rel_level).
        depth (int | None): evaluate only the first ``depth`` items of each ranking.
        default_k (int): cutoff for measures that need one and were given none.
        pool (Run | None): the retriever's candidate list for pool-based measures (``proc@K``…); by
            default each run is its own pool.
        pool_depth (int | None): use only the first ``pool_depth`` candidates of each query as the
            pool.
        grade_map (str | None): default grade mapping onto the 1..5 utility scale for the set-based
            measures, e.g. ``"0:1,1:3,2:4,3:5"`` for TREC 0..3 grades.
        judgments (Judgments | None): sub-question judgments for coverage (``coverage``,
            ``alpha_ndcg@K``, ``density``, ``answer_*``) and ndeval's measures (else a ``qrels``
            file's subtopics). Without ``qrels``, the judged queries are evaluated, the classical
            measures on the CRUX graded qrels (required 3, partially/fully redundant 2/1).
        corpus (Corpus | None): passage texts (for ``density``).
        answers (Answers | Sequence[Answers | None] | None): rated generated answers (for
            ``answer_*``): one for every run, or one per run.
        context_k (int | str | None): ``@K`` written into the context measures (coverage, density,
            alpha_ndcg) given without one: ``coverage`` is then ``coverage@context_k``, under that
            name. ``"oracle"``/``None``: each family's default (``|P*|`` per query for coverage and
            density, the paper's setting; 20 for alpha_ndcg). It never changes a measure whose name
            does not say so.
        tau (int): answerability threshold of the coverage measures (rating ≥ tau).
        token_counter (TokenCounter | None): tokenizer of ``density`` (text → token count;
            whitespace by default).
        passage_lengths (PassageLengths | None): token length of each passage, for token budgets
            (``ra_nwg@512t``); see :func:`ragmeter.io.lengths.read_passage_lengths`.
        utilities (Utilities | None): per-passage utilities for ``udcg@K``; see
            :mod:`ragmeter.metrics.udcg`.
        nuggets (Nuggets | None): each query's nuggets (:mod:`ragmeter.metrics.nuggets`); without
            ``qrels``, the evaluated queries are those with nuggets (or with judged answers).
        nugget_assignments (NuggetAssignments | None): nuggets assigned to run answers (by run name)
            and passages.
        citation_support (CitationSupport | None): the support of each answer sentence by its
            citations.
        spans (SpanInputs | None): span labels and chunk tables (:mod:`ragmeter.metrics.spans`).
        gold_answers (GoldAnswers | None): each query's gold answers
            (:mod:`ragmeter.metrics.containment`).

    Example:
        >>> from ragmeter import Run, Qrels, evaluate
        >>> run = Run.from_lists({"q1": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]})
        >>> qrels = Qrels.from_dict({"q1": ["doc-3", "doc-9"]})
        >>> round(evaluate(run, qrels, ["ndcg@5"]).run.means()["ndcg@5"], 10)
        0.6509209298
    """
    inputs = evaluation_inputs(qrels, measures, options)
    return _dispatch(runs, inputs, measures, engine=engine, workers=workers)


def evaluation_inputs(
    qrels: QrelsLike | RunPath | None, measures: Iterable[str | Measure] | str, options: Options
) -> EvalInputs:
    """The inputs of an evaluation, checked once (:class:`EvalInputs`): the qrels read, or
    made from the labels given without them (:func:`_derived_qrels`); ndeval's measures read
    a qrels file's subtopics (:func:`_subtopics_from_qrels`)."""
    unknown = sorted(set(options) - set(Options.__annotations__))
    if unknown:  # as Python says it of a keyword the signature does not have
        raise TypeError(f"evaluate() got an unexpected keyword argument {unknown[0]!r}")
    default_k = options.get("default_k", 5)
    judgments, qrels = _subtopics_from_qrels(options.get("judgments"), qrels, measures, default_k)
    checked: Options = {**options, "judgments": judgments}
    if qrels is None:
        qrels = _derived_qrels(measures, default_k, options.get("tau", 3), checked)
    return EvalInputs(_as_qrels(qrels), **checked)


def _dispatch(
    runs: Any,
    inputs: EvalInputs,
    measures: Iterable[str | Measure] | str,
    *,
    engine: str | Engine,
    workers: int | None,
) -> Evaluation:
    """Partitions or another engine: :func:`~ragmeter.evaluation.distributed.evaluate_sources`;
    files and iterators of blocks: streamed; runs in memory: evaluated whole. What was given
    is sorted out once, here (:func:`_sources`), and only the sources go on."""
    names, sources, streamed = _sources(runs)
    if engine != "local" or (streamed and _partitioned(sources)):
        from ragmeter.evaluation.distributed import evaluate_sources
        from ragmeter.evaluation.partitioned import Engine

        chosen = Engine.parse(engine, workers=workers)
        # an iterator of blocks among them is refused there
        return evaluate_sources(
            sources,  # type: ignore[arg-type]
            inputs,
            measures,
            engine=chosen,
            names=names,
        )
    if streamed:
        return evaluate_run_files(sources, inputs, measures, names=names, workers=workers)
    return evaluate_inputs(sources, inputs, measures)  # type: ignore[arg-type]


def _sources(runs: Any) -> tuple[list[str | None] | None, list[RunSource], bool]:
    """The names (of ``{name: source}``) and the sources of what :func:`evaluate` got, and
    whether one of them streams (a path, an iterator of blocks): then each dict is a run of
    its own (:func:`_listed`), else the runs are read whole (:func:`_as_runs`)."""
    whole = is_run_path(runs) or is_blocks(runs)
    if isinstance(runs, Mapping) and not whole:
        values: list[Any] = list(runs.values())
    else:
        values = list(runs) if isinstance(runs, list | tuple) and not whole else [runs]
    if any(is_run_path(r) or is_blocks(r) for r in values):
        names, sources = _listed(runs)
        return names, sources, True
    return None, list(_as_runs(runs)), False


def _subtopics_from_qrels(
    judgments: Judgments | None,
    qrels: QrelsLike | RunPath | None,
    measures: Iterable[str | Measure] | str,
    default_k: int,
) -> tuple[Judgments | None, QrelsLike | RunPath | None]:
    """ndeval's measures asked for without sub-question judgments read the qrels *file* as
    TREC diversity qrels (``qid subtopic docid judgment``), as ir_measures and pyndeval do;
    returns the judgments so read (with a note saying so) and the qrels left to read (none
    when every measure reads subtopics: the judged queries are then evaluated, and a document
    judged for several subtopics is no conflict of grades). Qrels held in memory have no
    subtopics: nothing is read then (nor when judgments are given)."""
    from ragmeter.measures.irm import SUBTOPIC_FAMILIES

    if judgments is not None or not isinstance(qrels, str | os.PathLike):
        return judgments, qrels
    source = os.fspath(qrels)
    families = {m.family for m in resolve_measures(measures, default_k=default_k)}
    if not families & SUBTOPIC_FAMILIES or not os.path.isfile(source):
        return None, qrels
    from ragmeter.io.judgments import read_judgments

    read = read_judgments(source, format="diversity")
    note = (
        f"{source}: read as TREC diversity qrels (qid subtopic docid judgment) for "
        f"{', '.join(sorted(families & SUBTOPIC_FAMILIES))}, as ir_measures and ndeval read "
        "them; give other sub-question judgments with --judgments"
    )
    judgments = replace(read, warnings=(*read.warnings, note))
    return judgments, (None if families <= SUBTOPIC_FAMILIES else qrels)


def _as_qrels(qrels: QrelsLike | RunPath) -> Qrels:
    """Qrels given as an object, a dict, a file, or a folder or glob of partitions."""
    if isinstance(qrels, str | os.PathLike):
        from ragmeter.io.readers import read_qrels

        return read_qrels(qrels)
    return qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)


def _derived_qrels(
    measures: Iterable[str | Measure] | str, default_k: int, tau: int, labels: Options
) -> Qrels:
    """The evaluated queries when no qrels are given: the judged ones (the classical measures
    then use the CRUX graded qrels), else those with nuggets, else those with judged answers,
    else those with span labels (span measures only: a chunk has no grade until a rule says
    which overlap makes it relevant, see :func:`ragmeter.core.spans.chunk_qrels`), else
    those of the gold answers."""
    judgments, nuggets, spans = labels.get("judgments"), labels.get("nuggets"), labels.get("spans")
    citations, gold_answers = labels.get("citation_support"), labels.get("gold_answers")
    if judgments is not None:
        coverage_only = all(
            "judgments" in m.spec.needs for m in resolve_measures(measures, default_k=default_k)
        )
        return judgments.query_qrels() if coverage_only else judgments.graded_qrels(tau)
    if nuggets is not None:
        return nuggets.query_qrels()
    if citations is not None:
        return citations.query_qrels()
    if spans is not None:
        others = [
            str(m)
            for m in resolve_measures(measures, default_k=default_k)
            if "spans" not in m.needs
        ]
        if others:
            raise MissingInputError(
                f"{', '.join(others)} {'needs' if len(others) == 1 else 'need'} chunk qrels: "
                "give --qrels, or make them from the "
                "spans with `ragmeter spans to-qrels`"
            )
        return spans.labels.query_qrels()  # type: ignore[no-any-return]
    if gold_answers is not None:
        _refuse_without_qrels(measures, default_k, "gold_answers", "qrels")
        return gold_answers.query_qrels()
    raise MissingInputError("these measures need qrels")


def _refuse_without_qrels(
    measures: Iterable[str | Measure] | str, default_k: int, own: str, what: str
) -> None:
    """Only the measures needing ``own`` can be read off the queries of those labels: any
    other is an error naming them (scored against no judgment, it would read 0)."""
    others = [str(m) for m in resolve_measures(measures, default_k=default_k) if own not in m.needs]
    if others:
        raise MissingInputError(
            f"{', '.join(others)} {'needs' if len(others) == 1 else 'need'} {what}: give --qrels"
        )


def _listed(runs: Any) -> tuple[list[str | None] | None, list[RunSource]]:
    """The names (of ``{name: source}``) and the sources of what :func:`evaluate` got."""
    names: list[str | None] | None = None
    if isinstance(runs, Mapping):
        names, values = [str(k) for k in runs], list(runs.values())
    else:
        values = list(runs) if isinstance(runs, list | tuple) else [runs]
    return names, [_as_source(r, i) for i, r in enumerate(values)]


def _partitioned(sources: Sequence[RunSource]) -> bool:
    """Whether a path among ``sources`` names partitions (a folder or a glob)."""
    from ragmeter.io._common import is_partitioned

    return any(is_run_path(s) and is_partitioned(s) for s in sources)  # type: ignore[arg-type]


def _as_source(run: Any, i: int) -> RunSource:
    """One element of a list of runs, as :func:`evaluate_run_files` takes it."""
    if isinstance(run, Run) or is_run_path(run) or is_blocks(run):
        return run  # type: ignore[no-any-return]
    return Run.from_dict(run, name=f"run{i + 1}")
