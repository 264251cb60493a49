"""The uploader (docs/uploading.md): conditional writes, idempotent retries, conflicts, multipart.

S3 is moto in-process (``mock_aws``); transient S3 failures are injected by a client
wrapper that raises scripted errors before (or after) the real call. Backoff sleeps
go to a recording fake, so nothing here really waits. The CLI is driven through
``video_index.cli.main.main`` and judged by exit code and output.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from video_index.cli import upload as upload_cli
from video_index.cli.main import main
from video_index.core.keys import SegmentKey, format_key, parse_key, segment_id, segment_id_hasher
from video_index.upload import (
    MIN_PART_SIZE,
    FileOutcome,
    ManifestEntry,
    UploadArgumentError,
    UploadConflict,
    UploadFailed,
    UploadResult,
    upload_directory,
    upload_segment,
)
from video_index.upload.retry import BACKOFF_CAP_S
from worlds.media import clip, fmp4_with

BUCKET = "video-index-test-segments"
START = datetime(2026, 11, 30, 12, tzinfo=UTC)
CONTENT = fmp4_with(b"a ten second segment")
TS_CONTENT = clip("ts")
#: Multipart from 5 MiB + 1 byte, in 5 MiB parts (S3's minimum for all but the last).
SMALL_MULTIPART = {"multipart_threshold": MIN_PART_SIZE + 1, "part_size": MIN_PART_SIZE}


# --- factories and doubles ---------------------------------------------------------------


def segment(**overrides: Any) -> dict[str, Any]:
    """Keyword arguments of one valid video segment upload; override any of them."""
    return {"kind": "video", "device": "cam-001", "start": START, "duration_ms": 10_000} | overrides


def expected_key(content: bytes, ext: str = "mp4", **overrides: Any) -> str:
    """The key docs/keys.md gives ``content`` uploaded with ``segment(**overrides)``."""
    args = segment(**overrides)
    return format_key(SegmentKey(**args, id=segment_id(content=content, **args), ext=ext))


def big_content(seed: int = 1, size: int = MIN_PART_SIZE + 2) -> bytes:
    """A valid fMP4 just above the small multipart threshold (two parts), one per seed."""
    return fmp4_with(hashlib.sha256(str(seed).encode()).digest(), size)


def write_file(folder: Path, name: str, content: bytes) -> Path:
    path = folder / name
    path.write_bytes(content)
    return path


def client_error(code: str, status: int, operation: str = "PutObject") -> ClientError:
    response: Any = {
        "Error": {"Code": code, "Message": f"injected {code}"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, operation)


class ScriptedClient:
    """Wraps an S3 client: ``fail_before[op]`` errors are raised instead of the next
    calls of ``op``; ``fail_after[op]`` errors after the real call succeeded (a lost
    response); ``before_call[op]`` runs just before each call of ``op``."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.fail_before: dict[str, list[Exception]] = {}
        self.fail_after: dict[str, list[Exception]] = {}
        self.before_call: dict[str, Callable[[], None]] = {}
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name.startswith("_") or name in ("meta", "exceptions") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if hook := self.before_call.get(name):
                hook()
            if self.fail_before.get(name):
                raise self.fail_before[name].pop(0)
            result = attr(*args, **kwargs)
            if self.fail_after.get(name):
                raise self.fail_after[name].pop(0)
            return result

        return call


class Sleeps(list[float]):
    """A fake ``sleep`` that records the backoff delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture(autouse=True)
def no_ambient_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint or bucket from the developer's shell; wide output for rich."""
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "VIDEO_INDEX_BUCKET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "300")


@functools.cache
def _shared_client() -> Any:
    """Building a client costs more than most tests here: build one and keep it. Each
    test's ``mock_aws`` still starts from empty backends; moto intercepts the client's
    requests whenever a mock is active."""
    return boto3.client("s3", region_name="us-east-1")


@pytest.fixture
def s3() -> Iterator[Any]:
    """A moto S3 client with an empty, versioned bucket."""
    with mock_aws():
        client = _shared_client()
        client.create_bucket(Bucket=BUCKET)
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        yield client


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def cli_client(monkeypatch: pytest.MonkeyPatch, s3: Any, sleeps: Sleeps) -> ScriptedClient:
    """The client (and sleep) the CLI uses: moto, scriptable, never really sleeping."""
    client = ScriptedClient(s3)
    monkeypatch.setattr(upload_cli, "_s3_client", lambda *_: client)
    monkeypatch.setattr(upload_cli, "_sleep", sleeps)
    return client


def object_bytes(s3: Any, key: str) -> bytes:
    return bytes(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())


def open_multipart_uploads(s3: Any) -> list[Any]:
    return list(s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []))


def cli_upload(*argv: str) -> int:
    return main(["upload", *argv])


def file_argv(path: Path, *extra: str) -> list[str]:
    return [
        str(path),
        "--device", "cam-001",
        "--kind", "video",
        "--start", "2026-11-30T12:00:00Z",
        "--duration-ms", "10000",
        "--bucket", BUCKET,
        *extra,
    ]  # fmt: skip


# --- the key -----------------------------------------------------------------------------


def test_first_upload_writes_the_content_under_the_spec_key(s3: Any, tmp_path: Path) -> None:
    # Given a segment file never uploaded before
    path = write_file(tmp_path, "clip.mp4", CONTENT)

    # When it is uploaded
    result = upload_segment(s3, BUCKET, path, **segment())

    # Then it is uploaded under a valid key whose id is the segment id of its content
    assert result == UploadResult(
        key=expected_key(CONTENT),
        status="uploaded",
        sha256=hashlib.sha256(CONTENT).hexdigest(),
        size=len(CONTENT),
        attempts=1,
    )
    parsed = parse_key(result.key)
    assert parsed.id == segment_id("video", "cam-001", START, 10_000, CONTENT)
    assert (parsed.kind, parsed.device, parsed.start, parsed.duration_ms, parsed.ext) == (
        "video",
        "cam-001",
        START,
        10_000,
        "mp4",
    )
    # ... with the content, its sha256 in the metadata and a playable content type
    head = s3.head_object(Bucket=BUCKET, Key=result.key)
    assert object_bytes(s3, result.key) == CONTENT
    assert head["Metadata"] == {"sha256": result.sha256}
    assert head["ContentType"] == "video/mp4"


def test_start_in_another_zone_is_keyed_in_utc(s3: Any) -> None:
    # Given a start given in UTC+02:00
    local = START.astimezone(timezone(timedelta(hours=2)))

    # When bytes are uploaded with it
    result = upload_segment(s3, BUCKET, TS_CONTENT, **segment(start=local), ext="ts")

    # Then the key is the one of the same instant in UTC
    assert result.key == expected_key(TS_CONTENT, ext="ts")
    assert "/2026/11/30/12/20261130T120000.000Z_" in result.key


@settings(max_examples=40, deadline=None)
@given(
    content=st.binary(max_size=300),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=5),
    millis=st.integers(min_value=0, max_value=10**12),
    duration_ms=st.integers(min_value=0, max_value=86_400_000),
)
def test_incremental_id_equals_segment_id(
    content: bytes, cuts: list[int], millis: int, duration_ms: int
) -> None:
    # Given any content fed in arbitrary chunks, and any start and duration
    start = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis)
    hasher = segment_id_hasher("sensor", "dev-9", start, duration_ms)
    bounds = [0, *sorted(c for c in cuts if c <= len(content)), len(content)]
    for low, high in itertools.pairwise(bounds):
        hasher.update(content[low:high])

    # Then the incremental id is the id keys.segment_id gives the whole content
    assert hasher.hexdigest()[:16] == segment_id("sensor", "dev-9", start, duration_ms, content)


# --- idempotence and conflicts -----------------------------------------------------------


def test_same_content_again_is_already_present_and_writes_no_version(
    s3: Any, tmp_path: Path
) -> None:
    # Given a segment already uploaded (into a versioned bucket)
    path = write_file(tmp_path, "clip.mp4", CONTENT)
    first = upload_segment(s3, BUCKET, path, **segment())

    # When the camera uploads it again
    again = upload_segment(s3, BUCKET, path, **segment())

    # Then it is reported already present, under the same key, and S3 holds one version
    assert again.status == "already-present"
    assert (again.key, again.sha256, again.size) == (first.key, first.sha256, first.size)
    versions = s3.list_object_versions(Bucket=BUCKET)["Versions"]
    assert [v["Key"] for v in versions] == [first.key]


def test_different_content_under_the_key_is_a_conflict_naming_both_checksums(
    s3: Any, tmp_path: Path
) -> None:
    # Given other bytes already stored under the key the segment will get
    key = expected_key(CONTENT)
    s3.put_object(
        Bucket=BUCKET,
        Key=key,
        Body=b"other bytes",
        Metadata={"sha256": hashlib.sha256(b"other bytes").hexdigest()},
    )
    path = write_file(tmp_path, "clip.mp4", CONTENT)

    # When the segment is uploaded
    with pytest.raises(UploadConflict) as raised:
        upload_segment(s3, BUCKET, path, **segment())

    # Then the conflict names the key and both checksums, and the object is untouched
    local, remote = hashlib.sha256(CONTENT).hexdigest(), hashlib.sha256(b"other bytes").hexdigest()
    conflict = raised.value
    assert (conflict.key, conflict.local_sha256, conflict.remote_sha256) == (key, local, remote)
    assert conflict.attempts == 1
    assert local in str(conflict) and remote in str(conflict)
    assert object_bytes(s3, key) == b"other bytes"


@pytest.mark.parametrize(
    ("stored", "expected"),
    [(CONTENT, "already-present"), (b"other bytes", "conflict")],
    ids=["same", "different"],
)
def test_object_without_sha256_metadata_is_compared_by_its_content(
    s3: Any, stored: bytes, expected: str
) -> None:
    # Given an object under the key written by another tool, without sha256 metadata
    key = expected_key(CONTENT)
    s3.put_object(Bucket=BUCKET, Key=key, Body=stored)

    # When the segment is uploaded
    try:
        status = upload_segment(s3, BUCKET, CONTENT, **segment(), ext="mp4").status
        remote = None
    except UploadConflict as exc:
        status, remote = "conflict", exc.remote_sha256

    # Then the ETag / content decides: same bytes are already present, others conflict
    assert status == expected
    if expected == "conflict":
        assert remote == hashlib.sha256(stored).hexdigest()


def test_cli_conflict_exits_1_and_shows_both_checksums(
    cli_client: ScriptedClient, s3: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given other bytes under the key of the file
    s3.put_object(Bucket=BUCKET, Key=expected_key(CONTENT), Body=b"other bytes")
    path = write_file(tmp_path, "clip.mp4", CONTENT)

    # When the file is uploaded with the CLI
    code = cli_upload(*file_argv(path))

    # Then the exit code is 1 and both checksums are shown
    out = capsys.readouterr().out
    assert code == 1
    assert "conflict" in out
    assert hashlib.sha256(CONTENT).hexdigest() in out
    assert hashlib.sha256(b"other bytes").hexdigest() in out


# --- retries -----------------------------------------------------------------------------


def test_409_conditional_request_conflict_is_retried_with_backoff(s3: Any, sleeps: Sleeps) -> None:
    # Given S3 answers the first PUT with 409 ConditionalRequestConflict
    client = ScriptedClient(s3)
    client.fail_before["put_object"] = [client_error("ConditionalRequestConflict", 409)]

    # When a segment is uploaded
    result = upload_segment(client, BUCKET, CONTENT, **segment(), ext="mp4", sleep=sleeps)

    # Then the second attempt uploads it, after one backoff of 0.05-0.1 s
    assert (result.status, result.attempts) == ("uploaded", 2)
    assert len(sleeps) == 1 and 0.05 <= sleeps[0] <= 0.1
    assert object_bytes(s3, result.key) == CONTENT


@pytest.mark.parametrize(
    "error",
    [
        client_error("SlowDown", 503),
        client_error("InternalError", 500),
        client_error("OperationAborted", 409),
        client_error("TooManyRequests", 429),
        EndpointConnectionError(endpoint_url="http://s3.invalid"),
    ],
    ids=["503-SlowDown", "500-InternalError", "409-OperationAborted", "429", "connection"],
)
def test_transient_errors_are_retried(s3: Any, sleeps: Sleeps, error: Exception) -> None:
    # Given S3 fails the first two PUTs with a transient error
    client = ScriptedClient(s3)
    client.fail_before["put_object"] = [error, error]

    # When a segment is uploaded
    result = upload_segment(client, BUCKET, CONTENT, **segment(), ext="mp4", sleep=sleeps)

    # Then the third attempt uploads it, after two growing backoffs
    assert (result.status, result.attempts) == ("uploaded", 3)
    assert len(sleeps) == 2 and sleeps[0] <= 0.1 < sleeps[1] <= 0.2


def test_backoff_doubles_up_to_the_cap(s3: Any, sleeps: Sleeps) -> None:
    # Given S3 keeps answering 503 SlowDown, and jitter at its maximum
    client = ScriptedClient(s3)
    client.fail_before["put_object"] = [client_error("SlowDown", 503)] * 10

    # When a segment is uploaded with 10 attempts
    with pytest.raises(UploadFailed):
        upload_segment(
            client,
            BUCKET,
            CONTENT,
            **segment(),
            ext="mp4",
            max_attempts=10,
            sleep=sleeps,
            jitter=lambda: 1.0,
        )

    # Then the delays double from 0.1 s and stop growing at 5 s
    assert sleeps == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])
    assert max(sleeps) == BACKOFF_CAP_S


def test_response_lost_after_the_write_is_already_present_on_retry(s3: Any, sleeps: Sleeps) -> None:
    # Given the first PUT succeeds but its response is lost (500 after the write)
    client = ScriptedClient(s3)
    client.fail_after["put_object"] = [client_error("InternalError", 500)]

    # When a segment is uploaded
    result = upload_segment(client, BUCKET, CONTENT, **segment(), ext="mp4", sleep=sleeps)

    # Then the retry finds its own content under the key: success, one version
    assert (result.status, result.attempts) == ("already-present", 2)
    assert len(s3.list_object_versions(Bucket=BUCKET)["Versions"]) == 1


def test_exhausted_retries_raise_upload_failed_naming_the_code(s3: Any, sleeps: Sleeps) -> None:
    # Given S3 answers every PUT with 503 SlowDown
    client = ScriptedClient(s3)
    client.fail_before["put_object"] = [client_error("SlowDown", 503)] * 6

    # When a segment is uploaded with the default 6 attempts
    with pytest.raises(UploadFailed) as raised:
        upload_segment(client, BUCKET, CONTENT, **segment(), ext="mp4", sleep=sleeps)

    # Then it gives up after 6 attempts (5 backoffs), naming SlowDown; nothing is stored
    failure = raised.value
    assert (failure.code, failure.attempts, failure.exhausted) == ("SlowDown", 6, True)
    assert "SlowDown" in str(failure)
    assert len(sleeps) == 5
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET)


def test_retry_time_budget_ends_retrying_early(s3: Any) -> None:
    # Given S3 keeps failing and a clock that advances with each backoff
    client = ScriptedClient(s3)
    client.fail_before["put_object"] = [client_error("SlowDown", 503)] * 20
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    # When a segment is uploaded with a 1 s retry budget and many attempts allowed
    with pytest.raises(UploadFailed) as raised:
        upload_segment(
            client,
            BUCKET,
            CONTENT,
            **segment(),
            ext="mp4",
            max_attempts=20,
            sleep=sleep,
            clock=lambda: now[0],
            jitter=lambda: 1.0,
            retry_timeout_s=1.0,
        )

    # Then it gives up before the budget is spent (0.1 + 0.2 + 0.4 = 0.7; next 0.8)
    assert raised.value.attempts == 4
    assert now[0] == pytest.approx(0.7)


def test_non_retryable_error_fails_at_once(sleeps: Sleeps, s3: Any) -> None:
    # Given a bucket that does not exist
    # When a segment is uploaded to it
    with pytest.raises(UploadFailed) as raised:
        upload_segment(s3, "no-such-bucket-here", CONTENT, **segment(), ext="mp4", sleep=sleeps)

    # Then it fails after one attempt, naming S3's error code
    assert (raised.value.code, raised.value.attempts, raised.value.exhausted) == (
        "NoSuchBucket",
        1,
        False,
    )
    assert "NoSuchBucket" in str(raised.value)
    assert sleeps == []


def test_cli_exits_3_when_s3_stays_unavailable(
    cli_client: ScriptedClient, sleeps: Sleeps, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given S3 answers every PUT with 503 SlowDown
    cli_client.fail_before["put_object"] = [client_error("SlowDown", 503)] * 3
    path = write_file(tmp_path, "clip.mp4", CONTENT)

    # When the file is uploaded with 3 attempts
    code = cli_upload(*file_argv(path, "--max-attempts", "3", "--json"))

    # Then the exit code is 3 and the JSON result names the error code
    [result] = json.loads(capsys.readouterr().out)
    assert code == 3
    assert (result["status"], result["error_code"], result["attempts"]) == ("failed", "SlowDown", 3)
    assert len(sleeps) == 2


# --- multipart ---------------------------------------------------------------------------


def test_large_file_goes_up_in_parts_with_its_sha256(s3: Any, tmp_path: Path) -> None:
    # Given a file above the multipart threshold
    content = big_content()
    path = write_file(tmp_path, "long.mp4", content)

    # When it is uploaded
    result = upload_segment(s3, BUCKET, path, **segment(), **SMALL_MULTIPART)

    # Then the object (of two parts) is the file, under the key of its whole content
    assert (result.status, result.key) == ("uploaded", expected_key(content))
    head = s3.head_object(Bucket=BUCKET, Key=result.key)
    assert head["ETag"].strip('"').endswith("-2")
    assert head["Metadata"] == {"sha256": hashlib.sha256(content).hexdigest()}
    assert object_bytes(s3, result.key) == content
    assert open_multipart_uploads(s3) == []


def test_large_file_again_is_already_present_without_sending_parts(s3: Any, tmp_path: Path) -> None:
    # Given a large file already uploaded
    path = write_file(tmp_path, "long.mp4", big_content())
    first = upload_segment(s3, BUCKET, path, **segment(), **SMALL_MULTIPART)
    client = ScriptedClient(s3)

    # When it is uploaded again
    again = upload_segment(client, BUCKET, path, **segment(), **SMALL_MULTIPART)

    # Then it is already present, found before any part was sent
    assert (again.status, again.key, again.attempts) == ("already-present", first.key, 0)
    assert "upload_part" not in client.calls
    assert len(s3.list_object_versions(Bucket=BUCKET)["Versions"]) == 1


def test_large_file_conflict_leaves_no_multipart_upload(s3: Any, tmp_path: Path) -> None:
    # Given other bytes under the key of a large file
    content = big_content()
    s3.put_object(Bucket=BUCKET, Key=expected_key(content), Body=b"other bytes")
    path = write_file(tmp_path, "long.mp4", content)

    # When the file is uploaded
    with pytest.raises(UploadConflict) as raised:
        upload_segment(s3, BUCKET, path, **segment(), **SMALL_MULTIPART)

    # Then it is a conflict naming both checksums, and no multipart upload is left
    assert raised.value.remote_sha256 == hashlib.sha256(b"other bytes").hexdigest()
    assert open_multipart_uploads(s3) == []


def test_key_taken_during_a_multipart_upload_is_a_conflict_and_the_upload_aborted(
    s3: Any, tmp_path: Path
) -> None:
    # Given another writer puts other bytes under the key while the parts go up
    content = big_content()
    key = expected_key(content)
    client = ScriptedClient(s3)
    client.before_call["complete_multipart_upload"] = lambda: s3.put_object(
        Bucket=BUCKET, Key=key, Body=b"raced", Metadata={"sha256": "ab" * 32}
    )
    path = write_file(tmp_path, "long.mp4", content)

    # When the file is uploaded
    with pytest.raises(UploadConflict) as raised:
        upload_segment(client, BUCKET, path, **segment(), **SMALL_MULTIPART)

    # Then the conditional completion refuses (412): a conflict, the other object kept,
    # and the multipart upload aborted
    assert raised.value.remote_sha256 == "ab" * 32
    assert object_bytes(s3, key) == b"raced"
    assert open_multipart_uploads(s3) == []
    assert "abort_multipart_upload" in client.calls


def test_same_content_landing_during_a_multipart_upload_is_already_present(
    s3: Any, tmp_path: Path
) -> None:
    # Given another uploader completes the same large segment while ours is in flight
    content = big_content()
    path = write_file(tmp_path, "long.mp4", content)
    client = ScriptedClient(s3)

    def other_uploader_finishes_first() -> None:
        upload_segment(s3, BUCKET, path, **segment(), **SMALL_MULTIPART)

    client.before_call["complete_multipart_upload"] = other_uploader_finishes_first

    # When our upload completes
    result = upload_segment(client, BUCKET, path, **segment(), **SMALL_MULTIPART)

    # Then it is already present, and our multipart upload is aborted
    assert (result.status, result.attempts) == ("already-present", 1)
    assert open_multipart_uploads(s3) == []


def test_part_and_completion_failures_are_retried(s3: Any, tmp_path: Path, sleeps: Sleeps) -> None:
    # Given a part fails with 500 and the completion with 409 once each
    content = big_content()
    client = ScriptedClient(s3)
    client.fail_before["upload_part"] = [client_error("InternalError", 500, "UploadPart")]
    client.fail_before["complete_multipart_upload"] = [
        client_error("ConditionalRequestConflict", 409, "CompleteMultipartUpload")
    ]

    # When the large file is uploaded
    result = upload_segment(
        client,
        BUCKET,
        write_file(tmp_path, "long.mp4", content),
        **segment(),
        sleep=sleeps,
        **SMALL_MULTIPART,
    )

    # Then it is uploaded (completion on the second attempt) with the right content
    assert (result.status, result.attempts) == ("uploaded", 2)
    assert len(sleeps) == 2
    assert object_bytes(s3, result.key) == content


def test_failed_part_aborts_the_multipart_upload(s3: Any, tmp_path: Path, sleeps: Sleeps) -> None:
    # Given S3 refuses a part for good (403)
    client = ScriptedClient(s3)
    client.fail_before["upload_part"] = [client_error("AccessDenied", 403, "UploadPart")]

    # When the large file is uploaded
    with pytest.raises(UploadFailed) as raised:
        upload_segment(
            client,
            BUCKET,
            write_file(tmp_path, "long.mp4", big_content()),
            **segment(),
            sleep=sleeps,
            **SMALL_MULTIPART,
        )

    # Then it fails naming AccessDenied, nothing is stored and no upload is left open
    assert (raised.value.operation, raised.value.code) == ("UploadPart", "AccessDenied")
    assert open_multipart_uploads(s3) == []
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET)


# --- bad arguments -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "argument", "words"),
    [
        ({"device": "Cam_001"}, "device", "[a-z0-9-]"),
        ({"kind": "audio"}, "kind", "video"),
        ({"start": datetime(2026, 11, 30, 12)}, "start", "timezone"),
        ({"duration_ms": 0}, "duration_ms", "out of range for video"),
        ({"duration_ms": 3_600_001}, "duration_ms", "out of range"),
        ({"ext": "json"}, "ext", "mp4, ts"),
        ({"kind": "sensor", "ext": "mp4"}, "ext", "json"),
        ({"start": START + timedelta(microseconds=1)}, "start", "millisecond"),
        ({"part_size": 1024}, "part_size", "minimum part size"),
        ({"max_attempts": 0}, "max_attempts", "at least 1"),
    ],
    ids=lambda value: str(value) if isinstance(value, str) else None,
)
def test_bad_argument_is_refused_naming_it(
    s3: Any, tmp_path: Path, overrides: dict[str, Any], argument: str, words: str
) -> None:
    # Given a segment file and one bad argument
    path = write_file(tmp_path, "clip.mp4", CONTENT)
    overrides = dict(overrides)
    tuning = {k: overrides.pop(k) for k in ("ext", "part_size", "max_attempts") if k in overrides}

    # When it is uploaded
    with pytest.raises(UploadArgumentError) as raised:
        upload_segment(s3, BUCKET, path, **segment(**overrides), **tuning)

    # Then the error names the argument and says what is wrong; nothing is written
    assert raised.value.argument == argument
    assert words in str(raised.value)
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET)


def test_missing_file_and_bytes_without_ext_are_refused(s3: Any, tmp_path: Path) -> None:
    # Given a path that does not exist, and bytes without an extension
    # When they are uploaded
    # Then the errors name path and ext
    with pytest.raises(UploadArgumentError) as missing:
        upload_segment(s3, BUCKET, tmp_path / "gone.mp4", **segment())
    with pytest.raises(UploadArgumentError) as no_ext:
        upload_segment(s3, BUCKET, CONTENT, **segment())
    assert (missing.value.argument, no_ext.value.argument) == ("path", "ext")


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--device", "Cam_001"], "--device"),
        (["--kind", "audio"], "--kind"),
        (["--start", "2026-11-30T12:00:00"], "--start"),
        (["--start", "yesterday"], "--start"),
        (["--duration-ms", "0"], "--duration-ms"),
        (["--duration-ms", "ten"], "--duration-ms"),
        (["--ext", "json"], "--ext"),
        (["--max-attempts", "0"], "--max-attempts"),
        (["--drop", "--start"], "--start"),
        (["--drop", "--duration-ms"], "--duration-ms"),
        (["--drop", "--bucket"], "--bucket"),
        (["--drop", "--device"], "--device"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_cli_bad_argument_exits_2_naming_it(
    cli_client: ScriptedClient,
    s3: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    flag: str,
) -> None:
    # Given the arguments of a good upload with one made bad (or left out)
    full = file_argv(write_file(tmp_path, "clip.mp4", CONTENT))
    if argv[0] == "--drop":
        at = full.index(argv[1])
        del full[at : at + 2]
    elif argv[0] in full:
        full[full.index(argv[0]) + 1] = argv[1]
    else:
        full += argv

    # When the CLI runs
    code = cli_upload(*full)

    # Then it exits 2 with a message naming the argument, and uploads nothing
    assert code == 2
    assert flag in capsys.readouterr().err
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET)


def test_cli_directory_refuses_start_and_missing_path_is_named(
    cli_client: ScriptedClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a directory with --start, and a path that does not exist
    # When each is uploaded
    with_start = cli_upload(
        str(tmp_path),
        "--device",
        "cam-001",
        "--kind",
        "video",
        "--bucket",
        BUCKET,
        "--start",
        "2026-11-30T12:00:00Z",
    )
    start_err = capsys.readouterr().err
    missing = cli_upload(*file_argv(tmp_path / "gone.mp4"))

    # Then both exit 2 naming the argument
    assert (with_start, missing) == (2, 2)
    assert "argument --start: not allowed when PATH is a directory" in start_err
    assert "argument PATH" in capsys.readouterr().err


def test_cli_bucket_comes_from_the_environment(
    cli_client: ScriptedClient,
    s3: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given VIDEO_INDEX_BUCKET and no --bucket
    monkeypatch.setenv("VIDEO_INDEX_BUCKET", BUCKET)
    argv = file_argv(write_file(tmp_path, "clip.mp4", CONTENT))
    del argv[argv.index("--bucket") : argv.index("--bucket") + 2]

    # When the file is uploaded, twice
    first, second = cli_upload(*argv), cli_upload(*argv)

    # Then both exit 0: uploaded, then already present, each line with key and sha256
    out = capsys.readouterr().out
    assert (first, second) == (0, 0)
    assert out.count(expected_key(CONTENT)) == 2
    assert "uploaded" in out and "already-present" in out
    assert hashlib.sha256(CONTENT).hexdigest()[:12] in out
    assert object_bytes(s3, expected_key(CONTENT)) == CONTENT


def test_cli_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    # When upload's help is shown
    code = main(["upload", "--help"])

    # Then it lists the four exit codes
    out = capsys.readouterr().out
    assert code == 0
    for line in ("0  every file", "1  conflict", "2  bad arguments", "3  S3 unavailable"):
        assert line in out


# --- directory mode ----------------------------------------------------------------------


def fill_directory(folder: Path, s3: Any) -> dict[str, bytes]:
    """Two good segments, a conflicting one, a badly named file, a hidden file, a
    subdirectory and a well-named file with a duration out of range."""
    files = {
        "20261130T120000.000Z_10000.mp4": fmp4_with(b"first segment"),
        "20261130T120010.000Z_10000.mp4": fmp4_with(b"second segment"),
        "20261130T120020.000Z_10000.mp4": fmp4_with(b"conflicting segment"),
        "notes.txt": b"not a segment",
        ".DS_Store": b"",
        "20261130T120030.000Z_0.mp4": fmp4_with(b"zero-length video"),
    }
    for name, content in files.items():
        write_file(folder, name, content)
    (folder / "nested").mkdir()
    taken = expected_key(fmp4_with(b"conflicting segment"), start=START + timedelta(seconds=20))
    s3.put_object(Bucket=BUCKET, Key=taken, Body=b"something else")
    return files


def test_directory_mode_reports_every_file_and_one_bad_file_stops_nothing(
    s3: Any, tmp_path: Path
) -> None:
    # Given a directory of good, conflicting, badly named and invalid files
    files = fill_directory(tmp_path, s3)

    # When it is uploaded
    outcomes = upload_directory(s3, BUCKET, tmp_path, kind="video", device="cam-001")

    # Then every entry has an outcome, in name order, and both good files are stored
    by_name = {Path(o.path).name: o for o in outcomes}
    assert [Path(o.path).name for o in outcomes] == sorted(by_name)
    assert {name: o.status for name, o in by_name.items()} == {
        ".DS_Store": "skipped",
        "20261130T120000.000Z_10000.mp4": "uploaded",
        "20261130T120010.000Z_10000.mp4": "uploaded",
        "20261130T120020.000Z_10000.mp4": "conflict",
        "20261130T120030.000Z_0.mp4": "failed",
        "nested": "skipped",
        "notes.txt": "skipped",
    }
    assert "does not follow <start>_<duration_ms>.<ext>" in str(by_name["notes.txt"].reason)
    assert "out of range" in str(by_name["20261130T120030.000Z_0.mp4"].reason)
    assert (
        by_name["20261130T120020.000Z_10000.mp4"].remote_sha256
        == hashlib.sha256(b"something else").hexdigest()
    )
    second = by_name["20261130T120010.000Z_10000.mp4"]
    assert second.key == expected_key(files[Path(second.path).name], start=START.replace(second=10))
    assert object_bytes(s3, str(second.key)) == fmp4_with(b"second segment")


def test_directory_manifest_gives_start_and_duration_of_other_names(
    s3: Any, tmp_path: Path
) -> None:
    # Given a file whose name says nothing, described by a manifest
    write_file(tmp_path, "clip-a.mp4", CONTENT)
    manifest = {"clip-a.mp4": ManifestEntry(START, 10_000), "gone.mp4": ManifestEntry(START, 1)}

    # When the directory is uploaded with it
    outcomes = upload_directory(
        s3, BUCKET, tmp_path, kind="video", device="cam-001", manifest=manifest
    )

    # Then the file is keyed from the manifest, and the missing entry is reported
    assert [(Path(o.path).name, o.status) for o in outcomes] == [
        ("clip-a.mp4", "uploaded"),
        ("gone.mp4", "failed"),
    ]
    assert outcomes[0].key == expected_key(CONTENT)


def test_cli_directory_mode_exits_1_with_a_json_list(
    cli_client: ScriptedClient, s3: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the mixed directory
    fill_directory(tmp_path, s3)

    # When it is uploaded with the CLI (PATH is a directory: directory mode)
    code = cli_upload(
        str(tmp_path), "--device", "cam-001", "--kind", "video", "--bucket", BUCKET, "--json"
    )

    # Then the exit code is 1 (a conflict, an invalid file) and JSON lists every file
    results = json.loads(capsys.readouterr().out)
    assert code == 1
    assert sorted(r["status"] for r in results) == [
        "conflict",
        "failed",
        "skipped",
        "skipped",
        "skipped",
        "uploaded",
        "uploaded",
    ]
    conflict = next(r for r in results if r["status"] == "conflict")
    assert conflict["remote_sha256"] == hashlib.sha256(b"something else").hexdigest()


def test_cli_directory_of_good_files_exits_0_then_already_present(
    cli_client: ScriptedClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a directory with one good segment and a file to skip
    write_file(tmp_path, "20261130T120000.000Z_10000.mp4", CONTENT)
    write_file(tmp_path, "README", b"skip me")
    argv = [str(tmp_path), "--device", "cam-001", "--kind", "video", "--bucket", BUCKET]

    # When it is uploaded twice
    codes = (cli_upload(*argv), cli_upload(*argv))

    # Then both runs exit 0 (skipped files do not count): uploaded, then already present
    out = capsys.readouterr().out
    assert codes == (0, 0)
    assert "2 files: 1 uploaded, 1 skipped" in out
    assert "2 files: 1 already-present, 1 skipped" in out


@pytest.mark.parametrize(
    ("statuses", "directory", "code"),
    [
        (["uploaded", "already-present", "skipped"], True, 0),
        (["uploaded", "conflict"], False, 1),
        (["uploaded", "failed"], True, 1),
        (["uploaded", "s3-failed"], True, 1),
        (["s3-failed", "s3-failed", "skipped"], True, 3),
        (["s3-failed"], False, 3),
    ],
)
def test_exit_code_rules(statuses: list[str], directory: bool, code: int) -> None:
    # Given outcomes of an upload run
    outcomes = [
        FileOutcome("f", "failed", error_code="SlowDown", s3_unavailable=True)
        if status == "s3-failed"
        else FileOutcome("f", status)
        for status in statuses
    ]

    # Then the exit code follows the documented rules
    assert upload_cli.exit_code(outcomes, directory=directory) == code


# --- import hygiene ----------------------------------------------------------------------


def test_importing_the_cli_imports_no_aws_sdk() -> None:
    # When video_index.cli.main (and so upload_cli) is imported in a fresh interpreter
    script = (
        "import sys, video_index.cli.main, video_index.cli.upload\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )

    # Then neither boto3 nor botocore was imported
    assert result.stdout.strip() == "[]"
