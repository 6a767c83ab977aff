"""Where evidence was lost between the stages of a RAG pipeline read from traces.

A reranker chooses its output from the retriever's candidates: every relevant document the
retriever found and the reranker's output lacks is evidence lost by reranking. Over the
queries both stages ranked (and the qrels judge):

* ``found`` — relevant documents (grade ≥ ``rel_level``) in the earlier stage's ranking;
* ``kept`` — those of them in the later stage's ranking;
* ``lost = found − kept``, the share lost ``lost / found``.

The same count compares an agent's retrieval steps with the context they gathered.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragmeter.core.data import Qrels, Run


@dataclass(frozen=True)
class StageLoss:
    """Relevant documents the ``before`` ranking found and the ``after`` ranking kept."""

    before: str
    after: str
    queries: int
    found: int
    kept: int

    @property
    def lost(self) -> int:
        return self.found - self.kept

    def describe(self) -> str:
        """One line: ``found``, ``kept``, ``lost`` and the share lost."""
        share = f" ({self.lost / self.found:.1%})" if self.found else ""
        return (
            f"from '{self.before}' to '{self.after}': {self.lost} of the {self.found} relevant "
            f"document(s) found were lost{share}, {self.kept} kept, over {self.queries} "
            "quer(ies)"
        )


def stage_loss(before: Run, after: Run, qrels: Qrels, rel_level: int = 1) -> StageLoss:
    """The relevant documents of ``before`` that ``after`` kept (see the module docstring)."""
    relevant = {
        q: {d for d, g in docs.items() if g >= rel_level} for q, docs in qrels.to_dict().items()
    }
    first, second = before.ranked(), after.ranked()
    queries = found = kept = 0
    for q, docs in first.items():
        if q not in second or q not in relevant:
            continue
        queries += 1
        hits = relevant[q].intersection(docs)
        found += len(hits)
        kept += len(hits.intersection(second[q]))
    return StageLoss(before.name, after.name, queries, found, kept)
