"""Page cursors of every list: opaque to clients, versioned base64url JSON, checked on the
way back in (a cursor that is not one this API issued is a 400 naming ``cursor``)."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from video_index.core.errors import BadInput

#: Longest cursor accepted (a cursor holds one file name per kind).
MAX_CURSOR_LENGTH = 4096


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
