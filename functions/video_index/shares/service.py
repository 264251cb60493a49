"""Share links, independent of HTTP: create, list, revoke, open by secret (docs/shares.md).

Every public route opens the share first (:meth:`Shares.open`): one strongly consistent
GetItem, so a revocation counts from the moment its transaction commits. An unknown id
and a wrong secret answer the same 404 (a holder of neither learns nothing, not even
whether the id exists); a right secret of a revoked or expired share answers 410. Every
URL a share hands out is presigned for :meth:`Shares.link_seconds`: the configured
presign seconds, but never past the share's end.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Final

from video_index.aws.clients import Clients
from video_index.aws.shares import ShareChanged, ShareStore
from video_index.core.access import Forbidden
from video_index.core.errors import BadInput, Conflict, Gone, NotFound
from video_index.core.settings import Settings
from video_index.shares.model import Share, digest, matches, new_secret, new_share_id

#: How long a share's items stay after it ended (the TTL): long enough to answer 410
#: rather than 404, and to show ended shares in the device's list for a while.
KEEP_ENDED_S: Final = 30 * 24 * 3600
#: The most shares one device's list answers (newest first).
MAX_LISTED: Final = 200
NO_SUCH_SHARE: Final = "no such share (or a wrong key)"


class Shares:
    def __init__(
        self,
        store: ShareStore,
        *,
        max_window_s: int,
        max_lifetime_s: int,
        presign_seconds: int,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = new_share_id,
        secret: Callable[[], str] = new_secret,
    ) -> None:
        self.store = store
        self.max_window_s = max_window_s
        self.max_lifetime_s = max_lifetime_s
        self.presign_seconds = presign_seconds
        self._clock = clock
        self._new_id = new_id
        self._secret = secret

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def check(self, from_ms: int, to_ms: int, expires_in_s: int) -> None:
        """The configured maxima: a window of at most ``max_window_s`` of video, a life of
        at most ``max_lifetime_s``."""
        if to_ms <= from_ms:
            raise BadInput("to", "must be after from")
        if to_ms - from_ms > self.max_window_s * 1000:
            raise BadInput("to", f"a share shows at most {self.max_window_s} s of video")
        if not 1 <= expires_in_s <= self.max_lifetime_s:
            raise BadInput("expires_in_s", f"must be between 1 and {self.max_lifetime_s} (seconds)")

    def create(
        self,
        device: str,
        from_ms: int,
        to_ms: int,
        expires_in_s: int,
        by: str,
        export_id: str | None = None,
    ) -> tuple[Share, str]:
        """A new share and its secret (the only time the secret exists outside the link)."""
        self.check(from_ms, to_ms, expires_in_s)
        now, secret = self.now_ms(), self._secret()
        share = Share(
            share_id=self._new_id(),
            device=device,
            from_ms=from_ms,
            to_ms=to_ms,
            created_by=by,
            created_at_ms=now,
            expires_at_ms=now + expires_in_s * 1000,
            download=export_id is not None,
            secret_sha256=digest(secret),
            export_id=export_id,
        )
        try:
            self.store.write(share.item(), new=True, expires_at_s=self._ttl(share))
        except ShareChanged:  # a fresh random id: never in practice
            raise Conflict("a share with this id was just created; retry") from None
        return share, secret

    def get(self, share_id: str) -> Share:
        item = self.store.share(share_id)
        if item is None:
            raise NotFound("share_id", f"no share {share_id}")
        return Share.of(item)

    def open(self, share_id: str, secret: str) -> Share:
        """The share ``secret`` opens: 404 for an unknown id or a wrong secret, 410 for a
        revoked or expired share (or one with less than a second to live: no URL could be
        presigned within it)."""
        item = self.store.share(share_id)
        if item is None or not matches(str(item.get("secret_sha256", "")), secret):
            raise NotFound("key", NO_SUCH_SHARE)
        share = Share.of(item)
        if share.revoked_at_ms is not None:
            raise Gone("key", "this share was revoked")
        if share.expires_at_ms - self.now_ms() < 1000:
            raise Gone("key", "this share has expired")
        return share

    def link_seconds(self, share: Share) -> int:
        """How long a URL handed out now may live: the presign seconds, never past the
        share's end (whole seconds, rounded down)."""
        remaining_s = (share.expires_at_ms - self.now_ms()) // 1000
        if remaining_s < 1:
            raise Gone("key", "this share has expired")
        return min(self.presign_seconds, remaining_s)

    def of_device(self, device: str) -> list[Share]:
        """The device's shares, newest first (ended ones too, until their items expire)."""
        return [Share.of(item) for item in self.store.of_device(device, MAX_LISTED)]

    def revoke(self, share_id: str, principal: str, is_admin: bool) -> Share:
        """Revoke at once (its creator or an admin, 403 for anyone else); revoking a
        revoked share answers it unchanged."""
        current = self.get(share_id)
        if current.revoked_at_ms is not None:
            return current
        if principal != current.created_by and not is_admin:
            raise Forbidden(
                f"share {share_id} was created by {current.created_by}: only its creator or "
                "an admin may revoke it",
                "share_id",
            )
        revoked = dataclasses.replace(current, revoked_by=principal, revoked_at_ms=self.now_ms())
        try:
            self.store.write(revoked.item(), new=False, expires_at_s=self._ttl(revoked))
        except ShareChanged:  # revoked meanwhile by someone else
            return self.get(share_id)
        return revoked

    @staticmethod
    def _ttl(share: Share) -> int:
        return share.expires_at_ms // 1000 + KEEP_ENDED_S


@dataclasses.dataclass(frozen=True)
class SharePresign:
    """A GET URL of a key of the segment bucket living ``seconds`` (a share's links: never
    past the share's end); with ``download_as``, one a browser saves under that name."""

    url_of: Callable[[str, int, str | None], str]

    def __call__(self, key: str, seconds: int, download_as: str | None = None) -> str:
        return self.url_of(key, seconds, download_as)


def build_shares(
    settings: Settings,
    clients: Clients,
    clock: Callable[[], float] = time.time,
    *,
    creates: bool = True,
) -> Shares | None:
    """The shares service over the shares table, if one is configured. ``creates=False``
    (the media function, which only opens shares): the maxima are not read (its spec does
    not declare them) and every window or life would be refused."""
    if not settings.shares_table:
        return None
    return Shares(
        ShareStore(clients.dynamodb, settings.shares_table),
        max_window_s=settings.share_max_window_seconds if creates else 0,
        max_lifetime_s=settings.share_max_lifetime_seconds if creates else 0,
        presign_seconds=settings.presign_seconds,
        clock=clock,
    )
