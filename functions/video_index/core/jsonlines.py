"""JSON Lines import, shared by the primary data that exports itself (annotations, holds).

An export is one JSON object per line, the object the API answers for that record. An
import reads a whole file first: every line is checked (its size, its JSON, its fields,
no record twice) before anything is written, and the first bad line is a
:class:`BadInput` naming the line and the field, so a file with one bad line imports
nothing. Each record is then written idempotently by its id and version; what happened
to a line is an :class:`Outcome`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from video_index.core.errors import BadInput

#: Longest line read (a record is at most a few tens of KB).
MAX_LINE_BYTES: Final = 256 * 1024

OutcomeName = Literal["created", "updated", "unchanged", "refused"]
#: Every outcome, in the order a summary counts them.
OUTCOMES: Final[tuple[OutcomeName, ...]] = ("created", "updated", "unchanged", "refused")

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What importing one line did: ``created`` or ``updated`` (the line's version is
    newer than the table's), ``unchanged`` (the table holds that version, saying the
    same), ``refused`` (the table holds a newer version, or the same one saying
    otherwise: nothing is overwritten)."""

    line: int
    id: str
    outcome: OutcomeName
    detail: str


def validated(text: str, number: int, model: type[M]) -> M:
    """The line as ``model``; :class:`BadInput` names the line and the first bad field."""
    where = f"line {number}"
    if len(text.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
        raise BadInput(where, f"is longer than {MAX_LINE_BYTES // 1024} KiB")
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "line"
        raise BadInput(f"{where}: {field}", first["msg"]) from None


def on_line(number: int, error: BadInput) -> BadInput:
    """``error`` (raised checking a field of line ``number``) as one naming the line."""
    return BadInput(f"line {number}: {error.parameter or 'line'}", error.message)


def read_records(
    lines: Iterable[str],
    parse: Callable[[str, int], T],
    identity: Callable[[T], Hashable],
    noun: str,
) -> list[tuple[int, T]]:
    """Every record of a JSON Lines text with its line number (blank lines skipped);
    the first bad line, or a record seen on an earlier line, raises :class:`BadInput`."""
    parsed: list[tuple[int, T]] = []
    seen: dict[Hashable, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        record = parse(text, number)
        ident = identity(record)
        if ident in seen:
            shown = ident[-1] if isinstance(ident, tuple) else ident
            raise BadInput(f"line {number}", f"{noun} {shown} is on line {seen[ident]}")
        seen[ident] = number
        parsed.append((number, record))
    return parsed
