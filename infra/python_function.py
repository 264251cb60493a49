"""A video-index Python Lambda: the one way every function of the stack is built.

Ingest, the API, reconcile/rebuild and exports each run a handler from the same
``functions/`` tree, the same way: python3.13 on arm64, Powertools from its public
layer, an asset of its own that carries ``video_index`` and the packages the function
needs beyond the runtime and the layer (:mod:`infra.dependencies`, built without
Docker by :mod:`infra.assets` at synthesis), active tracing, logs in a log group of
its own with the stack's retention, and an execution role with only the statements
written out for it (no managed policies). :func:`python_function` builds that from the
function's spec (``core/functions.py``: handler, service, needs) and owns the cdk-nag
acknowledgments it implies. Its environment and the grants of its needs come from the
spec alone (:mod:`infra.wiring`); a statement no access level covers (a rendition's
delete, the runs' report objects) stays with the construct that calls it.

The resources are created directly in the calling construct (``LogGroup``, ``Role``,
``PowertoolsLayer``, ``Function``), not in a construct of their own, so their paths,
logical ids and the places of their acknowledgments are those of the calling
construct (``VideoIndex/Ingest/Role``, ``VideoIndex/Api/Function``, ...).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jsii
from aws_cdk import (
    Acknowledgment,
    AssetHashType,
    BundlingOptions,
    Duration,
    ILocalBundling,
    RemovalPolicy,
    Size,
    Stack,
    Validations,
)
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.assets import DEVELOPER_PATHS, FUNCTIONS_DIR, LITTER, build_asset, describe
from infra.dependencies import FunctionPackaging, packaging_of
from infra.settings import StackSettings
from infra.wiring import Wiring
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import FunctionSpec

#: What CDK fingerprints to name a bundle: the deployed part of the ``functions/`` tree
#: (the asset itself is built by :func:`infra.assets.build_asset` and hashed as built).
ASSET_EXCLUDES: Final = [
    *DEVELOPER_PATHS,
    *(f"**/{pattern}" for pattern in LITTER),
]

#: Environment variables every function gets from here, not from its spec.
ENV_POWERTOOLS_SERVICE_NAME: Final = "POWERTOOLS_SERVICE_NAME"
ENV_POWERTOOLS_METRICS_NAMESPACE: Final = "POWERTOOLS_METRICS_NAMESPACE"

#: Why the runtime is not the newest one (cdk-nag AwsSolutions-L1).
RUNTIME_PIN_ACKNOWLEDGMENT: Final = Acknowledgment(
    id="AwsSolutions-L1",
    reason=(
        "Pinned to python3.13 because the public Powertools layer is built per "
        "Python version (AWSLambdaPowertoolsPythonV3-python313-arm64); runtime and "
        "layer are upgraded together."
    ),
)
#: The X-Ray statement active tracing adds to the role (cdk-nag AwsSolutions-IAM5).
TRACING_ACKNOWLEDGMENT: Final = Acknowledgment(
    id="AwsSolutions-IAM5[Resource::*]",
    reason=(
        "Added by Lambda active tracing: xray:PutTraceSegments and "
        "xray:PutTelemetryRecords support no resource-level permissions."
    ),
)


@dataclass(frozen=True)
class PythonFunction:
    """What :func:`python_function` created in its scope."""

    log_group: logs.LogGroup
    role: iam.Role
    function: lambda_.Function


def python_function(
    scope: Construct,
    *,
    settings: StackSettings,
    spec: FunctionSpec,
    description: str,
    timeout: Duration,
    memory_size: int,
    statements: Sequence[iam.PolicyStatement] = (),
    acknowledgments: Sequence[Acknowledgment] = (),
    role_description: str | None = None,
    ephemeral_storage: Size | None = None,
    extra_files: Mapping[str, Path] | None = None,
) -> PythonFunction:
    """Add a video-index Python Lambda, its log group and its execution role to ``scope``.

    ``spec`` names the handler (a dotted path into ``functions/``), the Powertools service
    (logs, traces, the ``service`` metric dimension, next to the stack's metrics
    namespace) and the function's needs: the stack gives it their variables and grants
    (:meth:`infra.wiring.Wiring.apply`). ``role_description`` defaults to ``description``.

    ``statements`` are the role's statements beyond its own logs and its needs' grants
    (narrow ones no access level covers), and ``acknowledgments`` the cdk-nag findings
    they cause; both are the caller's.

    No AWSLambdaBasicExecutionRole: it allows any log group, while this role may only
    write to the function's own.

    ``extra_files`` (path inside the asset → file) adds files that are not in the
    repository to this function's asset alone, e.g. the viewer's hls.js from npm.
    """
    reserved = {ENV_POWERTOOLS_SERVICE_NAME, ENV_POWERTOOLS_METRICS_NAMESPACE} & spec.settings
    if reserved:
        raise ValueError(f"set by python_function, not declared by a spec: {sorted(reserved)}")
    log_group = logs.LogGroup(
        scope,
        "LogGroup",
        retention=settings.log_retention,
        removal_policy=RemovalPolicy.DESTROY,
    )
    role = _role(
        scope,
        description if role_description is None else role_description,
        log_group,
        statements,
        acknowledgments,
    )
    powertools = lambda_.LayerVersion.from_layer_version_arn(
        scope, "PowertoolsLayer", settings.powertools_layer_arn(Stack.of(scope).region)
    )
    function = lambda_.Function(
        scope,
        "Function",
        description=description,
        runtime=lambda_.Runtime.PYTHON_3_13,
        architecture=lambda_.Architecture.ARM_64,
        handler=spec.handler,
        code=function_code(spec, extra_files or {}),
        layers=[powertools],
        tracing=lambda_.Tracing.ACTIVE,
        timeout=timeout,
        memory_size=memory_size,
        ephemeral_storage_size=ephemeral_storage,
        role=role,
        log_group=log_group,
        environment={
            ENV_POWERTOOLS_SERVICE_NAME: spec.service,
            ENV_POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        },
    )
    Validations.of(function).acknowledge(RUNTIME_PIN_ACKNOWLEDGMENT)
    Wiring.of(scope).wire(spec, function, role)
    return PythonFunction(log_group=log_group, role=role, function=function)


def _role(
    scope: Construct,
    description: str,
    log_group: logs.LogGroup,
    statements: Sequence[iam.PolicyStatement],
    acknowledgments: Sequence[Acknowledgment],
) -> iam.Role:
    """The execution role: its own logs and ``statements`` (its needs' grants follow from
    the wiring), with the cdk-nag acknowledgments they imply."""
    role = iam.Role(
        scope,
        "Role",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=description,
    )
    own_logs = iam.PolicyStatement(
        sid="WriteOwnLogs",
        actions=["logs:CreateLogStream", "logs:PutLogEvents"],
        resources=[log_group.log_group_arn],
    )
    for statement in (own_logs, *statements):
        role.add_to_principal_policy(statement)
    # One reason per finding: a caller acknowledging ``Resource::*`` for its own reason
    # says why for X-Ray too (a second acknowledgment of an id would replace the first).
    tracing = [TRACING_ACKNOWLEDGMENT]
    if any(a.id == TRACING_ACKNOWLEDGMENT.id for a in acknowledgments):
        tracing = []
    Validations.of(role).acknowledge(*acknowledgments, *tracing)
    return role


@jsii.implements(ILocalBundling)
class LocalAssetBundling:
    """CDK local bundling: :func:`infra.assets.build_asset` of one function (no Docker)."""

    def __init__(self, function: FunctionPackaging, extra_files: Mapping[str, Path]) -> None:
        self._function = function
        self._extra_files = dict(extra_files)

    def try_bundle(self, output_dir: str, *args: Any, **kwargs: Any) -> bool:
        build_asset(self._function, Path(output_dir))
        for target, source in self._extra_files.items():
            destination = Path(output_dir) / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
        return True


def function_code(spec: FunctionSpec, extra_files: Mapping[str, Path]) -> lambda_.Code:
    """The asset of the function ``spec``: built by local bundling at synthesis
    (:class:`LocalAssetBundling`, never Docker) and named by its content; ``extra_files``
    (path inside the asset -> file) are added to it, e.g. the viewer's hls.js from npm.

    The bundling environment only describes the build (function, platform, pinned
    packages): CDK keys its bundle folder on it, so two functions that carry different
    packages never share a bundle; two that carry the same get the same asset.
    """
    packaging = packaging_of(spec)
    return lambda_.Code.from_asset(
        str(FUNCTIONS_DIR),
        exclude=ASSET_EXCLUDES,
        asset_hash_type=AssetHashType.OUTPUT,
        bundling=BundlingOptions(
            image=lambda_.Runtime.PYTHON_3_13.bundling_image,  # never run: local bundling
            local=LocalAssetBundling(packaging, extra_files),
            environment={
                "VIDEO_INDEX_ASSET": describe(packaging),
                "VIDEO_INDEX_ASSET_EXTRA": " ".join(sorted(extra_files)),
            },
        ),
    )


def run_reports_statements(
    reports: s3.IBucket, inventory_prefix: str, run_prefixes: Sequence[str]
) -> list[iam.PolicyStatement]:
    """What a fleet-scale run needs of the reports bucket beyond listing it (its ``READ``,
    the spec's): read the inventory reports under ``inventory_prefix``, and read and write
    its own unit lists and reports under ``run_prefixes``; never write the inventory (S3
    writes that)."""
    runs = [reports.arn_for_objects(f"{prefix}*") for prefix in run_prefixes]
    return [
        iam.PolicyStatement(
            sid="ReadInventoryAndRuns",
            actions=["s3:GetObject"],
            resources=[reports.arn_for_objects(inventory_prefix), *runs],
        ),
        iam.PolicyStatement(sid="WriteRunObjects", actions=["s3:PutObject"], resources=runs),
    ]


def derived_media_statement(
    bucket: s3.IBucket, sid: str, actions: Sequence[str], prefixes: Sequence[str]
) -> iam.PolicyStatement:
    """``actions`` on the derived media under ``prefixes`` of the segment bucket
    (renditions, exports: outside ``v1/``, so never on the source of truth)."""
    return iam.PolicyStatement(
        sid=sid,
        actions=list(actions),
        resources=[bucket.arn_for_objects(f"{prefix}*") for prefix in prefixes],
    )
