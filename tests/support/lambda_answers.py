"""Answers of the whole API as a Lambda hands them back, with their size: what the
largest-answer tests (tests/query/test_limits.py, test_page_limits.py) measure."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import quote

from video_index.api.cursors import CursorKey
from video_index.core.cursors import key_from_secret
from worlds import events as ev
from worlds.api_world import resolve

#: A cursor key as a deployment's (derived from a secret of 64 characters): the answers
#: measured hand out sealed cursors of their real size.
CURSOR_KEY = CursorKey(lambda: key_from_secret("k" * 64))


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def call(path: str, **query: str) -> tuple[dict[str, Any], int]:
    """The API's answer to ``GET path?query`` and its size as a Lambda response (the proxy
    JSON, the body escaped inside it)."""
    raw = "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items())
    answer = resolve(ev.http_request(path, raw))
    return answer, len(json.dumps(answer).encode())
