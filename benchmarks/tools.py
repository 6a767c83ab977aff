"""One evaluation by one tool, as a whole process: ``python benchmarks/tools.py TOOL RUN QRELS``.

Prints ``{"ndcg@10": …, "map@100": …, "recall@100": …, "mrr@10": …, "P@10": …}`` (means over
the qrels' queries) as JSON. Each tool is used the way its documentation shows:

* ``pytrec_eval``: ``parse_run`` / ``parse_qrel`` into dicts, ``RelevanceEvaluator``; trec_eval
  has no cut-off reciprocal rank, so ``mrr@10`` is ``recip_rank`` on the run cut to its top 10
  (score descending, ties by doc id descending, as trec_eval orders).
* ``ranx``: ``Qrels.from_file`` / ``Run.from_file`` + ``evaluate``.
* ``ir_measures``: ``read_trec_run`` / ``read_trec_qrels`` + ``calc_aggregate``.
* ``ragmeter-phases``: the library by phase (import, read run, read qrels, align, compute),
  printed as ``{"phases": {...}, "values": {...}}``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

MEASURES = ("ndcg@10", "map@100", "recall@100", "mrr@10", "P@10")


def pytrec(run_path: str, qrels_path: str) -> dict[str, float]:
    import pytrec_eval

    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut_10", "map_cut_100", "recall_100", "P_10"}
    )
    per_query = evaluator.evaluate(run)
    top10 = {
        q: dict(sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:10])
        for q, docs in run.items()
    }
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    # trec_eval -c semantics: every judged query counts, absent ones score 0.
    n = len(qrels)
    keys = {
        "ndcg@10": "ndcg_cut_10",
        "map@100": "map_cut_100",
        "recall@100": "recall_100",
        "P@10": "P_10",
    }
    out = {m: sum(v[k] for v in per_query.values()) / n for m, k in keys.items()}
    out["mrr@10"] = sum(v["recip_rank"] for v in rr.values()) / n
    return {m: out[m] for m in MEASURES}


def ranx_(run_path: str, qrels_path: str) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    names = {
        "ndcg@10": "ndcg@10",
        "map@100": "map@100",
        "recall@100": "recall@100",
        "mrr@10": "mrr@10",
        "P@10": "precision@10",
    }
    res = evaluate(qrels, run, list(names.values()), make_comparable=True)
    return {m: float(res[names[m]]) for m in MEASURES}


def irm(run_path: str, qrels_path: str) -> dict[str, float]:
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    qrels = list(ir_measures.read_trec_qrels(qrels_path))
    run = list(ir_measures.read_trec_run(run_path))
    names = {
        "ndcg@10": nDCG @ 10,
        "map@100": AP @ 100,
        "recall@100": R @ 100,
        "mrr@10": RR @ 10,
        "P@10": P @ 10,
    }
    res = ir_measures.calc_aggregate(list(names.values()), qrels, run)
    return {m: float(res[names[m]]) for m in MEASURES}


def ragmeter_phases(run_path: str, qrels_path: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    import ragmeter
    from ragmeter.core.align import align
    from ragmeter.evaluation import compute, resolve_measures
    from ragmeter.io.trec import read_trec_qrels, read_trec_run

    t1 = time.perf_counter()
    run = read_trec_run(run_path)
    t2 = time.perf_counter()
    qrels = read_trec_qrels(qrels_path)
    t3 = time.perf_counter()
    al = align(run, qrels)
    t4 = time.perf_counter()
    measures = resolve_measures(list(MEASURES), default_k=5)
    values = compute(al, measures)
    means = values.mean(axis=0)
    t5 = time.perf_counter()
    del ragmeter
    return {
        "phases": {
            "import": t1 - t0,
            "read run": t2 - t1,
            "read qrels": t3 - t2,
            "align": t4 - t3,
            "compute": t5 - t4,
        },
        "values": {m: float(v) for m, v in zip(MEASURES, means, strict=True)},
    }


TOOLS = {
    "pytrec_eval": pytrec,
    "ranx": ranx_,
    "ir_measures": irm,
    "ragmeter-phases": ragmeter_phases,
}


def main() -> None:
    tool, run_path, qrels_path = sys.argv[1:4]
    print(json.dumps(TOOLS[tool](run_path, qrels_path)))


if __name__ == "__main__":
    main()
