"""The object key is the data structure: the contract with cameras (docs/keys.md).

Every fact the read model holds about a segment is carried by its key, so the
index can be rebuilt from a key listing alone. This module is the only place
that knows the key grammar; the uploader, ingest, reconciler and API all go
through :func:`parse_key` / :func:`format_key` / :func:`classify_key`.

    v1/<kind>/<device>/<YYYY>/<MM>/<DD>/<HH>/<start>_<duration>_<id>.<ext>
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from video_index.core.errors import BadInput
from video_index.core.timeunits import to_epoch_ms

Kind = Literal["video", "sensor", "analysis"]
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)
KEY_VERSION: Final = "v1"
KEY_PREFIX: Final = f"{KEY_VERSION}/"

EXTENSIONS: Final[dict[str, tuple[str, ...]]] = {
    "video": ("mp4", "ts"),
    "sensor": ("json",),
    "analysis": ("json",),
}
MAX_DURATION_MS: Final[dict[str, int]] = {
    "video": 3_600_000,
    "sensor": 86_400_000,
    "analysis": 86_400_000,
}
MIN_DURATION_MS: Final[dict[str, int]] = {"video": 1, "sensor": 0, "analysis": 0}

DEVICE_RE: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
ID_RE: Final = re.compile(r"^[a-z0-9]{1,64}$")
_START_RE: Final = re.compile(
    r"^([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})\.([0-9]{3})Z$"
)
_FILE_RE: Final = re.compile(r"^(?P<start>[^_]*)_(?P<duration>[^_]*)_(?P<id>[^.]*)\.(?P<ext>.*)$")
_DURATION_RE: Final = re.compile(r"^(0|[1-9][0-9]{0,8})$")
_OTHER_VERSION_RE: Final = re.compile(r"^v[0-9]+/")


class InvalidKeyError(BadInput):
    """A key under ``v1/`` (or a key part) that breaks a rule of docs/keys.md."""

    def __init__(self, reason: str) -> None:
        super().__init__(None, reason)
        self.reason = reason


def validate_kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise InvalidKeyError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    return kind


def validate_device(device: str) -> str:
    if not DEVICE_RE.fullmatch(device):
        raise InvalidKeyError(
            f"device {device!r} must be 1-64 characters of [a-z0-9-], "
            "starting and ending with a letter or digit"
        )
    return device


def validate_id(segment_id: str) -> str:
    if not ID_RE.fullmatch(segment_id):
        raise InvalidKeyError(f"id {segment_id!r} must be 1-64 characters of [a-z0-9]")
    return segment_id


def format_start(start: datetime) -> str:
    """``YYYYMMDDTHHMMSS.fffZ`` of a UTC instant (millisecond precision)."""
    start = start.astimezone(UTC)
    # f"{year:04d}", not %Y: strftime does not zero-pad years before 1000.
    return f"{start.year:04d}{start:%m%dT%H%M%S}.{start.microsecond // 1000:03d}Z"


def parse_start(text: str) -> datetime:
    match = _START_RE.fullmatch(text)
    if not match:
        raise InvalidKeyError(f"start {text!r} is not YYYYMMDDTHHMMSS.fffZ")
    year, month, day, hour, minute, second, millis = (int(g) for g in match.groups())
    try:
        return datetime(year, month, day, hour, minute, second, millis * 1000, tzinfo=UTC)
    except ValueError as exc:
        raise InvalidKeyError(f"start {text!r} is not a real date and time: {exc}") from None


class SegmentKey(BaseModel):
    """One indexed object, exactly as its key describes it."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    device: str
    start: datetime
    duration_ms: int
    id: str
    ext: str

    @field_validator("device")
    @classmethod
    def _device(cls, value: str) -> str:
        return validate_device(value)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return validate_id(value)

    @field_validator("start")
    @classmethod
    def _start(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise InvalidKeyError("start must carry a time zone (UTC)")
        value = value.astimezone(UTC)
        if value.microsecond % 1000:
            raise InvalidKeyError("start has finer than millisecond precision")
        if not 1 <= value.year <= 9999:
            raise InvalidKeyError("start year out of range")
        return value

    @model_validator(mode="after")
    def _kind_rules(self) -> SegmentKey:
        low, high = MIN_DURATION_MS[self.kind], MAX_DURATION_MS[self.kind]
        if not low <= self.duration_ms <= high:
            raise InvalidKeyError(
                f"duration {self.duration_ms} ms is out of range for {self.kind} ({low}..{high})"
            )
        if self.ext not in EXTENSIONS[self.kind]:
            raise InvalidKeyError(
                f"extension {self.ext!r} is not allowed for {self.kind} "
                f"(allowed: {', '.join(EXTENSIONS[self.kind])})"
            )
        return self

    @property
    def start_ms(self) -> int:
        return to_epoch_ms(self.start)

    @property
    def end_ms(self) -> int:
        return self.start_ms + self.duration_ms

    @property
    def end(self) -> datetime:
        return self.start + timedelta(milliseconds=self.duration_ms)

    @property
    def filename(self) -> str:
        """The last key part; sorts by start because start is fixed-width."""
        return f"{format_start(self.start)}_{self.duration_ms}_{self.id}.{self.ext}"

    @property
    def key(self) -> str:
        return format_key(self)


def hour_prefix(kind: str, device: str, hour: datetime) -> str:
    """Prefix of every key of a device and kind whose start lies in ``hour`` (UTC)."""
    return f"{device_prefix(kind, device)}{_utc_folders(hour)}/"


def day_prefix(kind: str, device: str, day: datetime) -> str:
    return f"{device_prefix(kind, device)}{_utc_folders(day)[:-3]}/"


def _utc_folders(moment: datetime) -> str:
    """``YYYY/MM/DD/HH`` of an instant in UTC (year zero-padded, unlike %Y)."""
    moment = moment.astimezone(UTC)
    return f"{moment.year:04d}/{moment:%m/%d/%H}"


def device_prefix(kind: str, device: str) -> str:
    return f"{KEY_PREFIX}{validate_kind(kind)}/{validate_device(device)}/"


def format_key(segment: SegmentKey) -> str:
    return hour_prefix(segment.kind, segment.device, segment.start) + segment.filename


def parse_key(key: str) -> SegmentKey:
    """The segment a ``v1/`` key names; :class:`InvalidKeyError` says which rule it breaks."""
    if not key.startswith(KEY_PREFIX):
        raise InvalidKeyError(f"key does not start with {KEY_PREFIX!r}")
    parts = key.split("/")
    if len(parts) != 8:
        raise InvalidKeyError(
            f"key has {len(parts)} parts separated by '/', expected 8 "
            "(v1/kind/device/YYYY/MM/DD/HH/file)"
        )
    if any(part == "" for part in parts):
        raise InvalidKeyError("key has an empty part")
    if any(part in (".", "..") for part in parts):
        raise InvalidKeyError("key has a '.' or '..' part")
    _, kind, device, year, month, day, hour, filename = parts
    validate_kind(kind)
    validate_device(device)
    match = _FILE_RE.fullmatch(filename)
    if not match:
        raise InvalidKeyError(f"file name {filename!r} is not <start>_<duration>_<id>.<ext>")
    start = parse_start(match["start"])
    if not _DURATION_RE.fullmatch(match["duration"]):
        raise InvalidKeyError(
            f"duration {match['duration']!r} is not a whole number of milliseconds"
        )
    folders = f"{year}/{month}/{day}/{hour}"
    expected = _utc_folders(start)
    if folders != expected:
        raise InvalidKeyError(f"folders {folders} disagree with start (expected {expected})")
    try:
        return SegmentKey(
            kind=kind,
            device=device,
            start=start,
            duration_ms=int(match["duration"]),
            id=match["id"],
            ext=match["ext"],
        )
    except InvalidKeyError:
        raise
    except ValueError as exc:  # pydantic wraps validator errors
        raise InvalidKeyError(key_error_reason(exc)) from None


#: Longest file name of a key: start (20), two separators, duration (9), id (64), dot, ext (4).
MAX_FILE_NAME_LENGTH: Final = 100


def parse_file_name(kind: str, device: str, name: str) -> SegmentKey:
    """The segment a kind, a device and a key's file name address (the folders follow
    from the start), so a file name alone, with its kind and device, is the whole key;
    :class:`InvalidKeyError` says which rule it breaks."""
    validate_kind(kind)
    validate_device(device)
    if len(name) > MAX_FILE_NAME_LENGTH:
        raise InvalidKeyError(f"file name is longer than {MAX_FILE_NAME_LENGTH} characters")
    if "/" in name:
        raise InvalidKeyError("file name must not contain '/'")
    match = _FILE_RE.fullmatch(name)
    if not match:
        raise InvalidKeyError(f"file name {name!r} is not <start>_<duration>_<id>.<ext>")
    return parse_key(hour_prefix(kind, device, parse_start(match["start"])) + name)


def key_error_reason(exc: ValueError) -> str:
    """The rule a :class:`SegmentKey` validation broke, from pydantic's wrapped error."""
    if isinstance(exc, InvalidKeyError):
        return exc.reason
    errors = getattr(exc, "errors", None)
    if callable(errors):
        for error in errors():
            ctx_error = error.get("ctx", {}).get("error")
            if isinstance(ctx_error, InvalidKeyError):
                return ctx_error.reason
            return str(error.get("msg", exc))
    return str(exc)


@dataclass(frozen=True, slots=True)
class ValidKey:
    segment: SegmentKey


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """Outside ``v1/``: never indexed, never an error (inventory reports, temp files)."""

    key: str


@dataclass(frozen=True, slots=True)
class InvalidKey:
    key: str
    reason: str


KeyClass = ValidKey | ForeignKey | InvalidKey


def classify_key(key: str) -> KeyClass:
    """Valid, foreign or invalid-with-reason: the three fates of any key."""
    if key.startswith(KEY_PREFIX):
        try:
            return ValidKey(parse_key(key))
        except InvalidKeyError as exc:
            return InvalidKey(key, exc.reason)
    if _OTHER_VERSION_RE.match(key):
        version = key.split("/", 1)[0]
        return InvalidKey(key, f"key format version {version!r} is not indexed by v1")
    return ForeignKey(key)


#: Hex digits of the SHA-256 that make a segment id.
ID_DIGITS: Final = 16


def segment_id(kind: str, device: str, start: datetime, duration_ms: int, content: bytes) -> str:
    """Stable id: first 16 hex digits of SHA-256 over kind, device, start, duration, content.

    A retried upload of the same content yields the same key (idempotent), and two
    different segments of a device never share an id.
    """
    digest = segment_id_hasher(kind, device, start, duration_ms)
    digest.update(content)
    return str(digest.hexdigest()[:ID_DIGITS])


def segment_id_hasher(kind: str, device: str, start: datetime, duration_ms: int) -> Any:
    """A SHA-256 primed with everything but the content: feed it the content in any
    number of ``update`` calls; the first 16 hex digits of its digest are the id."""
    digest = hashlib.sha256()
    for part in (kind, device, format_start(start), str(duration_ms)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest
