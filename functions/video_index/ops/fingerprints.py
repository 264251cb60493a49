"""Order-independent fingerprints of partitions (device × kind × UTC day).

A fingerprint is the sum, over a partition's hour buckets, of every bucket
figure (``n``, ``b``, ``d``, ``c``, ``h``): computed from S3 (a listing or an
Inventory report) through the same :func:`projection.contribution` that ingest
applies, and from the read model by adding up its bucket items. Two sides agree
on a partition exactly when its fingerprints are equal; memory grows with the
number of partitions, not of objects.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Final

from video_index.core.keys import KEY_PREFIX, SegmentKey
from video_index.core.layout import BUCKET_FIGURES, bucket_hour_ms
from video_index.core.projection import contribution
from video_index.core.timeunits import QUARTERS

HASH_MOD: Final = 2**64
FIGURES: Final = tuple(f"{name}{q}" for name in BUCKET_FIGURES for q in range(QUARTERS))


@dataclass(frozen=True, order=True, slots=True)
class Partition:
    device: str
    kind: str
    day: date

    @property
    def prefix(self) -> str:
        """The S3 prefix holding exactly this partition's keys."""
        return f"{KEY_PREFIX}{self.kind}/{self.device}/{self.day:%Y/%m/%d}/"

    @property
    def start_ms(self) -> int:
        return (
            int(datetime(self.day.year, self.day.month, self.day.day, tzinfo=UTC).timestamp())
            * 1000
        )

    def as_dict(self) -> dict[str, str]:
        return {"device": self.device, "kind": self.kind, "day": self.day.isoformat()}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Partition:
        return cls(str(raw["device"]), str(raw["kind"]), date.fromisoformat(str(raw["day"])))


@dataclass(slots=True)
class Fingerprint:
    figures: dict[str, int] = field(default_factory=dict)

    def add(self, figures: dict[str, int]) -> None:
        for name, value in figures.items():
            total = self.figures.get(name, 0) + value
            if name == "h":
                total %= HASH_MOD
            if total:
                self.figures[name] = total
            else:
                self.figures.pop(name, None)

    @property
    def count(self) -> int:
        return sum(v for k, v in self.figures.items() if k.startswith("n"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fingerprint) and self.figures == other.figures


def partition_of_bucket(device: str, sk: str) -> Partition:
    kind, hour_ms = bucket_hour_ms(sk)
    return Partition(device, kind, datetime.fromtimestamp(hour_ms / 1000, tz=UTC).date())


def add_object(fingerprints: dict[Partition, Fingerprint], segment: SegmentKey, size: int) -> None:
    """Add one present object's contribution (it may reach into the next day's buckets)."""
    for sk, figures in contribution(segment, size).items():
        partition = partition_of_bucket(segment.device, sk)
        fingerprints.setdefault(partition, Fingerprint()).add(_per_figure_totals(figures))


def _per_figure_totals(figures: dict[str, int]) -> dict[str, int]:
    """Quarter figures summed per figure name: n0..n3 -> n, etc.; h stays h."""
    totals: dict[str, int] = defaultdict(int)
    for name, value in figures.items():
        totals[name[0]] += value
    return dict(totals)
