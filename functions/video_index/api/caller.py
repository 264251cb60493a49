"""The verified caller of the request being answered, for the routes that need it.

The decision point (:mod:`video_index.api.access`) sets it before the route runs; a
route reads it to record who asked (never a header) and to hide what lies outside the
caller's scope. A context variable, so each thread of ``video-index local`` has its own.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

from video_index.core.access import Caller, Unauthenticated
from video_index.core.errors import NotFound

_CURRENT: Final[ContextVar[Caller | None]] = ContextVar("video_index_caller", default=None)


def set_caller(caller: Caller | None) -> None:
    _CURRENT.set(caller)


def current_caller() -> Caller:
    """The caller the authorizer verified (401 when there is none)."""
    caller = _CURRENT.get()
    if caller is None:
        raise Unauthenticated("sign in: this route needs a verified caller")
    return caller


def current_caller_or_none() -> Caller | None:
    """The verified caller, or None (an anonymous request: its audit record says so)."""
    return _CURRENT.get()


def hide_outside_scope(device: str, missing: NotFound) -> None:
    """Raise ``missing`` (the route's own "no such …" answer) when ``device`` lies outside
    the caller's scope, so an object out of scope is indistinguishable from none."""
    if not current_caller().sees(device):
        raise missing
