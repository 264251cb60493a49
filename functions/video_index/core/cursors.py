"""Page cursors: the position a list hands back (versioned base64url JSON, checked on the
way back in), and the seal every cursor the API hands out is wrapped in.

A position names where a page stopped: the last file name per kind, the last annotation
key, the last device name *read* (which for ``/devices`` may be a device outside the
caller's scope). So the API never hands a position out as it is: :func:`seal` encrypts and
authenticates it under the deployment's cursor key, bound to what it was issued for (the
route, the resource, the caller), and :func:`unseal` refuses anything else with a 400
naming ``cursor``: a cursor reveals nothing, and none can be made or changed by a client.

The seal is the standard library's, so the API function carries no native package for it
(docs/api.md): encrypt-then-MAC with HMAC-SHA256 as the pseudo-random function of both
halves, a CTR-mode keystream ``HMAC(k_enc, nonce ‖ i)`` XORed over the position, and a tag
``HMAC(k_mac, version ‖ nonce ‖ binding ‖ ciphertext)`` cut to 128 bits. Both keys are
derived from the one cursor key; the nonce is 128 random bits per cursor, so the same
position sealed twice gives two cursors that cannot be told to hold the same thing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from typing import Any, Final

from video_index.core.errors import BadInput, ConfigurationError

#: Longest cursor accepted (a position holds one file name per kind).
MAX_CURSOR_LENGTH: Final = 4096
#: A sealed cursor: version, nonce, ciphertext, tag.
SEAL_VERSION: Final = b"\x01"
NONCE_BYTES: Final = 16
TAG_BYTES: Final = 16
KEY_BYTES: Final = 32
#: The shortest secret a cursor key is derived from (a generated secret has 64).
MIN_SECRET_LENGTH: Final = 32
_NOT_ISSUED: Final = "is not a cursor this API issued for this request"


def encode_cursor(state: dict[str, Any]) -> str:
    raw = json.dumps({"v": 1, **state}, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, shape: dict[str, type]) -> dict[str, Any]:
    """The state a cursor of :func:`encode_cursor` holds; :class:`BadInput` for anything else."""
    if len(cursor) > MAX_CURSOR_LENGTH:
        raise BadInput("cursor", "is too long")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        state = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise BadInput("cursor", "is not a cursor this API issued") from None
    if not isinstance(state, dict) or state.get("v") != 1 or set(state) != {"v", *shape}:
        raise BadInput("cursor", "is not a cursor this API issued")
    for name, expected in shape.items():
        if not isinstance(state[name], expected):
            raise BadInput("cursor", "is not a cursor this API issued")
    return state


def key_from_secret(secret: str) -> bytes:
    """The cursor key (32 bytes) derived from the deployment's secret string."""
    if len(secret) < MIN_SECRET_LENGTH:
        raise ConfigurationError(
            f"the cursor key secret holds {len(secret)} characters, fewer than "
            f"{MIN_SECRET_LENGTH}: cursors cannot be sealed with it"
        )
    return hashlib.sha256(b"video-index cursor key\0" + secret.encode()).digest()


def seal(key: bytes, position: str, binding: str) -> str:
    """``position`` encrypted and authenticated under ``key``, for ``binding`` only."""
    enc, mac = _halves(key)
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = position.encode()
    cipher = bytes(a ^ b for a, b in zip(plain, _keystream(enc, nonce, len(plain)), strict=True))
    tag = _tag(mac, nonce, binding, cipher)
    return base64.urlsafe_b64encode(SEAL_VERSION + nonce + cipher + tag).decode().rstrip("=")


def unseal(key: bytes, cursor: str, binding: str) -> str:
    """The position :func:`seal` sealed for ``binding``; :class:`BadInput` naming
    ``cursor`` for anything else (changed, cut, made up, or issued for another request)."""
    if len(cursor) > MAX_CURSOR_LENGTH:
        raise BadInput("cursor", "is too long")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise BadInput("cursor", _NOT_ISSUED) from None
    if len(raw) < 1 + NONCE_BYTES + TAG_BYTES or raw[:1] != SEAL_VERSION:
        raise BadInput("cursor", _NOT_ISSUED)
    nonce, tag = raw[1 : 1 + NONCE_BYTES], raw[-TAG_BYTES:]
    cipher = raw[1 + NONCE_BYTES : -TAG_BYTES]
    enc, mac = _halves(key)
    if not hmac.compare_digest(tag, _tag(mac, nonce, binding, cipher)):
        raise BadInput("cursor", _NOT_ISSUED)
    plain = bytes(a ^ b for a, b in zip(cipher, _keystream(enc, nonce, len(cipher)), strict=True))
    try:
        return plain.decode()
    except UnicodeDecodeError:  # pragma: no cover - authenticated: only seal() made it
        raise BadInput("cursor", _NOT_ISSUED) from None


def _halves(key: bytes) -> tuple[bytes, bytes]:
    if len(key) != KEY_BYTES:
        raise ConfigurationError(f"a cursor key has {KEY_BYTES} bytes, not {len(key)}")
    return (
        hmac.digest(key, b"video-index cursor encryption", "sha256"),
        hmac.digest(key, b"video-index cursor authentication", "sha256"),
    )


def _keystream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = (length + 31) // 32
    return b"".join(
        hmac.digest(key, nonce + i.to_bytes(4, "big"), "sha256") for i in range(blocks)
    )[:length]


def _tag(key: bytes, nonce: bytes, binding: str, cipher: bytes) -> bytes:
    bound = binding.encode()
    message = SEAL_VERSION + nonce + len(bound).to_bytes(4, "big") + bound + cipher
    return hmac.digest(key, message, "sha256")[:TAG_BYTES]
