"""Coverage of the retrieval context (SPEC §4; seed 003, CRUX).

Per query, sub-questions ``i ∈ 1..n`` and ratings ``r(d, i) ∈ {0..5}`` (−1 = unparseable, never
answerable; a passage without rating rates 0); answerable ⇔ ``r ≥ τ`` (τ = 3). ``P*`` is the
greedy required subset and ``Q_ans`` the questions it answers (see
:mod:`ragmeter.core.judgments`). The context ``Z`` is the top ``k`` of the run, where ``k`` is
(first that applies) the sample's ``metadata.k``, the measure's ``@K``, else the family's
default: ``|P*|`` per query for coverage and density (the paper's "oracle size"), 20 for
α-nDCG (ndeval's depth; ``alpha_ndcg`` is ``alpha_ndcg@20``). The name states the context:
an evaluation's ``context_k`` (``--k N``) is written into the name of a measure given
without ``@K`` (``coverage`` → ``coverage@10``), never applied behind it, so ``coverage@10``
has one value in a single evaluation, a sweep, a comparison and a report.

* ``coverage(Z) = |{i ∈ Q_ans : max_{d∈Z} r(d,i) ≥ τ}| / |Q_ans|``; NA if ``Q_ans = ∅``.
* ``alpha_ndcg@K`` (ranked coverage, Clarke et al. 2008 with sub-questions as subtopics):
  ``J(d,i) = [r(d,i) ≥ τ]``; gain at rank j ``Σ_i J(d_j,i)·(1−α)^{c_i}``, ``c_i`` = earlier
  passages answering ``i``; discount ``1/log2(j+1)``; the run is cut to its top K (default
  20; a sample's ``metadata.k`` cuts it further), which is both context and depth;
  normalised by ndeval's greedy ideal over all judged passages of the query
  (ties to the larger doc id); α = 0.5. NA if ``Q_ans = ∅``.
* ``density(Z) = [ (covered(Z)/T(Z)) / (|Q_ans|/T(P*)) ]^γ``, γ = 0.5, ``T`` = tokens of the
  space-joined passage texts (whitespace tokens by default, pluggable). Oracle context → 1.
  NA if ``Q_ans = ∅`` or ``T(P*) = 0``; 0 for an empty context.
* ``answer_coverage`` / ``answer_density``: the same for a generated answer rated against the
  sub-questions (only questions of ``Q_ans`` count; density against ``T(P*)``). NA for a query
  without answer.

Reference (paper's Table 5, 10 questions, ratings 0/5): p1 answers {3,4,9}, p2 {1,5,7}, p3
{5,6,10} → P* = [p1,p2,p3], |Q_ans| = 8; coverage({p1}) = 3/8, ({p1,p2}) = 6/8, (P*) = 1;
α-nDCG@20 of [p1] = 3 / (3 + 3/log2(3) + 2.5/2) = 0.488377; density with T(P*) = 300,
covered 6, T(Z) = 600: ((6/600)/(8/300))^0.5 = 0.6123724357.
"""

from __future__ import annotations

import numpy as np

from ragmeter.core.align import Aligned
from ragmeter.core.judgments import CoverageView, ranges
from ragmeter.errors import InputError, MissingInputError
from ragmeter.measures import FloatArray, Measure, Param, register
from ragmeter.metrics._segments import BoolArray, IntArray, discount, sum_within

#: α-nDCG's default depth (ndeval's DEPTH)
ALPHA_DEPTH = 20


def _tau_check(value: int) -> str | None:
    return None if 0 <= value <= 5 else "must be 1..5 (0 = the evaluation's --tau)"


def _unit_interval(value: float) -> str | None:
    return None if 0.0 <= value < 1.0 else "must be in [0, 1)"


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be > 0"


TAU = Param(
    "tau",
    int,
    0,
    "answerability threshold r ≥ τ (0: the evaluation's --tau, default 3)",
    _tau_check,
)
ALPHA = Param("alpha", float, 0.5, "redundancy penalty α of α-nDCG", _unit_interval)
GAMMA = Param("gamma", float, 0.5, "density exponent γ", _positive)


# -- shared pieces ---------------------------------------------------------------------------


def _view(al: Aligned, m: Measure) -> CoverageView:
    if al.coverage is None:
        raise MissingInputError(f"{m} needs sub-question judgments (--judgments)")
    return al.coverage


def _tau(view: CoverageView, m: Measure) -> int:
    return int(m.param("tau")) or view.tau


def _n_answerable(al: Aligned, view: CoverageView, tau: int) -> IntArray:
    """``|Q_ans|`` per evaluated query (0 where the query is not judged)."""
    per_query = view.judgments.n_answerable(tau)
    out: IntArray = np.where(view.query >= 0, per_query[np.maximum(view.query, 0)], 0)
    return out


def _context_size(al: Aligned, view: CoverageView, tau: int, k: int | None) -> IntArray:
    """Context size per evaluated query: metadata.k > ``k`` (the measure's ``@K``) > ``|P*|``."""

    def compute() -> IntArray:
        if k is not None:
            size = np.full(al.n_queries, k, dtype=np.int64)
        else:
            oracle = view.judgments.required_size(tau)
            size = np.where(view.query >= 0, oracle[np.maximum(view.query, 0)], 0)
        if al.cutoffs is not None:
            size = np.where(al.cutoffs >= 0, al.cutoffs, size)
        return size.astype(np.int64)

    return view.cached(("context", tau, k), compute)


def _in_context(al: Aligned, size: IntArray) -> BoolArray:
    mask: BoolArray = al.ranks <= size[al.query_of_item]
    return mask


def _item_cells(view: CoverageView, items: IntArray, tau: int) -> tuple[IntArray, IntArray]:
    """For judged ``items``: (item, global question) of each of their cells rated ≥ τ."""
    jud = view.judgments
    rows = view.item_row[items]
    widths = np.diff(jud.rating_offsets)[rows]
    cells = ranges(jud.rating_offsets[rows], widths)
    hit = jud.ratings[cells] >= tau
    cell_rows = np.repeat(rows, widths)[hit]
    return np.repeat(items, widths)[hit], jud.questions_of(cells[hit], cell_rows)


def _covered_flags(al: Aligned, view: CoverageView, tau: int, size: IntArray) -> BoolArray:
    """Per global question of the judgments: some context passage rates it ≥ τ."""

    def compute() -> BoolArray:
        items = np.flatnonzero(_in_context(al, size) & (view.item_row >= 0))
        _, hit = _item_cells(view, items, tau)
        flags = np.zeros(int(view.judgments.question_offsets[-1]), dtype=bool)
        flags[hit] = True
        return flags

    return view.cached(("covered_flags", tau, size.tobytes()), compute)


def covered_questions(al: Aligned, *, tau: int | None = None, k: int | None = None) -> BoolArray:
    """Per global sub-question of the judgments (``question_offsets`` order): whether the
    context — the top ``k`` (default ``|P*|``; a sample's ``metadata.k`` first) —
    answers it (some passage rates it ≥ τ). Over the answerable questions of a query, the
    covered share is ``coverage`` (the cells behind that measure)."""
    if al.coverage is None:
        raise MissingInputError("covered_questions needs sub-question judgments")
    view = al.coverage
    t = view.tau if tau is None else tau
    return _covered_flags(al, view, t, _context_size(al, view, t, k))


def _covered(al: Aligned, view: CoverageView, tau: int, size: IntArray) -> IntArray:
    """Per evaluated query, the answerable questions some context passage answers."""

    def compute() -> IntArray:
        jud = view.judgments
        flags = _covered_flags(al, view, tau, size)
        per_query = np.bincount(jud.question_query, weights=flags, minlength=jud.n_queries)
        out: IntArray = np.where(view.query >= 0, per_query[np.maximum(view.query, 0)], 0)
        return out.astype(np.int64)

    return view.cached(("covered", tau, size.tobytes()), compute)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den``, NA where ``den == 0``."""
    out = np.full(len(num), np.nan, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


# -- context measures ------------------------------------------------------------------------


@register(
    "coverage",
    cutoff="optional",
    params=(TAU,),
    needs=("judgments",),
    summary="Share of answerable sub-questions the context answers (CRUX)",
    context=True,
    default_context="the oracle context: the top |P*| of each query",
)
def coverage(al: Aligned, m: Measure) -> FloatArray:
    """coverage(Z) = |{i ∈ Q_ans : max_{d∈Z} r(d,i) ≥ τ}| / |Q_ans|; NA if Q_ans = ∅.

    Z = the top K of ``coverage@K``; ``coverage`` alone: the top ``|P*|`` of each query.
    Reference: p1 {3,4,9}, p2 {1,5,7}, p3 {5,6,10}: coverage([p1]) = 3/8,
    ([p1, p2]) = 6/8, ([p1, p2, p3]) = 1.
    """
    view = _view(al, m)
    tau = _tau(view, m)
    size = _context_size(al, view, tau, None if m.k is None else int(m.k))
    covered = _covered(al, view, tau, size).astype(np.float64)
    return _ratio(covered, _n_answerable(al, view, tau).astype(np.float64))


@register(
    "alpha_ndcg",
    cutoff="optional",
    params=(ALPHA, TAU),
    needs=("judgments",),
    aliases=("alpha_ndcg_cut",),
    summary="Ranked coverage: α-nDCG@K over sub-questions (default K = 20)",
    context=True,
    default_context=f"the top {ALPHA_DEPTH} (ndeval's depth: alpha_ndcg = alpha_ndcg@20)",
)
def alpha_ndcg(al: Aligned, m: Measure) -> FloatArray:
    """α-nDCG@K = α-DCG@K / ideal α-DCG@K; NA if Q_ans = ∅.

    α-DCG@K = Σ_{j ≤ K} (Σ_i J(d_j,i)(1−α)^{c_{i,j}}) / log2(j+1), J(d,i) = [r(d,i) ≥ τ],
    c_{i,j} = passages above rank j answering i; the run is cut to its top K (context = depth;
    K = 20 without ``@K``; a sample's ``metadata.k`` cuts further).
    The ideal is ndeval's greedy over all judged passages (ties to the larger doc id).
    Reference: [p1] → 3 / (3 + 3/log2 3 + 2.5/2) = 0.488377 (α = 0.5).
    """
    view = _view(al, m)
    tau = _tau(view, m)
    alpha = float(m.param("alpha"))
    depth = ALPHA_DEPTH if m.k is None else int(m.k)
    size = np.minimum(_context_size(al, view, tau, depth), depth)
    jud = view.judgments

    items = np.flatnonzero(_in_context(al, size) & (view.item_row >= 0))
    cell_item, question = _item_cells(view, items, tau)
    # c = earlier context passages answering the same question: rank within (question, item)
    order = np.lexsort((cell_item, question))
    question, cell_item = question[order], cell_item[order]
    starts = np.ones(len(question), dtype=bool)
    starts[1:] = question[1:] != question[:-1]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(question)), 0))
    repeat = np.arange(len(question)) - group_start
    # (1−α)^c by repeated multiplication, as ndeval accumulates it
    powers = np.cumprod(np.concatenate([[1.0], np.full(int(repeat.max(initial=0)), 1.0 - alpha)]))
    gains = np.bincount(cell_item, weights=powers[repeat], minlength=len(al.grades))
    dcg = sum_within(gains * discount(al.ranks), al.offsets, al.lengths, size)

    ideal_per_query = jud.ideal_alpha_dcg(alpha, depth, tau)
    ideal = np.where(view.query >= 0, ideal_per_query[np.maximum(view.query, 0)], 0.0)
    return _ratio(dcg, ideal)


def _context_tokens(al: Aligned, view: CoverageView, m: Measure, size: IntArray) -> FloatArray:
    """``T(Z)`` per evaluated query: tokens of the space-joined texts of the context."""
    corpus = view.need_corpus(str(m))
    items = np.flatnonzero(_in_context(al, size))

    def texts_of_items() -> tuple[IntArray, object]:
        import pyarrow as pa

        from ragmeter import _accel

        doc_ids = view.item_doc_ids.take(_accel.indices(items))
        pos = corpus.lookup(doc_ids)
        missing = np.flatnonzero(pos < 0)
        texts = corpus.texts.take(_accel.indices(np.maximum(pos, 0))) if len(items) else None
        if len(missing):
            if view.item_texts is None:
                i = int(items[missing[0]])
                q = al.query_ids[al.query_of_item[i]]
                raise InputError(
                    f"query '{q}': doc '{view.item_doc_ids[i].as_py()}' is not in the corpus; "
                    "density needs the text of every passage of the context",
                    source=corpus.name,
                )
            run_texts = view.item_texts.take(_accel.indices(items)).to_pylist()
            merged = texts.to_pylist() if texts is not None else []
            for j in missing.tolist():
                merged[j] = run_texts[j]
            texts = pa.array(merged, type=pa.string())
        return items, texts

    return view.cached(
        ("context_tokens", size.tobytes()), lambda: _tokens(al, view, texts_of_items())
    )


def _tokens(al: Aligned, view: CoverageView, found: tuple[IntArray, object]) -> FloatArray:
    import pyarrow as pa

    from ragmeter.core.judgments import count_tokens

    items, texts = found
    if texts is None:
        return np.zeros(al.n_queries, dtype=np.float64)
    assert isinstance(texts, pa.Array)
    query = al.query_of_item[items]
    if view.token_counter is None:
        # whitespace tokens of a space-joined text = the sum over its passages
        counts = count_tokens(texts)
        return np.bincount(query, weights=counts, minlength=al.n_queries).astype(np.float64)
    joined = _join_per_query(query, texts.to_pylist(), al.n_queries)
    return np.array([float(view.token_counter(t)) if t else 0.0 for t in joined], dtype=np.float64)


def _join_per_query(query: IntArray, texts: list[str | None], n: int) -> list[str]:
    parts: list[list[str]] = [[] for _ in range(n)]
    for q, t in zip(query.tolist(), texts, strict=True):
        parts[q].append(t or "")
    return [" ".join(p) for p in parts]


def _oracle_tokens(al: Aligned, view: CoverageView, m: Measure, tau: int) -> FloatArray:
    """``T(P*)`` per evaluated query."""

    def compute() -> FloatArray:
        from ragmeter import _accel

        corpus = view.need_corpus(str(m))
        jud = view.judgments
        _, rows = jud.required(tau)
        pos = corpus.lookup(jud.doc_ids.take(_accel.indices(rows)))
        missing = np.flatnonzero(pos < 0)
        if len(missing):
            r = int(rows[missing[0]])
            raise InputError(
                f"query '{jud.query_ids[jud.row_query[r]]}': required passage "
                f"'{jud.doc_ids[r].as_py()}' is not in the corpus; density needs T(P*)",
                source=corpus.name,
            )
        query = jud.row_query[rows]
        if view.token_counter is None:
            counts = corpus.token_counts(pos)
            per_query = np.bincount(query, weights=counts, minlength=jud.n_queries)
        else:
            texts = corpus.texts.take(_accel.indices(pos)).to_pylist()
            joined = _join_per_query(query, texts, jud.n_queries)
            per_query = np.array(
                [float(view.token_counter(t)) if t else 0.0 for t in joined], dtype=np.float64
            )
        out: FloatArray = np.where(view.query >= 0, per_query[np.maximum(view.query, 0)], 0.0)
        return out

    return view.cached(("oracle_tokens", tau), compute)


def _density(
    covered: FloatArray, tokens: FloatArray, n_ans: FloatArray, oracle: FloatArray, gamma: float
) -> FloatArray:
    """[(covered/T) / (|Q_ans|/T(P*))]^γ; NA if |Q_ans| = 0 or T(P*) = 0; 0 if T = 0."""
    defined = (n_ans > 0) & (oracle > 0)
    out = np.full(len(covered), np.nan, dtype=np.float64)
    has_text = defined & (tokens > 0)
    out[defined & ~has_text] = 0.0
    ratio = (covered[has_text] / tokens[has_text]) / (n_ans[has_text] / oracle[has_text])
    out[has_text] = ratio**gamma
    return out


@register(
    "density",
    cutoff="optional",
    params=(GAMMA, TAU),
    needs=("judgments", "corpus"),
    summary="Coverage per token of the context relative to the oracle context (CRUX)",
    context=True,
    default_context="the oracle context: the top |P*| of each query",
)
def density(al: Aligned, m: Measure) -> FloatArray:
    """density(Z) = [(covered(Z)/T(Z)) / (|Q_ans|/T(P*))]^γ, γ = 0.5.

    T = tokens of the space-joined passage texts (whitespace tokens unless a token counter
    is given). NA if Q_ans = ∅ or T(P*) = 0; 0 for an empty context. The oracle context
    (P* itself, any order) scores exactly 1. Reference: |Q_ans| = 8, T(P*) = 300, covered 6,
    T(Z) = 600 → (0.01 / (8/300))^0.5 = 0.6123724357.
    """
    view = _view(al, m)
    tau = _tau(view, m)
    size = _context_size(al, view, tau, None if m.k is None else int(m.k))
    covered = _covered(al, view, tau, size).astype(np.float64)
    tokens = _context_tokens(al, view, m, size)
    n_ans = _n_answerable(al, view, tau).astype(np.float64)
    return _density(
        covered, tokens, n_ans, _oracle_tokens(al, view, m, tau), float(m.param("gamma"))
    )


# -- generated answers -----------------------------------------------------------------------


def _answer_rows(al: Aligned, view: CoverageView, m: Measure) -> IntArray:
    """Answer row of each evaluated query (−1 where none); checks the rating widths."""

    def compute() -> IntArray:
        answers = view.need_answers(str(m))
        index = {str(q): i for i, q in enumerate(answers.query_ids.tolist())}
        rows = np.fromiter(
            (index.get(str(q), -1) for q in al.query_ids.tolist()),
            dtype=np.int64,
            count=al.n_queries,
        )
        jud = view.judgments
        judged = (rows >= 0) & (view.query >= 0)
        got = np.diff(answers.offsets)[rows[judged]]
        want = jud.widths[view.query[judged]]
        bad = np.flatnonzero(got != want)
        if len(bad):
            r = int(rows[judged][bad[0]])
            raise InputError(
                f"{int(got[bad[0]])} ratings for query '{answers.query_ids[r]}', which has "
                f"{int(want[bad[0]])} sub-questions; expected one rating per sub-question",
                source=answers.source,
                line=int(answers.lines[r]) if answers.lines is not None else None,
                field="ratings",
            )
        return rows

    return view.cached("answer_rows", compute)


def _answer_covered(al: Aligned, view: CoverageView, m: Measure, tau: int) -> FloatArray:
    """Per evaluated query: questions of Q_ans the answer answers (NaN without answer)."""
    answers = view.need_answers(str(m))
    jud = view.judgments
    rows = _answer_rows(al, view, m)
    ok = np.flatnonzero((rows >= 0) & (view.query >= 0))
    lengths = np.diff(answers.offsets)[rows[ok]]
    cells = ranges(answers.offsets[rows[ok]], lengths)
    # position of each cell within its answer (no query with an answer: no cell)
    starts = (np.cumsum(lengths) - lengths).astype(np.int64)
    local = np.arange(len(cells), dtype=np.int64) - np.repeat(starts, lengths)
    question = np.repeat(jud.question_offsets[view.query[ok]], lengths) + local
    hit = (answers.ratings[cells] >= tau) & jud.answerable(tau)[question]
    owner = np.repeat(ok, lengths)
    out = np.full(al.n_queries, np.nan, dtype=np.float64)
    out[ok] = 0.0
    out += np.bincount(owner, weights=hit, minlength=al.n_queries)
    return out


@register(
    "answer_coverage",
    params=(TAU,),
    needs=("judgments", "answers"),
    summary="Share of answerable sub-questions a generated answer answers",
)
def answer_coverage(al: Aligned, m: Measure) -> FloatArray:
    """answer_coverage = |{i ∈ Q_ans : r(answer, i) ≥ τ}| / |Q_ans|; NA if Q_ans = ∅ or the
    query has no answer."""
    view = _view(al, m)
    tau = _tau(view, m)
    covered = _answer_covered(al, view, m, tau)
    return _ratio(covered, _n_answerable(al, view, tau).astype(np.float64))


@register(
    "answer_density",
    params=(GAMMA, TAU),
    needs=("judgments", "answers", "corpus"),
    summary="Coverage per token of a generated answer relative to the oracle context",
)
def answer_density(al: Aligned, m: Measure) -> FloatArray:
    """answer_density = [(covered(A)/T(A)) / (|Q_ans|/T(P*))]^γ; NA if Q_ans = ∅, T(P*) = 0
    or no answer; 0 for an empty answer text."""
    from ragmeter.core.judgments import count_tokens

    view = _view(al, m)
    tau = _tau(view, m)
    answers = view.need_answers(str(m))
    covered = _answer_covered(al, view, m, tau)
    rows = _answer_rows(al, view, m)
    has = rows >= 0
    tokens = np.zeros(al.n_queries, dtype=np.float64)
    from ragmeter import _accel

    texts = answers.texts.take(_accel.indices(rows[has]))
    if view.token_counter is None:
        tokens[has] = count_tokens(texts)
    else:
        tokens[has] = count_tokens(texts, view.token_counter)
    n_ans = _n_answerable(al, view, tau).astype(np.float64)
    out = _density(
        np.nan_to_num(covered),
        tokens,
        n_ans,
        _oracle_tokens(al, view, m, tau),
        float(m.param("gamma")),
    )
    out[~has] = np.nan
    return out
