"""AWS list prices the cost benchmark multiplies its counts by: us-east-1, on demand, USD.

Dated and sourced. Every figure is the published us-east-1 list price of the page named
beside it, without free tiers, volume discounts below the first tier, savings plans or
reserved capacity. The table was compiled on :data:`AS_OF` on a build machine without
access to AWS's pages (the pages render their tables with JavaScript): re-read each
figure against its URL before quoting a total elsewhere, and change :data:`AS_OF` with
any figure.

The storage classes carry what the lifecycle tiers need (storage per GB-month, the
lifecycle transition request into the class, retrieval per GB and per request, minimum
storage duration and billed object size), so a tier scenario is a row of the same
bench (``bench/cost_model.py``) priced from this one table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

AS_OF: Final = "2026-12-07"
REGION: Final = "us-east-1"

#: Where each group of prices is published.
SOURCES: Final = {
    "s3": "https://aws.amazon.com/s3/pricing/",
    "sqs": "https://aws.amazon.com/sqs/pricing/",
    "lambda": "https://aws.amazon.com/lambda/pricing/",
    "dynamodb": "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    "dynamodb_provisioned": "https://aws.amazon.com/dynamodb/pricing/provisioned/",
    "stepfunctions": "https://aws.amazon.com/step-functions/pricing/",
    "apigateway": "https://aws.amazon.com/api-gateway/pricing/",
    "cloudwatch": "https://aws.amazon.com/cloudwatch/pricing/",
    "scheduler": "https://aws.amazon.com/eventbridge/pricing/",
}

GB: Final = 1_000_000_000  # AWS bills storage and transfer in GB of 2^30 bytes; see GIB
GIB: Final = 1 << 30


@dataclass(frozen=True)
class StorageClass:
    """One S3 storage class (us-east-1): what keeping, moving and reading back costs."""

    api_name: str
    #: Storage, first 50 TB a month, $ per GB-month.
    gb_month: float
    #: PUT, COPY, POST, LIST into / of the class, $ per 1,000 requests.
    put_per_1000: float
    #: GET, SELECT and all other requests, $ per 1,000 requests.
    get_per_1000: float
    #: A lifecycle transition into the class, $ per 1,000 requests (0: not a target).
    transition_per_1000: float
    #: Retrieval, $ per GB read back (Standard tier for the archive classes).
    retrieval_per_gb: float
    #: Restore requests (archive classes, Standard tier), $ per 1,000.
    restore_per_1000: float
    #: Bulk-tier retrieval, $ per GB and per 1,000 restore requests (archive classes).
    bulk_retrieval_per_gb: float
    bulk_restore_per_1000: float
    #: Minimum storage duration billed, days (0: none).
    minimum_days: int
    #: Objects smaller than this are billed as this size (0: none).
    minimum_object_bytes: int
    #: Bytes of index data billed per archived object (32 KB in the class + 8 KB Standard).
    archive_overhead_bytes: int = 0


STANDARD: Final = StorageClass("STANDARD", 0.023, 0.005, 0.0004, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)
STANDARD_IA: Final = StorageClass(
    "STANDARD_IA", 0.0125, 0.01, 0.001, 0.01, 0.01, 0.0, 0.0, 0.0, 30, 128 * 1024
)
GLACIER_IR: Final = StorageClass(
    "GLACIER_IR", 0.004, 0.02, 0.01, 0.02, 0.03, 0.0, 0.0, 0.0, 90, 128 * 1024
)
GLACIER: Final = StorageClass(
    "GLACIER", 0.0036, 0.03, 0.0004, 0.03, 0.01, 0.05, 0.0, 0.0, 90, 0, 40 * 1024
)
DEEP_ARCHIVE: Final = StorageClass(
    "DEEP_ARCHIVE", 0.00099, 0.05, 0.0004, 0.05, 0.02, 0.10, 0.0025, 0.025, 180, 0, 40 * 1024
)
#: By S3 API name (``StorageClass`` of PutObject, lifecycle transitions, the inventory).
STORAGE_CLASSES: Final = {
    c.api_name: c for c in (STANDARD, STANDARD_IA, GLACIER_IR, GLACIER, DEEP_ARCHIVE)
}

#: S3 requests of the Standard class, $ per 1,000 (DELETE is free, "DELETE and CANCEL
#: requests are free"; DeleteObjects is a POST and is priced as one here: an upper bound).
S3_PUT_PER_1000: Final = STANDARD.put_per_1000
S3_GET_PER_1000: Final = STANDARD.get_per_1000
S3_DELETE_PER_1000: Final = 0.0
#: S3 Inventory, $ per million objects listed.
S3_INVENTORY_PER_MILLION: Final = 0.0025
#: Data transfer out to the internet, first 10 TB a month, $ per GB.
TRANSFER_OUT_PER_GB: Final = 0.09

#: SQS standard queue, $ per million requests (each 64 KB chunk of a payload is one).
SQS_PER_MILLION: Final = 0.40

#: Lambda on arm64 (the stack's architecture), $ per GB-second and per million requests.
LAMBDA_GB_SECOND: Final = 0.0000133334
LAMBDA_PER_MILLION: Final = 0.20

#: DynamoDB on-demand (since the 1 November 2024 price cut), $ per million request units.
DYNAMODB_WRITE_PER_MILLION: Final = 0.625
DYNAMODB_READ_PER_MILLION: Final = 0.125
#: DynamoDB table storage and continuous backups (PITR), $ per GB-month.
DYNAMODB_STORAGE_GB_MONTH: Final = 0.25
DYNAMODB_PITR_GB_MONTH: Final = 0.20
#: DynamoDB Streams GetRecords, $ per 100,000 read request units; free when Lambda's event
#: source reads the stream ("GetRecords API calls invoked by AWS Lambda ... are free").
STREAMS_PER_100K: Final = 0.02
STREAMS_READ_BY_LAMBDA: Final = 0.0
#: DynamoDB provisioned capacity, $ per WCU-hour and RCU-hour (a steady fleet's option).
DYNAMODB_WCU_HOUR: Final = 0.00065
DYNAMODB_RCU_HOUR: Final = 0.00013

#: Step Functions standard workflows, $ per 1,000 state transitions.
STEP_FUNCTIONS_PER_1000: Final = 0.025
#: API Gateway HTTP API, $ per million requests (first 300 million a month).
HTTP_API_PER_MILLION: Final = 1.00
#: CloudWatch Logs ingestion, $ per GB; a standard alarm, $ per alarm-month.
LOGS_INGEST_PER_GB: Final = 0.50
ALARM_MONTH: Final = 0.10
#: EventBridge Scheduler, $ per million invocations (beyond its 14 million free).
SCHEDULER_PER_MILLION: Final = 1.00
