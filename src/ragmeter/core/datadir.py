"""The one folder where ragmeter keeps its own files: the default evaluation store
(``store.db``), the LLM judge's default cache (``judgments.sqlite``) and the web app's label
databases (``labels/``).

Where it is, first match wins:

1. ``$RAGMETER_DATA_DIR``;
2. the platform's user data folder (:mod:`platformdirs`): ``$XDG_DATA_HOME/ragmeter`` or
   ``~/.local/share/ragmeter`` on Linux, ``~/Library/Application Support/ragmeter`` on macOS,
   ``%LOCALAPPDATA%\\ragmeter`` on Windows;
3. the folder of earlier versions, ``$XDG_DATA_HOME/ragmeter`` or ``~/.local/share/ragmeter``
   on every platform, when it exists and (2) does not, so that a store saved before is found
   (a :class:`LegacyDataDirWarning` says so, once per process; moving the folder to (2) ends
   it). On Linux (2) and (3) are the same folder.

Nothing here creates the folder: the writers do (SQLite files, when first written), so that
looking for a store or a cache leaves no trace.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

#: environment variable naming the data folder (beats the platform's default)
DATA_DIR_ENV = "RAGMETER_DATA_DIR"

_warned: set[Path] = set()


class LegacyDataDirWarning(UserWarning):
    """The data folder of an earlier version is used (see :func:`data_dir`)."""


def platform_data_dir() -> Path:
    """The platform's user data folder for ragmeter (without the environment override)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("ragmeter", appauthor=False))


def legacy_data_dir() -> Path:
    """Where versions before the platform folders kept their files:
    ``$XDG_DATA_HOME/ragmeter`` (an absolute one only, as the XDG spec says), else
    ``~/.local/share/ragmeter``."""
    data_home = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(data_home) if os.path.isabs(data_home) else Path.home() / ".local" / "share"
    return base / "ragmeter"


def data_dir() -> Path:
    """The folder of ragmeter's own files (see the module docs for the order)."""
    configured = os.environ.get(DATA_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().absolute()
    current = platform_data_dir()
    legacy = legacy_data_dir()
    if legacy != current and legacy.is_dir() and not current.exists():
        if legacy not in _warned:
            _warned.add(legacy)
            warnings.warn(
                f"using the data folder of an earlier ragmeter version, {legacy}; move it to "
                f"{current} (or set {DATA_DIR_ENV}) to silence this",
                LegacyDataDirWarning,
                stacklevel=2,
            )
        return legacy
    return current


def data_path(*parts: str) -> Path:
    """A path inside :func:`data_dir` (not created)."""
    return data_dir().joinpath(*parts)


__all__ = [
    "DATA_DIR_ENV",
    "LegacyDataDirWarning",
    "data_dir",
    "data_path",
    "legacy_data_dir",
    "platform_data_dir",
]
