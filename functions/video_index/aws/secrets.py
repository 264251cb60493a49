"""The Secrets Manager adapter: one secret string, read when first needed, errors mapped once.

The API seals its page cursors with a key derived from a secret the stack generates
(``VIDEO_INDEX_CURSOR_KEY_SECRET``, docs/api.md#pages-and-cursors). It is read on the first
request that hands out or takes back a cursor, not at start: most requests never need it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from video_index.core.errors import ConfigurationError, TransientError


class TransientSecretError(TransientError):
    """Throttling, a 5xx or a network error: retry later."""


def secret_string(client: Any, secret_id: str) -> str:
    """The current string of ``secret_id``; a secret that is missing, unreadable or not a
    string is a :class:`ConfigurationError` naming it (the deployment's fault)."""
    try:
        answer = client.get_secret_value(SecretId=secret_id)
    except BotoCoreError as exc:
        raise TransientSecretError(f"Secrets Manager unreachable: {exc}") from exc
    except ClientError as exc:
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        code = exc.response.get("Error", {}).get("Code", "")
        if status >= 500 or status == 429 or "Throttl" in str(code):
            raise TransientSecretError(f"Secrets Manager {code}") from exc
        raise ConfigurationError(f"the secret {secret_id} cannot be read: {code}") from exc
    value = answer.get("SecretString")
    if not isinstance(value, str):
        raise ConfigurationError(f"the secret {secret_id} holds no string")
    return value


def reader(client: Any | None) -> Callable[[str], str]:
    """:func:`secret_string` with ``client``, or with a client of the default session made
    on first use (a deployed function: most of its requests never read a secret)."""
    made: list[Any] = [client] if client is not None else []

    def read(secret_id: str) -> str:
        if not made:
            import boto3

            from video_index.aws.clients import CLIENT_CONFIG

            made.append(boto3.client("secretsmanager", config=CLIENT_CONFIG))
        return secret_string(made[0], secret_id)

    return read
