"""Clients -> read model: the HTTP API, its Lambda, authorization, throttling, access logs.

Wiring of docs/api.md: one API Gateway HTTP API with exactly the paths the resolver
documents, each with every method but ``OPTIONS`` (no ``$default`` catch-all, so an
unknown path is answered by API Gateway and never invokes the function), every route behind the
authorizer chosen at deploy time (``api_auth``: IAM/SigV4 by default, or JWT). The
Lambda gets exactly the permissions the handler uses, written out here instead of the
``grant_*`` helpers, so a review of this file is a review of its privileges.
"""

from __future__ import annotations

import json
from typing import Final

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.access import RolePolicies
from infra.cursor_key import CursorKeySecret
from infra.limits import API_AUTH_JWT
from infra.nag import derived_objects_acknowledgment, segment_objects_acknowledgment
from infra.python_function import (
    PythonFunction,
    derived_media_statement,
    python_function,
    segment_read_statements,
)
from infra.settings import StackSettings
from infra.viewer import viewer_environment
from video_index.core.access import ENV_ACCESS_POLICY
from video_index.core.contract import (
    API_HANDLER,
    API_SERVICE_NAME,
    CORS_ALLOWED_HEADERS,
    CORS_ALLOWED_METHODS,
    CORS_EXPOSED_HEADERS,
    CORS_MAX_AGE_SECONDS,
    ENV_ANNOTATIONS_TABLE,
    ENV_BUCKET,
    ENV_CLOCK_TOLERANCE_SECONDS,
    ENV_CURSOR_KEY_SECRET,
    ENV_EXPORT_QUEUE_URL,
    ENV_FRESH_WINDOW_SECONDS,
    ENV_GAP_TOLERANCE_MS,
    ENV_MAX_EXPORT_BYTES,
    ENV_PRESIGN_SECONDS,
    ENV_RETENTION_DAYS,
    ENV_SILENT_AFTER_SECONDS,
    ENV_TABLE,
    ENV_TOMBSTONE_DAYS,
    EXPORTS_PREFIX,
    VIEWER_PATHS,
)
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
#: Why the viewer's routes have no authorizer (cdk-nag AwsSolutions-APIG4).
VIEWER_ROUTE_ACKNOWLEDGMENT: Final = Acknowledgment(
    id="AwsSolutions-APIG4",
    reason=(
        "The viewer's page and its static files: a browser cannot attach a token to a "
        "navigation, the files hold no data and no secret, and every data route stays "
        "behind the JWT authorizer."
    ),
)

#: Read-model reads of every route: one item by key, a key-range query, or (whether the
#: segments of a page of annotations still exist) up to 100 items by key.
READ_MODEL_READ_ACTIONS: Final = ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"]
#: Annotations (docs/annotations.md): Query reads versions and windows; a change is one
#: transaction of a conditional put of the new version (PutItem), puts and deletes of
#: the window copies (PutItem, DeleteItem) and a condition check. Nothing else: no
#: UpdateItem, no Scan, no batch writes. Versions are never deleted by any code path.
ANNOTATIONS_ACTIONS: Final = [
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
]
#: Read repair: ``GET .../segments/{kind}/{name}`` finds the object gone and corrects that one key
#: through the ingest code path (an optimistic put/update, a transaction with a
#: condition check on the same table). No DeleteItem: a removal is written as a tombstone.
READ_REPAIR_ACTIONS: Final = [
    "dynamodb:ConditionCheckItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
]

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
        table: dynamodb.ITable,
        annotations_table: dynamodb.ITable,
        export_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.viewer_enabled = settings.viewer_enabled
        self.cursor_key = CursorKeySecret(self, "CursorKey")
        lambda_function = self._function(
            settings=settings,
            bucket=bucket,
            table=table,
            annotations_table=annotations_table,
            export_queue=export_queue,
        )
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
        for path in route_paths():
            self.http_api.add_routes(
                path=path,
                methods=list(ROUTED_METHODS),
                integration=integration,
                authorizer=self.authorizer,
            )
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

    def _function(
        self,
        *,
        settings: StackSettings,
        bucket: s3.IBucket,
        table: dynamodb.ITable,
        annotations_table: dynamodb.ITable,
        export_queue: sqs.IQueue,
    ) -> PythonFunction:
        """The API Lambda; its role has only what the handler does."""
        statements = [
            iam.PolicyStatement(
                sid="ReadModelRead",
                actions=list(READ_MODEL_READ_ACTIONS),
                resources=[table.table_arn],
            ),
            iam.PolicyStatement(
                sid="ReadRepair",
                actions=list(READ_REPAIR_ACTIONS),
                resources=[table.table_arn],
            ),
            # HEAD checks that a segment still exists; presigned GET URLs are signed with
            # this role; the freshness merge lists recent hour prefixes under v1/.
            *segment_read_statements(bucket, get_sid="ReadSegmentObjects"),
            # Export jobs written and read, clips presigned (renditions: infra/media.py).
            derived_media_statement(
                bucket,
                "ReadWriteDerivedMedia",
                ["s3:GetObject", "s3:PutObject"],
                [EXPORTS_PREFIX],
            ),
            # The one function with access to the annotations table (primary data).
            iam.PolicyStatement(
                sid="ReadWriteAnnotations",
                actions=list(ANNOTATIONS_ACTIONS),
                resources=[annotations_table.table_arn],
            ),
            iam.PolicyStatement(
                sid="QueueExports",
                actions=["sqs:SendMessage"],
                resources=[export_queue.queue_arn],
            ),
            self.cursor_key.read_statement(),
        ]
        acknowledgments = [
            segment_objects_acknowledgment(
                bucket, "Only s3:GetObject (HEAD and presigned GET of segments)."
            ),
            derived_objects_acknowledgment(
                bucket, EXPORTS_PREFIX, "Export jobs are written and read by their id."
            ),
        ]
        return python_function(
            self,
            settings=settings,
            handler=API_HANDLER,
            service_name=API_SERVICE_NAME,
            description="video-index API: read model and segments over HTTP",
            role_description=(
                "video-index API: reads the read model and segments, repairs one key, "
                "reads and writes annotations"
            ),
            timeout=Duration.seconds(settings.api_timeout_seconds),
            memory_size=settings.api_memory_mb,
            environment={
                ENV_BUCKET: bucket.bucket_name,
                ENV_TABLE: table.table_name,
                ENV_ANNOTATIONS_TABLE: annotations_table.table_name,
                ENV_GAP_TOLERANCE_MS: str(settings.gap_tolerance_ms),
                ENV_TOMBSTONE_DAYS: str(settings.tombstone_days),
                ENV_PRESIGN_SECONDS: str(settings.presign_seconds),
                ENV_FRESH_WINDOW_SECONDS: str(settings.fresh_window_seconds),
                ENV_EXPORT_QUEUE_URL: export_queue.queue_url,
                ENV_MAX_EXPORT_BYTES: str(settings.max_export_bytes),
                ENV_SILENT_AFTER_SECONDS: json.dumps(settings.silent_after_seconds),
                ENV_RETENTION_DAYS: json.dumps(settings.retention_days),
                ENV_CLOCK_TOLERANCE_SECONDS: str(settings.clock_tolerance_seconds),
                ENV_CURSOR_KEY_SECRET: self.cursor_key.secret.secret_arn,
                **viewer_environment(settings, bucket, Stack.of(self).region),
                **(
                    {ENV_ACCESS_POLICY: settings.access_policy}
                    if settings.access_policy is not None
                    else {}
                ),
            },
            statements=statements,
            acknowledgments=acknowledgments,
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
