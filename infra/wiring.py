"""Each function's environment and grants, from its declaration (``core/functions.py``).

A function's spec lists its needs: a setting, what it does with what the setting
names (an :class:`~video_index.core.functions.Access`), and whether it runs without it.
This module is the other half of that declaration, for the stack:

* the construct that owns a resource **registers** it under its setting
  (:meth:`Wiring.provide`): the value the variable holds (a table's name, a queue's
  URL) and, per access it offers, the IAM statements that grant it — the owner says
  what "read" or "delete" means for its table or bucket, once for every function;
* :func:`infra.python_function.python_function` **wires** each function to its spec;
* :meth:`Wiring.apply` (the last step of the stack) gives every function the variable
  of each need a resource provides and the statements of each of its accesses, and
  acknowledges the one cdk-nag finding object statements under ``v1/*`` raise.

Nothing else adds a variable to a function, so the environment is the spec's; a
required need that no resource of the stack provides, or an access its owner does not
offer, fails synthesis with a message naming the function and the setting.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import jsii
from aws_cdk import Acknowledgment, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct, IConstruct, IValidation

from infra.nag import segment_objects_acknowledgment
from infra.settings import StackSettings
from video_index.core.access import ENV_ACCESS_POLICY
from video_index.core.contract import (
    ENV_AUDIT_RETENTION_DAYS,
    ENV_CLOCK_TOLERANCE_SECONDS,
    ENV_FRESH_WINDOW_SECONDS,
    ENV_GAP_TOLERANCE_MS,
    ENV_MAX_EXPORT_BYTES,
    ENV_MAX_REMOVE_SHARE,
    ENV_PRESIGN_SECONDS,
    ENV_RETENTION_DAYS,
    ENV_SHARE_MAX_LIFETIME_SECONDS,
    ENV_SHARE_MAX_WINDOW_SECONDS,
    ENV_SILENT_AFTER_SECONDS,
    ENV_TOMBSTONE_DAYS,
)
from video_index.core.functions import Access, FunctionSpec

#: The IAM statements that grant one access to one resource (made anew for each role).
Statements = Callable[[], list[iam.PolicyStatement]]

_ID: Final = "Wiring"


@dataclass(frozen=True)
class Resource:
    """What a setting names in the stack: the value of its variable, the statements of
    each access its owner offers, and (for a bucket of segments) the bucket whose ``v1/*``
    object statements need cdk-nag's IAM5 acknowledgment."""

    owner: str
    value: str
    grants: Mapping[Access, Statements] = field(default_factory=dict)
    objects: IConstruct | None = None
    #: The cdk-nag acknowledgment every role granted an access needs (given the reason).
    acknowledgment: Callable[[str], Acknowledgment] | None = None


@dataclass(frozen=True)
class _Wired:
    spec: FunctionSpec
    function: lambda_.Function
    role: iam.IRole


class Wiring(Construct):
    """The stack's registry of resources by setting, and the functions wired to it."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self._resources: dict[str, Resource] = {}
        self._functions: list[_Wired] = []
        self.applied = False
        self.node.add_validation(_Applied(self))

    @classmethod
    def of(cls, scope: IConstruct) -> Wiring:
        """The wiring of ``scope``'s stack (made on first use)."""
        stack = Stack.of(scope)
        found = stack.node.try_find_child(_ID)
        return found if isinstance(found, Wiring) else cls(stack, _ID)

    def provide(
        self,
        setting: str,
        owner: IConstruct,
        value: str,
        grants: Mapping[Access, Statements] | None = None,
        *,
        objects: IConstruct | None = None,
        acknowledgment: Callable[[str], Acknowledgment] | None = None,
    ) -> None:
        """``owner`` provides what ``setting`` names: ``value``, and ``grants`` per access
        (``acknowledgment``: what cdk-nag must be told for each role they are given to)."""
        if self.applied:
            raise ValueError(f"{setting} registered after the wiring was applied")
        if setting in self._resources:
            raise ValueError(
                f"{setting} is provided twice: by {self._resources[setting].owner} and by "
                f"{owner.node.path}"
            )
        self._resources[setting] = Resource(
            owner.node.path, value, dict(grants or {}), objects, acknowledgment
        )

    @property
    def functions(self) -> tuple[FunctionSpec, ...]:
        """The specs of the functions wired so far."""
        return tuple(wired.spec for wired in self._functions)

    def provides(self, setting: str) -> bool:
        """Whether a resource of the stack provides ``setting``."""
        return setting in self._resources

    def provide_value(self, setting: str, owner: IConstruct, value: str | None) -> None:
        """A plain value (none: the stack leaves the setting out, its default applies)."""
        if value is not None:
            self.provide(setting, owner, value)

    def wire(self, spec: FunctionSpec, function: lambda_.Function, role: iam.IRole) -> None:
        """``function`` (with ``role``) gets what ``spec`` declares, when the wiring is applied."""
        if self.applied:
            raise ValueError(f"function {spec.name} wired after the wiring was applied")
        self._functions.append(_Wired(spec, function, role))

    def apply(self) -> None:
        """Give every wired function its environment and grants (the stack's last step)."""
        problems = [problem for wired in self._functions for problem in self._check(wired)]
        if problems:
            raise ValueError(
                "the stack cannot give its functions what they declare:\n"
                + ("\n".join(f"  - {p}" for p in problems))
            )
        for wired in self._functions:
            for need in wired.spec.needs:
                resource = self._resources.get(need.setting)
                if resource is not None:
                    self._give(wired, need.setting, need.grants, resource)
        self.applied = True

    def _check(self, wired: _Wired) -> list[str]:
        problems = []
        for need in wired.spec.needs:
            resource = self._resources.get(need.setting)
            if resource is None:
                if need.required:
                    problems.append(
                        f"function {wired.spec.name} requires {need.setting}, which no "
                        "resource of the stack provides"
                    )
                continue
            for access in need.grants:
                if access not in resource.grants:
                    problems.append(
                        f"function {wired.spec.name} needs {access} of {need.setting}, which "
                        f"{resource.owner} does not offer (it offers: "
                        f"{', '.join(sorted(resource.grants)) or 'a plain value'})"
                    )
        return problems

    @staticmethod
    def _give(wired: _Wired, setting: str, accesses: Sequence[Access], resource: Resource) -> None:
        wired.function.add_environment(setting, resource.value)
        for access in accesses:
            for statement in resource.grants[access]():
                wired.role.add_to_principal_policy(statement)
        if resource.acknowledgment is not None and accesses:
            Validations.of(wired.role).acknowledge(
                resource.acknowledgment(
                    f"The {wired.spec.name} function's declared access (core/functions.py): "
                    f"{', '.join(accesses)} of {setting}."
                )
            )
        if resource.objects is not None and set(accesses) - {Access.LIST}:
            Validations.of(wired.role).acknowledge(
                segment_objects_acknowledgment(
                    resource.objects,
                    f"The {wired.spec.name} function's declared access (core/functions.py): "
                    f"{', '.join(accesses)} of {setting}.",
                )
            )


@jsii.implements(IValidation)
class _Applied:
    """Synthesis fails if the stack never applied its wiring (functions without settings)."""

    def __init__(self, wiring: Wiring) -> None:
        self._wiring = wiring

    def validate(self) -> list[str]:
        if self._wiring.applied or not self._wiring.functions:
            return []
        return ["the wiring of the functions' settings was never applied (Wiring.apply)"]


def provide_settings(scope: IConstruct, settings: StackSettings) -> None:
    """The plain values of the stack's settings (docs/deployment.md, docs/operations.md)."""
    wiring = Wiring.of(scope)
    for setting, value in (
        (ENV_GAP_TOLERANCE_MS, str(settings.gap_tolerance_ms)),
        (ENV_TOMBSTONE_DAYS, str(settings.tombstone_days)),
        (ENV_PRESIGN_SECONDS, str(settings.presign_seconds)),
        (ENV_FRESH_WINDOW_SECONDS, str(settings.fresh_window_seconds)),
        (ENV_MAX_EXPORT_BYTES, str(settings.max_export_bytes)),
        (ENV_MAX_REMOVE_SHARE, str(settings.reconcile_max_remove_share)),
        (ENV_SILENT_AFTER_SECONDS, json.dumps(dict(settings.silent_after_seconds))),
        (ENV_RETENTION_DAYS, json.dumps(dict(settings.retention_days))),
        (ENV_CLOCK_TOLERANCE_SECONDS, str(settings.clock_tolerance_seconds)),
        (ENV_ACCESS_POLICY, settings.access_policy),
        (ENV_SHARE_MAX_WINDOW_SECONDS, str(settings.share_max_window_seconds)),
        (ENV_SHARE_MAX_LIFETIME_SECONDS, str(settings.share_max_lifetime_seconds)),
        (ENV_AUDIT_RETENTION_DAYS, str(settings.audit_retention_days)),
    ):
        wiring.provide_value(setting, scope, value)


def table_grants(
    table_arn: str,
    name: str,
    actions: Mapping[Access, Sequence[str]],
    conditions: Mapping[Access, Mapping[str, object]] | None = None,
) -> dict[Access, Statements]:
    """Per access, one statement (Sid ``<name><Access>``) of ``actions`` on the table."""

    def grant(access: Access) -> Statements:
        return lambda: [
            iam.PolicyStatement(
                sid=f"{name}{access.value.capitalize()}",
                actions=sorted(actions[access]),
                resources=[table_arn],
                conditions=dict((conditions or {}).get(access, {})) or None,
            )
        ]

    return {access: grant(access) for access in actions}
