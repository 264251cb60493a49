"""The deployed viewer (docs/viewer.md): served by the API function from its own asset.

With ``-c viewer=on`` (which needs JWT authorization) the API routes ``GET /viewer`` and
``GET /viewer/{file}`` without an authorizer to the API function, whose asset — and only
its — carries hls.js from npm; the page learns the OIDC client from the function's
environment; the stack outputs the viewer's URL; cdk-nag and cfn-lint stay clean, with the
one justified acknowledgment of the unauthorized page routes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from app import build
from infra.settings import SettingsError
from infra.viewer import bucket_origins
from tests.infra.conftest import VIEWER_CONTEXT
from tests.infra.template import Synth
from video_index.core.contract import ENV_VIEWER_CONNECT_ORIGINS
from video_index.viewer.assets import (
    HLS_JS_FILE,
    STATIC_DIR,
    content_security_policy,
    npm_hls_js,
)

EVENTS = Path(__file__).resolve().parents[2] / "worlds" / "events"
VENDOR = Path("video_index") / "viewer" / "vendor" / HLS_JS_FILE


def _asset_dir(synth: Synth, function: object) -> Path:
    assembly = synth.app.synth()
    key = synth.props(function)["Code"]["S3Key"]  # type: ignore[arg-type]
    return Path(assembly.directory) / f"asset.{key.removesuffix('.zip')}"


def test_the_viewer_template_passes_cfn_lint_and_cdk_nag(
    viewer_synth: Synth, tmp_path: Path
) -> None:
    # When cfn-lint and the AWS Solutions pack check the template with the viewer on
    report = AwsSolutionsChecks(viewer_synth.app).validate_scope(viewer_synth.stack)
    # Then neither reports anything
    assert viewer_synth.lint(tmp_path) == []
    assert [v.rule_name for v in report.violations] == []


def test_only_the_viewer_and_share_routes_are_acknowledged_as_unauthorized(
    viewer_synth: Synth,
) -> None:
    # Given every APIG acknowledgment in the stack
    acknowledged = {}
    for construct in viewer_synth.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule_id, reason in entry.data.items():
                    if "APIG" in rule_id:
                        acknowledged[construct.node.path] = (rule_id, reason)
    # Then it is APIG4 (no authorization) on the two GET routes of the page, justified, on
    # the export signing key's public half (docs/playback.md#signed-exports), and on a share
    # link's five GET routes, whose secret decides (docs/shares.md)
    public_key = acknowledged.pop("VideoIndex/Api/HttpApi/GET--exports--public-key")
    assert public_key[0] == "Annotation::AwsSolutions-APIG4"
    assert "a public key is no secret" in public_key[1]
    shares = sorted(k for k in acknowledged if "GET--shares" in k)
    assert len(shares) == 5
    assert sorted(set(acknowledged) - set(shares)) == [
        "VideoIndex/Api/HttpApi/GET--viewer",
        "VideoIndex/Api/HttpApi/GET--viewer--{file}",
    ]
    for where, (rule_id, reason) in acknowledged.items():
        assert rule_id == "Annotation::AwsSolutions-APIG4"
        assert ("secret" if where in shares else "no data and no secret") in reason


def test_the_function_tells_the_page_its_oidc_client_and_the_stack_outputs_the_url(
    viewer_synth: Synth,
) -> None:
    # Given the API function's environment and the stack's outputs
    env = viewer_synth.props(viewer_synth.video_index.api.function)["Environment"]["Variables"]
    outputs = viewer_synth.template.to_json()["Outputs"]
    # Then the page signs in at the API's own issuer with the public client
    assert env["VIDEO_INDEX_VIEWER_OIDC_ISSUER"] == VIEWER_CONTEXT["api_jwt_issuer"]
    assert env["VIDEO_INDEX_VIEWER_OIDC_CLIENT_ID"] == "viewer-web"
    # And the viewer's address is an output: the API's URL + viewer
    parts = outputs["ViewerUrl"]["Value"]["Fn::Join"][1]
    assert parts[0] == "https://" and parts[-1] == "/viewer"


def _resolved(value: object, names: dict[str, str]) -> str:
    """An environment value, its ``Ref``s replaced by the names the deployment gives them."""
    if isinstance(value, str):
        return value
    assert isinstance(value, dict)
    separator, parts = value["Fn::Join"]
    return str(separator).join(p if isinstance(p, str) else names[p["Ref"]] for p in parts)


def test_the_page_may_connect_to_its_api_bucket_and_identity_provider_and_nowhere_else(
    viewer_synth: Synth,
) -> None:
    # Given the origins the API function names for the page, as deployed in eu-west-1 with a
    # segment bucket named "segments-1"
    env = viewer_synth.props(viewer_synth.video_index.api.function)["Environment"]["Variables"]
    bucket = viewer_synth.logical_id(viewer_synth.video_index.storage.bucket)
    named = _resolved(
        env[ENV_VIEWER_CONNECT_ORIGINS], {bucket: "segments-1", "AWS::Region": "eu-west-1"}
    )
    # When the page is served with them
    policy = content_security_policy({ENV_VIEWER_CONNECT_ORIGINS: named})
    (connect,) = [d for d in policy.split("; ") if d.startswith("connect-src ")]
    # Then it may connect to its own origin, the bucket (as botocore presigns it, globally,
    # and regionally), the issuer (discovery) and Cognito's token endpoint: nothing else
    assert connect.split()[1:] == [
        "'self'",
        "https://segments-1.s3.amazonaws.com",
        "https://segments-1.s3.eu-west-1.amazonaws.com",
        "https://issuer.example.com",
        VIEWER_CONTEXT["viewer_oidc_token_origin"],
    ]
    assert "https:" not in connect.split() and "http:" not in connect


def test_a_bucket_name_with_dots_is_reached_path_style() -> None:
    # Given a bucket named with dots (no https virtual host can carry it)
    # Then the page connects to S3's own hosts, where botocore signs path-style URLs
    assert bucket_origins("video.segments", "eu-west-1", dotted=True) == [
        "https://s3.amazonaws.com",
        "https://s3.eu-west-1.amazonaws.com",
    ]


def test_without_the_viewer_nothing_of_it_is_deployed(synth: Synth) -> None:
    # Given the default stack
    env = synth.props(synth.video_index.api.function)["Environment"]["Variables"]
    outputs = synth.template.to_json()["Outputs"]
    # Then no sign-in settings and no viewer URL
    assert not [name for name in env if "VIEWER" in name]
    assert "ViewerUrl" not in outputs


@pytest.mark.parametrize(
    ("context", "key", "expected"),
    [
        ({"viewer": "on"}, "viewer", "needs api_auth 'jwt'"),
        ({**VIEWER_CONTEXT, "viewer": "yes"}, "viewer", "must be 'on' or 'off'"),
        ({"viewer_oidc_client_id": "web"}, "viewer_oidc_client_id", "only used when viewer"),
        (
            {**VIEWER_CONTEXT, "viewer_oidc_token_origin": "http://video.auth.example.com"},
            "viewer_oidc_token_origin",
            "https://host",
        ),
        (
            {**{k: v for k, v in VIEWER_CONTEXT.items() if k != "viewer_oidc_client_id"}},
            "viewer_oidc_token_origin",
            "only used with viewer_oidc_client_id",
        ),
    ],
)
def test_bad_viewer_context_stops_synthesis_naming_the_key(
    context: dict[str, str], key: str, expected: str
) -> None:
    with pytest.raises(SettingsError) as error:
        build(App(context=context))
    assert f"context key {key!r}" in str(error.value)
    assert expected in str(error.value)


def test_only_the_api_asset_carries_hls_js_from_npm(viewer_synth: Synth) -> None:
    # Given the API function's asset and the ingest function's
    stack = viewer_synth.video_index
    api_asset = _asset_dir(viewer_synth, stack.api.function)
    ingest_asset = _asset_dir(viewer_synth, stack.ingest.function)
    # Then the API's holds the page and npm's hls.js, byte for byte
    assert (api_asset / VENDOR).read_bytes() == npm_hls_js().read_bytes()
    for page_file in STATIC_DIR.iterdir():
        relative = page_file.relative_to(STATIC_DIR.parents[2])
        assert (api_asset / relative).read_bytes() == page_file.read_bytes()
    # And still no developer package
    assert not (api_asset / "video_index" / "local").exists()
    # And no other function carries it
    assert api_asset != ingest_asset
    assert not (ingest_asset / VENDOR).exists()


def test_the_handler_serves_the_page_and_hls_js_from_its_asset_alone(
    viewer_synth: Synth,
) -> None:
    # Given a fresh interpreter whose code is the API asset, with no npm package to fall back on
    asset = _asset_dir(viewer_synth, viewer_synth.video_index.api.function)
    event = json.loads((EVENTS / "apigw_http_v2.json").read_text())
    probe = (
        "import base64, copy, json, sys, types\n"
        "from video_index.handlers.api import handler\n"
        "import video_index.viewer.assets as assets\n"
        "sample = json.loads(sys.stdin.read())\n"
        "context = types.SimpleNamespace(function_name='api', memory_limit_in_mb=512,\n"
        "    invoked_function_arn='arn:aws:lambda:us-east-1:1:function:api', aws_request_id='1')\n"
        "out = {}\n"
        "for path in ('/viewer', '/viewer/hls.mjs'):\n"
        "    event = copy.deepcopy(sample)\n"
        "    event['rawPath'] = event['requestContext']['http']['path'] = path\n"
        "    r = handler(event, context)\n"
        "    body = r['body']\n"
        "    raw = base64.b64decode(body) if r.get('isBase64Encoded') else body.encode()\n"
        "    out[path] = [r['statusCode'], len(raw)]\n"
        "out['served_from'] = str(assets.hls_js_path())\n"
        "out['module'] = assets.__file__\n"
        "print(json.dumps(out))\n"
    )
    # When it invokes the handler for the page and for the player library
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", probe],
        input=json.dumps(event),
        env={
            "PYTHONPATH": str(asset),
            "PATH": "/usr/bin:/bin",
            "AWS_DEFAULT_REGION": "us-east-1",
            "POWERTOOLS_TRACE_DISABLED": "1",
            "POWERTOOLS_METRICS_NAMESPACE": "VideoIndexTest",
        },
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # Then both are served, hls.js from the asset's own copy
    assert out["/viewer"][0] == 200
    assert out["/viewer/hls.mjs"] == [200, npm_hls_js().stat().st_size]
    assert out["served_from"] == str(asset / VENDOR)
    assert out["module"].startswith(str(asset))
