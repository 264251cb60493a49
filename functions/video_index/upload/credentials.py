"""A camera's AWS credentials from AWS IoT's credentials provider (docs/cameras.md).

One ``GET https://<endpoint>/role-aliases/<alias>/credentials`` over mutual TLS with the
camera's certificate and the header ``x-amzn-iot-thingname: <thing>`` answers
``{"credentials": {"accessKeyId", "secretAccessKey", "sessionToken", "expiration"}}``.
:func:`camera_session` wraps that exchange in botocore's ``RefreshableCredentials``: a
request signed within 15 minutes of the expiry fetches new credentials first (10 minutes
before, it must), so an upload in progress never signs with expired credentials. The
exchange is the only thing that changes for a camera: the uploader's retries and conflict
reports are the same with any credentials.

The same code runs against ``video-index local``'s stand-in endpoint (its own CA).
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from video_index.cameras.identity import CameraIdentity
from video_index.core.errors import ServiceError, TransientError

THING_NAME_HEADER: Final = "x-amzn-iot-thingname"
TIMEOUT_SECONDS: Final = 10.0
#: Answers to retry: throttling and the provider's own trouble.
_RETRIED: Final = frozenset({429, 500, 502, 503, 504})


class CredentialsRefused(ServiceError):
    """The credentials provider refused the certificate (revoked, not attached to the
    thing, no policy) or the role alias; no retry will change that."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"the credentials provider refused this camera (HTTP {status}): {detail}")
        self.status = status


def tls_context(identity: CameraIdentity) -> ssl.SSLContext:
    """Mutual TLS: the camera's certificate and key; the endpoint checked against its CA."""
    ca_file = identity.ca_file
    context = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(identity.certificate_file), str(identity.private_key_file))
    return context


def fetch_credentials(identity: CameraIdentity, context: ssl.SSLContext) -> dict[str, str]:
    """One exchange, as botocore's credential metadata (``access_key`` … ``expiry_time``)."""
    host, _, port = identity.endpoint.partition(":")
    connection = http.client.HTTPSConnection(
        host, int(port or 443), context=context, timeout=TIMEOUT_SECONDS
    )
    try:
        connection.request(
            "GET",
            f"/role-aliases/{identity.role_alias}/credentials",
            headers={THING_NAME_HEADER: identity.thing_name},
        )
        response = connection.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as exc:
        raise CredentialsUnavailable(f"credentials endpoint {identity.endpoint}: {exc}") from exc
    finally:
        connection.close()
    if response.status in _RETRIED:
        raise CredentialsUnavailable(f"credentials endpoint answered HTTP {response.status}")
    if response.status != 200:
        raise CredentialsRefused(response.status, body.decode("utf-8", "replace")[:300])
    credentials: Any = json.loads(body)["credentials"]
    return {
        "access_key": credentials["accessKeyId"],
        "secret_key": credentials["secretAccessKey"],
        "token": credentials["sessionToken"],
        "expiry_time": credentials["expiration"],
    }


class CredentialsUnavailable(TransientError):
    """The credentials provider could not be reached or failed (transient)."""


def refreshable_credentials(
    identity: CameraIdentity, *, time_fetcher: Callable[[], datetime] | None = None
) -> Any:
    """botocore credentials that exchange the certificate again before they expire."""
    from botocore.credentials import RefreshableCredentials
    from dateutil.parser import parse as parse_datetime

    context = tls_context(identity)

    def fetch() -> dict[str, str]:
        return fetch_credentials(identity, context)

    metadata = fetch()
    factory: Any = RefreshableCredentials
    return factory(
        access_key=metadata["access_key"],
        secret_key=metadata["secret_key"],
        token=metadata["token"],
        expiry_time=parse_datetime(metadata["expiry_time"]),
        refresh_using=fetch,
        method="iot-credentials-provider",
        time_fetcher=time_fetcher or _now,
    )


def _now() -> datetime:
    return datetime.now(UTC)


def camera_session(
    identity: CameraIdentity, *, time_fetcher: Callable[[], datetime] | None = None
) -> Any:
    """A boto3 session signing with the camera's refreshing credentials, in its region."""
    import boto3
    import botocore.session

    core = botocore.session.Session()
    credentials = refreshable_credentials(identity, time_fetcher=time_fetcher)
    core._credentials = credentials  # type: ignore[attr-defined]
    return boto3.session.Session(botocore_session=core, region_name=identity.region)
