"""The measures a view shows when none are asked for, written once for every view.

``ragmeter evaluate``, ``ragmeter compare`` and the HTML report start from the same classical
list, so a default table reads the same whichever command printed it.
"""

from __future__ import annotations

#: the classical measures of ``evaluate``, ``compare`` and the report's summary
DEFAULT_MEASURES: tuple[str, ...] = ("ndcg@10", "map", "recall@100", "mrr", "P@10")
#: with sub-question judgments and no qrels: the coverage family (``density`` needs a corpus)
COVERAGE_MEASURES: tuple[str, ...] = ("coverage", "alpha_ndcg@20")
#: with nugget assignments: the four scores of the TREC 2024 RAG track
NUGGET_MEASURES: tuple[str, ...] = (
    "nugget_strict_vital",
    "nugget_vital",
    "nugget_strict_all",
    "nugget_all",
)
#: with citation support judgments: the support evaluation's two summaries
CITATION_MEASURES: tuple[str, ...] = ("citation_precision", "citation_recall")
#: with gold answers and no qrels: answer containment at FlashRAG's default 5 and DPR's 20
ANSWER_MEASURES: tuple[str, ...] = ("answer_recall@5", "answer_recall@20", "answer_precision@5")
