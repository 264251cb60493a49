"""BatchGetItem with DynamoDB's own contract kept: unprocessed keys retried with backoff."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from video_index.aws.dynamodb import TransientStoreError, plain


def batch_get(
    call: Callable[..., Any],
    table: str,
    keys: list[dict[str, Any]],
    attributes: Sequence[str],
) -> dict[tuple[str, str], dict[str, Any]]:
    """Up to 100 items of ``table`` by their wire keys (``attributes`` only, if given): the
    found ones by (pk, sk). ``call`` is the adapter's mapped client call."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    wanted: dict[str, Any] = {"Keys": keys}
    if attributes:
        names = {f"#a{i}": name for i, name in enumerate(attributes)}
        wanted["ProjectionExpression"] = ", ".join(names)
        wanted["ExpressionAttributeNames"] = names
    request = {table: wanted}
    for attempt in range(8):
        response = call("batch_get_item", RequestItems=request, ReturnConsumedCapacity="TOTAL")
        for item in response.get("Responses", {}).get(table, []):
            values = plain(item)
            found[(values["pk"], values["sk"])] = values
        request = response.get("UnprocessedKeys") or {}
        if not request.get(table, {}).get("Keys"):
            return found
        time.sleep(min(2.0, 0.05 * 2**attempt))
    raise TransientStoreError("reads left unprocessed by DynamoDB; retry later")
