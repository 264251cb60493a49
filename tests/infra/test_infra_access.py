"""One managed policy per role with IAM authorization (infra/access.py, docs/access.md).

Two things are checked against expectations written here, not computed by the code that
builds the policies:

* each role's ``execute-api:Invoke`` resources, against a hand-written list per role;
* the identity the API records, which a caller must not be able to choose: the finding of
  issue 30 was 25 role sessions with 25 session names getting 25 × the daily deletion
  quota, and one operator withdrawing another's request by naming their session after
  them. The synthesized policies are evaluated here by a small reference evaluator of the
  IAM rules they rely on, each rule quoted from AWS's documentation below, for those
  sessions; what gets through is then sent to the real resolver.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import replace
from typing import Any, Final

import boto3
import pytest

from tests.infra.template import Synth, as_list, joined
from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.access import Role
from video_index.core.table_schema import create_tables
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.service import Holds, HoldsHeldWindows
from worlds import events as ev
from worlds.api_world import WORLD_POLICY, ApiWorld, at, make_world

# --- what AWS documents (IAM User Guide), and the evaluator below follows --------------------

#: reference_policies_condition-keys.html#condition-keys-sourceidentity
SOURCE_IDENTITY_DOC: Final = (
    "Unlike sts:RoleSessionName, after the source identity is set, the value cannot be "
    "changed. It is present in the request context for all actions taken by the role. The "
    "value persists into subsequent role sessions when you use the session credentials to "
    "assume another role."
)
#: reference_policies_iam-condition-keys.html#ck_sourceidentity
TRUST_POLICY_DOC: Final = (
    "You can use this key in a role trust policy to require that your users set a specific "
    "source identity when they assume a role. [...] You must grant permissions for the "
    "sts:SetSourceIdentity action to allow an identity to set a source identity."
)
#: reference_policies_examples_s3_federated-home-directory-console.html (and the
#: "Principal key values" of reference_policies_variables.html: caller-specified-role-name
#: is "passed by the calling process [...] when it makes a call to get temporary
#: credentials")
USERID_DOC: Final = (
    "The ${aws:userid} variable in this policy resolves to role-id:specified-name. [...] The "
    "specified-name is the RoleSessionName parameter passed to the AssumeRoleWithWebIdentity "
    "request when the federated user assumed their role."
)
#: reference_policies_variables.html
VARIABLES_DOC: Final = (
    "Global condition context keys can be used as variables in requests across AWS "
    "services. [...] If AWS cannot resolve a variable this might cause the entire statement "
    "to be invalid."
)
#: reference_policies_evaluation-logic.html
EVALUATION_DOC: Final = (
    "By default, all requests are implicitly denied with the exception of the AWS account "
    "root user, which has full access. An explicit allow in an identity-based or "
    "resource-based policy overrides this default. [...] An explicit deny in any policy "
    "overrides any allows."
)

ACCOUNT: Final = ev.ACCOUNT
API_ID: Final = "abcdef1234"
ROLE: Final = "VideoOps"

# --- each role's routes, written out (docs/access.md's role table) ------------------------------

VIEWER_ROUTES: Final = {
    "GET/devices",
    "GET/devices/*",
    "GET/devices/*/calendar",
    "GET/devices/*/activity",
    "GET/devices/*/ranges",
    "GET/devices/*/segments",
    "GET/devices/*/segments/*/*",
    "GET/devices/*/playlist.m3u8",
    "GET/devices/*/live.m3u8",
    "GET/devices/*/media/*",
    "GET/devices/*/frame",
    "GET/devices/*/overlays",
    "GET/devices/*/annotations",
    "GET/devices/*/annotations/*",
    "GET/devices/*/annotations/*/history",
    "GET/devices/*/holds",
    "GET/holds/*",
    "GET/me",
    "GET/openapi.json",
}
REVIEWER_ROUTES: Final = VIEWER_ROUTES | {
    "POST/devices/*/annotations",
    "PUT/devices/*/annotations/*",
    "DELETE/devices/*/annotations/*",
}
OPERATOR_ROUTES: Final = REVIEWER_ROUTES | {
    "POST/devices/*/holds",
    "DELETE/holds/*",
    "POST/devices/*/exports",
    "GET/exports/*",
    "DELETE/devices/*/segments",
    "GET/deletions/*",
    "DELETE/deletions/*",
    "POST/devices/*/shares",
    "GET/devices/*/shares",
    "DELETE/shares/*",
}
EXPECTED_ROUTES: Final = {
    Role.VIEWER: VIEWER_ROUTES,
    Role.REVIEWER: REVIEWER_ROUTES,
    Role.OPERATOR: OPERATOR_ROUTES,
    # admin adds the audit trail (docs/audit.md); its other rights are the API's decisions
    Role.ADMIN: OPERATOR_ROUTES | {"GET/audit"},
}


def _document(synth: Synth, role: Role) -> dict[str, Any]:
    policies = synth.video_index.api.role_policies
    assert policies is not None
    document: dict[str, Any] = synth.props(policies.policies[role])["PolicyDocument"]
    return document


def _concrete(value: Any) -> str:
    """A resource of the template as the deployed ARN (placeholders filled in)."""
    text = joined(value)
    for name, filled in (("AWS::Partition", "aws"), ("AWS::Region", "us-east-1")):
        text = text.replace(f"${{{name}}}", filled)
    text = text.replace("${AWS::AccountId}", ACCOUNT)
    return re.sub(r"\$\{\w*HttpApi[0-9A-F]{8}\}", API_ID, text)


def test_each_role_invokes_exactly_the_routes_written_here(synth: Synth) -> None:
    for role in Role:
        # Given the role's managed policy, its one allow
        (allow,) = [s for s in _document(synth, role)["Statement"] if s["Effect"] == "Allow"]
        assert allow["Action"] == "execute-api:Invoke" and "Condition" not in allow
        prefix = f"arn:aws:execute-api:us-east-1:{ACCOUNT}:{API_ID}/$default/"
        found = set()
        for resource in as_list(allow["Resource"]):
            arn = _concrete(resource)
            assert arn.startswith(prefix), arn
            found.add(arn.removeprefix(prefix))
        # Then its routes are exactly those of the hand-written list
        assert found == EXPECTED_ROUTES[role], role
    # 39 routes, less the viewer's two and a share link's five public ones
    assert len(OPERATOR_ROUTES) == 32


def test_each_policy_fits_iams_size_limit(synth: Synth) -> None:
    # (a customer managed policy holds at most 6,144 characters, white space left out)
    for role in Role:
        rendered = json.dumps(_concrete_document(_document(synth, role)), separators=(",", ":"))
        assert len(rendered) <= 6144, (role, len(rendered))


# --- a reference evaluator of the IAM rules quoted above ----------------------------------------

_VARIABLE: Final = re.compile(r"\$\{([^}]+)\}")


def _concrete_document(document: dict[str, Any]) -> dict[str, Any]:
    statements = []
    for statement in document["Statement"]:
        resources = [_concrete(r) for r in as_list(statement["Resource"])]
        statements.append({**statement, "Resource": resources})
    return {**document, "Statement": statements}


def _like(pattern: str, value: str) -> bool:
    """IAM's ``*`` and ``?`` (nothing else is special)."""
    return (
        re.fullmatch(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", "."), value) is not None
    )


def _resolve(value: str, context: dict[str, str]) -> str | None:
    """``${key}`` replaced by the request's value; None when the request has no such key."""
    missing = [key for key in _VARIABLE.findall(value) if key not in context]
    if missing:
        return None
    return _VARIABLE.sub(lambda m: context[m[1]], value)


def _condition(operator: str, key: str, wanted: Any, context: dict[str, str]) -> bool | None:
    values = [_resolve(str(v), context) for v in as_list(wanted)]
    if None in values:
        return None  # an unresolved variable: the statement is invalid (VARIABLES_DOC)
    if operator == "Null":
        return (values[0] == "true") == (key not in context)
    actual = context.get(key)
    if actual is None:
        return operator.startswith("StringNot")
    matched = {
        "StringEquals": lambda: actual in values,
        "StringNotEquals": lambda: actual not in values,
        "StringLike": lambda: any(_like(str(v), actual) for v in values),
        "StringNotLike": lambda: not any(_like(str(v), actual) for v in values),
    }[operator]()
    return bool(matched)


def _applies(
    statement: dict[str, Any], action: str, resource: str, context: dict[str, str]
) -> bool:
    if not any(fnmatch.fnmatchcase(action, a) for a in as_list(statement["Action"])):
        return False
    if not any(_like(r, resource) for r in as_list(statement.get("Resource", "*"))):
        return False
    for operator, keys in statement.get("Condition", {}).items():
        for key, wanted in keys.items():
            if _condition(operator, key, wanted, context) is not True:
                return False
    return True


def allowed(document: dict[str, Any], action: str, resource: str, context: dict[str, str]) -> bool:
    """EVALUATION_DOC: an explicit deny wins, then an allow, else the implicit deny."""
    applying = [s for s in document["Statement"] if _applies(s, action, resource, context)]
    if any(s["Effect"] == "Deny" for s in applying):
        return False
    return any(s["Effect"] == "Allow" for s in applying)


#: The role's trust policy as the docs' example writes it (TRUST_POLICY_DOC), the source
#: identity pinned to the assuming IAM user's name (docs/access.md asks for this).
TRUST_POLICY: Final = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["sts:AssumeRole", "sts:SetSourceIdentity"],
            "Resource": "*",
            "Condition": {"StringEquals": {"sts:SourceIdentity": "${aws:username}"}},
        }
    ],
}


def assume(user: str, session_name: str, source_identity: str | None) -> dict[str, str] | None:
    """The request context of a session of :data:`ROLE` that IAM user ``user`` opens, or None
    when the trust policy refuses it."""
    asking = {"aws:username": user, "aws:PrincipalType": "User"}
    if source_identity is not None:
        asking["sts:SourceIdentity"] = source_identity
    actions = ["sts:AssumeRole"] + (["sts:SetSourceIdentity"] if source_identity else [])
    if not all(allowed(TRUST_POLICY, a, "*", asking) for a in actions):
        return None
    session = {
        "aws:PrincipalType": "AssumedRole",
        "aws:userid": f"AROAEXAMPLEROLEID0000:{session_name}",  # USERID_DOC
        "arn": f"arn:aws:sts::{ACCOUNT}:assumed-role/{ROLE}/{session_name}",
    }
    if source_identity is not None:
        session["aws:SourceIdentity"] = source_identity  # SOURCE_IDENTITY_DOC
    return session


def test_the_reference_evaluator_follows_the_quoted_rules() -> None:
    # (a deny wins; an unresolved variable voids its statement; Null tests presence)
    document = {
        "Statement": [
            {"Effect": "Allow", "Action": "x:Y", "Resource": "*"},
            {
                "Effect": "Deny",
                "Action": "x:Y",
                "Resource": "*",
                "Condition": {"StringNotLike": {"aws:userid": "*:${aws:SourceIdentity}"}},
            },
        ]
    }
    assert allowed(document, "x:Y", "r", {"aws:userid": "R:a", "aws:SourceIdentity": "a"})
    assert not allowed(document, "x:Y", "r", {"aws:userid": "R:b", "aws:SourceIdentity": "a"})
    assert allowed(document, "x:Y", "r", {"aws:userid": "R:b"})  # the deny is void
    assert not allowed({"Statement": []}, "x:Y", "r", {})
    assert _condition("Null", "k", "true", {}) and not _condition("Null", "k", "true", {"k": "v"})


@pytest.fixture
def quota_world(aws: None) -> ApiWorld:
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "read-model", deletions="deletions", holds="holds")
    made = make_world(dynamodb, "read-model")
    made.services.deletions = DeletionJobs(
        DeletionTable(dynamodb, "deletions"),
        ObjectStore(made.s3, ev.BUCKET),
        enqueue=lambda _: None,
        clock=lambda: at(30, 12).timestamp(),
        holds=HoldsHeldWindows(Holds(HoldStore(dynamodb, "holds"))),
    )
    role_sessions = f"arn:aws:sts::{ACCOUNT}:assumed-role/{ROLE}/*"
    made.policy = replace(WORLD_POLICY, iam_scopes=((role_sessions, ("cam-*",)),))
    return made


def test_25_sessions_with_25_names_are_one_principal_or_refused(
    synth: Synth, quota_world: ApiWorld
) -> None:
    # Given the operator role's managed policy, attached to the role VideoOps, whose trust
    # policy pins the source identity to the assuming user's name
    policy = _concrete_document(_document(synth, Role.OPERATOR))
    delete = f"arn:aws:execute-api:us-east-1:{ACCOUNT}:{API_ID}/$default/DELETE/devices/*/segments"
    route = delete.replace("*", "cam-1")
    # When IAM user otto opens 25 sessions with 25 names, setting as source identity the
    # session's name, his own name, or none, and calls the deletion route with each
    through: list[str] = []
    tries = 0
    for n in range(1, 26):
        name = f"op-{n:02d}"
        for source_identity in (name, "otto", None):
            tries += 1
            session = assume("otto", name, source_identity)
            if session is not None and allowed(policy, "execute-api:Invoke", route, session):
                through.append(session["arn"])
    # Then none gets through: the trust policy refuses a source identity other than his
    # name, and the managed policy a session named otherwise than its source identity
    assert tries == 75 and through == []
    # And the one session it lets through is named after him: one principal
    only = assume("otto", "otto", "otto")
    assert only is not None and allowed(policy, "execute-api:Invoke", route, only)
    # And naming a session after another operator (to withdraw her request) gets nowhere
    for source_identity in ("ann", "otto", None):
        as_ann = assume("otto", "ann", source_identity)
        assert as_ann is None or not allowed(policy, "execute-api:Invoke", route, as_ann)
    # And an IAM user calls as itself; any other kind of caller (a federated user, the
    # account) is denied by the policy
    user = {"aws:PrincipalType": "User", "aws:userid": "AIDAEXAMPLEUSERID0000"}
    assert allowed(policy, "execute-api:Invoke", route, user)
    for other in ("Account", "FederatedUser"):
        assert not allowed(
            policy, "execute-api:Invoke", route, {**user, "aws:PrincipalType": other}
        )
    # When that one principal asks for 25 deletions (25 windows) through the API
    hours = [f"2026-11-{28 + i // 24}T{i % 24:02d}" for i in range(25)]
    windows = [f"from={hour}:00:00Z&to={hour}:30:00Z" for hour in hours]
    caller = ev.iam_authorizer(only["arn"])
    answers = [
        quota_world.call("DELETE", "/devices/cam-1/segments", window, authorizer=caller)
        for window in windows
    ]
    statuses = [status for status, _, _ in answers]
    # Then the daily quota (20) holds: 20 accepted, the rest refused
    assert statuses == [202] * 20 + [429] * 5, statuses
    assert {body["created_by"] for status, body, _ in answers if status == 202} == {only["arn"]}
