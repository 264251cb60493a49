"""An annotation, its target, the rules a request must keep, and entity tags (docs/annotations.md).

A request body (:class:`AnnotationIn`, the shape the API documents) becomes a
:class:`Draft` once every rule holds, each breach a :class:`BadInput` naming the
field: a target is one segment (by its kind and key file name, as its entry gives
them: found with one GetItem, no index) or a range ``from < to`` of at most 31 days; a
description has at most 4,000 characters of any Unicode and is stored as given; the
status is one of three; tags are at most 20 of ``[a-z0-9-]{1,32}``
(repeats are dropped, the first occurrence keeps its place).

An :class:`Annotation` is one version as stored: the draft with its target
resolved to an interval (a segment's interval comes from its key), its version
(the ETag) and who changed it when.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from video_index.api.params import MAX_TIME_LENGTH, instant
from video_index.core.errors import BadInput, PreconditionFailed, PreconditionRequired
from video_index.core.keys import (
    MAX_FILE_NAME_LENGTH,
    InvalidKeyError,
    Kind,
    SegmentKey,
    parse_key,
)
from video_index.core.timeunits import DAY_MS

Status = Literal["pending", "approved", "rejected"]
DEFAULT_STATUS: Final = "pending"
MAX_DESCRIPTION_CHARS: Final = 4000
MAX_TAGS: Final = 20
TAG_PATTERN: Final = r"^[a-z0-9-]{1,32}$"
#: The longest range an annotation may cover.
MAX_RANGE_MS: Final = 31 * DAY_MS
ANNOTATION_ID_PATTERN: Final = r"^[a-z0-9]{1,64}$"
SEGMENT_ID_PATTERN: Final = r"^[a-z0-9]{1,64}$"
#: The longest ``If-Match`` header read (a list of a few entity tags).
MAX_IF_MATCH_LENGTH: Final = 1024

_ANNOTATION_ID_RE: Final = re.compile(ANNOTATION_ID_PATTERN)
_ENTITY_TAG_RE: Final = re.compile(r'^(W/)?"([^"]*)"$')
_VERSION_RE: Final = re.compile(r"^[0-9]{1,18}$")


def new_annotation_id() -> str:
    """A fresh annotation id: 32 hex digits, random (never reused, never guessed)."""
    return uuid.uuid4().hex


def check_annotation_id(value: str, parameter: str = "annotation_id") -> str:
    if not _ANNOTATION_ID_RE.fullmatch(value):
        raise BadInput(parameter, "must be 1-64 characters of [a-z0-9]")
    return value


# --- the request body ------------------------------------------------------------------------


class TargetIn(BaseModel):
    """What an annotation is about: ``{"kind", "name"}`` (a segment, by its entry's kind and
    key file name; ``segment``, its id, may come along) or ``{"from", "to"}``."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        json_schema_extra={
            "description": 'Either {"kind": "<kind>", "name": "<file name>"} (a segment '
            "entry's kind and name; its id may come along as segment) or "
            '{"from": "<ISO 8601>", "to": "<ISO 8601>"} (from < to, at most 31 days)'
        },
    )

    segment: str | None = Field(default=None, pattern=SEGMENT_ID_PATTERN)
    kind: Kind | None = None
    name: str | None = Field(default=None, max_length=MAX_FILE_NAME_LENGTH)
    from_: str | None = Field(default=None, alias="from", max_length=MAX_TIME_LENGTH)
    to: str | None = Field(default=None, max_length=MAX_TIME_LENGTH)

    @model_validator(mode="after")
    def _one_form(self) -> TargetIn:
        on_segment = self.segment is not None or self.kind is not None or self.name is not None
        if on_segment:
            if self.from_ is not None or self.to is not None:
                raise ValueError("give either a segment (kind and name), or from and to, not both")
        elif self.from_ is None or self.to is None:
            raise ValueError("give either a segment (kind and name), or from and to")
        return self


class AnnotationIn(BaseModel):
    """The body of ``POST`` (create) and ``PUT`` (whole replacement)."""

    model_config = ConfigDict(extra="forbid")

    target: TargetIn
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    status: Status = DEFAULT_STATUS
    tags: list[str] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        json_schema_extra={"items": {"type": "string", "pattern": TAG_PATTERN}},
    )


@dataclass(frozen=True, slots=True)
class Draft:
    """A request that keeps every rule: what the user wants stored (target not yet resolved)."""

    description: str
    status: str
    tags: tuple[str, ...]
    #: A segment target: its kind and file name; a range target: None.
    segment: SegmentRef | None = None
    #: A range target: ``[from_ms, to_ms)``.
    from_ms: int = 0
    to_ms: int = 0


@dataclass(frozen=True, slots=True)
class SegmentRef:
    """A segment target as a request names it: the segment's kind and key file name (with
    the device, the whole key)."""

    kind: str
    name: str

    @classmethod
    def of_key(cls, segment: SegmentKey) -> SegmentRef:
        return cls(segment.kind, segment.filename)


def draft_of(body: AnnotationIn) -> Draft:
    """The draft of a structurally valid body; :class:`BadInput` names the broken rule."""
    description = checked_text(body.description, "description")
    tags = checked_tags(body.tags)
    target = body.target
    if target.from_ is None:
        for field_name in ("kind", "name"):
            if getattr(target, field_name) is None:
                raise BadInput(
                    f"target.{field_name}",
                    "is required: a segment target is its entry's kind and name "
                    "(an id alone does not locate a segment)",
                )
        assert target.kind is not None and target.name is not None
        if target.segment is not None and _id_of_name(target.name) != target.segment:
            raise BadInput("target.segment", f"is not the id in target.name {target.name!r}")
        return Draft(description, body.status, tags, segment=SegmentRef(target.kind, target.name))
    from_ms = instant(target.from_, "target.from")
    to_ms = instant(target.to, "target.to")
    check_range(from_ms, to_ms)
    return Draft(description, body.status, tags, from_ms=from_ms, to_ms=to_ms)


def _id_of_name(name: str) -> str | None:
    """The id part of a key file name (``<start>_<duration>_<id>.<ext>``), if it has one."""
    parts = name.split("_")
    return parts[2].split(".", 1)[0] if len(parts) == 3 else None


def check_range(from_ms: int, to_ms: int) -> None:
    if from_ms >= to_ms:
        raise BadInput("target.to", "must be after target.from")
    if to_ms - from_ms > MAX_RANGE_MS:
        raise BadInput("target.to", "a range covers at most 31 days")


def checked_text(value: str, parameter: str) -> str:
    """Any Unicode is stored as given, but a lone surrogate is not Unicode text."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(parameter, "is not valid Unicode (a lone surrogate)") from None
    return value


def checked_tags(tags: list[str]) -> tuple[str, ...]:
    pattern = re.compile(TAG_PATTERN)
    unique: dict[str, None] = {}
    for index, tag in enumerate(tags):
        if not pattern.fullmatch(tag):
            raise BadInput(f"tags[{index}]", "must be 1-32 characters of [a-z0-9-]")
        unique.setdefault(tag, None)
    if len(tags) > MAX_TAGS:
        raise BadInput("tags", f"at most {MAX_TAGS} tags")
    return tuple(unique)


# --- the stored annotation -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved target: the interval it covers, and for a segment its id and key."""

    start_ms: int
    end_ms: int
    segment: str | None = None
    segment_key: str | None = None

    @classmethod
    def of_segment(cls, segment: SegmentKey) -> Target:
        return cls(segment.start_ms, segment.end_ms, segment.id, segment.key)

    @classmethod
    def of_range(cls, from_ms: int, to_ms: int) -> Target:
        return cls(from_ms, to_ms)

    @property
    def ref(self) -> SegmentRef | None:
        """A segment target's kind and file name (from its key); None for a range."""
        if self.segment_key is None:
            return None
        _, kind, *_, name = self.segment_key.split("/")
        return SegmentRef(kind, name)

    def intersects(self, start_ms: int, end_ms: int) -> bool:
        """Half-open overlap with ``[start_ms, end_ms)``; a point target counts where it lies."""
        if self.start_ms == self.end_ms:
            return start_ms <= self.start_ms < end_ms
        return self.start_ms < end_ms and self.end_ms > start_ms


@dataclass(frozen=True, slots=True)
class Annotation:
    """One version of an annotation."""

    annotation_id: str
    device: str
    target: Target
    description: str
    status: str
    tags: tuple[str, ...]
    version: int
    created_at: str
    created_by: str
    updated_at: str
    updated_by: str
    #: The version that deleted the annotation (history only).
    deleted: bool = False
    #: A segment target: whether the segment still exists (None: not asked, or a range).
    segment_present: bool | None = field(default=None, compare=False)

    @property
    def etag(self) -> str:
        return etag(self.version)

    def content(self) -> tuple[Any, ...]:
        """What a person decided (target, words, status, tags): equal content, same annotation."""
        return (self.target, self.description, self.status, self.tags, self.deleted)

    def attributes(self) -> dict[str, Any]:
        """The item attributes of this version (keys excluded: they belong to the layout)."""
        attributes: dict[str, Any] = {
            "aid": self.annotation_id,
            "device": self.device,
            "start": self.target.start_ms,
            "end": self.target.end_ms,
            "description": self.description,
            "status": self.status,
            "tags": list(self.tags),
            "version": self.version,
            "created_at": self.created_at,
            "created_by": self.created_by,
            "updated_at": self.updated_at,
            "updated_by": self.updated_by,
        }
        if self.target.segment is not None:
            attributes["segment"] = self.target.segment
            attributes["segment_key"] = self.target.segment_key
        if self.deleted:
            attributes["deleted"] = True
        return attributes

    @classmethod
    def of_attributes(cls, item: dict[str, Any]) -> Annotation:
        segment = item.get("segment")
        return cls(
            annotation_id=str(item["aid"]),
            device=str(item["device"]),
            target=Target(
                start_ms=int(item["start"]),
                end_ms=int(item["end"]),
                segment=str(segment) if segment is not None else None,
                segment_key=str(item["segment_key"]) if segment is not None else None,
            ),
            description=str(item.get("description", "")),
            status=str(item["status"]),
            tags=tuple(str(tag) for tag in item.get("tags", [])),
            version=int(item["version"]),
            created_at=str(item["created_at"]),
            created_by=str(item["created_by"]),
            updated_at=str(item["updated_at"]),
            updated_by=str(item["updated_by"]),
            deleted=bool(item.get("deleted", False)),
        )


def segment_of_key(key: str, device: str, ref: SegmentRef | None, parameter: str) -> SegmentKey:
    """The segment a stored or imported key names, checked against its device and, when
    given, the kind and file name the target names."""
    try:
        parsed = parse_key(key)
    except InvalidKeyError as exc:
        raise BadInput(parameter, exc.reason) from None
    if parsed.device != device or (ref is not None and SegmentRef.of_key(parsed) != ref):
        named = f"{ref.kind} segment {ref.name}" if ref is not None else "a segment"
        raise BadInput(parameter, f"is not the key of {named} of device {device}")
    return parsed


# --- entity tags -----------------------------------------------------------------------------


def etag(version: int) -> str:
    """The strong entity tag of a version: ``"3"``."""
    return f'"{version}"'


def expected_version(if_match: str | None) -> set[int]:
    """The versions an ``If-Match`` header accepts (RFC 9110 strong comparison).

    Missing, empty or ``*`` (which would overwrite whatever is there):
    :class:`PreconditionRequired`. A weak tag or one that is not ours never matches.
    """
    if if_match is None or not if_match.strip():
        raise PreconditionRequired("If-Match is required: send the ETag of the version you edited")
    if if_match.strip() == "*":
        raise PreconditionRequired(
            'If-Match must name the version you edited ("*" would overwrite blindly)'
        )
    if len(if_match) > MAX_IF_MATCH_LENGTH:
        raise BadInput("If-Match", "is too long")
    versions: set[int] = set()
    for part in if_match.split(","):
        text = part.strip()
        match = _ENTITY_TAG_RE.fullmatch(text)
        if match is None:
            if not _VERSION_RE.fullmatch(text):  # a bare version is accepted too
                raise BadInput("If-Match", f'{text[:40]!r} is not an entity tag like "3"')
            versions.add(int(text))
        elif match.group(1) is None and _VERSION_RE.fullmatch(match.group(2)):
            versions.add(int(match.group(2)))
    return versions


def check_precondition(current: Annotation, accepted: set[int]) -> None:
    if current.version not in accepted:
        raise PreconditionFailed(
            f"annotation {current.annotation_id} is at version {current.version} "
            f"(ETag {current.etag}): someone changed it since you read it"
        )
