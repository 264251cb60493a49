"""The KMS adapter: sign with the export signing key, read its public half; errors mapped once.

Export manifests are signed with an asymmetric KMS key (ECC_NIST_P256, ECDSA_SHA_256;
docs/playback.md#signed-exports): the export function may only ``kms:Sign`` with it, the
API function only ``kms:GetPublicKey``. The private half never leaves KMS. A client is made
on first use (most invocations of the API never read the key).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from video_index.core.errors import ConfigurationError, TransientError

#: The key's spec and the one signing algorithm it is used with.
KEY_SPEC: Final = "ECC_NIST_P256"
SIGNING_ALGORITHM: Final = "ECDSA_SHA_256"


class TransientKmsError(TransientError):
    """Throttling, a 5xx or a network error: retry later."""


@dataclass(frozen=True, slots=True)
class PublicKey:
    """The public half of the signing key: PEM (SubjectPublicKeyInfo), its id, the algorithm."""

    pem: str
    key_id: str
    algorithm: str


def pem_of(der: bytes) -> str:
    """DER SubjectPublicKeyInfo as PEM (RFC 7468), without a crypto library."""
    text = base64.b64encode(der).decode()
    lines = [text[i : i + 64] for i in range(0, len(text), 64)]
    return "-----BEGIN PUBLIC KEY-----\n" + "\n".join(lines) + "\n-----END PUBLIC KEY-----\n"


def _mapped(exc: ClientError | BotoCoreError, key_id: str, what: str) -> Exception:
    if isinstance(exc, BotoCoreError):
        return TransientKmsError(f"KMS unreachable ({what}): {exc}")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    code = str(exc.response.get("Error", {}).get("Code", ""))
    if status >= 500 or status == 429 or "Throttl" in code or "LimitExceeded" in code:
        return TransientKmsError(f"KMS {what}: {code}")
    return ConfigurationError(f"the KMS key {key_id} cannot be used ({what}): {code}")


class SigningKey:
    """One asymmetric KMS key, by its ARN, through ``client`` (or one made on first use).

    The key is named by the ARN of the setting, in a manifest and with the public key alike
    (KMS answers Sign and GetPublicKey with the key's ARN; moto answers GetPublicKey with the
    bare key id, so the answer's ``KeyId`` is not used)."""

    def __init__(self, key_id: str, client: Any | None = None) -> None:
        self.key_id = key_id
        self._client = client

    def _kms(self) -> Any:
        if self._client is None:
            import boto3

            from video_index.aws.clients import CLIENT_CONFIG

            self._client = boto3.client("kms", config=CLIENT_CONFIG)
        return self._client

    def sign(self, message: bytes) -> tuple[bytes, str]:
        """The DER ECDSA signature of ``message`` (RAW: KMS hashes it, at most 4,096 bytes)
        and the key's ARN."""
        try:
            answer = self._kms().sign(
                KeyId=self.key_id,
                Message=message,
                MessageType="RAW",
                SigningAlgorithm=SIGNING_ALGORITHM,
            )
        except (ClientError, BotoCoreError) as exc:
            raise _mapped(exc, self.key_id, "Sign") from exc
        return bytes(answer["Signature"]), self.key_id

    def public_key(self) -> PublicKey:
        try:
            answer = self._kms().get_public_key(KeyId=self.key_id)
        except (ClientError, BotoCoreError) as exc:
            raise _mapped(exc, self.key_id, "GetPublicKey") from exc
        return PublicKey(pem_of(bytes(answer["PublicKey"])), self.key_id, SIGNING_ALGORITHM)


def create_signing_key(client: Any, description: str) -> str:
    """A new key of :data:`KEY_SPEC` for signing (``video-index local``: the stack's own is
    made by CloudFormation, infra/signing.py); returns its ARN."""
    answer = client.create_key(KeySpec=KEY_SPEC, KeyUsage="SIGN_VERIFY", Description=description)
    return str(answer["KeyMetadata"]["Arn"])


def signing_key(key_id: str | None, client: Any | None, setting: str) -> Callable[[], SigningKey]:
    """The key ``key_id`` names, or — without it — a function that refuses naming ``setting``
    (fail closed: nothing is exported unsigned, no public key is made up)."""
    if not key_id:

        def missing() -> SigningKey:
            raise ConfigurationError(f"{setting} is not set: export manifests cannot be signed")

        return missing
    key = SigningKey(key_id, client)
    return lambda: key
