"""Reading Amazon S3 Inventory reports, streaming (SPEC §8).

A report is found through its ``manifest.json``. AWS publishes it as (S3 User Guide,
"Locating your inventory list")::

    <prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/manifest.json
    <prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/manifest.checksum  (MD5 of manifest.json)
    <prefix>/<source-bucket>/<config-id>/data/<uuid>.csv.gz | .parquet | .orc

The manifest names the source bucket, the destination bucket (as an ARN), the creation
time (epoch milliseconds, as a string), the file format (``CSV``, ``Parquet`` or
``ORC``), the schema (``fileSchema``) and the data files (``files[]`` with ``key``,
``size`` and ``MD5checksum``).

Reading is streaming: each data file is downloaded to a temporary file while its size
and MD5 are computed, checked against the manifest *before* any of its rows is yielded,
then parsed with bounded memory (CSV row by row through ``gzip`` + ``csv``; Parquet in
record batches; ORC stripe by stripe) and deleted. Nothing here holds a list of rows:
memory depends on ``batch_rows`` and the ORC stripe size, never on the report's length.

Key encoding. The S3 User Guide ("What's included in an Amazon S3 inventory?") says:
"When using the CSV file format, the key name is URL-encoded and must be decoded before
you can use it." The guide does not name the flavour of URL encoding. Users of real
reports describe it as form style, a space written as ``+`` (e.g. cloud-custodian issue
#1997, "URL-encoded with space encoded as plus"), the same as S3 event notifications
(SPEC §4). So CSV keys are decoded with ``unquote_plus``: ``+`` → space, ``%2B`` → ``+``,
``%XX`` → UTF-8 bytes; a ``/`` left unencoded decodes to itself. Parquet and ORC keys
are stored as they are and are never decoded.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, NoReturn
from urllib.parse import unquote_plus

from botocore.exceptions import ClientError

#: The ``fileFormat`` values of a manifest, by their upper-case spelling.
FORMATS: Final[dict[str, str]] = {"CSV": "CSV", "PARQUET": "Parquet", "ORC": "ORC"}
MANIFEST_NAME: Final = "manifest.json"
CHECKSUM_NAME: Final = "manifest.checksum"
#: A report folder: the time the report generation started scanning the bucket.
REPORT_FOLDER_RE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}Z$")
DEFAULT_BATCH_ROWS: Final = 65536

_CHUNK: Final = 1 << 20
_GZIP_MAGIC: Final = b"\x1f\x8b"
_MD5_RE: Final = re.compile(r"^[0-9a-fA-F]{32}$")
_NOT_FOUND: Final = frozenset({"404", "NoSuchKey", "NoSuchBucket", "NotFound"})

# Canonical column names: lower case without underscores, so the CSV spelling of
# ``fileSchema`` (``LastModifiedDate``) and the Parquet/ORC one (``last_modified_date``)
# meet. ``ETag``/``e_tag`` both become ``etag``.
_BUCKET: Final = "bucket"
_KEY: Final = "key"
_SIZE: Final = "size"
_LAST_MODIFIED: Final = "lastmodifieddate"
_ETAG: Final = "etag"
_IS_LATEST: Final = "islatest"
_IS_DELETE_MARKER: Final = "isdeletemarker"
_WANTED: Final = (_BUCKET, _KEY, _SIZE, _LAST_MODIFIED, _ETAG, _IS_LATEST, _IS_DELETE_MARKER)


class InventoryError(Exception):
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


# --- locations ---------------------------------------------------------------------------


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
    folders: list[str] = []
    try:
        paginator = s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix, Delimiter="/"):
            for common in page.get("CommonPrefixes", []):
                name = str(common["Prefix"])[len(prefix) :].rstrip("/")
                if REPORT_FOLDER_RE.match(name):
                    folders.append(name)
    except ClientError as exc:
        _raise_client_error(f"cannot list inventory reports under {destination}", exc)
    for folder in sorted(folders, reverse=True):
        key = f"{prefix}{folder}/{MANIFEST_NAME}"
        if _exists(s3, bucket, key):
            return f"s3://{bucket}/{key}"
    raise InventoryError(
        f"no inventory report under {destination} (expected "
        f"<prefix>/<source-bucket>/<config-id>/YYYY-MM-DDTHH-MMZ/{MANIFEST_NAME})"
    )


# --- the manifest ------------------------------------------------------------------------


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
    body = _get_bytes(s3, bucket, key, what="manifest")
    if verify_checksum:
        folder = key.rpartition("/")[0]
        checksum_key = f"{folder}/{CHECKSUM_NAME}" if folder else CHECKSUM_NAME
        expected = _get_optional_bytes(s3, bucket, checksum_key)
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
    names = {_canonical(name) for name in schema}
    for required in (_BUCKET, _KEY):
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


def _canonical(name: str) -> str:
    return name.replace("_", "").replace(" ", "").lower()


# --- the rows ----------------------------------------------------------------------------


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


def iter_objects(
    s3: Any,
    manifest: Manifest,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    include_noncurrent: bool = False,
    tmp_dir: str | None = None,
) -> Iterator[InventoryObject]:
    """Every object of the report, file after file, in file order.

    Each data file is verified (size and MD5, where the manifest gives them) before any
    of its rows is yielded. Rows of another bucket than ``manifest.source_bucket`` raise
    :class:`InventoryError`. Delete markers are never objects; noncurrent versions are
    skipped unless ``include_noncurrent``.
    """
    for batch in iter_batches(
        s3,
        manifest,
        batch_rows=batch_rows,
        include_noncurrent=include_noncurrent,
        tmp_dir=tmp_dir,
    ):
        yield from batch.objects()


def iter_batches(
    s3: Any,
    manifest: Manifest,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    include_noncurrent: bool = False,
    tmp_dir: str | None = None,
) -> Iterator[InventoryBatch]:
    """The rows of :func:`iter_objects` in column batches of at most ``batch_rows`` rows."""
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    reader: Callable[[str, Manifest, ManifestFile, int, bool], Iterator[InventoryBatch]]
    reader = {"CSV": _csv_batches, "Parquet": _parquet_batches, "ORC": _orc_batches}[
        manifest.file_format
    ]
    for data_file in manifest.files:
        path = _download_verified(s3, manifest, data_file, tmp_dir)
        try:
            yield from reader(path, manifest, data_file, batch_rows, include_noncurrent)
        except InventoryError:
            raise
        except Exception as exc:
            if not isinstance(exc, _parse_errors()):
                raise
            raise InventoryError(
                f"data file s3://{manifest.destination_bucket}/{data_file.key} cannot be read "
                f"as {manifest.file_format}: {exc}"
            ) from exc
        finally:
            os.unlink(path)


def _parse_errors() -> tuple[type[Exception], ...]:
    """What a damaged data file raises while it is parsed (gzip, csv, UTF-8, pyarrow)."""
    errors: tuple[type[Exception], ...] = (OSError, EOFError, UnicodeDecodeError, csv.Error)
    try:
        from pyarrow.lib import ArrowException
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return errors
    return (*errors, ArrowException)


def _download_verified(
    s3: Any, manifest: Manifest, data_file: ManifestFile, tmp_dir: str | None
) -> str:
    """Download one data file to a temporary file, checking size and MD5 on the way."""
    uri = f"s3://{manifest.destination_bucket}/{data_file.key}"
    try:
        response = s3.get_object(Bucket=manifest.destination_bucket, Key=data_file.key)
    except ClientError as exc:
        _raise_client_error(f"data file {uri} cannot be read", exc)
    handle, path = tempfile.mkstemp(prefix="inventory-", suffix=".part", dir=tmp_dir)
    try:
        digest = hashlib.md5(usedforsecurity=False)
        size = 0
        with os.fdopen(handle, "wb") as out:
            for chunk in response["Body"].iter_chunks(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        if data_file.size is not None and size != data_file.size:
            raise InventoryError(
                f"data file {uri}: {size} bytes, the manifest says {data_file.size}"
            )
        if data_file.md5 is not None and digest.hexdigest() != data_file.md5:
            raise InventoryError(
                f"data file {uri}: MD5 {digest.hexdigest()}, the manifest says {data_file.md5}"
            )
    except BaseException:
        os.unlink(path)
        raise
    return path


def _wrong_bucket(manifest: Manifest, data_file: ManifestFile, row: int, bucket: Any) -> NoReturn:
    raise InventoryError(
        f"data file s3://{manifest.destination_bucket}/{data_file.key}, row {row}: bucket "
        f"{bucket!r} is not the report's source bucket {manifest.source_bucket!r}"
    )


def _csv_batches(
    path: str, manifest: Manifest, data_file: ManifestFile, batch: int, noncurrent: bool
) -> Iterator[InventoryBatch]:
    where = f"data file s3://{manifest.destination_bucket}/{data_file.key}"
    columns = [_canonical(name) for name in manifest.file_schema]
    width = len(columns)
    index = {name: columns.index(name) for name in _WANTED if name in columns}
    i_bucket, i_key = index[_BUCKET], index[_KEY]
    i_size = index.get(_SIZE)
    i_modified = index.get(_LAST_MODIFIED)
    i_etag = index.get(_ETAG)
    i_latest = index.get(_IS_LATEST)
    i_marker = index.get(_IS_DELETE_MARKER)
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
                _wrong_bucket(manifest, data_file, line, row[i_bucket])
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


def _parquet_batches(
    path: str, manifest: Manifest, data_file: ManifestFile, batch: int, noncurrent: bool
) -> Iterator[InventoryBatch]:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    with parquet:
        columns = _columns(parquet.schema_arrow.names, manifest, data_file)
        batches = parquet.iter_batches(batch_size=batch, columns=list(columns.values()))
        yield from _arrow_batches(batches, columns, manifest, data_file, noncurrent)


def _orc_batches(
    path: str, manifest: Manifest, data_file: ManifestFile, batch: int, noncurrent: bool
) -> Iterator[InventoryBatch]:
    import pyarrow.orc as orc

    orc_file = orc.ORCFile(path)
    columns = _columns(orc_file.schema.names, manifest, data_file)

    def batches() -> Iterator[Any]:
        # One stripe in memory at a time (AWS writes stripes of bounded size).
        for stripe in range(orc_file.nstripes):
            record_batch = orc_file.read_stripe(stripe, columns=list(columns.values()))
            for offset in range(0, record_batch.num_rows, batch):
                yield record_batch.slice(offset, batch)

    yield from _arrow_batches(batches(), columns, manifest, data_file, noncurrent)


def _columns(names: Sequence[str], manifest: Manifest, data_file: ManifestFile) -> dict[str, str]:
    """Canonical column → the file's own column name, for the columns this reader uses."""
    found = {_canonical(name): name for name in names}
    columns: dict[str, str] = {w: found[w] for w in _WANTED if w in found}
    for required in (_BUCKET, _KEY):
        if required not in columns:
            raise InventoryError(
                f"data file s3://{manifest.destination_bucket}/{data_file.key} has no "
                f"{required!r} column (columns: {', '.join(names)})"
            )
    return columns


def _arrow_batches(
    batches: Iterator[Any],
    columns: dict[str, str],
    manifest: Manifest,
    data_file: ManifestFile,
    noncurrent: bool,
) -> Iterator[InventoryBatch]:
    import pyarrow as pa
    import pyarrow.compute as pc

    where = f"data file s3://{manifest.destination_bucket}/{data_file.key}"
    position = 0
    for record_batch in batches:
        rows = record_batch.num_rows
        if rows == 0:
            continue
        data = {name: record_batch.column(columns[name]) for name in columns}
        bad = pc.invert(pc.fill_null(pc.equal(data[_BUCKET], manifest.source_bucket), False))
        if pc.any(bad).as_py():
            first = pc.index(bad, True).as_py()
            _wrong_bucket(manifest, data_file, position + first + 1, data[_BUCKET][first].as_py())
        position += rows

        keep = None
        if _IS_DELETE_MARKER in data:
            keep = pc.invert(pc.fill_null(data[_IS_DELETE_MARKER], False))
        if _IS_LATEST in data and not noncurrent:
            latest = pc.fill_null(data[_IS_LATEST], True)
            keep = latest if keep is None else pc.and_(keep, latest)
        if keep is not None:
            data = {name: pc.filter(array, keep) for name, array in data.items()}
        count = len(data[_KEY])
        if count == 0:
            continue
        if data[_KEY].null_count:
            raise InventoryError(f"{where}: a row has no key")

        nothing: list[Any] = [None] * count
        yield InventoryBatch(
            keys=data[_KEY].to_pylist(),
            sizes=data[_SIZE].cast(pa.int64()).to_pylist() if _SIZE in data else nothing,
            etags=(
                pc.utf8_trim(data[_ETAG].cast(pa.string()), '"').to_pylist()
                if _ETAG in data
                else nothing
            ),
            last_modified=(
                _arrow_times(data[_LAST_MODIFIED], where) if _LAST_MODIFIED in data else nothing
            ),
            is_latest=(
                pc.fill_null(data[_IS_LATEST], True).to_pylist()
                if _IS_LATEST in data
                else [True] * count
            ),
        )


def _arrow_times(array: Any, where: str) -> list[datetime | None]:
    """A timestamp column (any unit; int64 epoch milliseconds accepted) → aware UTC datetimes.

    Converted through epoch milliseconds (S3 times have millisecond precision) because
    pyarrow's own conversion of zoned timestamps to Python is several times slower. A
    float of seconds holds milliseconds exactly enough to round to the right microsecond
    for any date before the year 2200.
    """
    import pyarrow as pa

    kind = array.type
    if pa.types.is_timestamp(kind):
        millis = array.cast(pa.timestamp(kind.unit)).cast(pa.timestamp("ms"), safe=False)
        millis = millis.cast(pa.int64())
    elif pa.types.is_integer(kind):
        millis = array.cast(pa.int64())
    else:
        raise InventoryError(f"{where}: last_modified_date has type {kind}, not a timestamp")
    from_timestamp = datetime.fromtimestamp
    return [
        None if value is None else from_timestamp(value / 1000, UTC) for value in millis.to_pylist()
    ]


# --- S3 helpers --------------------------------------------------------------------------


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _raise_client_error(message: str, exc: ClientError) -> NoReturn:
    """Missing or forbidden → :class:`InventoryError`; anything else (throttling, 5xx) is
    re-raised as it is, so the caller's retry policy sees it."""
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    code = _error_code(exc)
    if code in _NOT_FOUND or code == "AccessDenied" or status in (403, 404):
        raise InventoryError(f"{message}: {code or status}") from exc
    raise exc


def _get_bytes(s3: Any, bucket: str, key: str, *, what: str) -> bytes:
    try:
        return bytes(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    except ClientError as exc:
        _raise_client_error(f"{what} s3://{bucket}/{key} cannot be read", exc)


def _get_optional_bytes(s3: Any, bucket: str, key: str) -> bytes | None:
    try:
        return bytes(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    except ClientError as exc:
        if _error_code(exc) in _NOT_FOUND:
            return None
        _raise_client_error(f"s3://{bucket}/{key} cannot be read", exc)


def _exists(s3: Any, bucket: str, key: str) -> bool:
    try:
        s3.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if _error_code(exc) in _NOT_FOUND or status == 404:
            return False
        _raise_client_error(f"s3://{bucket}/{key} cannot be read", exc)
    return True
