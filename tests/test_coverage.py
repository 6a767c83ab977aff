"""Coverage of the retrieval context (SPEC §4, CRUX): reference values, NA rules, properties,
and α-nDCG against ndeval (through ir_measures/pyndeval) when it is installed."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragmeter import Run, _accel, evaluate
from ragmeter.cli import app
from ragmeter.core.judgments import Answers, Corpus, Judgments
from ragmeter.errors import MissingInputError
from ragmeter.measures import parse_measure

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "crux"


def vec(answers: set[int], n: int = 10, value: int = 5) -> list[int]:
    return [value if i in answers else 0 for i in range(1, n + 1)]


# The paper's Table 5: 10 questions; p1 answers {3,4,9}, p2 {1,5,7}, p3 {5,6,10}.
TABLE5 = {"q": {"p1": vec({3, 4, 9}), "p2": vec({1, 5, 7}), "p3": vec({5, 6, 10})}}
# 100 / 100 / 100 tokens for P*, 300 for a filler passage
CORPUS = {"p1": "a " * 100, "p2": "b " * 100, "p3": "c " * 100, "x": "d " * 300}


def means(ranked: list[str], measures: list[str], **kw: object) -> dict[str, float | None]:
    judgments = Judgments.from_dict(TABLE5)
    run = Run.from_lists({"q": ranked})
    return evaluate(
        run, None, measures, judgments=judgments, corpus=Corpus.from_dict(CORPUS), **kw
    ).run.means()  # type: ignore[arg-type]


def test_required_subset_greedy_order() -> None:
    j = Judgments.from_dict(TABLE5)
    _offsets, rows = j.required()
    assert [j.doc_ids[int(r)].as_py() for r in rows] == ["p1", "p2", "p3"]
    assert j.n_answerable().tolist() == [8]  # questions 2 and 8 unanswered


def test_greedy_prefers_count_then_input_order() -> None:
    # step 1: a answers 2 uncovered questions (score 2.1), b and c one each (1.1);
    # step 2: question 1 left, b and c tie at 1.1 → the first in input order (b).
    # (Any passage answering an uncovered question also has a positive rating on it, so the
    # 0.1 bonus never separates candidates that cover something.)
    j = Judgments.from_dict({"q": {"b": [5, 0, 0], "a": [0, 4, 4], "c": [3, 0, 0]}})
    _, rows = j.required()
    assert [j.doc_ids[int(r)].as_py() for r in rows] == ["a", "b"]
    assert j.labels().tolist() == [3, 3, 1]  # c: 3 < 5, 0 < 4, 0 < 4 → fully redundant


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [(["p1"], 0.375), (["p1", "p2"], 0.75), (["p1", "p2", "p3"], 1.0), (["p3", "p2", "p1"], 1.0)],
)
def test_coverage_reference(ranked: list[str], expected: float) -> None:
    assert means(ranked, ["coverage@3"])["coverage@3"] == expected


def test_alpha_ndcg_reference() -> None:
    # ideal: all three gain 3 at rank 1 (tie → larger doc id p3), then p1 (3; p2 overlaps p3
    # on question 5 → 2.5), then p2 (2.5): 3 + 3/log2(3) + 2.5/2
    ideal = 3 + 3 / math.log2(3) + 2.5 / 2
    assert means(["p1", "p2", "p3"], ["alpha_ndcg@20"])["alpha_ndcg@20"] == pytest.approx(1.0)
    value = means(["p1"], ["alpha_ndcg@20"], context_k=20)["alpha_ndcg@20"]
    assert value == pytest.approx(3 / ideal)
    assert value == pytest.approx(0.488377, abs=5e-7)


def test_density_reference() -> None:
    # |Q_ans| = 8, T(P*) = 300; context [p1, x, p2]: covered 6, T(Z) = 100 + 300 + 100 = 500
    # context_k fills @K into the name: density is then density@3
    got = means(["p1", "x", "p2"], ["density"], context_k=3)["density@3"]
    assert got == pytest.approx(((6 / 500) / (8 / 300)) ** 0.5)
    # SPEC: covered 6, T(Z) = 600 → 0.6123724357 (p1, p2 and a 400-token filler)
    corpus = dict(CORPUS, x="d " * 400)
    run = Run.from_lists({"q": ["p1", "x", "p2"]})
    ev = evaluate(
        run,
        None,
        ["density"],
        judgments=Judgments.from_dict(TABLE5),
        corpus=Corpus.from_dict(corpus),
        context_k=3,
    )
    assert ev.run.means()["density@3"] == pytest.approx(0.6123724357, abs=1e-10)


def test_oracle_context_scores_one() -> None:
    got = means(["p2", "p3", "p1", "x"], ["coverage", "density", "alpha_ndcg@20"])
    assert got["coverage"] == 1.0  # oracle size |P*| = 3 cuts "x"
    assert got["density"] == pytest.approx(1.0)


def test_unparseable_ratings_are_never_answerable() -> None:
    j = Judgments.from_dict({"q": {"a": [-1, 5], "b": [-1, -1]}, "r": {"c": [-1, 2]}})
    assert j.n_answerable().tolist() == [1, 0]
    run = Run.from_lists({"q": ["b", "a"], "r": ["c"]})
    ev = evaluate(run, None, ["coverage@1", "coverage@2", "alpha_ndcg@20"], judgments=j)
    per = ev.run.per_query()
    assert per["q"]["coverage@1"] == 0.0
    assert per["q"]["coverage@2"] == 1.0
    assert per["r"] == {"coverage@1": None, "coverage@2": None, "alpha_ndcg@20": None}


def test_query_without_answerable_question_is_na_and_counted() -> None:
    j = Judgments.from_dict({"q": {"a": [5]}, "z": {"b": [2, 1]}})
    ev = evaluate(Run.from_lists({"q": ["a"], "z": ["b"]}), None, ["coverage"], judgments=j)
    agg = ev.run.aggregates()["coverage"]
    assert (agg.n, agg.n_defined, agg.value) == (2, 1, 1.0)


def test_labels_required_partly_fully() -> None:
    j = Judgments.from_dict(
        {"q": {"p1": [5, 0, 0], "p2": [0, 5, 2], "r1": [4, 0, 1], "r2": [0, 0, 2], "r3": [5, 0, 0]}}
    )
    # P* = [p1, p2]; max over P* = [5, 5, 2]; r1 strictly below everywhere → fully (1);
    # r2 ties on question 3 → partly (2); r3 ties on question 1 → partly (2)
    assert j.labels().tolist() == [3, 3, 1, 2, 2]


def test_missing_inputs() -> None:
    run = Run.from_lists({"q": ["p1"]})
    with pytest.raises(MissingInputError, match="judgments"):
        evaluate(run, {"q": {"p1": 1}}, ["coverage"])
    with pytest.raises(MissingInputError, match="corpus"):
        evaluate(run, None, ["density"], judgments=Judgments.from_dict(TABLE5))
    with pytest.raises(MissingInputError, match="answers"):
        evaluate(run, None, ["answer_coverage"], judgments=Judgments.from_dict(TABLE5))


def test_answers() -> None:
    j = Judgments.from_dict(TABLE5)
    # the answer answers questions 2 (outside Q_ans: ignored), 3 and 5, in 50 tokens
    answers = Answers.from_rows(["q"], [vec({2, 3, 5}, value=4)], ["w " * 50])
    ev = evaluate(
        Run.from_lists({"q": ["p1"]}),
        None,
        ["answer_coverage", "answer_density"],
        judgments=j,
        corpus=Corpus.from_dict(CORPUS),
        answers=answers,
    )
    got = ev.run.means()
    assert got["answer_coverage"] == 2 / 8
    assert got["answer_density"] == pytest.approx(((2 / 50) / (8 / 300)) ** 0.5)


def test_custom_token_counter_sees_joined_text() -> None:
    seen: list[str] = []

    def counter(text: str) -> int:
        seen.append(text)
        return len(text)

    run = Run.from_lists({"q": ["p1", "p2"]})
    corpus = Corpus.from_dict({"p1": "ab", "p2": "cd", "p3": "ef"})
    evaluate(
        run,
        None,
        ["density@2"],
        judgments=Judgments.from_dict(TABLE5),
        corpus=corpus,
        token_counter=counter,
    )
    assert "ab cd" in seen and "ab cd ef" in seen


# -- properties ------------------------------------------------------------------------------


@st.composite
def judged(draw: st.DrawFn, disjoint: bool = False) -> tuple[dict[str, list[int]], list[str]]:
    n_q = draw(st.integers(1, 6))
    n_p = draw(st.integers(1, 8))
    docs = [f"d{i}" for i in range(n_p)]
    ratings: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        if disjoint:
            ratings[d] = [
                5 if q % n_p == i else draw(st.sampled_from([0, 1, 2, -1])) for q in range(n_q)
            ]
        else:
            ratings[d] = draw(st.lists(st.integers(-1, 5), min_size=n_q, max_size=n_q))
    ranked = draw(st.permutations([*docs, "u1", "u2"]))
    return ratings, list(ranked)


@settings(max_examples=150, deadline=None)
@given(data=judged())
def test_coverage_monotone_in_k_and_order_free(
    data: tuple[dict[str, list[int]], list[str]],
) -> None:
    ratings, ranked = data
    j = Judgments.from_dict({"q": ratings})
    names = [f"coverage@{k}" for k in range(1, len(ranked) + 1)]
    values = evaluate(Run.from_lists({"q": ranked}), None, names, judgments=j).run.values[0]
    if np.isnan(values).all():
        assert j.n_answerable().tolist() == [0]
        return
    assert np.all(np.diff(values) >= 0)
    assert values[-1] == 1.0  # every judged passage retrieved
    for k in range(1, len(ranked) + 1):
        shuffled = ranked[:k][::-1] + ranked[k:]
        again = evaluate(Run.from_lists({"q": shuffled}), None, [f"coverage@{k}"], judgments=j)
        assert again.run.values[0, 0] == values[k - 1]


@settings(max_examples=150, deadline=None)
@given(data=judged(disjoint=True), cut=st.integers(1, 12))
def test_alpha_ndcg_in_unit_interval(
    data: tuple[dict[str, list[int]], list[str]], cut: int
) -> None:
    ratings, ranked = data
    judged_docs = [d for d in ranked if d in ratings][:cut]
    j = Judgments.from_dict({"q": ratings})
    value = evaluate(
        Run.from_lists({"q": judged_docs}), None, ["alpha_ndcg@20"], judgments=j, context_k=20
    ).run.values[0, 0]
    assert 0.0 <= value <= 1.0 + 1e-12


def _reference_alpha_ndcg(
    ratings: dict[str, list[int]], ranked: list[str], alpha: float, depth: int, tau: int = 3
) -> float:
    """A plain transcription of ndeval's idealResult + computeDCG."""
    n = len(next(iter(ratings.values())))
    rel = {d: [r >= tau for r in rs] for d, rs in ratings.items()}

    def dcg(order: list[str]) -> float:
        gain = [1.0] * n
        total = 0.0
        for rank, d in enumerate(order[:depth], start=1):
            score = 0.0
            for i in range(n):
                if rel.get(d, [False] * n)[i]:
                    score += gain[i]
                    gain[i] *= 1 - alpha
            total += score / math.log2(rank + 1)
        return total

    left = sorted(rel)
    ideal: list[str] = []
    gain = [1.0] * n
    while left:
        best, best_score = None, 0.0
        for d in left:
            s = sum(gain[i] for i in range(n) if rel[d][i])
            if best is None or s > best_score or (s == best_score and d > best):
                best, best_score = d, s
        assert best is not None
        ideal.append(best)
        left.remove(best)
        for i in range(n):
            if rel[best][i]:
                gain[i] *= 1 - alpha
    ideal_value = dcg(ideal)
    return dcg(ranked) / ideal_value if ideal_value > 0 else math.nan


@settings(max_examples=200, deadline=None)
@given(data=judged(), alpha=st.sampled_from([0.5, 0.25, 0.0, 0.9]), depth=st.integers(1, 10))
def test_alpha_ndcg_matches_plain_reference(
    data: tuple[dict[str, list[int]], list[str]], alpha: float, depth: int
) -> None:
    ratings, ranked = data
    j = Judgments.from_dict({"q": ratings})
    got = evaluate(
        Run.from_lists({"q": ranked}),
        None,
        [f"alpha_ndcg@{depth}(alpha={alpha})"],
        judgments=j,
        context_k=50,
    ).run.values[0, 0]
    want = _reference_alpha_ndcg(ratings, ranked, alpha, depth)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)


def _random_judgments(seed: int) -> tuple[dict[str, dict[str, list[int]]], dict[str, list[str]]]:
    rng = random.Random(seed)
    data: dict[str, dict[str, list[int]]] = {}
    runs: dict[str, list[str]] = {}
    for q in range(1, 9):
        n_q = rng.randint(1, 6)
        docs = [f"D{q}x{i}" for i in range(rng.randint(1, 12))]
        data[str(q)] = {
            d: [rng.choice([0, 0, 1, 2, 3, 4, 5, -1]) for _ in range(n_q)] for d in docs
        }
        runs[str(q)] = rng.sample(
            docs + [f"U{q}x{i}" for i in range(3)], k=rng.randint(1, len(docs) + 3)
        )
    return data, runs


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("alpha", [0.5, 0.3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_ndcg_against_pyndeval(seed: int, alpha: float) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures not installed")
    pytest.importorskip("pyndeval", reason="pyndeval not installed (pip install pyndeval)")
    data, runs = _random_judgments(seed)
    qrels = [
        ir_measures.GenericQrel(q, d, 1 if r >= 3 else 0, str(i + 1))
        for q, docs in data.items()
        for d, rs in docs.items()
        for i, r in enumerate(rs)
    ]
    run = [
        ir_measures.ScoredDoc(q, d, float(len(ranked) - rank))
        for q, ranked in runs.items()
        for rank, d in enumerate(ranked)
    ]
    measure = ir_measures.alpha_nDCG(alpha=alpha) @ 20
    theirs = {m.query_id: m.value for m in measure.iter_calc(qrels, run)}  # type: ignore[attr-defined]
    name = str(parse_measure(f"alpha_ndcg@20(alpha={alpha})"))
    ours = evaluate(
        Run.from_lists(runs), None, [name], judgments=Judgments.from_dict(data), context_k=20
    ).run.per_query()
    compared = 0
    for q, values in ours.items():
        value = values[name]
        if value is None:
            continue  # no answerable question: ndeval has no subtopic either
        assert theirs[q] == pytest.approx(value, abs=1e-6), q
        compared += 1
    assert compared >= 3


# -- command line ----------------------------------------------------------------------------


def test_cli_evaluate_without_qrels(tmp_path: Path) -> None:
    out = tmp_path / "res.json"
    args = [
        "evaluate", str(EXAMPLES / "run_dense.txt"),
        "--judgments", str(EXAMPLES / "judgments.jsonl"),
        "--questions", str(EXAMPLES / "questions.jsonl"),
        "--k", "oracle", "-m", "coverage", "-m", "alpha_ndcg@20", "-m", "density",
        "--corpus", str(EXAMPLES / "passages.jsonl"), "--format", "json", "-o", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads(out.read_text())["runs"][0]["metrics"]
    # q1: P* = [d1, d2, d3] (|P*| = 3), the dense top 3 is d1, d3, d2 → coverage 1;
    # q2: P* = [d7, d8, d9], top 3 = d7, d8, d9 → 1; q3: nothing answerable → NA
    assert metrics["coverage"] == {"mean": 1.0, "n": 3, "n_defined": 2}
    assert metrics["density"]["mean"] == pytest.approx(1.0)


def test_cli_build_qrels_and_correlate(tmp_path: Path) -> None:
    runner = CliRunner()
    graded, div = tmp_path / "g.txt", tmp_path / "d.txt"
    result = runner.invoke(
        app,
        ["crux", "build-qrels", str(EXAMPLES / "judgments.jsonl"),
         "--out-graded", str(graded), "--out-diversity", str(div)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = graded.read_text().splitlines()
    assert "q1 0 d1 3" in lines and "q1 0 d4 1" in lines and "q1 0 d6 2" in lines
    assert not any(line.startswith("q3 ") for line in lines)  # nothing answerable
    assert "q1 1 d1 1" in div.read_text().splitlines()
    paths = []
    for name in ("bm25", "dense", "mmr"):
        out = tmp_path / f"{name}.json"
        result = runner.invoke(
            app,
            ["evaluate", str(EXAMPLES / f"run_{name}.txt"),
             "--judgments", str(EXAMPLES / "judgments.jsonl"),
             "--answers", str(EXAMPLES / f"answers_{name}.jsonl"),
             "-m", "coverage", "-m", "answer_coverage", "-f", "json", "-o", str(out)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        paths.append(str(out))
    result = runner.invoke(app, ["correlate", *paths, "--target", "answer_coverage", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (row,) = doc["correlations"]
    assert row["metric"] == "coverage" and row["n_systems"] == 3
    # 3 systems: the most extreme of the 3! orderings has p = 2/6; nothing can be significant
    assert row["spearman_method"] == "exact" and row["spearman_min_p"] == pytest.approx(1 / 3)
    assert row["too_small"] is True
    assert row["spearman_p"] >= 1 / 3 - 1e-12 and row["kendall_p"] >= 1 / 3 - 1e-12
    result = runner.invoke(app, ["correlate", *paths, "--target", "answer_coverage"])
    assert result.exit_code == 0, result.output
    assert "too small for significance" in result.output


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(
        st.one_of(
            st.none(), st.text(alphabet=st.sampled_from(list("ab \t\n\x0b\x1cé\u00a0\u2003")))
        ),
        max_size=20,
    ),
    start=st.integers(0, 3),
)
def test_whitespace_token_count_is_str_split(texts: list[str | None], start: int) -> None:
    import pyarrow as pa

    from ragmeter.core.judgments import count_tokens

    arr = pa.array(texts, type=pa.string()).slice(min(start, len(texts)))
    want = [len(t.split()) if t else 0 for t in texts[min(start, len(texts)) :]]
    assert count_tokens(arr).tolist() == want


# -- the C accelerator against the pure numpy path ----------------------------------------


def _random_crux(seed: int) -> tuple[Judgments, Corpus, Run]:
    """Judgments with many ties (few distinct ratings, repeated rating rows), some queries
    wider than 64 sub-questions, doc ids in ascending, descending and shuffled order."""
    rng = random.Random(seed)
    data: dict[str, dict[str, list[int]]] = {}
    runs: dict[str, list[str]] = {}
    corpus: dict[str, str] = {}
    for q in range(rng.randint(1, 12)):
        width = rng.choice([1, 3, 15, 64, 65, 130])
        n_docs = rng.choice([1, 5, 20, 40])
        names = [f"d{rng.randint(0, 999):03d}x{i}" for i in range(n_docs)]
        layout = rng.choice(["ascending", "descending", "shuffled"])
        if layout != "shuffled":
            names.sort(reverse=layout == "descending")
        palette = rng.choice([[0, 5], [0, 3, 4, -1], [0, 1, 2, 3, 4, 5, -1]])
        shared = [rng.choice(palette) for _ in range(width)]
        data[f"q{q}"] = {
            d: list(shared) if rng.random() < 0.3 else [rng.choice(palette) for _ in range(width)]
            for d in names
        }
        for d in names:
            corpus[d] = " ".join("w" * rng.randint(1, 3) for _ in range(rng.randint(0, 6)))
        runs[f"q{q}"] = rng.sample(names, k=rng.randint(1, len(names)))
    return Judgments.from_dict(data), Corpus.from_dict(corpus), Run.from_lists(runs)


@pytest.mark.skipif(_accel.native is None, reason="the C extension is not built")
@pytest.mark.parametrize("seed", range(40))
def test_native_coverage_greedies_match_pure(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    native = _accel.native
    base, corpus, run = _random_crux(seed)
    measures = ["coverage", "alpha_ndcg@20", "alpha_ndcg@3(alpha=0.3)", "density", "coverage@2"]

    def compute() -> tuple[list[np.ndarray], np.ndarray]:
        j = Judgments.from_dict(
            {
                str(q): {
                    base.doc_ids[r].as_py(): base.ratings[
                        base.rating_offsets[r] : base.rating_offsets[r + 1]
                    ].tolist()
                    for r in range(int(base.offsets[i]), int(base.offsets[i + 1]))
                }
                for i, q in enumerate(base.query_ids.tolist())
            }
        )
        c = Corpus(corpus.doc_ids, corpus.texts)
        parts: list[np.ndarray] = []
        for tau in (1, 3, 5):
            parts += [*j.required(tau), j.answerable(tau), j.labels(tau)]
            for alpha, depth in ((0.5, 20), (0.0, 5), (0.9, 1), (0.25, 0)):
                parts.append(j.ideal_alpha_dcg(alpha, depth, tau))
        parts.append(c.lookup(run.doc_ids))
        values = evaluate(run, None, measures, judgments=j, corpus=c).run.values
        return parts, values

    native_parts, native_values = compute()
    monkeypatch.setattr(_accel, "native", None)
    pure_parts, pure_values = compute()
    monkeypatch.setattr(_accel, "native", native)
    assert len(native_parts) == len(pure_parts)
    for got, want in zip(native_parts, pure_parts, strict=True):
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()  # bit for bit
    assert native_values.tobytes() == pure_values.tobytes()


@pytest.mark.parametrize("flag", ["--questions", "--answers"])
def test_cli_coverage_inputs_without_judgments_are_an_error(flag: str) -> None:
    # both serve only the coverage measures: without --judgments they would be ignored
    source = EXAMPLES / ("questions.jsonl" if flag == "--questions" else "answers_bm25.jsonl")
    result = CliRunner().invoke(
        app,
        ["evaluate", str(EXAMPLES / "run_bm25.txt"), "--qrels", str(EXAMPLES.parent / "qrels.txt"),
         flag, str(source)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert f"{flag} is used with --judgments" in result.output
