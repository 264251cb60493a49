"""What the cost benchmark counts: every request the pipeline makes, per component.

A :class:`Ledger` hands each component (the camera, ingest, the stream consumer,
retention, reconcile, the API) its own boto3 clients and counts, with a botocore
``before-call`` hook on each client, every API call it makes by service and operation;
DynamoDB calls are also priced in capacity units by AWS's sizing rules
(:class:`bench.capacity.CapacityMeter`: moto reports a constant ``ConsumedCapacity``,
1.0 per write and 0.5 per read whatever the item's size, so it is not used;
``tests/bench/test_cost.py`` checks the rule against moto where both apply). Lambda
invocations are timed around the function's handler and billed as Lambda bills them
(each rounded up to the millisecond). S3 → SQS messages are counted where moto's S3
sends them (:mod:`bench.cost_s3`).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import boto3
from botocore.config import Config

from bench.capacity import CapacityMeter, Totals
from bench.stream_consumer import item_row

REGION: Final = "us-east-1"
#: What a counted client adds to its User-Agent, followed by its component.
USER_AGENT_MARK: Final = "cost-component/"
_BEGAN: Final = "bench.cost.began"


@dataclass
class Invocations:
    """One function's invocations and their billed duration."""

    count: int = 0
    billed_ms: int = 0
    #: Wall seconds as measured (before rounding).
    seconds: float = 0.0
    #: Of which waiting for AWS's answers (here moto's), and how many calls.
    call_seconds: float = 0.0
    calls: int = 0

    def add(self, seconds: float) -> None:
        self.count += 1
        self.seconds += seconds
        self.billed_ms += max(1, math.ceil(seconds * 1000))


@dataclass
class Ledger:
    """Requests by (component, service, operation); capacity units per component;
    invocations per function; S3 → SQS messages by event name."""

    requests: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    capacity: dict[str, CapacityMeter] = field(default_factory=dict)
    invocations: dict[str, Invocations] = field(default_factory=dict)
    messages: Counter[str] = field(default_factory=Counter)
    #: The function whose invocation is being timed (its calls' time is its own).
    _open: str | None = None

    # -- clients -------------------------------------------------------------------------

    def client(self, component: str, service: str, config: Config | None = None) -> Any:
        """A new client of ``service`` whose every call is counted under ``component``.

        Its requests also say whose they are in their User-Agent (``cost-component/<name>``),
        so a test can count them on the wire, independently of this ledger."""
        mark = Config(user_agent_extra=f"{USER_AGENT_MARK}{component}")
        if service == "dynamodbstreams":  # moto answers streams on the regional endpoint
            mark = mark.merge(Config(account_id_endpoint_mode="disabled"))
        made = boto3.client(  # type: ignore[call-overload]
            service, region_name=REGION, config=config.merge(mark) if config else mark
        )
        return self.attach(component, made)

    def attach(self, component: str, client: Any) -> Any:
        service = client.meta.service_model.service_name
        client.meta.events.register(f"before-call.{service}", self._started(component, service))
        client.meta.events.register(f"after-call.{service}", self._answered)
        client.meta.events.register(f"after-call-error.{service}", self._answered)
        if service == "dynamodb":
            meter = self.capacity.setdefault(component, CapacityMeter(row=item_row))
            meter.attach(client)
        return client

    def _started(self, component: str, service: str) -> Any:
        def started(model: Any, context: dict[str, Any], **_: Any) -> None:
            self.requests[(component, service, model.name)] += 1
            context[_BEGAN] = time.perf_counter()

        return started

    def _answered(self, context: dict[str, Any] | None = None, **_: Any) -> None:
        began = (context or {}).get(_BEGAN)
        if began is not None and self._open is not None:
            figures = self.invocations.setdefault(self._open, Invocations())
            figures.call_seconds += time.perf_counter() - began
            figures.calls += 1

    # -- invocations ---------------------------------------------------------------------

    @contextmanager
    def invocation(self, function: str) -> Iterator[None]:
        """Time one invocation of ``function`` (its handler's work)."""
        began = time.perf_counter()
        self._open = function
        try:
            yield
        finally:
            self._open = None
            self.invocations.setdefault(function, Invocations()).add(time.perf_counter() - began)

    # -- reading -------------------------------------------------------------------------

    def count(self, component: str, service: str, *operations: str) -> int:
        return sum(
            n
            for (c, s, op), n in self.requests.items()
            if c == component and s == service and (not operations or op in operations)
        )

    def operations(self) -> dict[tuple[str, str, str], int]:
        return dict(sorted(self.requests.items()))

    def capacity_totals(self, component: str, final_sizes: dict[Any, int]) -> Totals | None:
        meter = self.capacity.get(component)
        if meter is None:
            return None
        meter.settle(final_sizes)
        return meter.totals()
