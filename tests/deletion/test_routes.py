"""The deletion routes (docs/api.md) and the deletion worker, in-process on moto.

Jobs are queued into a list instead of SQS; the worker is fed SQS-shaped events.
End to end over HTTP with the real queue and worker: tests/local/test_deletion_local.py.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import boto3
import pytest

from tests.support.deletion_world import Clock
from video_index.annotations.identity import local_authorizer
from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.table_schema import create_tables
from video_index.deletion.jobs import DeletionJobs
from video_index.deletion.worker import DeletionWorker
from video_index.holds.service import Holds, HoldsHeldWindows
from video_index.local.context import LocalLambdaContext
from worlds import events as ev
from worlds.api_world import ApiWorld, at, iso, make_world, resolve

DEVICE = "cam-routes"
WINDOW = {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T11:00:00Z"}


class Deletions:
    def __init__(self, world: ApiWorld, jobs: DeletionJobs) -> None:
        self.world = world
        self.jobs = jobs
        self.queued: list[str] = []
        jobs._enqueue = self.queued.append

    def call(
        self, method: str, path: str, query: dict[str, str] | None = None, **headers: str
    ) -> tuple[int, Any, dict[str, str]]:
        event = ev.http_request(path, urlencode(query or {}), method)
        event["headers"].update(headers)
        if "x-user" in headers:  # as video-index local's server stands in for an authorizer
            event["requestContext"]["authorizer"] = local_authorizer(event["headers"])
        response = resolve(event)
        body = json.loads(response["body"]) if response.get("body") else None
        return response["statusCode"], body, response.get("headers") or {}

    def work(self, remaining_seconds: float = 900) -> dict[str, Any]:
        """Feed every queued job to the deletion worker once."""
        continued: list[str] = []
        worker = DeletionWorker(self.jobs, continued.append)
        records = [ev.sqs_record(json.dumps({"deletion_id": i})) for i in self.queued]
        self.queued = continued
        context = LocalLambdaContext("deletion", remaining_seconds, "us-east-1")
        return worker.handle(ev.sqs_event(*records), context)


@pytest.fixture
def deletions(aws: None) -> Deletions:
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "read-model", deletions="deletions", holds="holds")
    world = make_world(dynamodb, "read-model")
    jobs = DeletionJobs(
        DeletionTable(dynamodb, "deletions"),
        ObjectStore(world.s3, ev.BUCKET),
        enqueue=lambda _: None,
        holds=HoldsHeldWindows(Holds(HoldStore(dynamodb, "holds"))),
        clock=Clock(),
    )
    world.services.deletions = jobs
    return Deletions(world, jobs)


def test_a_deletion_is_accepted_with_202_and_its_progress_can_be_followed(
    deletions: Deletions,
) -> None:
    # Given four segments, three of them in the window
    world = deletions.world
    for minute in (59, 0, 10, 50):
        world.put("video", DEVICE, at(29, 10 if minute < 59 else 9, minute), 10_000)
    # When the window is deleted
    status, body, headers = deletions.call("DELETE", f"/devices/{DEVICE}/segments", WINDOW)
    # Then the request is accepted, recorded (by the IAM caller), and its job queued
    assert status == 202, body
    assert headers["Location"] == f"/deletions/{body['deletion_id']}"
    assert deletions.queued == [body["deletion_id"]]
    assert body == {
        **body,
        "device": DEVICE,
        "from": "2026-11-29T10:00:00.000Z",
        "to": "2026-11-29T11:00:00.000Z",
        "kind": None,
        "erase": False,
        "state": "queued",
        "deleted": 0,
        "remaining": None,
        "created_by": "arn:aws:iam::111122223333:user/viewer",
    }
    assert body["created_at"].endswith("Z")
    # When the worker runs it (and SQS delivers the message twice)
    assert deletions.work() == {"batchItemFailures": []}
    # Then its progress shows it done, with exactly the window's three segments deleted
    status, done, _ = deletions.call("GET", headers["Location"])
    assert status == 200
    assert (done["state"], done["deleted"], done["remaining"]) == ("done", 3, 0)
    assert world.get(f"/devices/{DEVICE}/segments", f"from={iso(at(29, 9))}&to={iso(at(29, 12))}")[
        1
    ]["items"][0]["start"] == iso(at(29, 9, 59))


def test_withdrawing_answers_the_withdrawn_request_every_time(deletions: Deletions) -> None:
    _, body, _ = deletions.call(
        "DELETE", f"/devices/{DEVICE}/segments", WINDOW, **{"x-user": "ann"}
    )
    assert body["created_by"] == "ann"
    path = f"/deletions/{body['deletion_id']}"
    for _ in range(2):
        status, withdrawn, _ = deletions.call("DELETE", path, **{"x-user": "bob"})
        assert status == 200
        assert (withdrawn["state"], withdrawn["withdrawn_by"]) == ("withdrawn", "bob")
    assert deletions.jobs.windows(DEVICE) == []


def test_an_unknown_device_is_an_empty_job_not_an_error(deletions: Deletions) -> None:
    status, body, _ = deletions.call("DELETE", "/devices/cam-nobody/segments", WINDOW)
    assert status == 202
    deletions.work()
    done = deletions.call("GET", f"/deletions/{body['deletion_id']}")[1]
    assert (done["state"], done["deleted"], done["total"]) == ("done", 0, 0)


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({"from": "2026-11-29T11:00:00Z", "to": "2026-11-29T10:00:00Z"}, "to"),
        ({"from": "2026-11-01T00:00:00Z", "to": "2026-12-02T00:00:01Z"}, "to"),
        ({"to": "2026-11-29T10:00:00Z"}, "from"),
        ({**WINDOW, "kind": "audio"}, "kind"),
        ({**WINDOW, "erase": "maybe"}, "erase"),
    ],
)
def test_bad_windows_kinds_and_flags_are_a_400_naming_them_and_record_nothing(
    deletions: Deletions, query: dict[str, str], parameter: str
) -> None:
    status, body, _ = deletions.call("DELETE", f"/devices/{DEVICE}/segments", query)
    assert status == 400 and body["error"]["parameter"] == parameter, body
    assert deletions.queued == [] and deletions.jobs.all_windows() == []


def test_an_invalid_device_is_a_400(deletions: Deletions) -> None:
    status, body, _ = deletions.call("DELETE", "/devices/Not_A_Device/segments", WINDOW)
    assert status == 400 and body["error"]["parameter"] == "device"


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_an_unknown_deletion_is_404_and_a_malformed_id_400(
    deletions: Deletions, method: str
) -> None:
    assert deletions.call(method, "/deletions/" + "0" * 32)[0] == 404
    assert deletions.call(method, "/deletions/not-an-id")[0] == 400


def test_without_a_deletion_table_the_routes_answer_503(deletions: Deletions) -> None:
    deletions.world.services.deletions = None
    assert deletions.call("DELETE", f"/devices/{DEVICE}/segments", WINDOW)[0] == 503


def test_a_job_out_of_time_queues_its_own_continuation(deletions: Deletions) -> None:
    # Given a queued job over a window with segments
    for second in range(0, 60, 10):
        deletions.world.put("video", DEVICE, at(29, 10, 0, second), 10_000)
    _, body, _ = deletions.call("DELETE", f"/devices/{DEVICE}/segments", WINDOW)
    # When the worker's invocation has less time left than the job's margin
    assert deletions.work(remaining_seconds=30) == {"batchItemFailures": []}
    # Then the job paused and queued its continuation, which finishes it
    assert deletions.queued == [body["deletion_id"]]
    assert deletions.call("GET", f"/deletions/{body['deletion_id']}")[1]["state"] == "running"
    deletions.work()
    done = deletions.call("GET", f"/deletions/{body['deletion_id']}")[1]
    assert (done["state"], done["deleted"]) == ("done", 6)


def test_a_message_that_names_no_job_fails_its_record(deletions: Deletions) -> None:
    worker = DeletionWorker(deletions.jobs, lambda _: None)
    record = ev.sqs_record("not json")
    assert worker.handle(ev.sqs_event(record), None) == {
        "batchItemFailures": [{"itemIdentifier": record["messageId"]}]
    }
