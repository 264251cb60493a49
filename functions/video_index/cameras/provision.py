"""Provisioning camera identities in AWS IoT (docs/cameras.md): add, list, revoke, rotate.

A camera is a thing named after its ``<device>`` (docs/keys.md), with one active
certificate to which the stack's camera IoT policy is attached, and which is attached
to the thing (so the credentials provider accepts ``x-amzn-iot-thingname: <device>``
with it and no other thing name). The certificate comes from an :data:`Issuer`:

* :func:`aws_issuer` — ``CreateKeysAndCertificate``: AWS IoT makes the key pair and
  signs the certificate; the private key is in the answer once and never again;
* the local stack's CA (:mod:`video_index.local.credentials`) — the key is made here
  and the certificate registered with ``RegisterCertificateWithoutCA``.

Revoking deactivates every certificate of the thing: the credentials provider refuses
its next credential request (credentials issued before stay valid until they expire,
at most the role alias's lifetime).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from botocore.exceptions import ClientError

from video_index.core.errors import BadInput, Conflict, NotFound
from video_index.core.keys import InvalidKeyError, validate_device

#: The attribute a camera thing carries so ``camera list`` finds the stack's cameras only.
CAMERA_ATTRIBUTE: Final = "video-index-camera"


@dataclass(frozen=True)
class IssuedCertificate:
    arn: str
    certificate_id: str
    certificate_pem: str
    private_key_pem: str


#: Makes a certificate (and its private key) known to AWS IoT as ACTIVE.
Issuer = Callable[[Any], IssuedCertificate]


def aws_issuer(iot: Any) -> IssuedCertificate:
    answer = iot.create_keys_and_certificate(setAsActive=True)
    return IssuedCertificate(
        arn=answer["certificateArn"],
        certificate_id=answer["certificateId"],
        certificate_pem=answer["certificatePem"],
        private_key_pem=answer["keyPair"]["PrivateKey"],
    )


@dataclass(frozen=True)
class CameraRecord:
    """A camera as ``camera list`` shows it."""

    name: str
    certificates: tuple[tuple[str, str], ...]  # (certificate id, status)

    @property
    def active(self) -> bool:
        return any(status == "ACTIVE" for _, status in self.certificates)


def camera_name(name: str) -> str:
    """``name`` when it is a valid device (the thing name is the key's ``<device>``)."""
    try:
        return validate_device(name)
    except InvalidKeyError as exc:
        raise BadInput("NAME", exc.reason) from None


def credentials_endpoint(iot: Any) -> str:
    """The account's ``iot:CredentialProvider`` endpoint (host name)."""
    return str(iot.describe_endpoint(endpointType="iot:CredentialProvider")["endpointAddress"])


def add_camera(iot: Any, name: str, *, iot_policy: str, issuer: Issuer) -> IssuedCertificate:
    """Create thing ``name``, issue its certificate, attach the policy and the thing.

    :class:`Conflict` when the thing exists (``rotate`` gives an existing camera a new
    certificate). A failure after the thing was created removes what was made.
    """
    name = camera_name(name)
    try:
        iot.describe_thing(thingName=name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceNotFoundException":
            raise
    else:
        raise Conflict(f"camera {name!r} exists: use `video-index camera rotate {name}`")
    iot.create_thing(thingName=name, attributePayload={"attributes": {CAMERA_ATTRIBUTE: "true"}})
    try:
        return _issue(iot, name, iot_policy=iot_policy, issuer=issuer)
    except BaseException:
        iot.delete_thing(thingName=name)
        raise


def _issue(iot: Any, name: str, *, iot_policy: str, issuer: Issuer) -> IssuedCertificate:
    certificate = issuer(iot)
    iot.attach_policy(policyName=iot_policy, target=certificate.arn)
    iot.attach_thing_principal(thingName=name, principal=certificate.arn)
    return certificate


def _certificate_arns(iot: Any, name: str) -> list[str]:
    """Every certificate attached to thing ``name``, every page of them: one left out would
    stay ACTIVE through a revoke or a rotation."""
    try:
        pages = iot.get_paginator("list_thing_principals").paginate(thingName=name)
        return [arn for page in pages for arn in page.get("principals", []) if ":cert/" in arn]
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ResourceNotFoundException":
            raise NotFound("NAME", f"no camera {name!r}") from None
        raise


def _status(iot: Any, arn: str) -> tuple[str, str]:
    certificate_id = arn.rsplit("/", 1)[1]
    description = iot.describe_certificate(certificateId=certificate_id)["certificateDescription"]
    return certificate_id, str(description["status"])


def list_cameras(iot: Any) -> list[CameraRecord]:
    """Every camera thing, with its certificates' ids and statuses, by name."""
    records = []
    paginator = iot.get_paginator("list_things")
    for page in paginator.paginate(attributeName=CAMERA_ATTRIBUTE, attributeValue="true"):
        for thing in page.get("things", []):
            name = thing["thingName"]
            certificates = tuple(_status(iot, arn) for arn in _certificate_arns(iot, name))
            records.append(CameraRecord(name, certificates))
    return sorted(records, key=lambda record: record.name)


def revoke_camera(iot: Any, name: str) -> list[str]:
    """Deactivate every certificate of camera ``name``; the ids deactivated."""
    name = camera_name(name)
    revoked = []
    for arn in _certificate_arns(iot, name):
        certificate_id, status = _status(iot, arn)
        if status == "ACTIVE":
            iot.update_certificate(certificateId=certificate_id, newStatus="INACTIVE")
            revoked.append(certificate_id)
    return revoked


def rotate_camera(iot: Any, name: str, *, iot_policy: str, issuer: Issuer) -> IssuedCertificate:
    """A new certificate for camera ``name``; the old ones are deactivated after it is
    attached (install the new one, then ``revoke`` is not needed: it is done here)."""
    name = camera_name(name)
    old = _certificate_arns(iot, name)
    certificate = _issue(iot, name, iot_policy=iot_policy, issuer=issuer)
    for arn in old:
        certificate_id, status = _status(iot, arn)
        if status == "ACTIVE":
            iot.update_certificate(certificateId=certificate_id, newStatus="INACTIVE")
    return certificate
