"""Where an evaluation came from: content hashes of its inputs and the git commit.

Hashes are spelled ``sha256:<64 hex digits>``. A file's hash is that of its bytes; a folder
or glob of partitions (:mod:`ragmeter.io.partitions`) hashes its list of partitions, each
partition's path below the folder and the hash of its bytes (see :func:`partitions_sha256`);
an in-memory run or qrels has a canonical hash of its content (see :func:`content_sha256`), so
two evaluations of the same input compare equal however it was produced.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ragmeter.core.data import Qrels, Run

_CHUNK = 1 << 20
_GIT_TIMEOUT_S = 10.0


def file_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file's bytes, read in 1 MiB chunks; of a folder or glob of
    partitions, :func:`partitions_sha256`."""
    from ragmeter.io.partitions import is_partitioned

    if is_partitioned(path):
        return partitions_sha256(path)
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def partitions_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a folder or glob of partitions: of one ``path \t sha256`` line per
    partition, in the partitions' order, each path below the folder (for a glob, below the
    folder its matches share) in ``/`` form.

    The folder's own name and place are not part of it (a copy elsewhere hashes the same); a
    partition renamed, added, removed or changed changes it. The same queries partitioned
    otherwise hash differently: compare :func:`content_sha256` of the joined runs for that.
    """
    from ragmeter.io.partitions import Partitions

    files = Partitions.find(path).paths
    root = (
        Path(path) if Path(path).is_dir() else Path(os.path.commonpath([p.parent for p in files]))
    )
    digest = hashlib.sha256(b"ragmeter-partitions-v1\n")
    for p in files:
        digest.update(f"{p.relative_to(root).as_posix()}\t{file_sha256(p)}\n".encode())
    return f"sha256:{digest.hexdigest()}"


def content_sha256(data: Run | Qrels) -> str:
    """``sha256:<hex>`` of a run's or a qrels' content, independent of its file format.

    The hashed text is one ``query \\t doc \\t value`` line per row: a run in rank order with
    each score as ``float.hex`` (exact), a qrels in its (byte) order with integer grades. The
    name is not part of the content.

    >>> a = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="a")
    >>> b = Run.from_lists({"q1": ["d1", "d2"]}, name="b")
    >>> content_sha256(a) == content_sha256(Run.from_dict({"q1": {"d2": 1.0, "d1": 2.0}}))
    True
    >>> content_sha256(a) == content_sha256(b)  # same ranking, other scores
    False
    """
    values: list[str]
    if isinstance(data, Run):
        kind = "run"
        values = [float(s).hex() for s in data.scores.tolist()]
    else:
        kind = "qrels"
        values = [str(int(g)) for g in data.grades.tolist()]
    docs = data.doc_ids.to_pylist()
    digest = hashlib.sha256(f"ragmeter-{kind}-v1\n".encode())
    for i, q in enumerate(data.query_ids):
        a, b = int(data.offsets[i]), int(data.offsets[i + 1])
        lines = (f"{q}\t{d}\t{v}\n" for d, v in zip(docs[a:b], values[a:b], strict=True))
        digest.update("".join(lines).encode())
    return f"sha256:{digest.hexdigest()}"


@dataclass(frozen=True)
class GitState:
    """The commit checked out in a directory and whether tracked files were modified."""

    commit: str
    dirty: bool


def git_state(directory: str | os.PathLike[str] | None = None) -> GitState | None:
    """``HEAD`` of the repository holding ``directory`` (default: the working directory).

    ``None`` when there is no repository, no commit yet, or no ``git`` program: provenance is
    recorded when it can be, and its absence never stops a save. Untracked files do not make
    the tree dirty (scratch outputs are common beside an evaluation).
    """
    cwd = Path(directory) if directory is not None else Path.cwd()
    commit = _git(cwd, "rev-parse", "--verify", "HEAD")
    if commit is None:
        return None
    status = _git(cwd, "status", "--porcelain", "--untracked-files=no")
    return GitState(commit=commit, dirty=bool(status))


def _git(cwd: Path, *args: str) -> str | None:
    """The stripped output of a git command, or ``None`` if it fails in any way."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
            # git must not prompt or page; it reports on the directory as it is
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip()
