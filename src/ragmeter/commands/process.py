"""What the ``ragmeter`` process sets up before a command runs: the allocator, how the
pure-path warning prints, and how a failure of the operating system ends a command. The
command line owns its process; the library never does this."""

from __future__ import annotations

import atexit
import copy
import errno
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from types import ModuleType
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from importlib.abc import Loader, MetaPathFinder
    from importlib.machinery import ModuleSpec
else:
    # the import protocols are duck-typed: importlib.abc would import importlib.resources,
    # tempfile and random (≈ 0.005 s) at every start
    Loader = MetaPathFinder = object

#: exit status after the reader of stdout went away (128 + SIGPIPE, what a shell reports for
#: a program that SIGPIPE ended, as ``yes | head -1`` under ``set -o pipefail``)
BROKEN_PIPE_STATUS = 141

#: why a write failed, in words a user acts on, for the errors that leave the disk unchanged
_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EFBIG: "the file size limit (ulimit -f) is reached",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the file system is read-only",
}


def tune_allocator() -> None:
    """Let glibc reuse freed large buffers instead of returning them to the kernel.

    An evaluation allocates many short-lived arrays of tens of megabytes. By default glibc
    serves each from a fresh ``mmap`` and the kernel zero-fills every page on first touch,
    which costs more than the arithmetic (measured: 6.2 s → 4.3 s for 10 M run lines). The
    command line owns its process, so it raises the mmap threshold to 256 MB (larger arrays
    still go back to the kernel at once, which keeps 100 M-line runs under 8 GiB) and the
    trim threshold; the library itself never touches the allocator. A no-op without glibc.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 256 << 20)
        libc.mallopt(m_trim_threshold, (1 << 31) - 1)
    except (OSError, AttributeError):
        return


def quick_exit() -> None:
    """Let the interpreter end without a last sweep of the objects that live to the end.

    At exit Python clears every module and collects the garbage cycles left, walking all the
    objects of numpy, pyarrow, typer and ragmeter once more (≈ 0.04 s of a 0.4 s
    ``evaluate``, more on a busy machine). Registered first, this runs last of the exit
    handlers: it moves the objects still alive to the collector's permanent generation
    (:func:`gc.freeze`), so that the final collections skip them. Everything else of the
    exit is as before: the other exit handlers run, the standard streams are flushed,
    objects held by a module alone are freed (a file a module holds is closed); only objects
    in a reference cycle keep their memory and finalizers, which Python does not promise to
    run at exit anyway."""
    atexit.register(gc.freeze)


#: the commands that score files: their work multiplies no matrices (numpy's BLAS starts with
#: one thread) and makes no reference cycles (the cyclic garbage collector stays off)
SCORING_COMMANDS = frozenset({"evaluate", "trec-eval"})

#: the variables by which a user sets the threads of numpy's BLAS (OpenBLAS reads them in turn)
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread(args: Sequence[str]) -> None:
    """Import numpy with its OpenBLAS on one thread when ``args`` run a command of
    :data:`SCORING_COMMANDS` and no variable of :data:`BLAS_THREAD_VARIABLES` is set.

    OpenBLAS starts a thread per CPU as numpy loads, and the idle threads spin for a while:
    on a busy machine that costs a scoring command about as much as its arithmetic (0.03 to
    0.06 s of CPU in a 0.4 s ``evaluate``), for matrix products it never makes. The variable
    ``OPENBLAS_NUM_THREADS=1`` is set while numpy loads, then removed, so that the processes
    a command starts see the environment as it was. A variable the user set is their
    choice: then nothing changes."""
    if not _scores(args) or "numpy" in sys.modules:
        return
    if any(name in os.environ for name in BLAS_THREAD_VARIABLES):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401  (OpenBLAS reads the variable as it loads)
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


def no_cycle_collector(args: Sequence[str]) -> None:
    """Turn the cyclic garbage collector off when ``args`` run a command of
    :data:`SCORING_COMMANDS` in this process (not with ``--engine``: a Ray driver makes
    objects of its own).

    Almost all the objects such a command creates are those of the modules it imports
    (numpy, pyarrow, the evaluation, the measures: ≈ 35,000), and they live to the end; the
    collector walked them over and over as they were made (0.02–0.07 s of a 0.4 s
    ``evaluate``, the more the busier the machine) and found nothing to free. Their work
    makes no reference cycles (≈ 600 objects in cycles, all from the imports, whether a run
    has 1,000 or 20,000 queries: ``tests/test_startup.py`` checks that it does not grow), and
    objects without a cycle are freed as before, when their last reference goes."""
    engine = any(a == "--engine" or a.startswith("--engine=") for a in args)
    if _scores(args) and not engine:
        gc.disable()


def _scores(args: Sequence[str]) -> bool:
    """Whether ``args`` run a command of :data:`SCORING_COMMANDS` (not its help)."""
    asks_help = any(a in ("--help", "-h") or a.startswith("--help=") for a in args)
    return not asks_help and _command_name(args) in SCORING_COMMANDS


#: (module, class) of the warnings printed as one ``warning:`` line
_PLAIN_WARNINGS = (
    ("ragmeter._accel", "PurePathWarning"),
    ("ragmeter.core.datadir", "LegacyDataDirWarning"),
    ("ragmeter.evaluation.forking", "SerialFallbackWarning"),
)


def plain_warnings() -> None:
    """Print the pure-path, data-folder and no-fork warnings as one ``warning:`` line, like
    the commands' own."""
    import warnings

    shown = warnings.showwarning

    def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if issubclass(category, _plain_categories()):
            typer.echo(f"warning: {message}", err=True)
            return
        shown(message, category, *args, **kwargs)

    warnings.showwarning = show


def _plain_categories() -> tuple[type, ...]:
    """The classes of :data:`_PLAIN_WARNINGS` already imported: a warning of one was raised by
    its module, so one not imported yet cannot be the one shown (importing it here would cost
    numpy and pyarrow at every start)."""
    found = (getattr(sys.modules.get(m), name, None) for m, name in _PLAIN_WARNINGS)
    return tuple(c for c in found if isinstance(c, type))


def lean_app(app: typer.Typer, args: Sequence[str]) -> typer.Typer:
    """``app`` with only the command that ``args`` name (``evaluate``, ``judge``…), or no
    command for ``--version``; ``app`` with every command (:func:`register_commands`) for
    help, a missing or an unknown command.

    Typer builds the click command of every registered command at each start, reading the
    signatures of all of them (≈ 0.08 s), and registering them imports their 21 modules
    (≈ 0.03 s); a command line runs one. The copy shares the root callback and settings, so
    parsing, usage lines and errors are those of ``app``; a command ``app`` lacks is
    registered into the copy alone (:func:`ragmeter.commands.register_command`).
    """
    from ragmeter.commands import register_command, register_commands
    from ragmeter.commands.panels import place_commands, registered_name

    name = _command_name(args)
    if name is None:
        return register_commands(app)
    lean = copy.copy(app)
    lean.registered_commands = [c for c in app.registered_commands if registered_name(c) == name]
    lean.registered_groups = [g for g in app.registered_groups if registered_name(g) == name]
    found = name == "--version" or lean.registered_commands or lean.registered_groups
    if not found and not register_command(lean, name):
        return register_commands(app)
    place_commands(lean)  # its panels, as in the whole app (idempotent)
    return lean


def _command_name(args: Sequence[str]) -> str | None:
    """The command ``args`` run (``--version`` when it comes first); ``None`` when they ask for
    help or name no command."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--help", "-h") or arg.startswith("--help="):
            return None
        if arg == "--version":
            return arg
        if arg == "--plugin":
            i += 2
            continue
        if not arg.startswith("-"):
            return arg
        i += 1
    return None


def describe_os_error(exc: OSError) -> str:
    """One line naming the path(s) and what the system said, e.g.
    ``out/x.json: No such file or directory``."""
    from ragmeter.errors import RagmeterError

    if isinstance(exc, RagmeterError):  # already a sentence of ours (OutputError)
        return str(exc)
    reason = exc.strerror or str(exc) or type(exc).__name__
    hint = _HINTS.get(exc.errno or 0)
    if hint is not None and hint not in reason:
        reason = f"{reason} ({hint})"
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    return f"{' -> '.join(paths)}: {reason}" if paths else reason


def silence_stdout() -> None:
    """After the reader of stdout went away: point stdout at the null device, so that the
    interpreter's final flush does not fail again and print a traceback of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        return  # not a real file (a test runner's capture): nothing is flushed to it


def uniform_broken_pipe() -> None:
    """Let a closed pipe under a rich table end like every other output: rich's own handler
    silences stdout and exits 1; this one raises, so :func:`os_failures` ends the command
    with :data:`BROKEN_PIPE_STATUS` whatever printed last.

    rich is patched when something imports it (a table, the help), not imported here: a
    command that writes JSON never loads it."""
    console = sys.modules.get("rich.console")
    if console is not None:
        _raise_on_broken_pipe(console)
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("rich.console", _raise_on_broken_pipe))


def _raise_on_broken_pipe(module: ModuleType) -> None:
    def on_broken_pipe(self: Any) -> None:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    module.Console.on_broken_pipe = on_broken_pipe


class _AfterImport(MetaPathFinder):
    """Runs ``then(module)`` once module ``name`` has been imported (by anyone), then leaves
    the import system as it was."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name = name
        self.then = then

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # the other finders find it; this one is done
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader(Loader):
    """``loader``, then ``then(module)`` once the module has run."""

    def __init__(self, loader: Loader, then: Callable[[ModuleType], None]):
        self.loader = loader
        self.then = then

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.then(module)


@contextmanager
def os_failures() -> Iterator[None]:
    """The one place where every command's failures of the operating system end.

    * A closed pipe on stdout (``ragmeter trec-eval … | head -1``) ends the command quietly
      with status :data:`BROKEN_PIPE_STATUS`: nothing more can be said to that reader.
    * Any other :class:`OSError` (a missing or read-only directory, a full disk, the file size
      limit, a path component that is a file) prints one ``ragmeter: error:`` line naming the
      path and ends with status 2, as bad input does. Files are written atomically, so a
      failed write leaves the old file (or none) in place.
    * Exhausted memory (:class:`MemoryError`) prints one ``ragmeter: error:`` line, status 2.
    """
    try:
        try:
            yield
        finally:
            # buffered output reaches a closed pipe only here
            sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        raise SystemExit(BROKEN_PIPE_STATUS) from None
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            silence_stdout()
            raise SystemExit(BROKEN_PIPE_STATUS) from None
        with suppress(OSError):  # stderr is gone too: the status still says it failed
            typer.echo(f"ragmeter: error: {describe_os_error(exc)}", err=True)
        raise SystemExit(2) from None
    except MemoryError:
        # the readers name the file they could not hold; anywhere else, one line all the same
        with suppress(OSError):
            typer.echo(
                "ragmeter: error: out of memory: the inputs need more memory than is left "
                "(free memory, or evaluate fewer or smaller inputs at a time)",
                err=True,
            )
        raise SystemExit(2) from None


#: the commands where ``-q`` was the short form of ``--qrels``; trec_eval's ``-q`` (per-query
#: values) keeps its meaning in ``ragmeter trec-eval``, so elsewhere ``--qrels`` is the spelling
QRELS_SHORT_COMMANDS = frozenset({"evaluate", "compare", "diagnose", "report"})


def qrels_short_alias(command: Any, args: list[str]) -> list[str]:
    """``args`` of ``command`` with the older ``-q FILE`` / ``-qFILE`` spelled ``--qrels``,
    and one warning on stderr when it was used. Values of other options (``--name -q``) and
    everything after ``--`` are left alone."""
    # duck-typed: typer may bring its own copy of click
    takes_value = {
        opt
        for p in command.params
        if getattr(p, "param_type_name", "") == "option"
        and not getattr(p, "is_flag", False)
        and not getattr(p, "count", False)
        for opt in p.opts
    }
    out: list[str] = []
    used = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.extend(args[i:])
            break
        if arg.startswith("-q") and not arg.startswith("--"):
            out.append("--qrels" if arg == "-q" else f"--qrels={arg[2:]}")
            used = True
        else:
            out.append(arg)
            if arg in takes_value and i + 1 < len(args):
                out.append(args[i + 1])
                i += 1
        i += 1
    if used:
        typer.echo(
            "warning: -q for --qrels is deprecated; write --qrels (in trec-eval, -q means "
            "per-query values, as in trec_eval)",
            err=True,
        )
    return out


def one_line_summaries(command: Any) -> None:
    """Unwrap the help of ``command`` (and of a group's subcommands): each paragraph of its
    docstring becomes one line (a list item keeps its own). Typer's rich help keeps a
    docstring's source line breaks, so text wrapped at 100 columns in the source broke
    mid-sentence on an 80-column terminal; rich wraps the unwrapped lines to the terminal."""
    for sub in getattr(command, "commands", {}).values():
        one_line_summaries(sub)
    if command.help:
        command.help = unwrap_paragraphs(command.help)


def unwrap_paragraphs(text: str) -> str:
    """``text`` with every paragraph on one line; lines that begin a list item (``-``, ``*``,
    ``•``, ``1.``) and paragraphs marked ``\\b`` (click: keep as written) stay as they are."""
    import inspect
    import re

    out = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        if paragraph.startswith("\b"):
            out.append(paragraph)
            continue
        lines = paragraph.split("\n")
        merged = [lines[0].rstrip()]
        for line in lines[1:]:
            if re.match(r"\s*(?:[-*•]|\d+\.)\s", line):
                merged.append(line.rstrip())
            else:
                merged[-1] = f"{merged[-1]} {line.strip()}"
        out.append("\n".join(merged))
    return "\n\n".join(out)


def plugin_option() -> Any:
    """``--plugin MODULE`` of the ``ragmeter`` group (see :mod:`ragmeter.measures.plugins`)."""
    from typer.core import TyperOption  # typer may bring its own copy of click

    return TyperOption(
        param_decls=["--plugin"],
        type=str,
        multiple=True,
        metavar="MODULE",
        help=(
            "Import a module or .py file that defines measures (ragmeter.define_measure) "
            "before the command; repeatable. RAGMETER_PLUGINS=M1,M2 does the same."
        ),
    )


def load_measure_plugins(given: Sequence[str]) -> None:
    """Import the plugins of ``RAGMETER_PLUGINS``, then those given by ``--plugin``; one
    ``ragmeter: error:`` line and status 2 when one cannot be imported."""
    if not given and not os.environ.get("RAGMETER_PLUGINS", "").strip():
        return
    from ragmeter.errors import RagmeterError
    from ragmeter.measures.plugins import PLUGINS_ENV, env_plugins, load_plugins

    try:
        load_plugins(env_plugins(), given_by=PLUGINS_ENV)
        load_plugins(given, given_by="--plugin")
    except RagmeterError as exc:
        typer.echo(f"ragmeter: error: {exc}", err=True)
        raise SystemExit(2) from None


class GuardedGroup(TyperGroup):
    """The ``ragmeter`` command group: every command runs inside :func:`os_failures`, and so
    does the parsing of its options (``--version`` and ``--help`` print while parsing).

    The group's own option ``--plugin`` (and ``RAGMETER_PLUGINS``) imports measure plugins
    before the command runs, so that their measures are known by name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(plugin_option())

    def list_commands(self, ctx: Any) -> list[str]:
        """The commands panel by panel (:data:`ragmeter.commands.panels.COMMAND_PANELS`),
        each panel in the order given, groups (judge, history…) in their places too."""
        from ragmeter.commands.panels import command_rank

        return sorted(super().list_commands(ctx), key=command_rank)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            from ragmeter.commands.panels import place_options

            one_line_summaries(command)
            place_options(command)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if name in QRELS_SHORT_COMMANDS and command is not None:
            rest = qrels_short_alias(command, rest)
        return name, command, rest

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        with os_failures():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        with os_failures():
            load_measure_plugins(ctx.params.pop("plugin", ()))
            return super().invoke(ctx)
