"""The first second: the everyday commands start without the heavy optional libraries, and a
command line builds only the command it runs (timings are in benchmarks/, not here)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from ragmeter.cli import app
from ragmeter.commands import COMMAND_MODULES, register_command
from ragmeter.commands.process import BLAS_THREAD_VARIABLES, lean_app

#: libraries no everyday command on TREC files may import (an option may ask for one)
HEAVY = ("pandas", "polars", "scipy", "matplotlib", "sqlalchemy", "aiohttp", "fastapi", "ray")

#: runs the CLI's main() with the given arguments, then reports the exit status and which of
#: the modules named in argv[1] (JSON) were imported, on stderr (stdout is the command's)
PROBE = """
import json, sys
watched = json.loads(sys.argv[1])
sys.argv = ["ragmeter", *sys.argv[2:]]
from ragmeter.cli import main
try:
    main()
    status = 0
except SystemExit as exc:
    status = exc.code or 0
found = sorted(m for m in watched if m in sys.modules)
sys.stderr.write("PROBE " + json.dumps({"status": status, "imported": found}) + "\\n")
"""


def _reported(
    code: str, tag: str, args: list[str], env: dict[str, str] | None = None
) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter with ``args`` (and ``env``); the JSON it writes on
    stderr after ``tag`` (its last such line)."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith(f"{tag} ")]
    assert lines, done.stderr
    result: dict[str, object] = json.loads(lines[-1][len(tag) + 1 :])
    return result


def _probe(args: list[str], watched: tuple[str, ...]) -> dict[str, object]:
    return _reported(PROBE, "PROBE", [json.dumps(watched), *args])


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("trec")
    qrels = root / "qrels.txt"
    qrels.write_text(
        "".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(1, 9) for d in range(1, 7))
    )
    paths = {"qrels": str(qrels)}
    for name, shift in (("a", 0), ("b", 2)):
        run = root / f"run-{name}.txt"
        run.write_text(
            "".join(
                f"q{q} Q0 d{(d + shift) % 10 + 1} {r + 1} {10 - r} {name}\n"
                for q in range(1, 9)
                for r, d in enumerate(range(10))
            )
        )
        paths[name] = str(run)
    return paths


def _commands(f: dict[str, str]) -> dict[str, list[str]]:
    return {
        "evaluate": ["evaluate", f["a"], "--qrels", f["qrels"], "-m", "ndcg@10", "-m", "map"],
        "trec-eval": ["trec-eval", f["qrels"], f["a"]],
        "compare": ["compare", f["a"], f["b"], "--qrels", f["qrels"], "-m", "ndcg@10"],
        "check": [
            "check",
            f["b"],
            "--qrels",
            f["qrels"],
            "--baseline",
            f["a"],
            "--fail-if",
            "ndcg@10 drop > 0.9",
        ],
    }


@pytest.mark.parametrize("command", ["evaluate", "trec-eval", "compare", "check"])
def test_everyday_commands_import_no_heavy_library(
    command: str, trec_files: dict[str, str]
) -> None:
    result = _probe(_commands(trec_files)[command], HEAVY)
    assert result == {"status": 0, "imported": []}


#: what an evaluation of two ranking measures on TREC files never needs: the other measure
#: families, the judges, the statistics of agreement, Arrow's compute kernels, the nugget,
#: trace and stage modules (no such input), OpenSSL's digests and the JSON document reader
#: (no provenance sidecar), the engines of partitioned and distributed runs (the default
#: engine: this process), multiprocessing (a file this small is evaluated in this process) and
#: the label sources' data model (no provenance sidecar, no calibration), the reader of
#: partitioned inputs (files, not folders)
NOT_FOR_RANKING = (
    "ragmeter.metrics.answers",
    "ragmeter.metrics.answer_text",
    "ragmeter.metrics.containment",
    "ragmeter.metrics.coverage",
    "ragmeter.metrics.spans",
    "ragmeter.metrics.nuggets",
    "ragmeter.metrics.ragchecker",
    "ragmeter.metrics.diversity",
    "ragmeter.metrics.setwise",
    "ragmeter.judges.tasks",
    "ragmeter.judges.config",
    "ragmeter.stats.agreement",
    "ragmeter.workflows.spans",
    "ragmeter.workflows.ppi",
    "pyarrow.compute",
    "ragmeter.core.nuggets",
    "ragmeter.io.nuggets",
    "ragmeter.io.traces",
    "ragmeter.analysis.stages",
    "hashlib",
    "ragmeter.io._documents",
    "ragmeter.evaluation.partitioned",
    "ragmeter.evaluation.distributed",
    "multiprocessing",
    "ragmeter.core.provenance",
    "ragmeter.io.partitions",
)


def test_evaluate_as_json_imports_only_what_its_measures_need(
    trec_files: dict[str, str],
) -> None:
    args = [*_commands(trec_files)["evaluate"], "-f", "json"]
    watched = ("rich", "ragmeter.metrics.ranking", *NOT_FOR_RANKING, *NOT_FOR_SETUP)
    result = _probe(args, watched)
    assert result == {"status": 0, "imported": ["ragmeter.metrics.ranking"]}


def test_evaluate_as_a_table_imports_rich_and_no_other_family(
    trec_files: dict[str, str],
) -> None:
    result = _probe(_commands(trec_files)["evaluate"], ("rich", *NOT_FOR_RANKING))
    assert result == {"status": 0, "imported": ["rich"]}


@pytest.mark.parametrize(
    ("command", "modules"),
    [
        ("evaluate", []),
        ("trec-eval", []),
        ("compare", ["ragmeter.commands.compare"]),
        ("check", ["ragmeter.commands.check"]),
    ],
)
def test_a_command_imports_only_its_command_modules(
    command: str, modules: list[str], trec_files: dict[str, str]
) -> None:
    result = _probe(_commands(trec_files)[command], COMMAND_MODULES)
    assert result == {"status": 0, "imported": modules}


def test_a_group_imports_the_modules_that_add_to_it() -> None:
    result = _probe(["judge", "nuggets", "--help"], COMMAND_MODULES)
    judge = ["judge", "judge_erag", "judge_learn", "judge_nuggets"]
    assert result == {"status": 0, "imported": [f"ragmeter.commands.{m}" for m in judge]}


def test_help_imports_every_command_module() -> None:
    result = _probe(["--help"], COMMAND_MODULES)
    assert result == {"status": 0, "imported": sorted(COMMAND_MODULES)}


#: what the process set-up does not need: the import protocols are duck-typed, and
#: importlib.abc imports importlib.resources, tempfile and random
NOT_FOR_SETUP = ("importlib.abc", "importlib.resources", "tempfile")


def test_version_imports_neither_numpy_nor_pyarrow() -> None:
    result = _probe(["--version"], ("numpy", "pyarrow", *HEAVY, *NOT_FOR_SETUP))
    assert result == {"status": 0, "imported": []}


def _names(built: typer.Typer) -> set[str]:
    group = typer.main.get_command(built)
    assert isinstance(group, typer.core.TyperGroup)
    return set(group.commands)


def test_a_command_line_builds_only_its_command() -> None:
    assert _names(lean_app(app, ["evaluate", "run.txt", "--qrels", "q.txt"])) == {"evaluate"}
    assert _names(lean_app(app, ["--plugin", "m.py", "compare", "a", "b"])) == {"compare"}
    assert _names(lean_app(app, ["--plugin=m.py", "judge", "nuggets"])) == {"judge"}
    assert _names(lean_app(app, ["--version"])) == set()


@pytest.mark.parametrize(
    "args", [[], ["--help"], ["--plugin", "m.py", "--help"], ["evaluat"], ["--plugin"]]
)
def test_help_and_unknown_commands_see_every_command(args: list[str]) -> None:
    assert lean_app(app, args) is app


def test_an_unknown_command_still_gets_a_suggestion() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ragmeter", "evaluat"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "Did you mean 'evaluate'?" in done.stderr


def test_the_answers_help_names_every_text_metric() -> None:
    from ragmeter.commands.answers import TEXT_METRIC_NAMES
    from ragmeter.metrics.answers import TEXT_METRICS

    assert TEXT_METRIC_NAMES == TEXT_METRICS


def test_the_package_names_load_on_first_use() -> None:
    code = (
        "import sys, ragmeter\n"
        "before = 'numpy' in sys.modules\n"
        "from ragmeter import Qrels, evaluate\n"
        "run = ragmeter.Run.from_dict({'q1': {'d1': 1.0}})\n"
        "print(before, evaluate.__module__, 'read_run' in dir(ragmeter))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["False", "ragmeter.evaluation.api", "True"]


def test_qrels_index_keys_without_arrow() -> None:
    """The qrels' ids as fixed-width bytes: the same keys Arrow's UTF-8 buffers gave, ``None``
    for ids with a NUL, out of byte order or too uneven in length."""
    import numpy as np

    from ragmeter.evaluation.blocks import _fixed_width

    def ids(*values: str) -> np.ndarray:
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out

    keys = _fixed_width(ids("q1", "q10", "q2", "é"))
    assert keys is not None
    assert keys.dtype == np.dtype("S3")
    assert keys.tolist() == [b"q1", b"q10", b"q2", "é".encode()]
    assert _fixed_width(ids("a\0b", "c")) is None
    assert _fixed_width(ids("b", "a")) is None
    assert _fixed_width(ids("a", "b" * 40)) is not None  # 2 × 40 ≤ 4 × 41 + 8 × 2
    assert _fixed_width(ids(*[f"q{i}" for i in range(10)], "z" * 200)) is None  # 2200 > 968
    empty = _fixed_width(ids())
    assert empty is not None and len(empty) == 0


def test_lean_app_keeps_a_group_registered_without_a_name() -> None:
    """``traces`` is added by its sub-app's name (``info.name`` is typer's placeholder): the
    fast start must still find it rather than build every command."""
    from ragmeter.cli import app

    assert _names(lean_app(app, ["traces", "show", "t.jsonl"])) == {"traces"}


def _shape(command: typer.core.TyperCommand | typer.core.TyperGroup) -> object:
    """What a command is made of: its options and arguments, its subcommands' shapes."""
    subcommands = getattr(command, "commands", {})
    return (
        type(command).__name__,
        command.help,
        [(p.name, p.opts, getattr(p, "rich_help_panel", None)) for p in command.params],
        {name: _shape(sub) for name, sub in subcommands.items()},
    )


def test_the_command_table_registers_each_command_as_the_whole_app_has_it() -> None:
    """:data:`ragmeter.commands.COMMANDS_OF_MODULE` against what the modules register: each
    command that a command line builds alone (its modules only, into an app without the
    others) is the command of ``ragmeter.cli.app``, panels and help included."""
    whole = typer.main.get_command(app)
    assert isinstance(whole, typer.core.TyperGroup)
    for name, command in whole.commands.items():
        bare = copy.copy(app)  # the root's callback and settings, no command
        bare.registered_commands, bare.registered_groups = [], []
        if name in ("evaluate", "trec-eval"):  # ragmeter.cli's own: no module adds them
            assert not register_command(bare, name)
            continue
        built = lean_app(bare, [name])
        assert built is not bare and _names(built) == {name}
        alone = typer.main.get_command(built)
        assert isinstance(alone, typer.core.TyperGroup)
        assert _shape(alone.commands[name]) == _shape(command), name


def test_the_command_line_ends_without_sweeping_what_lives_to_the_end(
    trec_files: dict[str, str],
) -> None:
    """``main`` has the objects alive at exit frozen (the last exit handler) so that the
    interpreter's final collections skip them: an exit handler registered before ``main``
    runs after it and finds them frozen; the output is whole and the status unchanged."""
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'FROZEN {gc.get_freeze_count()}\\n'))\n"
        "sys.argv = ['ragmeter', *sys.argv[1:]]\n"
        "from ragmeter.cli import main\n"
        "main()\n"
    )
    args = [*_commands(trec_files)["evaluate"], "-f", "json"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"][0]["name"] == "run-a.txt"
    frozen = [line for line in done.stderr.splitlines() if line.startswith("FROZEN ")]
    assert frozen and int(frozen[0].split()[1]) > 10_000


#: runs the CLI's main() with the arguments after ``-c CODE`` (the start of the probes below)
RUN_MAIN = """
import gc, json, os, sys
sys.argv = ["ragmeter", *sys.argv[1:]]
from ragmeter.cli import main
try:
    main()
except SystemExit:
    pass
"""

#: then reports the threads of numpy's BLAS and the value of OPENBLAS_NUM_THREADS, on stderr
BLAS_PROBE = (
    RUN_MAIN
    + """
from threadpoolctl import threadpool_info
threads = [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]
found = {"threads": threads, "variable": os.environ.get("OPENBLAS_NUM_THREADS")}
sys.stderr.write("BLAS " + json.dumps(found) + "\\n")
"""
)


def _blas(args: list[str], variable: str | None = None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    if variable is not None:
        env["OPENBLAS_NUM_THREADS"] = variable
    return _reported(BLAS_PROBE, "BLAS", args, env)


def test_evaluate_starts_numpy_blas_on_one_thread(trec_files: dict[str, str]) -> None:
    """``evaluate`` and ``trec-eval`` multiply no matrices: OpenBLAS starts one thread (not
    one per CPU), and the variable that said so is gone once numpy has loaded; a variable the
    user set stands; ``compare`` (its paired tests multiply matrices) keeps every thread, and
    ``evaluate --help`` imports no numpy."""
    pytest.importorskip("threadpoolctl")
    evaluate = [*_commands(trec_files)["evaluate"], "-f", "json"]
    trec_eval = _commands(trec_files)["trec-eval"]
    for args in (evaluate, trec_eval):
        found = _blas(args)
        if found["threads"] == []:
            pytest.skip("numpy's BLAS is not OpenBLAS")
        assert found == {"threads": [1], "variable": None}
    assert _blas(evaluate, variable="2") == {"threads": [2], "variable": "2"}
    assert _blas([*evaluate, "--help"])["threads"] == []  # its help loads no numpy
    if (os.cpu_count() or 1) > 1:
        (threads,) = _blas(_commands(trec_files)["compare"])["threads"]  # type: ignore[misc]
        assert threads > 1


#: then reports whether the cyclic collector is on and how many objects in reference cycles it
#: finds, on stderr
CYCLES_PROBE = (
    RUN_MAIN
    + """
found = {"enabled": gc.isenabled(), "cycles": gc.collect()}
sys.stderr.write("CYCLES " + json.dumps(found) + "\\n")
"""
)


def _cycles(args: list[str]) -> dict[str, object]:
    return _reported(CYCLES_PROBE, "CYCLES", args)


def test_scoring_commands_run_without_the_cycle_collector(
    tmp_path: Path, trec_files: dict[str, str]
) -> None:
    """``evaluate`` and ``trec-eval`` turn the cyclic collector off: what they create in
    reference cycles comes from the modules they import, so it does not grow with the
    input (10 queries against 1,000, per-query values printed); other commands, help and an
    evaluation given an ``--engine`` keep it."""
    found = {}
    for n in (10, 1000):
        qrels, run = tmp_path / f"qrels-{n}.txt", tmp_path / f"run-{n}.txt"
        qrels.write_text("".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(n) for d in range(5)))
        run.write_text(
            "".join(f"q{q} Q0 d{d} {d + 1} {20 - d} r\n" for q in range(n) for d in range(20))
        )
        evaluate = ["evaluate", str(run), "--qrels", str(qrels), "-m", "ndcg@10", "-m", "map"]
        found[n] = _cycles([*evaluate, "--per-query", "-f", "json"])
        assert found[n]["enabled"] is False
        assert _cycles(["trec-eval", "-q", str(qrels), str(run)])["enabled"] is False
    small, large = (found[n]["cycles"] for n in (10, 1000))
    assert isinstance(small, int) and isinstance(large, int)
    assert large - small < 100, found
    assert _cycles(_commands(trec_files)["compare"])["enabled"] is True
    assert _cycles(["evaluate", "--help"])["enabled"] is True
    local = [*_commands(trec_files)["evaluate"], "--engine", "local"]
    assert _cycles(local)["enabled"] is True  # an engine may be Ray: its driver's objects
