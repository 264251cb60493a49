"""The retention job: delete expired footage that no hold covers (docs/holds.md).

For each kind and device it opens only the year, month and day folders that
started before the kind's cutoff (``LIST`` with a delimiter), lists the keys of
those days (one ``LIST`` per 1,000 keys) and deletes what :func:`.retention.plan`
names, 1,000 keys per ``DeleteObjects``. The device's holds are read once per
device and read again just before each delete batch, so a hold written while the
job runs protects its footage from that batch on. Every step is safe to repeat:
a crash anywhere leaves only keys the next run lists again, and deletes nothing
a hold covers at the moment of the delete.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from video_index.core.keys import KINDS, device_prefix
from video_index.holds.retention import (
    DELETE_BATCH,
    Window,
    cutoff_ms,
    expired_days,
    may_hold_expired,
    plan,
)


class Listed(Protocol):
    @property
    def key(self) -> str: ...


class Bucket(Protocol):
    """What the job needs of the segment bucket (:class:`~video_index.aws.objects.ObjectStore`)."""

    def folders(self, prefix: str) -> Iterator[str]: ...

    def list(self, prefix: str, start_after: str | None = None) -> Iterator[Listed]: ...

    def delete(self, keys: Sequence[str]) -> None: ...


class HeldWindows(Protocol):
    def held(self, device: str, start_ms: int, end_ms: int) -> list[Window]: ...


@dataclass
class RetentionReport:
    days_listed: int = 0
    keys_listed: int = 0
    deleted: int = 0
    #: Expired keys kept because a hold covers them.
    kept_held: int = 0
    delete_requests: int = 0


class RetentionJob:
    def __init__(
        self,
        bucket: Bucket,
        holds: HeldWindows,
        retention_days: Mapping[str, int],
        clock: Callable[[], float],
    ) -> None:
        self.bucket = bucket
        self.holds = holds
        self.retention_days = retention_days
        self._clock = clock

    def run(self) -> RetentionReport:
        """One pass over every kind and device (a day's run)."""
        report = RetentionReport()
        now_ms = int(self._clock() * 1000)
        for kind in KINDS:
            if kind not in self.retention_days:
                continue
            for device in self.bucket.folders(f"v1/{kind}/"):
                self.device(kind, device, now_ms, report)
        return report

    def device(self, kind: str, device: str, now_ms: int, report: RetentionReport) -> None:
        """Delete the device's expired, unheld keys of ``kind``."""
        retention = self.retention_days[kind]
        cutoff = cutoff_ms(now_ms, retention)
        days = list(self._expired_days(device_prefix(kind, device), now_ms, retention))
        if not days:
            return
        holds = {device: self.holds.held(device, 0, cutoff)}
        for day in days:
            keys = [o.key for o in self.bucket.list(f"{device_prefix(kind, device)}{day}/")]
            report.days_listed += 1
            report.keys_listed += len(keys)
            doomed = plan(keys, holds, now_ms, self.retention_days)
            for start in range(0, len(doomed), DELETE_BATCH):
                # Read again right before deleting: a hold written meanwhile counts.
                holds = {device: self.holds.held(device, 0, cutoff)}
                batch = plan(
                    doomed[start : start + DELETE_BATCH], holds, now_ms, self.retention_days
                )
                if batch:
                    self.bucket.delete(batch)
                    report.delete_requests += 1
                    report.deleted += len(batch)
            report.kept_held += len(plan(keys, {}, now_ms, self.retention_days)) - len(doomed)

    def _expired_days(self, prefix: str, now_ms: int, retention: int) -> Iterator[str]:
        for year in self.bucket.folders(prefix):
            if not _opens(_start(year, "01"), now_ms, retention):
                continue
            for month in self.bucket.folders(f"{prefix}{year}/"):
                if not _opens(_start(year, month), now_ms, retention):
                    continue
                days = [
                    f"{year}/{month}/{d}" for d in self.bucket.folders(f"{prefix}{year}/{month}/")
                ]
                yield from expired_days(days, now_ms, retention)


def _start(year: str, month: str) -> datetime | None:
    """The first instant of a year/month folder, None for a folder of no date."""
    try:
        return datetime(int(year), int(month), 1, tzinfo=UTC)
    except ValueError:
        return None


def _opens(start: datetime | None, now_ms: int, retention: int) -> bool:
    return start is not None and may_hold_expired(start, now_ms, retention)
