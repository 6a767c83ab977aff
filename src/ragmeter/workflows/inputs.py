"""The side inputs of an evaluation as files, in one value: what ``evaluate``, ``compare`` and
``report`` take besides the runs, the qrels and the settings.

An :class:`InputFiles` is built once by the command line (``commands.options.input_files``),
checked by one set of rules (:meth:`InputFiles.problems`), handed whole through the workflows
and read, when the evaluation needs it, into the keywords of :func:`ragmeter.evaluate`
(:meth:`InputFiles.read`), which make one :class:`~ragmeter.evaluation.inputs.EvalInputs`.
A new kind of input is a field here and a line of :meth:`~InputFiles.read`; the requests and
workflows in between hand the value on unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import InputError, RagmeterError
from ragmeter.metrics.defaults import CITATION_MEASURES, NUGGET_MEASURES

if TYPE_CHECKING:
    from ragmeter.evaluation.inputs import Options
    from ragmeter.measures import Measure
    from ragmeter.workflows.spans import SpanFiles


@dataclass(frozen=True)
class InputFiles:
    """The side-input files of an evaluation and the options that go with them.

    * coverage (SPEC §4): ``judgments`` (sub-question judgments), their ``questions``, the
      rated ``answers`` (one file, or one per run), ``context_k`` (``"oracle"`` or a number,
      as given) and ``tau``;
    * ``corpus``: passage texts (``density``; token budgets counted by ``tokenizer``; the
      passages of ``gold_answers``; the documents of ``spans``);
    * ``utilities`` (``udcg@K``, under ``udcg_model``) and ``gold_answers``;
    * ``nuggets``, their ``assignments`` (one file or several) and the ``citation_support``
      of answer sentences;
    * ``spans`` and their ``chunks`` (``FILE`` or ``RUN=FILE`` each).
    """

    judgments: Path | None = None
    questions: Path | None = None
    corpus: Path | None = None
    answers: Sequence[Path] = ()
    context_k: str = "oracle"
    tau: int = 3
    tokenizer: str | None = None
    utilities: Path | None = None
    udcg_model: str | None = None
    gold_answers: Path | None = None
    nuggets: Path | None = None
    assignments: Sequence[Path] = ()
    citation_support: Path | None = None
    spans: Path | None = None
    chunks: Sequence[str] = ()

    def problems(self) -> list[tuple[str, str]]:
        """Each option given without the one it is read with, as ``(option, message)``:
        the rules, in one place (the command line says them its own way)."""
        out = []
        for given, flag in ((self.questions, "--questions"), (self.answers, "--answers")):
            if given and self.judgments is None:  # both only serve the coverage measures
                out.append((flag, f"{flag} is used with --judgments; give the judgments too"))
        if self.chunks and self.spans is None:
            out.append(("--chunks", "--chunks is read with --spans"))
        if self.assignments and self.nuggets is None:
            out.append(
                ("--assignments", "--assignments are read against the nuggets; give --nuggets too")
            )
        return out

    def check(self) -> InputFiles:
        """This value, or the first of its :meth:`problems` raised."""
        for _, message in self.problems()[:1]:
            raise RagmeterError(message)
        return self

    @property
    def coverage(self) -> bool:
        """Whether the coverage measures have their inputs (sub-question judgments)."""
        return self.judgments is not None

    @property
    def own_queries(self) -> bool:
        """Whether labels other than qrels say which queries are evaluated (judgments,
        nuggets and what goes with them, gold answers)."""
        nuggets = (self.nuggets, self.assignments, self.citation_support)
        return self.coverage or any(nuggets) or self.gold_answers is not None

    def span_files(self) -> SpanFiles | None:
        """``--spans`` and its ``--chunks`` (checked against ``corpus``), or ``None``."""
        if self.spans is None:
            return None
        from ragmeter.workflows.spans import SpanFiles  # only with spans (start-up time)

        return SpanFiles(self.spans, tuple(self.chunks), self.corpus)

    def default_measures(self) -> list[str]:
        """The nugget measures the labels call for: the four nugget scores with assignments,
        the citation summaries with support."""
        out = list(NUGGET_MEASURES) if self.assignments else []
        return out + (list(CITATION_MEASURES) if self.citation_support is not None else [])

    def read(
        self,
        names: Sequence[str | Measure],
        runs: Sequence[Path],
        run_names: Sequence[str] | None = None,
        *,
        sweep: bool = False,
    ) -> Options:
        """The keywords of :func:`ragmeter.evaluate` these files give, for the ``names``
        measures of the ``runs`` (named ``run_names`` when the span measures match chunk
        tables to runs; by file name else). A file is read only when given, a corpus only
        for a measure that needs it; ``sweep``: the cutoffs are swept, so coverage keeps its
        oracle context."""
        self.check()
        out: Options = {}
        out.update(self._measure_inputs(names))
        if self.judgments is not None:
            out.update(self.read_coverage(len(runs), sweep=sweep))
        out.update(self.read_nuggets(runs))
        spans = self.span_files()
        if spans is not None:
            paths = list(runs)
            named = (
                run_names
                if run_names is not None
                else distinct_run_names([p.name for p in paths], paths)
            )
            out["spans"] = spans.read(paths, named)
        return out

    def files(self) -> dict[str, Any]:
        """The input files a saved evaluation records (hashed)."""
        spans = self.span_files()
        return {
            "judgments": self.judgments,
            "questions": self.questions,
            "corpus": self.corpus,
            "answers": list(self.answers) or None,
            "utilities": self.utilities,
            "gold_answers": self.gold_answers,
            **(
                {
                    "nuggets": self.nuggets,
                    "assignments": list(self.assignments) or None,
                    "citation_support": self.citation_support,
                }
                if self.nuggets or self.assignments or self.citation_support
                else {}
            ),
            **(spans.files() if spans is not None else {}),
        }

    def _measure_inputs(self, names: Sequence[str | Measure]) -> Options:
        """Passage lengths for token budgets, utilities, gold answers (with the corpus their
        measures read): each read only when a measure needs it; a missing one is left for
        the measure to report."""
        from ragmeter.measures import parse_measures

        out: Options = {}
        measures = parse_measures(names)
        if self.corpus is not None and any(m.budget is not None for m in measures):
            from ragmeter.io.lengths import read_passage_lengths

            out["passage_lengths"] = read_passage_lengths(self.corpus, counter=self.tokenizer)
        if self.utilities is not None:
            from ragmeter.io.utilities import read_utilities

            out["utilities"] = read_utilities(self.utilities, model=self.udcg_model)
        if self.gold_answers is not None:
            from ragmeter.io.gold_answers import read_gold_answers

            out["gold_answers"] = read_gold_answers(self.gold_answers)
            if self.corpus is not None and any("gold_answers" in m.needs for m in measures):
                from ragmeter.io.judgments import read_corpus

                out["corpus"] = read_corpus(self.corpus)
        return out

    def read_coverage(self, n_runs: int, *, sweep: bool = False) -> Options:
        """The inputs of the coverage measures: the judgments, corpus and rated answers (one
        file, or one per run of ``n_runs``) read, ``context_k`` and ``tau`` checked."""
        from ragmeter.io.judgments import read_answers, read_corpus, read_judgments

        assert self.judgments is not None
        k = "oracle" if sweep else parse_context_k(self.context_k)
        if not 1 <= self.tau <= 5:
            raise InputError(f"--tau {self.tau}: expected 1..5")
        answer_sets: Any = None
        if self.answers:
            read = [read_answers(p) for p in self.answers]
            if len(read) == 1:
                answer_sets = read[0]
            elif len(read) == n_runs:
                answer_sets = read
            else:
                raise InputError(
                    f"{len(read)} --answers files for {n_runs} runs; give one, or one per run"
                )
        return {
            "judgments": read_judgments(self.judgments, questions=self.questions),
            "corpus": read_corpus(self.corpus) if self.corpus is not None else None,
            "answers": answer_sets,
            "context_k": k,  # type: ignore[typeddict-item]
            "tau": self.tau,
        }

    def read_nuggets(self, runs: Sequence[Path] = ()) -> Options:
        """The nuggets, their assignments (merged when several files) and the citation
        support, checked against the citations of the ``runs`` that are TREC RAG answer
        files (:func:`~ragmeter.io.nuggets.check_citation_support`)."""
        if self.nuggets is None and self.citation_support is None:
            return {}  # nothing to read: the nugget modules stay unimported
        from ragmeter.core.nuggets import NuggetAssignments
        from ragmeter.io.nuggets import (
            check_citation_support,
            rag_answers_in,
            read_assignments,
            read_citation_support,
            read_nuggets,
        )

        out: Options = {}
        if self.nuggets is not None:
            nuggets = read_nuggets(self.nuggets)
            out["nuggets"] = nuggets
            parts = [read_assignments(p, nuggets) for p in self.assignments]
            if parts:
                out["nugget_assignments"] = (
                    parts[0] if len(parts) == 1 else NuggetAssignments.merge(parts)
                )
        if self.citation_support is not None:
            support = read_citation_support(self.citation_support)
            for path in runs:
                answers = rag_answers_in(path)
                if answers is not None:
                    check_citation_support(support, answers)
            out["citation_support"] = support
        return out


def parse_context_k(context_k: str) -> int | str:
    """``"oracle"`` or a context size ≥ 1, from the text of ``--k``."""
    if context_k.strip().lower() == "oracle":
        return "oracle"
    try:
        k = int(context_k)
    except ValueError:
        raise InputError(f"--k {context_k!r}: expected a number or 'oracle'") from None
    if k < 1:
        raise InputError(f"--k {k}: expected ≥ 1 or 'oracle'")
    return k


def distinct_run_names(names: list[str], paths: list[Path]) -> list[str]:
    """``names`` (of the runs of ``paths``), each that collides replaced by its path (and
    its position, where paths collide too)."""
    out = []
    for i, (name, path) in enumerate(zip(names, paths, strict=True)):
        if names.count(name) > 1:
            name = str(path)
            if [str(p) for p in paths].count(name) > 1:
                name = f"{name}#{i + 1}"
        out.append(name)
    return out
