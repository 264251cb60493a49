"""What the API function needs to serve the viewer's page (docs/viewer.md): how the page signs
in, and the origins its content security policy lets it connect to.

The page is served by the API function (``infra/api.py`` routes it); this module only names
its environment. The page connects to its own origin (the API), to the segment bucket (the
presigned URLs the API answers with, and the media route's redirects) and, with OpenID
Connect sign-in, to the issuer (its discovery document) and the token endpoint — whose host
is not the issuer's with Cognito (``viewer_oidc_token_origin``). Nothing else: no ``https:``
wildcard, no ``http:`` origin.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from aws_cdk import aws_s3 as s3

from infra.settings import StackSettings
from video_index.core.contract import (
    ENV_VIEWER_CONNECT_ORIGINS,
    ENV_VIEWER_OIDC_CLIENT_ID,
    ENV_VIEWER_OIDC_ISSUER,
)


def bucket_origins(bucket_name: str, region: str, *, dotted: bool = False) -> list[str]:
    """The origins a presigned GET of the bucket may name: botocore's virtual-hosted global
    name (what it signs by default, in every region) and the regional one (what S3 redirects
    a young bucket to, and what a regional-endpoint setting makes). A name with dots cannot be
    a virtual host under https: botocore signs path-style URLs on S3's own hosts then."""
    if dotted:
        return ["https://s3.amazonaws.com", f"https://s3.{region}.amazonaws.com"]
    return [
        f"https://{bucket_name}.s3.amazonaws.com",
        f"https://{bucket_name}.s3.{region}.amazonaws.com",
    ]


def origin_of(url: str) -> str:
    """``https://host[:port]`` of a URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def connect_origins(settings: StackSettings, bucket_name: str, region: str) -> list[str]:
    """Every origin the page connects to besides the API's own, each once, in order."""
    dotted = settings.bucket_name is not None and "." in settings.bucket_name
    origins = bucket_origins(bucket_name, region, dotted=dotted)
    if settings.viewer_oidc_client_id is not None and settings.api_jwt_issuer is not None:
        origins.append(origin_of(settings.api_jwt_issuer))
        if settings.viewer_oidc_token_origin is not None:
            origins.append(settings.viewer_oidc_token_origin)
    return list(dict.fromkeys(origins))


def viewer_environment(settings: StackSettings, bucket: s3.IBucket, region: str) -> dict[str, str]:
    """The API function's variables for the viewer (none when the viewer is off)."""
    if not settings.viewer_enabled:
        return {}
    environment = {
        ENV_VIEWER_CONNECT_ORIGINS: " ".join(connect_origins(settings, bucket.bucket_name, region))
    }
    if settings.viewer_oidc_client_id is not None:
        environment[ENV_VIEWER_OIDC_ISSUER] = str(settings.api_jwt_issuer)
        environment[ENV_VIEWER_OIDC_CLIENT_ID] = settings.viewer_oidc_client_id
    return environment
