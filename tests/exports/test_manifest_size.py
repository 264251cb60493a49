"""The size of a 6-hour export's manifest (docs/playback.md#signed-exports).

Measured on a real export of ten 6-second files (a keyframe every 2 s, as cameras commonly
write), then grown to 6 hours of such files: 3,600 sources and 10,800 keyframe groups, each
entry as the export wrote it (the byte ranges given the ten digits of a 2 GB clip). Run
with ``-s`` to see the figure::

    .venv/bin/python -m pytest tests/exports/test_manifest_size.py -q -n 0 -s
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.tables import TableFactory
from video_index.aws.objects import ObjectStore
from video_index.media.exports import Exports, manifest_key
from video_index.media.synthetic import synthetic_clip
from video_index.media.worker import ExportWorker
from worlds import events as ev
from worlds.api_world import at, iso, make_world

DEVICE = "cam-six-hours"
FILES = 10
SIX_HOURS_FILES = 6 * 3600 // 6
GROUPS_PER_FILE = 3  # a keyframe every 2 s in a 6-second file
#: What the manifest of 6 hours must stay under (the doc's figure, with room).
LIMIT_BYTES = 6 * 1024 * 1024


def _six_hours(manifest: dict[str, Any]) -> dict[str, Any]:
    sources, fragments = manifest["sources"], manifest["fragments"]
    header, groups = fragments[0], fragments[1:]
    wide = [{**g, "range": [1_000_000_000 + g["range"][0], 1_000_000_000 + g["range"][1]]}
            for g in groups]  # fmt: skip
    return {
        **manifest,
        "sources": [sources[i % len(sources)] for i in range(SIX_HOURS_FILES)],
        "fragments": [header]
        + [wide[i % len(wide)] for i in range(SIX_HOURS_FILES * GROUPS_PER_FILE)],
    }


def test_a_six_hour_manifest_is_a_few_megabytes(aws: None, new_table: TableFactory) -> None:
    # Given an export of ten contiguous 6-second files with a keyframe every 2 s
    dynamodb, table = new_table()
    world = make_world(dynamodb, table)
    for n in range(FILES):
        body = synthetic_clip(seconds=6, container="ts", label=f"six-{n}", keyframe_seconds=2)
        world.put("video", DEVICE, at(29, 10, 0, 6 * n), 6_000, media="ts", body=body)
    key = world.services.signing_key
    assert key is not None
    exports = Exports(
        ObjectStore(world.s3, ev.BUCKET), enqueue=str, max_bytes=10**9, signer=lambda: key
    )
    world.services.exports = exports
    window = json.dumps({"from": iso(at(29, 10)), "to": iso(at(29, 10, 1))})
    job = world.call("POST", f"/devices/{DEVICE}/exports", body=window)[1]
    ExportWorker(exports).handle(
        ev.sqs_event(ev.sqs_record(json.dumps({"export_id": job["export_id"]}))), None
    )
    stored = world.s3.get_object(Bucket=ev.BUCKET, Key=manifest_key(job["export_id"]))
    manifest = json.loads(stored["Body"].read())
    assert len(manifest["sources"]) == FILES
    assert len(manifest["fragments"]) == 1 + FILES * GROUPS_PER_FILE
    # When it is grown to 6 hours of such files, written as the export writes it
    grown = _six_hours(manifest)
    size = len(json.dumps(grown, indent=1).encode())
    compact = len(json.dumps(grown, sort_keys=True, separators=(",", ":")).encode())
    per_source = len(json.dumps(grown["sources"], indent=1)) / len(grown["sources"])
    per_fragment = len(json.dumps(grown["fragments"], indent=1)) / len(grown["fragments"])
    print(
        f"\n6 h of 6 s files ({SIX_HOURS_FILES} sources, "
        f"{SIX_HOURS_FILES * GROUPS_PER_FILE} fragments): manifest {size:,} B stored, "
        f"{compact:,} B canonical ({per_source:.0f} B a source, {per_fragment:.0f} B a "
        f"fragment); measured on {FILES} files: {stored['ContentLength']:,} B"
    )
    # Then it is a few megabytes: stored in S3 beside the clip, never through a Lambda answer
    assert size < LIMIT_BYTES
