"""The export signing key (docs/playback.md#signed-exports), asserted on the template: one
asymmetric P-256 key, kms:Sign granted to the export function alone and kms:GetPublicKey to
the API function alone, each on that key only; no role gets any other use of it."""

from __future__ import annotations

from typing import Any

from tests.infra.template import Synth


def _kms_statements(synth: Synth) -> list[tuple[tuple[str, ...], frozenset[str], Any]]:
    """(roles, actions, resource) of every IAM statement with a KMS action, in any policy."""
    out = []
    for policy in synth.of_type("AWS::IAM::Policy").values():
        props = policy["Properties"]
        roles = tuple(sorted(r["Ref"] for r in props.get("Roles", [])))
        for statement in props["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            actions = frozenset([actions] if isinstance(actions, str) else actions)
            if any(a.startswith("kms:") for a in actions):
                out.append((roles, actions, statement["Resource"]))
    return out


def test_the_signing_key_is_an_asymmetric_p256_signing_key(synth: Synth) -> None:
    key = synth.resource(synth.video_index.export_signing_key.key)
    assert key["Properties"]["KeySpec"] == "ECC_NIST_P256"
    assert key["Properties"]["KeyUsage"] == "SIGN_VERIFY"
    assert key["DeletionPolicy"] == "Retain"


def test_only_the_export_function_may_sign_and_only_the_api_may_read_the_public_key(
    synth: Synth,
) -> None:
    # Given every statement of the template that grants a KMS action
    stack = synth.video_index
    key_arn = synth.arn(stack.export_signing_key.key)
    export_role = synth.logical_id(stack.exports.role)
    api_role = synth.logical_id(stack.api.role)
    # Then there are exactly two: Sign for the export function, GetPublicKey for the API,
    # each on the signing key only
    assert sorted(_kms_statements(synth), key=lambda s: sorted(s[1])) == [
        ((api_role,), frozenset({"kms:GetPublicKey"}), key_arn),
        ((export_role,), frozenset({"kms:Sign"}), key_arn),
    ]
