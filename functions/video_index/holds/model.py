"""A hold: a window of one device's footage that retention must not delete (docs/holds.md).

A hold is primary data, written by a person for a reason, so it is never changed
in place: releasing it adds a version to its ``history`` (who, when, what) and
the hold stays readable for good. ``from``/``to`` are a half-open window
``[from, to)`` of at most :data:`MAX_HOLD_MS`; a segment counts as held when its
own ``[start, end)`` overlaps the window (a segment straddling the edge is kept
whole: footage is never cut).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from video_index.core.errors import BadInput
from video_index.core.timeunits import iso_ms

DAY_MS: Final = 86_400_000
#: Longest hold (docs/holds.md: one hold covers at most 31 days; more days, more holds).
MAX_HOLD_MS: Final = 31 * DAY_MS
MAX_REASON_LENGTH: Final = 1000
HOLD_ID_PATTERN: Final = r"^[a-z0-9]{1,64}$"
_HOLD_ID_RE: Final = re.compile(HOLD_ID_PATTERN)

Action = Literal["create", "release"]


def new_hold_id() -> str:
    """A fresh hold id: 32 hex digits, random (never reused, never guessed)."""
    return uuid.uuid4().hex


def check_hold_id(value: str, parameter: str = "hold_id") -> str:
    if not _HOLD_ID_RE.fullmatch(value):
        raise BadInput(parameter, "must be 1-64 characters of [a-z0-9]")
    return value


def check_window(from_ms: int, to_ms: int) -> None:
    """A hold's window: non-empty and at most 31 days (``to`` names what is wrong)."""
    if to_ms <= from_ms:
        raise BadInput("to", "must be after from")
    if to_ms - from_ms > MAX_HOLD_MS:
        raise BadInput("to", "a hold covers at most 31 days: split a longer window")


def check_reason(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise BadInput("reason", "is required: say why the footage must be kept")
    if len(reason) > MAX_REASON_LENGTH:
        raise BadInput("reason", f"is longer than {MAX_REASON_LENGTH} characters")
    return reason


class HoldIn(BaseModel):
    """The body of ``POST /devices/{device}/holds``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: str = Field(alias="from", max_length=64, description="ISO 8601 with offset")
    to: str = Field(max_length=64, description="ISO 8601 with offset (at most 31 days later)")
    reason: str = Field(max_length=MAX_REASON_LENGTH, description="Why (case, incident)")


@dataclass(frozen=True, slots=True)
class Change:
    """One version of a hold: what happened, who did it, when (epoch ms)."""

    version: int
    action: Action
    by: str
    at_ms: int

    def item(self) -> dict[str, Any]:
        return {"version": self.version, "action": self.action, "by": self.by, "at": self.at_ms}

    @classmethod
    def of(cls, item: dict[str, Any]) -> Change:
        return cls(int(item["version"]), item["action"], str(item["by"]), int(item["at"]))


@dataclass(frozen=True, slots=True)
class Hold:
    hold_id: str
    device: str
    from_ms: int
    to_ms: int
    reason: str
    created_by: str
    created_at_ms: int
    released_by: str | None = None
    released_at_ms: int | None = None
    history: tuple[Change, ...] = field(default_factory=tuple)

    @property
    def active(self) -> bool:
        return self.released_at_ms is None

    @property
    def version(self) -> int:
        return len(self.history)

    def overlaps(self, start_ms: int, end_ms: int) -> bool:
        """Whether ``[start, end)`` shares an instant with the hold's window (a zero-length
        span counts at its instant)."""
        return start_ms < self.to_ms and max(end_ms, start_ms + 1) > self.from_ms

    def item(self) -> dict[str, Any]:
        """The attributes stored for this hold (both of its items carry them all)."""
        item: dict[str, Any] = {
            "hold_id": self.hold_id,
            "device": self.device,
            "from_ms": self.from_ms,
            "to_ms": self.to_ms,
            "reason": self.reason,
            "created_by": self.created_by,
            "created_at": self.created_at_ms,
            "version": self.version,
            "history": [change.item() for change in self.history],
        }
        if self.released_at_ms is not None:
            item["released_by"] = self.released_by
            item["released_at"] = self.released_at_ms
        return item

    @classmethod
    def of(cls, item: dict[str, Any]) -> Hold:
        released_at = item.get("released_at")
        return cls(
            hold_id=str(item["hold_id"]),
            device=str(item["device"]),
            from_ms=int(item["from_ms"]),
            to_ms=int(item["to_ms"]),
            reason=str(item["reason"]),
            created_by=str(item["created_by"]),
            created_at_ms=int(item["created_at"]),
            released_by=item.get("released_by"),
            released_at_ms=int(released_at) if released_at is not None else None,
            history=tuple(Change.of(c) for c in item.get("history", [])),
        )

    def public(self) -> dict[str, Any]:
        """The hold as the API and the export show it (times ISO 8601 UTC)."""
        return {
            "hold_id": self.hold_id,
            "device": self.device,
            "from": iso_ms(self.from_ms),
            "to": iso_ms(self.to_ms),
            "reason": self.reason,
            "active": self.active,
            "created_by": self.created_by,
            "created_at": iso_ms(self.created_at_ms),
            "released_by": self.released_by,
            "released_at": iso_ms(self.released_at_ms) if self.released_at_ms else None,
            "version": self.version,
            "history": [
                {"version": c.version, "action": c.action, "by": c.by, "at": iso_ms(c.at_ms)}
                for c in self.history
            ],
        }
