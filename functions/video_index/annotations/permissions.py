"""Whose annotations a caller may change (docs/access.md, docs/annotations.md).

The routes' rules let a ``reviewer`` create, replace and delete; on top of that:

* an annotation's creator changes or deletes it freely;
* an ``admin`` changes or deletes anyone's;
* another ``reviewer`` may only set its review status: a replacement that keeps the
  target, the description and the tags of the current version.

``created_by`` never changes across versions, so checking it against the version read
before the change is safe: the change itself is conditioned on ``If-Match``.
"""

from __future__ import annotations

from video_index.annotations.model import Annotation, Draft
from video_index.core.access import Caller, Forbidden, Role


def _same_target(current: Annotation, draft: Draft) -> bool:
    if draft.segment is not None:
        return current.target.ref == draft.segment
    return current.target.segment_key is None and (
        (current.target.start_ms, current.target.end_ms) == (draft.from_ms, draft.to_ms)
    )


def only_status(current: Annotation, draft: Draft) -> bool:
    """Whether ``draft`` differs from ``current`` in its status at most."""
    return (
        draft.description == current.description
        and tuple(draft.tags) == tuple(current.tags)
        and _same_target(current, draft)
    )


def check_change(caller: Caller, current: Annotation, draft: Draft | None) -> None:
    """Allow (return) or refuse (403) a replacement (``draft``) or a deletion (None)."""
    if current.created_by == caller.principal or caller.has(Role.ADMIN):
        return
    if draft is not None and caller.has(Role.REVIEWER) and only_status(current, draft):
        return
    what = "delete" if draft is None else "change more than the review status of"
    raise Forbidden(f"only its creator or an admin may {what} another's annotation")
