"""The annotations table on the template (docs/annotations.md): primary data, protected three
ways, and reachable by the API function alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import App

from infra.settings import SettingsError, StackSettings
from tests.infra.template import Synth, as_list, joined, synthesize
from video_index.core.table_schema import annotations_table_definition


def _mentions(value: Any, logical_id: str) -> bool:
    return logical_id in json.dumps(value)


def test_annotations_table_has_pitr_deletion_protection_and_is_retained(synth: Synth) -> None:
    # Given the annotations table of the default stack
    table = synth.resource(synth.video_index.annotations.table)
    props = table["Properties"]
    # Then point-in-time recovery and deletion protection are on, with encryption at rest
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["DeletionProtectionEnabled"] is True
    assert props["SSESpecification"] == {"SSEEnabled": True}
    # And deleting the stack (or replacing the resource) leaves the table and its data
    assert table["DeletionPolicy"] == "Retain"
    assert table["UpdateReplacePolicy"] == "Retain"
    # And its shape is the shared definition `video-index local` and the tests create
    definition = annotations_table_definition("any")
    assert props["KeySchema"] == definition["KeySchema"]
    assert props["AttributeDefinitions"] == definition["AttributeDefinitions"]
    assert props["BillingMode"] == definition["BillingMode"]
    # And no TTL and no index: nothing in it expires, every read is a key Query
    assert "TimeToLiveSpecification" not in props
    assert "GlobalSecondaryIndexes" not in props
    # And it is not the read-model table
    assert synth.logical_id(synth.video_index.annotations.table) != synth.logical_id(
        synth.video_index.read_model.table
    )


def test_only_the_api_role_may_touch_the_annotations_table(synth: Synth) -> None:
    # Given every IAM policy of the stack and the annotations table's logical id
    stack = synth.video_index
    table_id = synth.logical_id(stack.annotations.table)
    api_role = synth.ref(stack.api.role)
    grants: list[tuple[list[Any], dict[str, Any]]] = []
    for policy in synth.of_type("AWS::IAM::Policy").values():
        roles = policy["Properties"].get("Roles", [])
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            grants.append((roles, statement))
    # Then every statement naming the table belongs to the API role
    naming = [(roles, s) for roles, s in grants if _mentions(s["Resource"], table_id)]
    assert naming and all(roles == [api_role] for roles, _ in naming), naming
    # And no other role has a DynamoDB action on a wildcard resource that could reach it
    # (ListStreams, which the stream consumer needs, lists stream ARNs and reads nothing)
    for roles, statement in grants:
        dynamo = [
            a
            for a in as_list(statement["Action"])
            if a.startswith("dynamodb:") and a != "dynamodb:ListStreams"
        ]
        if dynamo and roles != [api_role]:
            resources = [joined(r) for r in as_list(statement["Resource"])]
            assert "*" not in resources, statement
            assert not any(_mentions(r, table_id) for r in as_list(statement["Resource"]))


@pytest.mark.parametrize("construct", ["ingest", "reconcile", "exports"])
def test_ingest_reconcile_rebuild_and_export_have_no_access_at_all(
    synth: Synth, construct: str
) -> None:
    # Given a function that works on derived data (reconcile and rebuild share one role)
    part = getattr(synth.video_index, construct)
    table_id = synth.logical_id(synth.video_index.annotations.table)
    # Then its role's statements never name the annotations table
    statements = synth.policy_statements(part.role)
    assert statements
    assert not _mentions(statements, table_id)
    # And its environment does not name it either
    env = synth.props(part.function)["Environment"]["Variables"]
    assert "VIDEO_INDEX_ANNOTATIONS_TABLE" not in env
    assert not _mentions(env, table_id)


def test_no_state_machine_touches_the_annotations_table(synth: Synth) -> None:
    # Given the reconcile and rebuild state machines and their roles
    table_id = synth.logical_id(synth.video_index.annotations.table)
    for machine in synth.of_type("AWS::StepFunctions::StateMachine").values():
        # Then neither their definition nor their role's policy mentions the table
        assert not _mentions(machine["Properties"], table_id)


def test_the_api_function_is_told_the_annotations_table(synth: Synth) -> None:
    env = synth.props(synth.video_index.api.function)["Environment"]["Variables"]
    assert env["VIDEO_INDEX_ANNOTATIONS_TABLE"] == synth.ref(synth.video_index.annotations.table)
    # And the stack outputs its name (for backups and restores)
    outputs = synth.template.to_json()["Outputs"]
    assert outputs["AnnotationsTableName"]["Value"] == synth.ref(
        synth.video_index.annotations.table
    )


def test_a_restored_table_named_by_context_replaces_the_stacks_own() -> None:
    # Given the stack told to use an existing (restored) table
    restored = "video-index-annotations-restored"
    synth = synthesize({"annotations_table_name": restored})
    stack = synth.video_index
    # Then the stack creates no annotations table: only the read model's and the deletion
    # requests' remain
    tables = synth.of_type("AWS::DynamoDB::Table")
    assert sorted(tables) == sorted(
        synth.logical_id(table)
        for table in (
            stack.read_model.table,
            stack.deletion.table,
            stack.holds.table,
            stack.shares.table,
            stack.audit.table,
        )
    )
    # And the API function is pointed at the restored table and granted on it alone
    env = synth.props(stack.api.function)["Environment"]["Variables"]
    assert env["VIDEO_INDEX_ANNOTATIONS_TABLE"] == restored
    by_sid = {s.get("Sid"): s for s in synth.policy_statements(stack.api.role)}
    for sid in ("AnnotationsRead", "AnnotationsWrite", "AnnotationsDelete"):
        assert joined(by_sid[sid]["Resource"]).endswith(f":table/{restored}"), sid
    # And no other role names it
    for part in (stack.ingest, stack.reconcile, stack.exports):
        assert restored not in json.dumps(synth.policy_statements(part.role))


@pytest.mark.parametrize("value", ["ab", "has space", "x" * 256, "a/b"])
def test_a_bad_annotations_table_name_stops_synthesis(value: str) -> None:
    with pytest.raises(SettingsError, match="'annotations_table_name'"):
        StackSettings.from_context(App(context={"annotations_table_name": value}))


def test_annotations_table_name_defaults_to_the_stacks_own_table() -> None:
    assert StackSettings.from_context(App()).annotations_table_name is None
