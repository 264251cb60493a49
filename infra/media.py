"""The media function: the API's routes that need PyAV, on their own Lambda (docs/architecture.md).

``GET /devices/{device}/media/{file}`` redirects a player to a file or to its
fragmented rendition, made on first use with PyAV. Every other route is the API
function's, whose asset carries no PyAV, so a cold calendar request does not load a
media library it does not use. The routes are added to the API's HTTP API, behind its
authorizer, pointing at this function; its role has only what the handler does: read
segments (and presign GETs of them: its spec, ``core/functions.py``), and read and write
renditions.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.api import QueryApi, add_routes
from infra.nag import derived_objects_acknowledgment
from infra.python_function import derived_media_statement, python_function
from infra.settings import StackSettings
from video_index.core.contract import RENDITIONS_PREFIX
from video_index.core.functions import MEDIA

#: Memory of the media function: a rendition is a stream copy of one segment in memory.
MEDIA_MEMORY_MB: Final = 1024


def media_paths() -> list[str]:
    """The paths the media function serves, read from its resolver."""
    from video_index.app.routes import media_paths as paths

    return paths()


class MediaRoutes(Construct):
    """The media function, with least privilege, and its routes on the API's HTTP API."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        bucket: s3.IBucket,
        api: QueryApi,
    ) -> None:
        super().__init__(scope, construct_id)
        made = python_function(
            self,
            settings=settings,
            spec=MEDIA,
            description="video-index media: segment files and their renditions (PyAV)",
            role_description="video-index media: reads segments, reads and writes renditions",
            timeout=Duration.seconds(settings.api_timeout_seconds),
            memory_size=MEDIA_MEMORY_MB,
            # Its spec reads segments (presigned GETs are signed with this role; a rendition
            # reads its source segment); renditions are read and written here.
            statements=[
                derived_media_statement(
                    bucket,
                    "ReadWriteRenditions",
                    ["s3:GetObject", "s3:PutObject"],
                    [RENDITIONS_PREFIX],
                ),
            ],
            acknowledgments=[
                derived_objects_acknowledgment(
                    bucket, RENDITIONS_PREFIX, "A rendition is made on the first request for it."
                ),
            ],
        )
        self.function = made.function
        self.role = made.role
        self.log_group = made.log_group
        integration = integrations.HttpLambdaIntegration(
            "Function", self.function, scope_permission_to_route=False
        )
        add_routes(api.http_api, media_paths(), integration, api.authorizer)
