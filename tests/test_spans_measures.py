"""The span measures against chunking_evaluation's scorer, ported directly below, on hand
cases and random cases; the set variants by hand; properties with hypothesis.

The port (``_sum_of_ranges`` … ``_omega_reference``) follows
chunking_evaluation/evaluation_framework/base_evaluation.py of
https://github.com/brandonstarxel/chunking_evaluation (commit d451fc4), whose licence is:

    MIT License

    Copyright (c) 2024 Brandon Smith

    Permission is hereby granted, free of charge, to any person obtaining a copy of this
    software and associated documentation files (the "Software"), to deal in the Software
    without restriction, including without limitation the rights to use, copy, modify, merge,
    publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
    to whom the Software is furnished to do so, subject to the following conditions:

    The above copyright notice and this permission notice shall be included in all copies or
    substantial portions of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
    INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
    PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
    FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
    OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
    DEALINGS IN THE SOFTWARE.

The per-question bodies of ``_scores_from_dataset_and_retrievals`` and
``_full_precision_score`` are kept line for line, taking one question's references and
retrieved chunk metadata instead of a DataFrame row and a Chroma query result.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import Run, evaluate
from ragmeter.core.spans import ChunkTable, SpanInputs, SpanLabels

# -- the port ------------------------------------------------------------------------------


def _sum_of_ranges(ranges: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in ranges)


def _union_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    sorted_ranges = sorted(ranges, key=lambda x: x[0])
    merged_ranges = [sorted_ranges[0]]
    for current_start, current_end in sorted_ranges[1:]:
        last_start, last_end = merged_ranges[-1]
        if current_start <= last_end:
            merged_ranges[-1] = (last_start, max(last_end, current_end))
        else:
            merged_ranges.append((current_start, current_end))
    return merged_ranges


def _intersect_two_ranges(
    range1: tuple[int, int], range2: tuple[int, int]
) -> tuple[int, int] | None:
    start1, end1 = range1
    start2, end2 = range2
    intersect_start = max(start1, start2)
    intersect_end = min(end1, end2)
    if intersect_start <= intersect_end:
        return (intersect_start, intersect_end)
    return None


def _difference(ranges: list[tuple[int, int]], target: tuple[int, int]) -> list[tuple[int, int]]:
    result = []
    target_start, target_end = target
    for start, end in ranges:
        if end < target_start or start > target_end:
            result.append((start, end))
        elif start < target_start and end > target_end:
            result.append((start, target_start))
            result.append((target_end, end))
        elif start < target_start:
            result.append((start, target_start))
        elif end > target_end:
            result.append((target_end, end))
    return result


Meta = dict[str, Any]


def _scores_reference(
    references: list[Meta], corpus_id: str, metadatas: list[Meta], k: int
) -> tuple[float, float, float]:
    """(iou, recall, precision) of one question, as ``_scores_from_dataset_and_retrievals``."""
    numerator_sets: list[tuple[int, int]] = []
    denominator_chunks_sets: list[tuple[int, int]] = []
    unused_highlights = [(x["start_index"], x["end_index"]) for x in references]
    for metadata in metadatas[:k]:
        chunk_start, chunk_end, chunk_corpus_id = (
            metadata["start_index"],
            metadata["end_index"],
            metadata["corpus_id"],
        )
        if chunk_corpus_id != corpus_id:
            continue
        for ref_obj in references:
            ref_start, ref_end = int(ref_obj["start_index"]), int(ref_obj["end_index"])
            intersection = _intersect_two_ranges((chunk_start, chunk_end), (ref_start, ref_end))
            if intersection is not None:
                unused_highlights = _difference(unused_highlights, intersection)
                numerator_sets = _union_ranges([intersection, *numerator_sets])
                denominator_chunks_sets = _union_ranges(
                    [(chunk_start, chunk_end), *denominator_chunks_sets]
                )
    numerator_value = _sum_of_ranges(numerator_sets) if numerator_sets else 0
    recall_denominator = _sum_of_ranges([(x["start_index"], x["end_index"]) for x in references])
    precision_denominator = _sum_of_ranges(
        [(x["start_index"], x["end_index"]) for x in metadatas[:k]]
    )
    iou_denominator = precision_denominator + _sum_of_ranges(unused_highlights)
    return (
        numerator_value / iou_denominator,
        numerator_value / recall_denominator,
        numerator_value / precision_denominator,
    )


def _omega_reference(references: list[Meta], corpus_id: str, chunk_metadatas: list[Meta]) -> float:
    """Precision Ω of one question, as ``_full_precision_score``."""
    ioc_score = 0.0
    numerator_sets: list[tuple[int, int]] = []
    denominator_chunks_sets: list[tuple[int, int]] = []
    unused_highlights = [(x["start_index"], x["end_index"]) for x in references]
    for metadata in chunk_metadatas:
        chunk_start, chunk_end, chunk_corpus_id = (
            metadata["start_index"],
            metadata["end_index"],
            metadata["corpus_id"],
        )
        if chunk_corpus_id != corpus_id:
            continue
        for ref_obj in references:
            ref_start, ref_end = int(ref_obj["start_index"]), int(ref_obj["end_index"])
            intersection = _intersect_two_ranges((chunk_start, chunk_end), (ref_start, ref_end))
            if intersection is not None:
                unused_highlights = _difference(unused_highlights, intersection)
                numerator_sets = _union_ranges([intersection, *numerator_sets])
                denominator_chunks_sets = _union_ranges(
                    [(chunk_start, chunk_end), *denominator_chunks_sets]
                )
    denominator_sets = _union_ranges(denominator_chunks_sets + unused_highlights)
    if numerator_sets:
        ioc_score = _sum_of_ranges(numerator_sets) / _sum_of_ranges(denominator_sets)
    return ioc_score


# -- ragmeter on the same inputs -----------------------------------------------------------

MEASURES = ["span_iou", "span_recall", "span_precision"]


def _ours(
    questions: list[tuple[str, list[tuple[int, int]]]],
    chunks: list[tuple[str, str, int, int]],
    rankings: list[list[str]],
    k: int,
) -> np.ndarray:
    """Values of span_iou@k, span_recall@k, span_precision@k, span_precision_omega per
    question (query id = the question's row number)."""
    spans = SpanLabels.from_rows(
        [(str(i), doc, s, e) for i, (doc, refs) in enumerate(questions) for s, e in refs]
    )
    table = ChunkTable.from_rows(chunks)
    run = Run.from_lists({str(i): r for i, r in enumerate(rankings)})
    names = [f"{m}@{k}" for m in MEASURES] + ["span_precision_omega"]
    result = evaluate(run, None, names, spans=SpanInputs(spans, table)).run
    order = [list(result.query_ids).index(str(i)) for i in range(len(questions))]
    return np.asarray(result.values[order])


def _theirs(
    questions: list[tuple[str, list[tuple[int, int]]]],
    chunks: list[tuple[str, str, int, int]],
    rankings: list[list[str]],
    k: int,
) -> np.ndarray:
    meta = {c: {"corpus_id": d, "start_index": s, "end_index": e} for c, d, s, e in chunks}
    rows = []
    for (doc, refs), ranking in zip(questions, rankings, strict=True):
        references = [{"content": "", "start_index": s, "end_index": e} for s, e in refs]
        scores = _scores_reference(references, doc, [meta[c] for c in ranking], k)
        omega = _omega_reference(references, doc, list(meta.values()))
        rows.append([*scores, omega])
    return np.array(rows)


def test_hand_case() -> None:
    """Worked by hand: document d1, spans [10, 20) and [30, 40); chunks [0, 15), [15, 30),
    [30, 45) and, in d2, [0, 10) and [10, 20)."""
    chunks = [
        ("c1", "d1", 0, 15),
        ("c2", "d1", 15, 30),
        ("c3", "d1", 30, 45),
        ("e1", "d2", 0, 10),
        ("e2", "d2", 10, 20),
    ]
    questions = [("d1", [(10, 20), (30, 40)]), ("d2", [(0, 5)])]
    rankings = [["c2", "e1", "c1", "c3"], ["e2", "e1"]]
    # q0 @2: c2 covers [15, 20) = 5 characters; e1 is another document's 10 characters
    # iou = 5 / (15 + 10 + uncovered 5 + 10) = 5/40, recall 5/20, precision 5/25;
    # Ω: all three d1 chunks touch a span, union [0, 45): 20/45.
    # q1 @2: e2 [10, 20) misses [0, 5); e1 covers it: 5 / (20 + 0), 5/5, 5/20;
    # Ω: e1 alone (e2 starts at 10 > 5): 5/10.
    want = np.array([[5 / 40, 5 / 20, 5 / 25, 20 / 45], [5 / 20, 1.0, 5 / 20, 0.5]])
    np.testing.assert_allclose(_ours(questions, chunks, rankings, 2), want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(_theirs(questions, chunks, rankings, 2), want, rtol=0, atol=1e-15)


def test_quirks_match_the_reference() -> None:
    """Overlapping chunks count twice in the precision denominator, overlapping spans twice
    in the recall denominator, and a chunk touching a span's boundary enters Ω."""
    chunks = [("a", "d", 0, 10), ("b", "d", 5, 15), ("t", "d", 15, 25), ("u", "d", 25, 35)]
    questions = [("d", [(5, 10), (8, 15)])]
    rankings = [["a", "b"]]
    ours = _ours(questions, chunks, rankings, 2)
    theirs = _theirs(questions, chunks, rankings, 2)
    np.testing.assert_array_equal(ours, theirs)
    # covered [5, 15) = 10; Σ chunks 20; Σ spans 12 (the overlap [8, 10) twice)
    assert ours[0].tolist()[:3] == [10 / 20, 10 / 12, 10 / 20]
    # Ω: a, b and t (touching at 15) enter: union [0, 25) → 10/25
    assert ours[0, 3] == 10 / 25
    set_values = evaluate(
        Run.from_lists({"0": ["a", "b"]}),
        None,
        ["span_set_recall@2", "span_set_precision@2", "span_set_iou@2", "span_set_precision_omega"],
        spans=SpanInputs(
            SpanLabels.from_rows([("0", "d", 5, 10), ("0", "d", 8, 15)]),
            ChunkTable.from_rows(chunks),
        ),
    ).run.values[0]
    # unions: spans [5, 15) = 10, chunks [0, 15) = 15; Ω without t: [0, 15) → 10/15
    assert set_values.tolist() == [1.0, 10 / 15, 10 / 15, 10 / 15]


def _random_case(
    rng: random.Random,
) -> tuple[
    list[tuple[str, list[tuple[int, int]]]], list[tuple[str, str, int, int]], list[list[str]]
]:
    lengths = {"d1": rng.randint(50, 300), "d2": rng.randint(50, 300)}
    chunks: list[tuple[str, str, int, int]] = []
    for doc, length in lengths.items():
        size, overlap = rng.randint(5, 60), rng.randint(0, 4)
        start = 0
        while start < length:
            chunks.append((f"{doc}-{len(chunks)}", doc, start, min(start + size, length)))
            start += max(size - overlap, 1)
        for _ in range(rng.randint(0, 3)):  # odd chunks: nested, overlapping
            s = rng.randint(0, length - 1)
            chunks.append((f"{doc}-x{len(chunks)}", doc, s, rng.randint(s + 1, length)))
    questions = []
    for _ in range(rng.randint(1, 6)):
        doc = rng.choice(list(lengths))
        refs = []
        for _ in range(rng.randint(1, 4)):
            s = rng.randint(0, lengths[doc] - 1)
            refs.append((s, rng.randint(s + 1, min(s + 80, lengths[doc]))))
        questions.append((doc, refs))
    ids = [c[0] for c in chunks]
    rankings = [rng.sample(ids, rng.randint(1, min(len(ids), 25))) for _ in questions]
    return questions, chunks, rankings


@pytest.mark.parametrize("seed", range(40))
def test_random_cases_match_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    questions, chunks, rankings = _random_case(rng)
    for k in (1, 3, 10, 30):
        ours = _ours(questions, chunks, rankings, k)
        theirs = _theirs(questions, chunks, rankings, k)
        np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=0, err_msg=f"K={k}")


def _set_by_characters(
    refs: list[tuple[str, int, int]], top: list[tuple[str, int, int]]
) -> tuple[float, float, float]:
    """The set variants by counting characters one by one (an independent definition)."""
    spans = {(d, x) for d, s, e in refs for x in range(s, e)}
    chars = {(d, x) for d, s, e in top for x in range(s, e)}
    both = len(spans & chars)
    return both / len(spans), (both / len(chars) if chars else 0.0), both / len(spans | chars)


@pytest.mark.parametrize("seed", range(15))
def test_set_variants_count_characters(seed: int) -> None:
    rng = random.Random(1000 + seed)
    questions, chunks, rankings = _random_case(rng)
    where = {c: (d, s, e) for c, d, s, e in chunks}
    spans = SpanLabels.from_rows(
        [(str(i), d, s, e) for i, (d, refs) in enumerate(questions) for s, e in refs]
    )
    run = Run.from_lists({str(i): r for i, r in enumerate(rankings)})
    k = rng.randint(1, 8)
    names = [f"span_set_recall@{k}", f"span_set_precision@{k}", f"span_set_iou@{k}"]
    result = evaluate(run, None, names, spans=SpanInputs(spans, ChunkTable.from_rows(chunks))).run
    for i, (doc, refs) in enumerate(questions):
        want = _set_by_characters(
            [(doc, s, e) for s, e in refs], [where[c] for c in rankings[i][:k]]
        )
        row = list(result.query_ids).index(str(i))
        np.testing.assert_allclose(result.values[row], want, rtol=1e-15, atol=0)


# -- properties ----------------------------------------------------------------------------

ALL = [
    "span_recall@{k}",
    "span_graded_recall@{k}",
    "span_precision@{k}",
    "span_iou@{k}",
    "span_set_recall@{k}",
    "span_set_precision@{k}",
    "span_set_iou@{k}",
    "span_precision_omega",
    "span_set_precision_omega",
]


@st.composite
def _cases(draw: st.DrawFn) -> tuple[Any, ...]:
    n_chunks = draw(st.integers(1, 12))
    chunks = []
    for i in range(n_chunks):
        s = draw(st.integers(0, 60))
        chunks.append(
            (f"c{i}", draw(st.sampled_from(["d1", "d2"])), s, s + draw(st.integers(0, 30)))
        )
    spans = []
    for q in ("q1", "q2"):
        for _ in range(draw(st.integers(1, 3))):
            s = draw(st.integers(0, 80))
            spans.append((q, draw(st.sampled_from(["d1", "d2"])), s, s + draw(st.integers(1, 20))))
    ids = [c[0] for c in chunks]
    ranking = draw(st.permutations(ids))
    return chunks, spans, ranking, draw(st.integers(1, n_chunks))


@settings(max_examples=60, deadline=None)
@given(_cases())
def test_bounds_and_what_beyond_k_does_not_change(case: tuple[Any, ...]) -> None:
    chunks, spans, ranking, k = case
    table, labels = ChunkTable.from_rows(chunks), SpanLabels.from_rows(spans)
    names = [n.format(k=k) for n in ALL]
    tail = ranking[k:]
    shuffled = list(ranking[:k]) + list(reversed(tail))
    runs = {
        "a": Run.from_lists({"q1": ranking, "q2": ranking[::-1]}),
        "b": Run.from_lists({"q1": shuffled, "q2": ranking[::-1]}),
    }
    result = evaluate(runs, None, names, spans=SpanInputs(labels, table))
    a, b = result.runs[0].values, result.runs[1].values
    assert ((a >= 0) & (a <= 1)).all()
    np.testing.assert_array_equal(a, b)  # the order of the chunks beyond K is irrelevant
    by_name = dict(zip(names, a.T, strict=True))
    # each character once: the set recall is at least the plain one (overlapping spans),
    # the set precision at least the plain one (overlapping chunks)
    assert (by_name[f"span_set_recall@{k}"] >= by_name[f"span_recall@{k}"] - 1e-12).all()
    assert (by_name[f"span_set_precision@{k}"] >= by_name[f"span_precision@{k}"] - 1e-12).all()
    # a touching chunk only widens Ω's denominator
    assert (by_name["span_set_precision_omega"] >= by_name["span_precision_omega"] - 1e-12).all()


@settings(max_examples=40, deadline=None)
@given(_cases())
def test_recall_grows_with_k(case: tuple[Any, ...]) -> None:
    chunks, spans, ranking, _ = case
    names = [f"span_recall@{k}" for k in range(1, len(ranking) + 1)]
    values = evaluate(
        Run.from_lists({"q1": ranking, "q2": ranking}),
        None,
        names,
        spans=SpanInputs(SpanLabels.from_rows(spans), ChunkTable.from_rows(chunks)),
    ).run.values
    assert (np.diff(values, axis=1) >= -1e-12).all()


def test_graded_recall_by_hand() -> None:
    """Spans [0, 10) grade 3 and [20, 30) grade 1; the top chunk covers [5, 25): graded
    recall (3·5 + 1·5) / (3·10 + 1·10) = 0.5, plain recall 10/20 = 0.5; the second chunk
    [0, 5) adds 3·5: 35/40."""
    spans = SpanLabels.from_rows([("q", "d", 0, 10, 3), ("q", "d", 20, 30, 1)])
    table = ChunkTable.from_rows([("a", "d", 5, 25), ("b", "d", 0, 5)])
    run = Run.from_lists({"q": ["a", "b"]})
    names = ["span_graded_recall@1", "span_graded_recall@2", "span_recall@2"]
    values = evaluate(run, None, names, spans=SpanInputs(spans, table)).run.values[0]
    assert values.tolist() == [0.5, 35 / 40, 15 / 20]


# -- spans to chunk qrels ------------------------------------------------------------------

QRELS_SPANS = [("q1", "d1", 10, 20, 2), ("q1", "d1", 30, 40, 1), ("q2", "d2", 0, 5, 1)]
QRELS_CHUNKS = [
    ("c1", "d1", 0, 15),
    ("c2", "d1", 15, 30),
    ("c3", "d1", 30, 45),
    ("t", "d1", 20, 30),  # touches both spans, shares no character
    ("e1", "d2", 0, 10),
    ("e2", "d2", 10, 20),
]


@pytest.mark.parametrize(
    ("rule", "grade", "want"),
    [
        # c1 holds [10, 15): 5 of span 1's 10 characters, 5 of its own 15 are evidence
        ("any", "max", {"q1": {"c1": 2, "c2": 2, "c3": 1}, "q2": {"e1": 1}}),
        ("span=0.5", "max", {"q1": {"c1": 2, "c2": 2, "c3": 1}, "q2": {"e1": 1}}),
        ("span=0.6", "max", {"q1": {"c3": 1}, "q2": {"e1": 1}}),
        ("chunk=0.4", "max", {"q1": {"c3": 1}, "q2": {"e1": 1}}),
        # overlap: ceil(3 · evidence / length): c1 5/15 → 1, c3 10/15 → 2, e1 5/10 → 2
        ("any", "overlap", {"q1": {"c1": 1, "c2": 1, "c3": 2}, "q2": {"e1": 2}}),
    ],
)
def test_chunk_qrels_by_hand(rule: str, grade: str, want: dict[str, dict[str, int]]) -> None:
    from ragmeter.core.spans import ChunkRule, chunk_qrels

    spans = SpanLabels.from_rows(QRELS_SPANS)  # type: ignore[arg-type]
    qrels = chunk_qrels(spans, ChunkTable.from_rows(QRELS_CHUNKS), ChunkRule.parse(rule, grade))
    assert qrels.qrels.to_dict() == want


def test_chunk_rule_errors() -> None:
    from ragmeter.core.spans import ChunkRule
    from ragmeter.errors import InputError

    for bad in ("span", "span=0", "chunk=1.5", "most", "any=1"):
        with pytest.raises(InputError, match="--rule"):
            ChunkRule.parse(bad)
    with pytest.raises(InputError, match="--grade"):
        ChunkRule.parse("any", "min")


def test_to_qrels_grade_max_takes_the_spans_that_make_the_chunk_relevant() -> None:
    """Item 19: with span=F a chunk's grade is the largest grade of the spans it holds F of,
    not of every span it overlaps; with any, of every span it shares a character with."""
    from ragmeter.core.spans import ChunkRule, chunk_qrels

    # c holds all of the grade-1 span [0, 10) and 2 of the 10 characters of the grade-5 one
    spans = SpanLabels.from_rows([("q", "d", 0, 10, 1), ("q", "d", 18, 28, 5)])
    table = ChunkTable.from_rows([("c", "d", 0, 20), ("z", "d", 20, 40)])
    held = chunk_qrels(spans, table, ChunkRule.parse("span=0.5", "max")).qrels.to_dict()
    assert held == {"q": {"c": 1, "z": 5}}  # z holds 8 of the grade-5 span's 10
    touched = chunk_qrels(spans, table, ChunkRule.parse("any", "max")).qrels.to_dict()
    assert touched == {"q": {"c": 5, "z": 5}}


def test_an_empty_chunk_inside_a_span_is_not_relevant() -> None:
    # [5, 5) lies inside the span [0, 10) but holds no character: no rule makes it
    # relevant (chunk=F once passed it, and --grade overlap divided by its length 0)
    from ragmeter.core.spans import ChunkRule, chunk_qrels

    spans = SpanLabels.from_rows([("q", "d", 0, 10)])
    table = ChunkTable.from_rows([("e", "d", 5, 5), ("c", "d", 0, 10)])
    for rule in ("any", "span=0.5", "chunk=0.5"):
        for grade in ("max", "overlap"):
            made = chunk_qrels(spans, table, ChunkRule.parse(rule, grade)).qrels.to_dict()
            assert made == {"q": {"c": 1 if grade == "max" else 3}}, (rule, grade)


def test_pairs_do_not_depend_on_how_keys_are_combined() -> None:
    """The (span, chunk) search combines document and offset into one int64 key; where
    documents × offsets would overflow it, offsets are replaced by their ranks: the pairs
    found are the same."""
    from dataclasses import replace

    from ragmeter.core.spans import span_chunk_pairs, span_view

    rng = random.Random(7)
    chunks = [
        (f"c{i}", f"d{i % 3}", s, s + rng.randint(0, 9)) for i, s in enumerate(range(0, 90, 3))
    ]
    spans = [("q", f"d{rng.randint(0, 2)}", s, s + rng.randint(1, 12)) for s in range(0, 80, 7)]
    view = span_view(
        SpanLabels.from_rows(spans), ChunkTable.from_rows(chunks), ["q"], pa_empty(), run_name=""
    )
    huge = replace(view, table_doc=view.table_doc * 2**56, span_doc=view.span_doc * 2**56)
    for strict in (True, False):
        small = sorted(
            zip(*(a.tolist() for a in span_chunk_pairs(view, strict=strict)), strict=True)
        )
        large = sorted(
            zip(*(a.tolist() for a in span_chunk_pairs(huge, strict=strict)), strict=True)
        )
        assert small == large and small


def pa_empty() -> Any:
    import pyarrow as pa

    return pa.array([], type=pa.string())
