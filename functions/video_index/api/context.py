"""The services a request's route uses, each asked for by its type.

A capability's routes ask for their own service (``service(Queries)``,
``optional_service(Annotations)``), never for a bundle of every capability's, so a
router depends on what it uses and nothing else. The composition root
(:mod:`video_index.app`) tells this module where the services come from with
:func:`configure`: a function building them (lazily, on the first request, by the
Lambda handler or ``video-index local``) into a mapping from type to instance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from video_index.core.errors import ConfigurationError

T = TypeVar("T")

#: Builds (or returns the already built) services of this process, by type.
Provider = Callable[[], Mapping[type[Any], object]]

_provider: Provider | None = None


def configure(provider: Provider) -> None:
    """Tell the routes where their services come from (built lazily by the handler)."""
    global _provider
    _provider = provider


def optional_service(kind: type[T]) -> T | None:
    """The configured service of type ``kind``, or None where the deployment has none (a
    capability switched off, e.g. annotations without their table)."""
    if _provider is None:
        raise ConfigurationError("video_index.api.context.configure() was not called")
    found = _provider().get(kind)
    if found is not None and not isinstance(found, kind):
        raise ConfigurationError(f"the {kind.__name__} service is a {type(found).__name__}")
    return found


def service(kind: type[T]) -> T:
    """The configured service of type ``kind`` (503 through :class:`ConfigurationError`
    when there is none)."""
    found = optional_service(kind)
    if found is None:
        raise ConfigurationError(f"no {kind.__name__} service is configured")
    return found


@dataclass(frozen=True)
class Presign:
    """A short-lived GET URL of a key of the segment bucket (segment entries, the media
    route's redirect)."""

    url_of: Callable[..., str]

    def __call__(self, key: str, download_as: str | None = None) -> str:
        """The URL of ``key``; with ``download_as``, one a browser saves under that name."""
        if download_as is None:
            return self.url_of(key)
        return self.url_of(key, download_as=download_as)
