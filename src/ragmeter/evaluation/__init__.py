"""The one evaluation seam: every view of a number computes it here.

* :func:`evaluate` — runs × measures → :class:`Evaluation` (the public entry);
* :class:`EvalInputs` + :func:`prepare` — the labels, side inputs and options of an
  evaluation, and one alignment of a run joined with what the requested families declare
  they need; :func:`evaluate_inputs` evaluates runs with given inputs;
* :func:`sweep` / :func:`sweep_evaluation` — every measure at every K in one pass per run;
* :func:`evaluate_block` / :class:`BlockMerger` / :func:`evaluate_blocks` — a run evaluated
  one block of queries at a time (streaming, partitions), merged into the whole run's result;
* :func:`evaluate_samples` — answer samples × per-sample families → :class:`Evaluation`;
* :class:`Evaluation` / :class:`RunResult` — per-query values, aggregates and warnings; each
  run result keeps the run and inputs it came from, so a sweep, a report, a comparison or a
  diagnosis of it uses the same ones.

The cutoff rule, for every family: ``m@K`` is ``m`` on the top K of each ranking (for the
coverage family, K is the context); without ``@K`` each family uses its own default, the same
in every view (see :class:`ragmeter.measures.Family`).
"""

from ragmeter.evaluation.api import evaluate
from ragmeter.evaluation.blocks import (
    BlockMerger,
    BlockValues,
    RepeatedQueryError,
    block_support,
    evaluate_block,
    evaluate_blocks,
    merge_blocks,
)
from ragmeter.evaluation.engine import (
    Prepared,
    compute,
    evaluate_inputs,
    evaluation_options,
    prepare,
    resolve_measures,
    with_coverage,
)
from ragmeter.evaluation.inputs import EvalInputs
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.evaluation.samples import evaluate_samples
from ragmeter.evaluation.sweep import Sweep, expand, parse_ks, sweep, sweep_evaluation, sweepable

__all__ = [
    "BlockMerger",
    "BlockValues",
    "EvalInputs",
    "Evaluation",
    "Prepared",
    "RepeatedQueryError",
    "RunResult",
    "Sweep",
    "block_support",
    "compute",
    "evaluate",
    "evaluate_block",
    "evaluate_blocks",
    "evaluate_inputs",
    "evaluate_samples",
    "evaluation_options",
    "expand",
    "merge_blocks",
    "parse_ks",
    "prepare",
    "resolve_measures",
    "sweep",
    "sweep_evaluation",
    "sweepable",
    "with_coverage",
]
