"""Access to the optional C accelerator ``ragmeter._native``.

``native`` is the extension module, or ``None`` when it was not built (or ``RAGMETER_PURE=1``
is set); callers read it at call time, so tests can switch paths by setting it. Both paths give
identical results, but the pure path is several times slower on large inputs (3.8× at
100k queries × 100 documents), so :func:`check_large_input` warns once when an input of
:data:`LARGE_INPUT_ROWS` rows or more is read without the accelerator.
"""

from __future__ import annotations

# numpy and pyarrow are imported in the functions that use them: ``ragmeter --version``
# reports the accelerator without paying for them.
import importlib
import os
import sys
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

native: ModuleType | None
#: why ``native`` is None (``None`` while it is loaded)
pure_reason: str | None = None
try:
    if os.environ.get("RAGMETER_PURE"):
        raise ImportError("RAGMETER_PURE is set")
    from ragmeter import _native

    native = _native
except ImportError as exc:  # not built: the pure numpy/pyarrow path is used
    native = None
    pure_reason = (
        "RAGMETER_PURE is set"
        if os.environ.get("RAGMETER_PURE")
        else f"the C extension is not built ({exc}); reinstall with a C compiler"
    )

#: rows of one input (run or qrels lines) from which the pure path is worth a warning: about
#: where it costs seconds rather than fractions of one (≈1.5 s more per million run lines)
LARGE_INPUT_ROWS = 1_000_000


class PurePathWarning(UserWarning):
    """A large input is evaluated without the C accelerator."""


_warned = False


def describe() -> str:
    """Whether the C accelerator is in use, in words (``ragmeter --version`` prints it)."""
    if native is not None:
        return f"C accelerator: in use ({getattr(native, '__file__', 'ragmeter._native')})"
    return f"C accelerator: not in use, pure Python path ({pure_reason or 'disabled'})"


def check_large_input(rows: int, source: str) -> None:
    """Warn (:class:`PurePathWarning`, once per process) when ``rows`` ≥
    :data:`LARGE_INPUT_ROWS` and the accelerator is not in use: nothing is wrong with the
    values, but a run of this size is several times slower than it needs to be."""
    global _warned
    if native is not None or rows < LARGE_INPUT_ROWS or _warned:
        return
    _warned = True
    reason = pure_reason or "the accelerator is disabled"
    warnings.warn(
        f"{source}: {rows:,} rows read without the C accelerator ({reason}); the pure "
        "Python path gives the same values but is several times slower at this size",
        PurePathWarning,
        stacklevel=3,
    )


def string_buffers(arr: pa.Array) -> tuple[Any, Any, bool, int] | None:
    """``(offsets, data, wide, offset)`` of a non-empty, null-free string array, else None."""
    import pyarrow as pa

    if len(arr) == 0 or arr.null_count:
        return None
    if pa.types.is_string(arr.type):
        wide = False
    elif pa.types.is_large_string(arr.type):
        wide = True
    else:
        return None
    _, offsets, data = arr.buffers()
    if offsets is None:
        return None
    return offsets, (data if data is not None else b""), wide, arr.offset


def indices(values: npt.NDArray[np.integer[Any]]) -> pa.Array:
    """An Arrow int64 array over ``values`` (int32 over int32 ``values``, zero copy): positions
    for ``Array.take``.

    ``pa.array`` would do, but it imports pandas (≈0.3 s) on first use when pandas is installed.
    """
    import numpy as np
    import pyarrow as pa

    if isinstance(values, np.ndarray) and values.dtype == np.int32:
        arr32 = np.ascontiguousarray(values)  # a 100 M-row take need not widen to int64
        return pa.Array.from_buffers(pa.int32(), len(arr32), [None, pa.py_buffer(arr32)])
    arr = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(arr), [None, pa.py_buffer(arr)])


#: above this many rows, take_strings uses Arrow's take
SMALL_TAKE = 1 << 20
#: above this many rows, take_strings uses Arrow's take once ``pyarrow.compute`` is imported
#: (its start-up cost paid): the numpy gather's index per byte costs more from here on
ARROW_TAKE = 1 << 14


def take_strings(arr: pa.Array, positions: npt.NDArray[np.integer[Any]]) -> pa.Array:
    """``arr.take(positions)`` for a null-free string array, with the C accelerator or numpy.

    ``Array.take`` imports ``pyarrow.compute`` (≈0.1 s at start-up); the fast paths avoid it
    until it is imported (a streamed evaluation imports it: blocks of a million rows).
    Falls back to ``take`` for arrays with nulls or other types. The C path sizes its output
    exactly (Arrow's take grows it: 140 MB over at 100 M rows) and reads int32 positions as
    they are. A string array whose result passes 2**31 - 1 bytes becomes a large string one.
    """
    import numpy as np
    import pyarrow as pa

    simple = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
    buffers = string_buffers(arr) if native is not None and simple else None
    if buffers is not None and native is not None:
        pos_arr = np.asarray(positions)
        pos_arr = pos_arr if pos_arr.dtype == np.int32 else pos_arr.astype(np.int64)
        offsets_out, data_out, wide_out = native.take_strings(
            *buffers, len(arr), np.ascontiguousarray(pos_arr)
        )
        return pa.Array.from_buffers(
            pa.large_string() if wide_out else pa.string(),
            len(pos_arr),
            [None, pa.py_buffer(offsets_out), pa.py_buffer(data_out)],
        )
    # The numpy gather needs an int64 index per byte: cheap for small arrays, where it saves
    # the start-up cost, but Arrow's take is far lighter on memory for large ones.
    large = len(positions) > SMALL_TAKE or (
        len(positions) > ARROW_TAKE and "pyarrow.compute" in sys.modules
    )
    if arr.null_count or not simple or large:
        return arr.take(indices(positions))
    wide = pa.types.is_large_string(arr.type)
    _, offsets_buf, data_buf = arr.buffers()
    width = np.int64 if wide else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=width)[arr.offset : arr.offset + len(arr) + 1]
    data = (
        np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    )
    pos = np.asarray(positions, dtype=np.int64)
    starts = offsets[:-1].astype(np.int64)[pos]
    lengths = np.diff(offsets).astype(np.int64)[pos]
    new_offsets = np.zeros(len(pos) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    total = int(new_offsets[-1])
    source = np.repeat(starts - new_offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
    gathered = data[source]
    out_type = pa.large_string() if wide or total >= 2**31 else pa.string()
    out_offsets = new_offsets if out_type == pa.large_string() else new_offsets.astype(np.int32)
    return pa.Array.from_buffers(
        out_type, len(pos), [None, pa.py_buffer(out_offsets), pa.py_buffer(gathered)]
    )


def byte_order(strings: pa.Array) -> npt.NDArray[np.int64] | None:
    """Positions of ``strings`` sorted in byte order (stable), via the C path; else None."""
    import numpy as np

    buffers = string_buffers(strings) if native is not None else None
    if native is None or buffers is None:
        return None
    zeros = np.zeros(len(strings), dtype=np.int64)
    perm, _, _ = native.order(zeros, 1, None, *buffers, False)
    return np.frombuffer(perm, dtype=np.int64)


def release_free_heap() -> None:
    """Give the heap's free pages back to the kernel (glibc's ``malloc_trim``; a no-op
    elsewhere). Buffers that grew by doubling below glibc's mmap threshold (up to 32 MiB once
    a block that size was freed) leave freed holes in the heap that stay resident: after
    parsing 100 M qrels lines, 350 MiB. It frees nothing in use."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        return


#: glibc's ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_heap(largest: int = 32 << 20, kept: int = 128 << 20) -> None:
    """Have this process's allocations up to ``largest`` bytes come from the heap and keep
    up to ``kept`` bytes of it once freed (glibc's ``mallopt``; a no-op elsewhere). For a
    worker that evaluates one block after another: each block's buffers of several MiB were
    mapped afresh and given back at the end (glibc's threshold follows the sizes freed, which
    the blocks' shrunk outputs keep below what the next block asks for), a page fault at every
    first write: 1,400 faults a 16 MiB block, ≈ 12 % of the workers' time on a virtual
    machine. Kept, the next block writes on pages already there. Only worker processes call
    it: the setting is the whole process's."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, largest)
        libc.mallopt(_M_TRIM_THRESHOLD, kept)
    except (OSError, AttributeError):
        return


class LazyModule:
    """A module imported on first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)
