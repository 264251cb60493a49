"""Writing S3 Inventory reports the way AWS does, into a (moto) bucket.

The layout, manifest and file formats follow the S3 User Guide ("Locating your inventory
list", "What's included in an Amazon S3 inventory?"):

    <prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/manifest.json
    <prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/manifest.checksum
    <prefix>/<source-bucket>/<config-id>/data/<uuid>.csv.gz | .parquet | .orc

The data files (CSV, Parquet, ORC, as AWS writes them) are :mod:`worlds.inventory_files`.

Rows are written in groups of ``rows_per_group`` as they come, so a report of any size
is produced from a generator without holding its rows (``write_inventory_stream``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from worlds.inventory_files import EXTENSIONS, FORMATS, DataFile, Row, file_schema, md5_and_size


def report_folder(created: datetime) -> str:
    """The report's timestamp folder, ``YYYY-MM-DDTHH-MMZ`` in UTC."""
    return created.astimezone(UTC).strftime("%Y-%m-%dT%H-%MZ")


def destination_base(prefix: str, source_bucket: str, config_id: str) -> str:
    return "/".join(part for part in (prefix.strip("/"), source_bucket, config_id) if part)


def destination_uri(dest_bucket: str, prefix: str, source_bucket: str, config_id: str) -> str:
    """What reconcile is configured with: ``s3://dest/<prefix>/<source>/<config-id>/``."""
    return f"s3://{dest_bucket}/{destination_base(prefix, source_bucket, config_id)}/"


class _Report:
    """Uploads data files as they are finished, then the manifest and its checksum."""

    def __init__(
        self,
        s3: Any,
        *,
        dest_bucket: str,
        prefix: str,
        source_bucket: str,
        config_id: str,
        fmt: str,
        created: datetime,
        versioned: bool,
        row_bucket: str | None,
        quote_safe: str,
        orc_stripe_bytes: int,
        tmp_dir: str | None,
    ) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"fmt must be one of {FORMATS}, not {fmt!r}")
        self.s3 = s3
        self.dest_bucket = dest_bucket
        self.source_bucket = source_bucket
        self.base = destination_base(prefix, source_bucket, config_id)
        self.fmt = fmt
        self.created = created
        self.versioned = versioned
        self.row_bucket = row_bucket or source_bucket
        self.quote_safe = quote_safe
        self.orc_stripe_bytes = orc_stripe_bytes
        self.tmp_dir = tmp_dir
        self.files: list[dict[str, Any]] = []

    def new_file(self) -> DataFile:
        return DataFile(
            self.fmt,
            bucket=self.row_bucket,
            versioned=self.versioned,
            quote_safe=self.quote_safe,
            orc_stripe_bytes=self.orc_stripe_bytes,
            tmp_dir=self.tmp_dir,
        )

    def finish_file(self, data_file: DataFile) -> None:
        data_file.close()
        try:
            md5, size = md5_and_size(data_file.path)
            key = f"{self.base}/data/{uuid.uuid4()}{EXTENSIONS[self.fmt]}"
            self.s3.upload_file(data_file.path, self.dest_bucket, key)
        finally:
            os.unlink(data_file.path)
        self.files.append({"key": key, "size": size, "MD5checksum": md5})

    def publish(self, *, with_checksum: bool) -> str:
        manifest = {
            "sourceBucket": self.source_bucket,
            "destinationBucket": f"arn:aws:s3:::{self.dest_bucket}",
            "version": "2016-11-30",
            "creationTimestamp": str(int(self.created.timestamp() * 1000)),
            "fileFormat": self.fmt,
            "fileSchema": file_schema(self.fmt, versioned=self.versioned),
            "files": self.files,
        }
        folder = f"{self.base}/{report_folder(self.created)}"
        body = json.dumps(manifest, indent=4).encode()
        self.s3.put_object(Bucket=self.dest_bucket, Key=f"{folder}/manifest.json", Body=body)
        if with_checksum:
            self.s3.put_object(
                Bucket=self.dest_bucket,
                Key=f"{folder}/manifest.checksum",
                Body=hashlib.md5(body, usedforsecurity=False).hexdigest().encode(),
            )
        return f"s3://{self.dest_bucket}/{folder}/manifest.json"


def write_inventory(
    s3: Any,
    *,
    dest_bucket: str,
    prefix: str,
    source_bucket: str,
    config_id: str,
    objects: Iterable[Row],
    fmt: str,
    files: int = 1,
    created: datetime,
    with_checksum: bool = True,
    versioned: bool = False,
    row_bucket: str | None = None,
    quote_safe: str = "",
    rows_per_group: int = 65536,
    orc_stripe_bytes: int = 64 * 1024 * 1024,
    tmp_dir: str | None = None,
) -> str:
    """Write a report whose rows are dealt round-robin over ``files`` data files.

    ``row_bucket`` writes another bucket name into the rows than the manifest's
    ``sourceBucket`` (a wrong-bucket report). ``quote_safe`` is passed to ``quote_plus``
    for CSV keys. Returns the ``s3://`` URI of ``manifest.json``.
    """
    if files < 1:
        raise ValueError("files must be at least 1")
    report = _Report(
        s3,
        dest_bucket=dest_bucket,
        prefix=prefix,
        source_bucket=source_bucket,
        config_id=config_id,
        fmt=fmt,
        created=created,
        versioned=versioned,
        row_bucket=row_bucket,
        quote_safe=quote_safe,
        orc_stripe_bytes=orc_stripe_bytes,
        tmp_dir=tmp_dir,
    )
    writers = [report.new_file() for _ in range(files)]
    buffers: list[list[Row]] = [[] for _ in range(files)]
    try:
        for index, row in enumerate(objects):
            buffer = buffers[index % files]
            buffer.append(row)
            if len(buffer) >= rows_per_group:
                writers[index % files].write(buffer)
                buffer.clear()
        for writer, buffer in zip(writers, buffers, strict=True):
            writer.write(buffer)
            report.finish_file(writer)
    except BaseException:
        for writer in writers:
            if os.path.exists(writer.path):
                writer.close()
                os.unlink(writer.path)
        raise
    return report.publish(with_checksum=with_checksum)


def write_inventory_stream(
    s3: Any,
    *,
    dest_bucket: str,
    prefix: str,
    source_bucket: str,
    config_id: str,
    objects: Iterable[Row],
    fmt: str,
    created: datetime,
    rows_per_file: int = 1_000_000,
    rows_per_group: int = 65536,
    with_checksum: bool = True,
    orc_stripe_bytes: int = 64 * 1024 * 1024,
    tmp_dir: str | None = None,
) -> str:
    """Write a big report from a generator: a new data file every ``rows_per_file`` rows,
    each written in groups of ``rows_per_group``; only one group is ever held."""
    if rows_per_file < 1 or rows_per_group < 1:
        raise ValueError("rows_per_file and rows_per_group must be at least 1")
    report = _Report(
        s3,
        dest_bucket=dest_bucket,
        prefix=prefix,
        source_bucket=source_bucket,
        config_id=config_id,
        fmt=fmt,
        created=created,
        versioned=False,
        row_bucket=None,
        quote_safe="",
        orc_stripe_bytes=orc_stripe_bytes,
        tmp_dir=tmp_dir,
    )
    writer = report.new_file()
    buffer: list[Row] = []
    try:
        for row in objects:
            buffer.append(row)
            if len(buffer) >= rows_per_group or writer.rows + len(buffer) >= rows_per_file:
                writer.write(buffer)
                buffer.clear()
                if writer.rows >= rows_per_file:
                    report.finish_file(writer)
                    writer = report.new_file()
        if buffer or writer.rows or not report.files:
            writer.write(buffer)
            report.finish_file(writer)
        else:
            writer.close()
            os.unlink(writer.path)
    except BaseException:
        if os.path.exists(writer.path):
            writer.close()
            os.unlink(writer.path)
        raise
    return report.publish(with_checksum=with_checksum)


def rewrite_manifest(
    s3: Any,
    uri: str,
    mutate: Callable[[dict[str, Any]], None],
    *,
    update_checksum: bool = True,
) -> None:
    """Change a published manifest in place (and, by default, its checksum with it)."""
    bucket, _, key = uri[len("s3://") :].partition("/")
    document = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    mutate(document)
    body = json.dumps(document, indent=4).encode()
    s3.put_object(Bucket=bucket, Key=key, Body=body)
    if update_checksum:
        s3.put_object(
            Bucket=bucket,
            Key=key.rpartition("/")[0] + "/manifest.checksum",
            Body=hashlib.md5(body, usedforsecurity=False).hexdigest().encode(),
        )


def replace_object(s3: Any, bucket: str, key: str, change: Callable[[bytes], bytes]) -> None:
    """Overwrite an object with ``change(old bytes)`` (to corrupt a data file)."""
    old = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    s3.put_object(Bucket=bucket, Key=key, Body=io.BytesIO(change(old)))
