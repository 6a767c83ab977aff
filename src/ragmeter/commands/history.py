"""``ragmeter history``: the evaluations saved with ``--save``, listed, shown and compared.

``ragmeter history [--store URL] [--limit N] [--name NAME] [--format table|json]`` lists them,
newest first; ``ragmeter history show REF`` prints one; ``ragmeter history compare BASE NEW``
compares a run of two of them ("this week's hybrid vs last week's") with the paired tests of
``ragmeter compare``, on the queries both define (:mod:`ragmeter.workflows.history`);
``ragmeter history delete REF`` removes one.

A REF is an id (``12`` or ``#12``) or a name (the latest evaluation saved with that
``--name``); ``REF:RUN`` picks a run of an evaluation that holds several.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.commands.options import (
    Alpha,
    Confidence,
    FormatChoice,
    Measures,
    Output,
    PairedTests,
    PerQuery,
    StoreUrl,
    TableOrJson,
    compare_settings,
    fail,
    option_groups,
)
from ragmeter.commands.output import CompareFormat
from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.store import EvaluationRecord, StoredEvaluation
    from ragmeter.store.sql import Store

#: means shown per run in the listing
LISTED_MEANS = 3


history_app = typer.Typer(
    help="List, show and compare the evaluations saved with --save.",
    no_args_is_help=False,
    invoke_without_command=True,
)

EvaluationRef = Annotated[str, typer.Argument(help="Id (12, #12) or name of an evaluation.")]


# -- listing --------------------------------------------------------------------------------


@history_app.callback()
def history_command(
    ctx: typer.Context,
    store: StoreUrl = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Show the N latest.")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Only the evaluations saved with this name.")
    ] = None,
    fmt: TableOrJson = FormatChoice.table,
) -> None:
    """List the saved evaluations, newest first (id, name, time, git commit, runs, means)."""
    ctx.obj = {"store": store}
    if ctx.invoked_subcommand is not None:
        return
    missing = _missing_store(store)
    if missing is not None:  # listing never creates a store
        if fmt is FormatChoice.json:
            sys.stdout.write(json.dumps({"store": missing, "evaluations": []}, indent=2) + "\n")
        else:
            typer.echo(
                f"no saved evaluations: no store at {missing} yet (evaluate --save creates it)"
            )
        return
    with _opened(store) as st:
        try:
            records = st.list_evaluations(limit=limit, name=name)
        except RagmeterError as exc:
            fail(exc)
        if fmt is FormatChoice.json:
            payload = {"store": st.url, "evaluations": [r.to_dict() for r in records]}
            sys.stdout.write(json.dumps(payload, indent=2) + "\n")
            return
        _print_list(records, st.url)


def _print_list(records: list[EvaluationRecord], url: str) -> None:
    from rich import box
    from rich.table import Table

    from ragmeter.report.tables import fit, table_console

    console = table_console(wide=160)
    if not records:
        console.print(f"no saved evaluations in {url} (save one with evaluate --save)")
        return
    table = Table(
        title=f"ragmeter history: {url}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for header in ("id", "name", "saved (UTC)", "commit", "command", "run", "queries", "means"):
        table.add_column(header, no_wrap=header != "means", justify=_justify(header))
    for record in records:
        for i, run in enumerate(record.runs or ()):
            first = i == 0
            shown = list(run.means.items())[:LISTED_MEANS]
            means = "  ".join(f"{m} {_num(v)}" for m, v in shown)
            if len(run.means) > LISTED_MEANS:
                means += f"  (+{len(run.means) - LISTED_MEANS})"
            table.add_row(
                str(record.id) if first else "",
                (record.name or "") if first else "",
                _time(record) if first else "",
                _commit(record) if first else "",
                record.command if first else "",
                run.name,
                str(run.n_queries),
                means,
            )
    console.print(fit(table, keep=(0, 5)))  # the evaluation's id and the run


def _justify(header: str) -> Any:
    return "right" if header in ("id", "queries") else "left"


def _num(value: float | None) -> str:
    return "NA" if value is None else f"{value:.4f}"


def _time(record: EvaluationRecord) -> str:
    return record.created_at.strftime("%Y-%m-%d %H:%M")


def _commit(record: EvaluationRecord) -> str:
    if record.git_commit is None:
        return ""
    return record.git_commit[:10] + ("+dirty" if record.git_dirty else "")


# -- one evaluation -------------------------------------------------------------------------


@history_app.command("show")
def show_command(
    ctx: typer.Context,
    reference: EvaluationRef,
    store: StoreUrl = None,
    per_query: PerQuery = False,
    fmt: TableOrJson = FormatChoice.table,
) -> None:
    """Show one saved evaluation: its provenance, parameters and means."""
    from ragmeter.report import render

    with _opened(_store_of(ctx, store)) as st:
        try:
            stored = st.load_evaluation(st.resolve(reference))
        except RagmeterError as exc:
            fail(exc)
    if fmt is FormatChoice.json:
        payload = stored.to_dict(per_query=per_query)
        payload["metrics"] = stored.evaluation.to_dict()["runs"]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    _print_header(stored)
    render.print_table(stored.evaluation, per_query=per_query)


def _print_header(stored: StoredEvaluation) -> None:
    from ragmeter.analysis.calibration import recorded_label_lines

    r = stored.record
    lines = [
        f"evaluation {r.label}, saved {r.created_at.isoformat(timespec='seconds')} "
        f"by ragmeter {r.ragmeter_version or '?'} ({r.command})",
        f"git commit: {_commit(r) or 'none'}",
        f"qrels: {r.qrels_hash or 'unknown'}",
    ]
    lines += [f"run {run.name}: {run.content_hash or 'unknown'}" for run in r.runs]
    lines += [f"labels: {line}" for line in recorded_label_lines(r.labels)]
    if r.parameters:
        lines.append("parameters: " + json.dumps(r.parameters, sort_keys=True))
    typer.echo("\n".join(lines))


@history_app.command("delete")
def delete_command(
    ctx: typer.Context,
    reference: EvaluationRef,
    store: StoreUrl = None,
) -> None:
    """Delete a saved evaluation."""
    with _opened(_store_of(ctx, store)) as st:
        try:
            evaluation_id = st.resolve(reference)
            st.delete_evaluation(evaluation_id)
        except RagmeterError as exc:
            fail(exc)
    typer.echo(f"deleted evaluation #{evaluation_id}", err=True)


# -- comparing two evaluations --------------------------------------------------------------


@history_app.command("compare")
@option_groups
def compare_command(
    ctx: typer.Context,
    *,
    baseline: Annotated[str, typer.Argument(help="The earlier evaluation: id, name, or REF:RUN.")],
    candidate: Annotated[str, typer.Argument(help="The later evaluation: id, name, or REF:RUN.")],
    run: Annotated[
        str | None,
        typer.Option("--run", help="The run to compare when the evaluations hold several."),
    ] = None,
    measure: Measures = None,
    store: StoreUrl = None,
    tests: PairedTests,
    alpha: Alpha = 0.05,
    confidence: Confidence = 0.95,
    fmt: Annotated[CompareFormat, typer.Option("--format", "-f")] = CompareFormat.table,
    output: Output = None,
) -> None:
    """Compare a run of two saved evaluations: means side by side, the difference with its
    bootstrap CI, and a paired test on the queries both define."""
    from ragmeter.commands.labels import tell
    from ragmeter.commands.output import emit_comparison
    from ragmeter.workflows.history import compare_saved, saved_label_lines

    settings = compare_settings(tests, alpha=alpha, confidence=confidence)
    with _opened(_store_of(ctx, store)) as st:
        try:
            comparison = compare_saved(
                st, baseline, candidate, run=run, measures=measure, settings=settings
            )
        except KeyError as exc:  # str(KeyError) quotes its message; print it plainly
            fail(RagmeterError(str(exc.args[0]) if exc.args else "unknown key"))
        except (RagmeterError, ValueError) as exc:
            fail(exc)
    emit_comparison(comparison, fmt, output)
    tell(saved_label_lines(comparison))


# -- plumbing -------------------------------------------------------------------------------


def _store_of(ctx: typer.Context, store: str | None) -> str | None:
    """The subcommand's --store, else the one given before it (ragmeter history --store X)."""
    if store is not None:
        return store
    obj = ctx.obj if isinstance(ctx.obj, dict) else {}
    value = obj.get("store")
    return value if isinstance(value, str) else None


def _missing_store(store: str | None) -> str | None:
    """The URL of the SQLite store ``store`` (default: the default store) when its file does
    not exist, else None."""
    from ragmeter.store import default_store_url, resolve_url, store_exists

    try:
        url = resolve_url(store) if store is not None else default_store_url()
    except RagmeterError as exc:
        fail(exc)
    return None if store_exists(url) else url


class _opened:
    """``with _opened(url) as store``: open the store or exit with a clear error."""

    def __init__(self, url: str | None) -> None:
        self._url = url
        self._store: Store | None = None

    def __enter__(self) -> Store:
        from ragmeter.store import open_store

        try:
            self._store = open_store(self._url, create=False)
        except RagmeterError as exc:
            fail(exc)
        return self._store

    def __exit__(self, *exc: object) -> None:
        if self._store is not None:
            self._store.close()


def register(app: typer.Typer) -> None:
    """Add ``ragmeter history`` to the command line."""
    app.add_typer(history_app, name="history")
