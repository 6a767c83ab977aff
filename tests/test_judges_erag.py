"""``ragmeter judge erag``: eRAG labels (each passage alone to the generator, its answer scored
against the gold answers) with the local test server as the generator; side by side with
eRAG's own ``eval`` (ported below, MIT licence) on the same generator outputs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of
from ragmeter.cli import app
from ragmeter.judges.erag import label_of, score_answer
from ragmeter.judges.tasks import parse_answer

# -- the generator: the fake server answers with the text after "the answer is" -------------

_PROMPT = re.compile(r"Passage: (?P<passage>.*?)\n\nQuestion: (?P<query>.*?)\n\n", re.DOTALL)


def generate(query: str, passage: str) -> str:
    """The fake generator's answer to (query, passage): what follows "the answer is" in the
    passage, else "no idea"."""
    _, found, rest = passage.partition("the answer is ")
    return rest.rstrip(".") if found else "no idea"


def respond(request: dict[str, Any]) -> str:
    match = _PROMPT.search(prompt_of(request))
    assert match is not None, prompt_of(request)
    return generate(match["query"], match["passage"])


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(respond) as s:
        yield s


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


ANSWERS = ["red", "red car", "blue", "the Blue", "green", "no answer here"]
GOLD = {"q0": ["red"], "q1": ["blue car", "blue"], "q2": ["green"]}


def collection(tmp: Path) -> dict[str, Path]:
    """Four queries ranking the six passages in turn; q3 has no gold answers (listed empty)
    and q4 is absent from the gold file: both are NA."""
    corpus = [
        {
            "id": f"d{j}",
            "text": f"note {j}: the answer is {a}." if a != "no answer here" else "nothing",
        }
        for j, a in enumerate(ANSWERS)
    ]
    queries = [{"id": f"q{i}", "text": f"question {i}?"} for i in range(5)]
    run = "".join(
        f"q{i} Q0 d{(i + r) % 6} {r + 1} {10 - r} sys\n" for i in range(5) for r in range(4)
    )
    (tmp / "run.txt").write_text(run)
    gold = [{"query_id": q, "answers": a} for q, a in GOLD.items()]
    gold.append({"query_id": "q3", "answers": []})
    return {
        "run": tmp / "run.txt",
        "queries": write_jsonl(tmp / "queries.jsonl", queries),
        "corpus": write_jsonl(tmp / "corpus.jsonl", corpus),
        "gold": write_jsonl(tmp / "gold.jsonl", gold),
    }


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args, catch_exceptions=False)


def erag_args(files: dict[str, Path], server: FakeServer, tmp: Path, out: Path) -> list[str]:
    args = ["judge", "erag", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--gold-answers", str(files["gold"])]
    args += ["--depth", "3", "--out", str(out), "--base-url", server.url, "--model", "gen"]
    return [*args, "--cache", str(tmp / "c.sqlite"), "--quiet"]


# -- units ------------------------------------------------------------------------------------


def test_parse_answer_strips_thinking_and_an_answer_prefix() -> None:
    assert parse_answer("  Paris \n") == ("Paris", "ok")
    assert parse_answer("<think>hmm</think>Answer: Paris") == ("Paris", "lenient")
    assert parse_answer("<think>only thoughts</think>  ") == (None, "unparsed")


def test_scores_by_hand() -> None:
    # SQuAD normalisation drops the article and the punctuation: an exact match
    assert score_answer("The Eiffel Tower.", ["Tour Eiffel", "eiffel tower"], "em") == 1.0
    assert score_answer("red car", ["red"], "em") == 0.0
    # token F1: P = 1/2, R = 1 → 2/3; the max over the gold answers
    assert score_answer("red car", ["blue", "red"], "f1") == pytest.approx(2 / 3)
    # ROUGE-L: LCS("the cat sat on the mat", "the cat on a mat") = 4; P = 4/6, R = 4/5
    assert score_answer("the cat sat on the mat", ["the cat on a mat"], "rougeL") == (
        pytest.approx(2 * (4 / 6) * (4 / 5) / (4 / 6 + 4 / 5))
    )
    assert label_of(2 / 3, 0.5) == 1 and label_of(2 / 3, 0.7) == 0 and label_of(1.0, None) == 1
    with pytest.raises(ValueError):
        score_answer("x", [], "em")


_WORDS = st.sampled_from(["the", "red", "car", "a", "Blue", "blue,", "Paris", "42", "."])
_TEXTS = st.lists(_WORDS, max_size=6).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(answer=_TEXTS, gold=st.lists(_TEXTS, min_size=1, max_size=3))
def test_score_invariants(answer: str, gold: list[str]) -> None:
    """Every score lies in [0, 1] and is the maximum over the gold answers taken one by one
    (those with a word left after normalisation; with none, there is nothing to score);
    an exact match is a token F1 of 1 (same normalisation)."""
    usable = [g for g in gold if set(g.lower().split()) - {"the", "a", "."}]
    if not usable:
        with pytest.raises(ValueError):
            score_answer(answer, gold, "em")
        return
    for metric in ("em", "f1", "rougeL"):
        score = score_answer(answer, gold, metric)
        assert 0.0 <= score <= 1.0
        assert score == max(score_answer(answer, [g], metric) for g in usable)
    if score_answer(answer, gold, "em") == 1.0:
        assert score_answer(answer, gold, "f1") == 1.0


# -- the command -----------------------------------------------------------------------------


def test_erag_writes_qrels_with_provenance_and_counts_na(
    server: FakeServer, tmp_path: Path
) -> None:
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.readers import read_qrels

    files = collection(tmp_path)
    out = tmp_path / "erag.qrels"
    result = invoke(erag_args(files, server, tmp_path, out))
    assert result.exit_code == 0, result.output
    # q0 ranks d0 d1 d2: answers "red" (EM 1), "red car" (0), "blue" (0)
    # q1 ranks d1 d2 d3: "red car" 0, "blue" 1 (gold "blue"), "the Blue" 1 (article dropped)
    # q2 ranks d2 d3 d4: "blue" 0, "the Blue" 0, "green" 1
    assert out.read_text().splitlines() == [
        "q0 0 d0 1", "q0 0 d1 0", "q0 0 d2 0",
        "q1 0 d1 0", "q1 0 d2 1", "q1 0 d3 1",
        "q2 0 d2 0", "q2 0 d3 0", "q2 0 d4 1",
    ]  # fmt: skip
    assert read_qrels(out).n_queries == 3
    # q3 (no gold answers) and q4 (absent) are never sent: 9 requests, not 15
    assert sum(server.state.seen.values()) == 9
    assert "none for 2 of 5 queries (q3, q4)" in result.output
    assert "NA, n=3/5" in result.output
    prov = read_provenance(out)
    assert prov is not None and prov.has_llm
    (source,) = prov.sources.values()
    assert source.model == "gen" and source.prompt_id == "erag"
    assert source.prompt_sha256 and "em of the answer" in (source.aggregation or "")


def test_another_metric_reuses_the_cached_answers(server: FakeServer, tmp_path: Path) -> None:
    from ragmeter.io.utilities import read_utilities

    files = collection(tmp_path)
    assert invoke(erag_args(files, server, tmp_path, tmp_path / "em.qrels")).exit_code == 0
    asked = sum(server.state.seen.values())
    out = tmp_path / "f1.txt"
    result = invoke([*erag_args(files, server, tmp_path, out), "--metric", "f1"])
    assert result.exit_code == 0, result.output
    assert sum(server.state.seen.values()) == asked  # every answer came from the cache
    assert "utilities" in result.output
    # "red car" against q1's gold "blue car": P = R = 1/2 → 1/2; against "red" (q0): 2/3
    scores = {
        (q, d): float(u) for q, d, u in (line.split() for line in out.read_text().splitlines())
    }
    assert scores[("q0", "d1")] == pytest.approx(2 / 3)
    assert scores[("q1", "d1")] == pytest.approx(0.5)
    assert scores[("q0", "d0")] == 1.0 and scores[("q0", "d2")] == 0.0
    assert set(read_utilities(out).query_ids.to_pylist()) == {"q0", "q1", "q2"}
    binary = tmp_path / "f1.qrels"
    result = invoke(
        [*erag_args(files, server, tmp_path, binary), "--metric", "f1", "--binarize", "0.6"]
    )
    assert result.exit_code == 0, result.output
    lines = dict(
        (f"{q} {d}", g) for q, _, d, g in (line.split() for line in binary.read_text().splitlines())
    )
    assert lines["q0 d1"] == "1" and lines["q1 d1"] == "0"


def test_dry_run_counts_the_requests(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    result = invoke([*erag_args(files, server, tmp_path, tmp_path / "x"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "9 calls to make" in result.output and "0 cached" in result.output
    assert sum(server.state.seen.values()) == 0 and not (tmp_path / "x").exists()


def test_bad_options_exit_2(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "x"
    result = invoke([*erag_args(files, server, tmp_path, out), "--metric", "bleu"])
    assert result.exit_code == 2 and "unknown --metric 'bleu'" in result.output
    result = invoke([*erag_args(files, server, tmp_path, out), "--binarize", "2"])
    assert result.exit_code == 2 and "--binarize must lie in [0, 1]" in result.output
    (tmp_path / "bad.jsonl").write_text('{"query_id": "q0", "answers": [1]}\n')
    args = erag_args(files, server, tmp_path, out)
    args[args.index(str(files["gold"]))] = str(tmp_path / "bad.jsonl")
    result = invoke(args)
    assert result.exit_code == 2 and "line 1" in result.output and "answers[0]" in result.output
    assert sum(server.state.seen.values()) == 0


# -- side by side with eRAG's own eval ---------------------------------------------------------
#
# erag_eval: the function ``eval`` of alirezasalemi7/eRAG, erag/eval.py (commit 2181fd8), ported
# with its logic unchanged: renamed, type hints added, formatted, ``in d.keys()`` written ``in
# d``, the checks on the callables' outputs and the messages of its errors dropped. The PyPI
# package pins pytrec_eval == 0.5, which clashes with the pytrec-eval-terrier ragmeter's tests
# use (both are the module ``pytrec_eval``), so it is ported here instead of installed.
#
# MIT License. Copyright (c) 2024 Alireza Salemi. Permission is hereby granted, free of charge,
# to any person obtaining a copy of this software and associated documentation files (the
# "Software"), to deal in the Software without restriction, including without limitation the
# rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the
# Software, and to permit persons to whom the Software is furnished to do so, subject to the
# following conditions: The above copyright notice and this permission notice shall be included
# in all copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS",
# WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES
# OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
# ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE
# OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.


def erag_eval(
    retrieval_results: dict[str, list[str]],
    expected_outputs: dict[str, list[str]],
    text_generator: Any,
    downstream_metric: Any,
    retrieval_metrics: set[str],
) -> dict[str, Any]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    assert set(retrieval_results.keys()) == set(expected_outputs.keys())
    max_length_retrieval_lists = max(len(lst) for lst in retrieval_results.values())
    flatten_inputs = {
        f"{query}@{i}": {"query": query, "document": [doc]}
        for query, documents in retrieval_results.items()
        for i, doc in enumerate(documents)
    }
    evaluation_scores = dict()
    for i in range(max_length_retrieval_lists):
        current_input = dict()
        current_expected_outputs = dict()
        for query in retrieval_results:
            if f"{query}@{i}" in flatten_inputs:
                item = flatten_inputs[f"{query}@{i}"]
                current_input[item["query"]] = item["document"]
                current_expected_outputs[item["query"]] = expected_outputs[item["query"]]
        current_generated_outputs = text_generator(current_input)
        current_evaluation_scores = downstream_metric(
            current_generated_outputs, current_expected_outputs
        )
        for query, score in current_evaluation_scores.items():
            evaluation_scores[f"{query}@{i}"] = score
    qrel: dict[str, dict[str, Any]] = dict()
    run: dict[str, dict[str, Any]] = dict()
    binary_downstream_metric = True
    for query in retrieval_results:
        run[query] = dict()
        qrel[query] = dict()
        for j in range(len(retrieval_results[query])):
            run[query][str(j)] = len(retrieval_results[query]) - j
            qrel[query][str(j)] = evaluation_scores[f"{query}@{j}"]
            if qrel[query][str(j)] in [0, 1]:
                qrel[query][str(j)] = int(qrel[query][str(j)])
            if qrel[query][str(j)] not in [0, 1]:
                binary_downstream_metric = False
            if qrel[query][str(j)] > 1 or qrel[query][str(j)] < 0:
                raise RuntimeError("The returning value of the downstream_metric must be in [0,1].")
    if binary_downstream_metric:
        evaluator = pytrec_eval.RelevanceEvaluator(qrel, retrieval_metrics)
        results = evaluator.evaluate(run)
    else:
        results = dict()
        for query, labels in qrel.items():
            results[query] = dict()
            for metric in retrieval_metrics:
                if "_" in metric:
                    metric_without_cut = metric[: metric.find("_")]
                    assert metric_without_cut in {"success", "P"}
                    cut_value = int(metric[metric.find("_") + 1 :])
                else:
                    metric_without_cut = metric
                    cut_value = len(labels)
                if metric_without_cut == "success":
                    max_value = 0
                    for i in range(cut_value):
                        max_value = max(max_value, labels[str(i)])
                    results[query][metric] = max_value
                elif metric_without_cut == "P":
                    mean_value = 0
                    for i in range(cut_value):
                        mean_value += labels[str(i)]
                    results[query][metric] = mean_value / cut_value
    final_results: dict[str, Any] = {"per_input": results, "aggregated": dict()}
    for metric in retrieval_metrics:
        values = [value[metric] for key, value in results.items()]
        final_results["aggregated"][metric] = sum(values) / len(values)
    return final_results


def _erag_inputs(files: dict[str, Path], depth: int) -> tuple[Any, Any, Any]:
    """eRAG's inputs (keyed by query text) for the queries with gold answers: their top
    ``depth`` passage texts, their gold answers, and the fake server's generator."""
    qtext = {r["id"]: r["text"] for r in map(json.loads, files["queries"].read_text().splitlines())}
    ptext = {r["id"]: r["text"] for r in map(json.loads, files["corpus"].read_text().splitlines())}
    ranked: dict[str, list[str]] = {}
    for line in files["run"].read_text().splitlines():
        q, _, d, *_ = line.split()
        ranked.setdefault(q, []).append(d)
    gold = {
        r["query_id"]: r["answers"] for r in map(json.loads, files["gold"].read_text().splitlines())
    }
    retrieval = {qtext[q]: [ptext[d] for d in ranked[q][:depth]] for q in gold if gold[q]}
    expected = {qtext[q]: gold[q] for q in gold if gold[q]}

    def text_generator(inputs: dict[str, list[str]]) -> dict[str, str]:
        return {q: generate(q, docs[0]) for q, docs in inputs.items()}

    return retrieval, expected, text_generator


def _metric(name: str) -> Callable[[dict[str, str], dict[str, list[str]]], dict[str, float]]:
    def downstream(preds: dict[str, str], golds: dict[str, list[str]]) -> dict[str, float]:
        return {q: score_answer(preds[q], golds[q], name) for q in preds}

    return downstream


def test_side_by_side_with_erag_eval_on_binary_labels(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "erag.qrels"
    assert invoke(erag_args(files, server, tmp_path, out)).exit_code == 0
    retrieval, expected, generator = _erag_inputs(files, 3)
    theirs = erag_eval(
        retrieval,
        expected,
        generator,
        _metric("em"),
        {"P_3", "P_1", "success_3", "success_1", "ndcg_cut_3", "map", "recip_rank"},
    )["aggregated"]
    assert theirs["P_1"] == pytest.approx(1 / 3)  # only q0 is answered from its first passage
    # the run eRAG evaluates: each query's top 3 (its eval sees no more)
    run = tmp_path / "top3.txt"
    run.write_text(
        "".join(
            line + "\n"
            for line in files["run"].read_text().splitlines()
            if int(line.split()[3]) <= 3
        )
    )
    ours_names = {
        "P_3": "precision@3",
        "P_1": "precision@1",
        "success_3": "success@3",
        "success_1": "success@1",
        "ndcg_cut_3": "ndcg@3",
        "map": "map",
        "recip_rank": "mrr",
    }
    args = ["evaluate", str(run), "--qrels", str(out), "-f", "json"]
    for name in ours_names.values():
        args += ["-m", name]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    metrics = doc["runs"][0]["metrics"]
    for theirs_name, ours_name in ours_names.items():
        assert metrics[ours_name]["mean"] == pytest.approx(theirs[theirs_name], abs=1e-12)
        assert metrics[ours_name]["n"] == 3
    # a number on these labels says they are LLM labels
    assert doc["labels"]["llm"] is True and "erag, model gen" in doc["labels"]["provenance"]


def test_side_by_side_with_erag_eval_on_continuous_labels(
    server: FakeServer, tmp_path: Path
) -> None:
    files = collection(tmp_path)
    out = tmp_path / "erag_f1.txt"
    assert invoke([*erag_args(files, server, tmp_path, out), "--metric", "f1"]).exit_code == 0
    retrieval, expected, generator = _erag_inputs(files, 3)
    theirs = erag_eval(retrieval, expected, generator, _metric("f1"), {"P_3", "success_3", "P_2"})
    scores: dict[str, list[float]] = {}
    for line in out.read_text().splitlines():
        q, _d, u = line.split()
        scores.setdefault(q, []).append(float(u))  # written in rank order
    qtext = {r["id"]: r["text"] for r in map(json.loads, files["queries"].read_text().splitlines())}
    for q, values in scores.items():
        per = theirs["per_input"][qtext[q]]
        assert per["P_3"] == pytest.approx(sum(values) / 3)
        assert per["P_2"] == pytest.approx(sum(values[:2]) / 2)
        assert per["success_3"] == pytest.approx(max(values))


def test_example_collection(server: FakeServer, tmp_path: Path) -> None:
    """The example collection, its reference answers as gold answers, a generator that answers
    with the passage's first clause: binarized token F1 labels, then every family runs."""
    from ragmeter.data import example_path

    server.state.responder = lambda r: _PROMPT.search(prompt_of(r))["passage"].split(",")[0]  # type: ignore[index]
    pools: dict[str, list[str]] = {}
    for line in example_path("qrels.txt").read_text().splitlines():
        q, _, d, _ = line.split()
        pools.setdefault(q, []).append(d)
    run = tmp_path / "run.txt"
    run.write_text(
        "".join(
            f"{q} Q0 {d} {r + 1} {100 - r} pool\n"
            for q, docs in pools.items()
            for r, d in enumerate(docs[:5])
        )
    )
    refs = [json.loads(line) for line in example_path("references.jsonl").read_text().splitlines()]
    gold = write_jsonl(
        tmp_path / "gold.jsonl", [{"query_id": r["id"], "answers": [r["text"]]} for r in refs]
    )
    out = tmp_path / "erag.qrels"
    args = ["judge", "erag", "--run", str(run), "--queries", str(example_path("queries.jsonl"))]
    args += ["--corpus", str(example_path("corpus.jsonl")), "--gold-answers", str(gold)]
    args += ["--depth", "5", "--metric", "f1", "--binarize", "0.1", "--out", str(out)]
    args += [
        "--base-url",
        server.url,
        "--model",
        "gen",
        "--cache",
        str(tmp_path / "c.sqlite"),
        "-q",
    ]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 30 * 5
    result = invoke(
        ["evaluate", str(run), "--qrels", str(out), "-m", "ndcg@5", "-m", "map", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["runs"][0]["metrics"]
    assert {m["n"] for m in metrics.values()} == {30}


def test_python_api(server: FakeServer) -> None:
    from ragmeter.core.gold_answers import GoldAnswers
    from ragmeter.judges import JudgeConfig, judge_erag

    texts = {"d0": "the answer is Paris.", "d1": "the answer is Lyon.", "d2": "nothing"}
    result = judge_erag(
        {"q": ["d0", "d1", "d2"], "x": ["d1"]},
        {"q": "capital of France?", "x": "unknown?"},
        texts,
        GoldAnswers.from_dict({"q": ["Paris", "Paris, France"]}),
        judge=JudgeConfig(base_urls=(server.url,), model="gen"),
        metric="f1",
        depth=3,
    )
    # "Paris" vs "Paris": 1; "Lyon": 0; "no idea": 0
    assert result.labels.labels == {"q": {"d0": 1, "d1": 0, "d2": 0}}
    assert result.labels.answers["q"] == {"d0": "Paris", "d1": "Lyon", "d2": "no idea"}
    assert not result.labels.integer and result.labels.no_gold == ["x"]
    assert result.complete and result.source is not None
    assert result.source.aggregation == (
        "eRAG: f1 of the answer from the passage alone vs the gold answers (max)"
    )


def test_a_gold_answer_normalised_to_nothing_is_no_gold(tmp_path: Path) -> None:
    """Issue #39 (T11): gold "The" is NA for answer_recall; eRAG must not label the passage
    1 because the generator's "A" normalises to the same empty string. The query is left
    out (NA), as a query without gold answers; one NFC gold answer matches an NFD answer."""
    from ragmeter.core.gold_answers import GoldAnswers
    from ragmeter.core.judgments import Corpus
    from ragmeter.io.trec import read_trec_run
    from ragmeter.judges.erag import erag_job

    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 r\nq2 Q0 d1 1 1.0 r\n")
    job = erag_job(
        read_trec_run(tmp_path / "run.txt"),
        Corpus.from_dict({"q1": "Where?", "q2": "Which article?"}),
        Corpus.from_dict({"d1": "The ferry to Zu\u0308rich leaves at noon."}),
        GoldAnswers.from_dict({"q1": ["Z\u00fcrich"], "q2": ["The"]}),
        depth=1,
    )
    assert [item.ident for item in job.items] == [("q1", "d1")]
    assert score_answer("Zu\u0308rich", ["Z\u00fcrich"], "em") == 1.0
