"""Parsing a column of object keys at once: numpy over the keys' bytes, no Python per key.

Keys of one fleet come in a handful of *layouts*: the positions of their ``/``, ``_``
and ``.`` (devices of one naming scheme, 16-digit ids, durations of one length). Keys
are grouped by length, then by layout; for each layout the fields of the grammar
(docs/keys.md) are byte ranges of a matrix with one row per key, so every rule is a
column operation: the kind word, the device's and id's characters, the digits, ``T``
and ``Z`` of the start, the folders equal to the start, a real date, the duration's
form and range and the extension per kind. The same matrix feeds the key hash
(XXH64, :mod:`video_index.core.keyhash`).

Whatever this module does not accept — a layout that is not the grammar's, or a row
breaking a rule — is left to :func:`~video_index.core.keys.classify_key`, the one
authority on keys; a property test holds the two to the same verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from video_index.core.keyhash import xxh64_equal_length
from video_index.core.keys import KINDS, MAX_DURATION_MS, MIN_DURATION_MS, ValidKey, classify_key
from video_index.core.timeunits import DAY_MS, HOUR_MS

#: Shorter than any valid key (``v1/video/d/YYYY/MM/DD/HH/<start>_1_i.ts`` has 44 bytes).
_SHORTEST: Final = 44
#: Layouts tried per key length before the rest is left to the per-key code.
_TEMPLATES: Final = 16
_DIGITS: Final = list(b"0123456789")
_LOWER_DIGITS: Final = list(b"abcdefghijklmnopqrstuvwxyz0123456789")
_DEVICE_CHARS: Final = [*_LOWER_DIGITS, ord("-")]
#: YYYY/MM/DD/HH against the start's YYYYMMDDTHH.
_FOLDER_DIGITS: Final = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12]
_START_FOLDER_DIGITS: Final = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10]


@dataclass
class ParsedKeys:
    """The keys :func:`parse_keys` accepted (``accepted`` rows, in order) and their fields."""

    #: Row numbers of the accepted keys in the input.
    accepted: Any
    kind: Any  # int8 index into KINDS
    device: Any  # pyarrow string array
    start_ms: Any  # int64
    duration_ms: Any  # int64
    hash: Any  # uint64: XXH64 of the key


def parse_keys(keys: Any) -> ParsedKeys:
    """Parse an Arrow string array (no nulls) of keys; see the module docstring."""
    import numpy as np
    import pyarrow as pa

    count = len(keys)
    keys = keys.cast(pa.large_binary())
    if count == 0:
        return _collect([], pa)
    offsets = np.frombuffer(keys.buffers()[1], np.int64, count + 1, keys.offset)
    lengths = np.diff(offsets)
    widest = (max(int(lengths.max()), 1) + 7) // 8 * 8
    data = np.zeros(int(offsets[-1] - offsets[0]) + widest, np.uint8)
    data[: len(data) - widest] = np.frombuffer(keys.buffers()[2], np.uint8)[
        offsets[0] : offsets[-1]
    ]
    windows = np.lib.stride_tricks.sliding_window_view(data, widest)
    starts = offsets[:-1] - offsets[0]
    if (lengths == lengths[0]).all():
        groups = [np.arange(count)]
    else:
        order = np.argsort(lengths, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1)
    parts: list[tuple[Any, ...]] = []
    for rows in groups:
        size = int(lengths[rows[0]])
        if size < _SHORTEST:
            continue
        # Whole words for the hash: the bytes past the key's end zeroed.
        matrix = windows[starts[rows], : (size + 7) // 8 * 8]
        matrix[:, size:] = 0
        parts.extend(_parse_length_group(matrix, size, rows))
    return _collect(parts, pa)


def _parse_length_group(matrix: Any, size: int, rows: Any) -> list[tuple[Any, ...]]:
    """Keys of one length: each pass takes the first key left as a *template* (parsed
    the per-key way) and accepts every key that differs from it only where a template
    field allows (digits where it has digits, device and id characters), with the
    checks that span fields (folders equal to the start, a real date, the duration's
    range). Keys of other layouts are left for the next template."""
    import numpy as np

    parts: list[tuple[Any, ...]] = []
    # Only keys under v1/ can be valid; the others (foreign keys) are not templates.
    left = np.flatnonzero((matrix[:, :3] == np.frombuffer(b"v1/", np.uint8)).all(axis=1))
    for _ in range(_TEMPLATES):
        if not len(left):
            break
        group = matrix[left]
        template = _template(bytes(group[0, :size]))
        if template is None:
            left = left[1:]
            continue
        ok, start_ms, duration = _accepted(group, size, template)
        if ok.any():
            accepted = group[ok]
            device = accepted[:, template.device[0] : template.device[1]]
            hashes = xxh64_equal_length(accepted, size)
            parts.append(
                (rows[left[ok]], template.kind, device, start_ms[ok], duration[ok], hashes)
            )
        left = left[~ok]
    return parts


@dataclass(frozen=True)
class _Template:
    kind: int
    #: per column, the bytes a key of this layout may hold there
    allowed: Any
    device: tuple[int, int]
    folders: tuple[int, int]
    start: int
    duration: tuple[int, int]
    #: Columns whose digits the numeric checks validate (start, folders, duration).
    numeric: Any


def _template(key: bytes) -> _Template | None:
    """The layout of a valid key (None when the key is not one)."""
    import numpy as np

    try:
        text = key.decode("ascii")
    except UnicodeDecodeError:
        return None
    match classify_key(text):
        case ValidKey(segment=segment):
            pass
        case _:
            return None
    kind = KINDS.index(segment.kind)
    device = (4 + len(segment.kind), 4 + len(segment.kind) + len(segment.device))
    folders = (device[1] + 1, device[1] + 14)
    start = folders[1] + 1
    duration = (start + 21, start + 21 + len(str(segment.duration_ms)))
    allowed = np.zeros((len(key), 256), bool)
    allowed[np.arange(len(key)), np.frombuffer(key, np.uint8)] = True  # the template itself
    for at in range(device[0], device[1]):
        allowed[at, _DEVICE_CHARS if device[0] < at < device[1] - 1 else _LOWER_DIGITS] = True
    digits = [*range(folders[0], folders[1]), *range(start, start + 20), *range(*duration)]
    for at in digits:
        if key[at] in _DIGITS:
            allowed[at, _DIGITS] = True
    if duration[1] - duration[0] > 1:
        allowed[duration[0], ord("0")] = False
    for at in range(duration[1] + 1, len(key) - len(segment.ext) - 1):
        allowed[at, _LOWER_DIGITS] = True
    numeric = np.zeros(len(key), bool)
    numeric[[at for at in digits if key[at] in _DIGITS]] = True
    return _Template(kind, allowed, device, folders, start, duration, numeric)


def _accepted(padded: Any, size: int, template: _Template) -> tuple[Any, Any, Any]:
    """Which keys of ``padded`` (rows of ``size`` bytes, zero-padded to whole words) fit
    ``template``'s layout and rules, and (start ms, duration) of every row (meaningful
    where accepted)."""
    import numpy as np

    group = padded[:, :size]
    ok = np.ones(len(group), bool)
    # Digits are checked a word at a time below; every other byte that varies, here.
    varying = _varying(padded, size)
    for column in varying[~template.numeric[varying]]:
        ok &= template.allowed[column][group[:, column]]
    folders = group[:, template.folders[0] : template.folders[1]]
    at = template.start
    ok &= (folders[:, _FOLDER_DIGITS] == group[:, at : at + 11][:, _START_FOLDER_DIGITS]).all(
        axis=1
    )
    date, clock, millis, digits = _start_numbers(group[:, at : at + 20])
    ok &= digits
    year, month, day = date // 10_000, date // 100 % 100, date % 100
    hour, minute, second = clock // 10_000, clock // 100 % 100, clock % 100
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1)
    ok &= day <= days_in_month(year, np.clip(month, 1, 12))
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    duration_bytes = group[:, template.duration[0] : template.duration[1]]
    duration, digits = _decimal(duration_bytes)
    ok &= digits
    if duration_bytes.shape[1] > 1:
        ok &= duration_bytes[:, 0] != ord("0")
    kind = KINDS[template.kind]
    ok &= (duration >= MIN_DURATION_MS[kind]) & (duration <= MAX_DURATION_MS[kind])
    start_ms = (
        days_from_civil(year, np.clip(month, 1, 12), day) * DAY_MS
        + hour * HOUR_MS
        + minute * 60_000
        + second * 1000
        + millis
    )
    return ok, start_ms, duration


def _varying(padded: Any, size: int) -> Any:
    """The columns (bytes) in which some row differs from the first, compared a 64-bit
    word at a time."""
    import numpy as np

    words = padded.view("<u8")
    differs = np.bitwise_or.reduce(words ^ words[0], axis=0)
    columns = np.flatnonzero(differs.view(np.uint8))
    return columns[columns < size]


def _start_numbers(start: Any) -> tuple[Any, Any, Any, Any]:
    """(YYYYMMDD, HHMMSS, fff, all digits?) of ``YYYYMMDDTHHMMSS.fffZ`` columns, in one
    pass of three 8-digit words."""
    import numpy as np

    rows = start.shape[0]
    digits = np.full((rows, 24), ord("0"), np.uint8)
    digits[:, 0:8] = start[:, 0:8]
    digits[:, 10:16] = start[:, 9:15]
    digits[:, 21:24] = start[:, 16:19]
    words = digits.view("<u8")
    values = _swar(words)
    return values[:, 0], values[:, 1], values[:, 2], _all_digits(words)


def _all_digits(words: Any) -> Any:
    """Rows whose 64-bit words hold only the bytes '0'..'9'."""
    import numpy as np

    high = np.uint64(0xF0F0F0F0F0F0F0F0)
    zeros = np.uint64(0x3030303030303030)
    six = np.uint64(0x0606060606060606)
    with np.errstate(over="ignore"):
        fits = ((words & high) == zeros) & (((words + six) & high) == zeros)
    return fits.all(axis=1)


def _swar(words: Any) -> Any:
    """Each 64-bit word of eight ASCII digits (first digit in the lowest byte) as its
    number: three multiply-and-mask steps."""
    import numpy as np

    u = np.uint64
    with np.errstate(over="ignore"):
        words = words - u(0x3030303030303030)
        words = (words * u(10) + (words >> u(8))) & u(0x00FF00FF00FF00FF)
        words = (words * u(100) + (words >> u(16))) & u(0x0000FFFF0000FFFF)
        words = (words * u(10_000) + (words >> u(32))) & u(0x00000000FFFFFFFF)
    return words.astype(np.int64)


def _decimal(columns: Any) -> tuple[Any, Any]:
    """(the numbers written in ASCII digits across ``columns`` (up to 16), all digits?)."""
    import numpy as np

    rows, width = columns.shape
    padded = np.full((rows, 16), ord("0"), np.uint8)
    padded[:, 16 - width :] = columns
    words = padded.view("<u8")
    values = _swar(words)
    return values[:, 0] * 100_000_000 + values[:, 1], _all_digits(words)


def _collect(parts: list[tuple[Any, ...]], pa: Any) -> ParsedKeys:
    import numpy as np

    if not parts:
        return ParsedKeys(
            accepted=np.zeros(0, np.int64),
            kind=np.zeros(0, np.int8),
            device=pa.array([], pa.string()),
            start_ms=np.zeros(0, np.int64),
            duration_ms=np.zeros(0, np.int64),
            hash=np.zeros(0, np.uint64),
        )
    devices = [
        pa.Array.from_buffers(
            pa.binary(device_bytes.shape[1]),
            len(rows),
            [None, pa.py_buffer(np.ascontiguousarray(device_bytes).tobytes())],
        ).cast(pa.string())
        for rows, _, device_bytes, _, _, _ in parts
    ]
    return ParsedKeys(
        accepted=np.concatenate([p[0] for p in parts]),
        kind=np.concatenate([np.full(len(p[0]), p[1], np.int8) for p in parts]),
        device=pa.concat_arrays(devices),
        start_ms=np.concatenate([p[3] for p in parts]),
        duration_ms=np.concatenate([p[4] for p in parts]),
        hash=np.concatenate([p[5] for p in parts]),
    )


def _number(digits: Any, at: int, width: int) -> Any:
    value = digits[:, at]
    for column in range(at + 1, at + width):
        value = value * 10 + digits[:, column]
    return value


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
