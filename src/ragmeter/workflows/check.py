"""The regression gate on files: what ``ragmeter check`` does between parsing and printing.

The run is evaluated with the rules' measures; the baseline is a run file (evaluated the same
way, on the same qrels) or a saved evaluation of the store (``REF`` or ``REF:RUN`` as in
``ragmeter history``: an id, ``#12``, or the latest evaluation saved under a name), whose
per-query values are read back, not recomputed. The rules are checked by
:func:`ragmeter.analysis.gate.check_evaluation`.

With a calibration (``--calibration cal.json``), :func:`check_calibration` first checks that
the qrels' LLM labels were made by the calibrated judge and that the calibration reaches
``--min-kappa`` / ``--min-tau`` (:func:`ragmeter.analysis.calibration.gate`).

With ``--sequential --history STORE`` the check is one look of a history of checks against one
fixed baseline (:mod:`ragmeter.analysis.sequential_gate`): the store records the gate (the
baseline's per-query values, the qrels, the rules, α, the settings) at the first look and
refuses a check of another gate; each new run is the next look and spends α_s of α, a run
checked before re-reads its look (:mod:`ragmeter.store.check_history`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.analysis.calibration import GateVerdict, LabelsDescription
from ragmeter.analysis.gate import GateResult, Rule, check_evaluation, parse_rules
from ragmeter.errors import RagmeterError, StoreError
from ragmeter.workflows.evaluate import EvaluationSettings

if TYPE_CHECKING:
    from ragmeter.core.data import Qrels
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.paired import TestName


@dataclass(frozen=True)
class CheckRequest:
    """What ``ragmeter check`` was asked: a run file, its qrels, the baseline (a run file or
    a stored evaluation's REF), the rules as written and the paired test's settings."""

    run: Path
    qrels: Path
    baseline: str
    rules: Sequence[str]
    settings: EvaluationSettings = field(default_factory=EvaluationSettings)
    store: str | None = None
    test: TestName = "randomization"
    alpha: float = 0.05
    permutations: int = 10_000
    seed: int = 0
    calibration: Path | None = None
    min_kappa: float | None = None
    min_tau: float | None = None
    #: what the qrels' labels are (:func:`ragmeter.analysis.calibration.label_description`),
    #: carried into the result's JSON
    described_labels: LabelsDescription | None = None
    #: the store recording the looks of a sequential check (``--sequential --history``);
    #: ``None``: the plain check, at level α at one look
    history: str | None = None


def check_calibration(request: CheckRequest) -> GateVerdict | None:
    """The calibration gate of ``request`` (None without ``--calibration``); raises
    :class:`~ragmeter.analysis.calibration.CalibrationError` for a calibration that cannot
    be used (edited by hand, from a newer ragmeter)."""
    from ragmeter.analysis.calibration import gate, read_calibration
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.readers import read_qrels

    if request.calibration is None:
        if request.min_kappa is not None or request.min_tau is not None:
            raise RagmeterError("--min-kappa and --min-tau need --calibration")
        return None
    calibration = read_calibration(request.calibration)
    qrels = read_qrels(request.qrels)
    pairs = [(q, d) for q, docs in qrels.to_dict().items() for d, g in docs.items() if g >= 0]
    return gate(
        calibration,
        read_provenance(request.qrels),
        pairs,
        qrels_name=request.qrels.name,
        min_kappa=request.min_kappa,
        min_tau=request.min_tau,
    )


def check_files(request: CheckRequest) -> GateResult:
    """Read the run, its qrels and the baseline; check the rules."""
    from ragmeter.evaluation import evaluate
    from ragmeter.io.readers import read_qrels, read_run

    rules = parse_rules(request.rules)
    if not 0.0 < request.alpha < 1.0:
        raise RagmeterError(f"--alpha must be in (0, 1), got {request.alpha}")
    measures = list(dict.fromkeys(r.measure for r in rules))
    run = read_run(request.run)
    qrels = read_qrels(request.qrels)
    options = request.settings.options()
    base_path = Path(request.baseline)
    if base_path.is_file():
        base = read_run(base_path)
        if base.name == run.name:
            base = replace(base, name=f"baseline {base.name}")
        evaluation = evaluate([base, run], qrels, measures, **options)
    else:
        evaluated = evaluate(run, qrels, measures, **options)
        evaluation = _with_stored_baseline(request, evaluated, qrels)
    if request.history is not None:
        result = check_sequential(request, evaluation, rules)
        described = request.described_labels
        return result if described is None else replace(result, labels=described.to_json())
    result = check_evaluation(
        evaluation,
        rules,
        test=request.test,
        alpha=request.alpha,
        permutations=request.permutations,
        seed=request.seed,
    )
    described = request.described_labels
    return result if described is None else replace(result, labels=described.to_json())


def _with_stored_baseline(request: CheckRequest, evaluated: Evaluation, qrels: Qrels) -> Evaluation:
    """The stored baseline's values on the rules' measures beside the evaluated run."""
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.store import default_store_exists, open_store
    from ragmeter.store.provenance import content_sha256, file_sha256
    from ragmeter.workflows.history import changed_settings, pick

    if request.store is None and not default_store_exists():
        # opening the default store would create an empty one: say what is missing instead
        raise RagmeterError(
            f"--baseline {request.baseline}: no such run file, and no evaluation store to "
            "find a saved evaluation in (give --store, or save one with --save)"
        )
    run = evaluated.run
    try:
        with open_store(request.store) as store:
            stored, base = pick(store, request.baseline, None)
    except StoreError as exc:
        raise StoreError(
            f"--baseline {request.baseline} is no run file; in the store: {exc}"
        ) from None
    columns = []
    for m in run.measures:
        try:
            columns.append(base._index(m))
        except KeyError:
            have = ", ".join(str(x) for x in base.measures)
            raise RagmeterError(
                f"the baseline {stored.record.label} was saved without {m} (it has {have}); "
                f"evaluate the baseline again with -m {m} and --save"
            ) from None
    label = f"#{stored.id} {base.name}"
    base = replace(base, name=label, measures=run.measures, values=base.values[:, columns])
    notes = list(evaluated.warnings)
    saved_hash = stored.record.qrels_hash
    if saved_hash and saved_hash not in (file_sha256(request.qrels), content_sha256(qrels)):
        notes.append(
            f"the baseline {stored.record.label} was judged against other qrels (another sha256)"
        )
    changed = changed_settings(stored.record.parameters, request.settings.saved())
    if changed:
        notes.append("the baseline was evaluated with other settings: " + ", ".join(changed))
    return Evaluation((base, run), run.measures, tuple(notes))


def check_sequential(
    request: CheckRequest, evaluation: Evaluation, rules: Sequence[Rule]
) -> GateResult:
    """Check ``rules`` on ``evaluation`` (the baseline first) as the next look of the history
    in ``request.history``, and record the look (the module docs)."""
    from ragmeter.analysis.sequential_gate import (
        Look,
        check_look,
        per_query_values,
        values_digest,
    )
    from ragmeter.store import open_store
    from ragmeter.store.check_history import (
        GateIdentity,
        LookRow,
        add_look,
        read_identity,
        read_looks,
        start_history,
    )
    from ragmeter.store.provenance import file_sha256, git_state

    assert request.history is not None
    base, run = evaluation.runs
    measures = list(dict.fromkeys(r.measure for r in rules))
    base_values = per_query_values(base, measures)
    identity = GateIdentity(
        baseline=request.baseline,
        baseline_sha256=values_digest(base_values),
        qrels_sha256=file_sha256(request.qrels),
        rules=tuple(r.text for r in rules),
        alpha=request.alpha,
        settings=request.settings.saved(),
    )
    run_hash = file_sha256(request.run)
    git = git_state()
    with open_store(request.history) as store, store.transaction() as conn:
        held = read_identity(conn)
        if held is None:
            start_history(conn, identity, base_values)
        elif differs := identity.differences(held):
            raise RagmeterError(
                f"--history {request.history}: its looks are checks of another gate; "
                f"what differs: {'; '.join(differs)}. A history follows one baseline, "
                "qrels, rules and α: give another --history to start a new one"
            )
        looks = read_looks(conn)
        earlier = next((x for x in looks if x.run_sha256 == run_hash), None)
        number = earlier.look if earlier else max((x.look for x in looks), default=0) + 1
        failed = tuple(x.look for x in looks if x.failed and x.look < number)
        look = Look(number, request.alpha, store.url, earlier is not None, failed)
        result = check_look(evaluation, rules, look)
        if earlier is None:
            row = LookRow(
                number,
                run.name,
                run_hash,
                git.commit if git is not None else None,
                result.failed,
                [o.to_dict() for o in result.outcomes],
            )
            add_look(conn, row, per_query_values(run, measures))
    return result
