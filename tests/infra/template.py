"""A synthesized template and the helpers the infrastructure tests read it with."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import App, CfnElement, Stack
from aws_cdk.assertions import Template
from cfnlint.api import lint_file
from constructs import IConstruct

from app import build
from infra.stack import VideoIndexStack
from infra.wiring import Wiring
from video_index.core.functions import FunctionSpec

#: cfn-lint warnings accepted, each with its reason. W3005 flags a DependsOn that a
#: GetAtt/Ref already implies; CDK emits these explicit dependencies itself (the
#: function on its role and default policy, the notifications on the queue), and they
#: are harmless redundancy, not a defect of the template.
ACCEPTED_CFN_LINT_WARNINGS = frozenset({"W3005"})


@dataclass(frozen=True)
class Synth:
    app: App
    stack: Stack
    template: Template

    @property
    def video_index(self) -> VideoIndexStack:
        assert isinstance(self.stack, VideoIndexStack)
        return self.stack

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        resources: dict[str, dict[str, Any]] = self.template.to_json()["Resources"]
        return resources

    def logical_id(self, construct: IConstruct) -> str:
        child = construct.node.default_child
        assert isinstance(child, CfnElement)
        return self.stack.get_logical_id(child)

    def resource(self, construct: IConstruct) -> dict[str, Any]:
        return self.resources[self.logical_id(construct)]

    def props(self, construct: IConstruct) -> dict[str, Any]:
        properties: dict[str, Any] = self.resource(construct)["Properties"]
        return properties

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {lid: r for lid, r in self.resources.items() if r["Type"] == cfn_type}

    def ref(self, construct: IConstruct) -> dict[str, str]:
        return {"Ref": self.logical_id(construct)}

    def arn(self, construct: IConstruct) -> dict[str, list[str]]:
        return {"Fn::GetAtt": [self.logical_id(construct), "Arn"]}

    def policy_statements(self, role: IConstruct) -> list[dict[str, Any]]:
        """Every statement of every IAM policy attached to ``role``."""
        policies = self.template.find_resources(
            "AWS::IAM::Policy", {"Properties": {"Roles": [self.ref(role)]}}
        )
        return [
            s for p in policies.values() for s in p["Properties"]["PolicyDocument"]["Statement"]
        ]

    def definition(self, state_machine: IConstruct) -> dict[str, Any]:
        return definition_of(self.props(state_machine)["DefinitionString"])

    def placeholder(self, construct: IConstruct, attribute: str | None = None) -> str:
        logical_id = self.logical_id(construct)
        return f"${{{logical_id}.{attribute}}}" if attribute else f"${{{logical_id}}}"

    def asset_folders(self) -> dict[str, Path]:
        """The staged asset folder of each video-index function, by handler."""
        directory = Path(self.app.synth().directory)
        folders: dict[str, Path] = {}
        for resource in self.of_type("AWS::Lambda::Function").values():
            props = resource["Properties"]
            if props.get("Handler", "").startswith("video_index."):
                key = props["Code"]["S3Key"].removesuffix(".zip")
                folders[props["Handler"]] = directory / f"asset.{key}"
        return folders

    def lint(self, folder: Path) -> list[str]:
        """cfn-lint's findings on the template, but the accepted warnings."""
        path = folder / "template.json"
        path.write_text(json.dumps(self.template.to_json()))
        return [
            f"{m.rule.id} line {m.linenumber}: {m.message}"
            for m in lint_file(path)
            if m.rule.id not in ACCEPTED_CFN_LINT_WARNINGS
        ]


def stand_ins(stack: Stack, *specs: FunctionSpec) -> None:
    """What the functions ``specs`` need that nothing in ``stack`` provides, as stand-ins (a
    name, and per access a read of an object of that name), then the wiring applied: so a
    construct synthesizes alone. Its real settings and grants are tested on the whole stack
    (``tests/infra/test_wiring.py``)."""
    from aws_cdk import aws_iam as iam

    wiring = Wiring.of(stack)
    for spec in specs:
        for need in spec.needs:
            if wiring.provides(need.setting):
                continue
            name = f"stand-in-{need.setting.lower().replace('_', '-')}"

            def grant(name: str = name) -> list[iam.PolicyStatement]:
                return [
                    iam.PolicyStatement(
                        actions=["s3:GetObject"], resources=[f"arn:aws:s3:::{name}/o"]
                    )
                ]

            wiring.provide(need.setting, stack, name, dict.fromkeys(need.grants, grant))
    wiring.apply()


def synthesize(context: Mapping[str, Any] | None = None) -> Synth:
    """The app exactly as ``app.py`` builds it (cdk-nag plugin on), with ``context``."""
    app = App(context=dict(context or {}))
    stack = build(app)
    return Synth(app=app, stack=stack, template=Template.from_stack(stack))


def render(part: Any) -> str:
    """One element of a Fn::Join as text: literal, ``${Ref}`` or ``${LogicalId.Attr}``."""
    if isinstance(part, str):
        return part
    if "Ref" in part:
        return f"${{{part['Ref']}}}"
    if "Fn::GetAtt" in part:
        return "${" + ".".join(part["Fn::GetAtt"]) + "}"
    raise AssertionError(f"unexpected intrinsic in a definition: {part}")


def definition_of(definition_string: Any) -> dict[str, Any]:
    """A state machine's ``DefinitionString`` as JSON, intrinsics as placeholders."""
    if isinstance(definition_string, str):
        text = definition_string
    else:
        separator, parts = definition_string["Fn::Join"]
        text = separator.join(render(part) for part in parts)
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def joined(value: Any) -> str:
    """A Fn::Join resource ARN (or a plain string) as text with placeholders."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(render(part) for part in parts)
    return render(value)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def statements_by_sid(statements: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["Sid"]: s for s in statements if "Sid" in s}
