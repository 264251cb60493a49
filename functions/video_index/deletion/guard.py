"""Who may ask for a deletion, and how often (docs/access.md, docs/deletion.md).

The route's rule already requires ``operator``; on top of it:

* ``erase`` (every version gone, replica included) needs ``admin``;
* each caller may make :attr:`~video_index.core.access.AccessPolicy.deletions_per_day`
  requests per UTC day (429 beyond), counted in the deletion requests table so every
  Lambda container sees the same count;
* a request is withdrawn by the caller who made it, or by an admin.

The principal is always the verified caller's (:mod:`video_index.api.caller`), never
a header.
"""

from __future__ import annotations

from datetime import UTC, datetime

from video_index.core.access import AccessDenied, Caller, Forbidden, Role
from video_index.deletion.jobs import DeletionJobs
from video_index.deletion.model import DeletionRequest


class QuotaSpent(AccessDenied):
    """The caller's deletion requests of the day are spent."""

    status = 429


def check_erase(caller: Caller, erase: bool) -> None:
    if erase and not caller.has(Role.ADMIN):
        raise Forbidden("erase needs the admin role (without it, versions stay)", "erase")


def spend_quota(jobs: DeletionJobs, caller: Caller, per_day: int) -> None:
    """Count one request of the caller today, or refuse it (429)."""
    now = datetime.fromtimestamp(jobs.clock(), tz=UTC)
    day_start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if not jobs.table.spend_quota(
        caller.principal, day_start.date().isoformat(), int(day_start.timestamp()), per_day
    ):
        raise QuotaSpent(
            f"{per_day} deletion requests a day are allowed; try again tomorrow (UTC)", None
        )


def check_withdraw(caller: Caller, request: DeletionRequest) -> None:
    if request.created_by != caller.principal and not caller.has(Role.ADMIN):
        raise Forbidden("only the caller who made a request, or an admin, withdraws it")
