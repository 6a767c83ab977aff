"""Evaluating files: what ``ragmeter evaluate`` does between parsing its options and printing.

An :class:`EvaluateRequest` names the input files and groups the options (the evaluation
settings shared with ``compare``, the side inputs in one :class:`InputFiles`);
:func:`evaluate_files` reads the files, chooses a cutoff sweep or a single evaluation, and
returns the result with the parameters a saved evaluation records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.metrics.defaults import ANSWER_MEASURES, COVERAGE_MEASURES, DEFAULT_MEASURES
from ragmeter.workflows.inputs import InputFiles, distinct_run_names, parse_context_k

if TYPE_CHECKING:
    from ragmeter.analysis.calibration import LabelsDescription
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation.inputs import Options
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.evaluation.sweep import Sweep
    from ragmeter.measures import Measure

#: evaluation options recorded with a saved evaluation (the others are inputs, hashed)
SAVED_OPTIONS = ("missing", "rel_level", "depth", "default_k", "pool_depth", "grade_map")


@dataclass(frozen=True)
class EvaluationSettings:
    """The options of :func:`ragmeter.evaluate` that ``evaluate``, ``compare`` and ``report``
    take from the same command-line options; ``pool`` is a run file, read by :meth:`options`."""

    missing: str = "zero"
    rel_level: int = 1
    depth: int | None = None
    default_k: int = 5
    pool: Path | None = None
    pool_depth: int | None = None
    grade_map: str | None = None
    #: where the runs are evaluated (``local``, ``ray``, ``ray=ADDRESS``) and with how many
    #: workers: they change where the numbers are computed, never the numbers
    engine: str = "local"
    workers: int | None = None

    def options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`ragmeter.evaluate` (the pool run read here)."""
        from ragmeter.io.readers import read_run

        return {
            "missing": self.missing,
            "rel_level": self.rel_level,
            "depth": self.depth,
            "default_k": self.default_k,
            "pool": read_run(self.pool) if self.pool is not None else None,
            "pool_depth": self.pool_depth,
            "grade_map": self.grade_map,
            "engine": self.engine,
            "workers": self.workers,
        }

    def saved(self) -> dict[str, Any]:
        """The settings recorded with a saved evaluation (the pool file is hashed apart)."""
        return {name: getattr(self, name) for name in SAVED_OPTIONS}


@dataclass(frozen=True)
class TraceReading:
    """How trace files are read (:mod:`ragmeter.io.traces`): ``--query-id-from``,
    ``--doc-id-from`` and ``--stage`` (``None``: every stage, each a run of its own)."""

    query_id_from: str | None = None
    doc_id_from: str | None = None
    stage: str | None = None

    def read(self, path: Path, *, every_stage: bool = True) -> list[Run]:
        """The run(s) of the trace file at ``path``: one per stage it holds when no stage
        was asked for (and ``every_stage``), else the asked one's."""
        from ragmeter.io.readers import read_run
        from ragmeter.io.traces import read_trace_stages

        if self.stage is None and every_stage:
            return read_trace_stages(path, None, self.query_id_from, doc_id_from=self.doc_id_from)
        return [
            read_run(
                path,
                query_id_from=self.query_id_from,
                doc_id_from=self.doc_id_from,
                stage=self.stage,
            )
        ]

    def for_qrels(self, qrels: Qrels) -> TraceReading:
        """Automatic document ids that meet ``qrels`` made from content hashes take those
        hashes (:func:`ragmeter.io.traces.doc_id_from_for`)."""
        from ragmeter.io.traces import doc_id_from_for

        if self.doc_id_from is not None:
            return self
        # one id at a time: the first id that is no content hash settles it (no set of ids)
        judged = (doc.as_py() for doc in qrels.doc_ids)
        return replace(self, doc_id_from=doc_id_from_for(None, judged))

    def recorded(self) -> dict[str, str]:
        """What a saved evaluation records of it."""
        from ragmeter.io.trace_stages import resolve_stage
        from ragmeter.io.traces import resolve_doc_id_from, resolve_query_id_from

        return {
            "query_id_from": resolve_query_id_from(self.query_id_from),
            "doc_id_from": resolve_doc_id_from(self.doc_id_from) or "auto",
            "stage": resolve_stage(self.stage) or "every",
        }


@dataclass(frozen=True)
class EvaluateRequest:
    """What ``ragmeter evaluate`` was asked: run files, qrels (``None``: each run is a samples
    file with its own judgments, or the judged queries of ``coverage``), measures (``None``:
    the defaults), and ``k``: the ``--k`` text, a cutoff sweep when it is a range or list
    (or any value without judgments), else the coverage context size."""

    runs: Sequence[Path]
    qrels: Path | None = None
    measures: Sequence[str] | None = None
    settings: EvaluationSettings = field(default_factory=EvaluationSettings)
    #: the side inputs: sub-question judgments, corpus, answers, utilities, gold answers,
    #: nuggets, citation support, spans… (one value, read by :meth:`InputFiles.read`)
    inputs: InputFiles = field(default_factory=InputFiles)
    k: str = "oracle"
    #: what the qrels' labels are (:func:`ragmeter.analysis.calibration.label_description`),
    #: carried by the evaluation into its JSON and the store
    described_labels: LabelsDescription | None = None
    #: where trace files' rankings take their query ids (``--query-id-from``; ``None``: the
    #: readers' default, :func:`ragmeter.io.traces.default_query_id_from`)
    query_id_from: str | None = None
    #: the qrels file's format when its extension says otherwise (``--qrels-format trec``
    #: for a TREC qrels file named ``.tsv``); ``None``: from the extension
    qrels_format: str | None = None
    #: where trace files' documents take their ids (``--doc-id-from``; ``None``: automatic,
    #: :func:`ragmeter.io.traces.resolve_doc_id_from`)
    doc_id_from: str | None = None
    #: which ranking of each trace is evaluated (``--stage``; ``None``: every stage the file
    #: holds, each a run of its own, :func:`ragmeter.io.traces.read_trace_stages`)
    stage: str | None = None

    def traces(self) -> TraceReading:
        """How trace files are read."""
        return TraceReading(self.query_id_from, self.doc_id_from, self.stage)

    def default_measures(self) -> list[str]:
        """The measures asked for, else the classical defaults (coverage with judgments, the
        span measures with span labels, answer containment with gold answers and no qrels)."""
        if self.measures:
            return list(self.measures)
        if self.inputs.spans is not None:
            from ragmeter.workflows.spans import SPAN_MEASURES

            return list(SPAN_MEASURES)
        own = self.inputs.default_measures()
        if own:
            return own
        if self.inputs.coverage:
            density = ["density"] if self.inputs.corpus is not None else []
            return [*COVERAGE_MEASURES, *density]
        if self.qrels is None and self.inputs.gold_answers is not None:
            return list(ANSWER_MEASURES)
        return list(DEFAULT_MEASURES)

    def sweep_ks(self) -> list[int] | None:
        """The cutoffs of a sweep, or ``None`` for a single evaluation."""
        from ragmeter.evaluation.sweep import parse_ks

        if self.k == "oracle":
            return None
        if self.inputs.coverage and not any(c in self.k for c in ":,"):
            return None  # the coverage context size
        return parse_ks(self.k)


@dataclass(frozen=True)
class EvaluateOutcome:
    """The evaluation, the sweep it is (``None`` for a single evaluation) and the parameters
    a saved evaluation records."""

    evaluation: Evaluation
    sweep: Sweep | None
    describe: Callable[[], dict[str, Any]] = field(repr=False, compare=False)

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The parameters a save records, input files' hashes included: described when asked
        for (hashing a run file of many gigabytes takes seconds that only a save needs)."""
        return self.describe()


def evaluate_files(
    request: EvaluateRequest,
    labels: Qrels | None = None,
    overrides: Options | None = None,
) -> EvaluateOutcome:
    """Read the files of ``request``, evaluate (or sweep) and describe the parameters;
    ``labels``: qrels to evaluate with instead of reading ``request.qrels``, ``overrides``:
    keyword arguments of :func:`ragmeter.evaluate` replacing those read from the request's
    files (the merged human and LLM labels of a prediction-powered estimate:
    ``judgments``, ``nugget_assignments``)."""
    from ragmeter.evaluation.sweep import Sweep, expand

    requested = request.default_measures()
    ks = request.sweep_ks()
    names: list[Any] = list(requested)
    base: list[Measure] = []
    if ks is not None:
        from ragmeter.measures import parse_measures

        base = list(parse_measures(requested))
        names = [str(m) for m in expand(base, ks)]
    options = request.settings.options()
    options.update(request.inputs.read(names, request.runs, sweep=ks is not None))
    options.update(overrides or {})
    if labels is None and request.qrels is not None and request.qrels_format is not None:
        from ragmeter.io.readers import read_qrels

        labels = read_qrels(request.qrels, format=request.qrels_format)
    if request.inputs.spans is not None:
        evaluation = _evaluate_spans(request, names, options, labels)
    else:
        evaluation = _evaluate(
            request.runs, labels if labels is not None else request.qrels, names, options,
            request.inputs.own_queries, request.traces(),
        )  # fmt: skip
    if request.described_labels is not None:
        evaluation = evaluation.with_labels(request.described_labels.to_json())
    done = Sweep(evaluation, tuple(base), tuple(ks)) if ks is not None else None
    return EvaluateOutcome(evaluation, done, lambda: _parameters(request, requested, ks))


def _run_inputs(runs: Sequence[Path], traces: TraceReading) -> list[Path | Run]:
    """``runs``, each trace file read as ``traces`` says (one run per stage without
    ``--stage``); other files stay paths (TREC runs are streamed in blocks)."""
    out: list[Path | Run] = []
    for p in runs:
        if _is_trace_file(p):
            out.extend(traces.read(p))
        else:
            out.append(p)
    return out


def _is_trace_file(path: Path) -> bool:
    from ragmeter.io.readers import detect_format, is_traces

    return path.is_file() and is_traces(path, detect_format(path))


def _evaluate(
    runs: Sequence[Path],
    qrels: Path | Qrels | None,
    names: list[Any],
    options: dict[str, Any],
    crux: bool,
    traces: TraceReading,
) -> Evaluation:
    from ragmeter.evaluation import evaluate
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.readers import read_qrels, read_run
    from ragmeter.measures import reads_subtopics

    if qrels is None and crux:
        # the judged queries (or those with nuggets) are evaluated; classical measures use
        # the CRUX graded qrels; a trace is read at its default stage (an agent's gathered
        # context, a reranker's output)
        read = [
            read_run(p, query_id_from=traces.query_id_from, doc_id_from=traces.doc_id_from,
                     stage=traces.stage)
            for p in runs
        ]  # fmt: skip
        return evaluate(read, None, names, **options)
    if qrels is not None:
        # the paths go to the library: TREC run files are streamed in blocks of queries,
        # partitioned runs evaluated one partition at a time
        # a path is left to the library when ndeval's measures may read its subtopics
        labels = (
            read_qrels(qrels)
            if isinstance(qrels, Path) and (options.get("judgments") or not reads_subtopics(names))
            else qrels
        )
        if isinstance(labels, Path):
            return evaluate(_run_inputs(runs, traces), labels, names, **options)
        # the qrels settle the trace files' document ids: no trace file, nothing to settle
        reading = traces.for_qrels(labels) if any(map(_is_trace_file, runs)) else traces
        inputs = _run_inputs(runs, reading)
        evaluation = evaluate(inputs, labels, names, **options)
        read = [r for r in inputs if not isinstance(r, Path)]
        notes = stage_losses(read, labels, options)
        if reading != traces and any(r.stage is not None for r in read):
            notes.insert(0, CONTENT_IDS_NOTE)
        return replace(evaluation, warnings=(*evaluation.warnings, *notes))
    # Samples files carry their own judgments (expected_output); traces do not.
    return Evaluation.concat([evaluate(read_run(p), own_qrels(p), names, **options) for p in runs])


#: said when the qrels' ids are content hashes and trace documents were named the same way
CONTENT_IDS_NOTE = (
    "the qrels' document ids are all content hashes: the trace files' documents are named by "
    "a hash of their content too (--doc-id-from content)"
)


def stage_losses(runs: Sequence[Run], qrels: Qrels, options: Mapping[str, Any]) -> list[str]:
    """For each trace file read as a retriever and a reranker stage: the relevant documents
    the reranker lost (:func:`ragmeter.analysis.stages.stage_loss`), one line each."""
    by_stage = {(r.name.rsplit(" (", 1)[0], r.stage): r for r in runs if r.stage is not None}
    out: list[str] = []
    if not by_stage:
        return out
    from ragmeter.analysis.stages import stage_loss

    for (base, stage), run in by_stage.items():
        if stage == "reranker" and (base, "retriever") in by_stage:
            loss = stage_loss(
                by_stage[(base, "retriever")], run, qrels, int(options.get("rel_level", 1))
            )
            out.append(f"{base}: evidence lost {loss.describe()}")
    return out


def _evaluate_spans(
    request: EvaluateRequest, names: list[Any], options: dict[str, Any], labels: Qrels | None
) -> Evaluation:
    """Runs over chunkings, named by file name (their chunk tables are matched by name);
    without ``--qrels``, the queries with span labels are evaluated. ``labels``, when given,
    are the qrels instead of ``--qrels`` (a prediction-powered estimate's merged labels)."""
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels

    paths = list(request.runs)
    run_names = distinct_run_names([p.name for p in paths], paths)  # as InputFiles.read names them
    qrels = labels
    if qrels is None and request.qrels is not None:
        qrels = read_qrels(request.qrels, format=request.qrels_format)
    return evaluate(dict(zip(run_names, paths, strict=True)), qrels, names, **options)


def own_qrels(path: Path) -> Qrels:
    """The judgments a samples file carries, when no ``--qrels`` is given. A file that
    carries none (a TREC run, a rows or ``{qid: {doc: score}}`` run) is an error naming the
    missing option: read as its own qrels, a run would score itself perfect."""
    from ragmeter.errors import MissingInputError
    from ragmeter.io._common import is_partitioned
    from ragmeter.io.readers import detect_format, holds_samples, read_qrels

    if is_partitioned(path) or not holds_samples(path):
        what = "a TREC run" if detect_format(path) == "trec" else "a run without judgments"
        what = "a partitioned run" if is_partitioned(path) else what
        raise MissingInputError(
            f"no --qrels given, and {path} is {what} (only samples files carry their own "
            "judgments, as expected_output): give the relevance judgments with --qrels QRELS"
        )
    return read_qrels(path)


def _parameters(
    request: EvaluateRequest, requested: list[str], ks: list[int] | None
) -> dict[str, Any]:
    from ragmeter.workflows.saving import input_files

    coverage = request.inputs.coverage
    context_k = "oracle" if ks is not None else request.inputs.context_k  # as read
    return {
        "measures": requested,
        "cutoffs": ks,
        **request.settings.saved(),
        "context_k": context_k if coverage else None,
        "tau": request.inputs.tau if coverage else None,
        "tokenizer": request.inputs.tokenizer,
        "udcg_model": request.inputs.udcg_model,
        **_query_ids_of_traces(request),
        **({"qrels_format": request.qrels_format} if request.qrels_format else {}),
        "inputs": input_files(
            qrels=request.qrels,
            runs=list(request.runs),
            pool=request.settings.pool,
            **request.inputs.files(),
        ),
    }


def _query_ids_of_traces(request: EvaluateRequest) -> dict[str, str]:
    """How the trace files were read: where query and document ids came from, the stage
    (recorded with a save; nothing without trace files, so that other saves keep their
    parameters)."""
    from ragmeter.io.readers import detect_format, is_traces

    if not any(p.is_file() and is_traces(p, detect_format(p)) for p in request.runs):
        return {}
    return request.traces().recorded()


def write_curves(done: Sweep, path: Path) -> None:
    """A sweep's curves, written atomically: CSV for a ``.csv`` path, else JSON."""
    from ragmeter.io._common import atomic_write_text

    text = done.to_csv() if path.suffix.lower() == ".csv" else done.to_json()
    atomic_write_text(path, text)


def read_runs(paths: Sequence[Path]) -> list[Run]:
    """The runs of ``paths``, renamed by their path where names collide."""
    from ragmeter.io.readers import read_run

    return distinct_names([read_run(p) for p in paths], list(paths))


def distinct_names(runs: list[Run], paths: list[Path]) -> list[Run]:
    """Runs renamed by their path where names collide (two files called run.txt)."""
    names = distinct_run_names([r.name for r in runs], paths)
    return [
        run if name == run.name else replace(run, name=name)
        for run, name in zip(runs, names, strict=True)
    ]


__all__ = [
    "EvaluateOutcome",
    "EvaluateRequest",
    "EvaluationSettings",
    "InputFiles",
    "TraceReading",
    "distinct_names",
    "distinct_run_names",
    "evaluate_files",
    "own_qrels",
    "parse_context_k",
    "read_runs",
    "stage_losses",
    "write_curves",
]
