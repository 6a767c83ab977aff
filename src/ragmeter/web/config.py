"""The web app's configuration from the options of ``ragmeter serve``: the collection to
label read from its files (or the example collection when none are given), and where labels
and exports go."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import MissingInputError, RagmeterError

if TYPE_CHECKING:
    from ragmeter.web.state import WebConfig

LABELS_NAME = "ragmeter-labels.db"


def data_dir() -> Path:
    """Where ragmeter keeps its own files: ``$XDG_DATA_HOME/ragmeter`` or
    ``~/.local/share/ragmeter``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ragmeter"


def example_inputs() -> dict[str, Path] | None:
    """The example collection's files (``ragmeter.data``), or ``None`` before it exists."""
    import importlib

    try:
        example_path = importlib.import_module("ragmeter.data").example_path
    except (ImportError, AttributeError):
        return None
    names = {
        "queries": "queries.jsonl",
        "corpus": "corpus.jsonl",
        "qrels": "qrels.txt",
        "subquestions": "subquestions.jsonl",
    }
    found: dict[str, Path] = {}
    for key, name in names.items():
        try:
            found[key] = Path(example_path(name))
        except RagmeterError:
            continue  # a partial installation: serve what is there
    return found


def build_config(
    *,
    queries: Path | None = None,
    corpus: Path | None = None,
    runs: list[Path] | None = None,
    qrels: list[Path] | None = None,
    compare_qrels: list[Path] | None = None,
    compare_judgments: list[Path] | None = None,
    subquestions: Path | None = None,
    depth: int = 10,
    labels: Path | None = None,
    export_dir: Path | None = None,
    store: str | None = None,
    token: str | None = None,
) -> WebConfig:
    """The app's configuration from the command's options (reads every input now, so that a
    bad file is reported before the server starts)."""
    from ragmeter.web.collection import load_collection
    from ragmeter.web.state import WebConfig

    runs, qrels = list(runs or []), list(qrels or [])
    title = "ragmeter"
    default_home: Path | None = None
    if not runs and not qrels:
        example = example_inputs()
        if not example or "qrels" not in example:
            raise MissingInputError(
                "nothing to label: give --run RUN (pools of the top --depth) and/or --qrels"
            )
        queries = queries or example.get("queries")
        corpus = corpus or example.get("corpus")
        subquestions = subquestions or example.get("subquestions")
        qrels = [example["qrels"]]
        default_home = data_dir()
        title = "ragmeter · example collection"
    collection = load_collection(
        queries=queries,
        corpus=corpus,
        runs=runs,
        qrels=qrels,
        compare_qrels=compare_qrels or [],
        compare_judgments=compare_judgments or [],
        subquestions=subquestions,
        depth=depth,
    )
    if labels is None:
        home = default_home or next(p for p in [*runs, *qrels] if p is not None).resolve().parent
        labels = home / (LABELS_NAME if default_home is None else "labels.db")
    if export_dir is None:
        export_dir = labels.parent / f"{labels.stem}-exports"
    return WebConfig(
        collection=collection,
        labels=labels,
        export_dir=export_dir,
        token=token,
        store_url=store,
        title=title,
    )
