"""The annotation routes of the HTTP API (docs/annotations.md).

``POST /devices/{device}/annotations`` creates (201, ``Location``, ``ETag``);
``GET …/{annotation_id}`` reads (``ETag``); ``PUT`` replaces and ``DELETE``
deletes, both only with ``If-Match`` naming the current version (stale: 412,
missing: 428); ``GET /devices/{device}/annotations?from=&to=&status=&tag=``
lists a window in start order; ``GET …/{annotation_id}/history`` lists every
version. Who: the verified caller; whose annotations a caller may change:
:mod:`~video_index.annotations.permissions`.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from video_index.annotations.model import (
    MAX_IF_MATCH_LENGTH,
    TAG_PATTERN,
    AnnotationIn,
    Status,
    check_annotation_id,
    draft_of,
    expected_version,
)
from video_index.annotations.permissions import check_change
from video_index.annotations.service import Annotations
from video_index.annotations.shapes import (
    AnnotationOut,
    AnnotationPageOut,
    HistoryOut,
    annotation_out,
    as_json,
    version_out,
)
from video_index.api import params
from video_index.api.caller import current_caller
from video_index.api.context import optional_service
from video_index.api.cursors import opened, sealed
from video_index.api.errors import responses
from video_index.core.access import Role, allow
from video_index.core.audit import NOT_AUDITED
from video_index.core.contract import ENV_ANNOTATIONS_TABLE
from video_index.core.errors import ConfigurationError

#: Longest page of annotations (one may hold 4,000 characters of description).
MAX_PAGE: Final = 100

router = Router()  # type: ignore[no-untyped-call]

IfMatch = Annotated[
    str | None,
    Header(
        max_length=MAX_IF_MATCH_LENGTH,
        description='The ETag of the version you edited, e.g. "3" (required)',
    ),
]
StatusFilter = Annotated[Status | None, Query()]
TagFilter = Annotated[str | None, Query(pattern=TAG_PATTERN, max_length=32)]
PageLimit = Annotated[int, Query(ge=1, le=MAX_PAGE)]


def _one(description: str, *headers: str) -> OpenAPIResponse:
    return {
        "description": description,
        "content": {"application/json": {"model": AnnotationOut}},
        "headers": {name: {"schema": {"type": "string"}} for name in headers},
    }


def _annotations() -> Annotations:
    annotations = optional_service(Annotations)
    if annotations is None:
        raise ConfigurationError(f"{ENV_ANNOTATIONS_TABLE} is not set: annotations are off")
    return annotations


def _who() -> str:
    """The verified caller (never a header)."""
    return current_caller().principal


def _answer(status: int, body: AnnotationOut, **headers: str) -> Response[Any]:
    return Response(
        status_code=status,
        content_type="application/json",
        body=as_json(body),
        headers={"ETag": f'"{body.version}"', **headers},
    )


@router.post(
    "/devices/<device>/annotations",
    openapi_extensions=allow(Role.REVIEWER, audit=NOT_AUDITED),
    responses=responses(
        404, 409, 413, 415, success=201, ok=_one("The annotation, created", "Location", "ETag")
    ),
)
def create_annotation(device: str, body: Annotated[AnnotationIn, Body()]) -> Response[Any]:
    device = params.device(device)
    draft = draft_of(body)
    created = _annotations().create(device, draft, _who())
    location = f"/devices/{device}/annotations/{created.annotation_id}"
    return _answer(201, annotation_out(created), Location=location)


@router.get(
    "/devices/<device>/annotations",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(),
)
def list_annotations(
    device: str,
    from_: params.FromTime = None,
    to: params.Time = None,
    status: StatusFilter = None,
    tag: TagFilter = None,
    limit: PageLimit = 50,
    cursor: params.Text = None,
) -> AnnotationPageOut:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, params.MAX_WINDOW_MS)
    purpose = f"annotations/{device}"
    page = _annotations().window(
        device,
        start_ms,
        end_ms,
        status=status,
        tag=tag,
        limit=limit,
        cursor=opened(cursor, purpose),
    )
    return AnnotationPageOut(
        items=[annotation_out(a) for a in page.items],
        next_cursor=sealed(page.next_cursor, purpose),
    )


@router.get(
    "/devices/<device>/annotations/<annotation_id>",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(404, ok=_one("The current version", "ETag")),
)
def get_annotation(device: str, annotation_id: str) -> Response[Any]:
    device = params.device(device)
    annotation_id = check_annotation_id(annotation_id)
    return _answer(200, annotation_out(_annotations().get(device, annotation_id)))


@router.put(
    "/devices/<device>/annotations/<annotation_id>",
    openapi_extensions=allow(Role.REVIEWER, audit=NOT_AUDITED),
    responses=responses(404, 409, 412, 413, 415, 428, ok=_one("The annotation, replaced", "ETag")),
)
def replace_annotation(
    device: str,
    annotation_id: str,
    body: Annotated[AnnotationIn, Body()],
    if_match: IfMatch = None,
) -> Response[Any]:
    device = params.device(device)
    annotation_id = check_annotation_id(annotation_id)
    draft = draft_of(body)
    accepted = expected_version(if_match)
    annotations = _annotations()
    check_change(current_caller(), annotations.current(device, annotation_id), draft)
    replaced = annotations.replace(device, annotation_id, draft, accepted, _who())
    return _answer(200, annotation_out(replaced))


@router.delete(
    "/devices/<device>/annotations/<annotation_id>",
    openapi_extensions=allow(Role.REVIEWER, audit=NOT_AUDITED),
    responses=responses(
        404, 409, 412, 428, success=204, ok={"description": "Deleted (the history stays)"}
    ),
)
def delete_annotation(device: str, annotation_id: str, if_match: IfMatch = None) -> Response[Any]:
    device = params.device(device)
    annotation_id = check_annotation_id(annotation_id)
    accepted = expected_version(if_match)
    annotations = _annotations()
    check_change(current_caller(), annotations.current(device, annotation_id), None)
    annotations.delete(device, annotation_id, accepted, _who())
    return Response(status_code=204, body="")


@router.get(
    "/devices/<device>/annotations/<annotation_id>/history",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(404),
)
def annotation_history(
    device: str, annotation_id: str, limit: PageLimit = MAX_PAGE, cursor: params.Text = None
) -> HistoryOut:
    device = params.device(device)
    annotation_id = check_annotation_id(annotation_id)
    purpose = f"history/{device}/{annotation_id}"
    position = opened(cursor, purpose)
    page = _annotations().history(device, annotation_id, limit=limit, cursor=position)
    return HistoryOut(
        items=[version_out(a) for a in page.items], next_cursor=sealed(page.next_cursor, purpose)
    )
