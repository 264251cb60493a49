"""Infrastructure tests of the HTTP API (docs/api.md): routes, authorization, stage, Lambda, role.

The app is synthesized once per module for the default settings (IAM authorization)
and once with JWT authorization, through the same ``build`` function ``app.py``
uses; every assertion reads one of these two templates. Tests of other settings
synthesize only the API construct.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from app import build
from infra.api import QueryApi
from infra.settings import SettingsError, StackSettings
from infra.wiring import provide_settings
from tests.infra.template import Synth, as_list, stand_ins, synthesize
from video_index.core.functions import API
from video_index.core.table_schema import annotations_table_definition, read_model_table_definition

ISSUER = "https://issuer.example.com/pool-1"
#: As `cdk synth -c api_auth=jwt -c api_jwt_issuer=... -c api_jwt_audience=...` passes it.
JWT_CONTEXT: Mapping[str, str] = {
    "api_auth": "jwt",
    "api_jwt_issuer": ISSUER,
    "api_jwt_audience": "video-app, ops-console",
}

#: The documented paths (docs/api.md), written out independently of the code.
DOCUMENTED_PATHS = [
    "/audit",
    "/devices",
    "/devices/{device}",
    "/devices/{device}/activity",
    "/devices/{device}/annotations",
    "/devices/{device}/annotations/{annotation_id}",
    "/devices/{device}/annotations/{annotation_id}/history",
    "/devices/{device}/calendar",
    "/devices/{device}/exports",
    "/devices/{device}/frame",
    "/devices/{device}/holds",
    "/devices/{device}/live.m3u8",
    "/devices/{device}/media/{file}",
    "/devices/{device}/overlays",
    "/devices/{device}/playlist.m3u8",
    "/devices/{device}/ranges",
    "/devices/{device}/segments",
    "/devices/{device}/segments/{kind}/{name}",
    "/devices/{device}/shares",
    "/deletions/{deletion_id}",
    "/exports/public-key",
    "/exports/{export_id}",
    "/holds/{hold_id}",
    "/me",
    "/openapi.json",
    *(f"/shares/{{share_id}}{tail}" for tail in ("", "/download", "/frame", "/media/{file}")),
    "/shares/{share_id}/playlist.m3u8",
]
#: The public data routes: a share link's (docs/shares.md: the share's secret decides) and
#: the export key's (docs/playback.md#signed-exports: a public key is no secret). Their GET
#: goes without an authorizer, every other method of the path stays authorized.
PUBLIC_GETS = {
    f"GET {path}"
    for path in DOCUMENTED_PATHS
    if path.startswith("/shares/") or path == "/exports/public-key"
}
#: The viewer's page (docs/viewer.md): documented too, but routed only with `-c viewer=on`,
#: GET only and without an authorizer (a browser cannot attach a token to a navigation).
VIEWER_PATHS = ["/viewer", "/viewer/{file}"]
#: The paths that need PyAV: the media function's (docs/architecture.md).
MEDIA_PATHS = (
    "/devices/{device}/media/{file}",
    "/devices/{device}/frame",
    "/shares/{share_id}/media/{file}",
    "/shares/{share_id}/frame",
)
#: Every method but OPTIONS: a CORS preflight is answered by API Gateway itself, unsigned;
#: an authorized ANY route would catch it and refuse it.
ROUTED_METHODS = ["DELETE", "GET", "HEAD", "PATCH", "POST", "PUT"]
ROUTE_KEYS = sorted(f"{method} {path}" for path in DOCUMENTED_PATHS for method in ROUTED_METHODS)


def _api_only(context: Mapping[str, Any]) -> tuple[Synth, QueryApi]:
    """Only the API construct (with a plain bucket and table): cheap to synthesize."""
    app = App(context=dict(context))
    stack = Stack(app, "ApiOnly")
    settings = StackSettings.from_context(app)
    provide_settings(stack, settings)
    api = QueryApi(stack, "Api", settings=settings, bucket=s3.Bucket(stack, "Bucket"))
    stand_ins(stack, API)
    return Synth(app=app, stack=stack, template=Template.from_stack(stack)), api


@pytest.fixture(scope="module")
def jwt_synth() -> Synth:
    # Given the app built with JWT authorization chosen by context
    return synthesize(JWT_CONTEXT)


def _statements(policy_document: Mapping[str, Any]) -> list[dict[str, Any]]:
    statements: list[dict[str, Any]] = policy_document["Statement"]
    return statements


def _routes(synth: Synth) -> dict[str, dict[str, Any]]:
    """Route resources of the stack by route key."""
    routes = synth.of_type("AWS::ApiGatewayV2::Route").values()
    return {r["Properties"]["RouteKey"]: r["Properties"] for r in routes}


# --- read model index -------------------------------------------------------------------------


def test_read_model_table_has_no_secondary_index(synth: Synth) -> None:
    # Given the read-model table
    props = synth.props(synth.video_index.read_model.table)
    # Then it has no global or local secondary index (each would cost a write unit per
    # segment write): a single segment is read by its key (device, kind, file name)
    assert "GlobalSecondaryIndexes" not in props
    assert "LocalSecondaryIndexes" not in props
    # And its attributes are the key's only, as in the shared schema `video-index local`
    # and the tests create
    definition = read_model_table_definition("any")
    assert "GlobalSecondaryIndexes" not in definition
    assert sorted(props["AttributeDefinitions"], key=str) == sorted(
        definition["AttributeDefinitions"], key=str
    )
    assert {a["AttributeName"] for a in props["AttributeDefinitions"]} == {"pk", "sk"}
    # And the annotations table shape has none either
    assert "GlobalSecondaryIndexes" not in annotations_table_definition("any")
    # And no policy of the stack grants anything on an index
    policies = synth.of_type("AWS::IAM::Policy").values()
    assert policies and not [p for p in policies if "/index/" in json.dumps(p)]


# --- routes and authorization -----------------------------------------------------------------


def test_api_has_exactly_the_documented_routes_each_to_its_function(synth: Synth) -> None:
    # Given the HTTP API and its routes
    api = synth.video_index.api
    routes = _routes(synth)
    # Then the routes are exactly the documented paths, each with every method but OPTIONS
    # (the function answers 405 for a method a path lacks), with no $default catch-all
    assert sorted(routes) == ROUTE_KEYS
    assert synth.props(api.http_api)["ProtocolType"] == "HTTP"
    # And every route targets a Lambda proxy integration: the media path the media
    # function (PyAV), every other path the API function
    targets: dict[str, str] = {}
    for route_key, route in routes.items():
        assert route["ApiId"] == synth.ref(api.http_api), route_key
        prefix, ref = route["Target"]["Fn::Join"][1]
        assert prefix == "integrations/", route_key
        targets[route_key] = ref["Ref"]
    for integration_id in set(targets.values()):
        integration = synth.resources[integration_id]["Properties"]
        assert integration["IntegrationType"] == "AWS_PROXY"
        assert integration["PayloadFormatVersion"] == "2.0"
    function_of = {
        key: synth.resources[ref]["Properties"]["IntegrationUri"] for key, ref in targets.items()
    }
    media_arn = synth.arn(synth.video_index.media.function)
    assert {key for key, arn in function_of.items() if arn == media_arn} == {
        f"{method} {path}" for path in MEDIA_PATHS for method in ROUTED_METHODS
    }
    assert {key for key, arn in function_of.items() if arn == synth.arn(api.function)} == {
        key for key in ROUTE_KEYS if key.split(" ", 1)[1] not in MEDIA_PATHS
    }
    assert len(synth.of_type("AWS::ApiGatewayV2::Integration")) == 2


def test_the_resolver_documents_exactly_these_paths() -> None:
    # Given the paths of the resolver's OpenAPI document (what infra routes from)
    from video_index.app.routes import route_methods

    # Then they are the documented API paths and the viewer's
    assert sorted(route_methods()) == sorted(DOCUMENTED_PATHS + VIEWER_PATHS)
    assert {path: sorted(route_methods()[path]) for path in VIEWER_PATHS} == {
        path: ["GET"] for path in VIEWER_PATHS
    }


def test_with_the_viewer_on_only_its_page_is_routed_without_authorization(
    viewer_synth: Synth,
) -> None:
    # Given the routes of a deployment with -c viewer=on (and JWT authorization)
    routes = _routes(viewer_synth)
    # Then the API routes are unchanged, and the viewer's two paths are added, GET only
    viewer = [f"GET {path}" for path in VIEWER_PATHS]
    assert sorted(routes) == sorted(ROUTE_KEYS + viewer)
    # And only those two and the public key go without authorizer; every data route needs
    # a token
    for route_key, route in routes.items():
        if route_key.split(" ", 1)[1] in VIEWER_PATHS or route_key in PUBLIC_GETS:
            assert route["AuthorizationType"] == "NONE", route_key
            assert "AuthorizerId" not in route, route_key
        else:
            assert route["AuthorizationType"] == "JWT", route_key


def test_routes_require_iam_authorization_by_default(synth: Synth) -> None:
    # Given the routes of the default deployment
    routes = _routes(synth)
    # Then each requires SigV4-signed requests (AWS_IAM), and there is no other authorizer,
    # but the public key's (GET only, no authorizer: anyone verifies an export)
    for route_key, route in routes.items():
        expected = "NONE" if route_key in PUBLIC_GETS else "AWS_IAM"
        assert route["AuthorizationType"] == expected, route_key
        assert "AuthorizerId" not in route, route_key
    assert len(PUBLIC_GETS) == 6
    assert synth.of_type("AWS::ApiGatewayV2::Authorizer") == {}
    assert synth.video_index.settings.api_auth == "iam"


def test_only_the_api_routes_may_invoke_the_api_function(synth: Synth) -> None:
    # Given the resource-based permissions of the API function
    api = synth.video_index.api
    permissions = [
        p["Properties"]
        for p in synth.of_type("AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == synth.arn(api.function)
    ]
    # Then API Gateway may invoke it only through this API, with one permission for all
    # routes (route-scoped ones, one per route, would pass Lambda's 20 KB policy limit)
    (permission,) = permissions
    assert permission["Action"] == "lambda:InvokeFunction"
    assert permission["Principal"] == "apigateway.amazonaws.com"
    parts = permission["SourceArn"]["Fn::Join"][1]
    assert parts[-2] == synth.ref(api.http_api)
    assert parts[-1] == "/*/*/*"


def test_jwt_authorization_from_context_uses_the_issuer_and_audience(jwt_synth: Synth) -> None:
    # Given the app synthesized with -c api_auth=jwt and an issuer and audiences
    (authorizer_id, authorizer), *others = jwt_synth.of_type(
        "AWS::ApiGatewayV2::Authorizer"
    ).items()
    # Then one JWT authorizer checks the bearer token against that issuer and those audiences
    assert others == []
    props = authorizer["Properties"]
    assert props["ApiId"] == jwt_synth.ref(jwt_synth.video_index.api.http_api)
    assert props["AuthorizerType"] == "JWT"
    assert props["IdentitySource"] == ["$request.header.Authorization"]
    assert props["JwtConfiguration"] == {
        "Issuer": ISSUER,
        "Audience": ["video-app", "ops-console"],
    }
    # And every route uses it
    routes = _routes(jwt_synth)
    assert sorted(routes) == ROUTE_KEYS
    for route_key, route in routes.items():
        if route_key in PUBLIC_GETS:  # (a share's secret or nothing secret, PUBLIC_GETS)
            assert route["AuthorizationType"] == "NONE", route_key
            continue
        assert route["AuthorizationType"] == "JWT", route_key
        assert route["AuthorizerId"] == {"Ref": authorizer_id}, route_key


def test_jwt_template_passes_cfn_lint_and_cdk_nag(jwt_synth: Synth, tmp_path: Path) -> None:
    # Given the JWT variant of the template on disk
    # When cfn-lint and the AWS Solutions pack check it
    report = AwsSolutionsChecks(jwt_synth.app).validate_scope(jwt_synth.stack)
    # Then neither reports anything (beyond the documented accepted cfn-lint warning)
    assert jwt_synth.lint(tmp_path) == []
    assert [v.rule_name for v in report.violations] == []


# --- settings ---------------------------------------------------------------------------------


def test_api_settings_defaults() -> None:
    # Given the settings without context
    settings = StackSettings.from_context(App())
    # Then the API defaults are IAM auth, 50 rps / burst 100, 15-minute URLs and fresh window
    assert settings.api_auth == "iam"
    assert settings.api_jwt_issuer is None
    assert settings.api_jwt_audience is None
    assert settings.api_jwt_audiences == ()
    assert (settings.api_throttle_rate, settings.api_throttle_burst) == (50, 100)
    assert settings.presign_seconds == 900
    assert settings.fresh_window_seconds == 900
    assert settings.api_timeout_seconds <= 30
    assert settings.api_name == "VideoIndex-api"


@pytest.mark.parametrize(
    ("context", "key", "expected"),
    [
        ({"api_auth": "jwt", "api_jwt_audience": "app"}, "api_jwt_issuer", "required"),
        ({"api_auth": "jwt", "api_jwt_issuer": ISSUER}, "api_jwt_audience", "required"),
        (
            {"api_auth": "jwt", "api_jwt_issuer": ISSUER, "api_jwt_audience": " , "},
            "api_jwt_audience",
            "required",
        ),
        (
            {"api_auth": "jwt", "api_jwt_issuer": "issuer.example.com", "api_jwt_audience": "a"},
            "api_jwt_issuer",
            "https://",
        ),
        ({"api_auth": "cognito"}, "api_auth", "must be one of 'iam', 'jwt'"),
        ({"api_auth": ""}, "api_auth", "must not be empty"),
        ({"api_jwt_issuer": ISSUER}, "api_jwt_issuer", "only used when api_auth is 'jwt'"),
        ({"api_jwt_audience": "app"}, "api_jwt_audience", "only used when api_auth is 'jwt'"),
        ({"api_throttle_rate": "0"}, "api_throttle_rate", ">= 1"),
        ({"api_throttle_burst": "fast"}, "api_throttle_burst", "whole number"),
        ({"presign_seconds": "3601"}, "presign_seconds", "between 1 and 3600"),
        ({"presign_seconds": "0"}, "presign_seconds", "between 1 and 3600"),
        ({"fresh_window_seconds": "0"}, "fresh_window_seconds", "between 1 and 86400"),
        ({"api_timeout_seconds": 31}, "api_timeout_seconds", "between 1 and 30"),
        # only https viewer origins: a page over http would hand its tokens to the network
        ({"viewer_origins": "http://viewer.example.com"}, "viewer_origins", "https://"),
        ({"access_policy": '{"roles": {"x": "root"}}'}, "access_policy", "no role 'root'"),
        ({"access_policy": "not json"}, "access_policy", "not a valid access policy"),
    ],
)
def test_bad_api_context_stops_synthesis_with_an_error_naming_the_key(
    context: dict[str, object], key: str, expected: str
) -> None:
    # Given an app with a bad or incomplete API setting in its context
    app = App(context=context)
    # When the app is built as app.py builds it
    with pytest.raises(SettingsError) as error:
        build(app)
    # Then the error names the context key and the problem
    assert f"context key {key!r}" in str(error.value)
    assert expected in str(error.value)


def test_api_context_overrides_reach_the_stage_and_the_function() -> None:
    # Given throttling, URL lifetime and fresh window set by context
    synth, api = _api_only(
        {
            "api_throttle_rate": "5",
            "api_throttle_burst": 7,
            "presign_seconds": "60",
            "fresh_window_seconds": "120",
            # the aggregation lag alarm must stay inside the fresh window
            "aggregation_lag_alarm_seconds": "90",
        }
    )
    # Then the stage throttles at those limits
    assert api.stage is not None
    assert synth.props(api.stage)["DefaultRouteSettings"] == {
        "ThrottlingRateLimit": 5,
        "ThrottlingBurstLimit": 7,
    }
    # And the function gets the URL lifetime and the fresh window
    env = synth.props(api.function)["Environment"]["Variables"]
    assert env["VIDEO_INDEX_PRESIGN_SECONDS"] == "60"
    assert env["VIDEO_INDEX_FRESH_WINDOW_SECONDS"] == "120"


# --- stage ------------------------------------------------------------------------------------


def test_default_stage_throttles_and_writes_json_access_logs(synth: Synth) -> None:
    # Given the one stage of the API
    api = synth.video_index.api
    ((stage_id, stage),) = synth.of_type("AWS::ApiGatewayV2::Stage").items()
    assert stage_id == synth.logical_id(api.stage)
    props = stage["Properties"]
    # Then it is the auto-deployed $default stage of the API
    assert props["ApiId"] == synth.ref(api.http_api)
    assert props["StageName"] == "$default"
    assert props["AutoDeploy"] is True
    # And it throttles every route at the configured rate and burst
    assert props["DefaultRouteSettings"] == {
        "ThrottlingRateLimit": 50,
        "ThrottlingBurstLimit": 100,
    }
    # And it writes one JSON line per request to its own access log group
    access = props["AccessLogSettings"]
    assert access["DestinationArn"] == synth.arn(api.access_log_group)
    fields = json.loads(access["Format"])
    assert {
        "requestId": "$context.requestId",
        "ip": "$context.identity.sourceIp",
        "requestTime": "$context.requestTime",
        "httpMethod": "$context.httpMethod",
        "routeKey": "$context.routeKey",
        "path": "$context.path",
        # the caller, as the API records it (docs/access.md)
        "principal": "$context.authorizer.claims.sub",
        "iamPrincipal": "$context.identity.userArn",
        "status": "$context.status",
        "protocol": "$context.protocol",
        "responseLength": "$context.responseLength",
        "integrationError": "$context.integrationErrorMessage",
    }.items() <= fields.items()
    # And that log group has a retention, distinct from the function's log group
    assert synth.props(api.access_log_group)["RetentionInDays"] == 30
    assert synth.logical_id(api.access_log_group) != synth.logical_id(api.log_group)


def test_stack_outputs_the_api_url(synth: Synth) -> None:
    # Given the stack outputs
    outputs = synth.template.to_json()["Outputs"]
    # Then the base URL of the API's $default stage is one of them
    url = outputs["ApiUrl"]["Value"]["Fn::Join"][1]
    assert url[0] == "https://"
    assert url[1] == synth.ref(synth.video_index.api.http_api)
    assert url[-1] == "/"
    assert synth.props(synth.video_index.api.http_api)["Name"] == "VideoIndex-api"


# --- API Lambda -------------------------------------------------------------------------------


def test_api_function_runtime_architecture_handler_tracing_and_logs(synth: Synth) -> None:
    # Given the API function
    api = synth.video_index.api
    props = synth.props(api.function)
    # Then it runs the API handler on Python 3.13 / arm64 with active tracing
    assert props["Runtime"] == "python3.13"
    assert props["Architectures"] == ["arm64"]
    assert props["Handler"] == "video_index.handlers.api.handler"
    assert props["TracingConfig"] == {"Mode": "Active"}
    assert props["Timeout"] == 29  # below the 30 s HTTP API integration timeout
    assert props["MemorySize"] == 512
    assert props["Role"] == synth.arn(api.role)
    # And logs to its own log group with the configured retention
    assert props["LoggingConfig"] == {"LogGroup": synth.ref(api.log_group)}
    assert synth.props(api.log_group)["RetentionInDays"] == 30
    # And its Powertools layer is exactly the ingest function's (its code is an asset of
    # its own, with the packages the API needs: test_lambda_asset.py)
    ingest = synth.props(synth.video_index.ingest.function)
    assert props["Layers"] == ingest["Layers"]
    assert "AWSLambdaPowertoolsPythonV3-python313-arm64" in json.dumps(props["Layers"])


def test_api_function_environment(synth: Synth) -> None:
    # Given the API function's environment
    env = synth.props(synth.video_index.api.function)["Environment"]["Variables"]
    # Then it names the stack's bucket and table and carries the read-model and API settings
    stack = synth.video_index
    assert env == {
        "VIDEO_INDEX_BUCKET": synth.ref(stack.storage.bucket),
        "VIDEO_INDEX_TABLE": synth.ref(stack.read_model.table),
        "VIDEO_INDEX_ANNOTATIONS_TABLE": synth.ref(stack.annotations.table),
        "VIDEO_INDEX_GAP_TOLERANCE_MS": "1000",
        "VIDEO_INDEX_TOMBSTONE_DAYS": "35",
        "VIDEO_INDEX_PRESIGN_SECONDS": "900",
        "VIDEO_INDEX_FRESH_WINDOW_SECONDS": "900",
        "VIDEO_INDEX_EXPORT_QUEUE_URL": synth.ref(stack.exports.queue),
        "VIDEO_INDEX_MAX_EXPORT_BYTES": str(2 * 1024**3),
        "VIDEO_INDEX_DELETIONS_TABLE": synth.ref(stack.deletion.table),
        "VIDEO_INDEX_DELETION_QUEUE_URL": synth.ref(stack.deletion.queue),
        "VIDEO_INDEX_HOLDS_TABLE": synth.ref(stack.holds.table),
        "VIDEO_INDEX_RETENTION_DAYS": '{"video": 30, "sensor": 90, "analysis": 90}',
        "VIDEO_INDEX_SILENT_AFTER_SECONDS": '{"video": 300, "sensor": 900, "analysis": 900}',
        "VIDEO_INDEX_CLOCK_TOLERANCE_SECONDS": "10",
        "VIDEO_INDEX_CURSOR_KEY_SECRET": synth.ref(stack.api.cursor_key.secret),
        "VIDEO_INDEX_SHARES_TABLE": synth.ref(stack.shares.table),
        "VIDEO_INDEX_SHARE_MAX_WINDOW_SECONDS": "3600",
        "VIDEO_INDEX_SHARE_MAX_LIFETIME_SECONDS": "604800",
        "VIDEO_INDEX_EXPORT_SIGNING_KEY": synth.arn(stack.export_signing_key.key),
        "VIDEO_INDEX_AUDIT_BUCKET": synth.ref(stack.audit.bucket),
        "VIDEO_INDEX_AUDIT_TABLE": synth.ref(stack.audit.table),
        "VIDEO_INDEX_AUDIT_RETENTION_DAYS": "365",
        "POWERTOOLS_SERVICE_NAME": "video-index-api",
        "POWERTOOLS_METRICS_NAMESPACE": "VideoIndex",
    }


def test_api_role_has_exactly_the_permissions_the_handler_uses(synth: Synth) -> None:
    # Given the API role and its policies
    stack = synth.video_index
    api = stack.api
    role = synth.props(api.role)
    policies = synth.template.find_resources(
        "AWS::IAM::Policy", {"Properties": {"Roles": [synth.ref(api.role)]}}
    )
    (policy,) = policies.values()
    statements = _statements(policy["Properties"]["PolicyDocument"])
    # Then the role has no managed policies and only Lambda may assume it
    assert "ManagedPolicyArns" not in role
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
        }
    ]
    # And every statement is an Allow of named actions, never a wildcard action
    for statement in statements:
        assert statement["Effect"] == "Allow"
        assert "Condition" not in statement
        for action in as_list(statement["Action"]):
            assert "*" not in action, statement
    by_sid = {s.get("Sid"): s for s in statements}
    bucket_arn = synth.arn(stack.storage.bucket)
    # And nothing on any index of the table (it has none: a segment is read by its key)
    assert not [s for s in statements if "/index/" in json.dumps(s["Resource"])]
    # And, beyond the grants of its needs (tests/infra/test_wiring.py), derived media
    # (export jobs; renditions are the media function's): get and put there only
    assert by_sid["ReadWriteDerivedMedia"]["Action"] == ["s3:GetObject", "s3:PutObject"]
    assert by_sid["ReadWriteDerivedMedia"]["Resource"] == {
        "Fn::Join": ["", [bucket_arn, "/exports/*"]]
    }
    # And logs only into its own log group
    assert by_sid["WriteOwnLogs"]["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert by_sid["WriteOwnLogs"]["Resource"] == synth.arn(api.log_group)
    # And the only generated statement is X-Ray for active tracing (no resource scoping)
    (xray,) = [s for s in statements if "Sid" not in s]
    assert xray["Resource"] == "*"
    assert sorted(xray["Action"]) == ["xray:PutTelemetryRecords", "xray:PutTraceSegments"]
    # And one statement per grant of its needs: segments (read), the read model (read,
    # write: read repair), annotations (read, write, delete), the export and deletion
    # queues, deletion requests (read, write, delete), holds (read, write), shares (read,
    # list, write), the cursor key (read: its one secret), the export signing key's public
    # half, and the audit trail (a record added to the bucket and the index, and the index
    # queried: docs/audit.md)
    assert by_sid["ReadCursorKey"]["Action"] == "secretsmanager:GetSecretValue"
    assert by_sid["ReadCursorKey"]["Resource"] == synth.ref(api.cursor_key.secret)
    assert by_sid["ReadExportPublicKey"]["Action"] == "kms:GetPublicKey"
    assert by_sid["ReadExportPublicKey"]["Resource"] == synth.arn(stack.export_signing_key.key)
    assert by_sid["AuditRecordsWrite"]["Action"] == "s3:PutObject"
    assert (by_sid["AuditWrite"]["Action"], by_sid["AuditRead"]["Action"]) == (
        "dynamodb:PutItem",
        "dynamodb:Query",
    )
    assert len(statements) == 25
    # And nothing in it scans or writes in batches, and the only deletes are of the
    # annotations' window copies and of withdrawn deletion requests' windows (never of
    # the read model, a hold or an object)
    actions = {a for s in statements for a in as_list(s["Action"])}
    assert not {a for a in actions if a.split(":")[1].startswith(("Scan", "BatchWrite"))}
    deleting = [s for s in statements if any(":Delete" in a for a in as_list(s["Action"]))]
    assert {s["Sid"] for s in deleting} == {"AnnotationsDelete", "DeletionRequestsDelete"}


# --- cdk-nag ----------------------------------------------------------------------------------


def test_cdk_nag_reports_nothing_for_the_default_template(synth: Synth) -> None:
    # Given the AWS Solutions pack run over the default stack (API included)
    report = AwsSolutionsChecks(synth.app).validate_scope(synth.stack)
    # Then no rule reports an error or a warning
    assert [v.rule_name for v in report.violations] == []


def test_api_acknowledgments_are_few_and_justified_and_never_about_authorization(
    synth: Synth, jwt_synth: Synth
) -> None:
    for variant in (synth, jwt_synth):
        # Given every acknowledgment recorded under the API construct
        acknowledged: dict[str, str] = {}
        for construct in variant.video_index.api.node.find_all():
            for entry in construct.node.metadata:
                if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                    for rule_id, reason in entry.data.items():
                        acknowledged[f"{construct.node.path} {rule_id}"] = reason
        # Then exactly the runtime pin and the unavoidable IAM5 wildcards (X-Ray, and one
        # per key prefix: objects are per-key resources) are acknowledged
        bucket = variant.logical_id(variant.video_index.storage.bucket)
        audit = variant.logical_id(variant.video_index.audit.bucket)
        role = "VideoIndex/Api/Role Annotation::AwsSolutions-IAM5"
        # (the role policies' IAM5 are one per route with a path parameter: {x} as *)
        per_route = {k for k in acknowledged if k.startswith("VideoIndex/Api/RolePolicies/")}
        assert all(":execute-api:" in k and "/$default/" in k for k in per_route), per_route
        assert bool(per_route) == (variant is synth)  # IAM only
        for key in per_route:
            acknowledged.pop(key)
        # (a share link's five GET routes go without authorizer: the secret decides)
        shares = {k for k in acknowledged if k.startswith("VideoIndex/Api/HttpApi/GET--shares")}
        assert sorted(shares) == sorted(
            f"VideoIndex/Api/HttpApi/GET--shares--{{share_id}}{tail} Annotation::AwsSolutions-APIG4"
            for tail in ("", "--download", "--frame", "--media--{file}", "--playlist.m3u8")
        )
        for key in shares:
            assert "secret" in acknowledged.pop(key), key
        assert sorted(acknowledged) == [
            "VideoIndex/Api/CursorKey/Secret Annotation::AwsSolutions-SMG4",
            "VideoIndex/Api/Function Annotation::AwsSolutions-L1",
            "VideoIndex/Api/HttpApi/GET--exports--public-key Annotation::AwsSolutions-APIG4",
            f"{role}[Resource::*]",
            f"{role}[Resource::<{audit}.Arn>/records/*]",
            f"{role}[Resource::<{bucket}.Arn>/exports/*]",
            f"{role}[Resource::<{bucket}.Arn>/v1/*]",
        ]
        # And each with a reason a reviewer can check
        for where, reason in acknowledged.items():
            assert len(reason) > 60, where
        # And nothing else about API Gateway (authorization, logging) is acknowledged but
        # the public GETs' missing authorizer (a share's secret decides; a public key)
        public = (
            "VideoIndex/Api/HttpApi/GET--shares",
            "VideoIndex/Api/HttpApi/GET--exports--public-key",
        )
        for construct in variant.stack.node.find_all():
            if construct.node.path.startswith(public):
                continue
            for entry in construct.node.metadata:
                if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                    assert not any("APIG" in rule_id for rule_id in entry.data), construct


def test_cdk_nag_does_flag_an_unauthorized_unlogged_http_api() -> None:
    # Given a throwaway HTTP API with an open route and a stage without access logs
    app = App()
    stack = Stack(app, "OpenApi")
    function = lambda_.Function(
        stack,
        "Function",
        runtime=lambda_.Runtime.PYTHON_3_13,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context): return {}"),
    )
    api = apigwv2.HttpApi(stack, "Api")
    api.add_routes(
        path="/open",
        methods=[apigwv2.HttpMethod.GET],
        integration=integrations.HttpLambdaIntegration("Integration", function),
    )
    # When the same pack checks it
    report = AwsSolutionsChecks(app).validate_scope(stack)
    # Then it reports missing authorization and access logging, so the checks above bite
    assert {"AwsSolutions-APIG1", "AwsSolutions-APIG4"} <= {v.rule_name for v in report.violations}
