"""S3 Inventory reports: the lagging snapshot of the bucket that reconcile reads.

* :mod:`.manifest` — finding the newest report and reading its ``manifest.json``;
* :mod:`.reader` — the rows of its data files, verified and streamed;
* :mod:`.csv_reader`, :mod:`.arrow_reader` — one reader per file format;
* :mod:`.model` — the shapes shared by all of them.
"""

from video_index.ops.inventory.manifest import (
    CHECKSUM_NAME,
    FORMATS,
    MANIFEST_NAME,
    REPORT_FOLDER_RE,
    find_latest_manifest,
    parse_s3_uri,
    read_manifest,
)
from video_index.ops.inventory.model import (
    InventoryBatch,
    InventoryError,
    InventoryObject,
    Manifest,
    ManifestFile,
)
from video_index.ops.inventory.reader import DEFAULT_BATCH_ROWS, iter_batches, iter_objects

__all__ = [
    "CHECKSUM_NAME",
    "DEFAULT_BATCH_ROWS",
    "FORMATS",
    "MANIFEST_NAME",
    "REPORT_FOLDER_RE",
    "InventoryBatch",
    "InventoryError",
    "InventoryObject",
    "Manifest",
    "ManifestFile",
    "find_latest_manifest",
    "iter_batches",
    "iter_objects",
    "parse_s3_uri",
    "read_manifest",
]
