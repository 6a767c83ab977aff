"""Measure plugins: modules that define measures (:func:`ragmeter.define_measure`,
:func:`ragmeter.define_measure_by_query`) when they are imported.

The command line imports them before a command runs, from two places:

* ``ragmeter --plugin PLUGIN COMMAND ...`` (the option may repeat), and
* the environment variable ``RAGMETER_PLUGINS=PLUGIN[,PLUGIN...]`` (read first).

A ``PLUGIN`` is a module name (``mymeasures``, ``mypkg.measures``), looked for on the Python
path and then in the current directory, or the path of a ``.py`` file (``./mymeasures.py``,
imported under its file name, as Python runs a script: no ``__pycache__`` is written beside
it). Importing one twice is a no-op. A plugin that cannot be found or fails while it is
imported (``sys.exit`` included) is a :class:`~ragmeter.errors.PluginError` naming it and
where it was given; the command line prints it as one ``ragmeter: error:`` line, exit
status 2.

From Python, import the module (or call :func:`load_plugins`): the measures it defines are
then known by name to every function of ragmeter.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType

from ragmeter.errors import PluginError, RagmeterError

#: the environment variable listing plugins, separated by commas
PLUGINS_ENV = "RAGMETER_PLUGINS"


def env_plugins(environ: Mapping[str, str] | None = None) -> list[str]:
    """The plugins ``RAGMETER_PLUGINS`` lists (commas separate them; blanks are ignored)."""
    text = (os.environ if environ is None else environ).get(PLUGINS_ENV, "")
    return [part.strip() for part in text.split(",") if part.strip()]


def load_plugins(plugins: Iterable[str], *, given_by: str = "--plugin") -> list[ModuleType]:
    """Import each plugin (a module name or a ``.py`` path); ``given_by`` says where it was
    given, for the error message."""
    return [load_plugin(p, given_by=given_by) for p in plugins]


def load_plugin(plugin: str, *, given_by: str = "--plugin") -> ModuleType:
    """Import one plugin (see the module docs) and return its module."""
    text = plugin.strip()
    if not text:
        raise PluginError(f"{given_by}: empty plugin name")
    if text.endswith(".py") or "/" in text or os.sep in text:
        return _load_file(Path(text), given_by)
    if text in sys.modules:
        return sys.modules[text]
    try:
        return _import(text)
    except ModuleNotFoundError as exc:
        if exc.name is None or not _names_the_plugin(text, exc.name):
            raise _failed(text, given_by, exc) from exc
        raise PluginError(
            f"{given_by}: no module named '{text}' (looked on the Python path and in the "
            f"current directory, {os.getcwd()}); give a module name or the path of a .py file"
        ) from None
    except RagmeterError as exc:
        raise PluginError(f"{given_by}: plugin '{text}': {exc}") from exc
    except (Exception, SystemExit) as exc:  # sys.exit(0) would end the command with success
        sys.modules.pop(text, None)
        raise _failed(text, given_by, exc) from exc


def _names_the_plugin(plugin: str, missing: str) -> bool:
    """Whether a ModuleNotFoundError for ``missing`` is about the plugin (or its package)."""
    return plugin == missing or plugin.startswith(missing + ".")


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        cwd = os.getcwd()
        if exc.name is None or not _names_the_plugin(name, exc.name) or cwd in sys.path:
            raise
        sys.path.append(cwd)  # as ``python -m`` would find it, after everything else
        return importlib.import_module(name)


def _load_file(path: Path, given_by: str) -> ModuleType:
    if not path.is_file():
        raise PluginError(f"{given_by}: plugin file not found: {path}")
    resolved = path.resolve()
    name = path.stem if path.stem.isidentifier() else "ragmeter_plugin_" + str(abs(hash(resolved)))
    loaded = sys.modules.get(name)
    if loaded is not None:
        if getattr(loaded, "__file__", None) and Path(str(loaded.__file__)).resolve() == resolved:
            return loaded
        raise PluginError(
            f"{given_by}: plugin {path}: a module named '{name}' is already imported "
            f"(from {getattr(loaded, '__file__', None) or 'elsewhere'}); rename the file"
        )
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise PluginError(f"{given_by}: cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # run as Python runs a script: no __pycache__ left beside the file
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    except RagmeterError as exc:
        del sys.modules[name]
        raise PluginError(f"{given_by}: plugin {path}: {exc}") from exc
    except (Exception, SystemExit) as exc:  # sys.exit(0) would end the command with success
        del sys.modules[name]
        raise _failed(str(path), given_by, exc) from exc
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


def _failed(plugin: str, given_by: str, exc: BaseException) -> PluginError:
    if isinstance(exc, SystemExit):
        return PluginError(
            f"{given_by}: plugin '{plugin}' raised SystemExit({exc.code!r}) (sys.exit) while it "
            "was imported; a plugin defines measures and must not end the command"
        )
    return PluginError(
        f"{given_by}: plugin '{plugin}' failed while it was imported: {type(exc).__name__}: {exc}"
    )


__all__ = ["PLUGINS_ENV", "env_plugins", "load_plugin", "load_plugins"]
