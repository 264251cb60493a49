"""The SQS adapter: sending a JSON message, errors mapped once."""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from video_index.core.errors import ServiceError, TransientError


class QueueError(ServiceError):
    """SQS refused a message for a reason retrying will not fix."""


class TransientQueueError(QueueError, TransientError):
    """Throttling, a 5xx or a network error: retry later."""


def send_message(sqs: Any, queue_url: str, body: dict[str, Any]) -> None:
    try:
        sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps(body))
    except BotoCoreError as exc:
        raise TransientQueueError(f"SQS unreachable: {exc}") from exc
    except ClientError as exc:
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        code = exc.response.get("Error", {}).get("Code", "")
        if status >= 500 or status == 429 or "Throttl" in str(code):
            raise TransientQueueError(f"SQS {code}") from exc
        raise QueueError(f"SQS {code}: {exc}") from exc
