"""Parsing a column of object keys at once: numpy over the keys' bytes, no Python per key.

Keys of one fleet come in a handful of *layouts*: the positions of their ``/``, ``_``
and ``.`` (devices of one naming scheme, 16-digit ids, durations of one length). Keys
are grouped by length (a batch of one length is read in place, without a copy), then
by layout: the first key left is parsed the per-key way and becomes a *template*, and
every key of its length that fits it is accepted a block of rows at a time. Each rule
of the grammar (docs/keys.md) is a few operations on 64-bit words loaded from fixed
byte offsets of every row (strided views, no Python per key):

* the bytes the layout fixes (``v1/``, the kind, the separators, ``T``, ``.``, ``Z``
  and the extension) equal the template's: a masked XOR of the row's words;
* the start's ``YYYYMMDD``, ``HHMMSS`` and ``fff`` are three words of ASCII digits,
  checked and converted eight digits at a time (SWAR), then checked as a real date;
  the folders ``YYYY/MM/DD/HH`` equal the start's digits (four small compares);
* the duration is a word of digits (no leading zero, in range for the kind);
* the id's bytes are ``[a-z0-9]`` (byte-wise range tests on words);
* the device, repeated across many keys, is checked once per distinct device.

The same rows feed the key hash (XXH64, :mod:`video_index.core.keyhash`). Whatever this
module does not accept — a layout that is not the grammar's, or a row breaking a rule —
is left to :func:`~video_index.core.keys.classify_key`, the one authority on keys; a
property test holds the two to the same verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from video_index.core.keyhash import load
from video_index.ops.keylayout import Part, Template, accepted, layout_of

#: Shorter than any valid key (``v1/video/d/YYYY/MM/DD/HH/<start>_1_i.ts`` has 44 bytes).
_SHORTEST: Final = 44
#: New layouts tried per block of keys before the rest is left to the per-key code.
_TEMPLATES: Final = 16
#: Rows checked at a time: a block's bytes stay in the CPU's cache across the checks.
_BLOCK_ROWS: Final = 16_384
_V1: Final = int.from_bytes(b"v1/", "little")


@dataclass
class ParsedKeys:
    """The keys :func:`parse_keys` accepted (``accepted`` rows, in order) and their fields."""

    #: Row numbers of the accepted keys in the input.
    accepted: Any
    kind: Any  # int8 index into KINDS
    #: Index into ``devices`` of each accepted key's device.
    device_index: Any  # int64
    devices: Any  # pyarrow string array (a device may appear more than once)
    start_ms: Any  # int64
    duration_ms: Any  # int64
    hash: Any  # uint64: XXH64 of the key

    @property
    def device(self) -> Any:
        """The device of each accepted key (pyarrow strings)."""
        import pyarrow as pa

        return self.devices.take(pa.array(self.device_index))


def parse_keys(keys: Any) -> ParsedKeys:
    """Parse an Arrow string array (no nulls) of keys; see the module docstring."""
    import numpy as np
    import pyarrow as pa

    count = len(keys)
    keys = keys.cast(pa.large_binary())
    parts: list[Part] = []
    if count == 0:
        return _collect(parts)
    offsets = np.frombuffer(keys.buffers()[1], np.int64, count + 1, keys.offset)
    lengths = np.diff(offsets)
    first, last = int(offsets[0]), int(offsets[-1])
    if last == first:
        return _collect(parts)
    raw = np.frombuffer(keys.buffers()[2], np.uint8)
    templates: dict[int, list[Template]] = {}
    devices: dict[bytes, bool] = {}
    size = int(lengths[0])
    if (lengths == size).all():
        # One length: the keys' bytes are already a matrix with one row per key.
        groups = [(np.arange(count), raw[first:last].reshape(count, size))]
    else:
        widest = int(lengths.max())
        data = np.zeros(last - first + widest, np.uint8)
        data[: last - first] = raw[first:last]
        windows = np.lib.stride_tricks.sliding_window_view(data, widest)
        starts = offsets[:-1] - first
        order = np.argsort(lengths, kind="stable")
        groups = []
        for rows in np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1):
            length = int(lengths[rows[0]])
            if length >= _SHORTEST:
                groups.append((rows, windows[starts[rows], :length]))
    for rows, matrix in groups:
        size = matrix.shape[1]
        if size < _SHORTEST:
            continue
        known = templates.setdefault(size, [])
        for low in range(0, len(rows), _BLOCK_ROWS):
            block = matrix[low : low + _BLOCK_ROWS]
            parts.extend(_parse_block(block, rows[low : low + _BLOCK_ROWS], known, devices))
    return _collect(parts)


def _parse_block(
    matrix: Any, rows: Any, known: list[Template], devices: dict[bytes, bool]
) -> list[Part]:
    """Keys of one length: each template (those of earlier blocks first, then new ones
    from the first key left) accepts the keys that fit its layout and the rules."""
    import numpy as np

    parts: list[Part] = []
    # Only keys under v1/ can be valid; the others (foreign keys) are not templates.
    v1 = (load(matrix, 0, "<u4") & np.uint32(0xFFFFFF)) == np.uint32(_V1)
    left = None if v1.all() else np.flatnonzero(v1)
    group = matrix if left is None else matrix[left]
    tried = 0
    new = 0
    while left is None or len(left):
        if tried < len(known):
            template = known[tried]
        elif new < _TEMPLATES:
            new += 1
            found = layout_of(bytes(group[0]))
            if found is None:
                left = np.arange(1, len(group)) if left is None else left[1:]
                group = matrix[left]
                continue
            template = found
            known.append(template)
        else:
            break
        tried += 1
        found_part = accepted(group, template, devices)
        if found_part is None:
            continue
        ok, part = found_part
        taken = rows if left is None else rows[left]
        part.rows = taken[ok] if ok is not None else taken
        parts.append(part)
        if ok is None:
            break
        left = np.flatnonzero(~ok) if left is None else left[~ok]
        group = matrix[left]
    return parts


def _collect(parts: list[Part]) -> ParsedKeys:
    """One :class:`ParsedKeys` of every part: the parts' device lists joined (a device's
    index is its position in the joined list)."""
    import numpy as np
    import pyarrow as pa

    if not parts:
        return ParsedKeys(
            accepted=np.zeros(0, np.int64),
            kind=np.zeros(0, np.int8),
            device_index=np.zeros(0, np.int64),
            devices=pa.array([], pa.string()),
            start_ms=np.zeros(0, np.int64),
            duration_ms=np.zeros(0, np.int64),
            hash=np.zeros(0, np.uint64),
        )
    names: list[str] = []
    indices = []
    for part in parts:
        indices.append(part.device_codes + len(names))
        names.extend(part.device_names)
    return ParsedKeys(
        accepted=np.concatenate([p.rows for p in parts]),
        kind=np.concatenate([np.full(len(p.rows), p.kind, np.int8) for p in parts]),
        device_index=np.concatenate(indices),
        devices=pa.array(names, pa.string()),
        start_ms=np.concatenate([p.start_ms for p in parts]),
        duration_ms=np.concatenate([p.duration_ms for p in parts]),
        hash=np.concatenate([p.hash for p in parts]),
    )
