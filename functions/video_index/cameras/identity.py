"""What a camera holds (docs/cameras.md): a directory with its certificate, private key,
optional CA bundle and ``camera.json`` naming its thing, the credentials endpoint, the
role alias, the bucket and the region.

Written by ``video-index camera add`` and read by the uploader (``--camera DIR``). The
private key file is created new (``O_CREAT|O_EXCL|O_NOFOLLOW``), readable by its owner
only (0600): an existing file or a symlink in its place is refused, never written through.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from video_index.core.errors import BadInput

CAMERA_FILE: Final = "camera.json"
CERTIFICATE_FILE: Final = "certificate.pem.crt"
PRIVATE_KEY_FILE: Final = "private.pem.key"
CA_FILE: Final = "ca.pem"


@dataclass(frozen=True)
class CameraIdentity:
    """A provisioned camera as the uploader sees it."""

    thing_name: str
    #: ``host[:port]`` of the credentials provider (``iot:CredentialProvider`` endpoint).
    endpoint: str
    role_alias: str
    bucket: str
    region: str
    directory: Path
    #: The CA that signs the endpoint's TLS certificate; None: the system trust store
    #: (AWS's endpoint is signed by Amazon Root CA 1).
    has_ca: bool = False

    @property
    def certificate_file(self) -> Path:
        return self.directory / CERTIFICATE_FILE

    @property
    def private_key_file(self) -> Path:
        return self.directory / PRIVATE_KEY_FILE

    @property
    def ca_file(self) -> Path | None:
        return self.directory / CA_FILE if self.has_ca else None

    @classmethod
    def load(cls, directory: Path) -> CameraIdentity:
        """The identity in ``directory``; :class:`BadInput` naming ``camera`` when it is not one."""
        try:
            document: Any = json.loads((directory / CAMERA_FILE).read_text(encoding="utf-8"))
            fields = {k: str(document[k]) for k in ("thing_name", "endpoint", "role_alias")}
            identity = cls(
                **fields,
                bucket=str(document["bucket"]),
                region=str(document["region"]),
                directory=directory,
                has_ca=bool(document.get("ca", False)),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BadInput(
                "camera", f"{str(directory)!r} is not a camera directory ({exc})"
            ) from None
        for path in (identity.certificate_file, identity.private_key_file):
            if not path.is_file():
                raise BadInput("camera", f"{str(path)!r} is missing")
        return identity


def check_free(directory: Path) -> None:
    """:class:`BadInput` naming ``out`` when ``directory`` holds a camera or a private key
    file (a symlink named so included): checked before a certificate is made, so a key
    AWS shows once is never made for a place it cannot be written."""
    if (directory / CAMERA_FILE).exists():
        raise BadInput("out", f"{str(directory)!r} already holds a camera")
    key_path = directory / PRIVATE_KEY_FILE
    if key_path.is_symlink() or key_path.exists():
        raise BadInput("out", f"{str(key_path)!r} exists: write the camera elsewhere")


def write_identity(
    directory: Path,
    *,
    thing_name: str,
    endpoint: str,
    role_alias: str,
    bucket: str,
    region: str,
    certificate_pem: str,
    private_key_pem: str,
    ca_pem: str | None,
) -> CameraIdentity:
    """Write a camera directory (created; an existing camera.json or key is never replaced)."""
    directory.mkdir(parents=True, exist_ok=True)
    check_free(directory)
    key_path = directory / PRIVATE_KEY_FILE
    try:
        # A new file only, never through a link: another file's mode (0644 stays 0644)
        # or a symlink's target must not receive the key.
        descriptor = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise BadInput("out", f"{str(key_path)!r} exists: write the camera elsewhere") from None
    with os.fdopen(descriptor, "w", encoding="ascii") as key_file:
        os.fchmod(key_file.fileno(), 0o600)  # whatever the umask
        key_file.write(private_key_pem)
    (directory / CERTIFICATE_FILE).write_text(certificate_pem, encoding="ascii")
    if ca_pem is not None:
        (directory / CA_FILE).write_text(ca_pem, encoding="ascii")
    identity = CameraIdentity(
        thing_name=thing_name,
        endpoint=endpoint,
        role_alias=role_alias,
        bucket=bucket,
        region=region,
        directory=directory,
        has_ca=ca_pem is not None,
    )
    document = asdict(identity)
    document.pop("directory")
    document["ca"] = document.pop("has_ca")
    (directory / CAMERA_FILE).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return identity
