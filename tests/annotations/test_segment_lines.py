"""Import lines with a segment target: the target is the segment's kind and key file name
(docs/annotations.md); a line exported before targets carried them still imports."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from video_index.annotations.shapes import annotation_out, as_json
from video_index.annotations.transfer import parse_line
from video_index.core.errors import BadInput, NotFound
from video_index.core.keys import SegmentKey

DEVICE = "cam-001"
SEGMENT = SegmentKey(
    kind="sensor",
    device=DEVICE,
    start=datetime(2026, 11, 29, 10, tzinfo=UTC),
    duration_ms=0,
    id="3f9a1c2e7b4d5a60",
    ext="json",
)


class Directory:
    """The read model of one segment, recording what was located."""

    def __init__(self) -> None:
        self.located: list[tuple[str, str, str]] = []

    def locate(self, device: str, kind: str, name: str) -> SegmentKey:
        self.located.append((device, kind, name))
        if (device, kind, name) != (DEVICE, SEGMENT.kind, SEGMENT.filename):
            raise NotFound("target.name", f"no {kind} segment {name}")
        return SEGMENT

    def present(self, segments: list[SegmentKey]) -> set[str]:
        return {s.key for s in segments}


def _line(target: dict[str, object], **extra: object) -> str:
    return json.dumps(
        {
            "annotation_id": "a1",
            "device": DEVICE,
            "target": target,
            "version": 1,
            "created_at": "2026-11-30T10:00:00.000Z",
            "created_by": "ops",
            "updated_at": "2026-11-30T10:00:00.000Z",
            "updated_by": "ops",
            **extra,
        }
    )


NAMED = {"kind": SEGMENT.kind, "name": SEGMENT.filename}


def test_an_exported_line_imports_to_the_same_target_without_a_lookup() -> None:
    # Given a line as export writes it (target with id, kind and name; the key)
    directory = Directory()
    first = parse_line(_line(NAMED), 1, directory)
    exported = json.dumps(as_json(annotation_out(first)))
    # When it is read back
    again = parse_line(exported, 2, directory)
    # Then the target is the same segment; only the line without a key was located
    assert again.target == first.target and again.target.segment_key == SEGMENT.key
    assert json.loads(exported)["target"] == {"segment": SEGMENT.id, **NAMED}
    assert directory.located == [(DEVICE, SEGMENT.kind, SEGMENT.filename)]


def test_a_line_exported_when_targets_were_ids_takes_kind_and_name_from_its_key() -> None:
    directory = Directory()
    line = _line({"segment": SEGMENT.id}, segment_key=SEGMENT.key)
    annotation = parse_line(line, 1, directory)
    assert annotation.target.segment_key == SEGMENT.key and annotation.target.segment == SEGMENT.id
    assert directory.located == []


@pytest.mark.parametrize(
    ("target", "extra", "parameter"),
    [
        ({"segment": SEGMENT.id}, {}, "line 1: target.kind"),
        ({**NAMED, "name": SEGMENT.filename.replace("3f9a", "0000")}, {}, "line 1: target.name"),
        (NAMED, {"segment_key": SEGMENT.key.replace("sensor", "analysis")}, "line 1: segment_key"),
        ({**NAMED, "segment": "0" * 16}, {}, "line 1: target.segment"),
    ],
)
def test_a_segment_line_that_names_no_segment_is_refused(
    target: dict[str, object], extra: dict[str, object], parameter: str
) -> None:
    with pytest.raises(BadInput) as refused:
        parse_line(_line(target, **extra), 1, Directory())
    assert refused.value.parameter == parameter
