"""The synthesized stack's resources on moto (in-process), and each function built from its
own ``Environment.Variables`` in the template: what the deployed-wiring tests run.

Every bucket, table, queue and secret of the template is made under a local name (a bucket is
versioned where the template says so, a table has the template's keys and stream), and
each ``Ref`` (or ``Fn::Join`` of them) a function's environment holds is resolved to that
name. A function is then built as Lambda would build it: its handler module's own
``build()``, reading exactly that environment, with clients of the default session (moto).
Nothing here knows which function needs what: the template says it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from secrets import token_hex
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from video_index.core.functions import FunctionSpec

if TYPE_CHECKING:
    from constructs import IConstruct

    from tests.infra.template import Synth

REGION = "us-east-1"
#: What Lambda sets itself; kept as the test process has it.
_OWN_PREFIXES = ("VIDEO_INDEX_",)


@dataclass
class TemplateWorld:
    synth: Synth
    #: Local name (a bucket's or table's name, a queue's URL) by logical id.
    names: dict[str, str]

    def name(self, construct: IConstruct) -> str:
        """The local name of ``construct``'s resource."""
        return self.names[self.synth.logical_id(construct)]

    def function(self, spec: FunctionSpec) -> dict[str, Any]:
        """The template's ``AWS::Lambda::Function`` properties of ``spec``."""
        (props,) = [
            r["Properties"]
            for r in self.synth.of_type("AWS::Lambda::Function").values()
            if r["Properties"].get("Handler") == spec.handler
        ]
        return props

    def environ(self, spec: FunctionSpec) -> dict[str, str]:
        """The function's environment as the template gives it, names resolved locally."""
        variables = self.function(spec)["Environment"]["Variables"]
        return {name: self.resolve(value) for name, value in variables.items()}

    def resolve(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        if "Ref" in value:
            ref = value["Ref"]
            return REGION if ref == "AWS::Region" else self.names[ref]
        if "Fn::GetAtt" in value and value["Fn::GetAtt"][1] == "Arn":
            return self.names[value["Fn::GetAtt"][0]]  # a KMS key's ARN
        if "Fn::Join" in value:
            separator, parts = value["Fn::Join"]
            return str(separator).join(self.resolve(part) for part in parts)
        raise AssertionError(f"a function's environment holds an unexpected token: {value}")

    def build(
        self, spec: FunctionSpec, monkeypatch: pytest.MonkeyPatch, without: tuple[str, ...] = ()
    ) -> Any:
        """What ``spec``'s handler builds from the template's environment (less ``without``),
        in a fresh container: its module's ``build()``, its cache cleared first."""
        with _environment(monkeypatch, self.environ(spec), without):
            build = importlib.import_module(spec.handler_module).build
            if hasattr(build, "cache_clear"):
                build.cache_clear()
            return build()


@contextmanager
def _environment(
    monkeypatch: pytest.MonkeyPatch, environ: Mapping[str, str], without: tuple[str, ...]
) -> Iterator[None]:
    with monkeypatch.context() as patched:
        import os

        for name in [n for n in os.environ if n.startswith(_OWN_PREFIXES)]:
            patched.delenv(name)
        for name, value in environ.items():
            if name not in without:
                patched.setenv(name, value)
        yield


def template_world(synth: Synth) -> TemplateWorld:
    """Every bucket, table, queue, secret and KMS key of ``synth`` made on moto (inside
    ``mock_aws``); a secret's ``Ref`` is its ARN, and its value is random, as the stack
    generates it; a key's ``Arn`` is moto's key of the template's spec and usage."""
    s3, dynamodb, sqs, secrets, kms = (
        boto3.client(s, region_name=REGION)
        for s in ("s3", "dynamodb", "sqs", "secretsmanager", "kms")
    )
    names: dict[str, str] = {}
    for logical_id, resource in synth.resources.items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::S3::Bucket":
            names[logical_id] = logical_id.lower()
            s3.create_bucket(Bucket=names[logical_id])
            if props.get("VersioningConfiguration", {}).get("Status") == "Enabled":
                s3.put_bucket_versioning(
                    Bucket=names[logical_id], VersioningConfiguration={"Status": "Enabled"}
                )
        elif resource["Type"] == "AWS::DynamoDB::Table":
            names[logical_id] = logical_id
            _table(dynamodb, logical_id, props)
        elif resource["Type"] == "AWS::SQS::Queue":
            names[logical_id] = sqs.create_queue(QueueName=logical_id)["QueueUrl"]
        elif resource["Type"] == "AWS::SecretsManager::Secret":
            made = secrets.create_secret(Name=logical_id, SecretString=token_hex(32))
            names[logical_id] = made["ARN"]
        elif resource["Type"] == "AWS::KMS::Key":
            key = kms.create_key(
                KeySpec=props.get("KeySpec", "SYMMETRIC_DEFAULT"),
                KeyUsage=props.get("KeyUsage", "ENCRYPT_DECRYPT"),
            )
            names[logical_id] = key["KeyMetadata"]["Arn"]
    return TemplateWorld(synth, names)


def _table(dynamodb: Any, name: str, props: Mapping[str, Any]) -> None:
    stream = props.get("StreamSpecification")
    dynamodb.create_table(
        TableName=name,
        KeySchema=props["KeySchema"],
        AttributeDefinitions=props["AttributeDefinitions"],
        BillingMode="PAY_PER_REQUEST",
        **({"StreamSpecification": {"StreamEnabled": True, **stream}} if stream else {}),
    )
