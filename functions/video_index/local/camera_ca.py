"""The local stack's certificate authority (docs/cameras.md#locally): it signs the stand-in
credentials endpoint's TLS certificate and the cameras' certificates, which
``video-index camera add --ready-file`` registers in moto's IoT without a CA (AWS IoT's
``RegisterCertificateWithoutCA``), where the deployed path has AWS IoT issue them.

Development only: the CA's key is a file in the local stack's temporary directory.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from video_index.cameras.provision import IssuedCertificate

CA_CERT: Final = "camera-ca.pem"
CA_KEY: Final = "camera-ca.key"
SERVER_CERT: Final = "credentials-endpoint.pem"
SERVER_KEY: Final = "credentials-endpoint.key"
_VALIDITY: Final = timedelta(days=30)


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write_private(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


@dataclass(frozen=True)
class LocalCertificateAuthority:
    """A CA whose certificate and key are files in ``directory``."""

    directory: Path

    @property
    def ca_file(self) -> Path:
        return self.directory / CA_CERT

    @property
    def server_cert_file(self) -> Path:
        return self.directory / SERVER_CERT

    @property
    def server_key_file(self) -> Path:
        return self.directory / SERVER_KEY

    @classmethod
    def create(cls, directory: Path) -> LocalCertificateAuthority:
        """A new CA in ``directory``, with a server certificate for 127.0.0.1 and localhost."""
        directory.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "video-index local camera CA")])
        now = datetime.now(UTC)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        authority = cls(directory)
        authority.ca_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        _write_private(directory / CA_KEY, _pem(key))
        server_pem, server_key = authority.sign(
            "127.0.0.1",
            san=[x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")],
        )
        authority.server_cert_file.write_text(server_pem, encoding="ascii")
        _write_private(authority.server_key_file, server_key.encode("ascii"))
        return authority

    def sign(self, common_name: str, *, san: list[Any] | None = None) -> tuple[str, str]:
        """A new key pair and its certificate signed by this CA: (certificate PEM, key PEM)."""
        ca_cert = x509.load_pem_x509_certificate(self.ca_file.read_bytes())
        ca_key = serialization.load_pem_private_key((self.directory / CA_KEY).read_bytes(), None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        certificate = builder.sign(ca_key, hashes.SHA256())
        return (
            certificate.public_bytes(serialization.Encoding.PEM).decode("ascii"),
            _pem(key).decode("ascii"),
        )

    def issuer(self, iot: Any) -> IssuedCertificate:
        """:data:`video_index.cameras.provision.Issuer`: sign here, register in IoT as ACTIVE."""
        certificate_pem, key_pem = self.sign("video-index camera")
        answer = iot.register_certificate_without_ca(
            certificatePem=certificate_pem, status="ACTIVE"
        )
        return IssuedCertificate(
            arn=answer["certificateArn"],
            certificate_id=answer["certificateId"],
            certificate_pem=certificate_pem,
            private_key_pem=key_pem,
        )
