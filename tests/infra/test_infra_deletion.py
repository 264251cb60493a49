"""Infrastructure of deletion (docs/deletion.md): the requests table, the job queue and
worker, and the optional replica with its replication rule and role.

The default template comes from the session ``synth`` (replication off); the replica is
synthesized once with ``-c replication=on`` (module scope) and once paused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cdk_nag import AwsSolutionsChecks

from infra.settings import SettingsError, StackSettings
from tests.infra.template import Synth, as_list, joined, statements_by_sid, synthesize

# --- the requests table ----------------------------------------------------------------------


def test_deletion_requests_table_is_primary_data_kept_whatever_happens(synth: Synth) -> None:
    # Given the deletion requests table
    table = synth.resource(synth.stack.deletion.table)
    props = table["Properties"]
    # Then it is keyed pk/sk (strings) as core.table_schema defines, on demand, encrypted
    assert props["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["SSESpecification"] == {"SSEEnabled": True}
    # And it survives a mistaken delete, a stack deletion and a bad write (PITR)
    assert props["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == "Retain"
    assert table["UpdateReplacePolicy"] == "Retain"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    # And its name is a stack output (the CLI's VIDEO_INDEX_DELETIONS_TABLE)
    outputs = synth.template.to_json()["Outputs"]
    assert outputs["DeletionsTableName"]["Value"] == synth.ref(synth.stack.deletion.table)


# --- the job queue and the worker ------------------------------------------------------------


def test_deletion_jobs_run_one_per_invocation_and_poison_jobs_end_in_an_alarmed_dlq(
    synth: Synth,
) -> None:
    deletion = synth.stack.deletion
    function = synth.props(deletion.function)
    queue = synth.props(deletion.queue)
    (mapping,) = [
        m["Properties"]
        for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == synth.ref(deletion.function)
    ]
    # Then the worker runs the deletion handler for up to 15 minutes, one job at a time
    assert function["Handler"] == "video_index.handlers.deletion.handler"
    assert function["Timeout"] == 900
    assert mapping["EventSourceArn"] == synth.arn(deletion.queue)
    assert mapping["BatchSize"] == 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # And a job is hidden for six times the function timeout (longer than its lease)
    assert queue["VisibilityTimeout"] == 6 * 900
    # And a job failing again and again ends in the deletion DLQ, which raises an alarm
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == synth.arn(deletion.dead_letter_queue)
    alarm = synth.props(synth.stack.monitoring.dlq_alarms["Deletion"])
    assert alarm["Dimensions"][0]["Value"] == {
        "Fn::GetAtt": [synth.logical_id(deletion.dead_letter_queue), "QueueName"]
    }
    assert alarm["AlarmActions"] == [synth.ref(synth.stack.monitoring.topic)]
    # And SQS parks a message after 5 receives, the count the worker ends a job failed
    # on (whatever the stack's max_receive_count), so no job sits running in the DLQ
    assert queue["RedrivePolicy"]["maxReceiveCount"] == 5
    # And a job that ends failed raises an alarm of its own (its count, per 5 minutes)
    failed = synth.props(synth.stack.monitoring.deletion_failed_alarm)
    assert (failed["Namespace"], failed["MetricName"]) == ("VideoIndex", "DeletionJobsFailed")
    assert failed["Dimensions"] == [{"Name": "service", "Value": "video-index-deletion"}]
    assert (failed["Statistic"], failed["Period"], failed["Threshold"]) == ("Sum", 300, 0)
    assert failed["AlarmActions"] == [synth.ref(synth.stack.monitoring.topic)]
    # And it knows its bucket, table and queue (for continuations), the holds, no replica
    env = function["Environment"]["Variables"]
    assert env["VIDEO_INDEX_HOLDS_TABLE"] == synth.ref(synth.stack.holds.table)
    assert env["VIDEO_INDEX_BUCKET"] == synth.ref(synth.stack.storage.bucket)
    assert env["VIDEO_INDEX_DELETIONS_TABLE"] == synth.ref(deletion.table)
    assert env["VIDEO_INDEX_DELETION_QUEUE_URL"] == synth.ref(deletion.queue)
    assert "VIDEO_INDEX_REPLICA_BUCKET" not in env


def test_deletion_worker_role_lists_and_deletes_under_v1_and_checkpoints_its_job(
    synth: Synth,
) -> None:
    deletion = synth.stack.deletion
    statements = synth.policy_statements(deletion.role)
    by_sid = statements_by_sid(statements)
    bucket = synth.logical_id(synth.stack.storage.bucket)
    # Then it reads and checkpoints its request (no query, scan or delete of items)
    assert by_sid["DeletionRequestsRead"]["Action"] == "dynamodb:GetItem"
    assert by_sid["DeletionRequestsWrite"]["Action"] == ["dynamodb:PutItem", "dynamodb:UpdateItem"]
    assert by_sid["DeletionRequestsRead"]["Resource"] == synth.arn(deletion.table)
    # And lists keys under v1/ and versions of the segment bucket, deletes (markers,
    # versions) under v1/
    assert by_sid["ListSegmentFolders"]["Action"] == "s3:ListBucket"
    assert by_sid["ListSegmentFolders"]["Condition"] == {"StringLike": {"s3:prefix": ["v1/*"]}}
    assert by_sid["ListSegmentVersions"]["Action"] == "s3:ListBucketVersions"
    assert by_sid["DeleteSegmentObjects"]["Action"] == "s3:DeleteObject"
    assert by_sid["EraseSegmentVersions"]["Action"] == "s3:DeleteObjectVersion"
    for sid in ("DeleteSegmentObjects", "EraseSegmentVersions"):
        assert joined(by_sid[sid]["Resource"]) == f"${{{bucket}.Arn}}/v1/*"
    # And reads the holds before every batch (docs/holds.md: held footage is kept)
    assert by_sid["HoldsRead"]["Action"] == ["dynamodb:GetItem", "dynamodb:Query"]
    assert by_sid["HoldsRead"]["Resource"] == synth.arn(synth.stack.holds.table)
    # And queues its own continuation, on its own queue only
    assert by_sid["QueueDeletionJobs"]["Action"] == "sqs:SendMessage"
    assert by_sid["QueueDeletionJobs"]["Resource"] == synth.arn(deletion.queue)
    # And, erasing, removes every version of the media made from the footage (renditions,
    # pictures, export clips) and reads and ends the export jobs made of it: only there
    assert by_sid["EraseDerivedMedia"]["Action"] == "s3:DeleteObjectVersion"
    assert joined(by_sid["EraseDerivedMedia"]["Resource"]) == f"${{{bucket}.Arn}}/renditions/*"
    assert by_sid["EndErasedExports"]["Action"] == [
        "s3:DeleteObjectVersion",
        "s3:GetObject",
        "s3:PutObject",
    ]
    assert joined(by_sid["EndErasedExports"]["Resource"]) == f"${{{bucket}.Arn}}/exports/*"
    # And nothing else: its logs, X-Ray, consuming its queue; never a read of footage's bytes
    assert by_sid["WriteOwnLogs"]["Resource"] == synth.arn(deletion.log_group)
    generated = [s for s in statements if "Sid" not in s]
    assert sorted(str(s["Resource"]) for s in generated) == sorted(
        [str(synth.arn(deletion.queue)), "*"]
    )
    assert len(statements) == 13
    reads = [
        joined(resource)
        for s in statements
        if {"s3:GetObject", "s3:PutObject"} & set(as_list(s["Action"]))
        for resource in as_list(s["Resource"])
    ]
    assert reads == [f"${{{bucket}.Arn}}/exports/*"]
    actions = {a for s in statements for a in as_list(s["Action"])}
    assert all("*" not in a for a in actions)


# --- the replica --------------------------------------------------------------------------


def test_without_the_setting_there_is_no_replica(synth: Synth) -> None:
    assert synth.stack.replica is None
    assert "ReplicationConfiguration" not in synth.props(synth.stack.storage.bucket)
    assert len(synth.of_type("AWS::S3::Bucket")) == 4  # segments, reports, access logs, audit


def test_replica_is_a_versioned_private_retained_bucket_with_the_same_retention(
    replica_synth: Synth,
) -> None:
    replica = replica_synth.stack.replica
    assert replica is not None
    bucket = replica_synth.resource(replica.bucket)
    props = bucket["Properties"]
    # Then it is versioned, retained, private, encrypted, and logs its access
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert bucket["DeletionPolicy"] == "Retain"
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["LoggingConfiguration"]["LogFilePrefix"] == "replica/"
    # And it keeps no kind longer than the segment bucket does, nor deleted versions
    source_rules = {
        r["Id"]: r
        for r in replica_synth.props(replica_synth.stack.storage.bucket)["LifecycleConfiguration"][
            "Rules"
        ]
    }
    for rule in props["LifecycleConfiguration"]["Rules"]:
        assert rule == source_rules[rule["Id"]]
    # (no per-kind expiration: the retention job's delete markers replicate, docs/holds.md)
    assert {r["Id"] for r in props["LifecycleConfiguration"]["Rules"]} == {"undelete-window"}


def test_segment_bucket_replicates_v1_and_its_delete_markers_to_the_replica(
    replica_synth: Synth,
) -> None:
    stack = replica_synth.stack
    assert stack.replica is not None
    config = replica_synth.props(stack.storage.bucket)["ReplicationConfiguration"]
    # Then one rule replicates every object under v1/ (and its delete markers) to the replica
    assert config["Role"] == replica_synth.arn(stack.replica.role)
    (rule,) = config["Rules"]
    assert rule["Status"] == "Enabled"
    assert rule["Filter"] == {"Prefix": "v1/"}
    assert rule["DeleteMarkerReplication"] == {"Status": "Enabled"}
    assert rule["Destination"] == {"Bucket": replica_synth.arn(stack.replica.bucket)}
    # And the deletion worker erases the replica's copies too (version deletes are not
    # replicated), with delete-version rights there and nothing more
    env = replica_synth.props(stack.deletion.function)["Environment"]["Variables"]
    assert env["VIDEO_INDEX_REPLICA_BUCKET"] == replica_synth.ref(stack.replica.bucket)
    by_sid = statements_by_sid(replica_synth.policy_statements(stack.deletion.role))
    replica = replica_synth.logical_id(stack.replica.bucket)
    assert by_sid["ListReplicaVersions"]["Action"] == "s3:ListBucketVersions"
    assert by_sid["EraseReplicaVersions"]["Action"] == "s3:DeleteObjectVersion"
    assert joined(by_sid["EraseReplicaVersions"]["Resource"]) == f"${{{replica}.Arn}}/v1/*"
    # And the replica's name is a stack output (restore --from-bucket)
    outputs = replica_synth.template.to_json()["Outputs"]
    assert outputs["ReplicaBucketName"]["Value"] == replica_synth.ref(stack.replica.bucket)


def test_replication_role_reads_source_versions_and_replicates_under_v1_only(
    replica_synth: Synth,
) -> None:
    stack = replica_synth.stack
    assert stack.replica is not None
    role = replica_synth.props(stack.replica.role)
    statements = replica_synth.policy_statements(stack.replica.role)
    source = replica_synth.logical_id(stack.storage.bucket)
    replica = replica_synth.logical_id(stack.replica.bucket)
    # Then only S3 may assume it
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "s3.amazonaws.com"},
        }
    ]
    assert "ManagedPolicyArns" not in role
    # And it has exactly what replication needs, scoped to the two buckets and v1/
    granted = sorted(
        (action, joined(resource))
        for s in statements
        for action in as_list(s["Action"])
        for resource in as_list(s["Resource"])
    )
    assert granted == sorted(
        [
            ("s3:GetReplicationConfiguration", f"${{{source}.Arn}}"),
            ("s3:ListBucket", f"${{{source}.Arn}}"),
            ("s3:GetObjectVersionForReplication", f"${{{source}.Arn}}/v1/*"),
            ("s3:GetObjectVersionAcl", f"${{{source}.Arn}}/v1/*"),
            ("s3:GetObjectVersionTagging", f"${{{source}.Arn}}/v1/*"),
            ("s3:ReplicateObject", f"${{{replica}.Arn}}/v1/*"),
            ("s3:ReplicateDelete", f"${{{replica}.Arn}}/v1/*"),
            ("s3:ReplicateTags", f"${{{replica}.Arn}}/v1/*"),
        ]
    )


def test_paused_replication_keeps_the_replica_and_disables_the_rule() -> None:
    # Given the app synthesized with -c replication=paused (the restore order)
    paused = synthesize({"replication": "paused"})
    assert paused.stack.replica is not None
    # Then the replica bucket and role stay, and the rule is disabled
    (rule,) = paused.props(paused.stack.storage.bucket)["ReplicationConfiguration"]["Rules"]
    assert rule["Status"] == "Disabled"
    assert paused.props(paused.stack.replica.bucket)["VersioningConfiguration"] == {
        "Status": "Enabled"
    }


def test_the_replica_stack_passes_cdk_nag_and_cfn_lint(
    replica_synth: Synth, tmp_path: Path
) -> None:
    # Given the stack with a replica, which is also the one with the bulk engine (its
    # template is linted once, here)
    assert replica_synth.video_index.bulk is not None
    report = AwsSolutionsChecks(replica_synth.app).validate_scope(replica_synth.stack)
    assert [v.rule_name for v in report.violations] == []
    assert replica_synth.lint(tmp_path) == []


@pytest.mark.parametrize(
    ("context", "key"),
    [
        ({"replication": "yes"}, "replication"),
        ({"replica_bucket_name": "my-replica"}, "replica_bucket_name"),
        ({"replication": "on", "replica_bucket_name": "Not_A_Bucket"}, "replica_bucket_name"),
    ],
)
def test_bad_replication_settings_name_the_context_key(context: dict[str, Any], key: str) -> None:
    with pytest.raises(SettingsError, match=key):
        StackSettings(**context)
