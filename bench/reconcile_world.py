"""The reconcile benchmark's world: N video segments over 200 devices × 30 UTC days.

Every partition (device × ``video`` × day, 6,000 of them) holds N/6,000 segments of
10 s, one per equal slot of the day at a random offset inside it, so every segment
starts and ends within its day (no segment runs past midnight; quarter-hour
boundaries are crossed as usual). Everything is a pure function of (N, partition):
the world is generated partition by partition and never held as a whole.

Three views of it, all streamed:

* the **truth** (what S3 holds and the inventory reports): :meth:`World.inventory_rows`;
* the **read model** as it stands before reconcile (:meth:`World.read_model_items`,
  DynamoDB wire items): the projection of the truth, except in the drifted
  partitions (0.1 %), which are wrong in one of three ways (:class:`Drift`);
* the **repaired** state of a drifted partition (:meth:`World.truth`), whose entries
  give the repairs reconcile must make (:meth:`World.expected_repairs`).

Bucket figures are computed here from the layout documented in
``docs/read-model.md`` (not with the product's projection); :meth:`World.self_check`
compares them with ``video_index.core.projection.contribution`` on a few partitions.
Object bodies are small (200–1,199 bytes, derived from the key) so that the
partitions reconcile has to LIST and HEAD can be real objects in the bucket; sizes
do not change any figure the benchmark reports.
"""

from __future__ import annotations

import enum
import hashlib
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

import xxhash

from video_index.ops.fingerprints import Partition

DEVICES: Final = 200
DAYS: Final = 30
FIRST_DAY: Final = date(2026, 11, 1)
KIND: Final = "video"
DURATION_MS: Final = 10_000
GENERATION: Final = 1
#: 0.1 % of the 6,000 partitions.
DRIFTED: Final = 6
#: Partition numbers are ``device * DAYS + day``; the drifted ones are spread out.
DRIFT_STRIDE: Final = 1_000
DRIFT_FIRST: Final = 517
HOUR_MS: Final = 3_600_000
QUARTER_MS: Final = 900_000
DAY_MS: Final = 86_400_000
PARTITIONS: Final = DEVICES * DAYS
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ZERO_SEQ: Final = "0" * 32

WireItem = dict[str, dict[str, Any]]


class Drift(enum.Enum):
    #: Events lost: a few keys are missing from the segment items and from the buckets.
    LOST = "lost events (3 keys missing, buckets agree with the items)"
    #: A delete event lost: an entry (and its bucket figures) for an object that is gone.
    GHOST = "ghost entry (1 key no longer in S3)"
    #: Items deleted behind ingest's back and one bucket figure bent.
    CORRUPT = "2 segment items deleted + 1 bucket figure bent"


@dataclass(frozen=True, slots=True)
class Segment:
    device: str
    start_ms: int
    id: str
    size: int
    day_text: str  # YYYYMMDD of the start (the whole segment lies in that UTC day)
    filename: str
    key: str
    etag: str

    @classmethod
    def make(cls, device: str, start_ms: int, segment_id: str, size: int, day: date) -> Segment:
        return cls.of_day(device, start_ms, segment_id, size, f"{day:%Y%m%d}", f"{day:%Y/%m/%d}")

    @classmethod
    def of_day(
        cls, device: str, start_ms: int, segment_id: str, size: int, day_text: str, folders: str
    ) -> Segment:
        hour, rest = divmod(start_ms % DAY_MS, HOUR_MS)
        minute, rest = divmod(rest, 60_000)
        second, milli = divmod(rest, 1000)
        filename = (
            f"{day_text}T{hour:02d}{minute:02d}{second:02d}.{milli:03d}Z"
            f"_{DURATION_MS}_{segment_id}.mp4"
        )
        key = f"v1/{KIND}/{device}/{folders}/{hour:02d}/{filename}"
        return cls(device, start_ms, segment_id, size, day_text, filename, key, _etag(key, size))

    @property
    def body(self) -> bytes:
        return _body(self.key, self.size)

    @property
    def last_modified(self) -> datetime:
        return _EPOCH + timedelta(milliseconds=self.start_ms + DURATION_MS + 2_000)


def _body(key: str, size: int) -> bytes:
    seed = key.encode()
    return (seed * (size // len(seed) + 1))[:size]


def _etag(key: str, size: int) -> str:
    return hashlib.md5(_body(key, size), usedforsecurity=False).hexdigest()


def device_name(device: int) -> str:
    return f"cam-{device:04d}"


def partition_of(number: int) -> Partition:
    device, day = divmod(number, DAYS)
    return Partition(device_name(device), KIND, FIRST_DAY + timedelta(days=day))


def hour_label(hour_ms: int) -> str:
    moment = _EPOCH + timedelta(milliseconds=hour_ms)
    return f"{moment:%Y%m%dT%H}"


def key_hash(key: str) -> int:
    """XXH64 of the key, as docs/read-model.md describes ``h`` (the reference binding)."""
    return int(xxhash.xxh64_intdigest(key.encode()))


def bucket_figures(segments: list[Segment]) -> dict[str, dict[str, int]]:
    """Bucket sort key -> non-zero figures, from docs/read-model.md (independently of the
    product): n/b/d per quarter of the start, c per quarter start strictly inside, h."""
    buckets: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for seg in segments:
        start, end = seg.start_ms, seg.start_ms + DURATION_MS
        quarter = (start % HOUR_MS) // QUARTER_MS
        home = buckets[f"{KIND}#{seg.day_text}T{(start % DAY_MS) // HOUR_MS:02d}"]
        home[f"n{quarter}"] += 1
        home[f"b{quarter}"] += seg.size
        home[f"d{quarter}"] += DURATION_MS
        home["h"] += key_hash(seg.key)
        boundary = start - start % QUARTER_MS + QUARTER_MS
        while boundary < end:
            sk = f"{KIND}#{seg.day_text}T{(boundary % DAY_MS) // HOUR_MS:02d}"
            buckets[sk][f"c{(boundary % HOUR_MS) // QUARTER_MS}"] += 1
            boundary += QUARTER_MS
    return {
        sk: {name: value for name, value in figures.items() if value}
        for sk, figures in buckets.items()
    }


def segment_item(seg: Segment) -> WireItem:
    """The segment item ingest leaves for an applied upload (docs/read-model.md)."""
    return {
        "pk": {"S": f"g{GENERATION}#seg#{seg.device}#{KIND}"},
        "sk": {"S": seg.filename},
        "present": {"BOOL": True},
        "size": {"N": str(seg.size)},
        "etag": {"S": seg.etag},
        "seq": {"S": _ZERO_SEQ},
        "ver": {"N": "1"},
        "start": {"N": str(seg.start_ms)},
        "end": {"N": str(seg.start_ms + DURATION_MS)},
        "id": {"S": seg.id},
        "observed": {"BOOL": False},
    }


def bucket_item(device: str, sk: str, figures: dict[str, int]) -> WireItem:
    """A bucket item as the stream consumer leaves it: its figures and a version ``v`` (the
    consumer and the mender write it back only at the version they read)."""
    item: WireItem = {"pk": {"S": f"g{GENERATION}#bkt#{device}"}, "sk": {"S": sk}}
    item.update({name: {"N": str(value)} for name, value in sorted(figures.items())})
    item["v"] = {"N": "1"}
    return item


def device_item(device: str) -> WireItem:
    return {"pk": {"S": f"g{GENERATION}#devices"}, "sk": {"S": device}, "v": {"N": "1"}}


@dataclass(frozen=True)
class PartitionState:
    """One partition of the read model: its segment items and its bucket figures."""

    segments: list[Segment]
    buckets: dict[str, dict[str, int]]

    def items(self, device: str) -> Iterator[WireItem]:
        for seg in self.segments:
            yield segment_item(seg)
        for sk, figures in sorted(self.buckets.items()):
            if figures:
                yield bucket_item(device, sk, figures)


@dataclass(frozen=True)
class World:
    rows: int

    # -- the partitions -------------------------------------------------------------

    def count(self, number: int) -> int:
        """Segments of partition ``number``: the N rows spread evenly, summing to N."""
        return (number + 1) * self.rows // PARTITIONS - number * self.rows // PARTITIONS

    def segments(self, number: int) -> list[Segment]:
        """The partition's objects in S3 (the truth), in time order."""
        count = self.count(number)
        if count == 0:
            return []
        device, day = divmod(number, DAYS)
        first = FIRST_DAY + timedelta(days=day)
        day_start = int(datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp())
        day_start *= 1000
        rng = random.Random(self.rows * 7_919 + number)
        slot = DAY_MS // count
        name, day_text, folders = device_name(device), f"{first:%Y%m%d}", f"{first:%Y/%m/%d}"
        return [
            Segment.of_day(
                name,
                day_start + i * slot + rng.randrange(slot - DURATION_MS),
                f"{device:04x}{day:02x}{i:010x}",
                200 + rng.randrange(1_000),
                day_text,
                folders,
            )
            for i in range(count)
        ]

    @property
    def drifted(self) -> dict[int, Drift]:
        kinds = (Drift.LOST, Drift.GHOST, Drift.CORRUPT)
        return {DRIFT_FIRST + j * DRIFT_STRIDE: kinds[j % 3] for j in range(DRIFTED)}

    @property
    def resident(self) -> list[int]:
        """Partitions whose objects are real in the bucket: the drifted ones (reconcile
        LISTs and HEADs them) and the day before each (a few others, never listed)."""
        return sorted({n for d in self.drifted for n in (d - 1, d)})

    def truth(self, number: int) -> PartitionState:
        segs = self.segments(number)
        return PartitionState(segs, bucket_figures(segs))

    def believed(self, number: int) -> PartitionState:
        """The read model of the partition before reconcile (drifted where it is)."""
        drift = self.drifted.get(number)
        segs = self.segments(number)
        if drift is None:
            return PartitionState(segs, bucket_figures(segs))
        middle = len(segs) // 2
        if drift is Drift.LOST:
            kept = segs[: max(0, middle - 1)] + segs[middle + 2 :]
            return PartitionState(kept, bucket_figures(kept))
        if drift is Drift.GHOST:
            ghost = self.ghost(number)
            with_ghost = [*segs, ghost]
            return PartitionState(with_ghost, bucket_figures(with_ghost))
        kept = segs[:middle] + segs[middle + 2 :]
        buckets = bucket_figures(segs)
        first_sk = min(buckets)
        bent = dict(buckets[first_sk])
        name = next(n for n in sorted(bent) if n.startswith("b"))
        bent[name] += 1_000
        return PartitionState(kept, {**buckets, first_sk: bent})

    def ghost(self, number: int) -> Segment:
        device, day = divmod(number, DAYS)
        first = FIRST_DAY + timedelta(days=day)
        noon = int(datetime(first.year, first.month, first.day, 12, tzinfo=UTC).timestamp())
        return Segment.make(
            device_name(device), noon * 1000 + 1_234, f"dead{number:012x}", 777, first
        )

    # -- streams --------------------------------------------------------------------

    def inventory_rows(self) -> Iterator[tuple[str, int, str, datetime]]:
        """(key, size, etag, last_modified) of every object, day-major (not key order)."""
        for day in range(DAYS):
            for device in range(DEVICES):
                for seg in self.segments(device * DAYS + day):
                    yield seg.key, seg.size, seg.etag, seg.last_modified

    def read_model_items(self, partitions: list[int] | None = None) -> Iterator[WireItem]:
        """Wire items of the read model before reconcile: every partition (or only
        ``partitions``), plus the devices list."""
        numbers = range(PARTITIONS) if partitions is None else partitions
        devices: set[str] = set()
        for number in numbers:
            device = partition_of(number).device
            if device not in devices:
                devices.add(device)
                yield device_item(device)
            yield from self.believed(number).items(device)

    def expected_repairs(self) -> dict[str, int]:
        """Entries reconcile must add and remove over the drifted partitions."""
        added = removed = 0
        for number in self.drifted:
            truth = {s.filename for s in self.segments(number)}
            held = {s.filename for s in self.believed(number).segments}
            added += len(truth - held)
            removed += len(held - truth)
        return {"added": added, "removed": removed}

    # -- self check -------------------------------------------------------------------

    def self_check(self) -> list[str]:
        """Keys and bucket figures of a few partitions against the product's own
        ``parse_key``/``contribution``; returns the disagreements."""
        from video_index.core.keys import parse_key
        from video_index.core.projection import contribution

        problems: list[str] = []
        for number in (0, *self.drifted, PARTITIONS - 1):
            segs = self.segments(number)
            summed: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
            for seg in segs:
                parsed = parse_key(seg.key)
                if parsed.key != seg.key or parsed.filename != seg.filename:
                    problems.append(f"key {seg.key} parses to {parsed.key}")
                for sk, figures in contribution(parsed, seg.size).items():
                    for name, value in figures.items():
                        summed[sk][name] += value
            product = {sk: {n: v for n, v in f.items() if v} for sk, f in summed.items()}
            if product != bucket_figures(segs):
                problems.append(f"bucket figures of partition {number} differ from the product's")
        return problems
