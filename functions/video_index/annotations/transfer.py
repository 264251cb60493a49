"""Annotations as JSON Lines: export, and an import that is idempotent by annotation id.

One line per annotation, the object ``GET /devices/{device}/annotations/{id}``
answers (docs/annotations.md). Importing a line writes its version unless the
table holds that version already (``unchanged`` when it says the same,
``refused`` when it does not) or a newer one (``refused``): importing the same
file twice changes nothing, and an import never overwrites a newer version.
Every line is checked before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from video_index.annotations.identity import MAX_PRINCIPAL_LENGTH
from video_index.annotations.layout import MAX_VERSION
from video_index.annotations.model import (
    ANNOTATION_ID_PATTERN,
    Annotation,
    AnnotationIn,
    Status,
    Target,
    TargetIn,
    draft_of,
    segment_of_key,
)
from video_index.annotations.service import Annotations, SegmentDirectory
from video_index.annotations.shapes import annotation_out, as_json
from video_index.api.params import MAX_TIME_LENGTH, instant
from video_index.core.errors import BadInput, NotFound
from video_index.core.jsonlines import Outcome, on_line, read_records, validated
from video_index.core.keys import InvalidKeyError, validate_device
from video_index.core.timeunits import iso_ms


class AnnotationLine(BaseModel):
    """One exported annotation (``start``, ``end`` and ``segment_present`` are derived and
    ignored on import)."""

    model_config = ConfigDict(extra="forbid")

    annotation_id: str = Field(pattern=ANNOTATION_ID_PATTERN)
    device: str = Field(max_length=64)
    target: TargetIn
    description: str = ""
    status: Status = "pending"
    tags: list[str] = Field(default_factory=list)
    version: int = Field(ge=1, le=MAX_VERSION)
    created_at: str = Field(max_length=MAX_TIME_LENGTH)
    created_by: str = Field(min_length=1, max_length=MAX_PRINCIPAL_LENGTH)
    updated_at: str = Field(max_length=MAX_TIME_LENGTH)
    updated_by: str = Field(min_length=1, max_length=MAX_PRINCIPAL_LENGTH)
    start: str | None = None
    end: str | None = None
    segment_key: str | None = None
    segment_present: bool | None = None


def export_lines(annotations: Iterable[Annotation]) -> Iterator[str]:
    """One JSON line per annotation (UTF-8 as is, no ASCII escapes)."""
    for annotation in annotations:
        yield json.dumps(as_json(annotation_out(annotation)), ensure_ascii=False)


def parse_line(text: str, number: int, segments: SegmentDirectory) -> Annotation:
    """The annotation a line holds, every rule of the API checked; :class:`BadInput` names
    the line and the field."""
    where = f"line {number}"
    line = validated(text, number, AnnotationLine)
    try:
        device = validate_device(line.device)
        body = AnnotationIn(
            target=_named_target(line.target, line.segment_key),
            description=line.description,
            status=line.status,
            tags=line.tags,
        )
        draft = draft_of(body)
        created_at = iso_ms(instant(line.created_at, "created_at"))
        updated_at = iso_ms(instant(line.updated_at, "updated_at"))
    except InvalidKeyError as exc:
        raise BadInput(f"{where}: device", exc.reason) from None
    except BadInput as exc:
        raise on_line(number, exc) from None
    except ValidationError as exc:
        raise BadInput(where, str(exc.errors()[0]["msg"])) from None
    ref = draft.segment
    if ref is None:
        target = Target.of_range(draft.from_ms, draft.to_ms)
    elif line.segment_key is not None:
        key = segment_of_key(line.segment_key, device, ref, f"{where}: segment_key")
        target = Target.of_segment(key)
    else:
        try:
            target = Target.of_segment(segments.locate(device, ref.kind, ref.name))
        except (BadInput, NotFound) as exc:
            raise BadInput(
                f"{where}: {exc.parameter or 'target.name'}", f"{exc.message} (and no segment_key)"
            ) from None
    return Annotation(
        annotation_id=line.annotation_id,
        device=device,
        target=target,
        description=draft.description,
        status=draft.status,
        tags=draft.tags,
        version=line.version,
        created_at=created_at,
        created_by=line.created_by,
        updated_at=updated_at,
        updated_by=line.updated_by,
    )


def _named_target(target: TargetIn, segment_key: str | None) -> TargetIn:
    """A segment target with its kind and name: a line exported before targets carried
    them (``{"segment": "<id>"}`` only) takes them from its ``segment_key``."""
    if target.segment is None or target.kind is not None or target.name is not None:
        return target
    if segment_key is None or segment_key.count("/") != 7:
        return target  # draft_of names what is missing
    _, kind, *_, name = segment_key.split("/")
    return target.model_copy(update={"kind": kind, "name": name})


def read_lines(lines: Iterable[str], segments: SegmentDirectory) -> list[tuple[int, Annotation]]:
    """Every annotation of a JSON Lines text (blank lines skipped); the first bad line
    raises :class:`BadInput`, so nothing is imported from a file with a bad line."""
    return read_records(
        lines,
        lambda text, number: parse_line(text, number, segments),
        lambda a: (a.device, a.annotation_id),
        "annotation",
    )


def import_annotations(
    parsed: Iterable[tuple[int, Annotation]], annotations: Annotations
) -> list[Outcome]:
    """Write each annotation idempotently (:meth:`Annotations.import_one`)."""
    outcomes = []
    for number, annotation in parsed:
        outcome, detail = annotations.import_one(annotation)
        outcomes.append(Outcome(number, annotation.annotation_id, outcome, detail))
    return outcomes
