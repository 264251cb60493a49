"""Parameters of the HTTP routes: parsed and validated, every failure naming the parameter.

Shared by every router of the API, so a device, a window or a kind means the
same everywhere (docs/api.md).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final

from aws_lambda_powertools.event_handler.openapi.params import Query

from video_index.core.errors import BadInput
from video_index.core.keys import (
    InvalidKeyError,
    SegmentKey,
    parse_file_name,
    validate_device,
    validate_kind,
)
from video_index.core.timeunits import DAY_MS, HOUR_MS, to_epoch_ms

MAX_PARAMETER_LENGTH: Final = 4096
MAX_TIME_LENGTH: Final = 64
#: Longest window of the list routes (segments, ranges).
MAX_WINDOW_MS: Final = 31 * DAY_MS
#: The latest instant a time parameter may name (10000-01-01T00:00Z, exclusive).
_END_OF_TIME_MS: Final = 253_402_300_800_000

Text = Annotated[str | None, Query(max_length=MAX_PARAMETER_LENGTH)]
Limit = Annotated[int, Query(ge=1, le=1000)]
Time = Annotated[str | None, Query(max_length=MAX_TIME_LENGTH)]
FromTime = Annotated[str | None, Query(alias="from", max_length=MAX_TIME_LENGTH)]
KindText = Annotated[str | None, Query(max_length=16)]


def device(value: str) -> str:
    try:
        return validate_device(value)
    except InvalidKeyError as exc:
        raise BadInput("device", exc.reason) from None


def segment(
    device_name: str, kind: str, name: str, parameters: tuple[str, str] = ("kind", "name")
) -> SegmentKey:
    """The segment a device, a kind and a key's file name address (``GET
    .../segments/{kind}/{name}``, an annotation's segment target): the whole key, with no
    lookup; a bad kind or file name names its parameter."""
    try:
        validate_kind(kind)
    except InvalidKeyError as exc:
        raise BadInput(parameters[0], exc.reason) from None
    try:
        return parse_file_name(kind, device_name, name)
    except InvalidKeyError as exc:
        raise BadInput(parameters[1], exc.reason) from None


def instant(value: str | None, parameter: str) -> int:
    """Epoch ms of an ISO 8601 time with an offset (a space may stand for ``+``)."""
    if value is None or value == "":
        raise BadInput(parameter, "is required (ISO 8601 with offset, e.g. 2026-11-30T12:00:00Z)")
    if len(value) > MAX_TIME_LENGTH:
        raise BadInput(parameter, "is too long for a time")
    try:
        moment = datetime.fromisoformat(value.replace(" ", "+"))
    except ValueError:
        raise BadInput(parameter, f"{value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise BadInput(parameter, "must carry a UTC offset (e.g. Z or +01:00)")
    try:
        millis = to_epoch_ms(moment)
    except OverflowError:
        raise BadInput(parameter, "is out of range") from None
    if not 0 <= millis < _END_OF_TIME_MS:
        raise BadInput(parameter, "must lie between 1970 and 9999")
    return millis


def window(start: str | None, end: str | None, max_ms: int) -> tuple[int, int]:
    """``[from, to)`` in epoch ms, non-empty and at most ``max_ms`` long."""
    start_ms, end_ms = instant(start, "from"), instant(end, "to")
    if start_ms >= end_ms:
        raise BadInput("to", "must be after from")
    if end_ms - start_ms > max_ms:
        raise BadInput("to", f"window is longer than {max_ms // HOUR_MS} hours")
    return start_ms, end_ms


def kinds(kind: str | None, allowed: tuple[str, ...]) -> list[str]:
    """The kinds a ``kind`` parameter selects (all of ``allowed`` when absent)."""
    if kind is None or kind == "":
        return list(allowed)
    try:
        validate_kind(kind)
    except InvalidKeyError as exc:
        raise BadInput("kind", exc.reason) from None
    if kind not in allowed:
        raise BadInput("kind", f"must be one of {', '.join(allowed)}")
    return [kind]
