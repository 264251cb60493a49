"""A stand-in for AWS IoT's credentials provider (docs/cameras.md#locally), so the uploader's
own code obtains and refreshes camera credentials against ``video-index local``.

``GET /role-aliases/<alias>/credentials`` over mutual TLS (client certificates signed by
:class:`~video_index.local.camera_ca.LocalCertificateAuthority`), with
``x-amzn-iot-thingname``, answers as AWS IoT does after the checks it makes, each against
moto's IoT: the certificate is registered and ACTIVE, attached to that thing, and has a
policy allowing ``iot:AssumeRoleWithCertificate`` on the alias. The credentials are moto
STS credentials of a per-camera role whose policy is the camera role's with the thing
name substituted (:func:`video_index.core.camera_policy.camera_policy_document`): moto
does not resolve ``${credentials-iot:ThingName}``, and it evaluates a role's own policies
(not session policies) when IAM enforcement is on.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from botocore.exceptions import ClientError

from video_index.core.camera_policy import (
    ASSUME_ROLE_WITH_CERTIFICATE,
    camera_policy_document,
)
from video_index.local.camera_ca import LocalCertificateAuthority

_PATH: Final = re.compile(r"^/role-aliases/(?P<alias>[\w=,@-]+)/credentials$")
_TRUST: Final = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "credentials.iot.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
)


class Refused(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class CredentialsService:
    """The checks and the STS call, apart from HTTP (tests call :meth:`credentials`)."""

    def __init__(
        self,
        *,
        iot: Any,
        iam: Any,
        sts: Any,
        bucket: str,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.iot, self.iam, self.sts, self.bucket = iot, iam, sts, bucket
        #: The expiry is this clock's (moto's credentials never expire; tests move it).
        self.clock = clock
        self.requests = 0
        self._lock = threading.Lock()

    def credentials(self, alias: str, thing: str | None, certificate_der: bytes) -> dict[str, Any]:
        with self._lock:
            self.requests += 1
        if not thing:
            raise Refused(HTTPStatus.BAD_REQUEST, "x-amzn-iot-thingname is required here")
        try:
            described = self.iot.describe_role_alias(roleAlias=alias)["roleAliasDescription"]
        except ClientError:
            raise Refused(HTTPStatus.NOT_FOUND, f"no role alias {alias!r}") from None
        arn = self._certificate_arn(certificate_der)
        self._check_thing(thing, arn)
        self._check_policy(arn, described["roleAliasArn"])
        role_arn = self._camera_role(thing)
        duration = int(described.get("credentialDurationSeconds", 3600))
        answer = self.sts.assume_role(
            RoleArn=role_arn,
            RoleSessionName=thing,
            DurationSeconds=duration,
            Policy=json.dumps(camera_policy_document(self.bucket, thing)),
        )["Credentials"]
        return {
            "credentials": {
                "accessKeyId": answer["AccessKeyId"],
                "secretAccessKey": answer["SecretAccessKey"],
                "sessionToken": answer["SessionToken"],
                "expiration": (self.clock() + timedelta(seconds=duration)).isoformat(),
            }
        }

    def _certificate_arn(self, certificate_der: bytes) -> str:
        """The ARN of the ACTIVE IoT certificate the client presented."""
        paginator = self.iot.get_paginator("list_certificates")
        for page in paginator.paginate():
            for listed in page.get("certificates", []):
                description = self.iot.describe_certificate(certificateId=listed["certificateId"])[
                    "certificateDescription"
                ]
                if ssl.PEM_cert_to_DER_cert(description["certificatePem"]) != certificate_der:
                    continue
                if description["status"] != "ACTIVE":
                    raise Refused(HTTPStatus.FORBIDDEN, "the certificate is not active")
                return str(description["certificateArn"])
        raise Refused(HTTPStatus.FORBIDDEN, "the certificate is not registered")

    def _check_thing(self, thing: str, certificate_arn: str) -> None:
        try:
            principals = self.iot.list_thing_principals(thingName=thing)["principals"]
        except ClientError:
            raise Refused(HTTPStatus.FORBIDDEN, f"no thing {thing!r}") from None
        if certificate_arn not in principals:
            raise Refused(HTTPStatus.FORBIDDEN, f"the certificate is not attached to {thing!r}")

    def _check_policy(self, certificate_arn: str, alias_arn: str) -> None:
        policies = self.iot.list_attached_policies(target=certificate_arn)["policies"]
        for policy in policies:
            document = json.loads(
                self.iot.get_policy(policyName=policy["policyName"])["policyDocument"]
            )
            for statement in document.get("Statement", []):
                actions = _as_list(statement.get("Action"))
                resources = _as_list(statement.get("Resource"))
                if (
                    statement.get("Effect") == "Allow"
                    and ASSUME_ROLE_WITH_CERTIFICATE in actions
                    and (alias_arn in resources or "*" in resources)
                ):
                    return
        raise Refused(HTTPStatus.FORBIDDEN, "no policy allows iot:AssumeRoleWithCertificate")

    def _camera_role(self, thing: str) -> str:
        """The per-camera role (created on first use) with the thing name substituted."""
        name = f"video-index-camera-{thing}"
        try:
            return str(self.iam.get_role(RoleName=name)["Role"]["Arn"])
        except ClientError:
            pass
        created = self.iam.create_role(RoleName=name, AssumeRolePolicyDocument=_TRUST)
        arn = str(created["Role"]["Arn"])
        self.iam.put_role_policy(
            RoleName=name,
            PolicyName="camera",
            PolicyDocument=json.dumps(camera_policy_document(self.bucket, thing)),
        )
        return arn


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


class LocalCredentialsEndpoint:
    """:class:`CredentialsService` over HTTPS with client certificates, on 127.0.0.1."""

    def __init__(self, service: CredentialsService, authority: LocalCertificateAuthority) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=str(authority.ca_file))
        context.load_cert_chain(str(authority.server_cert_file), str(authority.server_key_file))
        handler = _handler(service)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self.service = service
        self.endpoint = f"127.0.0.1:{self._server.server_address[1]}"
        self._thread: threading.Thread | None = None

    def start(self) -> LocalCredentialsEndpoint:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="credentials-endpoint",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._server.shutdown()
            thread.join(10)
        self._server.server_close()


def _handler(service: CredentialsService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            match = _PATH.fullmatch(self.path)
            if match is None:
                self._answer(HTTPStatus.NOT_FOUND, {"message": "not found"})
                return
            connection: Any = self.connection
            der = connection.getpeercert(binary_form=True)
            try:
                body = service.credentials(
                    match["alias"], self.headers.get("x-amzn-iot-thingname"), der
                )
            except Refused as refused:
                self._answer(refused.status, {"message": refused.message})
                return
            self._answer(HTTPStatus.OK, body)

        def _answer(self, status: HTTPStatus, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
