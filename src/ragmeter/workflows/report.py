"""Writing the HTML report of run files: what ``ragmeter report`` does between parsing and
printing. The runs are evaluated as by ``ragmeter evaluate``, compared as by ``ragmeter
compare``, and drawn by :func:`ragmeter.report.html.write_html_report` (matplotlib is
imported only then, so the other commands start as fast as before)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import RagmeterError
from ragmeter.workflows.compare import CompareSettings
from ragmeter.workflows.evaluate import EvaluationSettings
from ragmeter.workflows.inputs import InputFiles

if TYPE_CHECKING:
    from ragmeter.analysis.leaderboard import LeaderboardAgreement
    from ragmeter.analysis.ppi import PPIEvaluation
    from ragmeter.analysis.report import ReportOptions
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation.inputs import Options
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.workflows.ppi import PPIRequest


@dataclass(frozen=True)
class ReportView:
    """What the page shows: the prompt size K (set-based measures, PROC quadrant, worst
    queries), the cutoffs of the sweep curves, how many worst queries, the title."""

    k: int = 10
    sweep_ks: str = "1:20"
    worst: int = 10
    title: str = "ragmeter report"


@dataclass(frozen=True)
class ReportRequest:
    """What ``ragmeter report`` was asked: run files, the qrels and/or the side inputs (one
    :class:`InputFiles`: sub-question judgments with their questions and corpus, nuggets,
    spans…), measures (``None``: the report's defaults), the baseline, and the settings of
    the evaluation, the comparison and the page."""

    runs: Sequence[Path]
    output: Path
    qrels: Path | None = None
    measures: Sequence[str] | None = None
    inputs: InputFiles = field(default_factory=InputFiles)
    baseline: str | None = None
    settings: EvaluationSettings = field(default_factory=EvaluationSettings)
    compare: CompareSettings = field(default_factory=CompareSettings)
    view: ReportView = field(default_factory=ReportView)
    #: other labels of the same pairs (e.g. an LLM judge's): the runs ranked under both
    compare_qrels: Path | None = None
    #: a calibration of the LLM judge whose figures are shown beside the labels' line
    calibration: Path | None = None
    #: human labels of some queries: a section of prediction-powered estimates (``--qrels``
    #: then holds the LLM labels)
    ppi: PPIRequest | None = None

    def check(self) -> None:
        """Refuse inputs the report cannot use, before reading anything."""
        side = self.inputs
        nuggets = side.nuggets or side.assignments or side.citation_support
        if not (self.qrels or side.judgments or nuggets or side.spans):
            raise RagmeterError("report needs --qrels, --judgments, --nuggets or --spans")
        if self.ppi is not None and self.qrels is None:
            raise RagmeterError("--ppi needs the LLM labels: give them with --qrels LLM_QRELS")
        side.check()
        if side.corpus is not None and side.judgments is None:
            # the report reads the corpus for its coverage sections (density) only
            raise RagmeterError("--corpus is used with --judgments; give the judgments too")


def write_report_files(request: ReportRequest) -> Evaluation:
    """Evaluate, compare (two runs or more) and write the report of ``request``; the
    evaluation is returned for its warnings. An unwritable output raises a
    :class:`RagmeterError` naming the file."""
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels
    from ragmeter.workflows.compare import baseline_index
    from ragmeter.workflows.evaluate import read_runs

    request.check()
    labels = _label_lines(request)
    qrels_obj = read_qrels(request.qrels) if request.qrels is not None else None
    side = request.inputs
    coverage = side.read_coverage(len(request.runs)) if side.coverage else {}
    names = _measures(request, qrels_obj, coverage)
    run_objs = read_runs(request.runs)
    base = baseline_index(request.baseline, run_objs, list(request.runs))
    options = request.settings.options()
    # the rest of the side inputs (nuggets, spans…), kept in the evaluation's inputs: the
    # sweep uses them too; the coverage inputs, read above for the default measures, join
    # them (the report's corpus serves density only)
    rest = replace(side, judgments=None, questions=None, answers=(), corpus=None)
    options.update(rest.read(names, request.runs, [r.name for r in run_objs]))
    options.update(coverage)
    evaluation = evaluate(run_objs, qrels_obj, names, **options)
    estimates = None
    if request.ppi is not None and qrels_obj is not None:
        estimates = _ppi(request, request.ppi, evaluation, qrels_obj, (run_objs, names, options))
    comparison = None
    if len(run_objs) > 1:
        from ragmeter.stats.comparison import compare

        comparison = compare(evaluation, baseline=base, **request.compare.options())
    against = _labels_against(request, evaluation, run_objs, names, options)
    page = _page(request, run_objs, qrels_obj, options, base, labels)
    try:
        from ragmeter.report.html import write_html_report

        write_html_report(
            request.output,
            evaluation,
            replace(page, comparison=comparison, labels_against=against, ppi=estimates),
        )
    except OSError as exc:
        raise RagmeterError(f"cannot write {request.output}: {exc.strerror or exc}") from None
    return evaluation


def _label_lines(request: ReportRequest) -> list[tuple[str, str]]:
    """What :func:`ragmeter.analysis.calibration.describe_labels` says of each label file,
    as lines under the page's title."""
    from ragmeter.analysis.calibration import describe_labels

    if request.qrels is None:
        if request.calibration is not None or request.compare_qrels is not None:
            raise RagmeterError("--calibration and --compare-qrels need --qrels")
        return []
    lines = [
        ("labels", line) for line in describe_labels(request.qrels, calibration=request.calibration)
    ]
    if request.compare_qrels is not None:
        lines.append(("compared labels", str(request.compare_qrels)))
        lines += [("compared labels", line) for line in describe_labels(request.compare_qrels)]
    return lines


def _labels_against(
    request: ReportRequest,
    evaluation: Evaluation,
    runs: list[Run],
    names: list[str],
    options: dict[str, Any],
) -> tuple[LeaderboardAgreement, str, str] | None:
    """The runs evaluated the same way under ``--compare-qrels``, ranked against ``--qrels``."""
    if request.compare_qrels is None or request.qrels is None:
        return None
    from ragmeter.analysis.leaderboard import leaderboard_agreement, rankable
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels

    if len(runs) < 2:
        raise RagmeterError("--compare-qrels ranks the runs under both labels: give two runs")
    other = evaluate(runs, read_qrels(request.compare_qrels), names, **options)
    board = leaderboard_agreement(
        evaluation, other, seed=request.compare.seed, measures=rankable(evaluation, other)
    )
    return board, request.qrels.name, request.compare_qrels.name


def _ppi(
    request: ReportRequest,
    ppi: PPIRequest,
    evaluation: Evaluation,
    llm_qrels: Qrels,
    inputs: tuple[list[Run], list[str], dict[str, Any]],
) -> PPIEvaluation:
    """The report's runs evaluated again, by the same path, under the merged labels of the
    labelled queries, and the PPI estimates of every measure."""
    from ragmeter.analysis.ppi import merge_qrels, ppi_evaluation
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels
    from ragmeter.workflows.ppi import labelled_of, labels_description

    runs, names, options = inputs
    if ppi.human_qrels is None:
        raise RagmeterError("report --ppi takes the human labels as --human-qrels")
    human_qrels = read_qrels(ppi.human_qrels)
    labelled = labelled_of(ppi, human_qrels)
    merged = merge_qrels(llm_qrels, human_qrels, labelled.query_ids)
    human = evaluate(runs, merged, names, **options)
    assert request.qrels is not None
    return ppi_evaluation(
        evaluation,
        human,
        labelled,
        alpha=ppi.alpha,
        lam=ppi.lam,
        labels=labels_description(request.qrels, ppi, labelled),
        estimator=ppi.estimator,
    )


def _measures(request: ReportRequest, qrels: Qrels | None, coverage: Options) -> list[str]:
    from ragmeter.report.html import default_measures

    if request.measures:
        return list(request.measures)
    own = request.inputs.default_measures()
    if request.inputs.spans is not None:
        from ragmeter.workflows.spans import SPAN_MEASURES

        own += SPAN_MEASURES
    if qrels is None and not coverage:
        return own
    names = own + default_measures(
        qrels,
        grade_map=request.settings.grade_map,
        judgments=coverage.get("judgments"),
        k=request.view.k,
    )
    if request.inputs.corpus is not None and request.inputs.coverage:
        names.append("density")
    return names


def _inputs(request: ReportRequest) -> list[tuple[str, str]]:
    """The input files named on the page."""
    settings = request.settings
    inputs = [("qrels", str(request.qrels))] if request.qrels is not None else []
    if request.ppi is not None and inputs:
        # the summary's numbers are on these labels: the page says they are an LLM's
        inputs = [("qrels (LLM labels)", str(request.qrels))]
        inputs.append(("human labels", str(request.ppi.human_file)))
    side = request.inputs
    if side.judgments is not None:
        inputs.append(("judgments", str(side.judgments)))
    if side.nuggets is not None:
        inputs.append(("nuggets", str(side.nuggets)))
    inputs += [("nugget assignments", str(p)) for p in side.assignments]
    if side.citation_support is not None:
        inputs.append(("citation support", str(side.citation_support)))
    if settings.grade_map:
        inputs.append(("grade map", settings.grade_map))
    if settings.pool is not None:
        depth = f" (top {settings.pool_depth})" if settings.pool_depth else ""
        inputs.append(("pool", f"{settings.pool}{depth}"))
    return inputs


def _page(
    request: ReportRequest,
    runs: list[Run],
    qrels: Qrels | None,
    options: dict[str, Any],
    base: int,
    labels: list[tuple[str, str]],
) -> ReportOptions:
    """What the page is drawn from: the runs and labels evaluated, with the very options of
    the evaluation (``options``: the keywords :func:`ragmeter.evaluate` got), the
    comparison's resampling and the view's."""
    from ragmeter.analysis.report import ReportOptions

    view, compared = request.view, request.compare
    return ReportOptions(
        runs=runs,
        qrels=qrels,
        judgments=options.get("judgments"),
        baseline=base,
        grade_map=request.settings.grade_map,
        k=view.k,
        sweep_ks=view.sweep_ks,
        pool=options["pool"],
        pool_depth=request.settings.pool_depth,
        rel_level=request.settings.rel_level,
        context_k=options.get("context_k", "oracle"),
        tau=request.inputs.tau,
        worst=view.worst,
        seed=compared.seed,
        bootstrap=compared.bootstrap,
        permutations=compared.permutations,
        title=view.title,
        inputs=[*_inputs(request), *labels],
    )
