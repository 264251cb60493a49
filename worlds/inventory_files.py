"""The data files of an S3 Inventory report, written the way AWS writes them (the S3 User
Guide, "What's included in an Amazon S3 inventory?"): CSV gzip, no header, every field
quoted, keys URL-encoded form style (``quote_plus``); Parquet (Snappy) and ORC (ZLIB) with
the AWS column names and types (``size`` int64, ``last_modified_date`` timestamp in
milliseconds, ``e_tag`` string), keys as they are. The report around them (manifest,
checksum, upload) is :mod:`worlds.inventory_fixtures`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import os
import tempfile
import uuid
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote_plus

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

FORMATS: Final = ("CSV", "Parquet", "ORC")
EXTENSIONS: Final = {"CSV": ".csv.gz", "Parquet": ".parquet", "ORC": ".orc"}

#: (key, size, etag, last_modified) — or, for a report with versions,
#: (key, size, etag, last_modified, is_latest, is_delete_marker).
Row = tuple[Any, ...]

CSV_COLUMNS: Final = ("Bucket", "Key", "Size", "LastModifiedDate", "ETag")
CSV_VERSIONED_COLUMNS: Final = (
    "Bucket",
    "Key",
    "VersionId",
    "IsLatest",
    "IsDeleteMarker",
    "Size",
    "LastModifiedDate",
    "ETag",
)


def file_schema(fmt: str, *, versioned: bool = False) -> str:
    """The manifest's ``fileSchema`` string, as AWS spells it for each format."""
    if fmt == "CSV":
        return ", ".join(CSV_VERSIONED_COLUMNS if versioned else CSV_COLUMNS)
    if fmt == "Parquet":
        fields = ["required binary bucket (UTF8)", "required binary key (UTF8)"]
        if versioned:
            fields += [
                "optional binary version_id (UTF8)",
                "optional boolean is_latest",
                "optional boolean is_delete_marker",
            ]
        fields += [
            "optional int64 size",
            "optional int64 last_modified_date (TIMESTAMP_MILLIS)",
            "optional binary e_tag (UTF8)",
        ]
        return "message s3.inventory { " + "; ".join(fields) + "; }"
    columns = ["bucket:string", "key:string"]
    if versioned:
        columns += ["version_id:string", "is_latest:boolean", "is_delete_marker:boolean"]
    columns += ["size:bigint", "last_modified_date:timestamp", "e_tag:string"]
    return "struct<" + ",".join(columns) + ">"


def _arrow_schema(fmt: str, versioned: bool) -> pa.Schema:
    # Parquet keeps the instant in UTC (TIMESTAMP_MILLIS); ORC's "timestamp" has no zone.
    stamp = pa.timestamp("ms", tz="UTC") if fmt == "Parquet" else pa.timestamp("ms")
    fields = [pa.field("bucket", pa.string(), False), pa.field("key", pa.string(), False)]
    if versioned:
        fields += [
            pa.field("version_id", pa.string()),
            pa.field("is_latest", pa.bool_()),
            pa.field("is_delete_marker", pa.bool_()),
        ]
    fields += [
        pa.field("size", pa.int64()),
        pa.field("last_modified_date", stamp),
        pa.field("e_tag", pa.string()),
    ]
    return pa.schema(fields)


class DataFile:
    """One data file being written to a local temporary file."""

    def __init__(
        self,
        fmt: str,
        *,
        bucket: str,
        versioned: bool,
        quote_safe: str,
        orc_stripe_bytes: int,
        tmp_dir: str | None,
    ) -> None:
        self.fmt = fmt
        self.bucket = bucket
        self.versioned = versioned
        self.quote_safe = quote_safe
        handle, self.path = tempfile.mkstemp(suffix=EXTENSIONS[fmt], dir=tmp_dir)
        os.close(handle)
        self.rows = 0
        self._csv_text: Any = None
        self._csv: Any = None
        self._writer: Any = None
        self._schema = _arrow_schema(fmt, versioned)
        if fmt == "CSV":
            # Closed by close(): the file outlives this constructor.
            self._csv_text = gzip.open(self.path, "wt", encoding="utf-8", newline="")  # noqa: SIM115
            self._csv = csv.writer(self._csv_text, quoting=csv.QUOTE_ALL, lineterminator="\n")
        elif fmt == "Parquet":
            self._writer = pq.ParquetWriter(self.path, self._schema, compression="snappy")
        else:
            self._writer = orc.ORCWriter(
                self.path, compression="zlib", stripe_size=orc_stripe_bytes
            )

    def write(self, rows: list[Row]) -> None:
        if not rows:
            return
        self.rows += len(rows)
        if self.fmt == "CSV":
            self._csv.writerows(self._csv_row(row) for row in rows)
            return
        columns: dict[str, list[Any]] = {name: [] for name in self._schema.names}
        for row in rows:
            key, size, etag, modified, latest, marker = _unpack(row, self.versioned)
            columns["bucket"].append(self.bucket)
            columns["key"].append(key)
            if self.versioned:
                columns["version_id"].append(uuid.uuid4().hex)
                columns["is_latest"].append(latest)
                columns["is_delete_marker"].append(marker)
            columns["size"].append(size)
            columns["last_modified_date"].append(_utc(modified, naive=self.fmt == "ORC"))
            columns["e_tag"].append(etag)
        table = pa.table(columns, schema=self._schema)
        if self.fmt == "Parquet":
            self._writer.write_table(table)
        else:
            self._writer.write(table)

    def _csv_row(self, row: Row) -> list[str]:
        key, size, etag, modified, latest, marker = _unpack(row, self.versioned)
        fields = [self.bucket, quote_plus(key, safe=self.quote_safe)]
        if self.versioned:
            fields += [uuid.uuid4().hex, "true" if latest else "false", str(marker).lower()]
        fields += [
            "" if size is None else str(size),
            "" if modified is None else _iso_ms(modified),
            etag or "",
        ]
        return fields

    def close(self) -> None:
        if self._csv_text is not None:
            self._csv_text.close()
            return
        if self.fmt == "ORC" and self.rows == 0:
            # pyarrow leaves a 0-byte file when nothing was written; a real ORC file
            # without rows still has its footer.
            self._writer.write(self._schema.empty_table())
        self._writer.close()


def _unpack(row: Row, versioned: bool) -> tuple[Any, ...]:
    if versioned:
        if len(row) != 6:
            raise ValueError(f"a versioned row has 6 fields, not {len(row)}: {row!r}")
        return tuple(row)
    if len(row) != 4:
        raise ValueError(f"a row is (key, size, etag, last_modified), not {row!r}")
    return (*row, True, False)


def _utc(moment: datetime | None, *, naive: bool) -> datetime | None:
    if moment is None:
        return None
    moment = moment.astimezone(UTC)
    return moment.replace(tzinfo=None) if naive else moment


def _iso_ms(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def md5_and_size(path: str) -> tuple[str, int]:
    digest = hashlib.md5(usedforsecurity=False)
    size = 0
    with open(path, "rb") as data:
        while chunk := data.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size
