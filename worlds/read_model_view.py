"""The read model as stored, decoded into the reference's shape for comparison; and the
reference encoded as stored, for tests and benchmarks that load a read model directly."""

from __future__ import annotations

import re
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from worlds.reference_projection import RefModel, RefSegment

_des = TypeDeserializer().deserialize
#: A bucket's figures (docs/read-model.md); its other attributes are the consumer's.
FIGURE = re.compile(r"^([nbdc][0-3]|h)$")
TOTAL = re.compile(r"^([nbdfl]):(video|sensor|analysis)$")


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
                if FIGURE.match(name) and int(value) != 0
            }
            if figures:
                model.buckets[(device, kind, hour)] = figures
            if item.get("r"):
                model.runs[(device, hour)] = [int(edge) for edge in item["r"]]
        elif item_type == "devices":
            model.devices.add(sk)
            totals: dict[str, dict[str, int]] = {}
            for name, value in item.items():
                if match := TOTAL.match(name):
                    totals.setdefault(match[2], {})[match[1]] = int(value)
            for kind, figures in totals.items():
                if figures.get("n", 0):
                    model.totals[(sk, kind)] = tuple(  # type: ignore[assignment]
                        figures.get(name, -1) for name in "nbdfl"
                    )
    return model


def stored(model: RefModel, generation: int = 1) -> list[dict[str, Any]]:
    """The items (plain values) of ``model`` as ingest and the stream consumer leave them:
    segment items, bucket items with their coverage, device items with their totals.
    ``model`` comes from ``with_aggregates``; a table loaded with these has its aggregates
    already (draining its stream into a consumer would add them again)."""
    g = f"g{generation}#"
    items: list[dict[str, Any]] = []
    for (device, kind), totals in model.totals.items():
        figures = {f"{name}:{kind}": value for name, value in zip("nbdfl", totals, strict=True)}
        items.append({"pk": f"{g}devices", "sk": device, **figures})
    for seg in model.segments.values():
        items.append(
            {
                "pk": f"{g}seg#{seg.device}#{seg.kind}",
                "sk": seg.filename,
                "present": True,
                "size": seg.size,
                "etag": seg.etag,
                "seq": "0" * 32,
                "ver": 1,
                "start": seg.start,
                "end": seg.end,
                "id": seg.id,
                "observed": False,
            }
        )
    buckets: dict[tuple[str, str, str], dict[str, Any]] = {
        key: dict(figures) for key, figures in model.buckets.items()
    }
    for (device, hour), runs in model.runs.items():
        buckets.setdefault((device, "video", hour), {})["r"] = runs
    for (device, kind, hour), attributes in buckets.items():
        items.append({"pk": f"{g}bkt#{device}", "sk": f"{kind}#{hour}", **attributes})
    return items


def differences(actual: RefModel, expected: RefModel) -> dict[str, Any]:
    """Where the read model as stored (``actual``, from :func:`view`) differs from the
    reference (``expected``, from ``with_aggregates(project(...))``), in every item class:
    segments, bucket figures, hour coverage runs, device totals and the device list. Empty
    when they agree.

    The device list may hold a device whose footage is all gone (its item stays, with
    zero totals); every device with footage must be listed, and a listed device without
    footage must have no totals.
    """
    found: dict[str, Any] = {}
    for name in ("segments", "buckets", "runs", "totals"):
        mine, theirs = getattr(actual, name), getattr(expected, name)
        wrong = {
            key: (mine.get(key), theirs.get(key))
            for key in set(mine) | set(theirs)
            if mine.get(key) != theirs.get(key)
        }
        if wrong:
            found[name] = wrong
    unlisted = expected.devices - actual.devices
    stale = {d for d in actual.devices - expected.devices if any(k[0] == d for k in actual.totals)}
    if unlisted or stale:
        found["devices"] = {"not listed": sorted(unlisted), "listed with totals": sorted(stale)}
    return found
