"""Infrastructure of playback and export (docs/playback.md): the export pipeline, CORS.

The default template comes from the session ``synth``; viewer origins set by context
get one more synthesis of the whole app (module scope).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.template import Synth, as_list, statements_by_sid, synthesize

VIEWER = "https://viewer.example.com"


@pytest.fixture(scope="module")
def viewer_synth() -> Synth:
    # Given the app synthesized with -c viewer_origins=<one origin>
    return synthesize({"viewer_origins": VIEWER})


def test_export_function_has_the_time_memory_and_disk_a_long_clip_needs(synth: Synth) -> None:
    # Given the export function
    props = synth.props(synth.stack.exports.function)
    # Then it may run Lambda's maximum 15 minutes, with 3 GB and 10 GB of /tmp by default
    assert props["Timeout"] == 900
    assert props["MemorySize"] == 3008
    assert props["EphemeralStorage"] == {"Size": 10240}
    assert props["Handler"] == "video_index.handlers.export.handler"
    assert props["Environment"]["Variables"]["VIDEO_INDEX_MAX_EXPORT_BYTES"] == str(2 * 1024**3)


def test_export_queue_feeds_one_job_per_invocation_and_parks_poison_jobs(synth: Synth) -> None:
    # Given the export queue and the mapping that feeds the export function
    exports = synth.stack.exports
    queue = synth.props(exports.queue)
    mappings = synth.of_type("AWS::Lambda::EventSourceMapping").values()
    (mapping,) = [
        m["Properties"]
        for m in mappings
        if m["Properties"]["FunctionName"] == synth.ref(exports.function)
    ]
    # Then one job per invocation, with partial batch responses
    assert mapping["EventSourceArn"] == synth.arn(exports.queue)
    assert mapping["BatchSize"] == 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # And a job is hidden for six times the function timeout (AWS's advice for SQS sources)
    assert queue["VisibilityTimeout"] == 6 * 900
    # And a job failing transiently again and again ends in the export DLQ
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == synth.arn(exports.dead_letter_queue)
    assert queue["RedrivePolicy"]["maxReceiveCount"] == 5
    # And an export DLQ that is not empty raises an alarm on the alarm topic
    alarm = synth.props(synth.stack.monitoring.dlq_alarms["Export"])
    assert alarm["Dimensions"][0]["Value"] == {
        "Fn::GetAtt": [synth.logical_id(exports.dead_letter_queue), "QueueName"]
    }
    assert alarm["AlarmActions"] == [synth.ref(synth.stack.monitoring.topic)]


def test_export_role_reads_video_and_writes_exports_only(synth: Synth) -> None:
    # Given the export role's statements
    exports = synth.stack.exports
    statements = synth.policy_statements(exports.role)
    by_sid = {s.get("Sid"): s for s in statements}
    bucket_arn = synth.arn(synth.stack.storage.bucket)
    # Then it reads segment objects under v1/ and lists the bucket (404 for a missing key)
    assert by_sid["ReadSegmentObjects"]["Action"] == "s3:GetObject"
    assert by_sid["ReadSegmentObjects"]["Resource"] == {"Fn::Join": ["", [bucket_arn, "/v1/*"]]}
    assert by_sid["ListSegmentKeys"]["Resource"] == bucket_arn
    # And it reads and writes its jobs and clips under exports/ only
    assert by_sid["ReadWriteExports"]["Action"] == ["s3:GetObject", "s3:PutObject"]
    assert by_sid["ReadWriteExports"]["Resource"] == {"Fn::Join": ["", [bucket_arn, "/exports/*"]]}
    # And it writes its own logs; CDK adds X-Ray and consuming the export queue
    assert by_sid["WriteOwnLogs"]["Resource"] == synth.arn(exports.log_group)
    generated = [s for s in statements if "Sid" not in s]
    assert sorted(str(s["Resource"]) for s in generated) == sorted(
        [str(synth.arn(exports.queue)), "*"]
    )
    # And it signs manifests with the export signing key, that key only
    assert by_sid["SignExportManifests"]["Action"] == "kms:Sign"
    assert by_sid["SignExportManifests"]["Resource"] == synth.arn(
        synth.stack.export_signing_key.key
    )
    # And nothing else: no table, no S3 delete, no wildcard action
    assert len(statements) == 7
    actions = {a for s in statements for a in as_list(s["Action"])}
    assert not any(a.startswith(("dynamodb:", "s3:Delete")) or "*" in a for a in actions)


def test_presigned_reads_answer_any_origin_and_the_api_only_its_own(synth: Synth) -> None:
    # Given the default settings (no viewer origins)
    # Then the bucket answers CORS for presigned reads from any origin (a page on another
    # origin arrives from the media redirect with `Origin: null`; the signature is the
    # credential), GET and HEAD only, ranges allowed, sizes and ranges exposed
    (rule,) = synth.props(synth.stack.storage.bucket)["CorsConfiguration"]["CorsRules"]
    assert rule["AllowedOrigins"] == ["*"]
    assert sorted(rule["AllowedMethods"]) == ["GET", "HEAD"]
    assert [h.lower() for h in rule["AllowedHeaders"]] == ["range"]
    assert {"content-length", "content-range"} <= set(rule["ExposedHeaders"])
    # And the API has no CORS configuration: no other page may call it
    assert "CorsConfiguration" not in synth.props(synth.stack.api.http_api)


def test_viewer_origins_reach_the_api_and_nothing_more(viewer_synth: Synth) -> None:
    stack = viewer_synth.stack
    # Given the bucket's CORS rules
    (rule,) = viewer_synth.props(stack.storage.bucket)["CorsConfiguration"]["CorsRules"]
    # Then the bucket's one rule is the presigned reads' (GET, HEAD from any origin)
    assert rule["AllowedOrigins"] == ["*"]
    assert sorted(rule["AllowedMethods"]) == ["GET", "HEAD"]
    # And the API answers preflights for that origin only
    cors: dict[str, Any] = viewer_synth.props(stack.api.http_api)["CorsConfiguration"]
    assert cors["AllowOrigins"] == [VIEWER]
    assert "authorization" in cors["AllowHeaders"]
    assert "location" in cors["ExposeHeaders"]


# --- the media function (docs/architecture.md) ---------------------------------------------


def test_media_function_runs_the_media_handler_with_pyav_and_only_its_settings(
    synth: Synth,
) -> None:
    # Given the media function
    props = synth.props(synth.stack.media.function)
    # Then it runs the media handler, knowing only the bucket, the presign lifetime and
    # the audit trail it records every file it hands out in (docs/audit.md)
    assert props["Handler"] == "video_index.handlers.media.handler"
    variables = props["Environment"]["Variables"]
    assert {k for k in variables if k.startswith("VIDEO_INDEX_")} == {
        "VIDEO_INDEX_BUCKET",
        "VIDEO_INDEX_PRESIGN_SECONDS",
        "VIDEO_INDEX_SHARES_TABLE",  # a share link's files and frames (docs/shares.md)
        "VIDEO_INDEX_AUDIT_BUCKET",
        "VIDEO_INDEX_AUDIT_TABLE",
        "VIDEO_INDEX_AUDIT_RETENTION_DAYS",
    }
    assert props["Timeout"] == synth.props(synth.stack.api.function)["Timeout"]


def test_media_role_reads_segments_and_reads_and_writes_renditions_only(synth: Synth) -> None:
    # Given the media function's role
    stack = synth.stack
    statements = synth.policy_statements(stack.media.role)
    by_sid = statements_by_sid(statements)
    bucket_arn = synth.arn(stack.storage.bucket)
    # Then it reads segments (presigned GETs, a rendition's source) under v1/ only
    assert by_sid["ReadSegmentObjects"]["Action"] == "s3:GetObject"
    assert by_sid["ReadSegmentObjects"]["Resource"] == {"Fn::Join": ["", [bucket_arn, "/v1/*"]]}
    assert by_sid["ListSegmentKeys"]["Action"] == "s3:ListBucket"
    # And gets and puts renditions, nowhere else
    assert by_sid["ReadWriteRenditions"]["Action"] == ["s3:GetObject", "s3:PutObject"]
    assert by_sid["ReadWriteRenditions"]["Resource"] == {
        "Fn::Join": ["", [bucket_arn, "/renditions/*"]]
    }
    # And reads one share by its id (a share link's files and frames), nothing more of it
    assert by_sid["SharesRead"]["Action"] == "dynamodb:GetItem"
    assert by_sid["SharesRead"]["Resource"] == synth.arn(stack.shares.table)
    # And writes its own logs and adds audit records (docs/audit.md); nothing else on any
    # table or queue, nothing deleted
    assert by_sid["WriteOwnLogs"]["Resource"] == synth.arn(stack.media.log_group)
    assert by_sid["AuditRecordsWrite"]["Action"] == "s3:PutObject"
    assert by_sid["AuditWrite"]["Action"] == "dynamodb:PutItem"
    assert by_sid["AuditWrite"]["Resource"] == synth.arn(stack.audit.table)
    actions = {a for s in statements for a in as_list(s["Action"])}
    assert {a for a in actions if a.startswith(("dynamodb:", "sqs:"))} == {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
    }
    assert not {a for a in actions if ":Delete" in a}
    assert set(by_sid) == {
        "ReadSegmentObjects",
        "ListSegmentKeys",
        "ReadWriteRenditions",
        "SharesRead",
        "WriteOwnLogs",
        "AuditRecordsWrite",
        "AuditWrite",
    }
