"""Sequential floating-point sums: the order of additions trec_eval uses, for every view.

Floating-point addition is not associative: ``(a + b) + c`` and ``a + (b + c)`` can differ in
the last bit, and a value on a rounding boundary of the printed 4th decimal moves with it
(AP = 4.65 / 8 = 0.58125 prints ``0.5812`` from trec_eval's left-to-right sum and ``0.5813``
from a pairwise one). trec_eval adds a query's terms in rank order and the per-query values in
query order, one after the other. ragmeter does the same, through this module, wherever a sum
reaches a printed number (``trec-eval``'s output, ``evaluate``'s means, sweeps, reports):

* :func:`sequential_sum`, :func:`sequential_mean`, :func:`geometric_mean`: one array, left
  to right;
* :func:`segment_cumsum`: running sums that restart at every segment (query);
* :func:`segment_sums`: the sum of ``values[start:end]`` of every segment, left to right.

numpy's ``sum``, ``mean`` and ``add.reduceat`` add pairwise; ``cumsum`` (``add.accumulate``)
adds one element after the other by definition, so the helpers are built on it. Adding 0.0
leaves a sum unchanged, so a zero-padded block gives the bits of the unpadded sum.

:func:`log2_of_int` and :func:`libm_log` call the C library's ``log2``/``log`` (as trec_eval
does): numpy's vectorised kernels may differ from it in the last bit on some CPUs.

The segment helpers use the C accelerator's plain loops when it is built; the numpy path
(zero-padded blocks and ``cumsum``) gives the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter import _accel

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: trec_eval's floor of a value before the log of a geometric mean (``MIN_GEO_MEAN``).
MIN_GEO_MEAN = 1e-5

#: elements of one zero-padded block (32 MiB of float64): bounds the extra memory.
_BLOCK = 1 << 22


def sequential_sum(values: npt.ArrayLike) -> float:
    """``((v0 + v1) + v2) + …`` in double precision; 0.0 for no values."""
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(arr) == 0:
        return 0.0
    return float(np.cumsum(arr)[-1])


def sequential_mean(values: npt.ArrayLike, n: int | None = None) -> float:
    """:func:`sequential_sum` divided by ``n`` (default: the number of values), as trec_eval.

    ``n`` larger than the number of values averages over absent values that count 0.
    """
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    count = len(arr) if n is None else n
    if count <= 0:
        raise ValueError("mean of no values")
    return sequential_sum(arr) / count


def libm_log(values: npt.ArrayLike) -> FloatArray:
    """The C library's natural ``log`` of each value."""
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    return np.fromiter(map(math.log, arr.tolist()), dtype=np.float64, count=len(arr))


def libm_log2(values: npt.ArrayLike) -> FloatArray:
    """The C library's ``log2`` of each value."""
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    return np.fromiter(map(math.log2, arr.tolist()), dtype=np.float64, count=len(arr))


def geometric_mean(values: npt.ArrayLike, n: int | None = None) -> float:
    """``exp(Σ log(max(v, 1e-5)) / n)``, the sum sequential (trec_eval's ``gm_map``).

    ``n`` larger than the number of values averages in absent values at the 1e-5 floor.
    """
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    count = len(arr) if n is None else n
    if count <= 0:
        raise ValueError("mean of no values")
    total = sequential_sum(libm_log(np.maximum(arr, MIN_GEO_MEAN)))
    if count > len(arr):
        total += (count - len(arr)) * math.log(MIN_GEO_MEAN)
    return math.exp(total / count)


_LOG2: list[FloatArray] = [np.zeros(0, dtype=np.float64)]


def log2_of_int(n: IntArray | npt.NDArray[np.integer[Any]]) -> FloatArray:
    """``log2(n)`` of non-negative integers, from a table filled by the C library's ``log2``.

    The table grows to the largest ``n`` asked (log2(0) = -inf).
    """
    arr = np.asarray(n)
    top = int(arr.max()) if arr.size else 0
    table = _LOG2[0]
    if top >= len(table):
        size = max(top + 1, 2 * len(table), 1024)
        with np.errstate(divide="ignore"):
            table = np.array([-math.inf] + [math.log2(i) for i in range(1, size)])
        _LOG2[0] = table
    out: FloatArray = table[arr]
    return out


def power_table(p: float, n: int) -> FloatArray:
    """``[1, p, p·p, …]`` of length ``n + 1``, each by one more multiplication (not ``p**i``).

    trec_eval's ``rbp`` weights: ``cur_p = cur_p * p`` at every rank.
    """
    steps = np.full(n + 1, p, dtype=np.float64)
    steps[0] = 1.0
    out: FloatArray = np.cumprod(steps, dtype=np.float64)
    return out


def _groups(lengths: IntArray) -> Iterator[tuple[IntArray, int]]:
    """Segments grouped by length class (2^c ≤ len < 2^(c+1)), cut into blocks of ≤ _BLOCK.

    Yields ``(segment indices, block width)``; a padded block is at most twice its items.
    """
    nonempty = np.flatnonzero(lengths > 0)
    if len(nonempty) == 0:
        return
    lens = lengths[nonempty]
    classes = np.floor(np.log2(lens)).astype(np.int64)
    order = np.argsort(classes, kind="stable")
    bounds = np.flatnonzero(np.diff(classes[order])) + 1
    for part in np.split(order, bounds):
        rows = nonempty[part]
        width = int(lengths[rows].max())
        step = max(1, _BLOCK // width)
        for i in range(0, len(rows), step):
            chunk = rows[i : i + step]
            yield chunk, int(lengths[chunk].max())


def _block(
    values: FloatArray, starts: IntArray, lengths: IntArray, width: int
) -> tuple[FloatArray, IntArray, npt.NDArray[np.bool_] | None]:
    """The running sums of ``values[start:start+len]`` of each segment, one row per segment.

    Returns ``(cum, positions, inside)``: ``cum[s, j]`` is the sum of the first ``j + 1`` values
    of segment ``s`` (the last one repeated past its length), ``positions`` the flat index of
    each cell, ``inside`` whether the cell is within its segment (``None``: all are).
    """
    steps = np.arange(width, dtype=np.int64)
    positions = starts[:, None] + steps[None, :]
    if int(lengths.min()) == width:
        inside = None
        block = values[positions]
    else:
        inside = steps[None, :] < lengths[:, None]
        positions = np.where(inside, positions, 0)
        block = np.where(inside, values[positions], 0.0)
    np.cumsum(block, axis=1, out=block)
    return block, positions, inside


def segment_cumsum(values: npt.ArrayLike, offsets: IntArray) -> FloatArray:
    """Running sum of ``values`` within each CSR segment, inclusive, added left to right.

    ``offsets`` are CSR offsets covering ``values`` (``offsets[0] = 0``, ``offsets[-1] =
    len(values)``). Unlike ``cumsum(values) - cumsum at the segment start``, no rounding of
    other segments leaks in: every entry has the bits of a per-segment loop.
    """
    vals = np.ascontiguousarray(values, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if len(vals) == 0:
        return np.zeros(0, dtype=np.float64)
    native = getattr(_accel.native, "segment_cumsum", None)  # None: an older build
    if native is not None:
        return np.frombuffer(native(vals, offsets), dtype=np.float64)
    lengths = np.diff(offsets)
    n = len(lengths)
    width = int(lengths.max())
    if int(lengths.min()) == width and n * width == len(vals):
        # every segment the same length: one reshaped block, no padding
        out: FloatArray = np.cumsum(vals.reshape(n, width), axis=1).reshape(-1)
        return out
    out = np.zeros(len(vals), dtype=np.float64)
    for rows, w in _groups(lengths):
        cum, positions, inside = _block(vals, offsets[rows], lengths[rows], w)
        if inside is None:
            out[positions] = cum
        else:
            out[positions[inside]] = cum[inside]
    return out


def segment_sums(values: npt.ArrayLike, starts: IntArray, ends: IntArray) -> FloatArray:
    """Per segment, ``values[start] + values[start + 1] + … + values[end - 1]`` left to right.

    0.0 where ``end <= start``. Only the values inside the windows are read.
    """
    vals = np.ascontiguousarray(values, dtype=np.float64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    native = getattr(_accel.native, "segment_sums", None)  # None: an older build
    if native is not None:
        return np.frombuffer(native(vals, starts, ends), dtype=np.float64)
    lengths = np.maximum(ends - starts, 0)
    out = np.zeros(len(starts), dtype=np.float64)
    for rows, w in _groups(lengths):
        cum, _, _ = _block(vals, starts[rows], lengths[rows], w)
        out[rows] = cum[:, -1]
    return out
