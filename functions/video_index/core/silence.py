"""Silent cameras and retention as the product states them (docs/operations.md#silent-cameras).

Pure code: the device item already holds each kind's last start (``l:<kind>``, kept by the
stream consumer), so whether a camera is silent is a comparison per device — O(devices),
never a scan of segments. A kind is silent when its newest file started more than
``silent_after[kind]`` seconds before now. A device is silent when it uploads nothing:
when every kind it uploads (and that has a threshold) is silent, since the latest moment
one of them fell silent (``last start + silent_after``). A kind that stops alone (a
sensor that broke while the video goes on) shows in that kind's own ``silent_since``,
but does not make a camera whose video is recent a silent camera. A retired device is
never silent, nor a kind without a threshold (``0`` turns the check off for that kind),
nor a kind the device never uploaded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from video_index.core.errors import ConfigurationError
from video_index.core.keys import KINDS

#: A few segment lengths of a typical camera: video files of 2–60 s, sensor and analysis
#: files summarising a few minutes.
DEFAULT_SILENT_AFTER_SECONDS: Final[Mapping[str, int]] = {
    "video": 300,
    "sensor": 900,
    "analysis": 900,
}
DEFAULT_RETENTION_DAYS: Final[Mapping[str, int]] = {"video": 30, "sensor": 90, "analysis": 90}


def silent_since_ms(
    last_starts: Mapping[str, int | None],
    now_ms: int,
    silent_after: Mapping[str, int],
    *,
    retired: bool = False,
) -> int | None:
    """When the device fell silent (epoch ms): the latest of its checked kinds' silences
    once all of them are silent; None while one of them still uploads (or it is retired)."""
    if retired:
        return None
    moments = [
        last + silent_after[kind] * 1000
        for kind, last in last_starts.items()
        if last is not None and silent_after.get(kind, 0) > 0
    ]
    if not moments or any(moment >= now_ms for moment in moments):
        return None
    return max(moments)


def per_kind(raw: str | None, default: Mapping[str, int], name: str) -> dict[str, int]:
    """A per-kind setting from its environment value (JSON ``{"video": 300, …}``): the
    default for each kind it leaves out; an unknown kind or a negative value refused."""
    if raw in (None, ""):
        return dict(default)
    try:
        given = json.loads(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a JSON object of kind → number") from None
    if not isinstance(given, dict):
        raise ConfigurationError(f"{name} must be a JSON object of kind → number")
    values = dict(default)
    for kind, value in given.items():
        if kind not in KINDS:
            raise ConfigurationError(f"{name}: {kind!r} is not a kind ({', '.join(KINDS)})")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigurationError(f"{name}: {kind} must be a whole number ≥ 0")
        values[kind] = value
    return values
