"""Client wrappers for tests: serialize calls into in-process moto, inject transient faults."""

from __future__ import annotations

import random
import threading
from typing import Any

from botocore.exceptions import ClientError

#: (code, HTTP status) of the transient failures DynamoDB and S3 really return.
DYNAMODB_FAULTS = (
    ("ProvisionedThroughputExceededException", 400),
    ("ThrottlingException", 400),
    ("TransactionConflictException", 400),
    ("InternalServerError", 500),
)
S3_FAULTS = (("SlowDown", 503), ("InternalError", 500))


class SerializedClient:
    """Makes each call atomic, as one DynamoDB/S3 request is; moto's backends are not
    thread-safe on their own. Interleavings *between* calls stay fully concurrent."""

    def __init__(self, client: Any, lock: threading.Lock) -> None:
        self._client = client
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr) or name.startswith("_") or name in ("meta", "exceptions"):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return call


class FlakyClient:
    """Fails a share of calls with a transient error, before the request or after it
    (the write happened, the response was lost) — the two cases a retry must survive."""

    def __init__(
        self,
        client: Any,
        faults: tuple[tuple[str, int], ...],
        rate: float,
        seed: int,
        operations: frozenset[str],
    ) -> None:
        self._client = client
        self._faults = faults
        self._rate = rate
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._operations = operations
        self.injected = 0

    def _roll(self) -> tuple[str, int] | None:
        with self._rng_lock:
            if self._rng.random() >= self._rate:
                return None
            self.injected += 1
            return self._rng.choice(self._faults)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name not in self._operations:
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            fault = self._roll()
            if fault and self._rng.random() < 0.5:
                raise _error(fault, name)
            result = attr(*args, **kwargs)
            if fault:
                raise _error(fault, name)
            return result

        return call


def _error(fault: tuple[str, int], operation: str) -> ClientError:
    code, status = fault
    return ClientError(
        {
            "Error": {"Code": code, "Message": f"injected {code}"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        operation,
    )
