"""Every page cursor the API hands out, sealed; every one it takes back, opened (docs/api.md).

A route that pages hands its service's position (:mod:`video_index.core.cursors`) to
:func:`sealed` and a client's cursor to :func:`opened`, naming what the cursor is for: the
route and the resource it lists (``devices``, ``segments/<device>``...). The seal binds
that purpose and the caller's principal, so a cursor is good for the request that got it
and no other: one changed, cut, made up, or issued to another caller or for another list is
a 400 naming ``cursor``. What a position holds (for ``/devices``, the last name *read*,
possibly a device outside the caller's scope) is never readable by a client.

The key comes from the deployment (``VIDEO_INDEX_CURSOR_KEY_SECRET``, read on first use);
without one, a request that needs a cursor sealed or opened is refused (503 naming the
setting), never answered with a readable one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from video_index.api.caller import current_caller
from video_index.api.context import service
from video_index.core.cursors import seal, unseal


@dataclass
class CursorKey:
    """The key cursors are sealed with (32 bytes), loaded once, when first needed."""

    load: Callable[[], bytes]
    _key: list[bytes] = field(default_factory=list, init=False, repr=False)

    def __call__(self) -> bytes:
        if not self._key:
            self._key.append(self.load())
        return self._key[0]


def sealed(position: str | None, purpose: str) -> str | None:
    """The cursor a client gets for ``position`` (None: no next page)."""
    if position is None:
        return None
    return seal(service(CursorKey)(), position, _binding(purpose))


def opened(cursor: str | None, purpose: str) -> str | None:
    """The position a client's ``cursor`` stands for (None: the first page)."""
    if cursor is None:
        return None
    return unseal(service(CursorKey)(), cursor, _binding(purpose))


def _binding(purpose: str) -> str:
    return f"{purpose}\0{current_caller().principal}"
