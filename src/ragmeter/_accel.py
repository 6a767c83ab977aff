"""Access to the optional C accelerator ``ragmeter._native``.

``native`` is the extension module, or ``None`` when it was not built (or ``RAGMETER_PURE=1``
is set); callers read it at call time, so tests can switch paths by setting it. Both paths give
identical results.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

native: ModuleType | None
try:
    if os.environ.get("RAGMETER_PURE"):
        raise ImportError("RAGMETER_PURE is set")
    from ragmeter import _native

    native = _native
except ImportError:  # not built: the pure numpy/pyarrow path is used
    native = None


def string_buffers(arr: pa.Array) -> tuple[Any, Any, bool, int] | None:
    """``(offsets, data, wide, offset)`` of a non-empty, null-free string array, else None."""
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
    """An Arrow int64 array over ``values`` (zero copy).

    ``pa.array`` would do, but it imports pandas (≈0.3 s) on first use when pandas is installed.
    """
    arr = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(arr), [None, pa.py_buffer(arr)])


#: above this many rows, take_strings uses Arrow's take
SMALL_TAKE = 1 << 20


def take_strings(arr: pa.Array, positions: npt.NDArray[np.integer[Any]]) -> pa.Array:
    """``arr.take(positions)`` for a null-free string array, with numpy only.

    ``Array.take`` imports ``pyarrow.compute`` (≈0.1 s at start-up); the fast path avoids it.
    Falls back to ``take`` for arrays with nulls or other types.
    """
    simple = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
    # The numpy gather needs an int64 index per byte: cheap for small arrays, where it saves
    # the start-up cost, but Arrow's take is far lighter on memory for large ones.
    if arr.null_count or not simple or len(positions) > SMALL_TAKE:
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
    buffers = string_buffers(strings) if native is not None else None
    if native is None or buffers is None:
        return None
    zeros = np.zeros(len(strings), dtype=np.int64)
    perm, _, _ = native.order(zeros, 1, None, *buffers, False)
    return np.frombuffer(perm, dtype=np.int64)


class LazyModule:
    """A module imported on first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)
