"""A share link, independent of storage and HTTP (docs/shares.md).

A share names one device and one window ``[from, to)``, who made it, when it ends, and
whether its holder may download the window as an MP4. Its secret (256 random bits,
URL-safe base64) is handed to the creator once and stored only as its SHA-256; a
presented secret is compared with the stored digest in constant time
(:func:`matches`). The share's id is not secret: it names the share in lists and in
``DELETE /shares/{id}``, and alone opens nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any, Final, Literal

from video_index.core.timeunits import iso_ms

#: A share's id: 128 random bits, hex.
SHARE_ID_PATTERN: Final = r"^[0-9a-f]{32}$"
#: A share's secret: 32 random bytes as unpadded URL-safe base64 (43 characters).
SECRET_PATTERN: Final = r"^[A-Za-z0-9_-]{43}$"
SECRET_BYTES: Final = 32

State = Literal["active", "expired", "revoked"]


def new_share_id() -> str:
    return secrets.token_hex(16)


def new_secret() -> str:
    """256 random bits from the operating system's CSPRNG."""
    return secrets.token_urlsafe(SECRET_BYTES)


def digest(secret: str) -> str:
    """What is stored of a secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode("ascii", "replace")).hexdigest()


def matches(stored: str, secret: str) -> bool:
    """Whether ``secret`` is the one ``stored`` is the digest of, in constant time."""
    return hmac.compare_digest(stored.encode(), digest(secret).encode())


@dataclass(frozen=True, slots=True)
class Share:
    share_id: str
    device: str
    from_ms: int
    to_ms: int
    created_by: str
    created_at_ms: int
    expires_at_ms: int
    download: bool
    #: SHA-256 (hex) of the secret; the secret itself is never stored.
    secret_sha256: str
    export_id: str | None = None
    revoked_by: str | None = None
    revoked_at_ms: int | None = None

    def state(self, now_ms: int) -> State:
        if self.revoked_at_ms is not None:
            return "revoked"
        return "active" if now_ms < self.expires_at_ms else "expired"

    def covers_file(self, start_ms: int, duration_ms: int) -> bool:
        """Whether a file starting at ``start_ms`` lasting ``duration_ms`` plays in the
        window: the files a playlist of the window lists (they intersect it)."""
        if duration_ms <= 0:
            return self.from_ms <= start_ms < self.to_ms
        return start_ms < self.to_ms and start_ms + duration_ms > self.from_ms

    def covers(self, t_ms: int) -> bool:
        return self.from_ms <= t_ms < self.to_ms

    def item(self) -> dict[str, Any]:
        """The stored attributes (the digest, never the secret)."""
        item: dict[str, Any] = {
            "share_id": self.share_id,
            "device": self.device,
            "from_ms": self.from_ms,
            "to_ms": self.to_ms,
            "created_by": self.created_by,
            "created_at_ms": self.created_at_ms,
            "expires_at_ms": self.expires_at_ms,
            "download": self.download,
            "secret_sha256": self.secret_sha256,
        }
        optional = {
            "export_id": self.export_id,
            "revoked_by": self.revoked_by,
            "revoked_at_ms": self.revoked_at_ms,
        }
        item.update({k: v for k, v in optional.items() if v is not None})
        return item

    @classmethod
    def of(cls, item: dict[str, Any]) -> Share:
        revoked = item.get("revoked_at_ms")
        return cls(
            share_id=str(item["share_id"]),
            device=str(item["device"]),
            from_ms=int(item["from_ms"]),
            to_ms=int(item["to_ms"]),
            created_by=str(item["created_by"]),
            created_at_ms=int(item["created_at_ms"]),
            expires_at_ms=int(item["expires_at_ms"]),
            download=bool(item["download"]),
            secret_sha256=str(item["secret_sha256"]),
            export_id=item.get("export_id"),
            revoked_by=item.get("revoked_by"),
            revoked_at_ms=int(revoked) if revoked is not None else None,
        )

    def public(self, now_ms: int) -> dict[str, Any]:
        """What the API answers about a share (no secret, no digest)."""
        out: dict[str, Any] = {
            "share_id": self.share_id,
            "device": self.device,
            "from": iso_ms(self.from_ms),
            "to": iso_ms(self.to_ms),
            "download": self.download,
            "created_by": self.created_by,
            "created_at": iso_ms(self.created_at_ms),
            "expires_at": iso_ms(self.expires_at_ms),
            "state": self.state(now_ms),
        }
        if self.revoked_at_ms is not None:
            out["revoked_by"] = self.revoked_by
            out["revoked_at"] = iso_ms(self.revoked_at_ms)
        return out
