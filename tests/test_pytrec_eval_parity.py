"""Per-query values equal pytrec_eval's, to full precision, on random data with ties.

pytrec_eval wraps trec_eval's C code (its 9.x measures, the same formulas as 10.0 for every
measure both have); it is in the dev extra, so this parity check runs without ``../shared``.
For every measure both implement, hypothesis draws qrels (grades −1…3, so unjudged pooled
documents too) and runs (scores from a small set, so ties are frequent and trec_eval's tie
order — score descending, then doc id descending — decides ranks), and every per-query value
must equal pytrec_eval's within 1e-12. Where the two legitimately differ (``gm_map`` and
``gm_bpref`` come back as logarithms; ``runid``, ``num_q`` and ``relstring`` are no per-query
numbers) the test adapts or leaves the measure out; docs/trec_eval.md lists them.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import Qrels, Run
from ragmeter.core.align import align
from ragmeter.metrics.registry import MIN_GEO_MEAN
from ragmeter.metrics.trec import expand

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (dev extra) is needed")

#: (trec_eval name, parameters) for every measure pytrec_eval and ragmeter both compute, but
#: iprec_at_recall and 11pt_avg: trec_eval 10.0 rounds the number of relevant documents a
#: recall level needs (lround(x·R)), pytrec_eval's trec_eval 9 does not — with R = 2 and one
#: relevant document at rank 1, iprec_at_recall_0.60 is 1.0 in 10.0 and 0.0 in pytrec_eval.
#: Both are compared with trec_eval 10.0 itself (tests/test_trec_eval_differential.py and the
#: conformance tests).
MEASURES: tuple[tuple[str, str | None], ...] = (
    ("num_ret", None),
    ("num_rel", None),
    ("num_rel_ret", None),
    ("map", None),
    ("gm_map", None),
    ("Rprec", None),
    ("bpref", None),
    ("gm_bpref", None),
    ("recip_rank", None),
    ("P", None),
    ("P", "1,2,3,7"),
    ("recall", None),
    ("recall", "2,4"),
    ("infAP", None),
    ("Rprec_mult", None),
    ("utility", None),
    ("binG", None),
    ("G", None),
    ("ndcg", None),
    ("ndcg_rel", None),
    ("Rndcg", None),
    ("ndcg_cut", None),
    ("ndcg_cut", "1,3,6"),
    ("map_cut", None),
    ("map_cut", "2,5"),
    ("relative_P", None),
    ("success", None),
    ("set_P", None),
    ("set_relative_P", None),
    ("set_recall", None),
    ("set_map", None),
    ("set_F", None),
    ("num_nonrel_judged_ret", None),
)

#: pytrec_eval returns these per query as log(max(v, 1e-5)), the terms of their geometric
#: mean (trec_eval prints them in the summary only)
GEOMETRIC = ("gm_map", "gm_bpref")

QUERIES = ("q1", "q2", "q10")
DOCS = tuple(f"d{i}" for i in range(10))
SCORES = (0.0, 0.5, 1.0, 1.0, 2.0, -1.0, 3.25)


@st.composite
def collections(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """qrels and run dictionaries: every run query judged, at least one judgment ≥ 0 each."""
    queries = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in queries:
        judged = draw(
            st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1, max_size=8)
        )
        if max(judged.values()) < 0:
            judged[next(iter(judged))] = 0
        qrels[q] = judged
        run[q] = draw(
            st.dictionaries(st.sampled_from(DOCS), st.sampled_from(SCORES), min_size=1, max_size=9)
        )
    return qrels, run


@pytest.mark.parametrize("rel_level", [1, 2])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections())
def test_every_shared_measure_equals_pytrec_eval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], rel_level: int
) -> None:
    qrels_dict, run_dict = data
    theirs: dict[str, dict[str, float]] = {}
    # one evaluator per parameter set: pytrec_eval keeps one parameter list per measure
    for names in ({n for n, p in MEASURES if p is None}, {f"{n}.{p}" for n, p in MEASURES if p}):
        evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, names, relevance_level=rel_level)
        for q, values in evaluator.evaluate(run_dict).items():
            theirs.setdefault(q, {}).update(values)
    al = align(
        Run.from_dict(run_dict), Qrels.from_dict(qrels_dict), missing="skip", rel_level=rel_level
    )
    queries = [str(q) for q in al.query_ids]
    assert sorted(queries) == sorted(theirs)
    for name, params in MEASURES:
        for label, measure in expand(name, params):
            ours = [float(v) for v in measure.spec.compute(al, measure)]
            if name in GEOMETRIC:
                ours = [math.log(max(v, MIN_GEO_MEAN)) for v in ours]
            for i, q in enumerate(queries):
                expected = theirs[q][label]
                assert math.isclose(ours[i], expected, rel_tol=1e-12, abs_tol=1e-12), (
                    f"{label} on {q}: ragmeter {ours[i]!r}, pytrec_eval {expected!r}\n"
                    f"qrels={qrels_dict}\nrun={run_dict}"
                )
