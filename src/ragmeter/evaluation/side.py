"""Side inputs joined onto an alignment: passage lengths (token budgets), utilities, nuggets,
span labels with the run's chunk table.

The evaluation calls :func:`with_side_inputs` once per run, after alignment; the arrays land
in :attr:`Aligned.side`, indexed like the aligned items / judgments, so a measure reads them
without another join. Nothing is joined unless a requested measure declares it needs it
(:attr:`Measure.needs <ragmeter.measures.Measure.needs>`: ``lengths`` for a token budget,
``utilities`` in its family's ``needs``; ``nuggets`` / ``citations``: the nugget view of
:func:`ragmeter.core.nuggets.nugget_view`; ``spans``: the span view of
:func:`ragmeter.core.spans.span_view`); no family is named here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter import _accel
from ragmeter.core.align import Aligned
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError, MissingInputError
from ragmeter.measures import Measure

if TYPE_CHECKING:
    from ragmeter.core.gold_answers import GoldAnswers
    from ragmeter.core.judgments import Corpus
    from ragmeter.core.nuggets import CitationSupport, NuggetAssignments, Nuggets
    from ragmeter.core.spans import SpanInputs
    from ragmeter.io.lengths import PassageLengths
    from ragmeter.io.utilities import Utilities


def side_options(measures: Sequence[Measure]) -> dict[str, Any]:
    """Evaluation-wide options: ``head_width`` = the largest cutoff of the families with
    ``shared_head`` (they gather each query's first ``head_width`` items once and read every
    cutoff from that, see :mod:`ragmeter.metrics.setwise`)."""
    widths = [
        int(m.k)
        for m in measures
        if m.spec.shared_head and isinstance(m.k, int) and m.budget is None
    ]
    return {"head_width": max(widths)} if widths else {}


def with_side_inputs(
    aligned: Aligned,
    run: Run,
    qrels: Qrels,
    measures: Sequence[Measure],
    *,
    lengths: PassageLengths | None = None,
    utilities: Utilities | None = None,
    nuggets: Nuggets | None = None,
    nugget_assignments: NuggetAssignments | None = None,
    citation_support: CitationSupport | None = None,
    spans: SpanInputs | None = None,
    gold_answers: GoldAnswers | None = None,
    corpus: Corpus | None = None,
) -> Aligned:
    """``aligned`` with the side arrays the ``measures`` need.

    Token budgets (a measure with ``budget``) need a length for every retrieved item (within
    the evaluated depth) and every judgment of the evaluated queries: a doc without one is an
    error naming it. A family needing ``utilities`` gets the utility of each retrieved item
    (NaN where the utilities have none: the family decides whether that is an error, see
    :mod:`ragmeter.metrics.udcg`). A family that ``reads_run`` (a measure defined through
    :func:`ragmeter.define_measure`) gets the retrieved doc ids and their scores. A family
    needing ``gold_answers`` gets whether each retrieved passage contains a gold answer
    (:mod:`ragmeter.metrics.containment`), its text from the ``corpus``, else the run's own.
    """
    side: dict[str, Any] = dict(aligned.side)
    if any("gold_answers" in m.needs for m in measures) and gold_answers is not None:
        side["answer_hits"] = _answer_hits(aligned, run, gold_answers, corpus)
        aligned = replace(aligned, side=side)
    if any({"nuggets", "citations"} & set(m.needs) for m in measures):
        from ragmeter.core.nuggets import nugget_view, split_items

        docs = run.doc_ids.take(_accel.indices(aligned.run_rows)).to_pylist()
        side["nuggets"] = nugget_view(
            run.name,
            [str(q) for q in aligned.query_ids.tolist()],
            split_items(docs, aligned.offsets),
            nuggets=nuggets,
            assignments=nugget_assignments,
            citations=citation_support,
        )
        aligned = replace(aligned, side=side)
    if any("spans" in m.needs for m in measures) and spans is not None:
        side["spans"] = _span_view(aligned, run, spans)
        aligned = replace(aligned, side=side)
    needs_lengths = any("lengths" in m.needs for m in measures)
    needs_utilities = any("utilities" in m.needs for m in measures)
    reads_run = any(m.spec.reads_run for m in measures)
    if (
        not (needs_lengths and lengths is not None)
        and not (needs_utilities and utilities is not None)
        and not reads_run
    ):
        return aligned
    item_docs = run.doc_ids.take(_accel.indices(aligned.run_rows))
    side["item_doc_ids"] = item_docs
    if reads_run:
        side["item_scores"] = run.scores[aligned.run_rows]
    if needs_lengths and lengths is not None:
        item_tokens = lengths.lookup(item_docs)
        _check_lengths(aligned, item_tokens, item_docs, "retrieved", lengths.source)
        label_docs = qrels.doc_ids.take(_accel.indices(aligned.label_rows))
        label_tokens = lengths.lookup(label_docs)
        _check_lengths(aligned, label_tokens, label_docs, "judged", lengths.source)
        side["item_tokens"] = item_tokens
        side["label_tokens"] = label_tokens
    if needs_utilities and utilities is not None:
        item_queries = aligned.query_ids[aligned.query_of_item]
        side["item_utility"] = utilities.lookup(item_queries, item_docs)
    return replace(aligned, side=side)


def _answer_hits(aligned: Aligned, run: Run, gold: GoldAnswers, corpus: Corpus | None) -> list[Any]:
    """Per evaluated query, whether each retrieved passage contains one of its gold answers
    (``None`` for a query without them)."""
    from ragmeter.metrics.containment import answer_hits

    rows = _accel.indices(aligned.run_rows)
    docs = run.doc_ids.take(rows)
    texts = _item_texts(aligned, docs, corpus, run.texts.take(rows) if run.texts else None)
    out: list[Any] = []
    for i, q in enumerate(aligned.query_ids.tolist()):
        answers = gold.answers_of(str(q))
        lo, hi = int(aligned.offsets[i]), int(aligned.offsets[i + 1])
        out.append(None if answers is None else answer_hits(texts[lo:hi], answers))
    return out


def _item_texts(aligned: Aligned, docs: Any, corpus: Corpus | None, own: Any) -> list[str]:
    """The text of each retrieved passage: the corpus's (every retrieved doc must be in it),
    else the run's own texts; neither is an error."""
    if corpus is not None:
        where = corpus.lookup(docs)
        absent = np.flatnonzero(where < 0)
        if len(absent):
            i = int(absent[0])
            query = aligned.query_ids[aligned.query_of_item[i]]
            more = f" (and {len(absent) - 1} more)" if len(absent) > 1 else ""
            raise InputError(
                f"no text for retrieved doc '{docs[i].as_py()}' of query '{query}'{more}; "
                "answer containment reads the text of every retrieved passage",
                source=corpus.name,
            )
        return [str(t) for t in corpus.texts.take(where).to_pylist()]
    if own is not None:
        return ["" if t is None else str(t) for t in own.to_pylist()]
    raise MissingInputError(
        "answer containment needs the retrieved passages' texts: give --corpus (or a run "
        "that carries them)"
    )


def _span_view(aligned: Aligned, run: Run, spans: SpanInputs) -> Any:
    from ragmeter.core.spans import span_view

    rows = _accel.indices(aligned.run_rows)
    ids = run.doc_ids.take(rows)
    return span_view(
        spans.labels,
        spans.table_for(run.name, ids),
        aligned.query_ids,
        ids,
        run_name=run.name,
        item_texts=None if run.texts is None else run.texts.take(rows),
    )


def _check_lengths(aligned: Aligned, tokens: np.ndarray, docs: Any, what: str, source: str) -> None:
    missing = np.flatnonzero(tokens < 0)
    if not len(missing):
        return
    i = int(missing[0])
    if what == "retrieved":
        query = aligned.query_ids[aligned.query_of_item[i]]
    else:
        query = aligned.query_ids[aligned.query_of_label[i]]
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    raise InputError(
        f"no length for {what} doc '{docs[i].as_py()}' of query '{query}'{more}; a token "
        "budget needs the length of every retrieved and judged passage",
        source=source,
    )
