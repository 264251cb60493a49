"""The key hash in a bucket's ``h`` figure: XXH64 (seed 0) of the key's UTF-8 bytes.

``h`` is a sum of key hashes mod 2^64 (docs/read-model.md), so a partition's
fingerprint changes when any key of it changes. Two implementations of the same
function live here:

* :func:`key_hash` — one key, pure Python: ingest and repairs hash one key at a time;
* :func:`key_hashes` — a whole Arrow string array at once, with numpy (no Python per
  key): the reconcile pass over billions of inventory rows.

XXH64 is the published xxHash algorithm (Yann Collet; ``xxh64`` with seed 0, as
``xxhsum -H1`` prints it), so anyone can recompute a fingerprint. It replaced the first
8 bytes of SHA-256, which cannot be computed column-wise; a read model written before
the change is migrated by a rebuild (docs/operations.md). The hash is not keyed and is
no defence against someone who crafts keys to collide: it detects lost events and
drift, which is what a fingerprint is for.
"""

from __future__ import annotations

from typing import Any, Final

P1: Final = 0x9E3779B185EBCA87
P2: Final = 0xC2B2AE3D27D4EB4F
P3: Final = 0x165667B19E3779F9
P4: Final = 0x85EBCA77C2B2AE63
P5: Final = 0x27D4EB2F165667C5
_MASK: Final = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * P2) & _MASK, 31) * P1) & _MASK


def xxh64(data: bytes) -> int:
    """XXH64 of ``data`` with seed 0, as an unsigned 64-bit integer."""
    size = len(data)
    at = 0
    if size >= 32:
        v1, v2, v3, v4 = (P1 + P2) & _MASK, P2, 0, (-P1) & _MASK
        while at + 32 <= size:
            v1 = _round(v1, int.from_bytes(data[at : at + 8], "little"))
            v2 = _round(v2, int.from_bytes(data[at + 8 : at + 16], "little"))
            v3 = _round(v3, int.from_bytes(data[at + 16 : at + 24], "little"))
            v4 = _round(v4, int.from_bytes(data[at + 24 : at + 32], "little"))
            at += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
        for v in (v1, v2, v3, v4):
            h = ((h ^ _round(0, v)) * P1 + P4) & _MASK
    else:
        h = P5
    h = (h + size) & _MASK
    while at + 8 <= size:
        h ^= _round(0, int.from_bytes(data[at : at + 8], "little"))
        h = (_rotl(h, 27) * P1 + P4) & _MASK
        at += 8
    if at + 4 <= size:
        h ^= (int.from_bytes(data[at : at + 4], "little") * P1) & _MASK
        h = (_rotl(h, 23) * P2 + P3) & _MASK
        at += 4
    while at < size:
        h ^= (data[at] * P5) & _MASK
        h = (_rotl(h, 11) * P1) & _MASK
        at += 1
    h ^= h >> 33
    h = (h * P2) & _MASK
    h ^= h >> 29
    h = (h * P3) & _MASK
    h ^= h >> 32
    return h


def key_hash(key: str) -> int:
    """The fingerprint term of one key."""
    return xxh64(key.encode())


def key_hashes(keys: Any) -> Any:
    """:func:`key_hash` of every key of an Arrow string array (no nulls), as a numpy
    ``uint64`` array: XXH64 computed lane-wise, one group of keys of equal length at a
    time (keys of one fleet come in a few lengths), each group a byte matrix with one
    row per key (:func:`xxh64_rows`)."""
    import numpy as np
    import pyarrow as pa

    count = len(keys)
    out = np.zeros(count, np.uint64)
    if count == 0:
        return out
    keys = keys.cast(pa.large_binary())
    offsets = np.frombuffer(keys.buffers()[1], np.int64, count + 1, keys.offset)
    lengths = np.diff(offsets)
    widest = max(int(lengths.max()), 1)
    # Every key's bytes and what follows them, as rows of a window view (no copy): a
    # group's matrix is one gather of its rows.
    data = np.zeros(int(offsets[-1] - offsets[0]) + widest, np.uint8)
    if offsets[-1] > offsets[0]:
        data[: len(data) - widest] = np.frombuffer(keys.buffers()[2], np.uint8)[
            offsets[0] : offsets[-1]
        ]
    windows = np.lib.stride_tricks.sliding_window_view(data, widest)
    starts = offsets[:-1] - offsets[0]
    order = np.argsort(lengths, kind="stable")
    for rows in np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1):
        size = int(lengths[rows[0]])
        out[rows] = xxh64_rows(windows[starts[rows], : max(size, 1)], size)
    return out


def load(matrix: Any, at: int, dtype: str) -> Any:
    """The ``dtype`` value (little-endian) at byte ``at`` of every row of a C-contiguous
    byte matrix, as a strided view (no copy; ``at`` + its size within a row)."""
    import numpy as np

    return np.ndarray(
        (matrix.shape[0],), dtype, buffer=matrix, offset=at, strides=(matrix.strides[0],)
    )


# long: the XXH64 rounds over whole columns, in the order the specification gives them
def xxh64_rows(matrix: Any, size: int) -> Any:
    """XXH64 of each row's first ``size`` bytes of a C-contiguous byte matrix (rows at
    least ``size`` wide; any bytes past ``size`` are not read)."""
    import numpy as np

    u = np.uint64
    p1, p2, p3, p4, p5 = u(P1), u(P2), u(P3), u(P4), u(P5)
    count = matrix.shape[0]
    if count == 0:
        return np.zeros(0, np.uint64)
    matrix = np.ascontiguousarray(matrix)
    scratch = np.empty(count, np.uint64)
    lane = np.empty(count, np.uint64)

    def rotl(x: Any, r: int) -> None:  # x = rotl(x, r), in place
        np.right_shift(x, u(64 - r), out=scratch)
        np.left_shift(x, u(r), out=x)
        np.bitwise_or(x, scratch, out=x)

    def round_(acc: Any, word: Any) -> None:  # acc = rotl(acc + word * P2, 31) * P1
        np.multiply(word, p2, out=lane)
        np.add(acc, lane, out=acc)
        rotl(acc, 31)
        np.multiply(acc, p1, out=acc)

    with np.errstate(over="ignore"):
        at = 0
        if size >= 32:
            v = [
                np.full(count, u((P1 + P2) & _MASK)),
                np.full(count, p2),
                np.zeros(count, np.uint64),
                np.full(count, u((-P1) & _MASK)),
            ]
            while at + 32 <= size:
                for index in range(4):
                    round_(v[index], load(matrix, at + 8 * index, "<u8"))
                at += 32
            h = v[0].copy()
            rotl(h, 1)
            for index, r in ((1, 7), (2, 12), (3, 18)):
                lane[:] = v[index]
                rotl(lane, r)
                h += lane
            for acc in v:
                np.multiply(acc, p2, out=acc)
                rotl(acc, 31)
                np.multiply(acc, p1, out=acc)
                h ^= acc
                h *= p1
                h += p4
        else:
            h = np.full(count, p5)
        h += u(size)
        word = np.empty(count, np.uint64)
        while at + 8 <= size:
            word[:] = load(matrix, at, "<u8")
            np.multiply(word, p2, out=word)
            rotl(word, 31)
            np.multiply(word, p1, out=word)
            h ^= word
            rotl(h, 27)
            h *= p1
            h += p4
            at += 8
        if at + 4 <= size:
            np.multiply(load(matrix, at, "<u4").astype(np.uint64), p1, out=word)
            h ^= word
            rotl(h, 23)
            h *= p2
            h += p3
            at += 4
        while at < size:
            np.multiply(matrix[:, at].astype(np.uint64), p5, out=word)
            h ^= word
            rotl(h, 11)
            h *= p1
            at += 1
        np.right_shift(h, u(33), out=scratch)
        h ^= scratch
        h *= p2
        np.right_shift(h, u(29), out=scratch)
        h ^= scratch
        h *= p3
        np.right_shift(h, u(32), out=scratch)
        h ^= scratch
    return h
