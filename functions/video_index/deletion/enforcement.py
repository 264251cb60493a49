"""No resurrection (docs/deletion.md): what appears inside a recorded window is deleted again.

A deletion request is what a person decided, so it holds for objects that appear
later too — a camera retrying an old upload, a copy restored from a replica. The
:class:`Enforcer` answers "does a window in force cover this key?" from the
deletion requests table (one strongly consistent Query per device, cached for one
batch only, so a request recorded a moment ago applies to the next batch) and
deletes such an object again the way its window says: a delete marker, or with
``erase`` every version — unless a hold covers it: holds win over deletion requests
(docs/holds.md), so right before such a delete the device's holds are read (strongly
consistent) and a held object is kept and counted as held instead. Each enforced
delete and each held object is logged and counted; the callers publish the counts as
the ``DeletionEnforced`` and ``DeletionHeld`` metrics.

Used by ingest (before an object is projected: it is never counted), by reconcile
(on the repair side: a partition's listing is enforced before it is compared) and
by restore (a covered object is not copied back, unless a hold keeps it: :meth:`judge`).
"""

from __future__ import annotations

from enum import StrEnum

from aws_lambda_powertools import Logger

from video_index.aws.deletions import DeletionTable
from video_index.aws.objects import ObjectStore
from video_index.core.holding import HeldWindows, is_held
from video_index.core.keys import SegmentKey
from video_index.deletion.model import Window

logger = Logger(child=True)


class Verdict(StrEnum):
    """What enforcement did with one object."""

    #: No window in force covers it: it stays, and counts.
    FREE = "free"
    #: A window covers it and no hold: deleted again (or, dry, would be).
    ENFORCED = "enforced"
    #: A window covers it but a hold keeps it: it stays, and counts.
    HELD = "held"


class Enforcer:
    """The windows in force, and the deletes that keep them in force (around the holds)."""

    def __init__(self, table: DeletionTable, objects: ObjectStore, holds: HeldWindows) -> None:
        self._table = table
        self._objects = objects
        self._holds = holds
        self._windows: dict[str, list[Window]] = {}
        #: Objects deleted again since this enforcer was made.
        self.enforced = 0
        #: Objects a window covers that a hold kept, since this enforcer was made.
        self.held = 0

    def start_batch(self) -> None:
        """Forget the windows read so far: the next key reads its device's windows anew."""
        self._windows.clear()

    def windows(self, device: str) -> list[Window]:
        """The windows in force for ``device`` (read once per batch)."""
        if device not in self._windows:
            self._windows[device] = [
                Window.of_item(device, item) for item in self._table.windows(device)
            ]
        return self._windows[device]

    def all_windows(self) -> list[Window]:
        """Every window in force, of every device (reconcile's enforcement partitions)."""
        return [
            Window.of_item(str(item["pk"]).split("#", 1)[1], item)
            for item in self._table.all_windows()
        ]

    def window_of(self, segment: SegmentKey) -> Window | None:
        """The first window in force that covers ``segment``, if any."""
        return next((w for w in self.windows(segment.device) if w.covers(segment)), None)

    def judge(self, segment: SegmentKey) -> Verdict:
        """Whether a window in force covers ``segment`` and, if so, whether a hold keeps
        it (the holds read now); restore copies back what is free or held."""
        if self.window_of(segment) is None:
            return Verdict.FREE
        return Verdict.HELD if is_held(self._holds, segment) else Verdict.ENFORCED

    def enforce(self, segment: SegmentKey, *, by: str, dry_run: bool = False) -> Verdict:
        """Delete ``segment``'s object again if a window covers it and no hold does.

        ``by`` names the caller in the log (ingest, reconcile). The holds are read right
        before the delete, so a hold committed a moment ago keeps the object. Deleting
        what is gone already changes nothing: no second delete marker is made for it.
        """
        window = self.window_of(segment)
        if window is None:
            return Verdict.FREE
        if self.judge(segment) is Verdict.HELD:
            self.held += 1
            logger.info(
                "object inside a recorded deletion window kept: a hold covers it",
                extra={"key": segment.key, "deletion_id": window.deletion_id, "by": by},
            )
            return Verdict.HELD
        if not dry_run:
            self.delete(segment.key, window)
        self.enforced += 1
        logger.warning(
            "object inside a recorded deletion window would be deleted again (dry run)"
            if dry_run
            else "object inside a recorded deletion window deleted again",
            extra={
                "key": segment.key,
                "deletion_id": window.deletion_id,
                "erase": window.erase,
                "by": by,
                "dry_run": dry_run,
            },
        )
        return Verdict.ENFORCED

    def delete(self, key: str, window: Window) -> None:
        if window.erase:
            versions = [(v.key, v.version_id) for v in self._objects.versions(key) if v.key == key]
            if versions:
                self._objects.delete_versions(versions)
        elif self._objects.head(key).present:
            self._objects.delete([key])
