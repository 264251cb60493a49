"""Feed an SQS queue to a handler the way Lambda's SQS event source does.

* Long-polls ``ReceiveMessage`` (at most :data:`~video_index.core.queue_settings.SQS_BATCH_SIZE`
  messages, ``WaitTimeSeconds`` ≤ 1, the queue's visibility timeout) and, once a
  first message arrives, keeps receiving until the batch is full or the batching
  window has passed (at most half the visibility timeout).
* Invokes the handler with the event Lambda builds (``Records`` with ``messageId``,
  ``receiptHandle``, ``body``, ``attributes``, ``messageAttributes``, ``md5OfBody``,
  ``eventSource``, ``eventSourceARN``, ``awsRegion``) and a context with a deadline.
* ``ReportBatchItemFailures`` semantics: the records named in ``batchItemFailures``
  stay in the queue; the others are deleted (``DeleteMessageBatch``). A response
  naming an unknown or empty ``itemIdentifier``, a raised error or an invocation that
  outlived the function timeout fails the whole batch: nothing is deleted.
* What is not deleted becomes visible again after the visibility timeout and is
  received again; SQS (the queue's redrive policy) moves it to the dead-letter
  queue once its receive count exceeds ``maxReceiveCount``.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.core.queue_settings import (
    INGEST_TIMEOUT_SECONDS,
    SQS_BATCH_SIZE,
    SQS_MAX_BATCHING_WINDOW_SECONDS,
    VISIBILITY_TIMEOUT_SECONDS,
)
from video_index.local.context import LocalLambdaContext

logger = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], LambdaContext], "dict[str, Any] | None"]

#: Longest single long poll, so a stop request is noticed within about a second.
MAX_WAIT_SECONDS: Final = 1
#: System attributes Lambda passes on in ``attributes`` (the first four always).
LAMBDA_ATTRIBUTES: Final = (
    "ApproximateReceiveCount",
    "SentTimestamp",
    "SenderId",
    "ApproximateFirstReceiveTimestamp",
    "AWSTraceHeader",
    "SequenceNumber",
    "MessageGroupId",
    "MessageDeduplicationId",
    "DeadLetterQueueSourceArn",
)
_DELETE_CHUNK: Final = 10


@dataclass
class WorkerStats:
    """Counters since start (read from other threads; each is written by the worker only)."""

    invocations: int = 0
    records: int = 0
    deleted: int = 0
    failed: int = 0
    failed_invocations: int = 0
    receive_errors: int = 0


class SqsEventSourceWorker:
    """A thread polling ``queue_url`` and invoking ``handler`` with Lambda-shaped batches."""

    def __init__(
        self,
        sqs_client: Any,
        queue_url: str,
        handler: Handler,
        *,
        region: str,
        batch_size: int = SQS_BATCH_SIZE,
        batching_window_seconds: float = SQS_MAX_BATCHING_WINDOW_SECONDS,
        visibility_timeout_seconds: int = VISIBILITY_TIMEOUT_SECONDS,
        function_timeout_seconds: float = INGEST_TIMEOUT_SECONDS,
        function_name: str = "video-index-ingest-local",
    ) -> None:
        if not 1 <= batch_size <= 10:
            raise ValueError("batch_size must be 1..10 (one ReceiveMessage call)")
        self._sqs = sqs_client
        self.queue_url = queue_url
        self._handler = handler
        self._region = region
        self._batch_size = batch_size
        self._window = batching_window_seconds
        self._visibility = visibility_timeout_seconds
        self._timeout = function_timeout_seconds
        self._function_name = function_name
        self._queue_arn: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.stats = WorkerStats()

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> SqsEventSourceWorker:
        attributes = self._sqs.get_queue_attributes(
            QueueUrl=self.queue_url, AttributeNames=["QueueArn"]
        )["Attributes"]
        self._queue_arn = str(attributes["QueueArn"])
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sqs-event-source", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop polling; a batch being handled is finished first. Idempotent."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("the SQS worker did not stop within %.0f s", timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- the poll loop ------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                messages = self._gather()
            except Exception:
                self.stats.receive_errors += 1
                logger.exception("ReceiveMessage failed; retrying in 1 s")
                self._stop.wait(1.0)
                continue
            if messages:
                try:
                    self._invoke(messages)
                except Exception:  # a worker bug must not stop the event source
                    logger.exception("invoking the handler failed: the batch will be retried")

    def _receive(self, count: int, wait_seconds: int) -> list[dict[str, Any]]:
        response = self._sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=count,
            WaitTimeSeconds=wait_seconds,
            VisibilityTimeout=self._visibility,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        messages: list[dict[str, Any]] = response.get("Messages", [])
        return messages

    def _gather(self) -> list[dict[str, Any]]:
        """One batch: a long poll, then more receives until full or the window has passed.

        The window is cut to half the visibility timeout (only a short local timeout
        gets there), so the first messages are not visible again before the batch is
        handled; a message received twice anyway appears once, with its newest
        receipt handle.
        """
        first = self._receive(self._batch_size, MAX_WAIT_SECONDS)
        if not first:
            return []
        batch = {message["MessageId"]: message for message in first}
        window_end = time.monotonic() + min(self._window, self._visibility / 2)
        while len(batch) < self._batch_size and not self._stop.is_set():
            remaining = window_end - time.monotonic()
            if remaining <= 0:
                break
            wait = min(MAX_WAIT_SECONDS, int(remaining))
            more = self._receive(self._batch_size - len(batch), wait)
            for message in more:
                batch.pop(message["MessageId"], None)  # the newest copy goes last
                batch[message["MessageId"]] = message
            if not more and wait == 0:
                self._stop.wait(min(0.05, remaining))
        return list(batch.values())

    # -- one invocation -----------------------------------------------------------------

    def event(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The SQS event Lambda would pass for these ``ReceiveMessage`` results."""
        return {"Records": [self._record(message) for message in messages]}

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        received = message.get("Attributes", {})
        record: dict[str, Any] = {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message.get("Body", ""),
            "attributes": {name: received[name] for name in LAMBDA_ATTRIBUTES if name in received},
            "messageAttributes": {
                name: _message_attribute(value)
                for name, value in message.get("MessageAttributes", {}).items()
            },
            "md5OfBody": message.get("MD5OfBody", ""),
        }
        if message.get("MD5OfMessageAttributes"):
            record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
        record.update(
            eventSource="aws:sqs",
            eventSourceARN=self._queue_arn,
            awsRegion=self._region,
        )
        return record

    def _invoke(self, messages: list[dict[str, Any]]) -> None:
        self.stats.invocations += 1
        self.stats.records += len(messages)
        event = self.event(messages)
        context = LocalLambdaContext(self._function_name, self._timeout, self._region)
        began = time.monotonic()
        try:
            response = self._handler(event, context)
        except Exception:
            logger.exception("the handler raised: the whole batch will be retried")
            self._fail_all(messages)
            return
        elapsed = time.monotonic() - began
        if elapsed > self._timeout:
            logger.error(
                "the handler ran %.1f s, longer than the %.0f s function timeout: "
                "the whole batch will be retried",
                elapsed,
                self._timeout,
            )
            self._fail_all(messages)
            return
        failed = _failed_ids(response, {m["MessageId"] for m in messages})
        if failed is None:
            logger.error("invalid batchItemFailures %r: the whole batch will be retried", response)
            self._fail_all(messages)
            return
        self.stats.failed += len(failed)
        logger.info(
            "batch of %d records handled in %.2f s: %d failed (SQS redelivers them)",
            len(messages),
            elapsed,
            len(failed),
        )
        self._delete([m for m in messages if m["MessageId"] not in failed])

    def _fail_all(self, messages: list[dict[str, Any]]) -> None:
        self.stats.failed_invocations += 1
        self.stats.failed += len(messages)

    def _delete(self, messages: list[dict[str, Any]]) -> None:
        for offset in range(0, len(messages), _DELETE_CHUNK):
            chunk = messages[offset : offset + _DELETE_CHUNK]
            try:
                response = self._sqs.delete_message_batch(
                    QueueUrl=self.queue_url,
                    Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                        for i, m in enumerate(chunk)
                    ],
                )
            except Exception:
                logger.exception("DeleteMessageBatch failed: the messages will be redelivered")
                continue
            self.stats.deleted += len(response.get("Successful", []))
            for failure in response.get("Failed", []):
                logger.error("DeleteMessageBatch entry failed: %s", failure)


def _message_attribute(value: dict[str, Any]) -> dict[str, Any]:
    """An SQS API message attribute in the lowerCamelCase shape of a Lambda record."""
    out: dict[str, Any] = {}
    if "StringValue" in value:
        out["stringValue"] = value["StringValue"]
    if "BinaryValue" in value:
        out["binaryValue"] = _b64(value["BinaryValue"])
    out["stringListValues"] = list(value.get("StringListValues", []))
    out["binaryListValues"] = [_b64(item) for item in value.get("BinaryListValues", [])]
    out["dataType"] = value.get("DataType", "String")
    return out


def _b64(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def _failed_ids(response: object, known: set[str]) -> set[str] | None:
    """Message ids the response reports as failed; ``None`` when it fails the whole batch."""
    if response is None:
        return set()
    if not isinstance(response, dict):
        return None
    failures = response.get("batchItemFailures")
    if failures is None:
        return set()
    if not isinstance(failures, list):
        return None
    failed: set[str] = set()
    for failure in failures:
        identifier = failure.get("itemIdentifier") if isinstance(failure, dict) else None
        if not isinstance(identifier, str) or identifier not in known:
            return None
        failed.add(identifier)
    return failed
