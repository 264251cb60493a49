"""The audit trail on the synthesized template (docs/audit.md#why-records-cannot-be-changed):
no role of the stack — a function's, an operator's or an admin's managed policy, any
other — may change or delete a record, and the bucket and index refuse it to everyone.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any, Final

import pytest
from aws_cdk import App

from infra.settings import SettingsError, StackSettings
from tests.infra.template import Synth, as_list

#: What would change or delete a record, if any statement allowed it on the trail.
ALTERING: Final = (
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
    "s3:PutObjectRetention",
    "s3:PutObjectLegalHold",
    "s3:BypassGovernanceRetention",
    "s3:PutBucketObjectLockConfiguration",
    "s3:PutLifecycleConfiguration",
    "s3:DeleteBucket",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:PartiQLUpdate",
    "dynamodb:PartiQLDelete",
    "dynamodb:DeleteTable",
    "dynamodb:UpdateTimeToLive",
    "dynamodb:UpdateTable",
)
#: Every statement that may touch the trail, by function: (actions, on what).
GRANTED: Final = {
    "api": {("s3:PutObject",), ("dynamodb:PutItem",), ("dynamodb:Query",)},
    "media": {("s3:PutObject",), ("dynamodb:PutItem",)},
    "retention": {("s3:PutObject",), ("dynamodb:PutItem",)},
    "bulk": {("s3:PutObject",), ("dynamodb:PutItem",)},
}


def every_statement(synth: Synth) -> list[tuple[str, dict[str, Any]]]:
    """Every IAM statement of the template (roles' inline policies, policies, managed
    policies), with the logical id of what holds it."""
    found = []
    for logical_id, resource in synth.resources.items():
        props = resource.get("Properties", {})
        documents = []
        if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            documents.append(props["PolicyDocument"])
        if resource["Type"] == "AWS::IAM::Role":
            documents += [policy["PolicyDocument"] for policy in props.get("Policies", [])]
        for document in documents:
            found += [(logical_id, statement) for statement in as_list(document["Statement"])]
    return found


def names_trail(resource: Any, ids: tuple[str, str]) -> bool:
    text = json.dumps(resource)
    return text == '"*"' or any(logical_id in text for logical_id in ids)


def test_no_role_of_the_stack_may_change_or_delete_a_record(synth: Synth) -> None:
    # Given the trail's bucket and index, and every IAM statement of the template
    audit = synth.video_index.audit
    ids = (synth.logical_id(audit.bucket), synth.logical_id(audit.table))
    statements = every_statement(synth)
    assert len(statements) > 50
    for holder, statement in statements:
        if statement.get("Effect") != "Allow":
            continue
        # When a statement may act on the trail (or on everything)
        if not any(names_trail(r, ids) for r in as_list(statement.get("Resource", []))):
            continue
        # Then none of its actions alters a record (a wildcard counts as everything it covers)
        for action in as_list(statement["Action"]):
            altering = [a for a in ALTERING if fnmatch.fnmatchcase(a, action)]
            assert not altering, (holder, statement.get("Sid"), action, altering)


def test_only_the_auditing_functions_write_records_and_only_by_adding(synth: Synth) -> None:
    stack = synth.video_index
    audit = stack.audit
    ids = (synth.logical_id(audit.bucket), synth.logical_id(audit.table))
    roles = {
        "api": stack.api.role,
        "media": stack.media.role,
        "retention": stack.holds.role,
        "bulk": stack.bulk.role,
        "reconcile": stack.reconcile.role,
        "ingest": stack.ingest.role,
    }
    for name, role in roles.items():
        # Given a function's statements that name the trail
        touching = {
            tuple(as_list(s["Action"]))
            for s in synth.policy_statements(role)
            if any(names_trail(r, ids) and r != "*" for r in as_list(s.get("Resource", [])))
        }
        # Then they are exactly what the table says (nothing for reconcile and ingest:
        # a rebuild of the read model never touches the trail)
        assert touching == GRANTED.get(name, set()), name


def test_the_bucket_locks_every_record_in_compliance_mode_for_the_setting(synth: Synth) -> None:
    # Given the audit bucket of the default stack (audit_retention_days 365)
    bucket = synth.resource(synth.video_index.audit.bucket)
    props = bucket["Properties"]
    # Then Object Lock is on, COMPLIANCE, for the setting's days; versioned and retained
    assert props["ObjectLockEnabled"] is True
    assert props["ObjectLockConfiguration"] == {
        "ObjectLockEnabled": "Enabled",
        "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 365}},
    }
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert bucket["DeletionPolicy"] == "Retain"
    assert "LifecycleConfiguration" not in props
    # And its policy denies every principal what would remove or unlock a record
    bucket_id = synth.logical_id(synth.video_index.audit.bucket)
    policies = [
        r["Properties"]["PolicyDocument"]
        for r in synth.of_type("AWS::S3::BucketPolicy").values()
        if bucket_id in json.dumps(r["Properties"]["Bucket"])
    ]
    denied = [
        s
        for p in policies
        for s in as_list(p["Statement"])
        if s["Effect"] == "Deny" and s.get("Sid") == "RecordsAreNeverChanged"
    ]
    assert len(denied) == 1 and denied[0]["Principal"] == {"AWS": "*"}
    assert sorted(as_list(denied[0]["Action"])) == [
        "s3:BypassGovernanceRetention",
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
        "s3:PutObjectLegalHold",
        "s3:PutObjectRetention",
    ]


def test_the_index_refuses_updates_and_deletes_to_everyone(synth: Synth) -> None:
    table = synth.resource(synth.video_index.audit.table)
    props = table["Properties"]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert props["DeletionProtectionEnabled"] is True and table["DeletionPolicy"] == "Retain"
    (statement,) = props["ResourcePolicy"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Deny" and statement["Principal"] == {"AWS": "*"}
    assert sorted(as_list(statement["Action"])) == [
        "dynamodb:BatchWriteItem",
        "dynamodb:DeleteItem",
        "dynamodb:PartiQLDelete",
        "dynamodb:PartiQLInsert",
        "dynamodb:PartiQLUpdate",
        "dynamodb:UpdateItem",
    ]


@pytest.mark.parametrize("days", [0, 36_501])
def test_a_retention_the_lock_cannot_take_stops_synthesis(days: int) -> None:
    with pytest.raises(SettingsError, match="'audit_retention_days'"):
        StackSettings.from_context(App(context={"audit_retention_days": days}))


def test_the_retention_setting_reaches_the_functions_that_write_the_index(synth: Synth) -> None:
    # The index's TTL is the bucket's lock: the same setting, given to every auditing function
    stack = synth.video_index
    for function in (stack.api.function, stack.media.function, stack.holds.function):
        env = synth.props(function)["Environment"]["Variables"]
        assert env["VIDEO_INDEX_AUDIT_RETENTION_DAYS"] == "365"
