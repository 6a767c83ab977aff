"""Prediction-powered estimates from files: what ``evaluate --ppi`` and ``compare --ppi`` do
between parsing their options and printing.

The runs are evaluated by :func:`ragmeter.workflows.evaluate.evaluate_files` twice: under
the LLM qrels (``--qrels``), and under the merged labels of the labelled queries (human
grade where present, LLM grade elsewhere; :func:`ragmeter.analysis.ppi.merge_qrels`). The
estimates are :func:`ragmeter.analysis.ppi.ppi_evaluation` and
:func:`ragmeter.analysis.ppi.ppi_comparison`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.analysis.ppi import Labelled, PPIComparison, PPIEvaluation
    from ragmeter.core.data import Qrels
    from ragmeter.core.judgments import Judgments
    from ragmeter.core.nuggets import NuggetAssignments
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.correction import Correction
    from ragmeter.stats.ppi import Estimator
    from ragmeter.workflows.evaluate import EvaluateRequest


@dataclass(frozen=True)
class PPIRequest:
    """The human labels and the estimate's options: ``human_qrels`` (relevance grades) or
    ``human_judgments`` (sub-question ratings, for the coverage measures) — the queries they
    cover are the labelled ones, unless ``labelled_queries`` lists them, optionally with
    their inclusion probabilities —, the error level ``alpha`` and ``lam`` (``None``:
    power-tuned, PPI++; ``1``: classic PPI)."""

    human_qrels: Path | None = None
    labelled_queries: Path | None = None
    alpha: float = 0.1
    lam: float | None = None
    human_judgments: Path | None = None
    human_assignments: Path | None = None
    #: how λ is chosen (``None``: :data:`ragmeter.stats.ppi.DEFAULT_ESTIMATOR`)
    estimator: Estimator | None = None

    def _given(self) -> dict[str, Path]:
        kinds = {
            "qrels": self.human_qrels,
            "judgments": self.human_judgments,
            "nuggets": self.human_assignments,
        }
        return {kind: path for kind, path in kinds.items() if path is not None}

    @property
    def human_file(self) -> Path:
        """The file of the human labels."""
        given = self._given()
        if len(given) != 1:
            raise RagmeterError(
                "--ppi takes one kind of human labels: --human-qrels, --human-judgments or "
                f"--human-assignments ({len(given)} given)"
            )
        return next(iter(given.values()))

    @property
    def kind(self) -> str:
        """The kind of labels the human gave: ``qrels``, ``judgments`` (sub-question
        ratings) or ``nuggets`` (nugget assignments)."""
        self.human_file  # noqa: B018 - refuses none or several kinds
        return next(iter(self._given()))


@dataclass(frozen=True)
class PPIOutcome:
    """The evaluation under the LLM labels (what ``evaluate`` prints without ``--ppi``),
    under the merged labels on the labelled queries, and the estimates."""

    evaluation: Evaluation
    human: Evaluation
    estimates: PPIEvaluation


def _checked(request: EvaluateRequest, ppi: PPIRequest) -> Path:
    """The LLM labels' file, after refusing what cannot be estimated."""
    if ppi.kind == "qrels" and request.qrels is None:
        raise RagmeterError("--ppi needs the LLM labels: give them with --qrels LLM_QRELS")
    if ppi.kind == "judgments" and not request.inputs.coverage:
        raise RagmeterError(
            "--human-judgments corrects the LLM sub-question ratings: give them with "
            "--judgments LLM_JUDGMENTS"
        )
    if ppi.kind == "nuggets" and not request.inputs.assignments:
        raise RagmeterError(
            "--human-assignments corrects the LLM nugget assignments: give them with "
            "--nuggets NUGGETS --assignments LLM_ASSIGNMENTS"
        )
    if request.sweep_ks() is not None:
        raise RagmeterError("--ppi estimates one evaluation: give one --k, not a sweep")
    if not 0.0 < ppi.alpha < 1.0:
        raise RagmeterError(f"--alpha {ppi.alpha}: expected a level in (0, 1)")
    if ppi.lam is not None and not 0.0 <= ppi.lam <= 1.0:
        raise RagmeterError(f"--ppi-lambda {ppi.lam}: expected a value in [0, 1]")
    if ppi.lam is not None and ppi.estimator is not None:
        raise RagmeterError("--ppi-lambda fixes λ and --ppi-estimator chooses it: give one of them")
    if ppi.kind == "qrels":
        assert request.qrels is not None
        llm_file = request.qrels
    elif ppi.kind == "nuggets":
        llm_file = request.inputs.assignments[0]
    else:
        assert request.inputs.judgments is not None
        llm_file = request.inputs.judgments
    if ppi.labelled_queries is not None:  # its errors first: they are about that file
        from ragmeter.io.labelled import read_labelled_queries

        read_labelled_queries(ppi.labelled_queries)
    check_roles(llm_file, ppi.human_file, ppi.kind)
    return llm_file


#: the options of the LLM and the human labels, by kind of labels
_OPTIONS = {
    "qrels": ("--qrels", "--human-qrels"),
    "judgments": ("--judgments", "--human-judgments"),
    "nuggets": ("--assignments", "--human-assignments"),
}


def check_roles(llm_file: Path, human_file: Path, kind: str = "qrels") -> None:
    """Refuse label files whose sidecars say they play the other role: the human labels
    made (in part) by a judge, or the LLM labels made only by people — both at once are the
    two files swapped. Without a sidecar a file's makers are unknown and it is taken as
    given (the footer says so)."""
    from ragmeter.io.provenance import read_provenance

    llm_opt, human_opt = _OPTIONS[kind]
    llm, human = read_provenance(llm_file), read_provenance(human_file)
    judge_made_human = human is not None and human.has_llm
    people_made_llm = llm is not None and llm.default is not None and not llm.has_llm
    if judge_made_human and people_made_llm:
        assert llm is not None and human is not None
        raise RagmeterError(
            f"the labels look swapped: {llm_opt} {llm_file.name} (the LLM labels PPI corrects) "
            f"has a sidecar saying {llm.describe()}, {human_opt} {human_file.name} (the human "
            f"labels) one saying {human.describe()}; give the judge's labels with {llm_opt} "
            f"and people's with {human_opt}"
        )
    if judge_made_human:
        assert human is not None
        raise RagmeterError(
            f"{human_opt} {human_file.name}: its sidecar says {human.describe()}; PPI corrects "
            f"LLM labels with people's, so {human_opt} takes labels made by people only"
        )
    if people_made_llm:
        assert llm is not None
        raise RagmeterError(
            f"{llm_opt} {llm_file.name}: its sidecar says {llm.describe()} — no LLM label for "
            f"PPI to correct; give the judge's labels with {llm_opt} (or evaluate people's "
            "labels without --ppi)"
        )


def labels_description(llm_labels: Path, ppi: PPIRequest, labelled: Labelled) -> str:
    """Which labels the numbers rest on, as every view prints it; who made them where the
    label files have a provenance sidecar (:mod:`ragmeter.io.provenance`)."""
    from ragmeter.io.provenance import read_provenance

    text = (
        f"computed on LLM labels ({llm_labels.name}), corrected by human labels "
        f"({ppi.human_file.name}) on {len(labelled.query_ids)} queries"
    )
    made = [
        f"{path.name}: {provenance.describe()}"
        for path in (llm_labels, ppi.human_file)
        if (provenance := read_provenance(path)) is not None
    ]
    return "; ".join([text, *made])


def labelled_of(ppi: PPIRequest, human: Qrels | Judgments | NuggetAssignments) -> Labelled:
    """The labelled queries of ``ppi``: its ``--labelled-queries`` file's (with their
    inclusion probabilities), else those of the human labels."""
    from ragmeter.analysis.ppi import labelled_queries
    from ragmeter.io.labelled import read_labelled_queries, read_queue_strata

    if ppi.labelled_queries is None:
        return labelled_queries(human)
    listed, inclusion = read_labelled_queries(ppi.labelled_queries)
    return labelled_queries(human, listed, inclusion, read_queue_strata(ppi.labelled_queries))


def _evaluate_both(
    request: EvaluateRequest, ppi: PPIRequest
) -> tuple[Evaluation, Evaluation, Labelled, Path]:
    from ragmeter.analysis.ppi import merge_assignments, merge_judgments, merge_qrels
    from ragmeter.io.judgments import read_judgments
    from ragmeter.io.nuggets import read_assignments
    from ragmeter.io.readers import read_qrels
    from ragmeter.workflows.evaluate import evaluate_files

    llm_file = _checked(request, ppi)
    evaluation = evaluate_files(request).evaluation
    evaluated = {str(q) for run in evaluation.runs for q in run.query_ids}
    if ppi.kind == "qrels":
        llm_qrels, human_qrels = read_qrels(llm_file), read_qrels(ppi.human_file)
        labelled = labelled_of(ppi, human_qrels)
        _share(labelled, evaluated, ppi.human_file)
        merged = merge_qrels(llm_qrels, human_qrels, labelled.query_ids)
        human = evaluate_files(request, labels=merged).evaluation
    elif ppi.kind == "judgments":
        questions = request.inputs.questions
        llm_ratings = read_judgments(llm_file, questions=questions)
        human_ratings = read_judgments(ppi.human_file, questions=questions)
        labelled = labelled_of(ppi, human_ratings)
        _share(labelled, evaluated, ppi.human_file)
        ratings = merge_judgments(llm_ratings, human_ratings, labelled.query_ids)
        human = evaluate_files(request, overrides={"judgments": ratings}).evaluation
    else:
        read = request.inputs.read_nuggets()  # the nuggets, and the LLM's assignments to them
        nuggets, llm_assigned = read.get("nuggets"), read.get("nugget_assignments")
        assert nuggets is not None and llm_assigned is not None
        human_assigned = read_assignments(ppi.human_file, nuggets)
        labelled = labelled_of(ppi, human_assigned)
        _share(labelled, evaluated, ppi.human_file)
        assigned = merge_assignments(llm_assigned, human_assigned, labelled.query_ids)
        human = evaluate_files(request, overrides={"nugget_assignments": assigned}).evaluation
    return evaluation, human, labelled, llm_file


def _share(labelled: Labelled, evaluated: set[str], human_file: Path) -> None:
    if not any(q in evaluated for q in labelled.query_ids):
        raise RagmeterError(
            f"{human_file}: the human labels share no query with the evaluated queries "
            "of the runs (check that both use the same query ids)"
        )


def evaluate_ppi(request: EvaluateRequest, ppi: PPIRequest) -> PPIOutcome:
    """Evaluate the runs of ``request`` under the LLM and the merged labels, and estimate
    every measure's human-label mean."""
    from ragmeter.analysis.ppi import ppi_evaluation

    evaluation, human, labelled, llm_file = _evaluate_both(request, ppi)
    estimates = ppi_evaluation(
        evaluation,
        human,
        labelled,
        alpha=ppi.alpha,
        lam=ppi.lam,
        human_kinds=(ppi.kind,),
        labels=labels_description(llm_file, ppi, labelled),
        estimator=ppi.estimator,
    )
    return PPIOutcome(evaluation, human, estimates)


def compare_ppi(
    request: EvaluateRequest,
    ppi: PPIRequest,
    *,
    baseline: str | None = None,
    all_pairs: bool = False,
    correction: Correction = "holm",
) -> PPIComparison:
    """The PPI estimates of the paired differences of the runs of ``request``: each run
    against the baseline (a path, file name or run name; default the first), or every pair
    with ``all_pairs``; p-values corrected over the pairs of each measure."""
    from ragmeter.analysis.ppi import ppi_comparison
    from ragmeter.workflows.compare import baseline_index

    if len(request.runs) < 2:
        raise RagmeterError("compare needs at least two runs")
    evaluation, human, labelled, llm_file = _evaluate_both(request, ppi)
    names = [r.name for r in evaluation.runs]
    if all_pairs:
        pairs = [(names[j], names[i]) for i in range(len(names)) for j in range(i + 1, len(names))]
    else:
        base = names[baseline_index(baseline, names, list(request.runs))]
        pairs = [(n, base) for n in names if n != base]
    return ppi_comparison(
        evaluation,
        human,
        labelled,
        pairs,
        alpha=ppi.alpha,
        lam=ppi.lam,
        correction=correction,
        human_kinds=(ppi.kind,),
        labels=labels_description(llm_file, ppi, labelled),
        estimator=ppi.estimator,
    )
