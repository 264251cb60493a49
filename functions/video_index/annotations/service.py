"""Annotations, independent of HTTP: create, read, replace, delete, list, history, the join.

Each method states the DynamoDB requests it spends (docs/annotations.md). A
change reads the current version (one strongly consistent Query), checks the
caller's ``If-Match`` against it, and commits the next version in one
transaction conditioned on that version not existing yet: of two editors holding
the same ETag exactly one commits, the other gets :class:`PreconditionFailed`
(412) and nothing is lost, because every version stays in the history.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from video_index.annotations.layout import (
    MAX_VERSION,
    WindowRead,
    is_anchor,
    version_sk,
    window_sks,
)
from video_index.annotations.model import (
    Annotation,
    Draft,
    Target,
    check_precondition,
    new_annotation_id,
    segment_of_key,
)
from video_index.annotations.store import AnnotationStore, Change, VersionTaken, WriteCollided
from video_index.core.cursors import decode_cursor, encode_cursor
from video_index.core.errors import (
    BadInput,
    Conflict,
    NotFound,
    PreconditionFailed,
    TransientError,
)
from video_index.core.jsonlines import OutcomeName
from video_index.core.keys import SegmentKey
from video_index.core.timeunits import iso_ms

#: Attempts of one change when DynamoDB cancels it for a simultaneous transaction.
MAX_ATTEMPTS: Final = 5
#: Longest pause before the next attempt (grows with the attempts, jittered).
_BACKOFF_SECONDS: Final = 0.05


class SegmentSpan(Protocol):
    """A segment entry as the join reads it (the query layer's ``Entry``)."""

    @property
    def key(self) -> str: ...

    @property
    def start_ms(self) -> int: ...

    @property
    def end_ms(self) -> int: ...

    def intersects(self, start_ms: int, end_ms: int) -> bool: ...


class SegmentDirectory(Protocol):
    """What annotations need to know about segments (the read model, :mod:`.segments`)."""

    def locate(self, device: str, kind: str, name: str) -> SegmentKey:
        """The device's present segment of this kind and key file name; :class:`BadInput`
        for a name that is no key's, :class:`NotFound` for one the read model lacks."""
        ...

    def present(self, segments: list[SegmentKey]) -> set[str]:
        """The keys of ``segments`` that still exist."""
        ...


@dataclass(frozen=True, slots=True)
class AnnotationPage:
    items: list[Annotation]
    next_cursor: str | None


class Annotations:
    def __init__(
        self,
        store: AnnotationStore,
        segments: SegmentDirectory,
        *,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = new_annotation_id,
    ) -> None:
        self.store = store
        self.segments = segments
        self._clock = clock
        self._new_id = new_id

    # -- changes --------------------------------------------------------------------------

    def create(self, device: str, draft: Draft, by: str) -> Annotation:
        """A new annotation at version 1: one transaction (plus finding a target segment:
        one GetItem and one HEAD)."""
        now = self._now()
        annotation = Annotation(
            annotation_id=self._new_id(),
            device=device,
            target=self._resolve(device, draft, None),
            description=draft.description,
            status=draft.status,
            tags=draft.tags,
            version=1,
            created_at=now,
            created_by=by,
            updated_at=now,
            updated_by=by,
        )
        try:
            self._commit(annotation, None, "create")
        except (VersionTaken, WriteCollided):  # a fresh random id: never in practice
            raise Conflict("an annotation with this id was just created; retry") from None
        return dataclasses.replace(annotation, segment_present=_present_if_segment(annotation))

    def replace(
        self, device: str, annotation_id: str, draft: Draft, accepted: set[int], by: str
    ) -> Annotation:
        """Version n+1 replacing version n, if ``accepted`` (If-Match) names n: one Query,
        one transaction (a new target segment: as :meth:`create`)."""

        def change(current: Annotation) -> Annotation:
            return dataclasses.replace(
                current,
                target=self._resolve(device, draft, current),
                description=draft.description,
                status=draft.status,
                tags=draft.tags,
                version=current.version + 1,
                updated_at=self._now(),
                updated_by=by,
            )

        changed = self._change(device, annotation_id, accepted, change, "update")
        return self._with_presence([changed])[0]

    def delete(self, device: str, annotation_id: str, accepted: set[int], by: str) -> None:
        """A last version marked deleted (the history stays); the window copies go."""

        def change(current: Annotation) -> Annotation:
            return dataclasses.replace(
                current,
                version=current.version + 1,
                updated_at=self._now(),
                updated_by=by,
                deleted=True,
            )

        self._change(device, annotation_id, accepted, change, "delete")

    def _change(
        self,
        device: str,
        annotation_id: str,
        accepted: set[int],
        change: Callable[[Annotation], Annotation],
        op: str,
    ) -> Annotation:
        for attempt in range(MAX_ATTEMPTS):
            current = self.current(device, annotation_id)
            check_precondition(current, accepted)
            changed = change(current)
            if changed.version > MAX_VERSION:
                raise Conflict(f"annotation {annotation_id} has reached its last version")
            try:
                self._commit(changed, current, op)
            except VersionTaken:
                raise PreconditionFailed(
                    f"annotation {annotation_id} changed while you saved (it was at "
                    f"version {current.version}): read it again"
                ) from None
            except WriteCollided:  # cancelled for a simultaneous change: re-read, 412 or retry
                _back_off(attempt)
                continue
            return changed
        raise TransientError(f"annotation {annotation_id} is being changed by others; retry")

    def _commit(self, new: Annotation, previous: Annotation | None, op: str) -> None:
        """One transaction: the new version item (if absent), the window copies it implies."""
        copies = {} if new.deleted else {sk: new.attributes() for sk in window_sks(new)}
        removals = window_sks(previous) if previous is not None and not previous.deleted else []
        next_after = previous.version + 1 if previous is not None else 1
        absent = [] if new.version == next_after else [version_sk(new.annotation_id, next_after)]
        self.store.write(
            Change(
                device=new.device,
                version_sk=version_sk(new.annotation_id, new.version),
                version={**new.attributes(), "op": op},
                copies=copies,
                removals=removals,
                absent=absent,
            )
        )

    def _resolve(self, device: str, draft: Draft, current: Annotation | None) -> Target:
        if draft.segment is None:
            return Target.of_range(draft.from_ms, draft.to_ms)
        if current is not None and current.target.ref == draft.segment:
            return current.target  # the same segment, even if it is gone by now
        ref = draft.segment
        return Target.of_segment(self.segments.locate(device, ref.kind, ref.name))

    def _now(self) -> str:
        return iso_ms(int(self._clock() * 1000))

    # -- reading --------------------------------------------------------------------------

    def current(self, device: str, annotation_id: str) -> Annotation:
        """The current version (one strongly consistent Query); :class:`NotFound` if the
        annotation never existed or was deleted."""
        item = self.store.latest_version(device, annotation_id)
        if item is None:
            raise NotFound("annotation_id", f"no annotation {annotation_id} for device {device}")
        annotation = Annotation.of_attributes(item)
        if annotation.deleted:
            raise NotFound("annotation_id", f"annotation {annotation_id} was deleted")
        return annotation

    def get(self, device: str, annotation_id: str) -> Annotation:
        """The current version with ``segment_present``: one Query, one BatchGetItem for a
        segment target."""
        return self._with_presence([self.current(device, annotation_id)])[0]

    def window(
        self,
        device: str,
        start_ms: int,
        end_ms: int,
        *,
        status: str | None = None,
        tag: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> AnnotationPage:
        """Annotations whose target intersects ``[start_ms, end_ms)``, in start order,
        ``limit`` at a time: one Query per MB read, plus one BatchGetItem per page with
        segment targets (``segment_present``)."""
        read = WindowRead.of(start_ms, end_ms)
        after = self._window_position(cursor, read)
        items: list[Annotation] = []
        last: str | None = None
        for sk, annotation in self._intersecting(device, start_ms, end_ms, read, after):
            if status is not None and annotation.status != status:
                continue
            if tag is not None and tag not in annotation.tags:
                continue
            if len(items) == limit:
                assert last is not None
                return AnnotationPage(self._with_presence(items), encode_cursor({"after": last}))
            items.append(annotation)
            last = sk
        return AnnotationPage(self._with_presence(items), None)

    def _intersecting(
        self, device: str, start_ms: int, end_ms: int, read: WindowRead, after: str | None
    ) -> Iterator[tuple[str, Annotation]]:
        low = read.low if after is None else after + "\0"
        for item in self.store.window(device, low, read.high):
            sk = str(item["sk"])
            if not read.counts(sk):
                continue  # a redundant carry
            annotation = Annotation.of_attributes(item)
            if annotation.target.intersects(start_ms, end_ms):
                yield sk, annotation

    @staticmethod
    def _window_position(cursor: str | None, read: WindowRead) -> str | None:
        if cursor is None:
            return None
        after = decode_cursor(cursor, {"after": str})["after"]
        if not read.contains(after):
            raise BadInput("cursor", "does not belong to this window")
        return str(after)

    def history(
        self, device: str, annotation_id: str, *, limit: int = 100, cursor: str | None = None
    ) -> AnnotationPage:
        """Every version, oldest first, a deleted annotation's too: one Query per page."""
        after: str | None = None
        if cursor is not None:
            version = decode_cursor(cursor, {"after": int})["after"]
            if not 1 <= version <= MAX_VERSION:
                raise BadInput("cursor", "is not a cursor this API issued")
            after = version_sk(annotation_id, version)
        versions = [
            Annotation.of_attributes(item)
            for _, item in zip(
                range(limit + 1),
                self.store.versions(device, annotation_id, after, limit + 1),
                strict=False,
            )
        ]
        if not versions and cursor is None:
            raise NotFound("annotation_id", f"no annotation {annotation_id} for device {device}")
        page, rest = versions[:limit], versions[limit:]
        next_cursor = encode_cursor({"after": page[-1].version}) if rest else None
        return AnnotationPage(page, next_cursor)

    def for_entries(
        self, device: str, entries: Sequence[SegmentSpan]
    ) -> dict[str, list[Annotation]]:
        """The join (docs/annotations.md): per segment entry (by key), the annotations that
        target it or a range intersecting it. One Query for the whole page."""
        if not entries:
            return {}
        start_ms = min(e.start_ms for e in entries)
        end_ms = max(max(e.end_ms for e in entries), max(e.start_ms for e in entries) + 1)
        read = WindowRead.of(start_ms, end_ms)
        found = [a for _, a in self._intersecting(device, start_ms, end_ms, read, None)]
        by_segment: dict[str, list[Annotation]] = {}
        ranges: list[Annotation] = []
        for annotation in found:
            segment_key = annotation.target.segment_key
            if segment_key is None:
                ranges.append(annotation)
            else:
                present = dataclasses.replace(annotation, segment_present=True)
                by_segment.setdefault(segment_key, []).append(present)
        joined: dict[str, list[Annotation]] = {}
        for entry in entries:
            mine = by_segment.get(entry.key, []) + [
                a for a in ranges if entry.intersects(a.target.start_ms, a.target.end_ms)
            ]
            joined[entry.key] = sorted(mine, key=lambda a: (a.target.start_ms, a.annotation_id))
        return joined

    def export(self, device: str | None) -> Iterator[Annotation]:
        """Every current annotation of a device (one Query per MB), or of the whole table
        (a Scan: for the command line, not the API)."""
        items = self.store.all_window_items(device) if device else self.store.scan_window_items()
        for item in items:
            if is_anchor(str(item["sk"])):
                yield Annotation.of_attributes(item)

    def _with_presence(self, annotations: list[Annotation]) -> list[Annotation]:
        """``segment_present`` for the segment targets: one BatchGetItem (none without)."""
        keys = {
            key: segment_of_key(key, a.device, None, "segment_key")
            for a in annotations
            if (key := a.target.segment_key) is not None
        }
        present = self.segments.present(list(keys.values())) if keys else set()
        return [
            dataclasses.replace(a, segment_present=a.target.segment_key in present)
            if a.target.segment_key is not None
            else a
            for a in annotations
        ]

    # -- import ---------------------------------------------------------------------------

    def import_one(self, annotation: Annotation) -> tuple[OutcomeName, str]:
        """Write one annotation as exported, idempotently: (outcome, detail).

        ``created`` or ``updated`` (the file's version is newer), ``unchanged`` (the
        same version with the same content), ``refused`` (the table holds a newer
        version, or the same version with other content: nothing is overwritten).
        """
        for attempt in range(MAX_ATTEMPTS):
            item = self.store.latest_version(annotation.device, annotation.annotation_id)
            current = Annotation.of_attributes(item) if item else None
            if current is not None and current.version >= annotation.version:
                if current.version > annotation.version:
                    return "refused", f"the table holds a newer version ({current.version})"
                if current.content() == annotation.content():
                    return "unchanged", f"version {current.version}"
                return "refused", f"version {current.version} in the table says otherwise"
            try:
                self._commit(annotation, current, "import")
            except VersionTaken:
                return "refused", "changed in the table while importing"
            except WriteCollided:
                _back_off(attempt)
                continue
            return ("updated" if current else "created"), f"version {annotation.version}"
        raise TransientError(f"annotation {annotation.annotation_id} is busy; retry")


def _back_off(attempt: int) -> None:
    time.sleep(random.uniform(0, _BACKOFF_SECONDS * (attempt + 1)))


def _present_if_segment(annotation: Annotation) -> bool | None:
    return True if annotation.target.segment is not None else None
