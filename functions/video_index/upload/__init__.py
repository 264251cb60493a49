"""The camera uploader (docs/uploading.md): a segment, or a directory of them, into S3
under its key, with conditional writes; never anything into DynamoDB.

* :mod:`.segment` — one segment (:func:`upload_segment`);
* :mod:`.directory` — a folder of segment files (:func:`upload_directory`);
* :mod:`.transfer` — the S3 conversation (conditional PUT, multipart, checksums);
* :mod:`.retry` — which answers are retried, and the backoff;
* :mod:`.results` — results and errors.
"""

from video_index.upload.directory import (
    DIRECTORY_NAME_RE,
    NAME_CONVENTION,
    FileOutcome,
    ManifestEntry,
    upload_directory,
)
from video_index.upload.results import (
    UploadArgumentError,
    UploadConflict,
    UploadFailed,
    UploadResult,
)
from video_index.upload.segment import MAX_PARTS, MAX_SINGLE_PUT, MIN_PART_SIZE, upload_segment
from video_index.upload.transfer import CONTENT_TYPES, SHA256_METADATA, MiB

__all__ = [
    "CONTENT_TYPES",
    "DIRECTORY_NAME_RE",
    "MAX_PARTS",
    "MAX_SINGLE_PUT",
    "MIN_PART_SIZE",
    "NAME_CONVENTION",
    "SHA256_METADATA",
    "FileOutcome",
    "ManifestEntry",
    "MiB",
    "UploadArgumentError",
    "UploadConflict",
    "UploadFailed",
    "UploadResult",
    "upload_directory",
    "upload_segment",
]
