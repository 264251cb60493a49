"""The silent-camera check (docs/operations.md#silent-cameras): which cameras stopped uploading
(and, from the same items, each camera's clock: docs/operations.md#camera-clocks).

One pass over the serving generation's devices partition (one Query page per MB: about
3,000 devices per page), plus one GetItem of the retired set: O(devices), never a scan of
segments. The scheduled function publishes the count as the ``SilentDevices`` metric (an
alarm watches it); ``video-index status`` lists the devices.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from video_index.aws.clients import Clients
from video_index.aws.store import ReadModelStore, build_store
from video_index.core.clock import ClockFigures, combined, figures
from video_index.core.keys import KINDS
from video_index.core.layout import CONTROL_PK, RETIRED_SK, device_total, devices_pk
from video_index.core.settings import Settings
from video_index.core.silence import silent_since_ms


@dataclass(frozen=True, slots=True)
class SilentReport:
    checked: int
    #: (device, silent since epoch ms), oldest silence first.
    silent: list[tuple[str, int]]
    #: (device, its clock figures over every kind) of the devices with a receipt recorded,
    #: furthest ahead first, then by upload delay (docs/operations.md#camera-clocks).
    clocks: list[tuple[str, ClockFigures]] = field(default_factory=list)


def silent_devices(
    items: Iterable[Mapping[str, Any]],
    now_ms: int,
    silent_after: Mapping[str, int],
    retired: set[str],
) -> SilentReport:
    """The silent devices among device items (``sk`` the device, ``l:<kind>`` last starts)."""
    checked = 0
    silent: list[tuple[str, int]] = []
    clocks: list[tuple[str, ClockFigures]] = []
    for item in items:
        checked += 1
        device = item["sk"]
        last = {kind: _last(item, kind) for kind in silent_after}
        since = silent_since_ms(last, now_ms, silent_after, retired=device in retired)
        if since is not None:
            silent.append((device, since))
        clock = combined(figures(item.get(device_total("k", kind))) for kind in KINDS)
        if clock is not None:
            clocks.append((device, clock))
    silent.sort(key=lambda pair: (pair[1], pair[0]))
    clocks.sort(key=lambda pair: (pair[1].lateness_ms < 0, abs(pair[1].lateness_ms)), reverse=True)
    return SilentReport(checked, silent, clocks)


def _last(item: Mapping[str, Any], kind: str) -> int | None:
    # n = 0: every file of the kind is gone (retention, deletion): nothing to be late for.
    if not int(item.get(device_total("n", kind), 0)):
        return None
    value = item.get(device_total("l", kind))
    return int(value) if value is not None else None


def check(
    store: ReadModelStore, clock: Callable[[], float], silent_after: Mapping[str, int]
) -> SilentReport:
    """The check against the read model's serving generation."""
    generation = store.generations()[0]
    retired = set((store.get(CONTROL_PK, RETIRED_SK) or {}).get("devices", ()))
    items = store.query_all(devices_pk(generation))
    return silent_devices(items, int(clock() * 1000), silent_after, retired)


def build_check(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> Callable[[], SilentReport]:
    """The check of a deployment: its read model and its kinds' thresholds."""
    store = build_store(settings, clients)
    silent_after = dict(settings.silent_after_seconds)
    return lambda: check(store, clock, silent_after)
