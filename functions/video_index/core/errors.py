"""One error model for the whole product.

Every error the product raises on purpose is a :class:`VideoIndexError`, so the
three places that turn errors into answers — the HTTP API (a status code), the
command line (an exit code) and ingest (a batch item failure) — map them the
same way, in one place each:

| error | HTTP | CLI exit | ingest |
|---|---|---|---|
| :class:`BadInput` (names the parameter) | 400 | 2 | parked / ignored with the reason |
| :class:`NotFound` | 404 | 1 | — |
| :class:`Conflict` | 409 | 1 | — |
| :class:`Gone` (a share link expired or revoked) | 410 | 1 | — |
| :class:`PreconditionFailed` (a stale ``If-Match``) | 412 | 1 | — |
| :class:`PreconditionRequired` (no ``If-Match``) | 428 | 2 | — |
| :class:`ConfigurationError` | 503 | 2 | the invocation fails |
| :class:`ServiceError` (AWS refused: permissions, missing resource) | 503 | 3 | retried, then DLQ |
| :class:`TransientError` (throttling, 5xx, timeouts) | 503 | 3 | retried, then DLQ |

The AWS adapters (:mod:`video_index.aws`) are the only code that sees botocore
errors; they raise the subclasses of :class:`ServiceError` below.
"""

from __future__ import annotations


class VideoIndexError(Exception):
    """Base of every error the product raises on purpose."""


class BadInput(VideoIndexError, ValueError):
    """Input that breaks a rule; ``parameter`` names what is wrong."""

    def __init__(self, parameter: str | None, message: str) -> None:
        super().__init__(f"{parameter}: {message}" if parameter else message)
        self.parameter = parameter
        self.message = message


class NotFound(VideoIndexError, LookupError):
    """The thing asked for does not exist (any more)."""

    def __init__(self, parameter: str | None, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.message = message


class Conflict(VideoIndexError):
    """The request disagrees with the current state (a stale version, a running job)."""


class Gone(VideoIndexError):
    """The thing asked for existed but has ended (a share link expired or revoked): 410."""

    def __init__(self, parameter: str | None, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.message = message


class PreconditionFailed(Conflict):
    """The version the caller edited is not the current one (``If-Match`` is stale)."""


class PreconditionRequired(VideoIndexError):
    """A change that must name the version it was made from did not (no ``If-Match``)."""


class ConfigurationError(VideoIndexError):
    """A required setting is missing or malformed."""


class ServiceError(VideoIndexError):
    """An AWS service refused a request for a reason retrying will not fix."""


class TransientError(ServiceError):
    """Throttling, a server error or a network failure: retry later."""
