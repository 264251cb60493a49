"""Holds on the template (docs/holds.md): a protected table, a daily retention job with
least privilege, and the API function's access."""

from __future__ import annotations

import json

from tests.infra.template import Synth, as_list, joined, statements_by_sid
from video_index.core.table_schema import holds_table_definition


def test_holds_table_has_pitr_deletion_protection_and_is_retained(synth: Synth) -> None:
    # Given the holds table of the default stack
    table = synth.resource(synth.video_index.holds.table)
    props = table["Properties"]
    # Then it is protected like the other primary data
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == "Retain"
    assert table["UpdateReplacePolicy"] == "Retain"
    # And its shape is the shared definition, without TTL
    definition = holds_table_definition("any")
    assert props["KeySchema"] == definition["KeySchema"]
    assert "TimeToLiveSpecification" not in props


def test_the_retention_job_may_only_list_v1_delete_v1_and_read_holds(synth: Synth) -> None:
    # Given the retention job's role
    holds = synth.video_index.holds
    statements = synth.policy_statements(holds.role)
    by_sid = statements_by_sid(statements)
    bucket_arn = synth.arn(synth.video_index.storage.bucket)
    # Then it lists the bucket only under v1/
    listing = by_sid["ListSegmentFolders"]
    assert as_list(listing["Action"]) == ["s3:ListBucket"]
    assert listing["Resource"] == bucket_arn
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["v1/*"]}}
    # And deletes current versions only under v1/ (never a version: the undelete window)
    deleting = by_sid["DeleteSegmentObjects"]
    assert as_list(deleting["Action"]) == ["s3:DeleteObject"]
    assert joined(deleting["Resource"]).endswith("/v1/*")
    # And only reads the holds table (a device's holds, one hold)
    reading = by_sid["HoldsRead"]
    assert as_list(reading["Action"]) == ["dynamodb:GetItem", "dynamodb:Query"]
    assert reading["Resource"] == synth.arn(holds.table)
    # And adds its run's audit record (docs/audit.md), and nothing else touches S3 or DynamoDB
    assert by_sid["AuditRecordsWrite"]["Action"] == "s3:PutObject"
    assert by_sid["AuditWrite"]["Action"] == "dynamodb:PutItem"
    actions = {a for s in statements for a in as_list(s["Action"])}
    data = {a for a in actions if a.startswith(("s3:", "dynamodb:"))}
    assert data == {
        "s3:ListBucket",
        "s3:DeleteObject",
        "s3:PutObject",
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
    }


def test_the_retention_job_runs_daily_and_knows_each_kinds_retention(synth: Synth) -> None:
    holds = synth.video_index.holds
    # Given the schedule rule
    rule = synth.props(holds.schedule)
    # Then it fires once a day and targets the job
    assert rule["ScheduleExpression"] == "cron(0 3 * * ? *)"
    assert json.dumps(synth.arn(holds.function)) in json.dumps(rule["Targets"])
    # And the job is told the bucket, the holds table and the retention per kind
    env = synth.props(holds.function)["Environment"]["Variables"]
    assert env["VIDEO_INDEX_HOLDS_TABLE"] == synth.ref(holds.table)
    assert json.loads(env["VIDEO_INDEX_RETENTION_DAYS"]) == {
        "video": 30,
        "sensor": 90,
        "analysis": 90,
    }


def test_the_api_function_reads_and_writes_holds(synth: Synth) -> None:
    stack = synth.video_index
    env = synth.props(stack.api.function)["Environment"]["Variables"]
    assert env["VIDEO_INDEX_HOLDS_TABLE"] == synth.ref(stack.holds.table)
    by_sid = statements_by_sid(synth.policy_statements(stack.api.role))
    granted = {a for sid in ("HoldsRead", "HoldsWrite") for a in as_list(by_sid[sid]["Action"])}
    assert granted == {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"}
    assert by_sid["HoldsWrite"]["Resource"] == synth.arn(stack.holds.table)


def test_reconcile_only_reads_holds_to_keep_held_footage_and_tell_held_from_overdue(
    synth: Synth,
) -> None:
    # Given the ops function that runs reconcile
    stack = synth.video_index
    env = synth.props(stack.reconcile.function)["Environment"]["Variables"]
    # Then it knows the holds table and the retention, and may only read the table
    assert env["VIDEO_INDEX_HOLDS_TABLE"] == synth.ref(stack.holds.table)
    assert json.loads(env["VIDEO_INDEX_RETENTION_DAYS"]) == {
        "video": 30,
        "sensor": 90,
        "analysis": 90,
    }
    statements = synth.policy_statements(stack.reconcile.role)
    grant = statements_by_sid(statements)["HoldsRead"]
    assert as_list(grant["Action"]) == ["dynamodb:GetItem", "dynamodb:Query"]
    assert grant["Resource"] == synth.arn(stack.holds.table)
    on_table = [s for s in statements if s.get("Resource") == synth.arn(stack.holds.table)]
    assert on_table == [grant]
