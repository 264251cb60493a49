"""The Lambda adapter: invoke a function synchronously with a JSON payload, errors mapped."""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from video_index.aws.errors import aws_error
from video_index.core.errors import ServiceError


class FunctionFailed(ServiceError):
    """The function ran and raised: its error type and message."""


def invoke(lambda_client: Any, function_name: str, payload: dict[str, Any]) -> Any:
    """The function's return value; :class:`FunctionFailed` when it raised."""
    try:
        response = lambda_client.invoke(
            FunctionName=function_name,
            InvocationType="RequestResponse",
            Payload=json.dumps(payload).encode(),
        )
        body = response["Payload"].read()
    except (ClientError, BotoCoreError) as exc:
        raise aws_error(exc, "Lambda") from exc
    result = json.loads(body) if body else None
    if response.get("FunctionError"):
        error = result if isinstance(result, dict) else {}
        raise FunctionFailed(
            f"{function_name} failed: {error.get('errorType', 'Error')}: "
            f"{error.get('errorMessage', body.decode(errors='replace'))}"
        )
    return result
