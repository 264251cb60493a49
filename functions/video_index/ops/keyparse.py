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

from dataclasses import dataclass, field
from typing import Any, Final

from video_index.core.keyhash import load, xxh64_rows
from video_index.core.keys import (
    DEVICE_RE,
    KINDS,
    MAX_DURATION_MS,
    MIN_DURATION_MS,
    ValidKey,
    classify_key,
)
from video_index.core.timeunits import DAY_MS, HOUR_MS

#: Shorter than any valid key (``v1/video/d/YYYY/MM/DD/HH/<start>_1_i.ts`` has 44 bytes).
_SHORTEST: Final = 44
#: New layouts tried per block of keys before the rest is left to the per-key code.
_TEMPLATES: Final = 16
#: Rows checked at a time: a block's bytes stay in the CPU's cache across the checks.
_BLOCK_ROWS: Final = 16_384
_V1: Final = int.from_bytes(b"v1/", "little")
_ZEROS: Final = 0x3030303030303030


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
    parts: list[_Part] = []
    if count == 0:
        return _collect(parts)
    offsets = np.frombuffer(keys.buffers()[1], np.int64, count + 1, keys.offset)
    lengths = np.diff(offsets)
    first, last = int(offsets[0]), int(offsets[-1])
    if last == first:
        return _collect(parts)
    raw = np.frombuffer(keys.buffers()[2], np.uint8)
    templates: dict[int, list[_Template]] = {}
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


@dataclass
class _Part:
    """Keys of one block accepted by one template."""

    rows: Any
    kind: int
    device_codes: Any  # index into device_names
    device_names: list[str]
    start_ms: Any
    duration_ms: Any
    hash: Any


def _parse_block(
    matrix: Any, rows: Any, known: list[_Template], devices: dict[bytes, bool]
) -> list[_Part]:
    """Keys of one length: each template (those of earlier blocks first, then new ones
    from the first key left) accepts the keys that fit its layout and the rules."""
    import numpy as np

    parts: list[_Part] = []
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
            found = _template(bytes(group[0]))
            if found is None:
                left = np.arange(1, len(group)) if left is None else left[1:]
                group = matrix[left]
                continue
            template = found
            known.append(template)
        else:
            break
        tried += 1
        found_part = _accepted(group, template, devices)
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


@dataclass(frozen=True)
class _Template:
    size: int
    kind: int
    device: tuple[int, int]
    folders: int
    start: int
    duration: tuple[int, int]
    id: tuple[int, int]
    #: (offset, template word, mask of the bytes the layout fixes) per word checked.
    fixed: list[tuple[int, int, int]] = field(default_factory=list)


def _template(key: bytes) -> _Template | None:
    """The layout of a valid key (None when the key is not one)."""
    try:
        text = key.decode("ascii")
    except UnicodeDecodeError:
        return None
    match classify_key(text):
        case ValidKey(segment=segment):
            pass
        case _:
            return None
    size = len(key)
    kind = KINDS.index(segment.kind)
    device = (4 + len(segment.kind), 4 + len(segment.kind) + len(segment.device))
    folders = device[1] + 1
    start = folders + 14
    duration = (start + 21, start + 21 + len(str(segment.duration_ms)))
    ident = (duration[1] + 1, size - len(segment.ext) - 1)
    free = [
        *range(*device),
        *(folders + at for at in (0, 1, 2, 3, 5, 6, 8, 9, 11, 12)),
        *(start + at for at in (*range(8), *range(9, 15), 16, 17, 18)),
        *range(*duration),
        *range(*ident),
    ]
    mask = bytearray(b"\xff" * size)
    for at in free:
        mask[at] = 0
    fixed = []
    for at in [*range(0, size - 7, 8), *([size - 8] if size % 8 else [])]:
        word_mask = int.from_bytes(mask[at : at + 8], "little")
        if word_mask:
            fixed.append((at, int.from_bytes(key[at : at + 8], "little") & word_mask, word_mask))
    return _Template(size, kind, device, folders, start, duration, ident, fixed)


def _accepted(
    matrix: Any, template: _Template, devices: dict[bytes, bool]
) -> tuple[Any, _Part] | None:
    """(which rows of ``matrix`` fit ``template``'s layout and rules — None: all —, their
    fields), or None when none does."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    u = np.uint64
    count = matrix.shape[0]
    bad = np.zeros(count, np.uint64)
    scratch = np.empty(count, np.uint64)
    for at, word, mask in template.fixed:
        np.bitwise_xor(load(matrix, at, "<u8"), u(word), out=scratch)
        scratch &= u(mask)
        bad |= scratch
    ok = bad == 0
    # The start: YYYYMMDD, THHMMSS. and fffZ as three words of eight digits.
    at = template.start
    date_word = load(matrix, at, "<u8")
    clock_word = (load(matrix, at + 8, "<u8") & u(0x00FFFFFFFFFFFF00)) << u(8)
    clock_word |= u(0x3030)
    millis_word = (load(matrix, at + 16, "<u4").astype(np.uint64) & u(0xFFFFFF)) << u(40)
    millis_word |= u(0x3030303030)
    ok &= _all_digits(date_word) & _all_digits(clock_word) & _all_digits(millis_word)
    century, year, month, day = _pairs(date_word)
    year += century * 100
    _, hour, minute, second = _pairs(clock_word)
    millis = _swar(millis_word)
    # The folders YYYY/MM/DD/HH: the start's digits.
    folders = template.folders
    ok &= load(matrix, folders, "<u4") == load(matrix, at, "<u4")
    for folder, digits in ((5, 4), (8, 6), (11, 9)):
        ok &= load(matrix, folders + folder, "<u2") == load(matrix, at + digits, "<u2")
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1)
    month = np.clip(month, 1, 12, out=month)  # a bad month is already rejected
    ok &= day <= days_in_month(year, month)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    # The duration: digits, no leading zero, in range for the kind.
    low, high = template.duration
    width = high - low
    duration = _digits_before(matrix, high, min(width, 8), ok)
    if width > 8:
        duration += _digits_before(matrix, low + 1, 1, ok) * 100_000_000
    if width > 1:
        ok &= matrix[:, low] != ord("0")
    kind = KINDS[template.kind]
    ok &= (duration >= MIN_DURATION_MS[kind]) & (duration <= MAX_DURATION_MS[kind])
    # The id: [a-z0-9], a word at a time (the last one overlapping or masked).
    first, end = template.id
    for word_at in [*range(first, end - 8, 8), end - 8]:
        word = load(matrix, word_at, "<u8")
        if word_at < first:
            keep = u(((1 << 64) - 1) << (8 * (first - word_at)) & ((1 << 64) - 1))
            word = (word & keep) | (u(_ZEROS) & ~keep)
        ok &= _lower_or_digit(word)
    # The device: checked once per distinct device of the block.
    d0, d1 = template.device
    names = pa.Array.from_buffers(
        pa.binary(d1 - d0), count, [None, pa.py_buffer(np.ascontiguousarray(matrix[:, d0:d1]))]
    )
    encoded = pc.dictionary_encode(names)
    dictionary = encoded.dictionary.to_pylist()
    valid = np.array([_valid_device(name, devices) for name in dictionary], bool)
    codes = encoded.indices.to_numpy()
    ok &= valid[codes]
    if not ok.any():
        return None
    start_ms = (
        days_from_civil(year, month, day) * DAY_MS
        + hour * HOUR_MS
        + minute * 60_000
        + second * 1000
        + millis
    )
    hashes = xxh64_rows(matrix, template.size)
    names_text = [name.decode("ascii") if valid[i] else "" for i, name in enumerate(dictionary)]
    if ok.all():
        return None, _Part(
            None, template.kind, codes.astype(np.int64), names_text, start_ms, duration, hashes
        )
    return ok, _Part(
        None,
        template.kind,
        codes[ok].astype(np.int64),
        names_text,
        start_ms[ok],
        duration[ok],
        hashes[ok],
    )


def _valid_device(name: bytes, devices: dict[bytes, bool]) -> bool:
    known = devices.get(name)
    if known is None:
        try:
            known = DEVICE_RE.fullmatch(name.decode("ascii")) is not None
        except UnicodeDecodeError:
            known = False
        devices[name] = known
    return known


def _digits_before(matrix: Any, end: int, width: int, ok: Any) -> Any:
    """The number written in the ``width`` (1..8) digits ending before byte ``end`` of
    every row; rows where they are not all digits are cleared in ``ok``."""
    import numpy as np

    u = np.uint64
    word = load(matrix, end - 8, "<u8")
    if width < 8:
        keep = u(((1 << 64) - 1) << (8 * (8 - width)) & ((1 << 64) - 1))
        word = (word & keep) | (u(_ZEROS) & ~keep)
    ok &= _all_digits(word)
    return _swar(word)


def _all_digits(words: Any) -> Any:
    """Words holding only the bytes '0'..'9'."""
    import numpy as np

    high = np.uint64(0xF0F0F0F0F0F0F0F0)
    zeros = np.uint64(_ZEROS)
    six = np.uint64(0x0606060606060606)
    with np.errstate(over="ignore"):
        return ((words & high) == zeros) & (((words + six) & high) == zeros)


def _lower_or_digit(words: Any) -> Any:
    """Words holding only the bytes 'a'..'z' and '0'..'9' (per byte: x >= lo sets bit 7
    of x + 0x80 - lo; x > hi sets bit 7 of x + 0x7f - hi; no byte carries into the next
    while bit 7 of every byte is clear, which is checked first)."""
    import numpy as np

    u = np.uint64
    sevens = u(0x8080808080808080)

    def at_least(low: int) -> Any:
        return words + u((0x80 - low) * 0x0101010101010101)

    def above(high: int) -> Any:
        return words + u((0x7F - high) * 0x0101010101010101)

    with np.errstate(over="ignore"):
        digit = at_least(ord("0")) & ~above(ord("9"))
        letter = at_least(ord("a")) & ~above(ord("z"))
        return ((words & sevens) == 0) & (((digit | letter) & sevens) == sevens)


def _pairs(words: Any) -> tuple[Any, Any, Any, Any]:
    """The four two-digit numbers of words of eight ASCII digits (first digit in the
    lowest byte): one multiply-and-mask step, then a shift per pair."""
    import numpy as np

    u = np.uint64
    with np.errstate(over="ignore"):
        words = words - u(_ZEROS)
        words = (words * u(10) + (words >> u(8))) & u(0x00FF00FF00FF00FF)
    words = words.view(np.int64)
    return words & 0xFF, (words >> 16) & 0xFF, (words >> 32) & 0xFF, words >> 48


def _swar(words: Any) -> Any:
    """Each 64-bit word of eight ASCII digits (first digit in the lowest byte) as its
    number: three multiply-and-mask steps."""
    import numpy as np

    u = np.uint64
    with np.errstate(over="ignore"):
        words = words - u(_ZEROS)
        words = (words * u(10) + (words >> u(8))) & u(0x00FF00FF00FF00FF)
        words = (words * u(100) + (words >> u(16))) & u(0x0000FFFF0000FFFF)
        words = (words * u(10_000) + (words >> u(32))) & u(0x00000000FFFFFFFF)
    return words.astype(np.int64)


def _collect(parts: list[_Part]) -> ParsedKeys:
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


def days_from_civil(year: Any, month: Any, day: Any) -> Any:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's algorithm)."""
    import numpy as np

    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = np.mod(month + 9, 12)
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def days_in_month(year: Any, month: Any) -> Any:
    import numpy as np

    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    lengths = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    return lengths[month] + ((month == 2) & leap)
