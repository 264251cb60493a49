"""The shapes of an S3 Inventory report: its manifest, its data files, its rows.

Column names are compared in a canonical form (lower case, no underscores), so
the CSV spelling of ``fileSchema`` (``LastModifiedDate``) and the Parquet/ORC one
(``last_modified_date``) meet; ``ETag``/``e_tag`` both become ``etag``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, NoReturn

from video_index.core.errors import VideoIndexError

BUCKET: Final = "bucket"
KEY: Final = "key"
SIZE: Final = "size"
LAST_MODIFIED: Final = "lastmodifieddate"
ETAG: Final = "etag"
IS_LATEST: Final = "islatest"
IS_DELETE_MARKER: Final = "isdeletemarker"
#: The columns the readers use, in canonical form.
WANTED: Final = (BUCKET, KEY, SIZE, LAST_MODIFIED, ETAG, IS_LATEST, IS_DELETE_MARKER)


class InventoryError(VideoIndexError):
    """A report that cannot be trusted or read; the message names the file and field."""


@dataclass(frozen=True, slots=True)
class InventoryObject:
    """One row of a report: an object of the source bucket as the report saw it."""

    key: str
    size: int | None
    #: Without the surrounding quotes S3 puts on ETags elsewhere.
    etag: str | None
    last_modified: datetime | None
    #: ``False`` only for a noncurrent version of a report that includes versions.
    is_latest: bool = True


@dataclass(frozen=True, slots=True)
class ManifestFile:
    """A data file of the report, in the destination bucket."""

    key: str
    size: int | None = None
    md5: str | None = None


@dataclass(frozen=True)
class Manifest:
    uri: str
    source_bucket: str
    #: The plain bucket name (the manifest gives an ARN).
    destination_bucket: str
    #: ``CSV``, ``Parquet`` or ``ORC``.
    file_format: str
    #: Column names in order (CSV) or as declared (Parquet/ORC).
    file_schema: list[str]
    files: list[ManifestFile]
    creation: datetime
    version: str = ""
    raw_schema: str = field(default="", repr=False)


@dataclass(frozen=True, slots=True)
class InventoryBatch:
    """Up to ``batch_rows`` rows of one data file, column by column (already filtered).

    The fast path for callers that only need some columns (a fingerprint needs keys and
    sizes): no per-row object is built until :meth:`objects` is called.
    """

    keys: list[str]
    sizes: list[int | None]
    etags: list[str | None]
    last_modified: list[datetime | None]
    is_latest: list[bool]

    def __len__(self) -> int:
        return len(self.keys)

    def objects(self) -> Iterator[InventoryObject]:
        return map(
            InventoryObject, self.keys, self.sizes, self.etags, self.last_modified, self.is_latest
        )


def canonical(name: str) -> str:
    return name.replace("_", "").replace(" ", "").lower()


def wrong_bucket(manifest: Manifest, data_file: ManifestFile, row: int, bucket: Any) -> NoReturn:
    raise InventoryError(
        f"data file s3://{manifest.destination_bucket}/{data_file.key}, row {row}: bucket "
        f"{bucket!r} is not the report's source bucket {manifest.source_bucket!r}"
    )
