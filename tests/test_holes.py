"""Hole filling (``ragmeter judge relevance --qrels HUMAN --holes``) on the example collection
against the local test server: exactly the unjudged pairs are asked (counted at the server,
the expected pairs computed here from the files), human grades are unchanged, the sidecar says
who made each label, a rerun asks nothing, and the overlap's κ and α match a hand count."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of, stable_grade
from ragmeter.cli import app
from ragmeter.data import example_path

DEPTH = 8


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        yield s


def texts(name: str) -> dict[str, str]:
    rows = [json.loads(line) for line in example_path(name).read_text().splitlines()]
    return {r["id"]: r["text"] for r in rows}


def qrels_lines() -> list[list[str]]:
    return [line.split() for line in example_path("qrels.txt").read_text().splitlines()]


def make_inputs(tmp: Path) -> dict[str, Any]:
    """A run ranking, per query, 4 judged passages then 6 passages the qrels do not judge;
    human qrels that drop every third judged line and mark every fifth kept one −1."""
    lines = qrels_lines()
    judged: dict[str, list[str]] = {}
    for q, _, d, _g in lines:
        judged.setdefault(q, []).append(d)
    corpus = list(texts("corpus.jsonl"))
    run_rows = []
    for q, docs in judged.items():
        others = [d for d in corpus if d not in docs][int(q[1:]) : int(q[1:]) + 6]
        for rank, d in enumerate(docs[:4] + others, start=1):
            run_rows.append(f"{q} Q0 {d} {rank} {100 - rank} sys\n")
    run = tmp / "run.txt"
    run.write_text("".join(run_rows))
    kept = [row for i, row in enumerate(lines) if i % 3 != 0]
    human_rows = [[q, z, d, "-1" if i % 5 == 0 else g] for i, (q, z, d, g) in enumerate(kept)]
    human = tmp / "human.txt"
    human.write_text("".join(" ".join(r) + "\n" for r in human_rows))
    return {"run": run, "human": human, "human_rows": human_rows, "run_rows": run_rows}


def expected_holes(inputs: dict[str, Any], depth: int) -> set[tuple[str, str]]:
    """The run's top ``depth`` pairs without a human grade ≥ 0, from the files themselves."""
    grade = {(q, d): int(g) for q, _, d, g in inputs["human_rows"]}
    out = set()
    for row in inputs["run_rows"]:
        q, _, d, rank, _, _ = row.split()
        if int(rank) <= depth and grade.get((q, d), -1) < 0:
            out.add((q, d))
    return out


PAIR = re.compile(r"^Query: (.*?)\n\nPassage: (.*?)\n\n", re.S)


def asked_pairs(server: FakeServer) -> list[tuple[str, str]]:
    """The (query, doc) of every request the server got, read back from the prompt text."""
    by_query = {t: q for q, t in texts("queries.jsonl").items()}
    by_doc = {t: d for d, t in texts("corpus.jsonl").items()}
    out = []
    for request in server.state.requests:
        match = PAIR.match(prompt_of(request))
        assert match, prompt_of(request)[:200]
        out.append((by_query[match.group(1)], by_doc[match.group(2)]))
    return out


def args(server: FakeServer, inputs: dict[str, Any], tmp: Path, *extra: str) -> list[str]:
    return [
        "judge",
        "relevance",
        "--run",
        str(inputs["run"]),
        "--queries",
        str(example_path("queries.jsonl")),
        "--corpus",
        str(example_path("corpus.jsonl")),
        "--qrels",
        str(inputs["human"]),
        "--holes",
        "--depth",
        str(DEPTH),
        "--out",
        str(tmp / "merged.txt"),
        "--base-url",
        server.url,
        "--model",
        "m",
        "--cache",
        str(tmp / "c.sqlite"),
        "--quiet",
        *extra,
    ]


def invoke(argv: list[str]) -> Any:
    return CliRunner().invoke(app, argv, catch_exceptions=False)


def test_holes_asks_exactly_the_unjudged_pairs(server: FakeServer, tmp_path: Path) -> None:
    inputs = make_inputs(tmp_path)
    holes = expected_holes(inputs, DEPTH)
    assert 150 < len(holes) < 300  # missing pairs and pooled-but-unjudged (−1) ones
    result = invoke(args(server, inputs, tmp_path))
    assert result.exit_code == 0, result.output
    asked = asked_pairs(server)
    assert len(asked) == len(set(asked)) == len(holes)
    assert set(asked) == holes
    assert f"holes: {len(holes)} pair(s)" in result.output
    assert f"cache hits 0, calls {len(holes)}" in result.output
    # a rerun asks nothing
    again = invoke(args(server, inputs, tmp_path))
    assert again.exit_code == 0, again.output
    assert len(server.state.requests) == len(holes)
    assert f"cache hits {len(holes)}, calls 0" in again.output


def test_merged_qrels_keep_human_grades_and_say_who_made_each(
    server: FakeServer, tmp_path: Path
) -> None:
    inputs = make_inputs(tmp_path)
    holes = expected_holes(inputs, DEPTH)
    assert invoke(args(server, inputs, tmp_path)).exit_code == 0
    merged = {(q, d): g for q, _, d, g in (r.split() for r in (tmp_path / "merged.txt").open())}
    for q, _, d, g in inputs["human_rows"]:
        if (q, d) not in holes:
            assert merged[(q, d)] == g  # the very same grade text
    judge_grade = {
        pair: str(stable_grade(prompt_of(r)))
        for pair, r in zip(asked_pairs(server), server.state.requests, strict=True)
    }
    for pair in holes:
        assert merged[pair] == judge_grade[pair]
    assert len(merged) == len({(q, d) for q, _, d, _ in inputs["human_rows"]} | holes)
    sidecar = (tmp_path / "merged.txt.provenance.jsonl").read_text().splitlines()
    header = json.loads(sidecar[0])
    human = header["sources"][header["default"]]
    assert human["kind"] == "human" and "human.txt" in human["note"]
    rows = [json.loads(line) for line in sidecar[1:]]
    assert {(r["query_id"], r["doc_id"]) for r in rows} == holes
    judge = header["sources"][rows[0]["source"]]
    assert judge["kind"] == "judge" and judge["model"] == "m" and judge["prompt_id"] == "relevance"


def test_human_sidecar_sources_are_kept(server: FakeServer, tmp_path: Path) -> None:
    from ragmeter.core.provenance import LabelProvenance, human_source
    from ragmeter.io.provenance import read_provenance, write_provenance

    inputs = make_inputs(tmp_path)
    write_provenance(inputs["human"], LabelProvenance.single(human_source("alice")))
    assert invoke(args(server, inputs, tmp_path)).exit_code == 0
    prov = read_provenance(tmp_path / "merged.txt")
    assert prov is not None
    q, _, d, _ = inputs["human_rows"][1]
    assert prov.source_of(q, d) == human_source("alice")
    hole = sorted(expected_holes(inputs, DEPTH))[0]
    source = prov.source_of(*hole)
    assert source is not None and source.is_llm


def kappa_by_hand(a: list[int], b: list[int], scale: range) -> float:
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    p_e = sum((a.count(g) / n) * (b.count(g) / n) for g in scale)
    return (p_o - p_e) / (1 - p_e)


def test_overlap_asks_seeded_judged_pairs_and_reports_kappa(
    server: FakeServer, tmp_path: Path
) -> None:
    inputs = make_inputs(tmp_path)
    holes = expected_holes(inputs, DEPTH)
    result = invoke(args(server, inputs, tmp_path, "--overlap", "2", "--seed", "7"))
    assert result.exit_code == 0, result.output
    asked = asked_pairs(server)
    extra = set(asked) - holes
    human = {(q, d): int(g) for q, _, d, g in inputs["human_rows"]}
    assert all(human[p] >= 0 for p in extra)
    per_query: dict[str, int] = {}
    for q, _ in extra:
        per_query[q] = per_query.get(q, 0) + 1
    assert max(per_query.values()) == 2
    grade_of = {
        p: stable_grade(prompt_of(r)) for p, r in zip(asked, server.state.requests, strict=True)
    }
    pairs = sorted(extra)
    kappa = kappa_by_hand([human[p] for p in pairs], [grade_of[p] for p in pairs], range(1, 6))
    assert f"overlap: {len(pairs)} human-labelled pair(s) judged on the scale 1..5" in result.output
    assert f"Cohen's κ unweighted {kappa:.4f}" in result.output
    # the overlap's judge grades do not enter the merged qrels
    merged = {(q, d): g for q, _, d, g in (r.split() for r in (tmp_path / "merged.txt").open())}
    assert all(merged[p] == str(human[p]) for p in pairs)
    # the same seed draws the same pairs: the rerun asks nothing
    again = invoke(args(server, inputs, tmp_path, "--overlap", "2", "--seed", "7"))
    assert again.exit_code == 0 and len(server.state.requests) == len(asked)


def test_different_scales_are_refused_before_asking(server: FakeServer, tmp_path: Path) -> None:
    inputs = make_inputs(tmp_path)
    rows = [
        [q, z, d, str(max(0, int(g) - 2)) if int(g) >= 0 else g]
        for q, z, d, g in inputs["human_rows"]
    ]  # 0..3, TREC's scale
    inputs["human"].write_text("".join(" ".join(r) + "\n" for r in rows))
    result = invoke(args(server, inputs, tmp_path))
    assert result.exit_code == 2
    assert "--grade-map" in result.output and "human.txt" in result.output
    assert not server.state.requests
    mapped = invoke(args(server, inputs, tmp_path, "--grade-map", "1:0,2:1,3:1,4:2,5:3"))
    assert mapped.exit_code == 0, mapped.output
    merged = [line.split() for line in (tmp_path / "merged.txt").open()]
    assert {int(g) for *_, g in merged} <= {-1, 0, 1, 2, 3}
    header = json.loads((tmp_path / "merged.txt.provenance.jsonl").open().readline())
    assert any("grades mapped 1:0,2:1" in (s.get("note") or "") for s in header["sources"].values())


def test_plan_holes_by_hand() -> None:
    from ragmeter.judges.holes import plan_holes

    run = {"q1": ["a", "b", "c", "d"], "q2": ["x", "y"]}
    human = {"q1": {"a": 2, "b": -1, "d": 0}, "q3": {"z": 1}}
    plan = plan_holes(run, human, depth=3, overlap=5, seed=1)
    assert plan.holes == {"q1": ["b", "c"], "q2": ["x", "y"]}
    assert plan.unjudged == 1 and plan.judged_in_depth == 1
    assert plan.overlap == {"q1": ["a"]}  # only judged pairs within the depth
    assert plan.rankings() == {"q1": ["b", "c", "a"], "q2": ["x", "y"]}
    # several runs: the union of their tops
    two = plan_holes([run, {"q1": ["e", "a"]}], human, depth=1)
    assert two.holes == {"q1": ["e"], "q2": ["x"]}


def test_overlap_draw_is_seeded_per_query() -> None:
    from ragmeter.judges.holes import plan_holes

    human = {f"q{i}": {f"d{j}": 1 for j in range(10)} for i in range(5)}
    run = {q: sorted(docs) for q, docs in human.items()}
    a = plan_holes(run, human, depth=10, overlap=3, seed=4)
    b = plan_holes(dict(reversed(list(run.items()))), human, depth=10, overlap=3, seed=4)
    assert a.overlap == b.overlap and a.n_holes == 0 and a.n_overlap == 15
    expected = sorted(random.Random("4:q2").sample(run["q2"], 3))
    assert sorted(a.overlap["q2"]) == expected
    assert plan_holes(run, human, depth=10, overlap=3, seed=5).overlap != a.overlap


def test_fill_holes_in_python() -> None:
    from ragmeter.judges.holes import fill_holes
    from ragmeter.judges.types import Judgment

    asked: list[str] = []

    class Fixed:
        model = "fixed-judge"

        def judge(self, task: Any, inputs: Any) -> Judgment:
            asked.append(inputs["passage"])
            return Judgment(5, "ok", model=self.model)

    human = {"q1": {"d1": 2, "d2": -1}}
    filling = fill_holes(
        {"q1": ["d1", "d2", "d3", "d4"]},
        {"q1": "a question"},
        {f"d{i}": f"text {i}" for i in range(1, 5)},
        human,
        judge=Fixed(),
        depth=3,
    )
    assert sorted(asked) == ["text 2", "text 3"]
    assert filling.qrels == {"q1": {"d1": 2, "d2": 5, "d3": 5}}
    assert filling.filled == [("q1", "d2"), ("q1", "d3")] and not filling.unfilled
    judge = filling.provenance.source_of("q1", "d3")
    assert judge is not None and judge.model == "fixed-judge"
    human_src = filling.provenance.source_of("q1", "d1")
    assert human_src is not None and human_src.kind == "human"
