"""Finding and reading the manifest of an S3 Inventory report.

A report is found through its ``manifest.json``. AWS publishes it as (S3 User Guide,
"Locating your inventory list")::

    <prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/manifest.json
    <prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/manifest.checksum  (MD5 of manifest.json)
    <prefix>/<source-bucket>/<config-id>/data/<uuid>.csv.gz | .parquet | .orc

The manifest names the source bucket, the destination bucket (as an ARN), the creation
time (epoch milliseconds, as a string), the file format (``CSV``, ``Parquet`` or
``ORC``), the schema (``fileSchema``) and the data files (``files[]`` with ``key``,
``size`` and ``MD5checksum``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Final

from video_index.aws.objects import ObjectStore, ObjectStoreError, TransientObjectStoreError
from video_index.ops.inventory.model import (
    BUCKET,
    KEY,
    InventoryError,
    Manifest,
    ManifestFile,
    canonical,
)

#: The ``fileFormat`` values of a manifest, by their upper-case spelling.
FORMATS: Final[dict[str, str]] = {"CSV": "CSV", "PARQUET": "Parquet", "ORC": "ORC"}
MANIFEST_NAME: Final = "manifest.json"
CHECKSUM_NAME: Final = "manifest.checksum"
#: A report folder: the time the report generation started scanning the bucket.
REPORT_FOLDER_RE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}Z$")
_MD5_RE: Final = re.compile(r"^[0-9a-fA-F]{32}$")


@contextlib.contextmanager
def reading(message: str) -> Iterator[None]:
    """Missing or forbidden objects become :class:`InventoryError` (``message: reason``);
    throttling and 5xx stay :class:`TransientObjectStoreError`, so a retry policy sees them."""
    try:
        yield
    except TransientObjectStoreError:
        raise
    except ObjectStoreError as exc:
        raise InventoryError(f"{message}: {exc}") from exc


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` → ``(bucket, key)``; the key may be empty (``s3://bucket/``)."""
    if not isinstance(uri, str) or not uri.startswith("s3://"):
        raise InventoryError(f"not an s3:// URI: {uri!r}")
    bucket, _, key = uri[len("s3://") :].partition("/")
    if not bucket:
        raise InventoryError(f"no bucket in S3 URI {uri!r}")
    return bucket, key


def find_latest_manifest(s3: Any, destination: str) -> str:
    """The newest ``manifest.json`` under ``s3://bucket/<prefix>/<source-bucket>/<config-id>/``.

    Reports are ordered by their timestamp folder (``YYYY-MM-DDTHH-MMZ`` sorts as time
    does). A folder without ``manifest.json`` (a report still being written) is skipped;
    other folders (``data/``, ``hive/``) and other configurations are never looked at.
    """
    bucket, prefix = parse_s3_uri(destination)
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    store = ObjectStore(s3, bucket)
    with reading(f"cannot list inventory reports under {destination}"):
        folders = [name for name in store.folders(prefix) if REPORT_FOLDER_RE.match(name)]
    for folder in sorted(folders, reverse=True):
        key = f"{prefix}{folder}/{MANIFEST_NAME}"
        with reading(f"{store.uri(key)} cannot be read"):
            if store.exists(key):
                return store.uri(key)
    raise InventoryError(
        f"no inventory report under {destination} (expected "
        f"<prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/{MANIFEST_NAME})"
    )


def read_manifest(
    s3: Any,
    uri: str,
    *,
    verify_checksum: bool = True,
    expect_source_bucket: str | None = None,
) -> Manifest:
    """Read and validate ``manifest.json``.

    With ``verify_checksum`` the ``manifest.checksum`` beside it (the MD5 of the manifest,
    written by S3 last) is compared when it exists. With ``expect_source_bucket`` a report
    of another bucket is refused.
    """
    bucket, key = parse_s3_uri(uri)
    store = ObjectStore(s3, bucket)
    with reading(f"manifest {uri} cannot be read"):
        body = store.get_bytes(key)
    if verify_checksum:
        folder = key.rpartition("/")[0]
        checksum_key = f"{folder}/{CHECKSUM_NAME}" if folder else CHECKSUM_NAME
        with reading(f"{store.uri(checksum_key)} cannot be read"):
            expected = store.get_optional_bytes(checksum_key)
        if expected is not None:
            want = expected.decode("ascii", "replace").strip().lower()
            got = hashlib.md5(body, usedforsecurity=False).hexdigest()
            if want != got:
                raise InventoryError(
                    f"manifest {uri}: MD5 {got} does not match {CHECKSUM_NAME} ({want!r})"
                )
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise InventoryError(f"manifest {uri} is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise InventoryError(f"manifest {uri} is not a JSON object")
    manifest = _parse_manifest(uri, document)
    if expect_source_bucket is not None and manifest.source_bucket != expect_source_bucket:
        raise InventoryError(
            f"manifest {uri}: sourceBucket is {manifest.source_bucket!r}, "
            f"not {expect_source_bucket!r}"
        )
    return manifest


def _parse_manifest(uri: str, doc: dict[str, Any]) -> Manifest:
    def text(name: str) -> str:
        value = doc.get(name)
        if not isinstance(value, str) or not value.strip():
            raise InventoryError(f"manifest {uri}: field {name!r} is missing or not a string")
        return value.strip()

    source = text("sourceBucket")
    destination = text("destinationBucket")
    if destination.startswith("arn:"):
        # arn:aws:s3:::bucket (any partition)
        parts = destination.split(":", 5)
        if len(parts) != 6 or parts[2] != "s3" or not parts[5] or "/" in parts[5]:
            raise InventoryError(f"manifest {uri}: destinationBucket {destination!r} is no ARN")
        destination = parts[5]
    fmt = FORMATS.get(text("fileFormat").upper())
    if fmt is None:
        raise InventoryError(
            f"manifest {uri}: fileFormat {doc.get('fileFormat')!r} is not CSV, Parquet or ORC"
        )
    raw_schema = text("fileSchema")
    schema = _parse_schema(uri, fmt, raw_schema)
    names = {canonical(name) for name in schema}
    for required in (BUCKET, KEY):
        if required not in names:
            raise InventoryError(f"manifest {uri}: fileSchema has no {required!r} column")

    stamp = doc.get("creationTimestamp")
    if isinstance(stamp, str) and stamp.strip().isdigit():
        millis = int(stamp.strip())
    elif isinstance(stamp, int) and not isinstance(stamp, bool):
        millis = stamp
    else:
        raise InventoryError(
            f"manifest {uri}: field 'creationTimestamp' is not epoch milliseconds: {stamp!r}"
        )
    creation = datetime.fromtimestamp(millis / 1000, tz=UTC)

    entries = doc.get("files")
    if not isinstance(entries, list):
        raise InventoryError(f"manifest {uri}: field 'files' is missing or not a list")
    files = [_parse_file(uri, index, entry) for index, entry in enumerate(entries)]
    version = doc.get("version")
    return Manifest(
        uri=uri,
        source_bucket=source,
        destination_bucket=destination,
        file_format=fmt,
        file_schema=schema,
        files=files,
        creation=creation,
        version=version if isinstance(version, str) else "",
        raw_schema=raw_schema,
    )


def _parse_file(uri: str, index: int, entry: Any) -> ManifestFile:
    where = f"manifest {uri}: files[{index}]"
    if not isinstance(entry, dict):
        raise InventoryError(f"{where} is not an object")
    key = entry.get("key")
    if not isinstance(key, str) or not key:
        raise InventoryError(f"{where}: field 'key' is missing or not a string")
    size = entry.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise InventoryError(f"{where} ({key}): field 'size' is not a byte count: {size!r}")
    md5 = entry.get("MD5checksum")
    if md5 is not None and (not isinstance(md5, str) or not _MD5_RE.match(md5)):
        raise InventoryError(f"{where} ({key}): field 'MD5checksum' is not an MD5: {md5!r}")
    return ManifestFile(key=key, size=size, md5=md5.lower() if md5 else None)


def _parse_schema(uri: str, fmt: str, raw: str) -> list[str]:
    if fmt == "CSV":
        names = [name.strip() for name in raw.split(",")]
    elif fmt == "Parquet":
        # message s3.inventory { required binary bucket (UTF8); optional int64 size; ... }
        body = raw[raw.find("{") + 1 : raw.rfind("}")] if "{" in raw else raw
        names = [
            match.group(1)
            for match in re.finditer(
                r"(?:^|;)\s*(?:required|optional|repeated)\s+\S+\s+([A-Za-z_][\w]*)", body
            )
        ]
    else:
        # struct<bucket:string,key:string,size:bigint,...>
        inner = raw.strip()
        if inner.lower().startswith("struct<") and inner.endswith(">"):
            inner = inner[len("struct<") : -1]
        names = [part.partition(":")[0].strip() for part in _split_top_level(inner)]
    if not names or any(not name for name in names):
        raise InventoryError(f"manifest {uri}: fileSchema {raw!r} cannot be parsed for {fmt}")
    return names


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts
