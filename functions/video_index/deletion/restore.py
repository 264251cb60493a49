"""Restore from a replica (docs/deletion.md): copy back what the bucket lacks, skip the rest.

A lost or emptied segment bucket is refilled from the replica bucket that
replication kept (``v1/`` only). The two listings are walked side by side in key
order (S3 lists both in the same order; memory stays flat): an object of the replica
that the bucket lacks, or holds with another size or ETag, is copied back with
CopyObject, :data:`DEFAULT_WORKERS` copies in flight (the S3 client's connection pool
is sized to match, :data:`video_index.aws.clients.S3_POOL_CONNECTIONS`: threads beyond
it would open and drop a connection per request); an identical one is skipped. So a second run
copies nothing, and a run stopped anywhere is resumed by running it again: what was
copied is identical now.

A multipart upload's ETag is not the MD5 of its bytes, and a copy may get another
one; such an object is copied with its replica ETag in its metadata
(``restored-etag``), which is what identifies it the next time.

Deletion requests hold here too: an object a window in force covers is not copied
back (:class:`~video_index.deletion.enforcement.Enforcer`) — unless a hold covers it
(the enforcer's holds, :mod:`video_index.core.holding`): held footage comes back even
inside a deletion window. The read model is not
written: it follows through the events, and the safe order ends with a rebuild.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from video_index.aws.objects import ListedObject, ObjectStore, s3_error
from video_index.core.keys import KEY_PREFIX, ValidKey, classify_key
from video_index.deletion.enforcement import Enforcer, Verdict

#: Metadata that carries the replica's ETag of a multipart object copied back.
RESTORED_ETAG: Final = "restored-etag"
SAMPLES: Final = 10
#: Copies in flight at once (boto3 clients are thread-safe; S3 scales per prefix).
DEFAULT_WORKERS: Final = 32

Progress = Callable[["RestoreReport"], None]


@dataclass
class RestoreReport:
    source: str
    target: str
    dry_run: bool
    compared: int = 0
    copied: int = 0
    bytes_copied: int = 0
    identical: int = 0
    #: Replica objects a deletion request in force covers: not copied back.
    withheld: int = 0
    #: Replica objects a deletion window covers but a hold keeps: copied back.
    held: int = 0
    samples: list[str] = field(default_factory=list)


class Restorer:
    def __init__(self, target: ObjectStore, enforcer: Enforcer | None = None) -> None:
        self._target = target
        #: The windows in force and the holds (none: a restore of everything).
        self._enforcer = enforcer

    def run(
        self,
        source_bucket: str,
        *,
        dry_run: bool = False,
        prefix: str = KEY_PREFIX,
        progress: Progress | None = None,
        workers: int = DEFAULT_WORKERS,
    ) -> RestoreReport:
        """Compare and copy back; ``workers`` copies run at once (a bounded number in
        flight, so memory stays flat). The first copy that fails stops the run after the
        copies in flight: running it again continues."""
        source = ObjectStore(self._target.client, source_bucket)
        report = RestoreReport(source=source_bucket, target=self._target.bucket, dry_run=dry_run)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            in_flight: set[Future[None]] = set()
            for wanted, held in _side_by_side(source.list(prefix), self._target.list(prefix)):
                report.compared += 1
                if held is not None and self._identical(source, wanted, held):
                    report.identical += 1
                elif self._withheld(wanted.key, report):
                    report.withheld += 1
                else:
                    if not dry_run:
                        in_flight.add(pool.submit(self._copy, source, wanted))
                        if len(in_flight) >= 2 * workers:
                            in_flight = _settle(in_flight, FIRST_COMPLETED)
                    report.copied += 1
                    report.bytes_copied += wanted.size
                    if len(report.samples) < SAMPLES:
                        report.samples.append(wanted.key)
                if progress is not None and report.compared % 100 == 0:
                    progress(report)
            _settle(in_flight, ALL_COMPLETED)
        if progress is not None:
            progress(report)
        return report

    def _identical(self, source: ObjectStore, wanted: ListedObject, held: ListedObject) -> bool:
        if wanted.size != held.size:
            return False
        if wanted.etag == held.etag:
            return True
        if "-" not in wanted.etag:
            return False
        restored = self._head(self._target, held.key).get("Metadata", {}).get(RESTORED_ETAG)
        return bool(restored == wanted.etag)

    def _withheld(self, key: str, report: RestoreReport) -> bool:
        """A deletion window covers the key and no hold does (a held one is counted)."""
        if self._enforcer is None:
            return False
        classified = classify_key(key)
        if not isinstance(classified, ValidKey):
            return False
        verdict = self._enforcer.judge(classified.segment)
        report.held += verdict is Verdict.HELD
        return verdict is Verdict.ENFORCED

    def _copy(self, source: ObjectStore, wanted: ListedObject) -> None:
        if "-" not in wanted.etag:
            self._target.copy_in(source.bucket, wanted.key, wanted.size)
            return
        head = self._head(source, wanted.key)
        extra = {
            "MetadataDirective": "REPLACE",
            "Metadata": {**head.get("Metadata", {}), RESTORED_ETAG: wanted.etag},
            "ContentType": head.get("ContentType", "binary/octet-stream"),
        }
        copy = {"Bucket": source.bucket, "Key": wanted.key}
        try:
            self._target.client.copy(copy, self._target.bucket, wanted.key, ExtraArgs=extra)
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 COPY {source.uri(wanted.key)}") from exc

    @staticmethod
    def _head(store: ObjectStore, key: str) -> dict[str, Any]:
        try:
            head: dict[str, Any] = store.client.head_object(Bucket=store.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 HEAD {store.uri(key)}") from exc
        return head


def _settle(futures: set[Future[None]], until: str) -> set[Future[None]]:
    """Wait for ``futures`` (the first, or all); raise the first failure; the rest."""
    done, pending = wait(futures, return_when=until)
    for future in done:
        error = future.exception()
        if error is not None:
            for other in pending:
                other.cancel()
            wait(pending)
            raise error
    return pending


def _side_by_side(
    wanted: Iterator[ListedObject], held: Iterator[ListedObject]
) -> Iterator[tuple[ListedObject, ListedObject | None]]:
    """Each object of ``wanted`` with the object of ``held`` under the same key, if any
    (both in S3's key order)."""
    current = next(held, None)
    for item in wanted:
        while current is not None and current.key < item.key:
            current = next(held, None)
        yield item, current if current is not None and current.key == item.key else None
