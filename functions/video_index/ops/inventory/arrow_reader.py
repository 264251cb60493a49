"""Parquet and ORC data files of an S3 Inventory report, through pyarrow.

Parquet is read in record batches, ORC stripe by stripe; filtering (delete markers,
noncurrent versions, the source bucket) is vectorised. Keys are stored as they are
and never decoded. pyarrow is imported when a file of these formats is read, so the
CSV path (the deployed default) does not need it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

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


def parquet_batches(
    path: str, manifest: Manifest, data_file: ManifestFile, batch: int, noncurrent: bool
) -> Iterator[InventoryBatch]:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    with parquet:
        columns = _columns(parquet.schema_arrow.names, manifest, data_file)
        batches = parquet.iter_batches(batch_size=batch, columns=list(columns.values()))
        yield from _arrow_batches(batches, columns, manifest, data_file, noncurrent)


def orc_batches(
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
    found = {canonical(name): name for name in names}
    columns: dict[str, str] = {w: found[w] for w in WANTED if w in found}
    for required in (BUCKET, KEY):
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
        bad = pc.invert(pc.fill_null(pc.equal(data[BUCKET], manifest.source_bucket), False))
        if pc.any(bad).as_py():
            first = pc.index(bad, True).as_py()
            wrong_bucket(manifest, data_file, position + first + 1, data[BUCKET][first].as_py())
        position += rows

        keep = None
        if IS_DELETE_MARKER in data:
            keep = pc.invert(pc.fill_null(data[IS_DELETE_MARKER], False))
        if IS_LATEST in data and not noncurrent:
            latest = pc.fill_null(data[IS_LATEST], True)
            keep = latest if keep is None else pc.and_(keep, latest)
        if keep is not None:
            data = {name: pc.filter(array, keep) for name, array in data.items()}
        count = len(data[KEY])
        if count == 0:
            continue
        if data[KEY].null_count:
            raise InventoryError(f"{where}: a row has no key")

        nothing: list[Any] = [None] * count
        yield InventoryBatch(
            keys=data[KEY].to_pylist(),
            sizes=data[SIZE].cast(pa.int64()).to_pylist() if SIZE in data else nothing,
            etags=(
                pc.utf8_trim(data[ETAG].cast(pa.string()), '"').to_pylist()
                if ETAG in data
                else nothing
            ),
            last_modified=(
                _arrow_times(data[LAST_MODIFIED], where) if LAST_MODIFIED in data else nothing
            ),
            is_latest=(
                pc.fill_null(data[IS_LATEST], True).to_pylist()
                if IS_LATEST in data
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
