"""One IAM managed policy per role, for IAM-authorized APIs (docs/access.md).

With ``api_auth`` ``iam`` API Gateway authorizes every request by the caller's IAM
policies, so the roles of :mod:`video_index.core.access` become policies: each allows
``execute-api:Invoke`` on exactly the routes that role may call (its own and every lower
role's), read from the resolver's OpenAPI document (each route's ``x-access``). Attach the
policy to a group, user or role to give that role. What the gateway cannot see (``erase``,
withdrawing others' requests, the device scope) the API decides with the access policy's
``iam_roles`` and ``iam_scopes`` mappings.

**An identity the caller cannot choose.** The API knows an IAM caller by its ARN, and the
deletion quota, withdrawing a request, releasing a hold and every ``created_by`` use it. A
role session's ARN ends in the *session name*, which whoever assumes the role picks. So
each policy also denies, on the whole API, every caller but

* an IAM user (``aws:PrincipalType`` ``User``: the ARN names the user), and
* a role session (``AssumedRole``) whose name is its **source identity**
  (``aws:userid``, ``<role id>:<session name>``, like ``*:${aws:SourceIdentity}``): a
  source identity is set when the role is assumed, the role's trust policy decides which
  (``sts:SourceIdentity``, e.g. ``${aws:username}``), and it cannot change for the life of
  the session nor along a chain of roles.

A session without a source identity is denied too (the variable cannot be resolved, so a
separate statement denies its absence). Denies, not conditions on the allow: a deny also
holds against a broader grant the same principal may have, and it keeps the policy within
IAM's 6,144 characters (one list of routes).
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Acknowledgment, Stack, Validations
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra.nag import logical_id
from video_index.core.access import ACCESS_EXTENSION, Role, Rule

_METHODS = ("get", "put", "post", "delete", "patch")
#: ``aws:userid`` of a role session whose name is its source identity.
SESSION_NAMED_BY_SOURCE = "*:${aws:SourceIdentity}"


def role_routes() -> dict[Role, list[tuple[str, str]]]:
    """Each role's routes (method, OpenAPI path), cumulative, public routes left out."""
    from video_index.api.resolver import TITLE
    from video_index.app.routes import whole_app

    document = (
        whole_app()
        .get_openapi_schema(title=TITLE, version="1")
        .model_dump(by_alias=True, exclude_none=True)
    )
    rules: list[tuple[str, str, Rule]] = []
    for path, item in document["paths"].items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is not None:
                rules.append((method.upper(), path, Rule.parse(operation[ACCESS_EXTENSION])))
    return {
        role: sorted(
            (method, path)
            for method, path, rule in rules
            if rule.role is not None and rule.role <= role
        )
        for role in Role
    }


def public_get_paths() -> frozenset[str]:
    """The paths whose ``GET`` is declared ``public()`` (the viewer's, a share link's,
    docs/shares.md): routed without an authorizer, their other methods with it."""
    from video_index.api.resolver import TITLE
    from video_index.app.routes import whole_app

    document = (
        whole_app()
        .get_openapi_schema(title=TITLE, version="1")
        .model_dump(by_alias=True, exclude_none=True)
    )
    return frozenset(
        path
        for path, item in document["paths"].items()
        if "get" in item and Rule.parse(item["get"][ACCESS_EXTENSION]).role is None
    )


def identity_statements(whole_api: str) -> list[iam.PolicyStatement]:
    """The denies that leave the API only to callers whose ARN they cannot choose."""

    def deny(sid: str, conditions: Mapping[str, Mapping[str, object]]) -> iam.PolicyStatement:
        return iam.PolicyStatement(
            sid=sid,
            effect=iam.Effect.DENY,
            actions=["execute-api:Invoke"],
            resources=[whole_api],
            conditions=dict(conditions),
        )

    session: Mapping[str, object] = {"aws:PrincipalType": "AssumedRole"}
    return [
        deny(
            "OnlyUsersAndRoleSessions",
            {"StringNotEquals": {"aws:PrincipalType": ["User", "AssumedRole"]}},
        ),
        deny(
            "SessionsSetASourceIdentity",
            {"StringEquals": session, "Null": {"aws:SourceIdentity": "true"}},
        ),
        deny(
            "SessionNameIsTheSourceIdentity",
            {"StringEquals": session, "StringNotLike": {"aws:userid": SESSION_NAMED_BY_SOURCE}},
        ),
    ]


def invoke_resource(path: str) -> str:
    """A route's path as an ``execute-api`` resource (each ``{parameter}`` a ``*``)."""
    parts = ["*" if part.startswith("{") else part for part in path.split("/")]
    return "/".join(parts)


class RolePolicies(Construct):
    """``<stack>-api-<role>``: ``execute-api:Invoke`` on exactly that role's routes."""

    def __init__(self, scope: Construct, construct_id: str, *, http_api: apigwv2.HttpApi) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.policies: dict[Role, iam.ManagedPolicy] = {}
        for role, routes in role_routes().items():
            resources = [
                stack.format_arn(
                    service="execute-api",
                    resource=http_api.api_id,
                    resource_name=f"$default/{method}{invoke_resource(path)}",
                )
                for method, path in routes
            ]
            whole_api = stack.format_arn(
                service="execute-api", resource=http_api.api_id, resource_name="*"
            )
            policy = self.policies[role] = iam.ManagedPolicy(
                self,
                role.label.capitalize(),
                description=f"video-index API: the {role.label} role's routes",
                statements=[
                    iam.PolicyStatement(
                        sid="InvokeRoutes", actions=["execute-api:Invoke"], resources=resources
                    ),
                    *identity_statements(whole_api),
                ],
            )
            Validations.of(policy).acknowledge(*_acknowledgments(http_api, routes))


def _acknowledgments(
    http_api: apigwv2.HttpApi, routes: list[tuple[str, str]]
) -> list[Acknowledgment]:
    """cdk-nag AwsSolutions-IAM5, one per route with a path parameter: the ``*`` stands for
    that one parameter of one route of this API (devices and ids are data, not routes)."""
    api = (
        f"arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<{logical_id(http_api)}>"
    )
    return [
        Acknowledgment(
            id=f"AwsSolutions-IAM5[Resource::{api}/$default/{method}{invoke_resource(path)}]",
            reason=(
                "One route of this API per resource; each * is one path parameter (a device "
                "or a job id), which the API itself checks against the caller's scope."
            ),
        )
        for method, path in routes
        if "{" in path
    ]
