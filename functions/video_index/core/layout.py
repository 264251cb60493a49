"""Read-model layout in DynamoDB: which items exist, their keys, and why.

The full description (every attribute, the request bound each query meets, the
cost of a write) is in ``docs/read-model.md``; this module is the code of it.

All items live in one table with string keys ``pk``/``sk``. Every partition key
except the control item starts with the **generation** (``g<N>#``), so a rebuild
can project S3 into generation N+1 beside the serving generation N and switch
with one write to the control item.

* control — ``control`` / ``generation``: ``current`` and, during a rebuild,
  ``building`` generation numbers.
* segment — ``g<N>#seg#<device>#<kind>`` / ``<start>_<duration>_<id>.<ext>``:
  one S3 key's last applied state (``present``, ``size``, ``etag``, ``start``,
  ``end``, ``id``, padded sequencer ``seq``, write counter ``ver``). A deleted
  key stays as a tombstone (``present`` false, TTL ``expires_at``) so an older
  event delivered late cannot bring it back. The sort key starts with the
  fixed-width UTC start, so sort order is time order.
* bucket — ``g<N>#bkt#<device>`` / ``<kind>#<YYYYMMDDTHH>``: exact figures of
  one UTC hour per quarter ``q`` (0..3): ``n<q>`` segments, ``b<q>`` bytes,
  ``d<q>`` milliseconds of the segments *starting* in q; ``c<q>`` video segments
  that started earlier and still run at q's first instant; ``h`` the sum of the
  64-bit key hashes (read it mod 2^64). All-zero figures equal no bucket.
  Video buckets also hold ``r``, the video coverage of the hour (segments clipped
  to the hour, merged with the gap tolerance, flattened ``[s1, e1, s2, e2, …]``).
* device — ``g<N>#devices`` / ``<device>``: the devices list, with each kind's
  totals ``n:<kind>``, ``b:<kind>``, ``d:<kind>`` and first/last start
  ``f:<kind>``/``l:<kind>``.
* Buckets and device items are written by the stream consumer only (and by
  reconcile's mend): each carries the stream sequence number of the last change
  applied (``w`` on a bucket, ``w:<kind>`` on a device item: one lane per segment
  partition) and a version ``v`` every writer compares and sets
  (docs/read-model.md#aggregation-by-stream). ``m:<kind>`` on a device item is the
  last barrier token the consumer passed for that kind.
* control — ``control`` / ``aggregate``: when the consumer last applied a batch
  (``t``), its newest record's creation time (``a``) and the difference (``lag_ms``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Final

from video_index.core.keys import KEY_PREFIX, SegmentKey, parse_start
from video_index.core.timeunits import from_epoch_ms, to_epoch_ms

CONTROL_PK: Final = "control"
GENERATION_SK: Final = "generation"
#: Control item of the devices an operator retired (never silent): string set ``devices``.
#: Outside every generation, so a rebuild keeps it; one item holds ~10,000 names.
RETIRED_SK: Final = "retired"
#: Control item holding the summary of the last reconcile run.
RECONCILE_SK: Final = "reconcile"
DEFAULT_GENERATION: Final = 1
BUCKET_FIGURES: Final = ("n", "b", "d", "c")
#: Control item of the stream consumer: when it last applied a batch, and its lag.
AGGREGATE_SK: Final = "aggregate"
#: Video coverage of a bucket's hour (flattened runs).
RUNS: Final = "r"
#: Version of an aggregated item (bucket or device): every writer compares and sets it.
VERSION: Final = "v"
#: A bucket's high-water mark: the sequence number of the last change applied to it.
HIGH_WATER: Final = "w"
#: A segment item attribute a barrier sets; the consumer copies it to ``m:<kind>``.
MARK: Final = "mark"
#: A segment item's receipt: when S3 received the present object (epoch ms).
RECEIVED: Final = "rcv"
#: A bucket's arrival history: the receipts of the kind's files that S3 received in the
#: bucket's hour, as runs joined when less than :data:`ARRIVAL_JOIN_MS` apart (flattened).
#: History, not state: it only grows, so a file removed later still counts as arrived.
ARRIVALS: Final = "a"
ARRIVAL_JOIN_MS: Final = 60_000
#: A video bucket's overlaps: the moments of the hour two files or more cover (a camera
#: clock that jumped back), runs longer than the gap tolerance, flattened.
OVERLAPS: Final = "o"


def device_total(figure: str, kind: str) -> str:
    """A device item's attribute for one kind: ``n`` segments, ``b`` bytes, ``d``
    duration ms, ``f`` first start, ``l`` last start (epoch ms), ``w`` high-water
    mark, ``m`` barrier token passed, ``k`` clock slots (:mod:`video_index.core.clock`)."""
    return f"{figure}:{kind}"


def generation_prefix(generation: int) -> str:
    """What every partition key of a generation starts with (a rebuild scans or drops it)."""
    return f"g{generation}#"


def segment_pk(generation: int, device: str, kind: str) -> str:
    return f"{generation_prefix(generation)}seg#{device}#{kind}"


def segment_sk(segment: SegmentKey) -> str:
    return segment.filename


def bucket_pk(generation: int, device: str) -> str:
    return f"{generation_prefix(generation)}bkt#{device}"


def bucket_sk(kind: str, hour_start_ms: int) -> str:
    hour = from_epoch_ms(hour_start_ms)
    return f"{kind}#{hour:%Y%m%dT%H}"


@lru_cache(maxsize=65536)
def bucket_hour_ms(sk: str) -> tuple[str, int]:
    """(kind, hour start in epoch ms) of a bucket sort key; cached, reconcile asks per object."""
    kind, hour = sk.split("#", 1)
    moment = datetime.strptime(hour, "%Y%m%dT%H").replace(tzinfo=UTC)
    return kind, to_epoch_ms(moment)


def devices_pk(generation: int) -> str:
    return f"{generation_prefix(generation)}devices"


def key_of_segment_item(pk: str, sk: str) -> str:
    """The S3 key a segment item stands for (it is not stored: pk and sk carry it)."""
    _, _, device, kind = pk.split("#", 3)
    start = parse_start(sk.split("_", 1)[0])
    return f"{KEY_PREFIX}{kind}/{device}/{start:%Y/%m/%d/%H}/{sk}"
