"""The key and size columns of a slice of an inventory data file, in Arrow batches.

What reconcile's distributed pass reads (docs/operations.md): no Python per row. A
data file is downloaded to a temporary file and checked against the manifest's size
and MD5 before any row of it is read (as :mod:`.reader` does), then one *part* of it
is parsed:

* **CSV** (gzip or plain) with ``pyarrow.csv`` over the part's lines. Part ``k`` of
  ``n`` owns the lines that start in the ``k``-th ``n``-th of the file: for a gzip
  file, of the bytes the decompressor has produced once it has been fed the ``k``-th
  ``n``-th of the compressed bytes (every part feeds it at the same cut points, so
  every part computes the same boundaries). A part decompresses from the start and
  parses only its own lines. Keys are URL-encoded (form style, see :mod:`.csv_reader`):
  a key holding ``%`` or ``+`` is decoded, every other one is used as it is.
* **Parquet** by row groups, **ORC** by stripes: part ``k`` of ``n`` reads groups
  ``⌊k·g/n⌋ … ⌊(k+1)·g/n⌋ - 1`` of ``g``.

Rows of another bucket, delete markers and (unless asked for) noncurrent versions are
filtered column-wise, as the row readers do.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote_plus

from video_index.ops.inventory.arrow_reader import _columns
from video_index.ops.inventory.model import (
    BUCKET,
    IS_DELETE_MARKER,
    IS_LATEST,
    KEY,
    SIZE,
    InventoryError,
    Manifest,
    ManifestFile,
    canonical,
    wrong_bucket,
)
from video_index.ops.inventory.reader import _download_verified, _parse_errors

DEFAULT_BATCH_ROWS: Final = 131_072
#: Compressed bytes fed to the decompressor at a time (and at every part boundary).
_CHUNK: Final = 1 << 20
_CSV_BLOCK: Final = 4 << 20
_GZIP_MAGIC: Final = b"\x1f\x8b"


@dataclass(frozen=True)
class Columns:
    """One batch: keys (Arrow strings, decoded) and sizes (Arrow int64, may hold nulls)."""

    keys: Any
    sizes: Any

    def __len__(self) -> int:
        return len(self.keys)


def slice_columns(
    s3: Any,
    manifest: Manifest,
    data_file: ManifestFile,
    *,
    part: int = 0,
    parts: int = 1,
    include_noncurrent: bool = False,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    tmp_dir: str | None = None,
) -> Iterator[Columns]:
    """The present objects of part ``part`` of ``parts`` of one data file."""
    if not 0 <= part < parts:
        raise ValueError(f"part {part} is not one of {parts} parts")
    path = _download_verified(s3, manifest, data_file, tmp_dir)
    where = f"data file s3://{manifest.destination_bucket}/{data_file.key}"
    try:
        if manifest.file_format == "CSV":
            batches = _csv(path, manifest, data_file, part, parts, batch_rows)
        elif manifest.file_format == "Parquet":
            batches = _parquet(path, manifest, data_file, part, parts, batch_rows)
        else:
            batches = _orc(path, manifest, data_file, part, parts, batch_rows)
        position = 0
        for batch in batches:
            columns = _filtered(batch, manifest, data_file, position, include_noncurrent)
            position += batch.num_rows
            if columns is not None and len(columns):
                yield columns
    except InventoryError:
        raise
    except Exception as exc:
        if not isinstance(exc, _parse_errors()):
            raise
        raise InventoryError(f"{where} cannot be read as {manifest.file_format}: {exc}") from exc
    finally:
        os.unlink(path)


def _csv(
    path: str, manifest: Manifest, data_file: ManifestFile, part: int, parts: int, batch: int
) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    del batch  # CSV batches follow the block size
    names = list(manifest.file_schema)
    wanted = {canonical(name): name for name in names}
    include = [wanted[c] for c in (BUCKET, KEY, SIZE, IS_LATEST, IS_DELETE_MARKER) if c in wanted]
    types = {name: pa.string() for name in include}
    if SIZE in wanted:
        types[wanted[SIZE]] = pa.int64()
    stream = _csv_stream(path, part, parts)
    if stream is None:
        return  # a part without lines (pyarrow refuses an empty CSV)
    reader = pa_csv.open_csv(
        stream,
        read_options=pa_csv.ReadOptions(
            column_names=names, block_size=_CSV_BLOCK, use_threads=False
        ),
        convert_options=pa_csv.ConvertOptions(
            include_columns=include, column_types=types, strings_can_be_null=False
        ),
    )
    rename = {name: canonical(name) for name in include}
    for record_batch in reader:
        table = pa.Table.from_batches([record_batch])
        table = table.rename_columns([rename[name] for name in table.column_names])
        yield table


def _csv_stream(path: str, part: int, parts: int) -> Any:
    """The bytes of part ``part`` of ``parts`` of a CSV file (None when it has no line).

    A whole file is read by Arrow itself (gzip decompressed natively, no Python per
    chunk); a part of one by :class:`_PartLines`."""
    import pyarrow as pa

    if parts == 1:
        with open(path, "rb") as head:
            magic = head.read(2)
        if not magic:
            return None
        compression = "gzip" if magic == _GZIP_MAGIC else None
        stream = pa.input_stream(path, compression=compression, buffer_size=_CSV_BLOCK)
        if compression is None or stream.read(1):
            if compression is not None:  # reopen: the byte read above is consumed
                stream.close()
                stream = pa.input_stream(path, compression=compression, buffer_size=_CSV_BLOCK)
            return stream
        stream.close()
        return None
    lines = io.BufferedReader(_PartLines(path, part, parts), buffer_size=_CSV_BLOCK)
    if not lines.peek(1):
        lines.close()
        return None
    return lines


def _parquet(
    path: str, manifest: Manifest, data_file: ManifestFile, part: int, parts: int, batch: int
) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as parquet:
        columns = _columns(parquet.schema_arrow.names, manifest, data_file)
        groups = _share(parquet.num_row_groups, part, parts)
        if not groups:
            return
        rename = {name: key for key, name in columns.items()}
        for record_batch in parquet.iter_batches(
            batch_size=batch, row_groups=groups, columns=list(columns.values()), use_threads=False
        ):
            table = pa.Table.from_batches([record_batch])
            yield table.rename_columns([rename[name] for name in table.column_names])


def _orc(
    path: str, manifest: Manifest, data_file: ManifestFile, part: int, parts: int, batch: int
) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.orc as orc

    orc_file = orc.ORCFile(path)
    columns = _columns(orc_file.schema.names, manifest, data_file)
    rename = {name: key for key, name in columns.items()}
    for stripe in _share(orc_file.nstripes, part, parts):
        record_batch = orc_file.read_stripe(stripe, columns=list(columns.values()))
        table = pa.Table.from_batches([record_batch])
        table = table.rename_columns([rename[name] for name in table.column_names])
        for offset in range(0, table.num_rows, batch):
            yield table.slice(offset, batch)


def _share(groups: int, part: int, parts: int) -> list[int]:
    """The row groups (stripes) of part ``part`` of ``parts``: a contiguous share."""
    return list(range(part * groups // parts, (part + 1) * groups // parts))


def _filtered(
    table: Any, manifest: Manifest, data_file: ManifestFile, position: int, noncurrent: bool
) -> Columns | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return None
    bucket = table[BUCKET]
    bad = pc.invert(pc.fill_null(pc.equal(bucket, manifest.source_bucket), False))
    if pc.any(bad).as_py():
        first = pc.index(bad, True).as_py()
        wrong_bucket(manifest, data_file, position + first + 1, bucket[first].as_py())
    keep = None
    if IS_DELETE_MARKER in table.column_names:
        keep = pc.invert(_flag(table[IS_DELETE_MARKER], default=False))
    if IS_LATEST in table.column_names and not noncurrent:
        latest = _flag(table[IS_LATEST], default=True)
        keep = latest if keep is None else pc.and_(keep, latest)
    if keep is not None:
        table = table.filter(keep)
    if table.num_rows == 0:
        return None
    keys = table[KEY].combine_chunks()
    where = f"data file s3://{manifest.destination_bucket}/{data_file.key}"
    if keys.null_count:
        raise InventoryError(f"{where}: a row has no key")
    if manifest.file_format == "CSV":
        if pc.any(pc.equal(pc.binary_length(keys), 0)).as_py():
            raise InventoryError(f"{where}: a row has an empty Key")
        keys = _decoded(keys, where)
    sizes = (
        table[SIZE].combine_chunks().cast(pa.int64())
        if SIZE in table.column_names
        else pa.nulls(len(keys), pa.int64())
    )
    return Columns(keys=keys, sizes=sizes)


def _flag(column: Any, *, default: bool) -> Any:
    """A boolean column (Parquet/ORC) or the CSV text ``true``/``false`` (any case)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(column.type):
        return pc.fill_null(column, default)
    lowered = pc.utf8_lower(column)
    return pc.not_equal(lowered, "false") if default else pc.equal(lowered, "true")


def _decoded(keys: Any, where: str) -> Any:
    """URL-decoded keys (form style).

    S3 Inventory writes every ``/`` of a CSV key as ``%2F``; the product's keys hold no
    other character that is escaped, so ``%2F`` is decoded column-wise (a plain substring
    replace: a regex is 15x slower) and only keys that still hold ``%`` or ``+`` afterwards
    (foreign or invalid keys, lower-case escapes) cost Python: those are decoded from their
    original text, so the result is exactly ``unquote_plus`` of each.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    original = keys
    keys = pc.replace_substring(keys, pattern="%2F", replacement="/")
    # Rows still holding '%' or '+': a scan of the keys' bytes (Arrow's substring search
    # is slower than the whole rest of the pass).
    wide = keys.cast(pa.large_string())
    offsets = np.frombuffer(wide.buffers()[1], np.int64, len(wide) + 1, wide.offset)
    data = np.frombuffer(wide.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
    marks = np.flatnonzero((data == ord("%")) | (data == ord("+")))
    if not len(marks):
        return keys
    rows = np.unique(np.searchsorted(offsets, marks + offsets[0], side="right") - 1)
    decoded = []
    for raw in original.take(pa.array(rows)).to_pylist():
        try:
            decoded.append(unquote_plus(raw, encoding="utf-8", errors="strict"))
        except UnicodeDecodeError as exc:
            raise InventoryError(f"{where}: Key {raw!r} is not UTF-8 once decoded") from exc
    values = keys.to_pylist() if len(rows) * 4 > len(keys) else None
    if values is not None:
        for row, key in zip(rows.tolist(), decoded, strict=True):
            values[row] = key
        return pa.array(values, pa.string())
    mask = np.zeros(len(keys), bool)
    mask[rows] = True
    return pc.replace_with_mask(keys, pa.array(mask), pa.array(decoded, pa.string()))


class _PartLines(io.RawIOBase):
    """The bytes of the lines part ``part`` of ``parts`` of a CSV file owns (module doc)."""

    def __init__(self, path: str, part: int, parts: int) -> None:
        super().__init__()
        self._file = open(path, "rb")  # noqa: SIM115 - closed in close()
        size = os.fstat(self._file.fileno()).st_size
        self._gzip = self._file.read(2) == _GZIP_MAGIC
        self._file.seek(0)
        bounds = {k * size // parts for k in range(1, parts)}
        self._cuts = sorted(bounds | set(range(_CHUNK, size, _CHUNK)) | {size})
        self._begin = part * size // parts
        self._end = (part + 1) * size // parts
        self._last = part == parts - 1
        self._chunks = self._owned()
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = chunk
        count = min(len(buffer), len(self._pending))
        buffer[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()

    def _produced(self) -> Iterator[tuple[bytes, int]]:
        """(decompressed bytes, compressed bytes fed so far), cut at the cut points."""
        decompressor: Any = zlib.decompressobj(wbits=31) if self._gzip else None
        fed = 0
        for cut in self._cuts:
            data = self._file.read(cut - fed)
            fed = cut
            if decompressor is None:
                yield data, fed
                continue
            out = [decompressor.decompress(data)]
            while decompressor.eof and decompressor.unused_data:
                rest = decompressor.unused_data  # the next gzip member
                decompressor = zlib.decompressobj(wbits=31)
                out.append(decompressor.decompress(rest))
            yield b"".join(out), fed
        if decompressor is not None:
            yield decompressor.flush(), fed

    def _owned(self) -> Iterator[bytes]:
        position = 0  # decompressed offset of the next byte produced
        begin = 0 if self._begin == 0 else None  # decompressed offset of the part's start
        end: int | None = None  # ... of its end (None: not yet known, or the last part)
        previous = b"\n"  # the byte before the next one (a line starts after a newline)
        emitting = False
        for data, fed in self._produced():
            chunk_start = position
            position += len(data)
            if begin is None and fed >= self._begin:
                begin = position
            if end is None and not self._last and fed >= self._end:
                end = position
            at = 0
            if not emitting:
                if begin is None:
                    previous = data[-1:] or previous
                    continue
                # The first line starting at or after `begin`.
                at = max(0, begin - chunk_start)
                if at > len(data):
                    previous = data[-1:] or previous
                    continue
                before = data[at - 1 : at] if at > 0 else previous
                if before != b"\n":
                    newline = data.find(b"\n", at)
                    if newline < 0:
                        previous = data[-1:] or previous
                        continue
                    at = newline + 1
                if end is not None and chunk_start + at >= end:
                    return
                emitting = True
            if end is not None:
                # Through the newline ending the last line that starts before `end`.
                before = data[at - 1 : at] if at > 0 else previous
                if before == b"\n" and chunk_start + at >= end:
                    return
                newline = data.find(b"\n", max(at, end - 1 - chunk_start))
                if newline >= 0:
                    yield data[at : newline + 1]
                    return
            if at < len(data):
                yield data[at:]
            previous = data[-1:] or previous
