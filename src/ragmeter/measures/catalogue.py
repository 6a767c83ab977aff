"""Which module of :mod:`ragmeter.metrics` registers which measure name, written down so that
the registry imports only the families a lookup needs.

A name of ragmeter's own (a family or one of its aliases, in lower case) is registered by the
module :data:`FAMILY_MODULES` gives; trec_eval's names and groups (``P``, ``ndcg_cut``,
``all_trec``) by :data:`TREC_MODULE`. Importing a family module costs what its family needs
(the answer families text normalisation, the span family interval sums): an evaluation of
``ndcg@10`` and ``map`` imports the ranking families only. Anything that needs every family
(the list of names, the closest names to an unknown one, a name defined through the public
API) imports :data:`MODULES` all. ``tests/test_measure_catalogue.py`` checks this table
against the registry the modules fill.
"""

from __future__ import annotations

#: the modules of :mod:`ragmeter.metrics` that register built-in families, in import order
MODULES: tuple[str, ...] = tuple(
    f"ragmeter.metrics.{name}"
    for name in (
        "answer_text",
        "containment",
        "coverage",
        "cwl",
        "diversity",
        "interop",
        "nuggets",
        "ragchecker",
        "ranking",
        "setwise",
        "spans",
        "trec",
        "trec_measures",
        "udcg",
    )
)

#: the module registering trec_eval's measure names and groups
TREC_MODULE = "ragmeter.metrics.trec"

#: the named groups of measures (``all_trec``, ``official``)
TREC_GROUPS: frozenset[str] = frozenset({"all_trec", "official"})

#: trec_eval's measure names, as registered (case-sensitive)
TREC_NAMES: frozenset[str] = frozenset(
    {
        "11pt_avg",
        "G",
        "P",
        "Rndcg",
        "Rprec",
        "Rprec_mult",
        "binG",
        "bpref",
        "dcg",
        "gm_bpref",
        "gm_map",
        "ideal_dcg",
        "infAP",
        "iprec_at_recall",
        "map",
        "map_cut",
        "ndcg",
        "ndcg_cut",
        "ndcg_rel",
        "num_nonrel_judged_ret",
        "num_rel",
        "num_rel_ret",
        "num_ret",
        "rbp",
        "rbp_resid",
        "recall",
        "recip_rank",
        "relative_P",
        "relstring",
        "set_F",
        "set_P",
        "set_map",
        "set_recall",
        "set_relative_P",
        "success",
        "unj",
        "utility",
        "yaap",
    }
)

#: a family's name or alias, in lower case → the module (of :mod:`ragmeter.metrics`) that
#: registers it
FAMILY_MODULES: dict[str, str] = {
    # answer_text
    "answer_correct": "answer_text",
    "bleu": "answer_text",
    "containment": "answer_text",
    "context_coverage": "answer_text",
    "exact_match": "answer_text",
    "keyword_overlap": "answer_text",
    "rouge_l": "answer_text",
    "token_f1": "answer_text",
    # containment
    "answer_precision": "containment",
    "answer_recall": "containment",
    # coverage
    "alpha_ndcg": "coverage",
    "alpha_ndcg_cut": "coverage",
    "answer_coverage": "coverage",
    "answer_density": "coverage",
    "coverage": "coverage",
    "density": "coverage",
    # cwl
    "bpm": "cwl",
    "insq": "cwl",
    "inst": "cwl",
    "nerr10": "cwl",
    "nerr11": "cwl",
    "nerr8": "cwl",
    "nerr9": "cwl",
    "sdcg": "cwl",
    # diversity
    "alpha_dcg": "diversity",
    "ap_ia": "diversity",
    "err_ia": "diversity",
    "nerr_ia": "diversity",
    "nnrbp": "diversity",
    "nrbp": "diversity",
    "p_ia": "diversity",
    "strecall": "diversity",
    # interop
    "accuracy": "interop",
    "compat": "interop",
    "err": "interop",
    "judged_rate": "interop",
    "nerr": "interop",
    "num_queries": "interop",
    # nuggets
    "citation_precision": "nuggets",
    "citation_recall": "nuggets",
    "nugget_all": "nuggets",
    "nugget_coverage": "nuggets",
    "nugget_strict_all": "nuggets",
    "nugget_strict_vital": "nuggets",
    "nugget_vital": "nuggets",
    # ragchecker
    "claim_recall": "ragchecker",
    "context_precision": "ragchecker",
    "context_utilization": "ragchecker",
    # ranking
    "ap": "ranking",
    "bpref": "ranking",
    "dcg": "ranking",
    "f1": "ranking",
    "gm_map": "ranking",
    "hit": "ranking",
    "hit_rate": "ranking",
    "iprec": "ranking",
    "iprec_at_recall": "ranking",
    "judged": "ranking",
    "map": "ranking",
    "mrr": "ranking",
    "ndcg": "ranking",
    "ndcg_exp": "ranking",
    "num_rel": "ranking",
    "num_rel_ret": "ranking",
    "num_ret": "ranking",
    "p": "ranking",
    "prec": "ranking",
    "precision": "ranking",
    "r-prec": "ranking",
    "r_precision": "ranking",
    "rec": "ranking",
    "recall": "ranking",
    "rprec": "ranking",
    "rr": "ranking",
    "success": "ranking",
    # setwise
    "harm": "setwise",
    "n_recall4p": "setwise",
    "n_recall5": "setwise",
    "pct_proc": "setwise",
    "precision4p": "setwise",
    "proc": "setwise",
    "proc_n_recall4p": "setwise",
    "ra_nwg": "setwise",
    # spans
    "span_graded_recall": "spans",
    "span_iou": "spans",
    "span_precision": "spans",
    "span_precision_omega": "spans",
    "span_recall": "spans",
    "span_set_iou": "spans",
    "span_set_precision": "spans",
    "span_set_precision_omega": "spans",
    "span_set_recall": "spans",
    # trec_measures
    "avg_iprec": "trec_measures",
    "bing": "trec_measures",
    "eleven_pt_avg": "trec_measures",
    "g": "trec_measures",
    "gm_bpref": "trec_measures",
    "idcg": "trec_measures",
    "ideal_dcg": "trec_measures",
    "inf_ap": "trec_measures",
    "infap": "trec_measures",
    "ndcg_rel": "trec_measures",
    "ngain": "trec_measures",
    "num_nonrel_judged_ret": "trec_measures",
    "num_unjudged_ret": "trec_measures",
    "rbp": "trec_measures",
    "rbp_resid": "trec_measures",
    "rel_p": "trec_measures",
    "relative_p": "trec_measures",
    "relative_precision": "trec_measures",
    "relstring": "trec_measures",
    "rndcg": "trec_measures",
    "rprec_mult": "trec_measures",
    "set_f": "trec_measures",
    "set_map": "trec_measures",
    "set_p": "trec_measures",
    "set_precision": "trec_measures",
    "set_recall": "trec_measures",
    "set_relative_p": "trec_measures",
    "set_relative_precision": "trec_measures",
    "unj": "trec_measures",
    "unjudged": "trec_measures",
    "utility": "trec_measures",
    "yaap": "trec_measures",
    # udcg
    "udcg": "udcg",
}
