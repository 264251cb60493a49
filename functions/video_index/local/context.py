"""A Lambda context object for handlers invoked in-process by the local stack."""

from __future__ import annotations

import time
import uuid

from aws_lambda_powertools.utilities.typing import LambdaContext

#: moto's default account; the local ARNs use it.
LOCAL_ACCOUNT_ID = "123456789012"


class LocalLambdaContext(LambdaContext):
    """What a handler may read from its context, with a real deadline."""

    def __init__(self, function_name: str, timeout_seconds: float, region: str) -> None:
        self._function_name = function_name
        self._function_version = "$LATEST"
        self._invoked_function_arn = (
            f"arn:aws:lambda:{region}:{LOCAL_ACCOUNT_ID}:function:{function_name}"
        )
        self._memory_limit_in_mb = 512
        self._aws_request_id = str(uuid.uuid4())
        self._log_group_name = f"/aws/lambda/{function_name}"
        self._log_stream_name = f"local/{self._aws_request_id}"
        self._deadline = time.monotonic() + timeout_seconds

    def get_remaining_time_in_millis(self) -> int:  # type: ignore[override]
        return max(0, int((self._deadline - time.monotonic()) * 1000))
