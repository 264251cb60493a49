"""Share links (docs/shares.md): their table.

A share is an item (and its copy under its device) the API writes (create, revoke) and
reads (open by id, list a device's); the media function only reads (open by id). Items
expire by TTL a month after their share ended: not primary data (a lost share is one
link less, re-made by its operator), so no deletion protection, and the table goes with
the stack. Point-in-time recovery stays on (cdk-nag's rule for every table).

What reading, listing and writing shares means is :data:`SHARES_ACTIONS`: no Scan, no
delete (a revocation is a new version of both items; TTL removes them). The media
function only reads (a share by its id).
"""

from __future__ import annotations

from typing import Final

from aws_cdk import RemovalPolicy
from constructs import Construct

from infra.read_model import keyed_table
from infra.wiring import Wiring, table_grants
from video_index.core.contract import ENV_SHARES_TABLE
from video_index.core.functions import Access
from video_index.core.table_schema import (
    TTL_ATTRIBUTE,
    shares_table_definition,
)

#: Reading one share by its id (GetItem: the public routes); listing a device's (Query:
#: the operators' list); writing both items of one version (a transaction of two puts).
SHARES_ACTIONS: Final = {
    Access.READ: ["dynamodb:GetItem"],
    Access.LIST: ["dynamodb:Query"],
    Access.WRITE: ["dynamodb:PutItem"],
}


class Shares(Construct):
    """The shares table, provided to the functions that declare it."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        definition = shares_table_definition("unused")
        self.table = keyed_table(
            self,
            "Table",
            definition,
            time_to_live_attribute=TTL_ATTRIBUTE,
            removal_policy=RemovalPolicy.DESTROY,
        )
        Wiring.of(self).provide(
            ENV_SHARES_TABLE,
            self,
            self.table.table_name,
            table_grants(self.table.table_arn, "Shares", SHARES_ACTIONS),
        )
