"""An audit log in memory (docs/audit.md): for tests of apps that are not the product's
(a record still has to go somewhere, or the request is refused 503) and for the bench's
baseline. It keeps the same rule as the real one: a record id is written once."""

from __future__ import annotations

from collections.abc import Callable

from video_index.core.audit import (
    AuditLog,
    AuditPage,
    AuditQuery,
    AuditRecord,
    AuditWriteFailed,
)


class MemoryAuditLog(AuditLog):
    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.records: dict[str, AuditRecord] = {}
        self._clock = clock
        self._ticks = 0

    def now_ms(self) -> int:
        if self._clock is not None:
            return int(self._clock() * 1000)
        self._ticks += 1
        return self._ticks

    def write(self, record: AuditRecord) -> None:
        if record.record_id in self.records:
            raise AuditWriteFailed(f"record {record.record_id} exists")
        self.records[record.record_id] = record

    def query(self, query: AuditQuery) -> AuditPage:
        found = [
            record
            for record_id, record in sorted(self.records.items())
            if query.from_ms <= record.time_ms < query.to_ms and query.matches(record)
        ]
        return AuditPage(found[: query.limit], None)
