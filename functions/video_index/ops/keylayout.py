"""One key *layout* (template) and the rows of a block that fit it and the grammar's rules.

A layout is the positions of a valid key's fields (kind, device, folders, start,
duration, id, extension); :func:`layout_of` derives it from one key the per-key code
accepts, and :func:`accepted` checks a whole block of keys of its length against it with
numpy over 64-bit words loaded at fixed offsets (see :mod:`video_index.ops.keyparse`
for the rules, :mod:`video_index.ops.keywords` for the word arithmetic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
from video_index.ops.keywords import (
    ZEROS,
    all_digits,
    days_from_civil,
    days_in_month,
    digits_before,
    lower_or_digit,
    pairs,
    swar,
)


@dataclass
class Part:
    """Keys of one block accepted by one template."""

    rows: Any
    kind: int
    device_codes: Any  # index into device_names
    device_names: list[str]
    start_ms: Any
    duration_ms: Any
    hash: Any


@dataclass(frozen=True)
class Template:
    size: int
    kind: int
    device: tuple[int, int]
    folders: int
    start: int
    duration: tuple[int, int]
    id: tuple[int, int]
    #: (offset, template word, mask of the bytes the layout fixes) per word checked.
    fixed: list[tuple[int, int, int]] = field(default_factory=list)


def layout_of(key: bytes) -> Template | None:
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
    return Template(size, kind, device, folders, start, duration, ident, fixed)


def accepted(
    matrix: Any, template: Template, devices: dict[bytes, bool]
) -> tuple[Any, Part] | None:
    """(which rows of ``matrix`` fit ``template``'s layout and rules — None: all —, their
    fields), or None when none does."""
    import numpy as np

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
    ok &= all_digits(clock_word) & all_digits(millis_word)
    _, hour, minute, second = pairs(clock_word)
    millis = swar(millis_word)
    # The folders YYYY/MM/DD/HH: the start's digits.
    folders = template.folders
    ok &= load(matrix, folders, "<u4") == load(matrix, at, "<u4")
    for folder, digits in ((5, 4), (8, 6), (11, 9)):
        ok &= load(matrix, folders + folder, "<u2") == load(matrix, at + digits, "<u2")
    # The date and the device: checked once per run of rows sharing them.
    heads, spread = _runs(matrix, template, date_word)
    day_ms, head_ok, codes, dictionary, valid = _per_run(matrix, template, heads, devices)
    ok &= spread(head_ok)
    codes = spread(codes)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    # The duration: digits, no leading zero, in range for the kind.
    low, high = template.duration
    width = high - low
    duration = digits_before(matrix, high, min(width, 8), ok)
    if width > 8:
        duration += digits_before(matrix, low + 1, 1, ok) * 100_000_000
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
            word = (word & keep) | (u(ZEROS) & ~keep)
        ok &= lower_or_digit(word)
    if not ok.any():
        return None
    start_ms = spread(day_ms) + hour * HOUR_MS + minute * 60_000 + second * 1000 + millis
    hashes = xxh64_rows(matrix, template.size)
    names_text = [name.decode("ascii") if valid[i] else "" for i, name in enumerate(dictionary)]
    if ok.all():
        return None, Part(
            None, template.kind, codes.astype(np.int64), names_text, start_ms, duration, hashes
        )
    return ok, Part(
        None,
        template.kind,
        codes[ok].astype(np.int64),
        names_text,
        start_ms[ok],
        duration[ok],
        hashes[ok],
    )


def _runs(matrix: Any, template: Template, date_word: Any) -> tuple[Any, Any]:
    """(the first row of each run of rows with the same start date and device bytes, a
    function spreading one value per run to its rows). Keys listed in key order (as S3
    Inventory and LIST give them) come in long runs; when runs are short the rows are
    their own heads (no spreading)."""
    import numpy as np

    count = matrix.shape[0]
    change = np.empty(count, bool)
    change[0] = True
    np.not_equal(date_word[1:], date_word[:-1], out=change[1:])
    d0, d1 = template.device
    for word_at in [*range(d0, d1 - 8, 8), max(d1 - 8, 0)]:
        word = load(matrix, word_at, "<u8")
        change[1:] |= word[1:] != word[:-1]
    heads = np.flatnonzero(change)
    if len(heads) * 2 > count:
        return np.arange(count), lambda values: values
    run = np.cumsum(change) - 1
    return heads, lambda values: values[run]


def _per_run(
    matrix: Any, template: Template, heads: Any, devices: dict[bytes, bool]
) -> tuple[Any, Any, Any, list[bytes], Any]:
    """(UTC midnight of the start date in ms, date and device valid, device code, the
    devices' names, which name is valid) of the rows ``heads``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    date_word = load(matrix, template.start, "<u8")[heads]
    ok = all_digits(date_word)
    century, year, month, day = pairs(date_word)
    year += century * 100
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1)
    month = np.clip(month, 1, 12, out=month)  # a bad month is already rejected
    ok &= day <= days_in_month(year, month)
    day_ms = days_from_civil(year, month, day) * DAY_MS
    # The device: checked once per distinct device.
    d0, d1 = template.device
    names = pa.Array.from_buffers(
        pa.binary(d1 - d0),
        len(heads),
        [None, pa.py_buffer(np.ascontiguousarray(matrix[heads, d0:d1]))],
    )
    encoded = pc.dictionary_encode(names)
    dictionary = encoded.dictionary.to_pylist()
    valid = np.array([valid_device(name, devices) for name in dictionary], bool)
    codes = encoded.indices.to_numpy()
    ok &= valid[codes]
    return day_ms, ok, codes, dictionary, valid


def valid_device(name: bytes, devices: dict[bytes, bool]) -> bool:
    known = devices.get(name)
    if known is None:
        try:
            known = DEVICE_RE.fullmatch(name.decode("ascii")) is not None
        except UnicodeDecodeError:
            known = False
        devices[name] = known
    return known
