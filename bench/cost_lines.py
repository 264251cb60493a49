"""A priced line of a camera-month, and the helpers that turn a ledger's counts into lines
(bench/cost_model.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from bench import prices as p
from bench.capacity import Totals
from bench.cost_meter import Invocations

#: Where a line belongs: the index's bill, or the footage's (storage, PUTs, viewing).
INDEX: Final = "index"
FOOTAGE: Final = "footage"
#: S3 requests billed at the PUT, COPY, POST, LIST rate (every other one at the GET rate;
#: DELETE is free).
_TIER1: Final = frozenset(
    {
        "PutObject",
        "CopyObject",
        "ListObjectsV2",
        "ListObjectVersions",
        "CreateMultipartUpload",
        "UploadPart",
        "CompleteMultipartUpload",
        "RestoreObject",
    }
)
_MILLION: Final = 1e6


@dataclass(frozen=True)
class Line:
    component: str
    item: str
    #: Per camera-month.
    quantity: float
    unit: str
    #: $ per unit.
    price: float
    kind: str = INDEX

    @property
    def cost(self) -> float:
        return self.quantity * self.price


@dataclass(frozen=True)
class Memory:
    """The functions' memory (MB), as the stack sets it."""

    mb: dict[str, int]

    def gb_seconds(self, function: str, billed_ms: float) -> float:
        return billed_ms / 1000 * self.mb[function] / 1024


def request_price(service: str, operation: str) -> float:
    """$ per request of an S3, SQS or DynamoDB Streams operation."""
    if service == "sqs":
        return p.SQS_PER_MILLION / _MILLION
    if service == "dynamodbstreams":
        return p.STREAMS_READ_BY_LAMBDA
    if operation in ("DeleteObject", "DeleteObjects"):
        return p.S3_DELETE_PER_1000 / 1000
    return (p.S3_PUT_PER_1000 if operation in _TIER1 else p.S3_GET_PER_1000) / 1000


def request_lines(
    requests: Mapping[tuple[str, str, str], int], component: str, factor: float
) -> list[Line]:
    """Each S3 / SQS / stream operation ``component`` made, times ``factor``, priced."""
    return [
        Line(component, f"{service} {op}", n * factor, "requests", request_price(service, op))
        for (c, service, op), n in sorted(requests.items())
        if c == component and service != "dynamodb"
    ]


def capacity_lines(component: str, totals: Totals | None, factor: float) -> list[Line]:
    """DynamoDB's request units of ``component``, times ``factor``, on demand."""
    if totals is None:
        return []
    write, read = p.DYNAMODB_WRITE_PER_MILLION, p.DYNAMODB_READ_PER_MILLION
    return [
        Line(component, "DynamoDB writes", totals.write_units * factor, "WRU", write / _MILLION),
        Line(component, "DynamoDB reads", totals.read_units * factor, "RRU", read / _MILLION),
    ]


def lambda_lines(
    component: str,
    function: str,
    invocations: Invocations | None,
    memory: Memory,
    factor: float,
) -> list[Line]:
    """A function's requests and billed GB-seconds, times ``factor``."""
    if invocations is None:
        return []
    seconds = memory.gb_seconds(function, invocations.billed_ms) * factor
    return [
        Line(
            component,
            f"Lambda {function} requests",
            invocations.count * factor,
            "requests",
            p.LAMBDA_PER_MILLION / _MILLION,
        ),
        Line(component, f"Lambda {function} duration", seconds, "GB-s", p.LAMBDA_GB_SECOND),
    ]
