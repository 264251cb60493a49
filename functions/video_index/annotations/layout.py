"""The items of the annotations table: one Query per window, history beside the current version.

Every item of a device lives in one partition, ``pk = ann#<device>``, with string
sort keys of three forms (docs/annotations.md):

* **version** ``v#<annotation id>#<version, 10 digits>``: one version as written (the
  annotation, who and when; ``deleted`` on the version that deleted it). Never changed,
  never deleted: the history. The newest is the current version.
* **anchor** ``w#<start>#<annotation id>``: a copy of the current version at the start
  of its target (absent once deleted).
* **carry** ``w#<UTC midnight>!<start>#<annotation id>``: a copy of the current version
  of a target longer than a day, at each UTC midnight ``m`` with ``start < m`` and
  ``m + 1 day < end``.

``<start>`` is ``YYYYMMDDTHHMMSS.fffZ`` (the key format of segments), so the
``w#`` items sort by time. The annotations of a window ``[from, to)`` are those
``w#`` items from ``w#<L>`` to ``w#<to>``, with ``L`` the UTC midnight one day
before the day of ``from``: one Query. An annotation of at most a day that
intersects the window starts at or after ``L``, so its anchor is read; a longer
one that starts before ``L`` has a carry at exactly ``L`` (``L + 1 day <= from <
end``). Carries at other midnights are redundant copies and skipped; a carry at
``L`` sorts before every anchor (``!`` < ``#``) and among the carries by start,
so the Query's own order is start order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from video_index.annotations.model import Annotation
from video_index.core.keys import format_start
from video_index.core.timeunits import DAY_MS, from_epoch_ms

PARTITION_PREFIX: Final = "ann#"
WINDOW_PREFIX: Final = "w#"
VERSION_PREFIX: Final = "v#"
_ANCHOR_MARK: Final = "#"
_CARRY_MARK: Final = "!"
#: Above every character of an annotation id.
_AFTER_ID: Final = "~"
#: Length of ``YYYYMMDDTHHMMSS.fffZ``.
_STAMP_LENGTH: Final = 20
VERSION_DIGITS: Final = 10
MAX_VERSION: Final = 10**VERSION_DIGITS - 1


def partition(device: str) -> str:
    return f"{PARTITION_PREFIX}{device}"


def _instant(epoch_ms: int) -> str:
    return format_start(from_epoch_ms(epoch_ms))


def version_sk(annotation_id: str, version: int) -> str:
    return f"{VERSION_PREFIX}{annotation_id}#{version:0{VERSION_DIGITS}d}"


def versions_prefix(annotation_id: str) -> str:
    """Sort-key prefix of every version item of one annotation."""
    return f"{VERSION_PREFIX}{annotation_id}#"


def anchor_sk(start_ms: int, annotation_id: str) -> str:
    return f"{WINDOW_PREFIX}{_instant(start_ms)}{_ANCHOR_MARK}{annotation_id}"


def carry_sk(midnight_ms: int, start_ms: int, annotation_id: str) -> str:
    return (
        f"{WINDOW_PREFIX}{_instant(midnight_ms)}{_CARRY_MARK}"
        f"{_instant(start_ms)}{_ANCHOR_MARK}{annotation_id}"
    )


def carry_midnights(start_ms: int, end_ms: int) -> list[int]:
    """The UTC midnights ``m`` with ``start < m`` and ``m + 1 day < end``: at most 30."""
    first = (start_ms // DAY_MS + 1) * DAY_MS
    return list(range(first, end_ms - DAY_MS, DAY_MS))


def window_sks(annotation: Annotation) -> list[str]:
    """Sort keys of the window copies of a current version: its anchor and its carries."""
    target = annotation.target
    return [
        anchor_sk(target.start_ms, annotation.annotation_id),
        *(
            carry_sk(m, target.start_ms, annotation.annotation_id)
            for m in carry_midnights(target.start_ms, target.end_ms)
        ),
    ]


def is_anchor(sk: str) -> bool:
    """Whether a window item is an anchor (not a carry)."""
    return sk[len(WINDOW_PREFIX) + _STAMP_LENGTH : len(WINDOW_PREFIX) + _STAMP_LENGTH + 1] == (
        _ANCHOR_MARK
    )


@dataclass(frozen=True, slots=True)
class WindowRead:
    """The one key range a window ``[start_ms, end_ms)`` reads, and which items count."""

    low: str
    high: str
    #: The midnight L: carries there are read, carries elsewhere are redundant.
    carry_midnight: str

    @classmethod
    def of(cls, start_ms: int, end_ms: int) -> WindowRead:
        midnight = (start_ms // DAY_MS - 1) * DAY_MS
        return cls(
            low=f"{WINDOW_PREFIX}{_instant(max(0, midnight))}",
            high=f"{WINDOW_PREFIX}{_instant(end_ms - 1)}{_ANCHOR_MARK}{_AFTER_ID}",
            carry_midnight=_instant(max(0, midnight)),
        )

    def counts(self, sk: str) -> bool:
        """Whether an item read is to be listed: an anchor, or a carry at the midnight L."""
        body = sk[len(WINDOW_PREFIX) :]
        stamp, mark = body[:_STAMP_LENGTH], body[_STAMP_LENGTH : _STAMP_LENGTH + 1]
        return mark == _ANCHOR_MARK or (mark == _CARRY_MARK and stamp == self.carry_midnight)

    def contains(self, sk: str) -> bool:
        return self.low <= sk <= self.high
