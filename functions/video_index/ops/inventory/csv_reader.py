"""CSV data files of an S3 Inventory report, row by row through ``gzip`` and ``csv``.

Key encoding. The S3 User Guide ("What's included in an Amazon S3 inventory?") says:
"When using the CSV file format, the key name is URL-encoded and must be decoded before
you can use it." The guide does not name the flavour of URL encoding. Users of real
reports describe it as form style, a space written as ``+`` (e.g. cloud-custodian issue
#1997, "URL-encoded with space encoded as plus"), the same as S3 event notifications
(docs/ingest.md). So CSV keys are decoded with ``unquote_plus``: ``+`` → space, ``%2B`` →
``+``, ``%XX`` → UTF-8 bytes; a ``/`` left unencoded decodes to itself.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Final
from urllib.parse import unquote_plus

from video_index.ops.inventory.model import (
    BUCKET,
    ETAG,
    IS_DELETE_MARKER,
    IS_LATEST,
    KEY,
    LAST_MODIFIED,
    SIZE,
    WANTED,
    InventoryBatch,
    InventoryError,
    Manifest,
    ManifestFile,
    canonical,
    wrong_bucket,
)

_GZIP_MAGIC: Final = b"\x1f\x8b"


def csv_batches(
    path: str, manifest: Manifest, data_file: ManifestFile, batch: int, noncurrent: bool
) -> Iterator[InventoryBatch]:
    where = f"data file s3://{manifest.destination_bucket}/{data_file.key}"
    columns = [canonical(name) for name in manifest.file_schema]
    width = len(columns)
    index = {name: columns.index(name) for name in WANTED if name in columns}
    i_bucket, i_key = index[BUCKET], index[KEY]
    i_size = index.get(SIZE)
    i_modified = index.get(LAST_MODIFIED)
    i_etag = index.get(ETAG)
    i_latest = index.get(IS_LATEST)
    i_marker = index.get(IS_DELETE_MARKER)
    source = manifest.source_bucket
    keys: list[str] = []
    sizes: list[int | None] = []
    etags: list[str | None] = []
    modified: list[datetime | None] = []
    latest_flags: list[bool] = []
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == _GZIP_MAGIC
    opener = gzip.open if gzipped else open
    with opener(path, "rt", encoding="utf-8", newline="") as text:
        for line, row in enumerate(csv.reader(text), start=1):
            if len(row) != width:
                if not row:
                    continue
                raise InventoryError(
                    f"{where}, row {line}: {len(row)} fields, fileSchema has {width}"
                )
            if row[i_bucket] != source:
                wrong_bucket(manifest, data_file, line, row[i_bucket])
            if i_marker is not None and row[i_marker].lower() == "true":
                continue
            latest = i_latest is None or row[i_latest].lower() != "false"
            if not latest and not noncurrent:
                continue
            try:
                key = unquote_plus(row[i_key], encoding="utf-8", errors="strict")
            except UnicodeDecodeError as exc:
                raise InventoryError(f"{where}, row {line}: Key is not UTF-8 once decoded") from exc
            if not key:
                raise InventoryError(f"{where}, row {line}: empty Key")
            keys.append(key)
            sizes.append(_csv_int(where, line, row[i_size]) if i_size is not None else None)
            etags.append((row[i_etag].strip('"') or None) if i_etag is not None else None)
            modified.append(
                _csv_time(where, line, row[i_modified]) if i_modified is not None else None
            )
            latest_flags.append(latest)
            if len(keys) >= batch:
                yield InventoryBatch(keys, sizes, etags, modified, latest_flags)
                keys, sizes, etags, modified, latest_flags = [], [], [], [], []
    if keys:
        yield InventoryBatch(keys, sizes, etags, modified, latest_flags)


def _csv_int(where: str, line: int, value: str) -> int | None:
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise InventoryError(f"{where}, row {line}: Size {value!r} is not a number") from None


def _csv_time(where: str, line: int, value: str) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InventoryError(
            f"{where}, row {line}: LastModifiedDate {value!r} is not ISO 8601"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
