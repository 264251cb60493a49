"""Answers of the whole API as a Lambda hands them back, with their size: what the
largest-answer tests (tests/query/test_limits.py, test_page_limits.py) measure."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import quote

from video_index.app.routes import whole_app
from worlds import events as ev


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def call(path: str, **query: str) -> tuple[dict[str, Any], int]:
    """The API's answer to ``GET path?query`` and its size as a Lambda response (the proxy
    JSON, the body escaped inside it)."""
    raw = "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items())
    answer = whole_app().resolve(ev.http_request(path, raw), None)
    return answer, len(json.dumps(answer).encode())
