"""Real-shaped AWS event fixtures (from the AWS documentation) and factories over them.

The JSON files beside this module are the documented shapes; the factories copy
one and change only what a test names, so every event a test builds keeps the
fields real deliveries carry (and lacks the ones they lack: ``size``/``eTag`` on
deletes, ``Records`` on ``s3:TestEvent``).
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

HERE = Path(__file__).parent
BUCKET = "video-index-segments"


@cache
def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HERE / name).read_text())
    return loaded


def sample(name: str) -> dict[str, Any]:
    """A fresh copy of one documented event, e.g. ``sample("s3_test_event.json")``."""
    return copy.deepcopy(_load(name))


def _iso(moment: datetime | None) -> str:
    moment = moment or datetime.now(UTC)
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def s3_record(
    key: str,
    *,
    event_name: str = "ObjectCreated:Put",
    size: int | None = None,
    etag: str | None = None,
    sequencer: str | None = None,
    version_id: str | None = None,
    bucket: str = BUCKET,
    event_time: datetime | None = None,
) -> dict[str, Any]:
    """One S3 notification record; the key is URL-encoded as S3 does (space -> ``+``).

    Removal and expiration events carry neither size nor eTag; all others do. Pass
    ``sequencer=None`` to imitate an emulator that omits it.
    """
    base = (
        "s3_object_created_put.json"
        if event_name.startswith("ObjectCreated")
        else ("s3_object_removed_delete_marker.json")
    )
    record = sample(base)["Records"][0]
    record["eventName"] = event_name
    record["eventTime"] = _iso(event_time)
    record["s3"]["bucket"]["name"] = bucket
    record["s3"]["bucket"]["arn"] = f"arn:aws:s3:::{bucket}"
    obj: dict[str, Any] = {"key": quote_plus(key, safe="/")}
    if not event_name.startswith(("ObjectRemoved", "LifecycleExpiration")):
        obj["size"] = 0 if size is None else size
        obj["eTag"] = etag or "d41d8cd98f00b204e9800998ecf8427e"
    if version_id is not None:
        obj["versionId"] = version_id
    if sequencer is not None:
        obj["sequencer"] = sequencer
    record["s3"]["object"] = obj
    shaped: dict[str, Any] = record
    return shaped


def s3_notification(*records: dict[str, Any]) -> dict[str, Any]:
    return {"Records": list(records)}


def test_event(bucket: str = BUCKET) -> dict[str, Any]:
    event = sample("s3_test_event.json")
    event["Bucket"] = bucket
    return event


def eventbridge_event(
    key: str,
    *,
    detail_type: str = "Object Created",
    size: int | None = None,
    etag: str | None = None,
    sequencer: str | None = None,
    version_id: str | None = None,
    deletion_type: str | None = None,
    bucket: str = BUCKET,
) -> dict[str, Any]:
    created = detail_type == "Object Created"
    event = sample(
        "eventbridge_object_created.json" if created else "eventbridge_object_deleted.json"
    )
    event["id"] = str(uuid.uuid4())
    event["resources"] = [f"arn:aws:s3:::{bucket}"]
    detail = event["detail"]
    detail["bucket"]["name"] = bucket
    obj: dict[str, Any] = {"key": quote_plus(key, safe="/")}
    if created:
        obj["size"] = 0 if size is None else size
        obj["etag"] = etag or "d41d8cd98f00b204e9800998ecf8427e"
    if version_id is not None:
        obj["version-id"] = version_id
    if sequencer is not None:
        obj["sequencer"] = sequencer
    detail["object"] = obj
    if not created:
        detail["deletion-type"] = deletion_type or "Delete Marker Created"
    return event


def sqs_record(body: dict[str, Any] | str, *, receive_count: int = 1) -> dict[str, Any]:
    record = sample("sqs_record.json")
    record["messageId"] = str(uuid.uuid4())
    record["receiptHandle"] = f"AQEB{uuid.uuid4().hex}"
    record["body"] = body if isinstance(body, str) else json.dumps(body)
    record["attributes"]["ApproximateReceiveCount"] = str(receive_count)
    return record


def sqs_event(*records: dict[str, Any]) -> dict[str, Any]:
    return {"Records": list(records)}


def http_request(path: str, query: str = "", method: str = "GET") -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) request event for ``path?query``.

    ``query`` is the raw query string, URL-encoded as a client sends it; API
    Gateway also hands the handler ``queryStringParameters`` decoded, with
    repeated names joined by commas.
    """
    from urllib.parse import parse_qsl

    event = sample("apigw_http_v2.json")
    event["rawPath"] = path
    event["rawQueryString"] = query
    event["routeKey"] = "$default"
    event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["requestContext"]["requestId"] = uuid.uuid4().hex[:16]
    params: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        params[name] = f"{params[name]},{value}" if name in params else value
    if params:
        event["queryStringParameters"] = params
    return event


#: The user pool, app client and account the caller factories below stand for.
COGNITO_ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_EXAMPLE"
COGNITO_CLIENT_ID = "4example0client0id0abcdefgh"
ACCOUNT = "111122223333"


def cognito_authorizer(
    sub: str | None,
    groups: tuple[str, ...] | list[str] = (),
    *,
    devices: str | None = None,
    token_use: str = "id",
) -> dict[str, Any]:
    """``requestContext.authorizer`` of a request API Gateway's JWT authorizer verified with
    a Cognito user pool token, claims as the authorizer hands them over (strings; the list
    claim ``cognito:groups`` flattened to ``[a b]``).

    The two tokens of one sign-in differ as Cognito issues them: the ID token (``token_use
    id``, ``aud`` the app client) carries the user's attributes (``custom:devices``), the
    access token (``token_use access``, ``client_id``, OAuth ``scope``) carries the groups
    and no attribute, so ``devices`` is refused for it."""
    claims: dict[str, Any] = {
        "iss": COGNITO_ISSUER,
        "token_use": token_use,
        "auth_time": "1796040000",
        "iat": "1796040000",
        "exp": "1796043600",
    }
    if sub is not None:
        claims["sub"] = sub
    if groups:
        claims["cognito:groups"] = "[" + " ".join(groups) + "]"
    scopes: list[str] | None = None
    if token_use == "id":
        claims.update({"aud": COGNITO_CLIENT_ID, "cognito:username": sub or "nobody"})
        if devices is not None:
            claims["custom:devices"] = devices
    else:
        if devices is not None:
            raise ValueError("a Cognito access token carries no custom attribute")
        scopes = ["aws.cognito.signin.user.admin"]
        claims.update({"client_id": COGNITO_CLIENT_ID, "scope": " ".join(scopes)})
    return {"jwt": {"claims": claims, "scopes": scopes}}


def cognito_sign_in(
    sub: str, groups: tuple[str, ...] | list[str], devices: str | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ID token's and the access token's authorizers of one Cognito sign-in."""
    return (
        cognito_authorizer(sub, groups, devices=devices),
        cognito_authorizer(sub, groups, token_use="access"),
    )


def iam_authorizer(arn: str) -> dict[str, Any]:
    """``requestContext.authorizer`` of a request API Gateway's IAM authorizer verified: an
    IAM user's ARN, or a role session's (``arn:aws:sts::<account>:assumed-role/<role>/<session
    name>``, whose ``userId`` is ``<role id>:<session name>``)."""
    authorizer: dict[str, Any] = sample("apigw_http_v2.json")["requestContext"]["authorizer"]
    iam = authorizer["iam"]
    iam["userArn"] = arn
    if ":assumed-role/" in arn:
        session = arn.rsplit("/", 1)[1]
        iam["userId"] = iam["callerId"] = f"AROAEXAMPLEROLEID0000:{session}"
        iam["accessKey"] = "ASIAIOSFODNN7EXAMPLE"
    return authorizer
