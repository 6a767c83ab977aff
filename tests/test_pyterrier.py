"""ragmeter's measures in PyTerrier's ``pt.Experiment`` (through the ir_measures provider).

PyTerrier's indexing and retrieval need Terrier's Java jars, downloaded at run time; these
tests use a pure-Python retrieval step instead (``pt.apply.generic``), which PyTerrier runs
without starting Java, and check that Java was not started.
"""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")
pt = pytest.importorskip("pyterrier", reason="python-terrier (dev extra) is needed")
ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (dev extra) is needed")
irm_provider = pytest.importorskip("ragmeter.interop.irm_provider")

GRADES = "0:1,1:3,2:4,3:5"
TOPICS = pd.DataFrame({"qid": ["1", "2"], "query": ["cats", "dogs"]})
QRELS = pd.DataFrame(
    {"qid": ["1", "1", "2", "2"], "docno": ["a", "b", "c", "d"], "label": [2, 0, 1, 3]}
)
RANKING = {"1": ["a", "c", "b", "d"], "2": ["b", "d", "a", "c"]}


def _retrieve(topics: pd.DataFrame) -> pd.DataFrame:
    rows = [
        {"qid": q, "query": query, "docno": d, "score": 10.0 - rank, "rank": rank}
        for q, query in zip(topics["qid"], topics["query"], strict=True)
        for rank, d in enumerate(RANKING[q])
    ]
    return pd.DataFrame(rows)


def test_experiment_reports_ragmeter_measures_without_java() -> None:
    ra = irm_provider.RA_nWG(grade_map=GRADES) @ 3
    proc = irm_provider.PROC(grade_map=GRADES) @ 2
    system = pt.apply.generic(_retrieve)
    table = pt.Experiment(
        [system],
        TOPICS,
        QRELS,
        eval_metrics=[ra, proc, ir_measures.P @ 2],
        names=["toy"],
        validate="ignore",
    )
    row = table.iloc[0]
    qrels = {q: dict(zip(g["docno"], g["label"], strict=True)) for q, g in QRELS.groupby("qid")}
    run = {q: {d: 10.0 - r for r, d in enumerate(docs)} for q, docs in RANKING.items()}
    expected = ir_measures.calc_aggregate([ra, proc], qrels, run)
    assert row[str(ra)] == pytest.approx(expected[ra], abs=1e-12)
    assert row[str(proc)] == pytest.approx(expected[proc], abs=1e-12)
    assert row["P@2"] == pytest.approx(0.5)
    assert not pt.java.started()
