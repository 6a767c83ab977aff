"""``ragmeter monitor``: a week of synthetic traffic as OTLP traces, judged by the fake
OpenAI-compatible server, stored per day; the drift check flags the day retrieval degrades;
reruns judge only new spans; the Prometheus exposition and the HTML trend page."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from judge_server import FakeServer, prompt_of
from ragmeter.analysis.monitor import (
    choose,
    parse_monitor_rule,
    parse_sample,
    parse_window,
    sample_key,
    welch_test,
    window_of,
)
from ragmeter.cli import app
from ragmeter.errors import RagmeterError
from traces_util import DAY0_NS, HOUR_NS, rag_trace, request, write_lines

runner = CliRunner()
DAY_NS = 24 * HOUR_NS
USEFUL, FILLER = "a useful passage about the question", "filler text about nothing"
PER_DAY = 10


def grade_reply(request: dict[str, Any]) -> str:
    return "##final score: 3" if USEFUL in prompt_of(request) else "##final score: 0"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(grade_reply) as s:
        yield s


def day_traffic(day: int) -> list[dict[str, Any]]:
    """One day's requests: 5 passages each; before day 5 (0-based 4) the first 2 or 3 are
    useful, from day 5 on only the last one is."""
    records = []
    for i in range(PER_DAY):
        n = day * 100 + i
        useful = (2 + i % 2) if day < 4 else 0
        texts = [f"{USEFUL} #{j}" if j < useful else f"{FILLER} #{j}" for j in range(5)]
        if day >= 4:
            texts[4] = f"{USEFUL} #4"
        docs = [f"doc{n}-{j}" for j in range(5)]
        start = DAY0_NS + day * DAY_NS + i * HOUR_NS
        spans = rag_trace(n, f"question {n}", docs, start, texts=texts, retrieve_ms=10.0 + i)
        records.append(request(spans))
    return records


def write_week(path: Path, days: range = range(7)) -> Path:
    return write_lines(path, [r for d in days for r in day_traffic(d)])


def monitor_args(server: FakeServer, tmp: Path, *traces: Path, sample: str = "6") -> list[str]:
    return [
        "monitor",
        *map(str, traces),
        "--store",
        f"sqlite:///{tmp / 'monitor.db'}",
        "--sample",
        sample,
        "--window",
        "1d",
        "--base-url",
        server.url,
        "--model",
        "m",
        "--cache",
        str(tmp / "cache.sqlite"),
        "--quiet",
    ]


def store_args(tmp: Path) -> list[str]:
    return ["--store", f"sqlite:///{tmp / 'monitor.db'}"]


# -- the parts ------------------------------------------------------------------------------


def test_windows_and_samples_parse() -> None:
    assert parse_window("1d") == 86400 and parse_window("15m") == 900
    assert parse_sample("200").count == 200 and parse_sample("0.05").rate == 0.05
    assert parse_sample("1").count == 1
    for bad in ("0", "-1", "x", "1.5"):
        with pytest.raises(RagmeterError):
            parse_sample(bad)
    with pytest.raises(RagmeterError):
        parse_window("1w")
    # 2026-01-05T13:30Z lies in the day window starting 2026-01-05T00:00Z
    assert window_of(DAY0_NS + 13 * HOUR_NS + 1800 * 10**9, 86400) == DAY0_NS // 10**9


def test_sampling_is_seeded_and_fills_windows() -> None:
    spans = [(0, f"s{i}") for i in range(20)] + [(86400, f"t{i}") for i in range(5)]
    chosen = choose(spans, parse_sample("3"), seed=1)
    assert chosen == choose(list(reversed(spans)), parse_sample("3"), seed=1)
    assert sum(s.startswith("s") for s in chosen) == 3
    assert sum(s.startswith("t") for s in chosen) == 3
    # the 3 smallest keys of the first window
    by_key = sorted((sample_key(1, f"s{i}"), f"s{i}") for i in range(20))
    assert {s for _, s in by_key[:3]} <= chosen
    # a window holding 2 from an earlier run takes 1 more
    assert sum(s.startswith("s") for s in choose(spans, parse_sample("3"), 1, {0: 2})) == 1
    rate = choose(spans, parse_sample("0.5"), seed=1)
    assert rate == {s for _, s in spans if sample_key(1, s) < 0.5}


def test_welch_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    x, y = [0.2, 0.4, 0.4, 0.6, 0.9], [0.5, 0.7, 0.8, 0.8, 0.9, 1.0]
    ours = welch_test(x, y)
    ref = stats.ttest_ind(x, y, equal_var=False)
    assert ours.t == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)


# -- the command, end to end ------------------------------------------------------------------


def test_week_of_traffic_flags_day_five(server: FakeServer, tmp_path: Path) -> None:
    traces = write_week(tmp_path / "week.json")
    out = runner.invoke(app, monitor_args(server, tmp_path, traces))
    assert out.exit_code == 0, out.output
    assert (
        "210 span(s) read, 210 new; 42 retriever span(s) sampled, 210 pair(s) labelled"
        in out.output
    )
    assert "computed on LLM labels (umbrela, model m)" in out.output

    rule = ["--fail-if", "ndcg@5 drop > 0.05 significant", "--baseline", "first", "--per-window"]
    for day in ("2026-01-06", "2026-01-07", "2026-01-08"):
        ok = runner.invoke(app, ["monitor", "check", *rule, "--at", day, *store_args(tmp_path)])
        assert ok.exit_code == 0, ok.output
    flagged = runner.invoke(
        app,
        ["monitor", "check", *rule, "--at", "2026-01-09", "-f", "json", *store_args(tmp_path)],
    )
    assert flagged.exit_code == 3, flagged.output
    verdict = json.loads(flagged.output)
    (outcome,) = verdict["rules"]
    assert outcome["broken"] and verdict["test"] == "welch"
    # from day 5 the one useful passage (grade 3) is at rank 5 of 5: nDCG = (3/log2 6)/3
    assert outcome["run"] == pytest.approx(1 / math.log2(6))
    assert outcome["baseline"] == pytest.approx(1.0)  # useful passages first: ideal order
    assert any("LLM labels" in w for w in verdict["warnings"])
    # the latest window against the one before it: both degraded, no drop
    latest = runner.invoke(
        app, ["monitor", "check", *rule[:2], "--per-window", *store_args(tmp_path)]
    )
    assert latest.exit_code == 0, latest.output
    # sequentially (the default), six sampled spans a day are too few to see the drop with
    # α spent over every look: it passes, and says over how many looks it read
    sequential = runner.invoke(
        app, ["monitor", "check", *rule[:2], "-f", "json", *store_args(tmp_path)]
    )
    assert sequential.exit_code == 0, sequential.output
    read = json.loads(sequential.output)
    assert read["test"] == "confidence sequence" and read["correction"] == "bonferroni"
    (seq,) = read["rules"]
    assert seq["sequence"]["looks"] == 6 and seq["sequence"]["fired_at"] is None


def test_precision_per_window_is_computed_by_hand(server: FakeServer, tmp_path: Path) -> None:
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_samples, load_windows

    traces = write_week(tmp_path / "week.jsonl", range(1))
    out = runner.invoke(app, monitor_args(server, tmp_path, traces, sample="1.0"))
    assert out.exit_code == 0, out.output
    with open_store(f"sqlite:///{tmp_path / 'monitor.db'}") as store:
        rows = {r.measure: r for r in load_windows(store, "production")}
        samples = load_samples(store, "production")
    # request i has 2 + i % 2 useful passages of 5 (grade 3 ≥ rel_level 2): P@5 0.4 or 0.6
    expected = [(2 + i % 2) / 5 for i in range(PER_DAY)]
    assert rows["precision@5(rel_level=2)"].mean == pytest.approx(np.mean(expected))
    assert rows["precision@5(rel_level=2)"].n == PER_DAY
    low, high = rows["precision@5(rel_level=2)"].low, rows["precision@5(rel_level=2)"].high
    assert 0.4 <= low <= 0.5 <= high <= 0.6
    # retriever latencies 10..19 ms: p50 = 14.5, p95 = 10 + 0.95 · 9 (linear interpolation)
    assert rows["latency_ms.p50(stage=retriever)"].mean == pytest.approx(14.5)
    assert rows["latency_ms.p95(stage=retriever)"].mean == pytest.approx(10 + 0.95 * 9)
    assert {s.judge.model for s in samples} == {"m"}
    assert {s.judge.prompt_id for s in samples} == {"umbrela"}


def test_rerun_judges_only_new_spans(server: FakeServer, tmp_path: Path) -> None:
    first = write_week(tmp_path / "a.json", range(2))
    assert runner.invoke(app, monitor_args(server, tmp_path, first)).exit_code == 0
    asked = sum(server.state.seen.values())
    assert asked == 2 * 6 * 5  # 6 spans per day sampled, 5 passages each
    again = runner.invoke(app, monitor_args(server, tmp_path, first))
    assert again.exit_code == 0 and "0 new; 0 retriever span(s) sampled" in again.output
    assert sum(server.state.seen.values()) == asked
    overlapping = write_week(tmp_path / "b.json", range(1, 3))
    out = runner.invoke(app, monitor_args(server, tmp_path, overlapping))
    assert out.exit_code == 0, out.output
    assert "60 span(s) read, 30 new; 6 retriever span(s) sampled" in out.output
    assert sum(server.state.seen.values()) == asked + 6 * 5


def test_another_judge_is_refused(server: FakeServer, tmp_path: Path) -> None:
    first = write_week(tmp_path / "a.json", range(1))
    assert runner.invoke(app, monitor_args(server, tmp_path, first)).exit_code == 0
    later = write_week(tmp_path / "b.json", range(1, 2))
    args = monitor_args(server, tmp_path, later)
    args[args.index("m")] = "other-model"
    out = runner.invoke(app, args)
    assert out.exit_code == 2 and "was judged by umbrela, model m" in out.output


def test_prometheus_exposition(server: FakeServer, tmp_path: Path) -> None:
    traces = write_week(tmp_path / "week.json", range(5))
    assert runner.invoke(app, monitor_args(server, tmp_path, traces)).exit_code == 0
    out = runner.invoke(app, ["monitor", "metrics", *store_args(tmp_path)])
    assert out.exit_code == 0, out.output
    sample_line = re.compile(r'^[a-z_]+\{([a-z_]+="(?:[^"\\\n]|\\.)*",?)+\} \S+$')
    for line in out.output.splitlines():
        assert line.startswith("# HELP ") or line.startswith("# TYPE ") or sample_line.match(line)
    values = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in out.output.splitlines()
        if not line.startswith("#")
    }
    key = (
        'ragmeter_monitor_mean{stream="production",measure="ndcg@5",labelled_by="umbrela, model m"}'
    )
    assert values[key] == pytest.approx(1 / math.log2(6))  # day 5 is the latest
    start = values['ragmeter_monitor_window_start_seconds{stream="production"}']
    assert start == DAY0_NS // 10**9 + 4 * 86400


def test_html_report_marks_the_drop(server: FakeServer, tmp_path: Path) -> None:
    traces = write_week(tmp_path / "week.json", range(6))
    assert runner.invoke(app, monitor_args(server, tmp_path, traces)).exit_code == 0
    page = tmp_path / "trend.html"
    out = runner.invoke(app, ["monitor", "report", *store_args(tmp_path), "-o", str(page)])
    assert out.exit_code == 0, out.output
    html = page.read_text()
    assert "<h2>ndcg@5</h2>" in html and "LLM labels (umbrela, model m)" in html
    assert html.count("▼") >= 1 and "2026-01-09" in html


def test_unknown_stream_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "monitor.db").touch()
    out = runner.invoke(app, ["monitor", "metrics", *store_args(tmp_path), "--name", "nope"])
    assert out.exit_code == 2 and "ragmeter: error:" in out.output


def test_demo_week_is_flagged_on_day_five(tmp_path: Path) -> None:
    """The documented demo: labels by construction, no judge; days 2–4 pass against day 1,
    day 5 fails, and so does day 5 against day 4 (the default baseline, the previous day);
    the retriever's p95 latency rises on day 5."""
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_windows

    out = runner.invoke(app, ["monitor", "demo", str(tmp_path / "demo")])
    assert out.exit_code == 0, out.output
    traces, labels = tmp_path / "demo" / "traces.json", tmp_path / "demo" / "labels.txt"
    assert (tmp_path / "demo" / "labels.txt.provenance.jsonl").exists()
    store = ["--store", f"sqlite:///{tmp_path / 'demo' / 'monitor.db'}"]
    run = runner.invoke(app, ["monitor", str(traces), "--labels", str(labels), *store])
    assert run.exit_code == 0, run.output
    assert "human (synthetic, by construction)" in run.output
    rule = ["--fail-if", "ndcg@5 drop > 0.05 significant"]
    for mode in ("--per-window", "--sequential"):
        for day, status in (("06", 0), ("07", 0), ("08", 0), ("09", 3)):
            args = ["monitor", "check", *rule, "--baseline", "first", "--at", f"2026-01-{day}"]
            assert runner.invoke(app, [*args, mode, *store]).exit_code == status, (mode, day)
    at_five = ["monitor", "check", *rule, "--at", "2026-01-09", "--per-window", *store]
    assert runner.invoke(app, at_five).exit_code == 3
    # sequentially, day 5 is the look the alarm fires at, read on day 5's spans alone; it
    # stays fired at the later looks
    fired = runner.invoke(app, ["monitor", "check", *rule, "-f", "json", *store])
    assert fired.exit_code == 3, fired.output
    (seq,) = json.loads(fired.output)["rules"]
    assert seq["sequence"]["fired_at"] == seq["sequence"]["since"] == "2026-01-09"
    assert seq["sequence"]["interval"][0] > 0.05
    moving = runner.invoke(app, ["monitor", "check", *rule, "--baseline", "previous", *store])
    assert moving.exit_code == 2 and "moves with every look" in moving.output
    # the retriever is 3× slower from day 5: its p95 latency rises
    slow = ["--fail-if", "latency_ms.p95(stage=retriever) rise > 50%", "--baseline", "first"]
    for day, status in (("08", 0), ("09", 3)):
        checked = runner.invoke(
            app, ["monitor", "check", *slow, "--at", f"2026-01-{day}", "-f", "json", *store]
        )
        assert checked.exit_code == status, checked.output
    (latency,) = json.loads(checked.output)["rules"]
    with open_store(store[1]) as opened:
        rows = {
            (r.window_start, r.measure): r.mean for r in load_windows(opened, "production", 86400)
        }
    name = "latency_ms.p95(stage=retriever)"
    assert latency["run"] == pytest.approx(rows[(DAY0_NS // 10**9 + 4 * 86400, name)])
    assert latency["baseline"] == pytest.approx(rows[(DAY0_NS // 10**9, name)])
    refused = runner.invoke(
        app, ["monitor", "check", "--fail-if", f"{name} rise > 5 significant", *store]
    )
    assert refused.exit_code == 2 and "latency rule compares" in refused.output
    # the same traces evaluated whole against the labels: the query ids meet
    evaluated = runner.invoke(
        app, ["evaluate", str(traces), "--qrels", str(labels), "-m", "ndcg@5"]
    )
    assert evaluated.exit_code == 0, evaluated.output


def test_labels_without_provenance_are_refused(tmp_path: Path) -> None:
    runner.invoke(app, ["monitor", "demo", str(tmp_path), "--days", "2", "--degrade-day", "2"])
    (tmp_path / "labels.txt.provenance.jsonl").unlink()
    store = ["--store", f"sqlite:///{tmp_path / 'monitor.db'}"]
    args = ["monitor", str(tmp_path / "traces.json"), "--labels", str(tmp_path / "labels.txt")]
    out = runner.invoke(app, [*args, *store])
    assert out.exit_code == 2 and "no provenance sidecar" in out.output


def test_export_names_labels_by_their_maker_and_says_when_empty(tmp_path: Path) -> None:
    """With --labels (people's labels, not a judge's) the export's labels file is
    human_labels.txt; a rerun with no new span writes nothing and says so."""
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.readers import read_qrels

    runner.invoke(app, ["monitor", "demo", str(tmp_path), "--days", "2", "--degrade-day", "2"])
    store = ["--store", f"sqlite:///{tmp_path / 'monitor.db'}", "--sample", "3"]
    args = ["monitor", str(tmp_path / "traces.json"), "--labels", str(tmp_path / "labels.txt")]
    first = runner.invoke(app, [*args, *store, "--export", str(tmp_path / "one")])
    assert first.exit_code == 0, first.output
    assert "their labels in human_labels.txt" in " ".join(first.output.split())
    assert not (tmp_path / "one" / "llm_labels.txt").exists()
    prov = read_provenance(tmp_path / "one" / "human_labels.txt")
    assert prov is not None and not prov.has_llm
    # 3 spans sampled in each of 2 days, 10 passages each; the demo labels every passage
    assert read_qrels(tmp_path / "one" / "human_labels.txt").n_queries == 6
    again = runner.invoke(app, [*args, *store, "--export", str(tmp_path / "two")])
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert f"no span sampled in this run (0 new span(s)): nothing written to {tmp_path}" in said
    assert not (tmp_path / "two").exists()


def test_serve_has_metrics_and_trend_pages(tmp_path: Path) -> None:
    """``/metrics`` and ``/monitor/{stream}`` of ``ragmeter serve`` show the numbers of
    ``ragmeter monitor metrics`` and ``report`` (one evaluation path, one number)."""
    pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")
    from fastapi.testclient import TestClient

    from ragmeter.web.app import create_app
    from ragmeter.web.config import build_config
    from webdata import config_kwargs, write_collection

    runner.invoke(app, ["monitor", "demo", str(tmp_path), "--days", "3", "--degrade-day", "3"])
    store = ["--store", f"sqlite:///{tmp_path / 'monitor.db'}"]
    args = ["monitor", str(tmp_path / "traces.json"), "--labels", str(tmp_path / "labels.txt")]
    assert runner.invoke(app, [*args, *store]).exit_code == 0
    cli = runner.invoke(app, ["monitor", "metrics", *store]).output
    config = build_config(**config_kwargs(write_collection(tmp_path / "data"), tmp_path))  # type: ignore[arg-type]
    config.store_url = f"sqlite:///{tmp_path / 'monitor.db'}"
    client = TestClient(create_app(config))
    metrics = client.get("/metrics")
    assert metrics.status_code == 200 and metrics.text == cli
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    page = client.get("/monitor/production")
    assert page.status_code == 200 and "<h2>ndcg@5</h2>" in page.text
    assert client.get("/monitor/nope").status_code == 404
    assert client.get("/metrics?window=1w").status_code == 400


def test_postgresql_store(postgres_url: str, tmp_path: Path) -> None:
    """The same demo on PostgreSQL: day 5 flagged, a rerun adds nothing."""
    runner.invoke(app, ["monitor", "demo", str(tmp_path), "--days", "5"])
    store = ["--store", postgres_url]
    args = ["monitor", str(tmp_path / "traces.json"), "--labels", str(tmp_path / "labels.txt")]
    first = runner.invoke(app, [*args, *store])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, [*args, *store])
    assert "900 span(s) read, 0 new; 0 retriever span(s) sampled" in again.output
    rule = ["--fail-if", "ndcg@5 drop > 0.05 significant", "--baseline", "first"]
    for mode in ("--per-window", "--sequential"):
        at_four = ["monitor", "check", *rule, "--at", "2026-01-08", mode, *store]
        assert runner.invoke(app, at_four).exit_code == 0, mode
        assert runner.invoke(app, ["monitor", "check", *rule, mode, *store]).exit_code == 3, mode
    # people's labels of a few spans: the windows' PPI estimates round-trip on PostgreSQL
    from ragmeter.core.provenance import LabelProvenance, human_source
    from ragmeter.io.provenance import write_provenance
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_ppi
    from ragmeter.workflows.monitor import monitor_ppi, ppi_rows

    lines = (tmp_path / "labels.txt").read_text().splitlines(keepends=True)
    some = {line.split()[0] for line in lines[:: len(lines) // 8]}
    human = tmp_path / "human.txt"
    human.write_text("".join(line for line in lines if line.split()[0] in some))
    write_provenance(human, LabelProvenance.single(human_source("bob")))
    result = monitor_ppi(postgres_url, "production", 86400, human, measures=["ndcg@5"])
    assert any(w.n_labelled for w in result.windows)
    with open_store(postgres_url) as opened:
        stored = load_ppi(opened, "production", 86400)
    # (an undefined figure is math.nan on both sides, which tuples compare as equal)
    assert stored == ppi_rows(result)


def test_span_measures_are_evaluate_numbers(tmp_path: Path) -> None:
    """One name, one number: a sampled span's ra_nwg@5 (grades mapped) is what ragmeter
    evaluate gives its ranking against the same labels."""
    import ragmeter
    from ragmeter.core.provenance import LabelProvenance, human_source
    from ragmeter.io.provenance import write_provenance
    from ragmeter.io.traces import query_hash
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_samples

    docs = ["a", "b", "c", "d"]
    traces = write_lines(
        tmp_path / "t.json", [request(rag_trace(1, "the question", docs, DAY0_NS, texts=docs))]
    )
    qid = query_hash("the question")
    grades = {"a": 0, "b": 3, "c": 2, "d": 1}
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(f"{qid} 0 {d} {g}\n" for d, g in grades.items()))
    write_provenance(labels, LabelProvenance.single(human_source("alice")))
    url = f"sqlite:///{tmp_path / 'm.db'}"
    args = ["monitor", str(traces), "--labels", str(labels), "--store", url]
    out = runner.invoke(app, [*args, "-m", "ra_nwg@5", "--grade-map", "0:1,1:3,2:4,3:5"])
    assert out.exit_code == 0, out.output
    with open_store(url) as store:
        (sample,) = load_samples(store, "production")
    run = ragmeter.Run.from_lists({qid: docs})
    expected = ragmeter.evaluate(run, {qid: grades}, ["ra_nwg@5"], grade_map="0:1,1:3,2:4,3:5")
    assert sample.values["ra_nwg@5"] == pytest.approx(expected.runs[0].means()["ra_nwg@5"])


def _biased(request: dict[str, Any]) -> str:
    """The judge of the PPI tests: it also rates passage 5 of every span relevant."""
    text = prompt_of(request)
    return "##final score: 3" if USEFUL in text or f"{FILLER} #4" in text else "##final score: 0"


def _judged_by_a_biased_judge(tmp_path: Path) -> tuple[Path, Path, list[int]]:
    """A day of traffic, every span judged by :func:`_biased`; people's labels (alice) of
    its first 4 spans. Returns the traces, the human qrels and each span's useful passages."""
    from ragmeter.core.provenance import LabelProvenance, human_source
    from ragmeter.io.provenance import write_provenance
    from ragmeter.io.traces import query_hash

    traces = write_week(tmp_path / "day.json", range(1))
    useful = [2 + i % 2 for i in range(PER_DAY)]
    human = tmp_path / "human.txt"
    lines = []
    for i in range(4):
        qid = query_hash(f"question {i}")
        lines += [f"{qid} 0 doc{i}-{j} {3 if j < useful[i] else 0}\n" for j in range(5)]
    human.write_text("".join(lines))
    write_provenance(human, LabelProvenance.single(human_source("alice")))
    with FakeServer(_biased) as server:
        out = runner.invoke(app, monitor_args(server, tmp_path, traces, sample="1.0"))
    assert out.exit_code == 0, out.output
    return traces, human, useful


def _monitor_ppi(tmp_path: Path, human: Path) -> Any:
    args = ["monitor", "ppi", "--human-qrels", str(human), "-m", "P@5(rel_level=2)"]
    return runner.invoke(app, [*args, *store_args(tmp_path)])


def _crossfit_by_hand(
    y: list[float], yhat: list[float], rest: list[float], alpha: float
) -> tuple[float, float, float]:
    """Cross-fit PPI++ written out (docs/ppi.md): with n ≤ 10 labels each is its own fold;
    λ_i = clip(cov(Y, Ŷ) / ((1 + n'/N)·var₁(Ŷ' ∪ Ŷ_u)), 0, 1) on the other labels (n' of
    them); θ̂ = λ̄·mean(Ŷ_u) + mean(Y − λ_i·Ŷ_i); se² = λ̄²·var(Ŷ_u)/N + var(Y − λ_i·Ŷ_i)/n
    (divisor n) times n/(n − 1), and Student's t on n − 1 df."""
    stats = pytest.importorskip("scipy.stats")
    n, big_n = len(y), len(rest)
    lams = []
    for i in range(n):
        ys = [v for j, v in enumerate(y) if j != i]
        hs = [v for j, v in enumerate(yhat) if j != i]
        my, mh = sum(ys) / len(ys), sum(hs) / len(hs)
        cov = sum((a - my) * (b - mh) for a, b in zip(ys, hs, strict=True)) / len(ys)
        every = hs + rest
        mean_all = sum(every) / len(every)
        var1 = sum((v - mean_all) ** 2 for v in every) / (len(every) - 1)
        lams.append(min(1.0, max(0.0, cov / ((1 + len(ys) / big_n) * var1))))
    lam = sum(lams) / n
    r = [a - li * b for a, b, li in zip(y, yhat, lams, strict=True)]
    mean_r, mean_u = sum(r) / n, sum(rest) / big_n
    var_r = sum((v - mean_r) ** 2 for v in r) / n
    var_u = sum((v - mean_u) ** 2 for v in rest) / big_n
    se = math.sqrt((lam * lam * var_u / big_n + var_r / n) * n / (n - 1))
    theta = lam * mean_u + mean_r
    half = stats.t.ppf(1 - alpha / 2, n - 1) * se
    return theta, theta - half, theta + half


def test_ppi_corrects_a_biased_judge(tmp_path: Path) -> None:
    """The judge also rates passage 5 of every span relevant; people label 4 of the 10
    sampled spans. P@5 by hand: Y = useful/5, Ŷ = (useful + 1)/5; the estimate is cross-fit
    PPI++'s, the default estimator of ``evaluate --ppi`` (one name, one number), written
    out by :func:`_crossfit_by_hand`."""
    _, human, useful = _judged_by_a_biased_judge(tmp_path)
    result = _monitor_ppi(tmp_path, human)
    assert result.exit_code == 0, result.output
    y = [useful[i] / 5 for i in range(4)]
    yhat = [(useful[i] + 1) / 5 for i in range(4)]
    rest = [(useful[i] + 1) / 5 for i in range(4, PER_DAY)]
    theta, low, high = _crossfit_by_hand(y, yhat, rest, 0.05)
    assert f"{theta:.4f}" in result.output
    assert f"[{low:.4f}, {high:.4f}]" in result.output
    assert f"{np.mean(yhat + rest):.4f}" in result.output  # the LLM-only mean
    flat = " ".join(result.output.split())
    assert "corrected by human (alice) labels: cross-fit PPI++" in flat
    assert "95% Student t intervals" in flat


def test_ppi_estimates_are_stored_reported_and_scraped(tmp_path: Path) -> None:
    """``monitor ppi`` stores each window's estimate; ``monitor report``, ``monitor metrics``
    and ``/metrics`` show the stored number. Expected values: cross-fit PPI++ written out
    (:func:`_crossfit_by_hand`) on P@5 computed by hand; a monitor run that adds samples to
    the window removes its estimate."""
    from ragmeter.store import open_store
    from ragmeter.store.monitor import load_ppi

    traces, human, useful = _judged_by_a_biased_judge(tmp_path)
    assert _monitor_ppi(tmp_path, human).exit_code == 0
    y = [useful[i] / 5 for i in range(4)]
    yhat = [(useful[i] + 1) / 5 for i in range(4)]
    rest = [(useful[i] + 1) / 5 for i in range(4, PER_DAY)]
    point, low, high = _crossfit_by_hand(y, yhat, rest, 0.05)
    url = store_args(tmp_path)[1]
    with open_store(url) as store:
        (row,) = load_ppi(store, "production", 86400)
    assert (row.window_start, row.measure) == (DAY0_NS // 10**9, "precision@5(rel_level=2)")
    assert (row.n_labelled, row.n_unlabelled, row.human) == (4, 6, "human (alice) labels")
    assert row.estimate == pytest.approx(point, abs=1e-12)
    assert (row.low, row.high) == pytest.approx((low, high), abs=1e-12)
    assert row.llm_mean == pytest.approx(float(np.mean(yhat + rest)))
    assert row.estimator == "crossfit"

    page = tmp_path / "trend.html"
    report = runner.invoke(app, ["monitor", "report", *store_args(tmp_path), "-o", str(page)])
    assert report.exit_code == 0, report.output
    html = page.read_text()
    assert f'<span class="ppi">{point:.4f}</span>' in html
    assert f"[{low:.4f}, {high:.4f}]" in html and "corrected by human (alice)" in html
    assert "cross-fit PPI++, λ power-tuned on the other folds, 95% Student t" in html

    metrics = runner.invoke(app, ["monitor", "metrics", *store_args(tmp_path)])
    assert metrics.exit_code == 0, metrics.output
    key = (
        'ragmeter_monitor_ppi_estimate{stream="production",measure="precision@5(rel_level=2)",'
        'labelled_by="umbrela, model m",corrected_by="human (alice) labels"}'
    )
    values = dict(line.rsplit(" ", 1) for line in metrics.output.splitlines() if line[0] != "#")
    assert float(values[key]) == pytest.approx(point, abs=1e-12)
    assert float(values[key.replace("_estimate", "_labelled")]) == 4.0
    # /metrics serves the exposition of every stream's stored figures: the same text
    from ragmeter.report.monitor import prometheus_text
    from ragmeter.workflows.monitor import stored_trends

    assert prometheus_text(stored_trends(url, 86400)) == metrics.output
    if _has_web():
        from fastapi.testclient import TestClient

        from ragmeter.web.app import create_app
        from ragmeter.web.config import build_config
        from webdata import config_kwargs, write_collection

        kwargs = config_kwargs(write_collection(tmp_path / "data"), tmp_path)
        config = build_config(**kwargs)  # type: ignore[arg-type]
        config.store_url = url
        scraped = TestClient(create_app(config)).get("/metrics")
        assert scraped.status_code == 200 and scraped.text == metrics.output

    # a span arrives later in the same day and is sampled: the day's estimate is removed
    late = request(rag_trace(99, "question 99", ["x"], DAY0_NS + HOUR_NS // 2, texts=[USEFUL]))
    more = write_lines(tmp_path / "late.json", [late])
    with FakeServer(_biased) as server:
        rerun = runner.invoke(app, monitor_args(server, tmp_path, traces, more, sample="1.0"))
    assert rerun.exit_code == 0, rerun.output
    assert "estimates of 1 window(s) were removed" in " ".join(rerun.output.split())
    with open_store(url) as store:
        assert load_ppi(store, "production") == []


def _has_web() -> bool:
    try:
        import fastapi  # noqa: F401
        import httpx  # noqa: F401
    except ImportError:
        return False
    return True


def test_export_for_labelling_opens_in_serve(server: FakeServer, tmp_path: Path) -> None:
    """--export writes the sampled spans as a collection ragmeter serve opens, with the
    judge's labels and their provenance (people label them; monitor ppi reads their export)."""
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.readers import read_qrels
    from ragmeter.web.config import build_config

    traces = write_week(tmp_path / "day.json", range(1))
    out_dir = tmp_path / "to_label"
    args = [*monitor_args(server, tmp_path, traces, sample="4"), "--export", str(out_dir)]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "4 sampled quer(ies) and 20 passage(s) written to" in " ".join(out.output.split())
    prov = read_provenance(out_dir / "llm_labels.txt")
    assert prov is not None and prov.has_llm
    qrels = read_qrels(out_dir / "llm_labels.txt")
    assert len(qrels) == 20 and qrels.n_queries == 4
    config = build_config(
        queries=out_dir / "queries.jsonl",
        corpus=out_dir / "corpus.jsonl",
        runs=[out_dir / "run.txt"],
        depth=10,
        labels=tmp_path / "labels.db",
    )
    assert config is not None


def test_a_latency_rule_reads_its_own_measure_and_text() -> None:
    from ragmeter.analysis.gate import Rule

    text = "  latency_ms.p95(stage=retriever) rise >= 50% significant "
    # by the grammar: a rise, inclusive (>=), 50 percent of the baseline, with a test
    assert parse_monitor_rule(text) == Rule(
        text="latency_ms.p95(stage=retriever) rise >= 50% significant",
        measure="latency_ms.p95(stage=retriever)",
        direction="rise",
        inclusive=True,
        amount=50.0,
        relative=True,
        significant=True,
    )
