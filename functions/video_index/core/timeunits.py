"""Time units and conversions shared by every module: epoch milliseconds, UTC, ISO 8601."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

SECOND_MS: Final = 1000
QUARTER_MS: Final = 15 * 60 * SECOND_MS
HOUR_MS: Final = 4 * QUARTER_MS
DAY_MS: Final = 24 * HOUR_MS
#: Quarter hours per hour: the resolution of the read model's hour buckets.
QUARTERS: Final = HOUR_MS // QUARTER_MS

EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def to_epoch_ms(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(milliseconds=1)


def from_epoch_ms(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


def iso_ms(epoch_ms: int) -> str:
    """UTC ISO 8601 with milliseconds and ``Z`` (the API's time format)."""
    moment = from_epoch_ms(epoch_ms)
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}.{epoch_ms % SECOND_MS:03d}Z"


def iso_of(moment: datetime) -> str:
    """The same format for an aware datetime (millisecond precision)."""
    return iso_ms(to_epoch_ms(moment.astimezone(UTC)))
