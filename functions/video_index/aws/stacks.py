"""The CloudFormation adapter: a deployed stack's outputs (``DescribeStacks``), errors mapped."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from video_index.aws.errors import aws_error, error_code
from video_index.core.errors import BadInput


def stack_outputs(cloudformation: Any, name: str) -> dict[str, str]:
    """``{OutputKey: OutputValue}`` of the stack ``name``.

    An unknown stack is :class:`BadInput` naming ``--stack`` (and the region asked).
    """
    try:
        stacks = cloudformation.describe_stacks(StackName=name)["Stacks"]
    except ClientError as exc:
        message = exc.response.get("Error", {}).get("Message", "")
        if error_code(exc) == "ValidationError" and "does not exist" in message:
            region = cloudformation.meta.region_name
            raise BadInput(
                "--stack", f"no stack named {name!r} in region {region} (check AWS_REGION)"
            ) from None
        raise aws_error(exc, "CloudFormation") from exc
    except BotoCoreError as exc:
        raise aws_error(exc, "CloudFormation") from exc
    if not stacks:
        raise BadInput("--stack", f"no stack named {name!r}")
    return {
        str(output["OutputKey"]): str(output["OutputValue"])
        for output in stacks[0].get("Outputs", [])
    }
