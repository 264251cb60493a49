"""Holds as JSON Lines: export, and an import that is idempotent by hold id (docs/holds.md).

One line per hold, the object ``GET /holds/{hold_id}`` answers (its ``history``
included). Importing a line writes that version of the hold unless the table holds
it already (``unchanged`` when it says the same, ``refused`` when it does not) or a
newer one (``refused``): importing the same file twice changes nothing, and an import
never overwrites a newer version (a hold released since the export stays released).
Every line is checked against the rules of the API and against itself (its history
must tell the hold's story) before anything is written: :mod:`video_index.core.jsonlines`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from video_index.api.params import MAX_TIME_LENGTH, instant
from video_index.core.access import MAX_PRINCIPAL_LENGTH
from video_index.core.errors import BadInput
from video_index.core.jsonlines import Outcome, on_line, read_records, validated
from video_index.core.keys import InvalidKeyError, validate_device
from video_index.holds.model import (
    HOLD_ID_PATTERN,
    MAX_REASON_LENGTH,
    Action,
    Change,
    Hold,
    check_reason,
    check_window,
)
from video_index.holds.service import Holds

#: Most versions a hold has (created, released): a few more for what may come.
_MAX_VERSIONS = 16


class ChangeLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=1, le=_MAX_VERSIONS)
    action: Action
    by: str = Field(min_length=1, max_length=MAX_PRINCIPAL_LENGTH)
    at: str = Field(max_length=MAX_TIME_LENGTH)


class HoldLine(BaseModel):
    """One exported hold (``active`` is derived, and checked against ``released_at``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    hold_id: str = Field(pattern=HOLD_ID_PATTERN)
    device: str = Field(max_length=64)
    from_: str = Field(alias="from", max_length=MAX_TIME_LENGTH)
    to: str = Field(max_length=MAX_TIME_LENGTH)
    reason: str = Field(max_length=MAX_REASON_LENGTH)
    active: bool
    created_by: str = Field(min_length=1, max_length=MAX_PRINCIPAL_LENGTH)
    created_at: str = Field(max_length=MAX_TIME_LENGTH)
    released_by: str | None = Field(default=None, min_length=1, max_length=MAX_PRINCIPAL_LENGTH)
    released_at: str | None = Field(default=None, max_length=MAX_TIME_LENGTH)
    version: int = Field(ge=1, le=_MAX_VERSIONS)
    history: list[ChangeLine] = Field(min_length=1, max_length=_MAX_VERSIONS)


def export_lines(holds: Iterable[Hold]) -> Iterator[str]:
    """One JSON line per hold (UTF-8 as is, no ASCII escapes)."""
    for hold in holds:
        yield json.dumps(hold.public(), ensure_ascii=False)


def parse_line(text: str, number: int) -> Hold:
    """The hold a line holds, every rule checked; :class:`BadInput` names the line and field."""
    line = validated(text, number, HoldLine)
    try:
        device = validate_device(line.device)
    except InvalidKeyError as exc:
        raise BadInput(f"line {number}: device", exc.reason) from None
    try:
        hold = _hold_of(line, device)
    except BadInput as exc:
        raise on_line(number, exc) from None
    return hold


def _hold_of(line: HoldLine, device: str) -> Hold:
    from_ms, to_ms = instant(line.from_, "from"), instant(line.to, "to")
    check_window(from_ms, to_ms)
    if check_reason(line.reason) != line.reason:
        raise BadInput("reason", "has leading or trailing spaces (the API strips them)")
    history = tuple(
        Change(c.version, c.action, c.by, instant(c.at, f"history[{i}].at"))
        for i, c in enumerate(line.history)
    )
    released_at = instant(line.released_at, "released_at") if line.released_at else None
    hold = Hold(
        hold_id=line.hold_id,
        device=device,
        from_ms=from_ms,
        to_ms=to_ms,
        reason=line.reason,
        created_by=line.created_by,
        created_at_ms=instant(line.created_at, "created_at"),
        released_by=line.released_by,
        released_at_ms=released_at,
        history=history,
    )
    _check_story(hold, line)
    return hold


def _check_story(hold: Hold, line: HoldLine) -> None:
    """The history tells the hold's story: created first, by its creator, at its creation;
    released last (if released) by who and when the hold says; versions 1, 2, ..."""
    if [c.version for c in hold.history] != list(range(1, len(hold.history) + 1)):
        raise BadInput("history", "versions must be 1, 2, ... in order")
    if line.version != hold.version:
        raise BadInput("version", f"is {line.version} but the history has {hold.version}")
    first, last = hold.history[0], hold.history[-1]
    if (first.action, first.by, first.at_ms) != ("create", hold.created_by, hold.created_at_ms):
        raise BadInput("history[0]", "must be the creation, by created_by at created_at")
    if any(c.action == "create" for c in hold.history[1:]):
        raise BadInput("history", "a hold is created once")
    released = hold.released_at_ms is not None
    if released != (hold.released_by is not None):
        raise BadInput("released_by", "released_by and released_at go together")
    if line.active == released:
        raise BadInput("active", "must be false exactly when released_at is given")
    if released and (last.action, last.by, last.at_ms) != (
        "release",
        hold.released_by,
        hold.released_at_ms,
    ):
        raise BadInput("history", "a released hold's last version is its release")
    if not released and any(c.action == "release" for c in hold.history):
        raise BadInput("released_at", "the history releases the hold: give released_at")


def read_lines(lines: Iterable[str]) -> list[tuple[int, Hold]]:
    """Every hold of a JSON Lines text (blank lines skipped); the first bad line raises
    :class:`BadInput`, so nothing is imported from a file with a bad line."""
    return read_records(lines, parse_line, lambda hold: hold.hold_id, "hold")


def import_holds(parsed: Iterable[tuple[int, Hold]], holds: Holds) -> list[Outcome]:
    """Write each hold idempotently (:meth:`Holds.import_one`)."""
    outcomes = []
    for number, hold in parsed:
        outcome, detail = holds.import_one(hold)
        outcomes.append(Outcome(number, hold.hold_id, outcome, detail))
    return outcomes
