"""Rules of the key grammar on 64-bit words of ASCII: eight bytes checked or converted at once.

:mod:`video_index.ops.keylayout` loads words from fixed byte offsets of every key of a
block (one ``uint64`` per key) and hands them here: are they all digits, all
``[a-z0-9]``, what number do they spell (SWAR: a few multiply-and-mask steps, no
division, no Python per key), and is the date they spell a real one. Words hold their
first byte in the lowest bits (little-endian loads).
"""

from __future__ import annotations

from typing import Any, Final

from video_index.core.keyhash import load

#: Eight ASCII zeros: fills the bytes of a word that are not part of the field.
ZEROS: Final = 0x3030303030303030


def digits_before(matrix: Any, end: int, width: int, ok: Any) -> Any:
    """The number written in the ``width`` (1..8) digits ending before byte ``end`` of
    every row; rows where they are not all digits are cleared in ``ok``."""
    import numpy as np

    u = np.uint64
    word = load(matrix, end - 8, "<u8")
    if width < 8:
        keep = u(((1 << 64) - 1) << (8 * (8 - width)) & ((1 << 64) - 1))
        word = (word & keep) | (u(ZEROS) & ~keep)
    ok &= all_digits(word)
    return swar(word)


def all_digits(words: Any) -> Any:
    """Words holding only the bytes '0'..'9'."""
    import numpy as np

    high = np.uint64(0xF0F0F0F0F0F0F0F0)
    zeros = np.uint64(ZEROS)
    six = np.uint64(0x0606060606060606)
    with np.errstate(over="ignore"):
        return ((words & high) == zeros) & (((words + six) & high) == zeros)


def lower_or_digit(words: Any) -> Any:
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


def pairs(words: Any) -> tuple[Any, Any, Any, Any]:
    """The four two-digit numbers of words of eight ASCII digits (first digit in the
    lowest byte): one multiply-and-mask step, then a shift per pair."""
    import numpy as np

    u = np.uint64
    with np.errstate(over="ignore"):
        words = words - u(ZEROS)
        words = (words * u(10) + (words >> u(8))) & u(0x00FF00FF00FF00FF)
    words = words.view(np.int64)
    return words & 0xFF, (words >> 16) & 0xFF, (words >> 32) & 0xFF, words >> 48


def swar(words: Any) -> Any:
    """Each 64-bit word of eight ASCII digits (first digit in the lowest byte) as its
    number: three multiply-and-mask steps."""
    import numpy as np

    u = np.uint64
    with np.errstate(over="ignore"):
        words = words - u(ZEROS)
        words = (words * u(10) + (words >> u(8))) & u(0x00FF00FF00FF00FF)
        words = (words * u(100) + (words >> u(16))) & u(0x0000FFFF0000FFFF)
        words = (words * u(10_000) + (words >> u(32))) & u(0x00000000FFFFFFFF)
    return words.astype(np.int64)


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
