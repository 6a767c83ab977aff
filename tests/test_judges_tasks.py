"""Judge tasks: packaged prompts, strict and lenient parsers (unparseable → −1, never 0),
cache keys, config resolution, and the light core import."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.judges import TASKS, JudgeConfig, JudgeConfigError, Price, make_task
from ragmeter.judges.cache import JudgmentCache, judgment_key
from ragmeter.judges.config import resolve_config
from ragmeter.judges.tasks import (
    load_prompt,
    parse_correctness,
    parse_grade,
    parse_no_answer,
    parse_subquestions,
)
from ragmeter.judges.types import Judgment


def test_every_task_has_a_packaged_versioned_prompt() -> None:
    for name in TASKS:
        prompt = load_prompt(name)
        if name.startswith("umbrela"):  # umbrela's own templates: its commit, the full hash
            assert prompt.task == name and prompt.version == "e2c4e41"
            assert len(prompt.digest) == 64 and prompt.digest == prompt.sha256 and prompt.user
            continue
        assert prompt.task == name and prompt.version == "1"
        assert len(prompt.digest) == 8 and prompt.user
    relevance = make_task("relevance").messages({"query": "Q?", "passage": "P {x}."})
    assert relevance[0]["role"] == "system"
    assert "Query: Q?" in relevance[1]["content"] and "P {x}." in relevance[1]["content"]
    assert (
        "{n}"
        not in make_task("subquestions", n=4).messages({"query": "q", "reference": "r"})[1][
            "content"
        ]
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", (4, "ok")),
        (" 5\n", (5, "ok")),
        ("**3**", (3, "ok")),
        ("2.", (2, "ok")),
        ("Grade: 4", (4, "lenient")),
        ("I would rate this passage 3/5.", (3, "lenient")),
        ('{"grade": 5, "why": "decisive"}', (5, "lenient")),
        ("<think>maybe 2 or 3</think>The answer is 4", (4, "lenient")),
        ("The passage is highly relevant: 4", (4, "lenient")),
        ("3 or 4", (-1, "unparsed")),  # ambiguous
        ("6", (-1, "unparsed")),  # out of range
        ("0", (-1, "unparsed")),  # 0 is not a relevance grade
        ("", (-1, "unparsed")),
        ("~~ ??? ~~", (-1, "unparsed")),
        ("12", (-1, "unparsed")),
        ("4 - highly relevant", (4, "lenient")),  # a lone digit that begins the reply
        ("The Line 4 tram runs every 10 minutes.", (-1, "unparsed")),  # the query's own digit
        ("See section 2 of the passage", (-1, "unparsed")),
        ("Version 2.5", (-1, "unparsed")),
    ],
)
def test_parse_relevance_grade(text: str, expected: tuple[int, str]) -> None:
    assert parse_grade(text, 1, 5) == expected


def test_parse_answerability_rating_accepts_zero() -> None:
    assert parse_grade("0", 0, 5) == (0, "ok")
    assert parse_grade("Rating: 0", 0, 5) == (0, "lenient")
    assert parse_grade("none", 0, 5) == (-1, "unparsed")


def test_parse_grade_falls_back_on_the_first_token_logprobs() -> None:
    top = (("The", -0.2), ("4", -1.9), (" 3", -2.5), ("7", -0.1), ("12", -0.05))
    # unreadable text: the most probable in-range one-digit first token wins (4, not 7 or 12)
    assert parse_grade("The Line 4 tram", 1, 5, top) == (4, "lenient")
    # readable text is never overridden by the log-probabilities
    assert parse_grade("2", 1, 5, top) == (2, "ok")
    assert parse_grade("nothing", 1, 5, (("No", -0.1), ("0", -1.0))) == (-1, "unparsed")
    assert parse_grade("nothing", 0, 5, (("No", -0.1), ("0", -1.0))) == (0, "lenient")
    relevance = make_task("relevance", grade_logprobs=5)
    assert relevance.top_logprobs == 5 and relevance.cache_params()["top_logprobs"] == 5
    assert relevance.parse("junk", (("3", -0.3),)) == (3, "lenient")
    assert make_task("answerability").top_logprobs is None


@given(st.text(max_size=40))
def test_parse_grade_never_invents_a_zero_or_out_of_range(text: str) -> None:
    value, status = parse_grade(text, 1, 5)
    assert (status == "unparsed" and value == -1) or (1 <= value <= 5 and status != "unparsed")


def test_parse_subquestions() -> None:
    strict = "1. Who won?\n2. When?\n3. Where was it?"
    assert parse_subquestions(strict, 3) == (["Who won?", "When?", "Where was it?"], "ok")
    assert parse_subquestions(strict, 2) == (["Who won?", "When?"], "lenient")
    bullets = "Here you go:\n- Who won?\n* who won?\n- Why did it matter?\nThanks"
    assert parse_subquestions(bullets, 5) == (["Who won?", "Why did it matter?"], "lenient")
    assert parse_subquestions('["A?", "B?"]', 2) == (["A?", "B?"], "lenient")
    assert parse_subquestions('{"questions": ["A?"]}', 2) == (["A?"], "lenient")
    assert parse_subquestions("no questions here.", 3) == (None, "unparsed")


def test_parse_correctness() -> None:
    assert parse_correctness("CORRECT\nSame city.") == (
        {"correct": 1, "reason": "Same city."},
        "ok",
    )
    assert parse_correctness("incorrect.\nWrong year") == (
        {"correct": 0, "reason": "Wrong year"},
        "ok",
    )
    assert parse_correctness('{"correct": true, "reason": "ok"}') == (
        {"correct": 1, "reason": "ok"},
        "lenient",
    )
    assert parse_correctness("The answer is not correct.")[0]["correct"] == 0
    assert parse_correctness("Yes, it matches.")[0]["correct"] == 1
    assert parse_correctness("hmm") == ({"correct": -1, "reason": None}, "unparsed")


def test_parse_no_answer_from_first_token() -> None:
    top = (("NO", math.log(0.5)), (" No", math.log(0.2)), ("Paris", math.log(0.3)))
    value, status = parse_no_answer("Paris", top)
    assert value == pytest.approx(0.7) and status == "ok"
    assert parse_no_answer("NO ANSWER", None) == (1.0, "lenient")
    assert parse_no_answer("Paris is", None) == (0.0, "lenient")
    assert parse_no_answer("", None) == (-1.0, "unparsed")


def test_cache_key_covers_task_prompt_model_params_inputs(tmp_path: Path) -> None:
    base = ("relevance", "1-abc", "m", {"max_tokens": 8}, {"query": "q", "passage": "p"})
    key = judgment_key(*base)
    assert len(key) == 64
    for i, changed in enumerate(
        ["answerability", "2-abc", "m2", {"max_tokens": 9}, {"query": "q", "passage": "p2"}]
    ):
        args = list(base)
        args[i] = changed
        assert judgment_key(*args) != key
    # dict order does not matter
    assert judgment_key(*base[:4], {"passage": "p", "query": "q"}) == key
    with JudgmentCache(tmp_path / "x" / "c.sqlite") as cache:
        j = Judgment(4, "ok", raw="4", model="m", input_tokens=10, output_tokens=1)
        cache.put(
            key, task="relevance", prompt="1-abc", model="m", params={}, inputs={}, judgment=j
        )
        assert cache.get_many([key, "missing"])[key].value == 4
        with pytest.raises(ValueError, match="not cached"):
            cache.put(
                "k2",
                task="t",
                prompt="p",
                model="m",
                params={},
                inputs={},
                judgment=Judgment(None, "error"),
            )
    with JudgmentCache(tmp_path / "x" / "c.sqlite") as cache:  # survives reopening
        assert len(cache) == 1
        mode = cache._db.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"


def test_config_precedence(tmp_path: Path) -> None:
    toml = tmp_path / "r.toml"
    toml.write_text(
        '[judge]\nbase_url = "http://cfg:1/v1"\nmodel = "cfg-model"\nconcurrency = 3\n'
        'rpm = 60\n[judge.prices]\n"cfg-model" = [0.5, 1.5]\n'
    )
    env = {"RAGMETER_BASE_URL": "http://a:1/v1, http://b:2/v1/", "K": "key"}
    cfg = resolve_config(config_file=toml, environ=env, api_key_env="K")
    assert cfg.base_urls == ("http://a:1/v1", "http://b:2/v1")
    assert cfg.model == "cfg-model" and cfg.concurrency == 3 and cfg.rpm == 60
    assert cfg.api_key == "key" and cfg.price == Price(0.5, 1.5)
    cfg = resolve_config(
        base_urls=["http://opt:1/v1"], model="opt", concurrency=9, config_file=toml, environ=env
    )
    assert cfg.base_urls == ("http://opt:1/v1",) and cfg.model == "opt" and cfg.concurrency == 9
    assert cfg.api_key is None and cfg.price is None  # no price for "opt"
    with pytest.raises(JudgeConfigError, match="no judge server"):
        resolve_config(model="m", environ={}, config_file=None)
    with pytest.raises(JudgeConfigError, match="no judge model"):
        JudgeConfig(base_urls=("http://x",), model="")
    bad = tmp_path / "bad.toml"
    bad.write_text("[judge]\nmodle = 1\n")
    with pytest.raises(JudgeConfigError, match="unknown key"):
        resolve_config(config_file=bad, environ={})


def test_price() -> None:
    assert Price.parse("0.15,0.60") == Price(0.15, 0.60)
    assert Price.parse("2") == Price(2.0, 2.0)
    assert Price(1.0, 3.0).cost(2_000_000, 1_000_000) == pytest.approx(5.0)
    with pytest.raises(JudgeConfigError):
        Price.parse("cheap")


def test_core_import_stays_light() -> None:
    code = (
        "import sys, ragmeter, ragmeter.cli, ragmeter.judges; "
        "bad = [m for m in ('httpx', 'httpcore', 'anyio', 'aiohttp') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


class CountingJudge:
    """A plugged-in judge (as the offline embedding judge plugs in): grade = passage length
    mod 5 + 1, counting how many inputs it was asked about."""

    model = "counting-v1"

    def __init__(self) -> None:
        self.asked = 0

    def judge(self, task: object, inputs: dict[str, str]) -> Judgment:
        self.asked += 1
        return Judgment(len(inputs["passage"]) % 5 + 1, "ok")


def test_a_plugged_in_judge_gets_the_same_cache_and_outputs(tmp_path: Path) -> None:
    from ragmeter.judges import judge_relevance

    run = {"q1": ["d1", "d2", "d3"], "q2": ["d3"]}
    queries = {"q1": "first?", "q2": "second?"}
    corpus = {"d1": "a", "d2": "bb", "d3": "cccccc"}
    judge = CountingJudge()
    out = judge_relevance(run, queries, corpus, judge=judge, cache=tmp_path / "c.sqlite")
    assert out.labels == {"q1": {"d1": 2, "d2": 3, "d3": 2}, "q2": {"d3": 2}}
    assert judge.asked == 4 and out.summary.judged == 4
    again = judge_relevance(run, queries, corpus, judge=judge, cache=tmp_path / "c.sqlite")
    assert again.labels == out.labels and judge.asked == 4 and again.summary.cached == 4


def test_offline_flag_uses_the_offline_judge_factory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    from typer.testing import CliRunner

    from ragmeter.cli import app

    module = types.ModuleType("ragmeter.judges.offline")
    module.offline_judge = lambda task: CountingJudge()  # type: ignore[attr-defined]
    module.OFFLINE_TASKS = ("relevance", "answerability")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ragmeter.judges.offline", module)
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "first?"}\n')
    (tmp_path / "c.jsonl").write_text('{"id": "d1", "text": "a"}\n{"id": "d2", "text": "bb"}\n')
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\n")
    args = ["judge", "relevance", "--offline", "--run", str(tmp_path / "run.txt")]
    args += ["--queries", str(tmp_path / "q.jsonl"), "--corpus", str(tmp_path / "c.jsonl")]
    args += ["--out", str(tmp_path / "qrels.txt"), "--cache", str(tmp_path / "c.sqlite")]
    result = CliRunner().invoke(app, [*args, "--quiet"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "qrels.txt").read_text() == "q1 0 d1 2\nq1 0 d2 3\n"
    assert "counting-v1" in result.output and "cost unknown" in result.output


def test_rates_stay_readable_when_slow() -> None:
    from ragmeter.judges.progress import format_rate

    assert [format_rate(r) for r in (1234.4, 56.78, 3.21, 0.428)] == ["1234", "56.8", "3.2", "0.43"]
    assert format_rate(122_484.0) == "122k"  # four characters at most


@pytest.mark.parametrize("width", [80, 100, 140])
@pytest.mark.parametrize(
    ("description", "total"),
    [("judge relevance", 1500), ("judge 2 (qwen2.5-72b-instruct-awq-int4)", 120_000)],
)
def test_the_progress_line_fits_the_terminal_with_every_count_whole(
    width: int, description: str, total: int
) -> None:
    import io
    import re

    from rich.console import Console

    from ragmeter.judges.progress import RichProgress
    from ragmeter.judges.types import Judgment

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, color_system=None)
    progress = RichProgress(description, console=console)
    progress.start(total=total, cached=300)
    for status in ["ok"] * 50 + ["unparsed"] * 7:
        progress.advance(Judgment(value=2, status=status, raw="2", model="m"))  # type: ignore[arg-type]
    progress.stop()
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buffer.getvalue()).replace("\r", "\n")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    assert lines and all(len(line) <= width for line in lines), lines
    last = lines[-1]
    assert f"357/{total}" in last  # 300 cached + 57 asked, never squeezed to "3…"
    assert "unparsed 7 · errors 0" in last and "ETA" in last
    assert "…/s" not in last and "/s" in last
    assert description.split()[0] in last
