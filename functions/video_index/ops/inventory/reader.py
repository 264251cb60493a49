"""Reading the rows of an S3 Inventory report, streaming (docs/operations.md).

Reading is streaming: each data file is downloaded to a temporary file while its size
and MD5 are computed, checked against the manifest *before* any of its rows is yielded,
then parsed with bounded memory (CSV row by row, :mod:`.csv_reader`; Parquet in record
batches and ORC stripe by stripe, :mod:`.arrow_reader`) and deleted. Nothing here holds
a list of rows: memory depends on ``batch_rows`` and the ORC stripe size, never on the
report's length.
"""

from __future__ import annotations

import csv
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any, Final

from video_index.aws.objects import ObjectStore
from video_index.ops.inventory.arrow_reader import orc_batches, parquet_batches
from video_index.ops.inventory.csv_reader import csv_batches
from video_index.ops.inventory.manifest import reading
from video_index.ops.inventory.model import (
    InventoryBatch,
    InventoryError,
    InventoryObject,
    Manifest,
    ManifestFile,
)

DEFAULT_BATCH_ROWS: Final = 65536
_CHUNK: Final = 1 << 20


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
    reader = {"CSV": csv_batches, "Parquet": parquet_batches, "ORC": orc_batches}[
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
    store = ObjectStore(s3, manifest.destination_bucket)
    uri = store.uri(data_file.key)
    with reading(f"data file {uri} cannot be read"):
        body = store.open(data_file.key)
    handle, path = tempfile.mkstemp(prefix="inventory-", suffix=".part", dir=tmp_dir)
    try:
        digest = hashlib.md5(usedforsecurity=False)
        size = 0
        with os.fdopen(handle, "wb") as out:
            for chunk in body.iter_chunks(_CHUNK):
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
