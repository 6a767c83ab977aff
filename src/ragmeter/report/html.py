"""One self-contained HTML report of an evaluation (``ragmeter report``; needs matplotlib:
the ``report`` extra, ``pip install -e ".[report]"`` in a clone).

The page opens offline: the stylesheet is inline, the charts are inline SVG drawn by
matplotlib (:mod:`ragmeter.report.figures`), nothing is fetched and there is no script.
Sections, each shown only when its inputs are there:

* **Summary** — every run × measure: mean with its bootstrap CI and, against the baseline,
  the paired difference with its CI, the corrected p-value and ▲/▼ (from
  :func:`ragmeter.stats.compare`, formatted as ``ragmeter compare`` does);
* **K-sweep** — the summary's own measures written with ``@K`` (same parameters) at every K,
  evaluated with the runs and inputs of the summary's evaluation
  (:func:`ragmeter.evaluation.sweep_evaluation`), so each curve passes through the summary's
  value at its K; needs the runs (evaluated, not loaded from a store);
* **PROC vs %PROC** — one point per query in the diagnosis regions, the counts and the 2×2
  matrix (:func:`ragmeter.analysis.diagnosis.diagnose`), needs the runs and graded qrels on
  (or mapped to) the 1..5 utility scale;
* **Per-query distributions** — a box (and a strip of points) per run and measure;
* **Coverage per sub-question** — which sub-questions each run's context answers
  (:func:`ragmeter.analysis.queries.subquestion_coverage`), needs the runs and judgments;
* **Worst queries** — per run, the lowest queries on the first measure (RA-nWG@K when
  evaluated) with their relevant documents missing from the top K
  (:func:`ragmeter.analysis.queries.worst_queries`), needs the runs and qrels (or judgments).

The output is deterministic: the same inputs and seed give the same bytes (no date; fixed
SVG ids and hash salt; seeded bootstrap and jitter).
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from ragmeter.analysis.report import (
    ReportKeywords,
    ReportModel,
    ReportOptions,
    report_options,
    set_measures_apply,
)
from ragmeter.analysis.report import summary_sweep as summary_sweep  # re-exported
from ragmeter.evaluation.results import Evaluation, RunResult
from ragmeter.metrics.defaults import COVERAGE_MEASURES, DEFAULT_MEASURES
from ragmeter.stats.bootstrap import min_bootstrap_n

if TYPE_CHECKING:
    from ragmeter.analysis.diagnosis import Diagnosis
    from ragmeter.analysis.leaderboard import LeaderboardAgreement
    from ragmeter.analysis.ppi import PPIEvaluation
    from ragmeter.analysis.queries import SubquestionCoverage, WorstQuery
    from ragmeter.core.data import Qrels
    from ragmeter.core.judgments import Judgments
    from ragmeter.evaluation import Sweep
    from ragmeter.io._common import PathLike
    from ragmeter.stats.comparison import Comparison, MetricSummary

#: classical measures of the report when none are given (as ``ragmeter compare``)
CLASSICAL_DEFAULTS = DEFAULT_MEASURES
#: set-based measures added at the report's K when the grades fit the utility scale
SET_DEFAULTS = ("ra_nwg", "proc", "pct_proc", "n_recall4p", "harm")
#: coverage measures when sub-question judgments are given
COVERAGE_DEFAULTS = COVERAGE_MEASURES
#: most measures drawn as per-query distributions, and most sub-question queries listed
MAX_DISTRIBUTION_PANELS = 12
MAX_COVERAGE_QUERIES = 30
MAX_MISSED_LISTED = 8

_e = html.escape


# -- choosing what to show -------------------------------------------------------------------


def default_measures(
    qrels: Qrels | None,
    *,
    grade_map: str | None = None,
    judgments: Judgments | None = None,
    k: int = 10,
) -> list[str]:
    """The report's measures when none are given: the classical ones (with qrels), the
    set-based ones at ``k`` when :func:`set_measures_apply`, and coverage with judgments."""
    out: list[str] = []
    if qrels is not None:
        out += CLASSICAL_DEFAULTS
        if set_measures_apply(qrels, grade_map):
            out += [f"{m}@{k}" for m in SET_DEFAULTS]
    if judgments is not None:
        if qrels is None:
            out.append("ndcg@10")
        out += COVERAGE_DEFAULTS
    return out


# -- the report ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Section:
    anchor: str
    title: str
    body: str


def render_html_report(
    evaluation: Evaluation,
    options: ReportOptions | None = None,
    **keywords: Unpack[ReportKeywords],
) -> str:
    """The report as one HTML document (see :func:`write_html_report` for the options):
    the model of :func:`ragmeter.analysis.report.build_report`, rendered."""
    from ragmeter.analysis.report import build_report
    from ragmeter.report import figures

    o = report_options(options, keywords, "render_html_report")
    figures._matplotlib()  # a clear error before any work when matplotlib is missing
    model = build_report(evaluation, o)
    extra = [] if o.labels_against is None else [label_agreement_section(*o.labels_against)]
    return render_report(model, title=o.title, inputs=o.inputs, extra=extra, ppi=o.ppi)


def render_report(
    model: ReportModel,
    *,
    title: str = "ragmeter report",
    inputs: Sequence[tuple[str, str]] = (),
    extra: Sequence[_Section] = (),
    ppi: PPIEvaluation | None = None,
) -> str:
    """Render a report model (:mod:`ragmeter.analysis.report`) as one HTML document;
    ``extra`` sections (e.g. :func:`label_agreement_section`) go after the summary; ``ppi``:
    prediction-powered estimates of the runs' measures (a section of their own)."""
    evaluation, comparison = model.evaluation, model.comparison
    sections = [
        _summary_section(evaluation, comparison, bootstrap=model.bootstrap, seed=model.seed),
        *extra,
    ]
    if model.all_pairs is not None:
        from ragmeter.report.allpairs import html_table

        sections.append(
            _Section(
                "all-pairs",
                "All pairs",
                '<p class="lead">Every run against every other; a mean\'s superscripts are '
                "the letters of the runs it is significantly better than.</p>"
                f'<div class="scroll">{html_table(model.all_pairs)}</div>',
            )
        )
    if ppi is not None:
        from ragmeter.report.ppi import html_section

        sections.append(_Section("ppi", "Human-label estimates (PPI)", html_section(ppi)))
    if model.sweep is not None:
        sections.append(_sweep_section(model.sweep, model.k))
    if model.diagnoses:
        sections.append(_quadrant_section(model.diagnoses))
    shown = list(comparison.measures) if comparison is not None else None
    sections.append(_distribution_section(evaluation, shown))
    if model.coverage is not None:
        sections.append(_coverage_section(model.coverage))
    if model.worst and model.worst_measure is not None:
        sections.append(_worst_section(model))
    return _page(title, evaluation, sections, inputs, comparison)


def write_html_report(
    path: PathLike,
    evaluation: Evaluation,
    options: ReportOptions | None = None,
    **keywords: Unpack[ReportKeywords],
) -> Path:
    """Write the HTML report of ``evaluation`` to ``path`` (atomically) and return the path.

    The summary table and the per-query distributions come from ``evaluation`` alone; the
    other sections appear when their inputs are given (the module docstring lists them).
    The options are one :class:`~ragmeter.analysis.report.ReportOptions`, given whole
    (``options``) or as keywords (its fields, :class:`~ragmeter.analysis.report.ReportKeywords`,
    which replace those of ``options``).

    Args:
        path: the ``.html`` file to write.
        evaluation: the runs' per-query values (:func:`ragmeter.evaluate`).
        options: the options below as one value, built once (``None``: the defaults).

    Keyword Args:
        runs: the evaluated :class:`Run` objects (matched to the evaluation by name), for the
            K-sweep, the PROC/%PROC quadrant, sub-question coverage and the worst queries.
        qrels: the judgments the runs were evaluated against.
        judgments: CRUX sub-question judgments (coverage per sub-question; the worst queries
            then use their graded qrels when ``qrels`` is None).
        comparison: a ready :class:`~ragmeter.stats.comparison.Comparison` (else computed
            with ``baseline``, ``seed``, ``bootstrap``, ``permutations``: randomization
            test, Holm correction); sweep, diagnoses: ready results, else computed.
        grade_map: grade mapping onto the 1..5 utility scale (``"0:1,1:3,2:4,3:5"`` for TREC
            0..3 grades) for the set-based measures, as in :func:`ragmeter.evaluate`.
        k: the prompt size K of the quadrant and of "missed" in the worst queries.
        sweep_ks: the cutoffs of the sweep (``"1:20"``, ``[1, 5, 10]``).
        pool, pool_depth: the candidate pool of PROC (default: each run is its own pool).
        pools: per run name, its own pool (a run, or ``(run, depth)``), before ``pool``.
        rel_level: relevant ⇔ grade ≥ rel_level (the worst queries' missed documents).
        context_k, tau: context size and answerability threshold of sub-question coverage.
        worst: how many worst queries per run (0: no such section).
        title: the page title; inputs: ``(label, value)`` lines describing the inputs
            (file names…) shown under the title.
        labels_against: the leaderboard agreement of the runs under two label sets and the
            sets' names (:func:`ragmeter.analysis.leaderboard.leaderboard_agreement`): a
            section with each run's score under one against the other.

    Example (``ragmeter demo`` writes its report this way)::

        from ragmeter import evaluate, read_qrels, read_run
        from ragmeter.report.html import default_measures, write_html_report

        qrels = read_qrels("qrels.txt")
        runs = [read_run("run_bm25.txt"), read_run("run_dense.txt")]
        G = "0:1,1:3,2:4,3:5"
        ev = evaluate(runs, qrels, default_measures(qrels, grade_map=G), grade_map=G)
        write_html_report("report.html", ev, runs=runs, qrels=qrels, grade_map=G)
    """
    from ragmeter.io._common import atomic_write_text

    text = render_html_report(evaluation, report_options(options, keywords, "write_html_report"))
    atomic_write_text(path, text)
    return Path(path)


# -- number formatting ------------------------------------------------------------------------


def _num(value: float | None, digits: int = 4) -> str:
    if value is None or math.isnan(value):
        return "NA"
    return f"{value:.{digits}f}"


def _signed(value: float, digits: int = 4) -> str:
    return "NA" if math.isnan(value) else f"{value:+.{digits}f}"


def _data(value: float | None) -> str:
    """An exact value for a ``data-`` attribute (``repr``; empty for NA)."""
    if value is None or math.isnan(value):
        return ""
    return repr(float(value))


# -- summary ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cell:
    mean: float
    low: float
    high: float
    n: int
    n_defined: int


def _single_run_cells(result: RunResult, *, bootstrap: int, seed: int) -> dict[str, _Cell]:
    """Mean (the evaluation's aggregate) and percentile bootstrap CI of one run's measures."""
    from ragmeter.stats.bootstrap import bootstrap_ci

    out = {}
    for m in result.measures:
        agg = result.aggregate(m)
        low = high = math.nan
        if m.spec.aggregate == "mean":
            low, high = bootstrap_ci(result.column(m), replicates=bootstrap, seed=seed)
        mean = math.nan if agg.value is None else float(agg.value)
        out[str(m)] = _Cell(mean, low, high, agg.n, agg.n_defined)
    return out


def _cell_of(s: MetricSummary) -> _Cell:
    return _Cell(s.mean, s.ci_low, s.ci_high, s.n, s.n_defined)


def _mean_cell(run: str, measure: str, cell: _Cell) -> str:
    ci = "" if math.isnan(cell.low) else f"[{_num(cell.low)}, {_num(cell.high)}]"
    if not ci and not math.isnan(cell.mean) and cell.n_defined < min_bootstrap_n():
        ci = "[n too small for an interval]"
    defined = ""
    if cell.n_defined != cell.n:
        defined = (
            '<span class="sub" title="queries defined / evaluated">'
            f"n={cell.n_defined}/{cell.n}</span>"
        )
    return (
        f'<td class="num" data-run="{_e(run)}" data-measure="{_e(measure)}" '
        f'data-mean="{_data(cell.mean)}"><span class="mean">{_num(cell.mean)}</span>'
        f'<span class="sub">{ci}</span>{defined}</td>'
    )


def _delta_cell(c: Comparison, run: str, measure: str) -> str:
    from ragmeter.report.comparison import MARKERS, _p

    d = c.difference(run, measure)
    if math.isnan(d.difference):
        return '<td class="num delta na">NA</td>'
    effect = d.effect_size
    effect_name = "r" if c.test == "wilcoxon" else "d"
    marker = MARKERS[d.verdict] or "&nbsp;"
    ci = (
        "[n too small for an interval]"
        if math.isnan(d.ci_low)
        else f"[{_signed(d.ci_low)}, {_signed(d.ci_high)}]"
    )
    small = (
        ' <span title="n too small: no data on these pairs could bring p to α">†</span>'
        if not d.can_be_significant and not math.isnan(d.p_value)
        else ""
    )
    return (
        f'<td class="num delta {d.verdict}" data-run="{_e(run)}" data-measure="{_e(measure)}" '
        f'data-difference="{_data(d.difference)}" data-p="{_data(d.p_adjusted)}">'
        f'<span class="mean"><span class="marker">{marker}</span> {_signed(d.difference)}</span>'
        f'<span class="sub">{ci}</span>'
        f'<span class="sub">p {_p(d.p_adjusted)}{small} · {effect_name} {_signed(effect, 2)}'
        f"{f' · {d.n_dropped} dropped' if d.n_dropped else ''}</span></td>"
    )


def _summary_section(
    evaluation: Evaluation, c: Comparison | None, *, bootstrap: int, seed: int
) -> _Section:
    measures = [str(m) for m in evaluation.measures]
    if c is not None:
        measures = list(c.measures)
        order = list(c.runs)
        cells = {(s.run, s.measure): _cell_of(s) for s in c.summaries}
    else:
        order = [r.name for r in evaluation.runs]
        cells = {
            (r.name, m): cell
            for r in evaluation.runs
            for m, cell in _single_run_cells(r, bootstrap=bootstrap, seed=seed).items()
        }
    head = ['<th scope="col">measure</th>']
    for i, run in enumerate(order):
        tag = ' <span class="badge">baseline</span>' if c is not None and i == 0 else ""
        head.append(f'<th scope="col" class="num">{_e(run)}{tag}</th>')
        if c is not None and i > 0:
            head.append(f'<th scope="col" class="num">Δ {_e(run)}</th>')
    rows = []
    for measure in measures:
        tds = [f'<th scope="row">{_e(measure)}</th>']
        for i, run in enumerate(order):
            tds.append(_mean_cell(run, measure, cells[(run, measure)]))
            if c is not None and i > 0:
                tds.append(_delta_cell(c, run, measure))
        rows.append("<tr>" + "".join(tds) + "</tr>")
    n = {r.name: len(r.query_ids) for r in evaluation.runs}
    counts = ", ".join(f"{_e(run)} {n[run]}" for run in order)
    if c is not None:
        from ragmeter.report.comparison import describe, legend

        notes = f'<p class="note">{_e(describe(c))}.</p><p class="note">{_e(legend(c))}</p>'
        notes += "".join(f'<p class="note">Note: {_e(x)}.</p>' for x in c.notes)
    else:
        notes = (
            f'<p class="note">{bootstrap:,} bootstrap resamples (seed {seed}) give the 95% '
            "percentile CI of each mean; give a second run to compare.</p>"
        )
    body = (
        f'<p class="lead">Queries evaluated: {counts}. Each cell: the mean over the queries '
        "where the measure is defined, its 95% CI below.</p>"
        '<div class="scroll"><table class="summary">'
        f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        + notes
    )
    return _Section("summary", "Summary", body)


# -- sweep, quadrant, distributions ----------------------------------------------------------


def _defined_sub(point: Mapping[str, object]) -> str:
    """``n=k/N`` under a sweep's mean over k < N queries (see :func:`_mean_cell`)."""
    n, n_defined = point["n"], point["n_defined"]
    if n == n_defined:
        return ""
    return f'<span class="sub" title="queries defined / evaluated">n={n_defined}/{n}</span>'


def _sweep_section(s: Sweep, k: int) -> _Section:
    from ragmeter.report import figures

    curves = s.curves()
    measures = [str(m) for m in s.base]
    svg = figures.sweep_figure(curves, measures, mark_k=k if k in s.ks else None)
    header = "".join(f'<th scope="col" class="num">{_e(m)}</th>' for m in measures)
    tables = []
    for run, per_measure in curves.items():
        rows = []
        for i, kk in enumerate(s.ks):
            cells = "".join(
                f'<td class="num">{_num(per_measure[m][i]["mean"])}'
                f"{_defined_sub(per_measure[m][i])}</td>"
                for m in measures
            )
            rows.append(f'<tr><th scope="row" class="num">{kk}</th>{cells}</tr>')
        tables.append(
            f'<h4>{_e(run)}</h4><table class="compact"><thead><tr><th scope="col" '
            f'class="num">K</th>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )
    contiguous = len(s.ks) > 2 and list(s.ks) == list(range(s.ks[0], s.ks[-1] + 1))
    ks = f"{s.ks[0]}–{s.ks[-1]}" if contiguous else ", ".join(str(k) for k in s.ks)
    body = (
        f'<p class="lead">The mean of each measure at every cutoff K = {ks}: how much a larger '
        "prompt (or a deeper ranking) would buy"
        + (f"; the dotted line marks K = {k}" if k in s.ks else "")
        + ".</p>"
        f'<figure>{svg}</figure><details><summary>Values</summary><div class="scroll">'
        f"{''.join(tables)}</div></details>"
    )
    return _Section("sweep", "K-sweep", body)


def _quadrant_section(diagnoses: Sequence[Diagnosis]) -> _Section:
    from ragmeter.report import figures

    svg = figures.quadrant_figure(diagnoses)
    d0 = diagnoses[0]
    rows = []
    for d in diagnoses:
        counts = d.counts()
        matrix = d.matrix()
        means = d.means
        rows.append(
            "<tr>"
            f'<th scope="row">{_e(d.run)}</th>'
            f'<td class="num">{counts["retrieval-limited"]}</td>'
            f'<td class="num">{counts["selection-limited"]}</td>'
            f'<td class="num">{counts["fine"]}</td>'
            f'<td class="num">{counts["undefined"]}</td>'
            f'<td class="num">{matrix["proc_low"]["pct_low"]} / {matrix["proc_low"]["pct_high"]}'
            f" / {matrix['proc_high']['pct_low']} / {matrix['proc_high']['pct_high']}</td>"
            + "".join(f'<td class="num">{_num(v)}</td>' for v in means.values())
            + "</tr>"
        )
    mean_heads = "".join(f'<th scope="col" class="num">{_e(m)}</th>' for m in d0.means)
    warnings = [w for d in diagnoses for w in d.warnings]
    body = (
        f'<p class="lead">Where is the headroom? Per query, PROC@{d0.k} is the best top-'
        f"{d0.k} the candidate pool allowed (relative to all labelled passages) and "
        f"%PROC@{d0.k} the share of it the selection realized. <b>Retrieval-limited</b> "
        f"(PROC &lt; {d0.proc_threshold:g}): the evidence is not in the pool — improve the "
        f"retriever. <b>Selection-limited</b> (PROC ≥ {d0.proc_threshold:g}, %PROC &lt; "
        f"{d0.pct_threshold:g}): the pool had it, the top {d0.k} did not take it — improve "
        "reranking. A hollow marker on the x axis: PROC = 0, so %PROC is undefined.</p>"
        f"<figure>{svg}</figure>"
        '<div class="scroll"><table class="compact"><thead><tr><th scope="col">run</th>'
        '<th scope="col" class="num">retrieval-limited</th>'
        '<th scope="col" class="num">selection-limited</th>'
        '<th scope="col" class="num">fine</th><th scope="col" class="num">undefined</th>'
        '<th scope="col" class="num" title="PROC low/%PROC low, PROC low/%PROC high, PROC '
        'high/%PROC low, PROC high/%PROC high">2×2 matrix (LL / LH / HL / HH)</th>'
        f"{mean_heads}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        + "".join(f'<p class="warning">{_e(w)}</p>' for w in warnings)
    )
    return _Section("quadrant", "PROC vs %PROC: retrieval or selection?", body)


def label_agreement_section(board: LeaderboardAgreement, a: str, b: str) -> _Section:
    """The runs' scores under two label sets, the rank correlations and their intervals."""
    from ragmeter.report import figures

    svg = figures.label_agreement_figure(board, a, b)
    rows = []
    for m in board.measures:
        cells = []
        for name, value in (
            ("kendall_tau", m.kendall_tau.statistic),
            ("spearman", m.spearman.statistic),
            ("tau_ap", m.tau_ap.value),
        ):
            low, high = m.ci[name].to_list()
            cells.append(f'<td class="num">{_num(value, 3)} [{_num(low, 3)}, {_num(high, 3)}]</td>')
        big = m.largest_change
        moved = f"{_e(big.name)} {big.rank_a} → {big.rank_b}" if big.shift else "none"
        rows.append(
            f'<tr><th scope="row">{_e(m.measure)}</th>{"".join(cells)}'
            f'<td class="num">{_e(m.tau_ap.variant)}</td><td>{moved}</td></tr>'
        )
    notes = board.coverage.notes(a, b)
    body = (
        f'<p class="lead">Do the runs rank alike under {_e(a)} (the reference) and {_e(b)}? '
        "Each point is a run; on the diagonal both label sets give it the same score. "
        f"Intervals: {board.level:.0%} percentile bootstrap over queries ({board.resamples:,} "
        f"resamples, seed {board.seed}), the same draws for both label sets. τ_AP weighs "
        "swaps near the top more; with tied scores it is τ_AP-b.</p>"
        f"<figure>{svg}</figure>"
        '<div class="scroll"><table class="compact"><thead><tr><th scope="col">measure</th>'
        '<th scope="col" class="num">Kendall τ-b</th><th scope="col" class="num">Spearman ρ'
        '</th><th scope="col" class="num">τ_AP</th><th scope="col" class="num">variant</th>'
        f'<th scope="col">largest rank change</th></tr></thead><tbody>{"".join(rows)}'
        "</tbody></table></div>" + "".join(f'<p class="warning">{_e(n)}</p>' for n in notes)
    )
    return _Section("labels", "Labels: do the runs rank alike?", body)


def _distribution_section(evaluation: Evaluation, chosen: Sequence[str] | None) -> _Section:
    from ragmeter.report import figures

    every = list(chosen) if chosen is not None else [str(m) for m in evaluation.measures]
    measures = every[:MAX_DISTRIBUTION_PANELS]
    values = {r.name: {m: r.column(m) for m in measures} for r in evaluation.runs}
    svg = figures.distribution_figure(values, measures)
    most = max(len(r.query_ids) for r in evaluation.runs)
    strip = (
        "each dot is a query"
        if most <= figures.MAX_STRIP_POINTS
        else f"the dots are {figures.MAX_STRIP_POINTS} evenly spaced quantiles of the queries"
    )
    left = len(every) - len(measures)
    more = f" The first {len(measures)} measures are drawn ({left} more)." if left > 0 else ""
    body = (
        '<p class="lead">How the per-query values spread: box = quartiles with the median, '
        f"whiskers = 1.5 IQR, diamond = mean; {strip}. NA values are left out.{more}</p>"
        f"<figure>{svg}</figure>"
    )
    return _Section("distributions", "Per-query distributions", body)


# -- coverage per sub-question and worst queries --------------------------------------------

_CELL_TEXT = {"covered": "✓", "missed": "✗", "unanswerable": "–"}


def _coverage_section(cov: SubquestionCoverage) -> _Section:
    per_query = cov.per_query()
    queries = list(per_query)
    note = ""
    if len(queries) > MAX_COVERAGE_QUERIES:

        def mean_coverage(q: str) -> float:
            known = [v for v in per_query[q].values() if v is not None]
            return sum(known) / len(known) if known else math.inf

        queries = sorted(queries, key=lambda q: (mean_coverage(q), q))[:MAX_COVERAGE_QUERIES]
        note = (
            f" Showing the {MAX_COVERAGE_QUERIES} of {len(per_query)} queries with the lowest "
            "coverage (mean over the runs)."
        )
    head = "".join(f'<th scope="col" class="center">{_e(r)}</th>' for r in cov.runs)
    rows = []
    for q in queries:
        shares = "".join(f'<td class="num">{_num(per_query[q][r], 2)}</td>' for r in cov.runs)
        rows.append(f'<tr class="query"><th scope="row" colspan="2">{_e(q)}</th>{shares}</tr>')
        for row in (r for r in cov.rows if r.query_id == q):
            cells = "".join(
                f'<td class="center cell-{c}" title="{c}">{_CELL_TEXT[c]}</td>' for c in row.cells
            )
            text = _e(row.text) if row.text else f"sub-question {row.number}"
            rows.append(f'<tr><td class="num dim">{row.number}</td><td>{text}</td>{cells}</tr>')
    body = (
        f'<p class="lead">Per query, each sub-question and whether each run\'s context '
        f"({_e(cov.context)}) answers it (a passage rated ≥ {cov.tau}): ✓ covered, ✗ missed, – "
        "no judged passage answers it (not counted). The query rows give the coverage: covered "
        f"/ answerable.{note}</p>"
        '<div class="scroll"><table class="coverage"><thead><tr><th scope="col">#</th>'
        f'<th scope="col">sub-question</th>{head}</tr></thead><tbody>{"".join(rows)}'
        "</tbody></table></div>"
    )
    return _Section("coverage", "Coverage per sub-question", body)


def _grade_class(grade: int, top: int) -> str:
    """``top`` for the highest grade of the qrels, ``high`` for the next one, else plain."""
    return "top" if grade >= top else ("high" if grade == top - 1 else "low")


def _missed_text(w: WorstQuery, k: int, top: int) -> str:
    if not w.n_relevant:
        return '<span class="dim">no relevant document is judged for this query</span>'
    if not w.missed:
        return f'<span class="dim">nothing: every relevant document is in the top {k}</span>'
    items = []
    for m in w.missed[:MAX_MISSED_LISTED]:
        where = "not retrieved" if m.rank is None else f"rank {m.rank}"
        items.append(
            f'<li><code>{_e(m.doc_id)}</code> <span class="grade {_grade_class(m.grade, top)}">'
            f'grade {m.grade}</span> <span class="dim">{where}</span></li>'
        )
    more = len(w.missed) - MAX_MISSED_LISTED
    if more > 0:
        items.append(f'<li class="dim">+ {more} more</li>')
    return f'<ul class="missed">{"".join(items)}</ul>'


def _worst_section(model: ReportModel) -> _Section:
    k, top, measure = model.k, model.top_grade, str(model.worst_measure)
    blocks = []
    for listed in model.worst:
        cat = listed.categories
        rows = []
        for w in listed.queries:
            category = ""
            if cat is not None:
                name = cat.get(w.query_id, "undefined")
                category = f'<td><span class="tag {name}">{_e(name)}</span></td>'
            rows.append(
                f'<tr><th scope="row">{_e(w.query_id)}</th><td class="num">{_num(w.value)}</td>'
                f'{category}<td class="num">{len(w.missed)} / {w.n_relevant}</td>'
                f"<td>{_missed_text(w, k, top)}</td></tr>"
            )
        cat_head = '<th scope="col">diagnosis</th>' if cat is not None else ""
        blocks.append(
            f"<h3>{_e(listed.run)}</h3>"
            '<div class="scroll"><table class="worst"><thead><tr><th scope="col">query</th>'
            f'<th scope="col" class="num">{_e(measure)}</th>{cat_head}'
            f'<th scope="col" class="num">missed / relevant</th>'
            f'<th scope="col">relevant documents not in the top {k}</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    body = (
        f'<p class="lead">Per run, the {model.worst_count} queries with the lowest '
        f"{_e(measure)} (NA left out), with their relevant documents (grade ≥ "
        f"{max(model.rel_level, 0)}) that did not reach the top {k}, highest grade first: "
        "ranked lower, or not retrieved at all.</p>" + "".join(blocks)
    )
    return _Section("worst", "Worst queries and what they missed", body)


# -- the page --------------------------------------------------------------------------------

_CSS = """
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--soft:#f6f8fa;--accent:#0a58a5;
--better:#116329;--better-bg:#dafbe1;--worse:#a40e26;--worse-bg:#ffebe9;--up:#7d4e00;
--up-bg:#fff8c5}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:#fff;font:15px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,"Liberation Sans",sans-serif}
header{background:var(--soft);border-bottom:1px solid var(--line);padding:24px 0 12px}
.wrap{max-width:1240px;margin:0 auto;padding:0 20px}
h1{font-size:26px;margin:0 0 6px}
h2{font-size:20px;margin:40px 0 8px;padding-top:8px;border-top:1px solid var(--line)}
h3{font-size:16px;margin:22px 0 6px}
h4{font-size:14px;margin:14px 0 4px}
dl.inputs{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0;
font-size:14px}
dl.inputs dt{color:var(--muted)}dl.inputs dd{margin:0;overflow-wrap:anywhere}
nav{font-size:14px;margin-top:10px}nav a{color:var(--accent);margin-right:14px;
text-decoration:none}nav a:hover{text-decoration:underline}
.lead{color:#333;max-width:900px}
.note{color:var(--muted);font-size:13px;margin:6px 0}
.warning{background:#fff8c5;border-left:4px solid #d4a72c;padding:6px 10px;font-size:13px;
margin:6px 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:8px 0;font-size:14px}
th,td{border-bottom:1px solid var(--line);padding:6px 10px;text-align:left;vertical-align:top}
thead th{background:var(--soft);border-bottom:2px solid var(--line);font-weight:600;
white-space:nowrap}
tbody th{font-weight:600;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums}.center{text-align:center}
table.summary{font-size:13.5px}table.summary td,table.summary th{padding:5px 8px}
.mean{display:block;font-weight:600;white-space:nowrap}
.sub{display:block;color:var(--muted);font-size:12px;white-space:nowrap}
.badge{display:inline-block;font-size:11px;font-weight:600;color:var(--muted);
border:1px solid var(--line);border-radius:8px;padding:0 6px;margin-left:4px}
td.better{background:var(--better-bg)}td.better .mean{color:var(--better)}
td.worse{background:var(--worse-bg)}td.worse .mean{color:var(--worse)}
td.up,td.down{background:var(--up-bg)}td.up .mean,td.down .mean{color:var(--up)}
td.ns .marker,td.na .marker{color:var(--muted)}
table.compact{font-size:13px}table.compact td,table.compact th{padding:3px 8px}
figure{margin:12px 0}svg.chart{width:100%;height:auto;display:block}
details{margin:6px 0}summary{cursor:pointer;color:var(--accent);font-size:14px}
.dim{color:var(--muted)}
table.coverage tr.query th,table.coverage tr.query td{background:var(--soft);
border-top:2px solid var(--line)}
.cell-covered{background:#dafbe1;color:#116329;font-weight:700}
.cell-missed{background:#ffebe9;color:#a40e26;font-weight:700}
.cell-unanswerable{color:var(--muted)}
ul.missed{margin:0;padding:0;list-style:none;columns:2;column-gap:24px;font-size:13px}
ul.missed li{break-inside:avoid}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
font-size:12.5px}
.grade{display:inline-block;border-radius:4px;padding:0 5px;font-size:12px;font-weight:600}
.grade.top{background:#0a58a5;color:#fff}.grade.high{background:#cfe2f7;color:#0b3a6b}
.grade.low{background:#eaeef2;color:#24292f}
.tag{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;white-space:nowrap}
.tag.fine{background:#dafbe1;color:#116329}
.tag.selection-limited{background:#fff1d6;color:#7d4e00}
.tag.retrieval-limited{background:#ffe4da;color:#9a3412}
.tag.undefined{background:#eaeef2;color:#57606a}
footer{margin-top:48px;padding:12px 0 24px;color:var(--muted);font-size:13px;
border-top:1px solid var(--line);background:var(--soft)}
@media print{header{background:none}details{display:none}}
"""


def _page(
    title: str,
    evaluation: Evaluation,
    sections: Iterable[_Section],
    inputs: Sequence[tuple[str, str]],
    comparison: Comparison | None,
) -> str:
    from ragmeter import __version__

    sections = list(sections)
    described = list(inputs)
    described.append(("runs", ", ".join(r.name for r in evaluation.runs)))
    if comparison is not None:
        described.append(("baseline", comparison.baseline))
    described.append(("measures", ", ".join(str(m) for m in evaluation.measures)))
    items = "".join(f"<dt>{_e(a)}</dt><dd>{_e(b)}</dd>" for a, b in described)
    nav = "".join(f'<a href="#{s.anchor}">{_e(s.title)}</a>' for s in sections)
    warnings = "".join(f'<p class="warning">{_e(w)}</p>' for w in evaluation.warnings)
    body = "".join(
        f'<section id="{s.anchor}"><h2>{_e(s.title)}</h2>{s.body}</section>' for s in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="ragmeter {_e(__version__)}">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body>"
        f'<header><div class="wrap"><h1>{_e(title)}</h1><dl class="inputs">{items}</dl>'
        f"<nav>{nav}</nav></div></header>\n"
        f'<main class="wrap">{warnings}{body}</main>\n'
        f'<footer><div class="wrap">Made by ragmeter {_e(__version__)}. Self-contained: no '
        "script, nothing fetched; charts drawn with matplotlib.</div></footer>\n</body></html>\n"
    )
