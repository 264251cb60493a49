"""Reading one DynamoDB Streams record (as Lambda delivers it) into a segment change.

Only segment items matter: their old and new images are the transition the
aggregates must follow. Everything else in the table (buckets, device items,
control items) is written by the aggregation or by operations and is skipped,
so the consumer never feeds on its own writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from video_index.aws.dynamodb import plain
from video_index.core.keys import SegmentKey, parse_key
from video_index.core.layout import MARK, RECEIVED, key_of_segment_item
from video_index.core.projection import ABSENT, ObjectState

#: Stream sequence numbers are decimal strings of up to 40 digits; padded, string order
#: is numeric order (what the high-water marks compare).
SEQUENCE_DIGITS = 40


@dataclass(frozen=True, slots=True)
class Change:
    """One segment item's transition, in stream order."""

    seq: str
    created_ms: int
    generation: int
    segment: SegmentKey
    old: ObjectState
    new: ObjectState
    #: A barrier token the write carried (docs/read-model.md#barriers), if it set one.
    mark: str | None = None
    #: When S3 received the object the new image holds (``rcv``), if it is present and known.
    received_ms: int | None = None


def padded(sequence_number: str) -> str:
    return sequence_number.rjust(SEQUENCE_DIGITS, "0")


def read_record(record: dict[str, Any]) -> Change | None:
    """The change one record describes, or None when the record is not a segment item's.

    Raises ``ValueError`` (or :class:`~video_index.core.keys.InvalidKeyError`) for a
    segment record that cannot be read: the caller skips it loudly.
    """
    stream = record["dynamodb"]
    keys = plain(stream["Keys"])
    pk, sk = str(keys["pk"]), str(keys["sk"])
    head, _, rest = pk.partition("#")
    if not (head.startswith("g") and head[1:].isdigit() and rest.startswith("seg#")):
        return None
    old = plain(stream.get("OldImage") or {})
    new = plain(stream.get("NewImage") or {}) if record["eventName"] != "REMOVE" else {}
    mark = new.get(MARK)
    return Change(
        seq=padded(stream["SequenceNumber"]),
        created_ms=int(float(stream.get("ApproximateCreationDateTime", 0)) * 1000),
        generation=int(head[1:]),
        segment=parse_key(key_of_segment_item(pk, sk)),
        old=_state(old),
        new=_state(new),
        mark=str(mark) if mark is not None and mark != old.get(MARK) else None,
        received_ms=int(new[RECEIVED]) if new.get("present") and RECEIVED in new else None,
    )


def _state(image: dict[str, Any]) -> ObjectState:
    if not image.get("present"):
        return ABSENT
    return ObjectState(True, int(image.get("size", 0)), str(image.get("etag", "")))
