"""A list of query ids from a text file (the training or held-out queries of a tuning).

One id per line, the line's first whitespace-separated field — so a plain list, a qrels or a
run file of those queries all work; blank lines and lines starting with ``#`` are skipped, a
repeated id counts once. Compressed files (gzip, bzip2, xz, zstd) are read as they are.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "train.txt"
>>> _ = path.write_text("q1\\n# held out: q2\\nq3 0 d7 1\\nq1\\n")
>>> read_query_ids(path)
['q1', 'q3']
"""

from __future__ import annotations

from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, check_text, decode, read_bytes


def read_query_ids(path: PathLike) -> list[str]:
    """The distinct query ids of ``path``, in file order (see the module docstring)."""
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="query ids, one per line")
    seen: dict[str, None] = {}
    for line in decode(data, source).splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            seen.setdefault(fields[0], None)
    if not seen:
        raise InputError("no query ids; expected one per line", source=source)
    return list(seen)
