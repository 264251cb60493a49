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
* device — ``g<N>#devices`` / ``<device>``: the devices list.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Final

from video_index.keys import KEY_PREFIX, Kind, SegmentKey, parse_start

CONTROL_PK: Final = "control"
GENERATION_SK: Final = "generation"
#: Control item holding the summary of the last reconcile run.
RECONCILE_SK: Final = "reconcile"
DEFAULT_GENERATION: Final = 1
QUARTERS: Final = 4
QUARTER_MS: Final = 15 * 60 * 1000
HOUR_MS: Final = 4 * QUARTER_MS
BUCKET_FIGURES: Final = ("n", "b", "d", "c")


def segment_pk(generation: int, device: str, kind: str) -> str:
    return f"g{generation}#seg#{device}#{kind}"


def segment_sk(segment: SegmentKey) -> str:
    return segment.filename


def bucket_pk(generation: int, device: str) -> str:
    return f"g{generation}#bkt#{device}"


def bucket_sk(kind: str, hour_start_ms: int) -> str:
    hour = datetime.fromtimestamp(hour_start_ms / 1000, tz=UTC)
    return f"{kind}#{hour:%Y%m%dT%H}"


@lru_cache(maxsize=65536)
def bucket_hour_ms(sk: str) -> tuple[str, int]:
    """(kind, hour start in epoch ms) of a bucket sort key; cached, reconcile asks per object."""
    kind, hour = sk.split("#", 1)
    moment = datetime.strptime(hour, "%Y%m%dT%H").replace(tzinfo=UTC)
    return kind, int(moment.timestamp() * 1000)


def devices_pk(generation: int) -> str:
    return f"g{generation}#devices"


def key_of_segment_item(pk: str, sk: str) -> str:
    """The S3 key a segment item stands for (it is not stored: pk and sk carry it)."""
    _, _, device, kind = pk.split("#", 3)
    start = parse_start(sk.split("_", 1)[0])
    return f"{KEY_PREFIX}{kind}/{device}/{start:%Y/%m/%d/%H}/{sk}"


def kind_of(kind: str) -> Kind:
    return kind  # type: ignore[return-value]
