"""Infrastructure tests on the synthesized template (docs/deployment.md, docs/testing.md).

The app is synthesized once per module (synthesis is slow) through the same
``build`` function ``app.py`` uses, and every resource and setting the stack
promises is asserted on that one template. Tests that need other settings
synthesize only the construct they are about.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, CfnElement, Stack, Validations
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from infra.limits import DLQ_RETENTION_DAYS, VISIBILITY_TIMEOUT_FACTOR
from infra.monitoring import AlarmTopic
from infra.settings import SettingsError, StackSettings
from infra.storage import SegmentStorage
from tests.infra.template import Synth, as_list
from video_index.core.contract import INVENTORY_PREFIX

DEFAULTS = StackSettings()
DAY_SECONDS = 24 * 60 * 60


def _resources_of_type(synth: Synth, cfn_type: str) -> Mapping[str, Mapping[str, Any]]:
    return synth.template.find_resources(cfn_type)


def _statements(policy_document: Mapping[str, Any]) -> list[dict[str, Any]]:
    statements: list[dict[str, Any]] = policy_document["Statement"]
    return statements


# --- segment storage --------------------------------------------------------------------------


def test_every_bucket_blocks_public_access_and_is_encrypted(synth: Synth) -> None:
    # Given the four buckets of the stack (segments, access logs, reports, audit)
    buckets = _resources_of_type(synth, "AWS::S3::Bucket")
    # Then each blocks all public access, uses SSE-S3 and has ACLs disabled
    assert len(buckets) == 4
    for logical_id, bucket in buckets.items():
        props = bucket["Properties"]
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }, logical_id
        assert props["BucketEncryption"] == {
            "ServerSideEncryptionConfiguration": [
                {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
            ]
        }, logical_id
        assert props["OwnershipControls"] == {
            "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]
        }, logical_id


def test_every_bucket_policy_denies_requests_without_tls(synth: Synth) -> None:
    # Given the bucket policies
    policies = _resources_of_type(synth, "AWS::S3::BucketPolicy")
    assert len(policies) == 4
    # Then each denies every S3 action over plain HTTP, and below TLS 1.2, on bucket and objects
    for logical_id, policy in policies.items():
        statements = _statements(policy["Properties"]["PolicyDocument"])
        # (the segment bucket's camera statement is tests/infra/test_infra_cameras.py's, the
        # audit bucket's tests/audit/test_audit_template.py's)
        others = ("CamerasNeverOverwrite", "RecordsAreNeverChanged")
        denies = [s for s in statements if s["Effect"] == "Deny" and s.get("Sid") not in others]
        conditions = [s["Condition"] for s in denies]
        assert {"Bool": {"aws:SecureTransport": "false"}} in conditions, logical_id
        assert {"NumericLessThan": {"s3:TlsVersion": 1.2}} in conditions, logical_id
        for deny in denies:
            assert deny["Action"] == "s3:*"
            assert deny["Principal"] == {"AWS": "*"}
            assert len(deny["Resource"]) == 2  # the bucket and its objects


def test_segment_bucket_is_versioned_and_retained(synth: Synth) -> None:
    # Given the segment bucket, the source of truth
    bucket = synth.resource(synth.stack.storage.bucket)
    # Then it is versioned and survives stack deletion and replacement
    assert bucket["Properties"]["VersioningConfiguration"] == {"Status": "Enabled"}
    assert bucket["DeletionPolicy"] == "Retain"
    assert bucket["UpdateReplacePolicy"] == "Retain"
    assert "BucketName" not in bucket["Properties"]  # generated unless bucket_name is set


def test_segment_bucket_lifecycle_leaves_retention_to_the_job_and_keeps_undelete_window(
    synth: Synth,
) -> None:
    # Given the lifecycle rules of the segment bucket
    rules = {
        rule["Id"]: rule
        for rule in synth.props(synth.stack.storage.bucket)["LifecycleConfiguration"]["Rules"]
    }
    # Then no rule expires current footage under v1/: a lifecycle filter cannot exclude a
    # hold, so the retention job expires it (docs/holds.md)
    for rule in rules.values():
        assert not ("ExpirationInDays" in rule and rule.get("Prefix", "").startswith("v1/"))
        assert "Prefix" in rule or "ExpirationInDays" not in rule, rule
    # And derived media expires: renditions with the video they are made from, exports
    # after the export retention
    assert rules["expire-renditions"] == {
        "Id": "expire-renditions",
        "Prefix": "renditions/",
        "ExpirationInDays": 30,
        "Status": "Enabled",
    }
    assert rules["expire-exports"] == {
        "Id": "expire-exports",
        "Prefix": "exports/",
        "ExpirationInDays": 7,
        "Status": "Enabled",
    }
    # And deleted/overwritten versions stay recoverable for the undelete window only
    assert rules["undelete-window"]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 7}
    assert rules["undelete-window"]["ExpiredObjectDeleteMarker"] is True
    assert "Prefix" not in rules["undelete-window"]
    # And unfinished multipart uploads are aborted
    assert rules["abort-incomplete-multipart-uploads"]["AbortIncompleteMultipartUpload"] == {
        "DaysAfterInitiation": 1
    }
    assert len(rules) == 4


def test_segment_bucket_has_daily_inventory_outside_the_indexed_tree(synth: Synth) -> None:
    # Given the inventory configuration of the segment bucket
    storage = synth.stack.storage
    (inventory,) = synth.props(storage.bucket)["InventoryConfigurations"]
    # Then it is a daily CSV report (no pyarrow needed) of current versions: size, date, etag
    assert inventory["Enabled"] is True
    assert inventory["ScheduleFrequency"] == "Daily"
    assert inventory["IncludedObjectVersions"] == "Current"
    assert inventory["Destination"]["Format"] == "CSV"
    assert sorted(inventory["OptionalFields"]) == ["ETag", "LastModifiedDate", "Size"]
    assert inventory["Prefix"] == "v1/"
    # And it lands in the reports bucket, not under v1/ of the segment bucket
    assert inventory["Destination"]["BucketArn"] == synth.arn(storage.reports_bucket)
    assert inventory["Destination"]["Prefix"] == INVENTORY_PREFIX
    assert not inventory["Destination"]["Prefix"].startswith("v1/")
    # And S3 may deliver it there (only for this source bucket)
    policy = synth.template.find_resources(
        "AWS::S3::BucketPolicy",
        {"Properties": {"Bucket": synth.ref(storage.reports_bucket)}},
    )
    (reports_policy,) = policy.values()
    (delivery,) = [
        s
        for s in _statements(reports_policy["Properties"]["PolicyDocument"])
        if s["Effect"] == "Allow"
    ]
    assert delivery["Principal"] == {"Service": "s3.amazonaws.com"}
    assert delivery["Action"] == "s3:PutObject"
    assert delivery["Condition"]["ArnLike"]["aws:SourceArn"] == synth.arn(storage.bucket)


def test_segment_and_reports_buckets_log_access_to_the_access_log_bucket(synth: Synth) -> None:
    # Given the storage construct
    storage = synth.stack.storage
    # Then the segment, reports and audit buckets log to the access-log bucket
    audit = synth.stack.audit.bucket
    for bucket, prefix in (
        (storage.bucket, "segments/"),
        (storage.reports_bucket, "reports/"),
        (audit, "audit/"),
    ):
        assert synth.props(bucket)["LoggingConfiguration"] == {
            "DestinationBucketName": synth.ref(storage.access_log_bucket),
            "LogFilePrefix": prefix,
        }
    # And log delivery is granted by bucket policy (ACLs are disabled), scoped to the sources
    (log_policy,) = synth.template.find_resources(
        "AWS::S3::BucketPolicy",
        {"Properties": {"Bucket": synth.ref(storage.access_log_bucket)}},
    ).values()
    allows = [
        s for s in _statements(log_policy["Properties"]["PolicyDocument"]) if s["Effect"] == "Allow"
    ]
    assert {json.dumps(s["Condition"]["ArnLike"]["aws:SourceArn"]) for s in allows} == {
        json.dumps(synth.arn(storage.bucket)),
        json.dumps(synth.arn(storage.reports_bucket)),
        json.dumps(synth.arn(audit)),
    }
    for allow in allows:
        assert allow["Principal"] == {"Service": "logging.s3.amazonaws.com"}
        assert allow["Action"] == "s3:PutObject"
    # And the access logs themselves expire
    (rule,) = synth.props(storage.access_log_bucket)["LifecycleConfiguration"]["Rules"]
    assert rule["ExpirationInDays"] == DEFAULTS.access_log_retention_days


# --- notification queue -----------------------------------------------------------------------


def test_queue_has_dlq_with_redrive_and_both_use_sse_and_tls(synth: Synth) -> None:
    # Given the notification queue and its dead-letter queue
    ingest = synth.stack.ingest
    queue = synth.props(ingest.queue)
    dlq = synth.props(ingest.dead_letter_queue)
    # Then failed messages move to the DLQ after maxReceiveCount receives
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": synth.arn(ingest.dead_letter_queue),
        "maxReceiveCount": 5,
    }
    # And the DLQ keeps them for 14 days, longer than the queue itself
    assert dlq["MessageRetentionPeriod"] == DLQ_RETENTION_DAYS * DAY_SECONDS == 1_209_600
    assert queue["MessageRetentionPeriod"] < dlq["MessageRetentionPeriod"]
    # And both are encrypted with SQS-managed keys and deny plain HTTP
    for queue_construct in (ingest.queue, ingest.dead_letter_queue):
        assert synth.props(queue_construct)["SqsManagedSseEnabled"] is True
        synth.template.has_resource_properties(
            "AWS::SQS::QueuePolicy",
            {
                "Queues": [synth.ref(queue_construct)],
                "PolicyDocument": {
                    "Statement": Match.array_with(
                        [
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Action": "sqs:*",
                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                }
                            )
                        ]
                    )
                },
            },
        )


def test_queue_visibility_timeout_is_at_least_six_times_the_lambda_timeout(synth: Synth) -> None:
    # Given the queue and the function it feeds, as synthesized
    visibility = synth.props(synth.stack.ingest.queue)["VisibilityTimeout"]
    timeout = synth.props(synth.stack.ingest.function)["Timeout"]
    # Then a message is not redelivered while an invocation may still hold it
    assert timeout == 60
    assert visibility >= VISIBILITY_TIMEOUT_FACTOR * timeout
    assert visibility == 360


def test_only_the_segment_bucket_may_send_to_the_queue(synth: Synth) -> None:
    # Given every resource policy of the notification queue
    ingest = synth.stack.ingest
    queue_arn = synth.arn(ingest.queue)
    policies = [
        props["PolicyDocument"]
        for props in (r["Properties"] for r in synth.of_type("AWS::SQS::QueuePolicy").values())
        if synth.ref(ingest.queue) in props["Queues"]
    ]
    # Then there is one, and its statements are exactly these two: plain HTTP denied, and
    # the segment bucket's notifications allowed (sending, and the two reads S3 makes when
    # it checks the destination) — no other principal, action or resource
    (policy,) = policies
    assert _statements(policy) == [
        {
            "Action": "sqs:*",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Resource": queue_arn,
        },
        {
            "Action": ["sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"],
            "Condition": {"ArnLike": {"aws:SourceArn": synth.arn(synth.stack.storage.bucket)}},
            "Effect": "Allow",
            "Principal": {"Service": "s3.amazonaws.com"},
            "Resource": queue_arn,
        },
    ]


def test_bucket_notifies_the_queue_of_created_removed_and_expired_objects_under_v1(
    synth: Synth,
) -> None:
    # Given the bucket notification custom resource of the segment bucket
    (notifications,) = synth.template.find_resources(
        "Custom::S3BucketNotifications",
        {"Properties": {"BucketName": synth.ref(synth.stack.storage.bucket)}},
    ).values()
    props = notifications["Properties"]
    # Then it sends creations, removals and lifecycle's delete markers, each filtered to
    # v1/, to the ingest queue; not lifecycle's version deletions: "s3:LifecycleExpiration:
    # Delete also notifies you when an object version is permanently deleted by an S3
    # Lifecycle configuration" (S3 User Guide, Configuring S3 Lifecycle event
    # notifications) -- in the versioned bucket, the undelete window's noncurrent versions
    # and expired delete markers, which change no key's current state
    configs = props["NotificationConfiguration"]["QueueConfigurations"]
    assert sorted(event for c in configs for event in c["Events"]) == [
        "s3:LifecycleExpiration:DeleteMarkerCreated",
        "s3:ObjectCreated:*",
        "s3:ObjectRemoved:*",
    ]
    for config in configs:
        assert config["Filter"] == {"Key": {"FilterRules": [{"Name": "prefix", "Value": "v1/"}]}}
        assert config["QueueArn"] == synth.arn(synth.stack.ingest.queue)
    assert "TopicConfigurations" not in props["NotificationConfiguration"]
    assert "LambdaFunctionConfigurations" not in props["NotificationConfiguration"]
    # And nothing of the segment bucket goes to EventBridge (ingest is the queue's job)
    assert "EventBridgeConfiguration" not in props["NotificationConfiguration"]


def test_reports_bucket_sends_its_events_to_eventbridge_only(synth: Synth) -> None:
    # Given the notification resources of the stack
    notifications = _resources_of_type(synth, "Custom::S3BucketNotifications")
    # Then there are two: the segment bucket's (to the queue) and the reports bucket's
    assert len(notifications) == 2
    (reports,) = synth.template.find_resources(
        "Custom::S3BucketNotifications",
        {"Properties": {"BucketName": synth.ref(synth.stack.storage.reports_bucket)}},
    ).values()
    # And the reports bucket only enables EventBridge (a rule starts reconcile on a new
    # inventory report), with no queue, topic or function destinations
    assert reports["Properties"]["NotificationConfiguration"] == {"EventBridgeConfiguration": {}}


# --- ingest Lambda ----------------------------------------------------------------------------


def test_ingest_function_runtime_architecture_handler_and_tracing(synth: Synth) -> None:
    # Given the ingest function
    props = synth.props(synth.stack.ingest.function)
    # Then it runs the ingest handler on Python 3.13 / arm64 with active tracing
    assert props["Runtime"] == "python3.13"
    assert props["Architectures"] == ["arm64"]
    assert props["Handler"] == "video_index.handlers.ingest.handler"
    assert props["TracingConfig"] == {"Mode": "Active"}
    assert props["MemorySize"] == 512
    assert props["Timeout"] == 60
    # And logs to its own log group with the configured retention
    log_group = synth.stack.ingest.log_group
    assert props["LoggingConfig"] == {"LogGroup": synth.ref(log_group)}
    assert synth.props(log_group)["RetentionInDays"] == 30


def test_ingest_function_uses_the_public_powertools_layer_of_the_stack_region(
    synth: Synth,
) -> None:
    # Given the function's layers
    (layer,) = synth.props(synth.stack.ingest.function)["Layers"]
    # Then it is the python313/arm64 Powertools layer, in whatever region the stack deploys to
    parts = layer["Fn::Join"][1]
    assert parts[0] == "arn:aws:lambda:"
    assert parts[1] == {"Ref": "AWS::Region"}
    assert parts[2] == (
        f":017000801446:layer:AWSLambdaPowertoolsPythonV3-python313-arm64:"
        f"{DEFAULTS.powertools_layer_version}"
    )


def test_ingest_function_environment(synth: Synth) -> None:
    # Given the function's environment
    env = synth.props(synth.stack.ingest.function)["Environment"]["Variables"]
    # Then it names the stack's own bucket, table and DLQ, and carries the read-model settings
    stack = synth.stack
    assert env == {
        "VIDEO_INDEX_BUCKET": synth.ref(stack.storage.bucket),
        "VIDEO_INDEX_TABLE": synth.ref(stack.read_model.table),
        "VIDEO_INDEX_DLQ_URL": synth.ref(stack.ingest.dead_letter_queue),
        "VIDEO_INDEX_GAP_TOLERANCE_MS": "1000",
        "VIDEO_INDEX_TOMBSTONE_DAYS": "35",
        "VIDEO_INDEX_DELETIONS_TABLE": synth.ref(stack.deletion.table),
        # enforcement keeps held footage (docs/holds.md): never without the holds table
        "VIDEO_INDEX_HOLDS_TABLE": synth.ref(stack.holds.table),
        "POWERTOOLS_SERVICE_NAME": "video-index-ingest",
        "POWERTOOLS_METRICS_NAMESPACE": "VideoIndex",
    }


def test_ingest_code_is_the_functions_tree_without_build_litter(synth: Synth) -> None:
    # Given the staged Lambda asset of the synthesized assembly
    assembly = synth.app.synth()
    code = synth.props(synth.stack.ingest.function)["Code"]
    asset_hash = code["S3Key"].removesuffix(".zip")
    staged = Path(assembly.directory) / f"asset.{asset_hash}"
    # Then it holds the video_index package (so the handler path resolves) and no caches
    assert (staged / "video_index" / "handlers" / "__init__.py").is_file()
    names = {p.name for p in staged.rglob("*")}
    assert "__pycache__" not in names
    assert not any(name.endswith((".pyc", ".egg-info")) for name in names)


def test_sqs_event_source_reports_batch_item_failures(synth: Synth) -> None:
    # Given the event source mapping of the ingest function
    mappings = _resources_of_type(synth, "AWS::Lambda::EventSourceMapping").values()
    ingest_queue = synth.arn(synth.stack.ingest.queue)
    (props,) = [
        m["Properties"] for m in mappings if m["Properties"]["EventSourceArn"] == ingest_queue
    ]
    # Then it reads the notification queue in batches with partial batch responses
    assert props["EventSourceArn"] == synth.arn(synth.stack.ingest.queue)
    assert props["FunctionName"] == synth.ref(synth.stack.ingest.function)
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["BatchSize"] == 10
    assert props["MaximumBatchingWindowInSeconds"] == 1


def test_ingest_role_has_exactly_the_permissions_the_handler_uses(synth: Synth) -> None:
    # Given the ingest role and its policies
    ingest = synth.stack.ingest
    role = synth.props(ingest.role)
    policies = synth.template.find_resources(
        "AWS::IAM::Policy", {"Properties": {"Roles": [synth.ref(ingest.role)]}}
    )
    (policy,) = policies.values()
    statements = _statements(policy["Properties"]["PolicyDocument"])
    # Then the role has no managed policies and only Lambda may assume it
    assert "ManagedPolicyArns" not in role
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
        }
    ]
    # And every statement is an Allow of named actions, never a wildcard action
    for statement in statements:
        assert statement["Effect"] == "Allow"
        for action in as_list(statement["Action"]):
            assert "*" not in action, statement
    by_sid = {s.get("Sid"): s for s in statements}
    bucket_arn = synth.arn(synth.stack.storage.bucket)
    # And its own two narrow statements (its needs' grants: tests/infra/test_wiring.py):
    # the media probe, one ranged GET of the event's object version, under v1/ only
    assert by_sid["ProbeSegmentVersions"]["Action"] == "s3:GetObjectVersion"
    assert by_sid["ProbeSegmentVersions"]["Resource"] == {"Fn::Join": ["", [bucket_arn, "/v1/*"]]}
    # And removing renditions of video that is gone, under renditions/ only
    assert by_sid["RemoveRenditions"]["Action"] == "s3:DeleteObject"
    assert by_sid["RemoveRenditions"]["Resource"] == {
        "Fn::Join": ["", [bucket_arn, "/renditions/*"]]
    }
    # And logs only into its own log group
    assert by_sid["WriteOwnLogs"]["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert by_sid["WriteOwnLogs"]["Resource"] == synth.arn(ingest.log_group)
    # And what CDK adds: consuming the notification queue, and X-Ray (no resource scoping)
    generated = [s for s in statements if "Sid" not in s]
    consume = [s for s in generated if s["Resource"] == synth.arn(ingest.queue)]
    assert len(consume) == 1
    assert sorted(consume[0]["Action"]) == [
        "sqs:ChangeMessageVisibility",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:GetQueueUrl",
        "sqs:ReceiveMessage",
    ]
    xray = [s for s in generated if s["Resource"] == "*"]
    assert len(xray) == 1
    assert sorted(xray[0]["Action"]) == ["xray:PutTelemetryRecords", "xray:PutTraceSegments"]
    # And the rest, one statement per grant of its needs: the segments (read, delete,
    # erase), the read model (read, write), the DLQ, the deletion windows, the holds
    assert len(statements) == 15


# --- read model -------------------------------------------------------------------------------


def test_read_model_table_shape_comes_from_the_shared_schema(synth: Synth) -> None:
    # Given the read-model table
    table = synth.resource(synth.stack.read_model.table)
    props = table["Properties"]
    # Then it is on demand, keyed pk/sk (strings), with TTL, PITR and SSE
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert props["AttributeDefinitions"] == [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"},
    ]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["SSESpecification"] == {"SSEEnabled": True}
    assert "ProvisionedThroughput" not in props
    # And it may be deleted with the stack: it is rebuildable from S3
    assert table["DeletionPolicy"] == "Delete"


# --- alarms -----------------------------------------------------------------------------------


def test_dlq_not_empty_alarm_notifies_the_alarm_topic(synth: Synth) -> None:
    # Given the DLQ alarm
    props = synth.props(synth.stack.monitoring.dlq_alarm)
    # Then it fires as soon as one message is visible in the DLQ
    assert props["Namespace"] == "AWS/SQS"
    assert props["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert props["Dimensions"] == [
        {
            "Name": "QueueName",
            "Value": {
                "Fn::GetAtt": [synth.logical_id(synth.stack.ingest.dead_letter_queue), "QueueName"]
            },
        }
    ]
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert props["Threshold"] == 0
    assert props["EvaluationPeriods"] == 1
    assert props["TreatMissingData"] == "notBreaching"
    # And it publishes to the alarm topic
    assert props["AlarmActions"] == [synth.ref(synth.stack.monitoring.topic)]


def test_function_errors_alarm_notifies_the_alarm_topic(synth: Synth) -> None:
    # Given the function errors alarm
    props = synth.props(synth.stack.monitoring.ingest_errors_alarm)
    # Then it fires on any Lambda error of the ingest function
    assert props["Namespace"] == "AWS/Lambda"
    assert props["MetricName"] == "Errors"
    assert props["Dimensions"] == [
        {"Name": "FunctionName", "Value": synth.ref(synth.stack.ingest.function)}
    ]
    assert props["Statistic"] == "Sum"
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert props["Threshold"] == 0
    assert props["AlarmActions"] == [synth.ref(synth.stack.monitoring.topic)]


def test_alarm_topic_is_encrypted_with_a_key_cloudwatch_may_use_and_tls_only(
    synth: Synth,
) -> None:
    # Given the alarm topic and its key
    alarms = synth.stack.monitoring.alarm_topic
    topic = synth.props(alarms.topic)
    key = synth.props(alarms.key)
    # Then the topic is encrypted with the rotated customer-managed key
    assert topic["KmsMasterKeyId"] == synth.arn(alarms.key)
    assert key["EnableKeyRotation"] is True
    # And CloudWatch alarms may use that key to publish
    assert {
        "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
        "Effect": "Allow",
        "Principal": {"Service": "cloudwatch.amazonaws.com"},
        "Resource": "*",
    } in _statements(key["KeyPolicy"])
    # And publishing over plain HTTP is denied
    synth.template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "Topics": [synth.ref(alarms.topic)],
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Deny",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            },
        },
    )
    # And without alarm_email there is no subscription
    synth.template.resource_count_is("AWS::SNS::Subscription", 0)


# --- whole-template checks --------------------------------------------------------------------


def test_template_passes_cfn_lint(synth: Synth, tmp_path: Path) -> None:
    # Given the synthesized template on disk, when cfn-lint checks it
    # Then there are no errors, and no warnings beyond the documented accepted ones
    assert synth.lint(tmp_path) == []


def test_cdk_nag_aws_solutions_reports_nothing_unacknowledged(synth: Synth) -> None:
    # Given the AWS Solutions pack run over the synthesized stack
    report = AwsSolutionsChecks(synth.app).validate_scope(synth.stack)
    # Then no rule reports an error or a warning
    violations = [
        f"{v.rule_name} ({v.severity}) at "
        f"{[r.construct_path or r.resource_logical_id for r in v.violating_resources]}"
        for v in report.violations
    ]
    assert violations == []
    assert report.success is True


#: The functions that read or write segments (the retention job is the Holds construct's).
FUNCTIONS = ("Ingest", "Api", "Exports", "Deletion", "Media", "Holds")


def test_cdk_nag_acknowledgments_are_few_and_justified(synth: Synth) -> None:
    # Given every acknowledgment recorded in the construct tree ({rule id: reason} entries)
    acknowledged: dict[str, str] = {}
    for construct in synth.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule_id, reason in entry.data.items():
                    acknowledged[f"{construct.node.path} {rule_id}"] = reason
    # Then exactly the expected findings are acknowledged, where they arise (those of the
    # reconcile and bulk constructs and the role policies are listed exactly in
    # test_infra_reconcile.py, test_infra_bulk.py and test_infra_api.py)
    bucket = synth.logical_id(synth.stack.storage.bucket)
    audit = synth.logical_id(synth.stack.audit.bucket)
    elsewhere = ("VideoIndex/Reconcile/", "VideoIndex/Bulk/", "VideoIndex/Api/RolePolicies/")
    outside_reconcile = [a for a in acknowledged if not a.startswith(elsewhere)]
    iam5 = "Annotation::AwsSolutions-IAM5[Resource::"
    assert sorted(outside_reconcile) == sorted(
        [
            "VideoIndex/BucketNotificationsHandler050a0587b7544547bf325f094a3db834 "
            "Annotation::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/"
            "service-role/AWSLambdaBasicExecutionRole]",
            # each function: the runtime pin, X-Ray, and one wildcard per key prefix it uses
            *(f"VideoIndex/{fn}/Function Annotation::AwsSolutions-L1" for fn in FUNCTIONS),
            *(f"VideoIndex/{fn}/Role {iam5}*]" for fn in FUNCTIONS),
            *(f"VideoIndex/{fn}/Role {iam5}<{bucket}.Arn>/v1/*]" for fn in FUNCTIONS),
            f"VideoIndex/Ingest/Role {iam5}<{bucket}.Arn>/renditions/*]",
            f"VideoIndex/Media/Role {iam5}<{bucket}.Arn>/renditions/*]",
            f"VideoIndex/Api/Role {iam5}<{bucket}.Arn>/exports/*]",
            f"VideoIndex/Exports/Role {iam5}<{bucket}.Arn>/exports/*]",
            # an erasure removes the media made from the footage (docs/deletion.md)
            f"VideoIndex/Deletion/Role {iam5}<{bucket}.Arn>/renditions/*]",
            f"VideoIndex/Deletion/Role {iam5}<{bucket}.Arn>/exports/*]",
            # one object per audit record (docs/audit.md), by the functions that audit
            *(
                f"VideoIndex/{fn}/Role {iam5}<{audit}.Arn>/records/*]"
                for fn in ("Api", "Media", "Holds")
            ),
            # the API's cursor key: no rotation function (replacing it ends cursors only)
            "VideoIndex/Api/CursorKey/Secret Annotation::AwsSolutions-SMG4",
            # the export signing key's public half: anyone verifies an export, no account
            "VideoIndex/Api/HttpApi/GET--exports--public-key Annotation::AwsSolutions-APIG4",
            # the stream consumer: no bucket access; ListStreams and X-Ray; its DLQ
            "VideoIndex/Aggregation/Function Annotation::AwsSolutions-L1",
            f"VideoIndex/Aggregation/Role {iam5}*]",
            "VideoIndex/Aggregation/DeadLetterQueue Annotation::AwsSolutions-SQS3",
            # the silent-camera check: read-only on the read model; the runtime pin, X-Ray
            "VideoIndex/SilentCameras/Function Annotation::AwsSolutions-L1",
            f"VideoIndex/SilentCameras/Role {iam5}*]",
            # the camera role: its own device's keys of each kind (docs/cameras.md)
            *(
                f"VideoIndex/Cameras/Policy {iam5}<{bucket}.Arn>/v1/{kind}/"
                "<credentials-iot:ThingName>/*]"
                for kind in ("video", "sensor", "analysis")
            ),
            # a share link's GET routes: the secret decides, no authorizer (docs/shares.md)
            *(
                f"VideoIndex/Api/HttpApi/GET--shares--{{share_id}}{tail} "
                "Annotation::AwsSolutions-APIG4"
                for tail in ("", "--download", "--frame", "--media--{file}", "--playlist.m3u8")
            ),
        ]
    )
    # And each with a reason a reviewer can check
    for where, reason in acknowledged.items():
        assert len(reason) > 60, where


def test_cdk_nag_plugin_does_flag_an_insecure_bucket() -> None:
    # Given a throwaway stack with a default (unlogged, TLS-optional) bucket
    app = App()
    stack = Stack(app, "Insecure")
    s3.Bucket(stack, "Bucket")
    # When the same pack checks it
    report = AwsSolutionsChecks(app).validate_scope(stack)
    # Then it reports findings, so an empty report above is not vacuous
    assert {"AwsSolutions-S1", "AwsSolutions-S10"} <= {v.rule_name for v in report.violations}


# --- settings ---------------------------------------------------------------------------------


def test_settings_defaults_live_in_one_place() -> None:
    # Given an app without context
    settings = StackSettings.from_context(App())
    # Then the settings are the dataclass defaults
    assert settings == StackSettings()
    assert settings.retention_days == {"video": 30, "sensor": 90, "analysis": 90}
    assert settings.queue_visibility_timeout_seconds == 360


def test_context_overrides_reach_the_template() -> None:
    # Given context as `cdk synth -c ...` passes it (strings) and as cdk.json does (numbers)
    app = App(
        context={
            "retention_days_video": "60",
            "noncurrent_version_expiry_days": 3,
            "bucket_name": "my-segments",
        }
    )
    settings = StackSettings.from_context(app)
    stack = Stack(app, "Storage")
    # When only the storage construct is synthesized (cheap)
    storage = SegmentStorage(stack, "Storage", settings=settings)
    template = Template.from_stack(stack)
    # Then the overrides show in the segment bucket
    child = storage.bucket.node.default_child
    assert isinstance(child, CfnElement)
    props = template.to_json()["Resources"][stack.get_logical_id(child)]["Properties"]
    rules = {r["Id"]: r for r in props["LifecycleConfiguration"]["Rules"]}
    assert "expire-video" not in rules  # the retention job's (docs/holds.md)
    assert rules["expire-renditions"]["ExpirationInDays"] == 60
    assert rules["undelete-window"]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 3}
    assert props["BucketName"] == "my-segments"


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("retention_days_video", "thirty", "whole number"),
        ("retention_days_video", "0", ">= 1"),
        ("ingest_timeout_seconds", 901, "between 1 and 900"),
        ("log_retention_days", "31", "must be one of"),
        ("max_receive_count", True, "whole number"),
        ("bucket_name", "Not_A_Bucket", "not a valid S3 bucket name"),
        ("alarm_email", "nobody", "not an e-mail address"),
        ("tombstone_days", "7", ">= 19"),
        ("stack_name", "", "must not be empty"),
    ],
)
def test_bad_context_value_raises_an_error_naming_the_key(
    key: str, value: object, expected: str
) -> None:
    # Given an app with one bad context value
    app = App(context={key: value})
    # When settings are read from it
    with pytest.raises(SettingsError) as error:
        StackSettings.from_context(app)
    # Then the error names the context key and the problem
    assert f"context key {key!r}" in str(error.value)
    assert expected in str(error.value)


def test_batch_size_above_ten_needs_a_batching_window() -> None:
    # Given a batch size above 10 without a batching window
    app = App(context={"sqs_batch_size": "20", "sqs_max_batching_window_seconds": "0"})
    # Then Lambda's rule is enforced before deployment
    with pytest.raises(SettingsError, match="'sqs_batch_size'"):
        StackSettings.from_context(app)
    # And with a window it is accepted
    assert StackSettings(sqs_batch_size=20, sqs_max_batching_window_seconds=5).sqs_batch_size == 20


def test_alarm_email_from_context_subscribes_to_the_alarm_topic() -> None:
    # Given an alarm address in the context
    app = App(context={"alarm_email": "ops@example.com"})
    stack = Stack(app, "Alarms")
    # When only the alarm topic is synthesized
    alarms = AlarmTopic(stack, "Alarms", settings=StackSettings.from_context(app))
    template = Template.from_stack(stack)
    # Then the address is subscribed to the topic by e-mail
    topic = alarms.topic.node.default_child
    assert isinstance(topic, CfnElement)
    template.has_resource_properties(
        "AWS::SNS::Subscription",
        {
            "Protocol": "email",
            "Endpoint": "ops@example.com",
            "TopicArn": {"Ref": stack.get_logical_id(topic)},
        },
    )
