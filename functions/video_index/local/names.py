"""Names and choices of the local stack (no AWS imports: the CLI parser uses them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Where the tables live: ``moto`` (the stack's own moto server) or ``endpoint`` (a
#: DynamoDB-compatible endpoint the user runs, ``--dynamodb-endpoint URL``).
DynamoDBEngine = Literal["moto", "endpoint"]


@dataclass(frozen=True, slots=True)
class LocalNames:
    """Resource names of the local stack."""

    bucket: str = "video-index-local"
    table: str = "video-index-read-model"
    annotations_table: str = "video-index-annotations"
    queue: str = "video-index-notifications"
    dlq: str = "video-index-dlq"
    export_queue: str = "video-index-exports"
    export_dlq: str = "video-index-exports-dlq"
    deletions_table: str = "video-index-deletions"
    holds_table: str = "video-index-holds"
    shares_table: str = "video-index-shares"
    deletion_queue: str = "video-index-deletions"
    deletion_dlq: str = "video-index-deletions-dlq"
    #: The audit trail (docs/audit.md): its Object Lock bucket and its index.
    audit_bucket: str = "video-index-audit"
    audit_table: str = "video-index-audit"
    #: The secret the API's page cursors are sealed with (random per stack).
    cursor_key_secret: str = "video-index-cursor-key"
