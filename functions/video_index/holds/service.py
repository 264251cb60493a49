"""Holds, independent of HTTP: create, read, list a window, release (docs/holds.md).

A hold counts from the moment its transaction commits: the retention job and the
deletion service read holds strongly consistently right before they delete, so
footage inside a hold written a millisecond earlier is kept. Release is allowed
to the hold's creator and to an admin; it is a new version, never a delete.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Final

from video_index.aws.clients import Clients
from video_index.aws.holds import HoldStore, VersionTaken
from video_index.aws.objects import ObjectStore
from video_index.core.contract import ENV_HOLDS_TABLE, ENV_RETENTION_DAYS
from video_index.core.errors import BadInput, ConfigurationError, Conflict, NotFound
from video_index.core.holding import HeldWindow
from video_index.core.jsonlines import OutcomeName
from video_index.core.settings import Settings
from video_index.holds.job import RetentionJob
from video_index.holds.model import (
    MAX_HOLD_MS,
    Change,
    Hold,
    check_reason,
    check_window,
    new_hold_id,
)

#: Past every hold's start (13 digits of epoch ms: the copies' sort keys).
_NO_END_MS: Final = 10**13


class Forbidden(Conflict):
    """The caller may not release this hold (neither its creator nor an admin): 409."""


class Holds:
    def __init__(
        self,
        store: HoldStore,
        *,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = new_hold_id,
    ) -> None:
        self.store = store
        self._clock = clock
        self._new_id = new_id

    def _now(self) -> int:
        return int(self._clock() * 1000)

    def create(self, device: str, from_ms: int, to_ms: int, reason: str, by: str) -> Hold:
        """A new hold at version 1: one transaction of two items."""
        check_window(from_ms, to_ms)
        now = self._now()
        hold = Hold(
            hold_id=self._new_id(),
            device=device,
            from_ms=from_ms,
            to_ms=to_ms,
            reason=check_reason(reason),
            created_by=by,
            created_at_ms=now,
            history=(Change(1, "create", by, now),),
        )
        try:
            self.store.write(hold.item(), 0)
        except VersionTaken:  # a fresh random id: never in practice
            raise Conflict("a hold with this id was just created; retry") from None
        return hold

    def get(self, hold_id: str) -> Hold:
        """One hold, released or not: one GetItem."""
        item = self.store.hold(hold_id)
        if item is None:
            raise NotFound("hold_id", f"no hold {hold_id}")
        return Hold.of(item)

    def window(
        self, device: str, start_ms: int, end_ms: int, *, active_only: bool = False
    ) -> list[Hold]:
        """The device's holds overlapping ``[start, end)`` in start order: one Query (a page
        per MB of holds starting in ``[start - 31 d, end)``).

        ``start == end`` is a point in time (a zero-length sensor or analysis file): the holds
        in force at that instant, a hold starting there included (:meth:`Hold.overlaps`)."""
        if end_ms < start_ms:
            raise BadInput("to", "must not be before from")
        found = (
            Hold.of(item)
            for item in self.store.starting(
                device, start_ms - MAX_HOLD_MS, max(end_ms, start_ms + 1)
            )
        )
        return [h for h in found if h.overlaps(start_ms, end_ms) and (h.active or not active_only)]

    def release(self, hold_id: str, principal: str, is_admin: bool) -> Hold:
        """Release a hold (its creator or an admin): one GetItem, one transaction. Releasing
        a released hold answers it unchanged."""
        current = self.get(hold_id)
        if not current.active:
            return current
        if principal != current.created_by and not is_admin:
            raise Forbidden(
                f"hold {hold_id} was created by {current.created_by}: only its creator "
                "or an admin may release it"
            )
        now = self._now()
        released = dataclasses.replace(
            current,
            released_by=principal,
            released_at_ms=now,
            history=(*current.history, Change(current.version + 1, "release", principal, now)),
        )
        try:
            self.store.write(released.item(), current.version)
        except VersionTaken:
            raise Conflict(f"hold {hold_id} changed meanwhile; read it again") from None
        return released

    # -- JSON Lines (holds/transfer.py) -----------------------------------------------------

    def export(self, device: str | None) -> Iterator[Hold]:
        """Every hold, released ones included: a device's (one Query per MB of its holds),
        or the whole table's (a Scan: for the command line, not the API)."""
        items = self.store.starting(device, 0, _NO_END_MS) if device else self.store.scan_holds()
        return (Hold.of(item) for item in items)

    def import_one(self, hold: Hold) -> tuple[OutcomeName, str]:
        """Write one hold as exported, idempotently: (outcome, detail). ``created`` or
        ``updated`` (the line's version is newer), ``unchanged`` (the same version saying
        the same), ``refused`` (the table holds a newer version, or the same one saying
        otherwise, or it changed while importing: nothing is overwritten)."""
        item = self.store.hold(hold.hold_id)
        current = Hold.of(item) if item is not None else None
        if current is not None and current.version >= hold.version:
            if current.version > hold.version:
                return "refused", f"the table holds a newer version ({current.version})"
            if current == hold:
                return "unchanged", f"version {current.version}"
            return "refused", f"version {current.version} in the table says otherwise"
        if current is not None and _created(current) != _created(hold):
            return "refused", "the table's hold was created otherwise (device, window or reason)"
        try:
            self.store.write(hold.item(), current.version if current else 0)
        except VersionTaken:
            return "refused", "changed in the table while importing"
        return ("updated" if current else "created"), f"version {hold.version}"


def _created(hold: Hold) -> tuple[object, ...]:
    """What a hold's versions never change: a later version only releases it."""
    return (
        hold.device,
        hold.from_ms,
        hold.to_ms,
        hold.reason,
        hold.created_by,
        hold.created_at_ms,
        hold.history[:1],
    )


class HoldsHeldWindows:
    """The active holds of a device as windows: what retention, deletion, restore and
    undelete ask before removing anything (``core.holding.HeldWindows``)."""

    def __init__(self, holds: Holds) -> None:
        self._holds = holds

    def windows(self, device: str, start_ms: int, end_ms: int) -> list[HeldWindow]:
        """The device's active holds overlapping ``[start, end)``."""
        return [
            HeldWindow(h.hold_id, h.device, h.from_ms, h.to_ms)
            for h in self.holding(device, start_ms, end_ms)
        ]

    def held(self, device: str, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
        """``(from_ms, to_ms)`` of the device's active holds overlapping ``[start, end)``."""
        return [(h.from_ms, h.to_ms) for h in self.holding(device, start_ms, end_ms)]

    def blocking(self, device: str, start_ms: int, end_ms: int) -> list[str]:
        """Ids of the active holds overlapping ``[start, end)`` (a 409 names them)."""
        return [h.hold_id for h in self.holding(device, start_ms, end_ms)]

    def holding(self, device: str, start_ms: int, end_ms: int) -> list[Hold]:
        """The active holds themselves (a 409 names them)."""
        return self._holds.window(device, start_ms, end_ms, active_only=True)


def build_holds(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> Holds | None:
    """The holds service over the holds table, if one is configured."""
    if not settings.holds_table:
        return None
    return Holds(HoldStore(clients.dynamodb, settings.holds_table), clock=clock)


def build_retention(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> RetentionJob:
    """The retention job over the settings' bucket, holds table and retention (the Lambda's
    from its own settings; ``video-index retention run``'s from a ready file). Without the
    holds it does not start, nor with a retention under a day (it would delete today's)."""
    holds = build_holds(settings, clients, clock)
    if holds is None:
        raise ConfigurationError(f"{ENV_HOLDS_TABLE} is not set: retention needs the holds")
    days = dict(settings.retention_days)
    if not all(d >= 1 for d in days.values()):
        raise ConfigurationError(f"{ENV_RETENTION_DAYS}: days must be whole numbers ≥ 1")
    return RetentionJob(
        ObjectStore(clients.s3, settings.bucket), HoldsHeldWindows(holds), days, clock
    )
