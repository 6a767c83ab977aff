"""UMBRELA's prompts, several samples per pair, several judges.

The prompt test renders each shipped template the way umbrela does at commit e2c4e41 —
``yaml.safe_load`` of the file, then ``PromptTemplate.render``: ``prefix_user.format(
examples=…, query=…, passage=…)`` — written here independently of ragmeter's reader, and
compares it byte for byte with the user message ragmeter sends to the server. (umbrela's
own package cannot be installed here: the PyPI release is the 2024 one, without these
templates, and the repository's code needs Python ≥ 3.12, scikit-learn and matplotlib.)
The parser's expected grades are worked out by hand from umbrela's ``parse_fewshot_response``
(lower-case, strip, patterns in order, each pattern's last match wins, no match → 0/invalid).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of
from ragmeter.cli import app
from ragmeter.judges.umbrela import parse_umbrela
from ragmeter.judges.votes import vote

#: the git blob ids of the two templates in castorini/umbrela's tree at e2c4e41
UMBRELA_BLOBS = {
    "qrel_zeroshot_bing.yaml": "699c4c1285cc35db44d2e9df65024abda108e654",
    "qrel_fewshot_bing.yaml": "38fbda9af49361a2fae862fb9f92c24145537a42",
}
TEMPLATE = {"umbrela": "qrel_zeroshot_bing.yaml", "umbrela-fewshot": "qrel_fewshot_bing.yaml"}


def template_file(name: str) -> bytes:
    return resources.files("ragmeter.judges").joinpath(f"prompts/umbrela/{name}").read_bytes()


def umbrela_render(name: str, query: str, passage: str) -> str:
    """umbrela's rendering: safe_load, then PromptTemplate.render (str.format with the
    examples string too; the bing templates have no {examples})."""
    import yaml  # the dev extra's PyYAML, as umbrela loads its templates (never skipped)

    data = yaml.safe_load(template_file(name).decode("utf-8"))
    return str(data["prefix_user"]).format(examples="", query=query, passage=passage)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(lambda request: "##final score: 2") as s:
        yield s


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


QUERIES = {"q1": "anthropological definition of {environment}", "q2": "café  opening hours "}
PASSAGES = {
    "d1": "Line one.\nLine two with trailing space \n\n  indented {x} and }{ braces",
    "d2": "Ünïcödé — «quotes» 'single' \"double\" \\backslash\\ \t tab",
    "d3": "",
}


def collection(tmp: Path) -> dict[str, Path]:
    queries = write_jsonl(tmp / "q.jsonl", [{"id": k, "text": v} for k, v in QUERIES.items()])
    corpus = write_jsonl(tmp / "c.jsonl", [{"id": k, "text": v} for k, v in PASSAGES.items()])
    run = tmp / "run.txt"
    run.write_text(
        "q1 Q0 d1 1 3 s\nq1 Q0 d2 2 2 s\nq2 Q0 d2 1 3 s\nq2 Q0 d3 2 2 s\n", encoding="utf-8"
    )
    return {"queries": queries, "corpus": corpus, "run": run}


def relevance_args(files: dict[str, Path], out: Path, cache: Path) -> list[str]:
    return [
        "judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"]),
        "--corpus", str(files["corpus"]), "--out", str(out), "--cache", str(cache), "--quiet",
    ]  # fmt: skip


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args, catch_exceptions=False)


# -- the templates and the prompt ------------------------------------------------------------


def test_shipped_templates_are_umbrelas_files() -> None:
    for name, blob in UMBRELA_BLOBS.items():
        data = template_file(name)
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob
    notice = resources.files("ragmeter.judges").joinpath("prompts/umbrela/NOTICE.md")
    assert "e2c4e41" in notice.read_text("utf-8")
    licence = resources.files("ragmeter.judges").joinpath("prompts/umbrela/LICENSE")
    assert "Apache License" in licence.read_text("utf-8")


@pytest.mark.parametrize("prompt", ["umbrela", "umbrela-fewshot"])
def test_the_user_message_sent_is_umbrelas_rendering(
    prompt: str, server: FakeServer, tmp_path: Path
) -> None:
    files = collection(tmp_path)
    out = tmp_path / "qrels.txt"
    args = relevance_args(files, out, tmp_path / "c.sqlite")
    result = invoke([*args, "--prompt", prompt, "--base-url", server.url, "--model", "m"])
    assert result.exit_code == 0, result.output
    sent = {prompt_of(r): r for r in server.state.requests}
    expected = [
        umbrela_render(TEMPLATE[prompt], QUERIES[q], PASSAGES[d])
        for q, d in [("q1", "d1"), ("q1", "d2"), ("q2", "d2"), ("q2", "d3")]
    ]
    assert sorted(sent) == sorted(expected)  # byte for byte, each pair once
    for request in server.state.requests:
        assert request["messages"][0] == {
            "role": "system",
            "content": "You are a helpful assistant.",
        }
        assert len(request["messages"]) == 2 and request["messages"][1]["role"] == "user"
        assert (request["top_p"], request["frequency_penalty"], request["presence_penalty"]) == (
            1,
            0.5,
            0,
        )
        assert request["max_tokens"] == 100 and request["temperature"] == 0
    assert out.read_text().splitlines() == ["q1 0 d1 2", "q1 0 d2 2", "q2 0 d2 2", "q2 0 d3 2"]
    # provenance: prompt id, umbrela's commit, and the template file's SHA-256
    sidecar = [
        json.loads(line)
        for line in (tmp_path / "qrels.txt.provenance.jsonl").read_text().splitlines()
    ]
    sources = [r for r in sidecar if "source" in r or "sources" in r or "kind" in str(r)]
    text = json.dumps(sources)
    assert f'"prompt_id": "{prompt}"' in text
    assert hashlib.sha256(template_file(TEMPLATE[prompt])).hexdigest() in text
    assert '"prompt_version": "e2c4e41"' in text


def test_prompt_and_its_hash_are_in_the_cache_key(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    out, cache = tmp_path / "qrels.txt", tmp_path / "c.sqlite"
    base = [*relevance_args(files, out, cache), "--base-url", server.url, "--model", "m"]
    assert invoke([*base, "--prompt", "umbrela"]).exit_code == 0
    assert len(server.state.requests) == 4
    assert invoke([*base, "--prompt", "umbrela"]).exit_code == 0  # a rerun asks nothing
    assert len(server.state.requests) == 4
    assert invoke([*base, "--prompt", "umbrela-fewshot"]).exit_code == 0  # another prompt
    assert len(server.state.requests) == 8
    import sqlite3

    with sqlite3.connect(cache) as db:
        rows = set(db.execute("SELECT task, prompt FROM judgments"))
    sha = hashlib.sha256(template_file("qrel_zeroshot_bing.yaml")).hexdigest()
    assert ("umbrela", f"e2c4e41-{sha}") in rows


# -- the reply parser ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("##final score: 2", (2, "ok")),
        ("##Final Score: 3", (3, "ok")),  # lower-cased first
        ("  ##final score: 0.\n", (0, "ok")),
        # the pattern "final score\s*[:-=]?\s*(0|1|2|3)" takes its last match
        ("final score: 1 ... final score: 3", (3, "lenient")),
        # an earlier pattern wins over a later one: 'o\s*[:-=]?\s*(0..3)' matches "to 3"
        # (the o of "to") before the final-score pattern is tried, as in umbrela
        ("scale 0 to 3. ##final score: 1", (3, "lenient")),
        ('{"O": 2}', (2, "lenient")),  # '"o"\s*[:-=]?\s*' after lower-casing
        ("I would give it a score of 1", (1, "lenient")),
        ("relevance category 2", (2, "lenient")),
        ("the last resort: a bare 1 somewhere", (1, "lenient")),  # '\n*(0|1|2|3)'
        ("grade 5, very relevant", (-1, "unparsed")),  # no 0-3 anywhere: umbrela says 0
        ("I cannot tell.", (-1, "unparsed")),
    ],
)
def test_parser_reads_as_umbrela_reads(reply: str, expected: tuple[int, str]) -> None:
    assert parse_umbrela(reply) == expected


def test_a_reply_without_a_score_is_unparsed_never_0(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "qrels.txt"
    with FakeServer(
        lambda r: "It depends." if "Line one" in prompt_of(r) else "##final score: 3"
    ) as s:
        args = [*relevance_args(files, out, tmp_path / "c.sqlite"), "--prompt", "umbrela"]
        result = invoke([*args, "--base-url", s.url, "--model", "m"])
    assert result.exit_code == 1
    assert "unparsed 1" in result.output
    assert out.read_text().splitlines() == ["q1 0 d2 3", "q2 0 d2 3", "q2 0 d3 3"]


# -- the vote --------------------------------------------------------------------------------


def test_vote_ties_go_to_the_lowest_grade() -> None:
    assert vote([3, 1]) == 1
    assert vote([2, 3, 3, 2, 0]) == 2
    assert vote([1, 3, 3]) == 3
    assert vote([0]) == 0
    with pytest.raises(ValueError):
        vote([])


@given(st.lists(st.integers(0, 3), min_size=1, max_size=12), st.randoms())
def test_vote_is_the_lowest_most_frequent_grade(grades: list[int], rnd: Any) -> None:
    counts = Counter(grades)
    winner = vote(grades)
    assert counts[winner] == max(counts.values())
    assert all(g >= winner for g, c in counts.items() if c == counts[winner])
    shuffled = list(grades)
    rnd.shuffle(shuffled)
    assert vote(shuffled) == winner  # the order the answers arrived in does not matter


# -- several samples -------------------------------------------------------------------------


def by_seed(grades: dict[int, str]) -> Any:
    """A server answering by the request's seed (sample i is asked with seed 0 + i)."""

    def respond(request: dict[str, Any]) -> str:
        return grades[int(request["seed"])]

    return respond


def test_samples_each_a_cached_request_and_the_mode_ties_low(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out, cache = tmp_path / "qrels.txt", tmp_path / "c.sqlite"
    replies = {0: "##final score: 3", 1: "##final score: 1", 2: "##final score: 3", 3: "1"}
    with FakeServer(by_seed(replies)) as s:
        args = [*relevance_args(files, out, cache), "--prompt", "umbrela"]
        args += ["--base-url", s.url, "--model", "m", "--temperature", "0.7"]
        two = invoke([*args, "--samples", "2"])
        assert two.exit_code == 0, two.output
        assert Counter(s.state.seen.values()) == Counter({2: 4})  # 4 pairs × 2 samples
        assert sorted(r["seed"] for r in s.state.requests) == [0] * 4 + [1] * 4
        assert all(r["temperature"] == 0.7 for r in s.state.requests)
        # grades 3 and 1: a tie → 1
        assert {line.split()[3] for line in out.read_text().splitlines()} == {"1"}
        assert "4 of 4 pairs labelled" in two.output
        sidecar = (tmp_path / "qrels.txt.provenance.jsonl").read_text()
        assert '"samples": 2' in sidecar and '"temperature": 0.7' in sidecar
        assert '"aggregation": "mode, ties to the lowest grade"' in sidecar
        # a rerun asks nothing; one more sample asks only the new one
        assert invoke([*args, "--samples", "2"]).exit_code == 0
        assert len(s.state.requests) == 8
        three = invoke([*args, "--samples", "3"])
        assert three.exit_code == 0 and len(s.state.requests) == 12
        # grades 3, 1, 3 → 3
        assert {line.split()[3] for line in out.read_text().splitlines()} == {"3"}
        # grades 3, 1, 3, 1 (the last read leniently) → a tie → 1
        four = invoke([*args, "--samples", "4"])
        assert four.exit_code == 0 and len(s.state.requests) == 16
        assert {line.split()[3] for line in out.read_text().splitlines()} == {"1"}


def test_an_unparsed_sample_leaves_its_pair_without_a_label_and_exits_1(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out, cache = tmp_path / "qrels.txt", tmp_path / "c.sqlite"
    # sample 2 of the pairs of d1 is unreadable; of the others every sample reads
    replies = {0: "##final score: 3", 1: "##final score: 1", 2: "##final score: 1"}

    def respond(request: dict[str, Any]) -> str:
        if int(request["seed"]) == 2 and "Line one" in prompt_of(request):
            return "no idea"
        return replies[int(request["seed"])]

    with FakeServer(respond) as s:
        args = [*relevance_args(files, out, cache), "--prompt", "umbrela"]
        args += ["--base-url", s.url, "--model", "m", "--temperature", "0.7", "--samples", "3"]
        result = invoke(args)
    # (q1, d1): 3, 1 read and one unparsed: no label (the mode of the two read, 1, is not
    # the mode of three); the other pairs 3, 1, 1 → 1
    assert result.exit_code == 1, result.output
    assert out.read_text().splitlines() == ["q1 0 d2 1", "q2 0 d2 1", "q2 0 d3 1"]
    assert "INCOMPLETE: 1 of 12 items have no label" in result.output
    assert "3 of 4 pairs labelled" in result.output
    assert "1 unparsed sample(s): their pairs have no label" in result.output
    assert "INCOMPLETE, 1 pair(s) without a label (exit 1)" in result.output


def test_a_resumed_run_after_a_fault_storm_writes_only_fault_free_labels(tmp_path: Path) -> None:
    """Faults of every kind and unreadable replies (30 %), the run stopped and resumed: no
    label written differs from a fault-free run's; the pairs with an unread sample have none
    (exit 1) until --retry-unparsed reads them."""
    from judge_server import FAULTS

    files = collection(tmp_path)

    def respond(request: dict[str, Any]) -> str:
        digest = hashlib.sha256(f"{prompt_of(request)}|{request['seed']}".encode()).digest()
        return f"##final score: {digest[0] % 4}"

    def judge(url: str, out: Path, cache: Path, *more: str) -> Any:
        args = [*relevance_args(files, out, cache), "--prompt", "umbrela", "--max-retries", "6"]
        args += ["--base-url", url, "--model", "m", "--temperature", "0.7", "--samples", "5"]
        return invoke([*args, *more])

    clean_out = tmp_path / "clean.txt"
    with FakeServer(respond) as clean:
        assert judge(clean.url, clean_out, tmp_path / "clean.sqlite").exit_code == 0
    reference = set(clean_out.read_text().splitlines())
    assert len(reference) == 4
    out, cache = tmp_path / "qrels.txt", tmp_path / "c.sqlite"
    with FakeServer(respond) as storm:
        storm.state.fault_rate = 0.3
        storm.state.fault_seed = 3
        storm.state.faults = (*FAULTS[:4], ("garbage",), ("garbage",), ("garbage",))
        storm.state.max_faults_per_prompt = 2
        first = judge(storm.url, out, cache)
        assert storm.state.injected["garbage"] > 0  # some samples are cached unread
        resumed = judge(storm.url, out, cache)
        assert resumed.exit_code == first.exit_code == 1, resumed.output
        written = set(out.read_text().splitlines())
        assert written < reference  # fewer labels, none different
        for _ in range(5):
            again = judge(storm.url, out, cache, "--retry-unparsed")
            if again.exit_code == 0:
                break
        assert again.exit_code == 0, again.output
    assert set(out.read_text().splitlines()) == reference


def test_a_pair_with_no_sample_read_is_unparsed(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "qrels.txt"

    def respond(request: dict[str, Any]) -> str:
        return "hmm" if "Line one" in prompt_of(request) else f"##final score: {request['seed']}"

    with FakeServer(respond) as s:
        args = [*relevance_args(files, out, tmp_path / "c.sqlite"), "--prompt", "umbrela"]
        args += ["--base-url", s.url, "--model", "m", "--temperature", "1", "--samples", "2"]
        result = invoke(args)
    assert result.exit_code == 1
    assert "INCOMPLETE, 1 pair(s) without a label" in result.output
    # seeds 0 and 1 → grades 0 and 1, a tie → 0
    assert out.read_text().splitlines() == ["q1 0 d2 0", "q2 0 d2 0", "q2 0 d3 0"]


def test_samples_need_a_temperature(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    args = [*relevance_args(files, tmp_path / "o.txt", tmp_path / "c.sqlite"), "--samples", "3"]
    result = invoke([*args, "--base-url", server.url, "--model", "m"])
    assert result.exit_code == 2
    assert "--samples 3 needs --temperature > 0" in result.output
    assert not server.state.requests


# -- several judges --------------------------------------------------------------------------

#: each model's grade of each query (by the query text in the prompt)
MODEL_GRADES = {
    "a": {"anthropological": 3, "café": 1},
    "b": {"anthropological": 2, "café": 1},
    "c": {"anthropological": 2, "café": 3},
}


def by_model(request: dict[str, Any]) -> str:
    prompt = prompt_of(request)
    grades = MODEL_GRADES[request["model"]]
    if request["model"] == "c" and "Ünïcödé" in prompt and "café" in prompt:
        return "cannot say"  # c's label of (q2, d2) is unparsed: (q2, d2) has no label
    word = next(w for w in grades if w in prompt)
    return f"##final score: {grades[word]}"


def test_ensemble_majority_members_kept_and_agreement(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out, cache = tmp_path / "qrels.txt", tmp_path / "c.sqlite"
    with FakeServer(by_model) as s:
        args = [*relevance_args(files, out, cache), "--prompt", "umbrela"]
        for model in "abc":
            args += ["--judge", f"url={s.url},model={model}"]
        args += ["--summary-json", str(tmp_path / "summary.json")]
        result = invoke(args)
        assert result.exit_code == 1, result.output  # c's unread label: (q2, d2) has none
        assert Counter(r["model"] for r in s.state.requests) == {"a": 4, "b": 4, "c": 4}
        # members' own labels, each with its sidecar
        member = {m: (tmp_path / f"qrels.judge-{i}.txt").read_text().splitlines() for i, m in
                  enumerate("abc", start=1)}  # fmt: skip
        assert member["a"] == ["q1 0 d1 3", "q1 0 d2 3", "q2 0 d2 1", "q2 0 d3 1"]
        assert member["c"] == ["q1 0 d1 2", "q1 0 d2 2", "q2 0 d3 3"]
        for i in (1, 2, 3):
            assert (tmp_path / f"qrels.judge-{i}.txt.provenance.jsonl").is_file()
        # q1: 3,2,2 → 2; (q2,d2): 1,1 and c unparsed → no label (not the vote of two
        # judges); (q2,d3): 1,1,3 → 1
        assert out.read_text().splitlines() == ["q1 0 d1 2", "q1 0 d2 2", "q2 0 d3 1"]
        assert "3 of 4 pairs labelled" in result.output and "unparsed 1" in result.output
        assert "INCOMPLETE, 1 pair(s) without a label (exit 1)" in result.output
        sidecar = (tmp_path / "qrels.txt.provenance.jsonl").read_text()
        assert '"aggregation": "majority, ties to the lowest grade"' in sidecar
        assert all(f'"model": "{m}"' in sidecar for m in "abc")
        # a rerun asks nothing
        assert invoke(args).exit_code == 1 and len(s.state.requests) == 12
    # agreement, worked by hand. a and b on 4 pairs: a = 3,3,1,1; b = 2,2,1,1 → p_o = 1/2,
    # p_e = (2/4·0)[3] + (2/4·2/4)[1] + 0[2] = 1/4 → κ = (1/2 − 1/4)/(3/4) = 1/3
    summary = json.loads((tmp_path / "summary.json").read_text())
    pairwise = {tuple(p["judges"]): p for p in summary["agreement"]["pairwise"]}
    assert pairwise[(1, 2)]["n"] == 4
    assert pairwise[(1, 2)]["kappa"] == pytest.approx(1 / 3)
    # b and c on 3 pairs: b = 2,2,1; c = 2,2,3 → p_o = 2/3; margins b: {2: 2/3, 1: 1/3},
    # c: {2: 2/3, 3: 1/3} → p_e = 4/9 → κ = (2/3 − 4/9)/(5/9) = 2/5
    assert pairwise[(2, 3)]["n"] == 3
    assert pairwise[(2, 3)]["kappa"] == pytest.approx(0.4)
    assert "Krippendorff's alpha" in result.output and "judges 1 and 2: Cohen's kappa 0.333" in (
        result.output
    )


def test_a_ties_between_judges_go_to_the_lowest_grade(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "qrels.txt"
    judges = tmp_path / "judges.toml"
    with FakeServer(by_model) as s:
        judges.write_text(
            f'[[judges]]\nurl = "{s.url}"\nmodel = "a"\n\n[[judges]]\nurl = "{s.url}"\n'
            'model = "c"\n'
        )
        args = [*relevance_args(files, out, tmp_path / "c.sqlite"), "--prompt", "umbrela"]
        result = invoke([*args, "--judges", str(judges)])
    assert result.exit_code == 1, result.output
    # q1: 3 vs 2 → 2; (q2,d2): c unparsed → no label; (q2,d3): 1 vs 3 → 1
    assert out.read_text().splitlines() == ["q1 0 d1 2", "q1 0 d2 2", "q2 0 d3 1"]


def test_a_judge_that_never_answers_readably_is_not_named_and_exits_1(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "qrels.txt"

    def respond(request: dict[str, Any]) -> str:
        return "no idea" if request["model"] == "bad" else "##final score: 2"

    with FakeServer(respond) as s:
        args = [*relevance_args(files, out, tmp_path / "c.sqlite"), "--prompt", "umbrela"]
        for model in ("good", "bad", "fine"):
            args += ["--judge", f"url={s.url},model={model}"]
        result = invoke(args)
    assert result.exit_code == 1, result.output
    assert "0 of 4 pairs labelled" in result.output
    assert "judge(s) 2 labelled no pair" in result.output
    assert out.read_text() == ""
    sidecar = (tmp_path / "qrels.txt.provenance.jsonl").read_text()
    assert '"model": "good"' in sidecar and '"model": "fine"' in sidecar
    assert '"model": "bad"' not in sidecar


def test_ensemble_input_errors(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    args = relevance_args(files, tmp_path / "o.txt", tmp_path / "c.sqlite")
    one = invoke([*args, "--judge", f"url={server.url},model=a"])
    assert one.exit_code == 2 and "at least 2 judges" in one.output
    bad = invoke([*args, "--judge", f"url={server.url}", "--judge", "model=b"])
    assert bad.exit_code == 2 and "no model=" in bad.output
    both = invoke([*args, "--model", "m", "--judge", f"url={server.url},model=a"])
    assert both.exit_code == 2 and "not both" in both.output
    judges = tmp_path / "judges.json"
    judges.write_text(json.dumps([{"url": server.url, "model": "a"}, {"url": server.url}]))
    missing = invoke([*args, "--judges", str(judges)])
    assert missing.exit_code == 2 and "judges.json: judge 2: no model=" in missing.output
    assert not server.state.requests


# -- bias probes -----------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (3, 10), (0, 50), (17, 40), (49, 50)])
def test_wilson_interval_matches_scipy(k: int, n: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    from ragmeter.judges.probes import wilson_interval

    reference = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    low, high = wilson_interval(k, n)
    assert low == pytest.approx(reference.low, abs=1e-12)
    assert high == pytest.approx(reference.high, abs=1e-12)


def test_wilson_interval_by_hand() -> None:
    from ragmeter.judges.probes import wilson_interval

    # k = 5, n = 10, z = 1.959963985: centre 0.5; half = z·√(0.025 + z²/400)/(1 + z²/10)
    z = 1.959963984540054
    half = z * (0.025 + z * z / 400) ** 0.5 / (1 + z * z / 10)
    assert wilson_interval(5, 10) == pytest.approx((0.5 - half, 0.5 + half))
    assert all(x != x for x in wilson_interval(0, 0))  # NaN, NaN


def test_probe_length_and_self_consistency(tmp_path: Path) -> None:
    from ragmeter.judges.probes import FILLER

    files = collection(tmp_path)
    out = tmp_path / "probe.json"

    def respond(request: dict[str, Any]) -> str:
        prompt, seed = prompt_of(request), int(request["seed"])
        if FILLER in prompt:  # padded: the long passage of d1 goes up to 3
            return "##final score: 3" if "Line one" in prompt else "##final score: 1"
        if "café" in prompt and "Ünïcödé" in prompt:  # (q2, d2) wavers between samples
            return f"##final score: {seed % 2}"
        return "##final score: 1"

    with FakeServer(respond) as s:
        args = ["judge", "probe", "--run", str(files["run"]), "--queries", str(files["queries"])]
        args += ["--corpus", str(files["corpus"]), "--out", str(out), "--prompt", "umbrela"]
        args += ["--base-url", s.url, "--model", "m", "--cache", str(tmp_path / "c.sqlite")]
        args += ["--quiet", "--pairs", "4", "--samples", "3", "--temperature", "0.8"]
        result = invoke(args)
        assert result.exit_code == 0, result.output
        assert len(s.state.requests) == 4 * 3 * 2  # pairs × samples × (plain, padded)
        assert invoke(args).exit_code == 0 and len(s.state.requests) == 24  # cached
    report = json.loads(out.read_text())
    # plain votes: d1 1, (q1,d2) 1, (q2,d2) seeds 0,1,2 → 0,1,0 → 0, (q2,d3) 1;
    # padded: d1 3, the others 1 → flips: (q1,d1) up, (q2,d2) up (0 → 1)
    assert (report["length"]["flips"], report["length"]["n"]) == (2, 4)
    assert (report["length"]["up"], report["length"]["down"]) == (2, 0)
    # self-consistency: only (q2, d2) disagrees with itself
    assert (report["self_consistency"]["flips"], report["self_consistency"]["n"]) == (1, 4)
    assert report["position"]["applicable"] is False
    assert "length (+200 neutral words): flip rate 50.0% (2 of 4 pairs" in result.output


def test_option_errors_exit_2_and_ask_nothing(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    args = [*relevance_args(files, tmp_path / "o.txt", tmp_path / "c.sqlite")]
    args += ["--base-url", server.url, "--model", "m"]
    bogus = invoke([*args, "--prompt", "umbrella"])
    assert bogus.exit_code == 2 and "unknown prompt 'umbrella'" in bogus.output
    logprobs = invoke([*args, "--prompt", "umbrela", "--logprobs", "5"])
    assert logprobs.exit_code == 2 and "reads the reply text only" in logprobs.output
    hot = invoke([*args, "--temperature", "3"])
    assert hot.exit_code == 2 and "temperature must be in 0..2" in hot.output
    assert not server.state.requests


def test_ensemble_dry_run_counts_each_judges_calls(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    args = [*relevance_args(files, tmp_path / "o.txt", tmp_path / "c.sqlite"), "--dry-run"]
    args += ["--judge", f"url={server.url},model=a", "--judge", f"url={server.url},model=b"]
    args += ["--samples", "2", "--temperature", "0.5"]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    assert "judge 1: dry run: relevance with a: 8 items, 8 unique, 0 cached, 8 calls" in (
        result.output
    )
    assert "judge 2: dry run: relevance with b:" in result.output
    assert not server.state.requests


class ScriptedJudge:
    """A plain judge answering from a table ``{(query, passage): reply}``; a missing entry
    is a failed request (status error, never cached)."""

    def __init__(self, model: str, replies: dict[tuple[str, str], str]) -> None:
        self.model = model
        self.replies = replies

    def judge(self, task: Any, inputs: Any) -> Any:
        from ragmeter.judges.types import Judgment

        reply = self.replies.get((inputs["query"], inputs["passage"]))
        if reply is None:
            return Judgment(None, "error", error="boom")
        value, status = task.parse(reply)
        return Judgment(value, status, raw=reply, model=self.model)


def test_a_pair_a_judge_failed_on_waits_for_a_rerun() -> None:
    from ragmeter.judges.api import relevance_job
    from ragmeter.judges.cache import JudgmentCache
    from ragmeter.judges.ensemble import run_ensemble

    queries, corpus = {"q": "query"}, {"d1": "one", "d2": "two"}
    job = relevance_job({"q": ["d1", "d2"]}, queries, corpus, prompt="umbrela")
    a = ScriptedJudge("a", {("query", "one"): "##final score: 3", ("query", "two"): "2"})
    b = ScriptedJudge("b", {("query", "one"): "##final score: 1"})  # fails on d2
    with JudgmentCache(":memory:") as cache:
        result = run_ensemble(job, [a, b], cache=cache)
        assert result.labels == {"q": {"d1": 1}}  # 3 vs 1: a tie, the lower grade
        assert [(m.ident, m.reason) for m in result.missing] == [(("q", "d2"), "failed")]
        assert not result.complete
        b.replies[("query", "two")] = "##final score: 2"
        again = run_ensemble(job, [a, b], cache=cache)
        assert again.labels == {"q": {"d1": 1, "d2": 2}} and again.complete
        assert [m.summary.calls for m in again.members] == [0, 1]  # only the failed one


def test_reversed_examples_keep_everything_but_the_order() -> None:
    from ragmeter.judges.umbrela import REVERSED_EXAMPLES, prompt_parts

    original, _, _ = prompt_parts("umbrela-fewshot")
    variant, system, sha = prompt_parts(REVERSED_EXAMPLES)
    cut = "\n\n###\n\n"
    a, b = original.split(cut), variant.split(cut)
    assert len(a) == len(b) == 6 and a[0] == b[0] and a[-1] == b[-1]
    assert b[1:5] == a[4:0:-1]
    finals = [part.rsplit("##final score: ", 1)[1] for part in b[1:5]]
    assert finals == ["3", "2", "1", "0"]
    assert system == "You are a helpful assistant."
    assert sha == hashlib.sha256(variant.encode("utf-8")).hexdigest()


def test_probe_position_on_the_few_shot_prompt(tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "probe.json"

    def respond(request: dict[str, Any]) -> str:
        prompt = prompt_of(request)
        reversed_order = prompt.index("##final score: 3") < prompt.index("##final score: 0")
        if reversed_order and "café" in prompt:  # q2's pairs go down when reordered
            return "##final score: 0"
        return "##final score: 2"

    with FakeServer(respond) as s:
        args = ["judge", "probe", "--run", str(files["run"]), "--queries", str(files["queries"])]
        args += ["--corpus", str(files["corpus"]), "--out", str(out)]
        args += ["--prompt", "umbrela-fewshot", "--pairs", "10", "--quiet"]
        args += ["--base-url", s.url, "--model", "m", "--cache", str(tmp_path / "c.sqlite")]
        result = invoke(args)
        assert result.exit_code == 0, result.output
        assert len(s.state.requests) == 4 * 3  # plain, padded, reordered
    position = json.loads(out.read_text())["position"]
    assert position["applicable"] is True
    assert (position["flips"], position["n"], position["up"], position["down"]) == (2, 4, 0, 2)
    assert "position (examples reversed): flip rate 50.0% (2 of 4 pairs" in result.output
