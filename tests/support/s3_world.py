"""A random S3 history for property tests: segments, uploads, overwrites, deletes,
lifecycle expirations and permanent version deletions, with the S3-shaped events
each emits (sequencers per key, some omitted as an emulator would)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from video_index.core.keys import SegmentKey
from worlds import events as ev

DEVICES = ("cam-a", "cam-b", "cam-c", "cam-d", "cam-e")
DAY0 = datetime(2026, 11, 28, tzinfo=UTC)  # three UTC days: 28, 29, 30 November
OTHER_KEYS = ("tmp/camera upload+1.part", "v1/video/Bad_Cam/x.mp4", "inventory/manifest.json")

# -- the world: random segments and what happens to them ---------------------------------

starts = st.one_of(
    # near a UTC midnight, so segments cross days and quarter boundaries
    st.builds(
        lambda day, offset: DAY0 + timedelta(days=day, milliseconds=offset),
        st.integers(1, 2),
        st.integers(-3_600_000, 60_000),
    ),
    st.builds(
        lambda day, ms: DAY0 + timedelta(days=day, milliseconds=ms),
        st.integers(0, 2),
        st.integers(0, 86_399_999),
    ),
)


@st.composite
def segments(draw: st.DrawFn) -> SegmentKey:
    kind = draw(st.sampled_from(["video", "video", "video", "sensor", "analysis"]))
    duration = draw(
        st.one_of(st.integers(1, 20_000), st.integers(1, 3_600_000))
        if kind == "video"
        else st.integers(0, 7_200_000)
    )
    start = draw(starts)
    return SegmentKey(
        kind=kind,
        device=draw(st.sampled_from(DEVICES)),
        start=start,
        duration_ms=duration,
        id=draw(st.from_regex(r"[a-f0-9]{16}", fullmatch=True)),
        ext={"video": "mp4", "sensor": "json", "analysis": "json"}[kind],
    )


@dataclass(frozen=True)
class Op:
    verb: str  # upload | delete | expire | purge-version
    slot: int
    content: int


ops = st.lists(
    st.builds(
        Op,
        verb=st.sampled_from(["upload", "upload", "upload", "delete", "expire", "purge-version"]),
        slot=st.integers(0, 10**6),
        content=st.integers(0, 3),
    ),
    min_size=1,
    max_size=30,
)


class World:
    """A versioned moto bucket plus the S3-shaped events its history emits."""

    def __init__(self, s3: Any, bucket: str, rng: random.Random) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.rng = rng
        self.counter = 0x0055AED6DCD90281
        self.events: list[dict[str, Any]] = []

    def sequencer(self) -> str:
        self.counter += self.rng.randint(1, 5000)
        text = f"{self.counter:018X}"
        # S3's rule: right-pad to compare; emit some sequencers shorter to exercise it
        return text.rstrip("0") if self.rng.random() < 0.3 else text

    def emit(self, key: str, event_name: str, **kw: Any) -> None:
        seq = self.sequencer()
        if self.rng.random() < 0.1:
            seq = None  # an emulator that omits it: the handler must ask S3
        self.events.append(ev.s3_record(key, event_name=event_name, sequencer=seq, **kw))

    def upload(self, key: str, content: int) -> None:
        body = hashlib.sha256(f"{key}:{content}".encode()).digest() * (1 + content)
        response = self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)
        self.emit(
            key,
            "ObjectCreated:Put",
            size=len(body),
            etag=response["ETag"].strip('"'),
            version_id=response.get("VersionId"),
        )

    def delete(self, key: str, event_name: str) -> None:
        response = self.s3.delete_object(Bucket=self.bucket, Key=key)
        self.emit(key, event_name, version_id=response.get("VersionId"))

    def purge_version(self, key: str) -> None:
        """Permanently delete one version (maybe the current one, revealing an older)."""
        versions = self.s3.list_object_versions(Bucket=self.bucket, Prefix=key).get("Versions", [])
        versions = [v for v in versions if v["Key"] == key]
        if not versions:
            return
        victim = self.rng.choice(versions)["VersionId"]
        self.s3.delete_object(Bucket=self.bucket, Key=key, VersionId=victim)
        self.emit(key, "ObjectRemoved:Delete", version_id=victim)

    def play(self, pool: list[str], history: list[Op]) -> None:
        for op in history:
            key = pool[op.slot % len(pool)]
            if op.verb == "upload":
                self.upload(key, op.content)
            elif op.verb == "delete":
                self.delete(key, "ObjectRemoved:DeleteMarkerCreated")
            elif op.verb == "expire":
                self.delete(key, "LifecycleExpiration:DeleteMarkerCreated")
            else:
                self.purge_version(key)
