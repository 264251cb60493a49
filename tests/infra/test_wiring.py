"""Deployed is what is declared (docs/deployment.md, "What each function gets"): every
function of the template has the environment and the grants its spec declares, checked
against tables written here by hand — what each function needs, and what each need is
granted — never computed by the code under test. And a declaration that would delete
footage without the holds, a builder asking for a setting its spec lacks, or a stack that
cannot give a function what it requires are refused, each naming what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from infra.wiring import Wiring
from tests.infra.template import Synth, as_list, joined
from video_index.aws.clients import Clients
from video_index.core import functions
from video_index.core.errors import ConfigurationError
from video_index.core.functions import Access, FunctionSpec, need, value
from video_index.core.settings import Settings
from video_index.deletion.service import build_enforcer
from video_index.ingest.service import build_ingest_service

R, L, W, D, E = "read", "list", "write", "delete", "erase"
SCAN, WINDOWS, SEND, VALUE = "scan", "windows", "send", "value"
SIGN, PUBLIC_KEY = "sign", "public-key"
REQUIRED, OPTIONAL = True, False
V = "VIDEO_INDEX_"

#: What each function needs: setting → (accesses, required). Written from what each
#: handler does (docs/deployment.md has the same table for people).
NEEDS: Final[dict[str, dict[str, tuple[frozenset[str], bool]]]] = {
    "ingest": {
        f"{V}BUCKET": (frozenset({R, D, E}), REQUIRED),
        f"{V}TABLE": (frozenset({R, W}), REQUIRED),
        f"{V}DLQ_URL": (frozenset({SEND}), REQUIRED),
        f"{V}DELETIONS_TABLE": (frozenset({WINDOWS}), REQUIRED),
        f"{V}HOLDS_TABLE": (frozenset({R}), REQUIRED),
        f"{V}GAP_TOLERANCE_MS": (frozenset({VALUE}), OPTIONAL),
        f"{V}TOMBSTONE_DAYS": (frozenset({VALUE}), OPTIONAL),
    },
    "api": {
        f"{V}BUCKET": (frozenset({R}), REQUIRED),
        f"{V}TABLE": (frozenset({R, W}), REQUIRED),
        f"{V}ANNOTATIONS_TABLE": (frozenset({R, W, D}), REQUIRED),
        f"{V}EXPORT_QUEUE_URL": (frozenset({SEND}), REQUIRED),
        f"{V}DELETIONS_TABLE": (frozenset({R, W, D}), REQUIRED),
        f"{V}DELETION_QUEUE_URL": (frozenset({SEND}), REQUIRED),
        f"{V}HOLDS_TABLE": (frozenset({R, W}), REQUIRED),
        f"{V}CURSOR_KEY_SECRET": (frozenset({R}), REQUIRED),
        f"{V}EXPORT_SIGNING_KEY": (frozenset({PUBLIC_KEY}), REQUIRED),
        f"{V}AUDIT_BUCKET": (frozenset({W}), REQUIRED),
        f"{V}AUDIT_TABLE": (frozenset({R, W}), REQUIRED),
        **{
            f"{V}{name}": (frozenset({VALUE}), OPTIONAL)
            for name in (
                "GAP_TOLERANCE_MS",
                "TOMBSTONE_DAYS",
                "PRESIGN_SECONDS",
                "FRESH_WINDOW_SECONDS",
                "MAX_EXPORT_BYTES",
                "SILENT_AFTER_SECONDS",
                "RETENTION_DAYS",
                "CLOCK_TOLERANCE_SECONDS",
                "ACCESS_POLICY",
                "VIEWER_CONNECT_ORIGINS",
                "VIEWER_OIDC_ISSUER",
                "VIEWER_OIDC_CLIENT_ID",
                "SHARE_MAX_WINDOW_SECONDS",
                "SHARE_MAX_LIFETIME_SECONDS",
                "AUDIT_RETENTION_DAYS",
            )
        },
        # Share links (docs/shares.md): optional in the spec, so the API runs without; a
        # share route then refuses naming the setting. The stack always provides it.
        f"{V}SHARES_TABLE": (frozenset({R, L, W}), OPTIONAL),
    },
    "media": {
        f"{V}BUCKET": (frozenset({R}), REQUIRED),
        f"{V}PRESIGN_SECONDS": (frozenset({VALUE}), OPTIONAL),
        f"{V}ACCESS_POLICY": (frozenset({VALUE}), OPTIONAL),
        f"{V}SHARES_TABLE": (frozenset({R}), OPTIONAL),  # a share's files and frames
        f"{V}AUDIT_BUCKET": (frozenset({W}), REQUIRED),
        f"{V}AUDIT_TABLE": (frozenset({W}), REQUIRED),
        f"{V}AUDIT_RETENTION_DAYS": (frozenset({VALUE}), OPTIONAL),
    },
    "reconcile": {
        f"{V}BUCKET": (frozenset({R, D, E}), REQUIRED),
        f"{V}TABLE": (frozenset({R, W, D, SCAN}), REQUIRED),
        f"{V}REPORTS_BUCKET": (frozenset({R}), REQUIRED),
        f"{V}INVENTORY_DESTINATION": (frozenset({VALUE}), REQUIRED),
        f"{V}RECONCILE_MAX_REMOVE_SHARE": (frozenset({VALUE}), OPTIONAL),
        f"{V}DELETIONS_TABLE": (frozenset({WINDOWS, SCAN}), REQUIRED),
        f"{V}HOLDS_TABLE": (frozenset({R}), REQUIRED),
        f"{V}RETENTION_DAYS": (frozenset({VALUE}), REQUIRED),
        f"{V}GAP_TOLERANCE_MS": (frozenset({VALUE}), OPTIONAL),
        f"{V}TOMBSTONE_DAYS": (frozenset({VALUE}), OPTIONAL),
    },
    "export": {
        f"{V}BUCKET": (frozenset({R}), REQUIRED),
        f"{V}MAX_EXPORT_BYTES": (frozenset({VALUE}), OPTIONAL),
        f"{V}EXPORT_SIGNING_KEY": (frozenset({SIGN}), REQUIRED),
    },
    "deletion": {
        f"{V}BUCKET": (frozenset({L, D, E}), REQUIRED),
        f"{V}DELETIONS_TABLE": (frozenset({R, W}), REQUIRED),
        f"{V}DELETION_QUEUE_URL": (frozenset({SEND}), REQUIRED),
        f"{V}HOLDS_TABLE": (frozenset({R}), REQUIRED),
        f"{V}REPLICA_BUCKET": (frozenset({E}), OPTIONAL),
    },
    "aggregate": {
        f"{V}TABLE": (frozenset({R, W}), REQUIRED),
        f"{V}GAP_TOLERANCE_MS": (frozenset({VALUE}), OPTIONAL),
        f"{V}TOMBSTONE_DAYS": (frozenset({VALUE}), OPTIONAL),
    },
    "silence": {
        f"{V}TABLE": (frozenset({R}), REQUIRED),
        f"{V}SILENT_AFTER_SECONDS": (frozenset({VALUE}), OPTIONAL),
        f"{V}GAP_TOLERANCE_MS": (frozenset({VALUE}), OPTIONAL),
        f"{V}TOMBSTONE_DAYS": (frozenset({VALUE}), OPTIONAL),
    },
    "bulk": {
        f"{V}BUCKET": (frozenset({R, W, D, E}), REQUIRED),
        f"{V}REPORTS_BUCKET": (frozenset({R}), REQUIRED),
        f"{V}DELETIONS_TABLE": (frozenset({R, W, WINDOWS}), REQUIRED),
        f"{V}HOLDS_TABLE": (frozenset({R}), REQUIRED),
        f"{V}REPLICA_BUCKET": (frozenset({R, E}), OPTIONAL),
        f"{V}AUDIT_BUCKET": (frozenset({W}), REQUIRED),
        f"{V}AUDIT_TABLE": (frozenset({W}), REQUIRED),
        f"{V}AUDIT_RETENTION_DAYS": (frozenset({VALUE}), OPTIONAL),
    },
    "retention": {
        f"{V}BUCKET": (frozenset({L, D}), REQUIRED),
        f"{V}HOLDS_TABLE": (frozenset({R}), REQUIRED),
        f"{V}RETENTION_DAYS": (frozenset({VALUE}), REQUIRED),
        f"{V}AUDIT_BUCKET": (frozenset({W}), REQUIRED),
        f"{V}AUDIT_TABLE": (frozenset({W}), REQUIRED),
        f"{V}AUDIT_RETENTION_DAYS": (frozenset({VALUE}), OPTIONAL),
    },
}

#: A statement: its actions, its resource(s) as short names, its condition if any.
Statement = tuple[frozenset[str], tuple[str, ...], dict[str, Any] | None]


def _s(actions: str, *resources: str, condition: dict[str, Any] | None = None) -> Statement:
    return frozenset(actions.split()), tuple(sorted(resources)), condition


UNDER_V1 = {"StringLike": {"s3:prefix": ["v1/*"]}}
WINDOW_ITEMS = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["win#*"]}}
ITEMS_READ = "dynamodb:BatchGetItem dynamodb:GetItem dynamodb:Query"
ITEMS_WRITE = "dynamodb:ConditionCheckItem dynamodb:PutItem dynamodb:UpdateItem"

#: What each need is granted, by (setting, access): Sid → statement.
GRANTS: Final[dict[tuple[str, str], dict[str, Statement]]] = {
    (f"{V}BUCKET", R): {
        "ReadSegmentObjects": _s("s3:GetObject", "segments/v1/*"),
        "ListSegmentKeys": _s("s3:ListBucket", "segments"),
    },
    (f"{V}BUCKET", L): {
        "ListSegmentFolders": _s("s3:ListBucket", "segments", condition=UNDER_V1),
    },
    (f"{V}BUCKET", W): {
        "WriteSegmentObjects": _s("s3:AbortMultipartUpload s3:PutObject", "segments/v1/*"),
    },
    (f"{V}BUCKET", D): {"DeleteSegmentObjects": _s("s3:DeleteObject", "segments/v1/*")},
    (f"{V}BUCKET", E): {
        "EraseSegmentVersions": _s("s3:DeleteObjectVersion", "segments/v1/*"),
        "ListSegmentVersions": _s("s3:ListBucketVersions", "segments"),
    },
    (f"{V}TABLE", R): {"ReadModelRead": _s(ITEMS_READ, "read-model")},
    (f"{V}TABLE", W): {"ReadModelWrite": _s(ITEMS_WRITE, "read-model")},
    (f"{V}TABLE", D): {
        "ReadModelDelete": _s("dynamodb:BatchWriteItem dynamodb:DeleteItem", "read-model")
    },
    (f"{V}TABLE", SCAN): {
        "ReadModelScan": _s("dynamodb:DescribeTable dynamodb:Scan", "read-model")
    },
    (f"{V}ANNOTATIONS_TABLE", R): {"AnnotationsRead": _s("dynamodb:Query", "annotations")},
    (f"{V}ANNOTATIONS_TABLE", W): {
        "AnnotationsWrite": _s("dynamodb:ConditionCheckItem dynamodb:PutItem", "annotations")
    },
    (f"{V}ANNOTATIONS_TABLE", D): {"AnnotationsDelete": _s("dynamodb:DeleteItem", "annotations")},
    (f"{V}DLQ_URL", SEND): {"ParkMalformedMessages": _s("sqs:SendMessage", "ingest-dlq")},
    (f"{V}EXPORT_QUEUE_URL", SEND): {"QueueExports": _s("sqs:SendMessage", "export-queue")},
    (f"{V}DELETION_QUEUE_URL", SEND): {
        "QueueDeletionJobs": _s("sqs:SendMessage", "deletion-queue")
    },
    (f"{V}DELETIONS_TABLE", R): {"DeletionRequestsRead": _s("dynamodb:GetItem", "deletions")},
    (f"{V}DELETIONS_TABLE", W): {
        "DeletionRequestsWrite": _s("dynamodb:PutItem dynamodb:UpdateItem", "deletions")
    },
    (f"{V}DELETIONS_TABLE", D): {"DeletionRequestsDelete": _s("dynamodb:DeleteItem", "deletions")},
    (f"{V}DELETIONS_TABLE", WINDOWS): {
        "DeletionRequestsWindows": _s("dynamodb:Query", "deletions", condition=WINDOW_ITEMS)
    },
    (f"{V}DELETIONS_TABLE", SCAN): {"DeletionRequestsScan": _s("dynamodb:Scan", "deletions")},
    (f"{V}HOLDS_TABLE", R): {"HoldsRead": _s("dynamodb:GetItem dynamodb:Query", "holds")},
    (f"{V}HOLDS_TABLE", W): {"HoldsWrite": _s("dynamodb:PutItem", "holds")},
    (f"{V}SHARES_TABLE", R): {"SharesRead": _s("dynamodb:GetItem", "shares")},
    (f"{V}SHARES_TABLE", L): {"SharesList": _s("dynamodb:Query", "shares")},
    (f"{V}SHARES_TABLE", W): {"SharesWrite": _s("dynamodb:PutItem", "shares")},
    (f"{V}CURSOR_KEY_SECRET", R): {
        "ReadCursorKey": _s("secretsmanager:GetSecretValue", "${cursor-key}")
    },
    (f"{V}EXPORT_SIGNING_KEY", SIGN): {"SignExportManifests": _s("kms:Sign", "export-signing-key")},
    (f"{V}EXPORT_SIGNING_KEY", PUBLIC_KEY): {
        "ReadExportPublicKey": _s("kms:GetPublicKey", "export-signing-key")
    },
    (f"{V}AUDIT_BUCKET", W): {"AuditRecordsWrite": _s("s3:PutObject", "audit/records/*")},
    (f"{V}AUDIT_TABLE", W): {"AuditWrite": _s("dynamodb:PutItem", "audit-index")},
    (f"{V}AUDIT_TABLE", R): {"AuditRead": _s("dynamodb:Query", "audit-index")},
    (f"{V}REPORTS_BUCKET", R): {"ListReports": _s("s3:ListBucket", "reports")},
    (f"{V}REPLICA_BUCKET", R): {
        "ListReplica": _s("s3:ListBucket", "replica"),
        "CopyFromReplica": _s("s3:GetObject s3:GetObjectVersion", "replica/v1/*"),
    },
    (f"{V}REPLICA_BUCKET", E): {
        "ListReplicaVersions": _s("s3:ListBucketVersions", "replica"),
        "EraseReplicaVersions": _s("s3:DeleteObjectVersion", "replica/v1/*"),
    },
}

_ERASED_MEDIA: Final = {
    "EraseDerivedMedia": _s("s3:DeleteObjectVersion", "segments/renditions/*"),
    "EndErasedExports": _s(
        "s3:DeleteObjectVersion s3:GetObject s3:PutObject", "segments/exports/*"
    ),
}

#: What each function's construct grants beyond its needs (narrow statements no access
#: level covers), besides writing its own logs.
OWN: Final[dict[str, dict[str, Statement]]] = {
    "ingest": {
        "ProbeSegmentVersions": _s("s3:GetObjectVersion", "segments/v1/*"),
        "RemoveRenditions": _s("s3:DeleteObject", "segments/renditions/*"),
    },
    "api": {"ReadWriteDerivedMedia": _s("s3:GetObject s3:PutObject", "segments/exports/*")},
    "media": {"ReadWriteRenditions": _s("s3:GetObject s3:PutObject", "segments/renditions/*")},
    "reconcile": {
        "ReadInventoryAndRuns": _s(
            "s3:GetObject",
            "reports/inventory/${segments}/video-index-daily/*",
            "reports/reconcile/*",
            "reports/rebuild/*",
        ),
        "WriteRunObjects": _s("s3:PutObject", "reports/reconcile/*", "reports/rebuild/*"),
    },
    "export": {"ReadWriteExports": _s("s3:GetObject s3:PutObject", "segments/exports/*")},
    # An erasure removes the media and ends the exports made from erased footage.
    "deletion": _ERASED_MEDIA,
    "aggregate": {
        "ReadModelStream": _s(
            "dynamodb:DescribeStream dynamodb:GetRecords dynamodb:GetShardIterator",
            "read-model-stream",
        ),
        "ListStreams": _s("dynamodb:ListStreams", "*"),
    },
    "silence": {},
    "bulk": {
        "ReadInventoryAndRuns": _s(
            "s3:GetObject", "reports/inventory/*", "reports/bulk-restore/*", "reports/bulk-delete/*"
        ),
        "WriteRunObjects": _s("s3:PutObject", "reports/bulk-restore/*", "reports/bulk-delete/*"),
        **_ERASED_MEDIA,  # bulk deletion runs the deletion jobs, erasures included
    },
    "retention": {},
}
OWN_LOGS: Final = _s("logs:CreateLogStream logs:PutLogEvents", "own-logs")


def _names(synth: Synth, function: str) -> dict[str, str]:
    """Logical id → the short name the tables above use."""
    stack = synth.video_index
    constructs: dict[str, Any] = {
        "segments": stack.storage.bucket,
        "reports": stack.storage.reports_bucket,
        "read-model": stack.read_model.table,
        "annotations": stack.annotations.table,
        "deletions": stack.deletion.table,
        "holds": stack.holds.table,
        "shares": stack.shares.table,
        "audit": stack.audit.bucket,
        "audit-index": stack.audit.table,
        "cursor-key": stack.api.cursor_key.secret,
        "export-signing-key": stack.export_signing_key.key,
        "ingest-dlq": stack.ingest.dead_letter_queue,
        "export-queue": stack.exports.queue,
        "deletion-queue": stack.deletion.queue,
        "own-logs": _construct_of(stack, function).log_group,
    }
    if stack.replica is not None:
        constructs["replica"] = stack.replica.bucket
    return {synth.logical_id(c): name for name, c in constructs.items()}


def _construct_of(stack: Any, function: str) -> Any:
    return {
        "ingest": stack.ingest,
        "api": stack.api,
        "media": stack.media,
        "reconcile": stack.reconcile,
        "export": stack.exports,
        "deletion": stack.deletion,
        "aggregate": stack.aggregation,
        "silence": stack.silent_cameras,
        "bulk": stack.bulk,
        "retention": stack.holds,
    }[function]


def _render(resource: Any, names: Mapping[str, str]) -> tuple[str, ...]:
    rendered = []
    for one in as_list(resource):
        text = joined(one)
        for logical_id, name in names.items():
            text = text.replace(f"${{{logical_id}.Arn}}", name)
            text = text.replace(f"${{{logical_id}.StreamArn}}", f"{name}-stream")
            text = text.replace(f"${{{logical_id}}}", f"${{{name}}}")
        rendered.append(text)
    return tuple(sorted(rendered))


def _granted(synth: Synth, function: str) -> dict[str, Statement]:
    """The role's statements that carry a Sid (CDK's own, for tracing and event sources,
    carry none), as the tables above write them."""
    names = _names(synth, function)
    out = {}
    for statement in synth.policy_statements(_construct_of(synth.video_index, function).role):
        if "Sid" in statement:
            actions = frozenset(as_list(statement["Action"]))
            resources = _render(statement["Resource"], names)
            out[statement["Sid"]] = (actions, resources, statement.get("Condition"))
    return out


def _spec_of(handler: str) -> FunctionSpec:
    (spec,) = [s for s in functions.FUNCTIONS if s.handler == handler]
    return spec


# --- the declarations ------------------------------------------------------------------


def test_each_function_declares_what_the_table_says() -> None:
    # Given the hand-written table of what each function needs
    # Then the specs declare exactly that, function by function
    assert [spec.name for spec in functions.FUNCTIONS] == list(NEEDS)
    for spec in functions.FUNCTIONS:
        declared = {
            n.setting: (frozenset(a.value for a in n.access), n.required) for n in spec.needs
        }
        assert declared == NEEDS[spec.name], spec.name
    # And every function that deletes footage requires a read of the holds
    for name, needs in NEEDS.items():
        deletes = any(
            needs.get(f"{V}{bucket}", (frozenset(), False))[0] & {D, E}
            for bucket in ("BUCKET", "REPLICA_BUCKET")
        )
        if deletes:
            assert needs[f"{V}HOLDS_TABLE"] == (frozenset({R}), REQUIRED), name


def test_every_function_of_the_template_gets_exactly_its_declared_environment(
    synth: Synth,
) -> None:
    lambdas = [
        r["Properties"]
        for r in synth.of_type("AWS::Lambda::Function").values()
        if r["Properties"].get("Handler", "").startswith("video_index.")
    ]
    # Then every function of the template is declared, each once
    assert sorted(_spec_of(p["Handler"]).name for p in lambdas) == sorted(NEEDS)
    for props in lambdas:
        name = _spec_of(props["Handler"]).name
        env = props["Environment"]["Variables"]
        # And its environment is its needs that the default stack provides (no replica, no
        # access policy, no viewer), and Powertools' two; nothing added by hand
        absent = {"REPLICA_BUCKET", "ACCESS_POLICY", "VIEWER_CONNECT_ORIGINS"}
        absent |= {"VIEWER_OIDC_ISSUER", "VIEWER_OIDC_CLIENT_ID"}
        expected = {s for s in NEEDS[name] if s.removeprefix(V) not in absent}
        assert set(env) == expected | {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"}
        assert env["POWERTOOLS_SERVICE_NAME"] == f"video-index-{name}"


def test_every_need_is_granted_as_the_table_says_and_nothing_else(synth: Synth) -> None:
    for name, needs in NEEDS.items():
        # Given what the function needs, and what each need is granted (the tables above)
        expected = {"WriteOwnLogs": OWN_LOGS, **OWN[name]}
        for setting, (accesses, _) in needs.items():
            if setting == f"{V}REPLICA_BUCKET":
                continue  # no replica in the default stack: test_the_replicas_grants_follow
            for access in accesses - {VALUE}:
                expected.update(GRANTS[(setting, access)])
        # Then the role's statements are exactly those (one set per need)
        assert _granted(synth, name) == expected, name


def test_the_replicas_grants_follow_the_declarations(replica_synth: Synth) -> None:
    # Given the stack with a replica: the two functions that declare it get it
    for name in ("deletion", "bulk"):
        env = replica_synth.props(_construct_of(replica_synth.video_index, name).function)
        assert env["Environment"]["Variables"][f"{V}REPLICA_BUCKET"] == replica_synth.ref(
            replica_synth.video_index.replica.bucket  # type: ignore[union-attr]
        )
        granted = _granted(replica_synth, name)
        for access in NEEDS[name][f"{V}REPLICA_BUCKET"][0]:
            for sid, statement in GRANTS[(f"{V}REPLICA_BUCKET", access)].items():
                assert granted[sid] == statement, (name, sid)
    # And no other function sees the replica
    for name in set(NEEDS) - {"deletion", "bulk"}:
        env = replica_synth.props(_construct_of(replica_synth.video_index, name).function)
        assert f"{V}REPLICA_BUCKET" not in env["Environment"]["Variables"], name


def test_every_role_that_may_delete_footage_reads_the_holds(synth: Synth) -> None:
    # Given every function role of the template, read from the template alone
    segments = synth.logical_id(synth.video_index.storage.bucket)
    holds = synth.logical_id(synth.video_index.holds.table)
    deleting = []
    for name in NEEDS:
        construct = _construct_of(synth.video_index, name)
        statements = synth.policy_statements(construct.role)
        deletes = any(
            {"s3:DeleteObject", "s3:DeleteObjectVersion"} & set(as_list(s["Action"]))
            and any(joined(r) == f"${{{segments}.Arn}}/v1/*" for r in as_list(s["Resource"]))
            for s in statements
        )
        if not deletes:
            continue
        deleting.append(name)
        # Then it may read the holds table, and is told its name
        reads = [
            s
            for s in statements
            if "dynamodb:Query" in as_list(s["Action"])
            and s["Resource"] == synth.arn(synth.video_index.holds.table)
        ]
        assert reads, name
        env = synth.props(construct.function)["Environment"]["Variables"]
        assert env[f"{V}HOLDS_TABLE"] == {"Ref": holds}, name
    assert sorted(deleting) == ["bulk", "deletion", "ingest", "reconcile", "retention"]


# --- refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "holds",
    [
        None,  # no holds at all
        need("VIDEO_INDEX_HOLDS_TABLE", Access.READ, required=False),  # holds may be missing
        need("VIDEO_INDEX_HOLDS_TABLE", Access.WRITE),  # holds, but no read
    ],
)
@pytest.mark.parametrize(
    "deletes",
    [
        need("VIDEO_INDEX_BUCKET", Access.LIST, Access.DELETE),
        need("VIDEO_INDEX_BUCKET", Access.ERASE),
        need("VIDEO_INDEX_REPLICA_BUCKET", Access.ERASE, required=False),
    ],
)
def test_a_function_that_may_delete_footage_without_reading_the_holds_cannot_be_declared(
    deletes: Any, holds: Any
) -> None:
    needs = (deletes, *([holds] if holds else []))
    with pytest.raises(ConfigurationError, match="VIDEO_INDEX_HOLDS_TABLE") as refused:
        FunctionSpec("reaper", "video_index.handlers.reaper.handler", "reaper", needs)
    assert "function reaper may delete under v1/" in str(refused.value)


def test_a_builder_asking_for_a_setting_its_spec_lacks_is_refused_naming_both() -> None:
    # Given a function that reads segments only, and one that enforces deletion windows
    # without deleting footage itself (so it may be declared without the holds)
    reader = FunctionSpec(
        "reader", "x.handler", "reader", (need("VIDEO_INDEX_BUCKET", Access.READ),)
    )
    windows = FunctionSpec(
        "windows",
        "x.handler",
        "windows",
        (
            need("VIDEO_INDEX_BUCKET", Access.READ),
            need("VIDEO_INDEX_DELETIONS_TABLE", Access.WINDOWS),
        ),
    )
    environ = {
        "VIDEO_INDEX_BUCKET": "b",
        "VIDEO_INDEX_DELETIONS_TABLE": "d",
        "VIDEO_INDEX_TABLE": "t",
    }
    clients = Clients(dynamodb=None, s3=None, sqs=None)
    # When the ingest builder is handed the reader's settings (the table is in the
    # environment, but not declared), Then it is refused naming the variable and function
    with pytest.raises(
        ConfigurationError, match=r"VIDEO_INDEX_TABLE is not declared by the reader"
    ):
        build_ingest_service(Settings.for_function(reader, environ), clients)
    # And an enforcer (it deletes again) without the holds names the holds table
    with pytest.raises(
        ConfigurationError, match=r"VIDEO_INDEX_HOLDS_TABLE is not declared by the windows"
    ):
        build_enforcer(Settings.for_function(windows, environ), clients)


def test_a_function_missing_required_settings_names_every_one() -> None:
    with pytest.raises(ConfigurationError) as refused:
        Settings.for_function(functions.DELETION, {"VIDEO_INDEX_BUCKET": "b"})
    assert str(refused.value) == (
        "the deletion function is missing environment variable(s): "
        "VIDEO_INDEX_DELETIONS_TABLE, VIDEO_INDEX_DELETION_QUEUE_URL, VIDEO_INDEX_HOLDS_TABLE"
    )


def _bare_function(stack: Stack) -> tuple[lambda_.Function, iam.Role]:
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    function = lambda_.Function(
        stack,
        "Function",
        runtime=lambda_.Runtime.PYTHON_3_13,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context): return {}"),
        role=role,
    )
    return function, role


def test_synthesis_fails_naming_a_required_setting_no_resource_provides() -> None:
    # Given a stack where only the segment bucket is provided, and a function needing more
    stack = Stack(App(), "Bare")
    wiring = Wiring.of(stack)
    wiring.provide("VIDEO_INDEX_BUCKET", stack, "segments", {Access.READ: lambda: []})
    function, role = _bare_function(stack)
    spec = FunctionSpec(
        "sweeper",
        "x.handler",
        "sweeper",
        (
            need("VIDEO_INDEX_BUCKET", Access.READ, Access.DELETE),
            need("VIDEO_INDEX_HOLDS_TABLE", Access.READ),
            value("VIDEO_INDEX_GAP_TOLERANCE_MS"),  # optional: left out
        ),
    )
    wiring.wire(spec, function, role)
    # When the wiring is applied, Then synthesis fails naming both problems
    with pytest.raises(ValueError) as failed:
        wiring.apply()
    message = str(failed.value)
    assert "function sweeper needs delete of VIDEO_INDEX_BUCKET" in message
    assert "function sweeper requires VIDEO_INDEX_HOLDS_TABLE, which no resource" in message
    assert "GAP_TOLERANCE_MS" not in message
    assert re.search(r"\(it offers: read\)", message)


def test_a_stack_that_never_applies_its_wiring_fails_synthesis() -> None:
    app = App()
    stack = Stack(app, "Unwired")
    function, role = _bare_function(stack)
    Wiring.of(stack).wire(functions.EXPORT, function, role)
    with pytest.raises(RuntimeError, match="never applied"):
        app.synth()
