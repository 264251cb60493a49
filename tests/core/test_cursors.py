"""The seal of page cursors (video_index.core.cursors): opaque, authenticated, bound."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from video_index.core.cursors import key_from_secret, seal, unseal
from video_index.core.errors import BadInput, ConfigurationError

KEY = key_from_secret("k" * 64)
OTHER_KEY = key_from_secret("j" * 64)
positions = st.text(min_size=0, max_size=300)


def _raw(cursor: str) -> bytes:
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))


def _cursor(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@given(positions, st.text(max_size=40))
def test_a_sealed_position_opens_for_its_binding_only(position: str, binding: str) -> None:
    cursor = seal(KEY, position, binding)
    assert unseal(KEY, cursor, binding) == position
    with pytest.raises(BadInput) as refused:
        unseal(KEY, cursor, binding + "x")
    assert refused.value.parameter == "cursor"
    with pytest.raises(BadInput):
        unseal(OTHER_KEY, cursor, binding)


@given(positions, st.data())
def test_any_changed_byte_is_refused(position: str, data: st.DataObject) -> None:
    # Given a sealed cursor, When one byte of it (version, nonce, ciphertext or tag) changes
    raw = bytearray(_raw(seal(KEY, position, "devices")))
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] ^= data.draw(st.integers(1, 255))
    # Then it does not open
    with pytest.raises(BadInput):
        unseal(KEY, _cursor(bytes(raw)), "devices")


def test_a_cursor_hides_what_it_holds_and_never_repeats() -> None:
    # Given one position sealed twice
    first, second = seal(KEY, "cam-b-vault", "devices"), seal(KEY, "cam-b-vault", "devices")
    # Then the cursors differ, and neither holds the name in any readable form
    assert first != second
    for cursor in (first, second):
        assert b"vault" not in _raw(cursor) and "vault" not in cursor
    # And the ciphertext is the position XORed with HMAC-SHA256(k_enc, nonce || 0), as the
    # module documents (a reference computation, not the module's own code)
    raw = _raw(first)
    nonce, cipher = raw[1:17], raw[17:-16]
    enc = hmac.digest(KEY, b"video-index cursor encryption", "sha256")
    stream = hmac.digest(enc, nonce + (0).to_bytes(4, "big"), "sha256")
    assert bytes(c ^ s for c, s in zip(cipher, stream, strict=False)) == b"cam-b-vault"


def test_truncated_or_made_up_cursors_are_refused() -> None:
    cursor = seal(KEY, "x", "devices")
    for bad in (
        "",
        "!!!",
        cursor[:-1],
        cursor[:20],
        _cursor(b"\x02" + _raw(cursor)[1:]),
        "A" * 5000,
    ):
        with pytest.raises(BadInput):
            unseal(KEY, bad, "devices")


def test_the_key_comes_from_a_long_enough_secret() -> None:
    assert (
        key_from_secret("s" * 64)
        == hashlib.sha256(b"video-index cursor key\0" + b"s" * 64).digest()
    )
    with pytest.raises(ConfigurationError, match="fewer than 32"):
        key_from_secret("short")
