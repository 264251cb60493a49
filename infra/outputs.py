"""The stack outputs ops tools read (docs/operations.md, "Which path to use").

``video-index rebuild|reconcile|status --stack NAME`` finds everything it needs in
these outputs (CloudFormation ``DescribeStacks``), so an operator never types an ARN.
The output keys are :mod:`video_index.core.contract`'s ``OUTPUT_*`` constants: the CLI
reads the same names.
"""

from __future__ import annotations

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs

from infra.storage import SegmentStorage
from video_index.core.contract import (
    OUTPUT_AGGREGATE_FUNCTION,
    OUTPUT_AGGREGATION_DLQ_URL,
    OUTPUT_BUCKET,
    OUTPUT_DLQ_URL,
    OUTPUT_INVENTORY_DESTINATION,
    OUTPUT_OPS_FUNCTION,
    OUTPUT_QUEUE_URL,
    OUTPUT_REPORTS_BUCKET,
    OUTPUT_TABLE,
)


def ops_outputs(
    stack: Stack,
    *,
    storage: SegmentStorage,
    table: dynamodb.ITable,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    ops_function: lambda_.IFunction,
) -> dict[str, CfnOutput]:
    """Names and URLs for ops tools, as outputs of ``stack`` keyed by their contract names.

    (The API URL and the state machine ARNs are output by the stack itself.)
    """
    values = {
        OUTPUT_BUCKET: (storage.bucket.bucket_name, "Segment bucket (the truth)"),
        OUTPUT_REPORTS_BUCKET: (
            storage.reports_bucket.bucket_name,
            "Reports bucket: inventory, reconcile reports, rebuild partition lists",
        ),
        OUTPUT_INVENTORY_DESTINATION: (
            storage.inventory_destination_uri,
            "Where S3 Inventory reports of the segment bucket land",
        ),
        OUTPUT_TABLE: (table.table_name, "Read-model table"),
        OUTPUT_QUEUE_URL: (queue.queue_url, "S3 notification queue (ingest)"),
        OUTPUT_DLQ_URL: (dead_letter_queue.queue_url, "Ingest dead-letter queue"),
        OUTPUT_OPS_FUNCTION: (
            ops_function.function_name,
            "Ops Lambda (reconcile and rebuild steps; `rebuild abort` invokes its abort step)",
        ),
    }
    # At the stack's own scope, so the construct id is the output key (no hash suffix).
    return {
        key: CfnOutput(stack, key, value=value, description=description)
        for key, (value, description) in values.items()
    }


def aggregation_outputs(
    stack: Stack, *, function: lambda_.IFunction, dead_letter_queue: sqs.IQueue
) -> dict[str, CfnOutput]:
    """The stream consumer for people (docs/operations.md, "Aggregation"): its function
    (logs, metrics) and the queue describing batches that failed every retry."""
    values = {
        OUTPUT_AGGREGATE_FUNCTION: (
            function.function_name,
            "Aggregation Lambda (read-model stream -> buckets and device totals)",
        ),
        OUTPUT_AGGREGATION_DLQ_URL: (
            dead_letter_queue.queue_url,
            "Aggregation dead-letter queue: stream batches that failed every retry",
        ),
    }
    return {
        key: CfnOutput(stack, key, value=value, description=description)
        for key, (value, description) in values.items()
    }
