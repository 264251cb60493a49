"""The annotations table: primary data, what people typed about footage (docs/annotations.md).

Unlike the read model it cannot be rebuilt from anything, so it is protected
three ways: point-in-time recovery (any second of the last 35 days can be
restored to a new table), deletion protection (DeleteTable fails until it is
turned off), and ``RETAIN`` (deleting the stack, or removing the table from it,
leaves the table and its data in the account). Its shape comes from
:func:`video_index.core.table_schema.annotations_table_definition`, like the
tables `video-index local` and the tests create.

With the setting ``annotations_table_name`` the stack uses an existing table
instead (a table restored from a backup): it is then not the stack's to
protect, and docs/annotations.md says how to turn both protections on for it.
Only the API function gets access to it: its spec is the only one that declares
``VIDEO_INDEX_ANNOTATIONS_TABLE`` (``core/functions.py``).
"""

from __future__ import annotations

from typing import Final

from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra.read_model import primary_data_table
from infra.settings import StackSettings
from infra.wiring import Wiring, table_grants
from video_index.core.contract import ENV_ANNOTATIONS_TABLE
from video_index.core.functions import Access
from video_index.core.table_schema import (
    annotations_table_definition,
)

#: What each access to the annotations means (docs/annotations.md): Query reads versions
#: and windows; a change is one transaction of a conditional put of the new version, puts
#: and deletes of the window copies and a condition check. Nothing else: no GetItem, no
#: UpdateItem, no Scan, no batch writes. Versions are never deleted by any code path.
ANNOTATIONS_ACTIONS: Final = {
    Access.READ: ["dynamodb:Query"],
    Access.WRITE: ["dynamodb:ConditionCheckItem", "dynamodb:PutItem"],
    Access.DELETE: ["dynamodb:DeleteItem"],
}


class AnnotationsTable(Construct):
    """The stack's annotations table (PITR, deletion protection, retained), or the
    existing table ``annotations_table_name`` names."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StackSettings) -> None:
        super().__init__(scope, construct_id)
        self.table: dynamodb.ITable
        self.owned = settings.annotations_table_name is None
        if settings.annotations_table_name is not None:
            self.table = dynamodb.Table.from_table_name(
                self, "Table", settings.annotations_table_name
            )
        else:
            # Primary data: never deleted with the stack.
            self.table = primary_data_table(self, annotations_table_definition("unused"))
        Wiring.of(self).provide(
            ENV_ANNOTATIONS_TABLE,
            self,
            self.table.table_name,
            table_grants(self.table.table_arn, "Annotations", ANNOTATIONS_ACTIONS),
        )
