"""Infrastructure of restore and deletion at fleet size (docs/bulk.md): the bulk Lambda's
least-privilege role, the two state machines and their roles. Synthesized once with a
replica (the machines exist only where there is a replica to restore from)."""

from __future__ import annotations

from aws_cdk import Validations

from tests.infra.template import (
    Synth,
    as_list,
    joined,
    statements_by_sid,
)
from video_index.bulk.names import (
    ACTION_DELETE_UNITS,
    ACTION_RESTORE_PLAN,
    ACTION_RESTORE_REPORT,
    ACTION_RESTORE_UNITS,
    JOB_BUSY_ERROR,
    JOB_PAUSED_ERROR,
)


def test_without_a_replica_there_is_bulk_deletion_but_no_restore(synth: Synth) -> None:
    bulk = synth.video_index.bulk
    assert bulk.restore is None and bulk.bulk_delete is not None
    sids = statements_by_sid(synth.policy_statements(bulk.role))
    assert not {"ListReplica", "CopyFromReplica", "EraseReplicaVersions"} & set(sids)


def test_bulk_role_copies_into_v1_reads_the_replica_and_nothing_more(replica_synth: Synth) -> None:
    bulk = replica_synth.video_index.bulk
    assert bulk is not None
    statements = replica_synth.policy_statements(bulk.role)
    by_sid = statements_by_sid(statements)
    bucket = replica_synth.logical_id(replica_synth.video_index.storage.bucket)
    assert replica_synth.video_index.replica is not None
    replica = replica_synth.logical_id(replica_synth.video_index.replica.bucket)
    reports = replica_synth.logical_id(replica_synth.video_index.storage.reports_bucket)
    # Then under v1/ of the segment bucket it reads, copies and deletes
    segment_actions = {
        a
        for s in statements
        for a in as_list(s["Action"])
        for resource in as_list(s["Resource"])
        if joined(resource) == f"${{{bucket}.Arn}}/v1/*"
    }
    assert segment_actions == {
        "s3:AbortMultipartUpload",
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
        "s3:GetObject",
        "s3:PutObject",
    }
    # And, erasing, what the deletion worker erases outside v1/ too (the media made from
    # the footage, the export jobs made of it), and nothing else outside v1/
    assert by_sid["EraseDerivedMedia"]["Action"] == "s3:DeleteObjectVersion"
    assert joined(by_sid["EraseDerivedMedia"]["Resource"]) == f"${{{bucket}.Arn}}/renditions/*"
    assert joined(by_sid["EndErasedExports"]["Resource"]) == f"${{{bucket}.Arn}}/exports/*"
    outside = {
        joined(resource)
        for s in statements
        for resource in as_list(s["Resource"])
        if joined(resource).startswith(f"${{{bucket}.Arn}}/")
    }
    assert outside == {
        f"${{{bucket}.Arn}}/{prefix}*" for prefix in ("v1/", "renditions/", "exports/")
    }
    # And reads the replica's v1/ (and erases versions there), never writes objects there
    assert joined(by_sid["CopyFromReplica"]["Resource"]) == f"${{{replica}.Arn}}/v1/*"
    assert by_sid["EraseReplicaVersions"]["Action"] == "s3:DeleteObjectVersion"
    replica_actions = {
        a
        for s in statements
        for a in as_list(s["Action"])
        for resource in as_list(s["Resource"])
        if replica in joined(resource) and "/v1/" in joined(resource)
    }
    assert "s3:PutObject" not in replica_actions and "s3:DeleteObject" not in replica_actions
    # And writes only its own run objects in the reports bucket
    assert sorted(joined(r) for r in by_sid["WriteRunObjects"]["Resource"]) == [
        f"${{{reports}.Arn}}/bulk-delete/*",
        f"${{{reports}.Arn}}/bulk-restore/*",
    ]
    # And queries only window items of the deletion table; no scan, no delete of items
    query = by_sid["DeletionRequestsWindows"]
    assert query["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"] == ["win#*"]
    actions = {a for s in statements for a in as_list(s["Action"])}
    assert "dynamodb:Scan" not in actions and "dynamodb:DeleteItem" not in actions
    assert all("*" not in a for a in actions)


def test_state_machines_fan_units_out_and_retry_them(replica_synth: Synth) -> None:
    bulk = replica_synth.video_index.bulk
    assert bulk is not None
    assert bulk.restore is not None
    restore = replica_synth.definition(bulk.restore)
    delete = replica_synth.definition(bulk.bulk_delete)
    # Then restore is plan -> Distributed Map of units -> report
    assert restore["StartAt"] == "Plan"
    assert ACTION_RESTORE_PLAN in str(restore["States"]["Plan"]["Arguments"]["Payload"])
    units = restore["States"]["Units"]
    assert units["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
    assert units["ItemBatcher"]["MaxItemsPerBatch"] == 1
    assert units["ToleratedFailurePercentage"] == 100
    unit = units["ItemProcessor"]["States"]["Unit"]
    assert unit["Arguments"]["Payload"]["action"] == ACTION_RESTORE_UNITS
    assert any("States.ALL" in r["ErrorEquals"] for r in unit["Retry"])
    assert restore["States"]["Report"]["Arguments"]["Payload"]["action"] == ACTION_RESTORE_REPORT
    # And a deletion unit is retried while paused, and after a dead runner's lease
    unit = delete["States"]["Units"]["ItemProcessor"]["States"]["Unit"]
    assert unit["Arguments"]["Payload"]["action"] == ACTION_DELETE_UNITS
    retried = [error for r in unit["Retry"] for error in r["ErrorEquals"]]
    assert JOB_PAUSED_ERROR in retried and JOB_BUSY_ERROR in retried
    busy = next(r for r in unit["Retry"] if JOB_BUSY_ERROR in r["ErrorEquals"])
    assert busy["IntervalSeconds"] * busy["MaxAttempts"] > 960  # outlasts a lease


def test_state_machine_roles_invoke_the_bulk_function_only(replica_synth: Synth) -> None:
    bulk = replica_synth.video_index.bulk
    assert bulk is not None
    for role in bulk.state_machine_roles.values():
        by_sid = statements_by_sid(replica_synth.policy_statements(role))
        assert by_sid["InvokeBulkFunction"]["Resource"] == replica_synth.arn(bulk.function)


def test_bulk_acknowledgments_are_exactly_these_and_justified(replica_synth: Synth) -> None:
    # Given the cdk-nag acknowledgments recorded inside the bulk construct
    acknowledged: dict[str, str] = {}
    for construct in replica_synth.video_index.bulk.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule_id, reason in entry.data.items():
                    acknowledged[f"{construct.node.path} {rule_id}"] = reason
    bucket = replica_synth.logical_id(replica_synth.video_index.storage.bucket)
    assert replica_synth.video_index.replica is not None
    replica = replica_synth.logical_id(replica_synth.video_index.replica.bucket)
    iam5 = "Annotation::AwsSolutions-IAM5[Resource::"
    # Then the function's are its v1/ objects (both buckets) and its run prefixes only
    function = {k.split(" ", 1)[1] for k in acknowledged if k.startswith("VideoIndex/Bulk/Role ")}
    assert f"{iam5}<{bucket}.Arn>/v1/*]" in function
    assert f"{iam5}<{replica}.Arn>/v1/*]" in function
    assert not any("Policy::" in k for k in acknowledged)  # no managed policies
    # And each with a reason a reviewer can check
    for where, reason in acknowledged.items():
        assert len(reason) > 60, where
