"""The uploader's retry policy: which S3 answers deserve another attempt, and how long to wait.

409 ``ConditionalRequestConflict`` / ``OperationAborted``, throttling (429/503
``SlowDown`` …), 500 ``InternalError`` and connection errors are retried with
exponential backoff and jitter (base 0.1 s, cap 5 s) up to ``max_attempts``
requests; then, or at once for an error that retrying cannot fix (e.g.
``AccessDenied``, ``NoSuchBucket``), :class:`UploadFailed` names the S3 error code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, TypeVar

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from video_index.aws.errors import error_code
from video_index.upload.results import UploadFailed

BACKOFF_BASE_S: Final = 0.1
BACKOFF_CAP_S: Final = 5.0
#: Error codes worth another attempt: conflicting conditional writes, throttling and
#: transient server errors. Any 429/5xx answer is retried whatever its code.
RETRYABLE_CODES: Final = frozenset(
    {
        "ConditionalRequestConflict",
        "OperationAborted",
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "InternalError",
        "ServiceUnavailable",
        "RequestTimeout",
        "RequestTimeoutException",
        "PriorRequestNotComplete",
        "BadDigest",  # the bytes were damaged on the way: sending them again fixes it
    }
)
RETRYABLE_STATUS: Final = frozenset({429, 500, 502, 503, 504})
T = TypeVar("T")


def failure_code(exc: Exception) -> str:
    """What a failed file's outcome names: the AWS error code, else the HTTP status, else
    the exception's type."""
    if isinstance(exc, ClientError):
        return error_code(exc) or str(http_status(exc) or "Unknown")
    return type(exc).__name__


def http_status(exc: ClientError) -> int | None:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status if isinstance(status, int) else None


def is_retryable(exc: Exception) -> bool:
    if isinstance(exc, ClientError):
        return failure_code(exc) in RETRYABLE_CODES or http_status(exc) in RETRYABLE_STATUS
    return isinstance(exc, BotoConnectionError | HTTPClientError)


def is_precondition_failed(exc: ClientError) -> bool:
    return failure_code(exc) == "PreconditionFailed" or http_status(exc) == 412


TRANSPORT_ERRORS: Final = (BotoConnectionError, HTTPClientError)


@dataclass
class RetryPolicy:
    """Backoff settings shared by every request of one upload."""

    key: str
    max_attempts: int
    sleep: Callable[[float], object]
    clock: Callable[[], float]
    jitter: Callable[[], float]
    timeout_s: float | None
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def delay(self, attempt: int) -> float:
        """Exponential backoff with "equal jitter": half fixed, half random."""
        ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0 ** (attempt - 1))
        return ceiling / 2 + self.jitter() * ceiling / 2

    def attempts(self, operation: str) -> Attempts:
        return Attempts(self, operation)

    def call(self, operation: str, request: Callable[[], T], *, passthrough: bool = False) -> T:
        """``request()`` with retries. ``passthrough``: re-raise non-retryable
        ``ClientError``s as they are (the caller handles 404, 412 …)."""
        attempts = self.attempts(operation)
        while True:
            attempts.count += 1
            try:
                return request()
            except ClientError as exc:
                if passthrough and not is_retryable(exc):
                    raise
                attempts.failed(exc)
            except TRANSPORT_ERRORS as exc:
                attempts.failed(exc)


@dataclass
class Attempts:
    """The attempts of one request: count them, back off, or give up."""

    policy: RetryPolicy
    operation: str
    count: int = 0

    def failed(self, exc: Exception) -> None:
        """Sleep before the next attempt, or raise :class:`UploadFailed`."""
        policy, code = self.policy, failure_code(exc)
        if not is_retryable(exc):
            raise self.give_up(exc, code, exhausted=False) from exc
        if self.count >= policy.max_attempts:
            raise self.give_up(exc, code, exhausted=True) from exc
        delay = policy.delay(self.count)
        if policy.timeout_s is not None and (
            policy.clock() - policy.started + delay > policy.timeout_s
        ):
            raise self.give_up(exc, code, exhausted=True) from exc
        policy.sleep(delay)

    def give_up(self, exc: Exception, code: str, *, exhausted: bool) -> UploadFailed:
        return UploadFailed(
            self.policy.key, self.operation, code, self.count, exhausted=exhausted, detail=str(exc)
        )
