"""The read model as stored, decoded into the reference's shape for comparison."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from tests.support.reference_projection import RefModel, RefSegment

_des = TypeDeserializer().deserialize


def scan_items(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        items.extend({k: _des(v) for k, v in item.items()} for item in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def view(client: Any, table: str, generation: int = 1) -> RefModel:
    model = RefModel()
    prefix = f"g{generation}#"
    for item in scan_items(client, table):
        pk, sk = item["pk"], item["sk"]
        if not pk.startswith(prefix):
            continue
        _, item_type, *rest = pk.split("#")
        if item_type == "seg" and item["present"]:
            device, kind = rest
            model.segments[(device, kind, sk)] = RefSegment(
                kind,
                device,
                sk,
                int(item["start"]),
                int(item["end"]),
                int(item["size"]),
                item["etag"],
                item["id"],
            )
        elif item_type == "bkt":
            (device,) = rest
            kind, hour = sk.split("#")
            figures = {
                name: int(value)
                for name, value in item.items()
                if name not in ("pk", "sk") and int(value) != 0
            }
            if figures:
                model.buckets[(device, kind, hour)] = figures
        elif item_type == "devices":
            model.devices.add(sk)
    return model
