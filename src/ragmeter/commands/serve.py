"""``ragmeter serve``: the web app to label, review and export (needs the ``web`` extra).

``ragmeter serve [--queries Q.jsonl] [--corpus C.jsonl] [--run RUN ...] [--depth N]
[--qrels QRELS ...] [--compare-qrels QRELS ...] [--compare-judgments J.jsonl ...]
[--subquestions QS.jsonl] [--labels DB] [--queue QUEUE.jsonl] [--llm-qrels QRELS]
[--learned MODEL_DIR] [--export-dir DIR] [--store URL] [--host 127.0.0.1] [--port 8765]
[--token TOKEN] [--read-timeout S] [--ssl-certfile CERT.pem [--ssl-keyfile KEY.pem]]``

The passages to label are the top ``--depth`` of each run per query plus the passages the
``--qrels`` judge — or, with ``--queue`` (a labelling queue of ``ragmeter sample``), exactly
the queue's queries and passages, in its order (runs and qrels are then not pooled);
``--compare-qrels`` (e.g. an LLM judge's grades) and ``--compare-judgments`` (its
sub-question ratings) are only reviewed against. ``--llm-qrels`` (an LLM judge's grades of
every query) are reviewed against too, and are what the Calibration page sets the human
labels against: κ and α, and each run's prediction-powered estimates (with their
anytime-valid intervals as labels arrive); ``--learned`` (a model of ``ragmeter judge
learn``) adds the learned judge's agreement with the human labels there. Exports carry a
provenance sidecar naming the annotators (:mod:`ragmeter.web.export`). Labels go to a SQLite
database (``--labels``; by default one per folder of the first input, under
``labels/`` in ragmeter's data folder, :mod:`ragmeter.core.datadir`), exports to
``--export-dir`` (by default beside the database). Without any input the example collection
is served. Where labels and exports go is printed at start, with a warning when query or
passage texts are missing (the pages would show ids only).

The server listens on 127.0.0.1 unless ``--host`` says otherwise; on any other address it
requires an access token (``--token``, or one generated and printed with the URL).
``--ssl-certfile``/``--ssl-keyfile`` serve HTTPS; a client that does not send a whole request
within ``--read-timeout`` seconds is disconnected (:mod:`ragmeter.web.server`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.commands.options import PassageTexts, QueryTexts, fail
from ragmeter.errors import MissingInputError, RagmeterError

ReadTimeout = Annotated[
    float,
    typer.Option(
        "--read-timeout",
        help="Seconds a client has to send a whole request (slower: the connection is closed).",
    ),
]
SslCertfile = Annotated[
    Path | None,
    typer.Option(
        "--ssl-certfile",
        help="TLS certificate (PEM): serve HTTPS, so the token does not cross the network "
        "in clear.",
    ),
]
SslKeyfile = Annotated[
    Path | None,
    typer.Option("--ssl-keyfile", help="The certificate's private key (PEM, unencrypted)."),
]
MaxBody = Annotated[
    int,
    typer.Option("--max-body", min=1024, help="Largest JSON or form body in bytes (larger: 413)."),
]


QueueOpt = Annotated[
    Path | None,
    typer.Option(
        "--queue",
        help="Labelling queue of 'ragmeter sample': label exactly its queries and "
        "passages, in its order.",
    ),
]
LlmQrelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--llm-qrels",
        help="An LLM judge's qrels: the Calibration page gives their agreement with "
        "the human labels and each run's PPI estimates.",
    ),
]
LearnedOpt = Annotated[
    Path | None,
    typer.Option(
        "--learned",
        help="A learned judge's model directory ('ragmeter judge learn'): the Calibration "
        "page gives its agreement with the human labels as they come in.",
    ),
]
NuggetsOpt = Annotated[
    Path | None,
    typer.Option("--nuggets", help="Nuggets JSONL: assign them to answers and passages."),
]
NuggetAssignmentsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--nugget-assignments",
        help="Nugget assignments JSONL (e.g. an LLM judge's) to review against; the "
        "passages they assess are assigned too (repeatable).",
    ),
]
RagAnswersOpt = Annotated[
    Path | None,
    typer.Option("--rag-answers", help="TREC RAG answers JSONL whose answers are assigned."),
]


def serve(
    queries: QueryTexts = None,
    corpus: PassageTexts = None,
    run: Annotated[
        list[Path] | None,
        typer.Option("--run", help="Run whose top --depth per query is labelled (repeatable)."),
    ] = None,
    depth: Annotated[int, typer.Option("--depth", help="Passages per query from each run.")] = 10,
    qrels: Annotated[
        list[Path] | None,
        typer.Option(
            "--qrels", help="Existing qrels: their passages are labelled too (repeatable)."
        ),
    ] = None,
    compare_qrels: Annotated[
        list[Path] | None,
        typer.Option(
            "--compare-qrels",
            help="Qrels to review the labels against, e.g. an LLM judge's (repeatable).",
        ),
    ] = None,
    compare_judgments: Annotated[
        list[Path] | None,
        typer.Option(
            "--compare-judgments",
            help="Sub-question ratings to review against, e.g. an LLM judge's judgments "
            "JSONL (repeatable).",
        ),
    ] = None,
    subquestions: Annotated[
        Path | None,
        typer.Option(
            "--subquestions", help="Sub-questions JSONL {query_id, questions} to rate 0–5."
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Label database (SQLite; default: one per folder of the first input, in "
            "ragmeter's data folder; printed at start).",
        ),
    ] = None,
    export_dir: Annotated[
        Path | None,
        typer.Option("--export-dir", help="The only directory exports are written to."),
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", help="Evaluation store to browse (URL or path).")
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback by default).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8765,
    nuggets: NuggetsOpt = None,
    nugget_assignments: NuggetAssignmentsOpt = None,
    rag_answers: RagAnswersOpt = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help="Access token (required off loopback; generated and printed when not given).",
        ),
    ] = None,
    max_body: MaxBody = 64 << 10,
    queue: QueueOpt = None,
    llm_qrels: LlmQrelsOpt = None,
    learned: LearnedOpt = None,
    read_timeout: ReadTimeout = 30.0,
    ssl_certfile: SslCertfile = None,
    ssl_keyfile: SslKeyfile = None,
) -> None:
    """Label passages 1–5, sub-questions 0–5 and nugget assignments in the browser, review
    agreement, export."""
    try:
        import uvicorn  # noqa: F401  (the web extra: its absence is said here)

        from ragmeter.web import security
        from ragmeter.web.app import create_app
        from ragmeter.web.config import build_config
        from ragmeter.web.security import is_loopback, new_token
        from ragmeter.web.server import server_options
    except ImportError as exc:
        from ragmeter.errors import install_hint

        needs = f"ragmeter serve needs the web extra: {install_hint('web')}"
        fail(MissingInputError(f"{needs} ({exc})"))
    if token is None and not is_loopback(host):
        token = new_token()
    if token is not None and len(token) < 16:
        fail(ValueError("--token must be at least 16 characters"))
    try:
        tls = {"ssl_certfile": ssl_certfile, "ssl_keyfile": ssl_keyfile}
        options = server_options(host=host, port=port, read_timeout=read_timeout, **tls)
        config = build_config(
            queries=queries,
            corpus=corpus,
            runs=run,
            qrels=qrels,
            compare_qrels=compare_qrels,
            compare_judgments=compare_judgments,
            subquestions=subquestions,
            depth=depth,
            nuggets=nuggets,
            nugget_assignments=nugget_assignments,
            rag_answers=rag_answers,
            labels=labels,
            export_dir=export_dir,
            store=store,
            token=token,
            queue=queue,
            llm_qrels=llm_qrels,
            learned=learned,
        )
    except RagmeterError as exc:
        fail(exc)
    config.max_body = max_body
    if token is None:  # loopback only: refuse Host names a rebinding page would send
        config.allowed_hosts = security.LOOPBACK_HOSTS | {security.host_name(host)}
    _start(create_app(config), options, token, tls=ssl_certfile is not None)


def _start(app: Any, options: dict[str, Any], token: str | None, *, tls: bool) -> None:
    """Bind the port, say what is served and where, serve. The port is taken before the
    address is printed: one held by another server is one clear error, not an address that
    leads to that server."""
    from ragmeter.web.server import listening_socket, serve_app

    host, port = options["host"], options["port"]
    try:
        sock = listening_socket(host, port)
    except RagmeterError as exc:
        fail(exc)
    _announce(app.state.config, host, port, token, tls=tls)
    serve_app(app, sock, options)


def _announce(config: Any, host: str, port: int, token: str | None, *, tls: bool) -> None:
    """What is served, where the labels go, what the pages cannot show, and the address."""
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if tls else "http"
    url = f"{scheme}://{shown}:{port}/" + (f"?token={token}" if token else "")
    coll = config.collection
    nuggets = f", nuggets of {len(coll.nugget_targets)} queries" if coll.nugget_targets else ""
    typer.echo(
        f"ragmeter serve: {len(coll.query_ids)} queries, "
        f"{sum(len(p) for p in coll.pools.values())} passages to label{nuggets}; "
        f"labels in {config.labels}; exports to {config.export_dir}",
        err=True,
    )
    for problem in coll.missing_texts():
        typer.echo(f"warning: {problem}", err=True)
    typer.echo(f"open {url}", err=True)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
