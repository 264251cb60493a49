"""The record a job leaves when it starts changing what is kept (docs/audit.md).

The retention run (and, where they start, bulk restore and deletion) has no request to
record, so it writes its own record before it changes anything: if the record cannot be
stored, the job does not start (:class:`~video_index.core.audit.AuditWriteFailed`).
"""

from __future__ import annotations

import re

from video_index.core.audit import OK, AuditLog, AuditRecord, iso_ms, record_id


def job_started(
    log: AuditLog,
    action: str,
    principal: str,
    run_id: str,
    *,
    device: str | None = None,
    window: tuple[str | None, str | None] = (None, None),
) -> AuditRecord:
    """Write (and answer) the record of a job starting; raises when it cannot be stored."""
    now_ms = log.now_ms()
    run = re.sub(r"[^A-Za-z0-9=_.:-]", "_", run_id)[:64] or "-"
    record = AuditRecord(
        record_id=record_id(now_ms, run),
        time=iso_ms(now_ms),
        principal=principal,
        role=None,
        action=action,
        route=None,
        device=device,
        window_from=window[0],
        window_to=window[1],
        outcome=OK,
        status=0,
        request_id=run,
        source=None,
    )
    log.write(record)
    return record
