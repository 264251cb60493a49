"""Clients -> read model: the HTTP API, its Lambda, authorization, throttling, access logs.

Wiring of docs/api.md: one API Gateway HTTP API with exactly the paths the resolver
documents, each with every method but ``OPTIONS`` (no ``$default`` catch-all, so an
unknown path is answered by API Gateway and never invokes the function), every route behind the
authorizer chosen at deploy time (``api_auth``: IAM/SigV4 by default, or JWT). The
Lambda gets what its spec declares (``core/functions.py``, granted by the owners of
each resource, ``infra/wiring.py``) and the export objects written out here, never
the ``grant_*`` helpers.
"""

from __future__ import annotations

import json
from typing import Final

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.access import RolePolicies
from infra.cursor_key import CursorKeySecret
from infra.limits import API_AUTH_JWT
from infra.nag import derived_objects_acknowledgment
from infra.python_function import PythonFunction, derived_media_statement, python_function
from infra.settings import StackSettings
from infra.viewer import viewer_environment
from infra.wiring import Wiring
from video_index.core.contract import (
    CORS_ALLOWED_HEADERS,
    CORS_ALLOWED_METHODS,
    CORS_EXPOSED_HEADERS,
    CORS_MAX_AGE_SECONDS,
    EXPORTS_PREFIX,
    VIEWER_PATHS,
)
from video_index.core.functions import API
from video_index.viewer.assets import VENDOR_ASSET_PATH, npm_hls_js


def route_paths() -> list[str]:
    """Every path the API function serves (docs/api.md), read from the resolvers: all the
    documented paths but the viewer's (routed on their own) and the media function's
    (:mod:`infra.media`).

    Each is routed with every method but ``OPTIONS`` to the one function, which
    answers the methods a path has and 405 for the others (as ``video-index local``
    does); ``OPTIONS`` stays with API Gateway, which answers CORS preflights itself
    (an authorized ``ANY`` route would send them to the authorizer and fail them).
    """
    from video_index.app.routes import api_paths

    return sorted(path for path in api_paths() if path not in VIEWER_PATHS)


#: Every method a route forwards to the function (``OPTIONS``: see :func:`route_paths`).
ROUTED_METHODS: Final = (
    apigwv2.HttpMethod.GET,
    apigwv2.HttpMethod.HEAD,
    apigwv2.HttpMethod.POST,
    apigwv2.HttpMethod.PUT,
    apigwv2.HttpMethod.PATCH,
    apigwv2.HttpMethod.DELETE,
)

#: The viewer's routes answer GET only: nothing else reaches the function unauthorized.
VIEWER_METHODS: Final = (apigwv2.HttpMethod.GET,)
#: Why each public data route has no authorizer (cdk-nag AwsSolutions-APIG4), by the start
#: of its path: a route declared ``public()`` without a reason here fails synthesis.
PUBLIC_ROUTE_ACKNOWLEDGMENTS: Final = {
    "/shares/": Acknowledgment(
        id="AwsSolutions-APIG4",
        reason=(
            "A share link's GET routes (docs/shares.md): their holder has no account; each "
            "request is authorized by the share's secret (its SHA-256 compared in constant "
            "time), refused once the share is revoked or expired, and serves only its window."
        ),
    ),
    "/exports/public-key": Acknowledgment(
        id="AwsSolutions-APIG4",
        reason=(
            "The public half of the export signing key: whoever is handed an export verifies "
            "it without an account, and a public key is no secret."
        ),
    ),
}


def public_acknowledgment(path: str) -> Acknowledgment:
    """Why ``path``'s public GET has no authorizer; a public route without a reason is a
    mistake, refused here (synthesis fails naming it)."""
    for start, acknowledgment in PUBLIC_ROUTE_ACKNOWLEDGMENTS.items():
        if path.startswith(start):
            return acknowledgment
    raise ValueError(f"GET {path} is declared public() but infra/api.py gives no reason")


def add_routes(
    http_api: apigwv2.HttpApi,
    paths: list[str],
    integration: apigwv2.HttpRouteIntegration,
    authorizer: apigwv2.IHttpRouteAuthorizer,
) -> None:
    """Every method of each path to ``integration`` behind ``authorizer``, but the ``GET``
    a route declares ``public()`` (a share link's, the export key's): that one without an
    authorizer, acknowledged with its reason (:func:`public_acknowledgment`)."""
    from infra.access import public_get_paths

    public = public_get_paths()
    for path in paths:
        methods = [
            m for m in ROUTED_METHODS if not (m is apigwv2.HttpMethod.GET and path in public)
        ]
        http_api.add_routes(
            path=path, methods=methods, integration=integration, authorizer=authorizer
        )
        if path in public:
            for route in http_api.add_routes(
                path=path,
                methods=[apigwv2.HttpMethod.GET],
                integration=integration,
                authorizer=apigwv2.HttpNoneAuthorizer(),
            ):
                Validations.of(route).acknowledge(public_acknowledgment(path))


#: Why the viewer's routes have no authorizer (cdk-nag AwsSolutions-APIG4).
VIEWER_ROUTE_ACKNOWLEDGMENT: Final = Acknowledgment(
    id="AwsSolutions-APIG4",
    reason=(
        "The viewer's page and its static files: a browser cannot attach a token to a "
        "navigation, the files hold no data and no secret, and every data route stays "
        "behind the JWT authorizer."
    ),
)

#: Access log line (JSON) of the default stage: who asked what, and how it ended. The
#: caller is the JWT's ``sub`` or the IAM caller's ARN (the principal the API records in
#: deletion requests, exports and annotations); ``path`` names the device
#: (docs/access.md has the Logs Insights query "who played camera X between T1 and T2").
ACCESS_LOG_FORMAT: Final = json.dumps(
    {
        "requestId": "$context.requestId",
        "ip": "$context.identity.sourceIp",
        "requestTime": "$context.requestTime",
        "requestTimeEpoch": "$context.requestTimeEpoch",
        "principal": "$context.authorizer.claims.sub",
        "iamPrincipal": "$context.identity.userArn",
        "httpMethod": "$context.httpMethod",
        "routeKey": "$context.routeKey",
        "path": "$context.path",
        "status": "$context.status",
        "protocol": "$context.protocol",
        "responseLength": "$context.responseLength",
        "integrationError": "$context.integrationErrorMessage",
        "authorizerError": "$context.authorizer.error",
    },
    separators=(",", ":"),
)


class QueryApi(Construct):
    """The API Lambda with least privilege, behind an authorized, throttled, logged HTTP API."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        bucket: s3.IBucket,
    ) -> None:
        super().__init__(scope, construct_id)
        self.viewer_enabled = settings.viewer_enabled
        # The key its page cursors are sealed with (docs/api.md#pages-and-cursors).
        self.cursor_key = CursorKeySecret(self, "CursorKey")
        lambda_function = self._function(settings, bucket)
        self.log_group = lambda_function.log_group
        self.role = lambda_function.role
        self.function = lambda_function.function
        self.access_log_group = logs.LogGroup(
            self,
            "AccessLogs",
            retention=settings.log_retention,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.authorizer = self._authorizer(settings)
        self.http_api = apigwv2.HttpApi(
            self,
            "HttpApi",
            api_name=settings.api_name,
            description="video-index: segments, calendars, ranges and playlists of camera video",
            cors_preflight=self._cors(settings),
        )
        # One invoke permission for the whole API, not one per route: ~70 route-scoped
        # statements would pass Lambda's 20 KB resource-policy limit and fail the deploy.
        integration = integrations.HttpLambdaIntegration(
            "Function", self.function, scope_permission_to_route=False
        )
        add_routes(self.http_api, route_paths(), integration, self.authorizer)
        if settings.viewer_enabled:
            self._viewer_routes(integration)
        #: With IAM authorization, one managed policy per role (docs/access.md).
        self.role_policies = (
            RolePolicies(self, "RolePolicies", http_api=self.http_api)
            if settings.api_auth != API_AUTH_JWT
            else None
        )
        self.stage = self._configure_default_stage(settings)

    @property
    def origin(self) -> str:
        """The API's own origin (``https://<id>.execute-api.<region>.<suffix>``)."""
        stack = Stack.of(self)
        return f"https://{self.http_api.api_id}.execute-api.{stack.region}.{stack.url_suffix}"

    @property
    def viewer_url(self) -> str | None:
        """The viewer's address (``<api>/viewer``) when the stack serves it."""
        return f"{self.url}viewer" if self.viewer_enabled else None

    @property
    def url(self) -> str:
        """Base URL of the API (its ``$default`` stage)."""
        url = self.http_api.url
        if url is None:  # pragma: no cover - the default stage is always created
            raise RuntimeError("the HTTP API has no default stage")
        return url

    # --- resources ---------------------------------------------------------------------------

    def _viewer_routes(self, integration: integrations.HttpLambdaIntegration) -> None:
        """``GET /viewer`` and ``GET /viewer/{file}`` without an authorizer: the page must load
        before anyone has a token (docs/viewer.md). Served by the same function, so the page
        has the API's origin."""
        for path in VIEWER_PATHS:
            for route in self.http_api.add_routes(
                path=path,
                methods=list(VIEWER_METHODS),
                integration=integration,
                authorizer=apigwv2.HttpNoneAuthorizer(),
            ):
                Validations.of(route).acknowledge(VIEWER_ROUTE_ACKNOWLEDGMENT)

    def _function(self, settings: StackSettings, bucket: s3.IBucket) -> PythonFunction:
        """The API Lambda: its spec's grants (``core/functions.py``: the read model, segments,
        annotations, deletion requests, holds, the export and deletion queues) and the
        export objects, written out here."""
        # What the viewer's page needs (docs/viewer.md): values of this function's spec.
        wiring = Wiring.of(self)
        for setting, value in viewer_environment(settings, bucket, Stack.of(self).region).items():
            wiring.provide_value(setting, self, value)
        return python_function(
            self,
            settings=settings,
            spec=API,
            description="video-index API: read model and segments over HTTP",
            role_description=(
                "video-index API: reads the read model and segments, repairs one key, "
                "reads and writes annotations"
            ),
            timeout=Duration.seconds(settings.api_timeout_seconds),
            memory_size=settings.api_memory_mb,
            statements=[
                # Export jobs written and read, clips presigned (renditions: infra/media.py).
                derived_media_statement(
                    bucket,
                    "ReadWriteDerivedMedia",
                    ["s3:GetObject", "s3:PutObject"],
                    [EXPORTS_PREFIX],
                ),
            ],
            acknowledgments=[
                derived_objects_acknowledgment(
                    bucket, EXPORTS_PREFIX, "Export jobs are written and read by their id."
                ),
            ],
            # The viewer's player library, from npm (docs/viewer.md): never committed.
            extra_files={VENDOR_ASSET_PATH: npm_hls_js()} if settings.viewer_enabled else None,
        )

    @staticmethod
    def _cors(settings: StackSettings) -> apigwv2.CorsPreflightOptions | None:
        """CORS for the configured viewer origins only (none: no browser page may call)."""
        if not settings.cors_origins:
            return None
        return apigwv2.CorsPreflightOptions(
            allow_origins=list(settings.cors_origins),
            allow_methods=[apigwv2.CorsHttpMethod(m) for m in CORS_ALLOWED_METHODS],
            allow_headers=list(CORS_ALLOWED_HEADERS),
            expose_headers=list(CORS_EXPOSED_HEADERS),
            max_age=Duration.seconds(CORS_MAX_AGE_SECONDS),
        )

    def _authorizer(self, settings: StackSettings) -> apigwv2.IHttpRouteAuthorizer:
        """IAM (SigV4) unless ``api_auth`` is ``jwt``; settings guarantee issuer and audience."""
        if settings.api_auth == API_AUTH_JWT:
            if settings.api_jwt_issuer is None:  # pragma: no cover - StackSettings rejects it
                raise ValueError("api_auth is 'jwt' but api_jwt_issuer is not set")
            return authorizers.HttpJwtAuthorizer(
                "JwtAuthorizer",
                settings.api_jwt_issuer,
                jwt_audience=list(settings.api_jwt_audiences),
            )
        return authorizers.HttpIamAuthorizer()

    def _configure_default_stage(self, settings: StackSettings) -> apigwv2.IHttpStage:
        """Throttling and access logging on the ``$default`` stage.

        The HttpApi L2 creates that stage without options, so both are set on its
        CloudFormation resource. HTTP APIs write access logs through API Gateway's
        service-linked role; no account-level CloudWatch role is involved.
        """
        stage = self.http_api.default_stage
        if stage is None:  # pragma: no cover - create_default_stage defaults to true
            raise RuntimeError("the HTTP API has no default stage")
        cfn_stage = stage.node.default_child
        if not isinstance(cfn_stage, apigwv2.CfnStage):  # pragma: no cover
            raise TypeError("the default stage has no AWS::ApiGatewayV2::Stage resource")
        cfn_stage.default_route_settings = apigwv2.CfnStage.RouteSettingsProperty(
            throttling_rate_limit=settings.api_throttle_rate,
            throttling_burst_limit=settings.api_throttle_burst,
        )
        cfn_stage.access_log_settings = apigwv2.CfnStage.AccessLogSettingsProperty(
            destination_arn=self.access_log_group.log_group_arn,
            format=ACCESS_LOG_FORMAT,
        )
        return stage
