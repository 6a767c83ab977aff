"""The web app's configuration from the options of ``ragmeter serve``: the collection to
label read from its files (or the example collection when none are given), and where labels
and exports go."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import MissingInputError, RagmeterError

if TYPE_CHECKING:
    from ragmeter.web.state import WebConfig

#: the label database of earlier versions, beside the first input: still used where it exists
LABELS_NAME = "ragmeter-labels.db"


def data_dir() -> Path:
    """ragmeter's data folder (:func:`ragmeter.core.datadir.data_dir`)."""
    from ragmeter.core.datadir import data_dir as folder

    return folder()


def default_labels(first_input: Path | None) -> Path:
    """The label database when ``--labels`` is not given: ``labels/`` in ragmeter's data
    folder, one database per folder of the first input (``example.db`` for the example
    collection), so that serving the same files again finds their labels. A database that an
    earlier version wrote (``ragmeter-labels.db`` beside the first input, ``labels.db`` in the
    data folder for the example) is used where it exists."""
    from hashlib import sha256

    if first_input is None:
        old = data_dir() / "labels.db"
        return old if old.is_file() else data_dir() / "labels" / "example.db"
    folder = first_input.resolve().parent
    old = folder / LABELS_NAME
    if old.is_file():
        return old
    digest = sha256(str(folder).encode("utf-8")).hexdigest()[:12]
    return data_dir() / "labels" / f"{folder.name or 'root'}-{digest}.db"


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
        "nuggets": "nuggets.jsonl",
        "nugget_assignments": "nugget_assignments.jsonl",
        "rag_answers": "rag_answers.jsonl",
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
    nuggets: Path | None = None,
    nugget_assignments: list[Path] | None = None,
    rag_answers: Path | None = None,
    labels: Path | None = None,
    export_dir: Path | None = None,
    store: str | None = None,
    token: str | None = None,
    queue: Path | None = None,
    llm_qrels: Path | None = None,
    learned: Path | None = None,
) -> WebConfig:
    """The app's configuration from the command's options (reads every input now, so that a
    bad file is reported before the server starts)."""
    from ragmeter.web.collection import load_collection
    from ragmeter.web.state import WebConfig

    runs, qrels = list(runs or []), list(qrels or [])
    title = "ragmeter"
    example_served = False
    if queue is not None:
        title = f"ragmeter · queue {queue.name}"
    elif not runs and not qrels:
        example = example_inputs()
        if not example or "qrels" not in example:
            raise MissingInputError(
                "nothing to label: give --run RUN (pools of the top --depth) and/or --qrels"
            )
        queries = queries or example.get("queries")
        corpus = corpus or example.get("corpus")
        subquestions = subquestions or example.get("subquestions")
        if nuggets is None and "nuggets" in example:
            nuggets = example["nuggets"]
            nugget_assignments = nugget_assignments or [
                example[k] for k in ("nugget_assignments",) if k in example
            ]
            rag_answers = rag_answers or example.get("rag_answers")
        qrels = [example["qrels"]]
        example_served = True
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
        nuggets=nuggets,
        nugget_assignments=nugget_assignments or [],
        rag_answers=rag_answers,
        queue=queue,
        llm_qrels=llm_qrels,
    )
    grader = None
    if learned is not None:
        from ragmeter.web.calibration import LearnedGrader

        grader = LearnedGrader.load(learned)
    if labels is None:
        labels = default_labels(None if example_served else [*runs, *qrels, queue][0])
    if export_dir is None:
        export_dir = labels.parent / f"{labels.stem}-exports"
    return WebConfig(
        collection=collection,
        labels=labels,
        export_dir=export_dir,
        token=token,
        store_url=store,
        title=title,
        learned=grader,
    )
