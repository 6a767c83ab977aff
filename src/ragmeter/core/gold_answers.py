"""Gold answers per query (NQ / TriviaQA style), for the answer containment measures.

A query listed with an empty list of answers has no gold answer: the containment measures
are NA there (never 0), like a query absent from the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragmeter.core.data import Qrels
from ragmeter.core.nuggets import query_qrels


@dataclass(frozen=True, eq=False)
class GoldAnswers:
    """Each query's gold answer strings, by query id; ``source`` names the file."""

    by_query: Mapping[str, tuple[str, ...]]
    source: str = "<gold answers>"

    @classmethod
    def from_dict(cls, data: Mapping[str, Sequence[str]], *, source: str = "<dict>") -> GoldAnswers:
        return cls({str(q): tuple(a) for q, a in data.items()}, source)

    def answers_of(self, query_id: str) -> tuple[str, ...] | None:
        """The query's gold answers; ``None`` when it has none (absent, or listed empty)."""
        answers = self.by_query.get(query_id)
        return answers if answers else None

    def query_qrels(self) -> Qrels:
        """Qrels naming the queries of the file (those listed without answers too, so that
        they are counted, as NA) and no judgment: what an evaluation without qrels aligns
        against."""
        return query_qrels(self.by_query, self.source)
