"""How the ops adapters (CloudFormation, Step Functions, Lambda) map AWS errors, once.

* no credentials, no region, an unknown profile — :class:`ConfigurationError` (the
  operator's setup; exit code 2, the message says what to set);
* throttling, 5xx, a network failure — :class:`TransientError` (retry later);
* anything else AWS refuses (access denied, a missing resource) — :class:`ServiceError`.
"""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
)

from video_index.core.errors import ConfigurationError, ServiceError, TransientError

#: What to tell an operator whose shell has no usable AWS configuration.
CREDENTIALS_HINT = (
    "no AWS credentials found: set AWS_PROFILE (or AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY), or log in with `aws sso login`"
)
REGION_HINT = "no AWS region configured: set AWS_REGION (or a region in your AWS profile)"


def configuration_problem(exc: BaseException) -> ConfigurationError | None:
    """The configuration error ``exc`` (or what caused it) stands for, if it is one."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, NoRegionError):
            return ConfigurationError(REGION_HINT)
        if isinstance(seen, ProfileNotFound):
            return ConfigurationError(f"{seen} (check AWS_PROFILE)")
        if isinstance(seen, NoCredentialsError | PartialCredentialsError):
            return ConfigurationError(CREDENTIALS_HINT)
        seen = seen.__cause__
    return None


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def aws_error(exc: ClientError | BotoCoreError, service: str) -> Exception:
    """The product error for an error of ``service`` (raise it ``from exc``)."""
    configuration = configuration_problem(exc)
    if configuration is not None:
        return configuration
    if isinstance(exc, BotoCoreError):
        return TransientError(f"{service} unreachable: {exc}")
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    code = error_code(exc)
    message = exc.response.get("Error", {}).get("Message", "") or str(exc)
    if status >= 500 or status == 429 or "Throttl" in code or code == "TooManyRequestsException":
        return TransientError(f"{service} {code}: {message}")
    if code in ("ExpiredToken", "ExpiredTokenException", "UnrecognizedClientException"):
        return ConfigurationError(f"{service} {code}: {message} ({CREDENTIALS_HINT})")
    return ServiceError(f"{service} {code}: {message}")
