"""Clip exports (docs/playback.md): requests, limits, job states and the worker.

The API runs in-process on moto; jobs are queued into a list instead of SQS, and the
worker is fed SQS-shaped events. End to end with a real queue and real clips, see
tests/media/test_playback_local.py.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.tables import TableFactory
from video_index.aws.objects import ObjectStore
from video_index.media.exports import Exports, ExportState, clip_key
from video_index.media.worker import ExportWorker
from worlds import events as ev
from worlds.api_world import ApiWorld, at, iso, make_world, resolve

DEVICE = "cam-export"


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table)


@pytest.fixture
def queued(world: ApiWorld) -> list[str]:
    """Export ids the API queued (instead of SQS)."""
    ids: list[str] = []
    objects = ObjectStore(world.s3, ev.BUCKET)
    key = world.services.signing_key
    world.services.exports = Exports(
        objects, enqueue=ids.append, max_bytes=10_000_000, signer=lambda: key
    )
    return ids


def _window(hours: int = 1) -> str:
    return json.dumps({"from": iso(at(29, 10)), "to": iso(at(29, 10 + hours))})


def _message(body: str) -> dict[str, Any]:
    return ev.sqs_event(ev.sqs_record(body))


def test_a_window_whose_video_is_over_the_size_limit_is_a_400_naming_it(
    world: ApiWorld, queued: list[str]
) -> None:
    # Given two files, and a limit one byte below their size
    world.put("video", DEVICE, at(29, 10), 10_000, media="ts")
    world.put("video", DEVICE, at(29, 10, 1), 10_000, media="ts")
    size = world.get(f"/devices/{DEVICE}", "")[1]["kinds"]["video"]["bytes"]
    world.services.exports.max_bytes = size - 1
    # When the window is exported
    status, body, _ = world.call("POST", f"/devices/{DEVICE}/exports", body=_window())
    # Then it is refused, naming the limit and the window's size; nothing is queued
    assert status == 400 and body["error"]["parameter"] == "to"
    assert "max_export_bytes" in body["error"]["message"]
    assert str(size) in body["error"]["message"]
    assert queued == []


@pytest.mark.parametrize(
    ("body", "content_type", "status", "parameter"),
    [
        ("from=a&to=b", "application/x-www-form-urlencoded", 415, "Content-Type"),
        ("--x\r\n", "multipart/form-data", 415, "Content-Type"),
        ("not json", "application/json", 400, None),
        (json.dumps({"from": "2026-11-29T10:00:00Z"}), "application/json", 400, "to"),
        (json.dumps({"from": "yesterday", "to": "today"}), "application/json", 400, "from"),
        (json.dumps({"from": "2026-11-29T10:00Z", "to": "2026-11-29T11:00Z", "x": 1}),
         "application/json", 400, "x"),
    ],
)  # fmt: skip
def test_a_bad_export_request_is_a_4xx_naming_what_is_wrong(
    world: ApiWorld, queued: list[str], body: str, content_type: str, status: int, parameter: Any
) -> None:
    # When an export is requested with a bad body
    answer, error, _ = world.call(
        "POST", f"/devices/{DEVICE}/exports", body=body, content_type=content_type
    )
    # Then it is refused with a 4xx naming what is wrong (when one thing is), nothing queued
    assert answer == status, error
    if parameter is not None:
        assert error["error"]["parameter"] == parameter
    assert queued == []


def test_an_unknown_or_malformed_export_id(world: ApiWorld) -> None:
    assert world.get("/exports/" + "0" * 32)[0] == 404
    assert world.get("/exports/not-an-id")[0] == 400


def test_the_worker_runs_a_queued_job_once_and_the_api_then_serves_its_clip(
    world: ApiWorld, queued: list[str]
) -> None:
    # Given an accepted export of two real files
    world.put("video", DEVICE, at(29, 10), 2_000, media="ts")
    world.put("video", DEVICE, at(29, 10, 1), 2_000, media="ts")
    status, job, headers = world.call("POST", f"/devices/{DEVICE}/exports", body=_window())
    assert status == 202 and queued == [job["export_id"]]
    assert world.get(headers["Location"])[1]["state"] == "queued"
    worker = ExportWorker(world.services.exports)
    # When the worker gets its message, twice (SQS delivers at least once)
    message = _message(json.dumps({"export_id": job["export_id"]}))
    assert worker.handle(message, None) == {"batchItemFailures": []}
    first = world.s3.head_object(Bucket=ev.BUCKET, Key=clip_key(job["export_id"]))
    assert worker.handle(message, None) == {"batchItemFailures": []}
    # Then the job is done, its clip written once, and the API gives its presigned URL
    status, done, _ = world.get(headers["Location"])
    assert status == 200 and done["state"] == ExportState.DONE
    assert done["url"].startswith("https://") and clip_key(job["export_id"]) in done["url"]
    again = world.s3.head_object(Bucket=ev.BUCKET, Key=clip_key(job["export_id"]))
    assert again["ETag"] == first["ETag"] and again["LastModified"] == first["LastModified"]


def test_a_done_clip_downloads_as_an_attachment_named_after_the_device_and_window(
    world: ApiWorld, queued: list[str]
) -> None:
    # Given a done export of a real file
    world.put("video", DEVICE, at(29, 10), 2_000, media="ts")
    status, job, headers = world.call("POST", f"/devices/{DEVICE}/exports", body=_window())
    assert status == 202
    ExportWorker(world.services.exports).handle(
        _message(json.dumps({"export_id": job["export_id"]})), None
    )
    # When its URL is fetched (as a browser following the download link would)
    url = world.get(headers["Location"])[1]["url"]
    query = parse_qs(urlsplit(url).query)
    fetched = world.s3.get_object(
        Bucket=ev.BUCKET,
        Key=clip_key(job["export_id"]),
        ResponseContentDisposition=query["response-content-disposition"][0],
    )
    # Then the bucket answers it as an attachment, a file name of the device and start
    assert fetched["ContentDisposition"] == (
        f'attachment; filename="{DEVICE}_20261129T100000Z.mp4"'
    )


def test_a_running_job_writes_its_progress_now_and_then(world: ApiWorld) -> None:
    # Given three files and a job over them, on a clock that advances 0.6 s per reading
    for second in (0, 2, 4):
        world.put("video", DEVICE, at(29, 10, 0, second), 2_000, media="ts")
    ticks = iter(range(10_000))
    key = world.services.signing_key
    exports = Exports(
        ObjectStore(world.s3, ev.BUCKET),
        enqueue=lambda _: None,
        max_bytes=10_000_000,
        clock=lambda: 1_800_000_000 + 0.6 * next(ticks),
        signer=lambda: key,
    )
    entries = list(world.services.queries.window_entries(DEVICE, "video", *_ms_window()))
    job = exports.create(DEVICE, *_ms_window(), entries)
    seen: list[float] = []
    writes = _job_writes(world, job.export_id, seen)
    steps: list[tuple[int, int]] = []
    # When it runs
    done = exports.run(job.export_id, progress=lambda d, t: steps.append((d, t)))
    # Then each file joined was reported, the stored progress (each file read, then joined)
    # rose between 0 and 1 while it ran, at most once a second of the clock, and ended at 1
    assert steps == [(1, 3), (2, 3), (3, 3)]
    running = [p for p in seen if 0 < p < 1]
    assert running == sorted(running) and 0 < len(running) < 6
    assert done.state is ExportState.DONE and done.progress == 1.0 and writes[-1] == 1.0


def test_a_job_stopped_by_ctrl_c_reads_interrupted_and_runs_again(world: ApiWorld) -> None:
    # Given a job over two files, run by `video-index export` in its own process
    for second in (0, 2):
        world.put("video", DEVICE, at(29, 10, 0, second), 2_000, media="ts")
    key = world.services.signing_key
    exports = Exports(
        ObjectStore(world.s3, ev.BUCKET),
        enqueue=lambda _: None,
        max_bytes=10**7,
        signer=lambda: key,
    )
    entries = list(world.services.queries.window_entries(DEVICE, "video", *_ms_window()))
    job = exports.create(DEVICE, *_ms_window(), entries)

    def ctrl_c(done: int, total: int) -> None:
        raise KeyboardInterrupt

    # When Ctrl-C comes while the first file is joined
    with pytest.raises(KeyboardInterrupt):
        exports.run(job.export_id, progress=ctrl_c)
    # Then the job reads interrupted, with the reason, and no clip was stored
    stopped = exports.get(job.export_id)
    assert (stopped.state, stopped.error) == (ExportState.INTERRUPTED, "stopped by Ctrl-C")
    # And running it again makes the clip
    done = exports.run(job.export_id)
    assert (done.state, done.error) == (ExportState.DONE, None)


def _ms_window() -> tuple[int, int]:
    return int(at(29, 10).timestamp() * 1000), int(at(29, 11).timestamp() * 1000)


def _job_writes(world: ApiWorld, export_id: str, seen: list[float]) -> list[float]:
    """The ``progress`` of every write of the job's object, in order."""

    def record(params: dict[str, Any], **_: Any) -> None:
        if params["Key"].endswith(f"{export_id}/job.json"):
            seen.append(json.loads(params["Body"])["progress"])

    world.s3.meta.events.register("provide-client-params.s3.PutObject", record)
    return seen


@pytest.mark.parametrize("body", ["not json", "{}", json.dumps({"export_id": "0" * 32})])
def test_a_message_naming_no_job_fails_its_record_toward_the_dlq(
    world: ApiWorld, queued: list[str], body: str
) -> None:
    # Given a message that is not one of ours, or names a job that does not exist
    worker = ExportWorker(world.services.exports)
    event = _message(body)
    # When the worker gets it
    response = worker.handle(event, None)
    # Then its record fails (SQS retries it, then parks it in the export DLQ)
    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}


def test_a_body_that_is_not_utf8_is_a_400_not_a_crash(world: ApiWorld, queued: list[str]) -> None:
    # Given a request whose body API Gateway passes base64-encoded (it is not text)
    event = ev.http_request(f"/devices/{DEVICE}/exports", method="POST")
    event["headers"]["content-type"] = "application/json"
    event["body"], event["isBase64Encoded"] = base64.b64encode(b"\xff\x74\x99").decode(), True
    # When the API gets it
    response = resolve(event)
    # Then it is a 400 naming the body, and nothing is queued
    assert response["statusCode"] == 400
    assert json.loads(response["body"])["error"]["parameter"] == "body"
    assert queued == []
